"""τ²-bench, imported where the user has it: its environments, message and task models, called as a library.

Nothing of τ²-bench is copied into tauk. Without it, :func:`require` raises one line saying what to install.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from tauk.errors import TaukError

__all__ = ["INSTALL_HINT", "ReplayUnavailable", "available", "quiet", "require", "tau2_version"]

INSTALL_HINT = (
    "replay needs τ²-bench (Python ≥ 3.12): pip install \"tauk[replay]\" and then τ²-bench itself, e.g. "
    "pip install <a clone of sierra-research/tau2-bench> — and set TAU2_DATA_DIR to its data/ folder"
)


class ReplayUnavailable(TaukError):
    """τ²-bench (the environment engine replay calls) is not installed or cannot find its domain data."""


def available() -> bool:
    """Whether the ``tau2`` package can be imported here (without importing it)."""
    return importlib.util.find_spec("tau2") is not None


@contextmanager
def quiet():
    """τ²-bench logs every replayed tool call through loguru; keep its records out of the user's stream while
    replaying (re-enabled after)."""
    try:
        from loguru import logger
    except ImportError:  # pragma: no cover - τ²-bench depends on loguru
        yield
        return
    logger.disable("tau2")
    try:
        yield
    finally:
        logger.enable("tau2")


@lru_cache(maxsize=1)
def require() -> Any:
    """Import τ²-bench's registry (the domains' environment constructors); :class:`ReplayUnavailable` with one
    line saying what to install when it cannot."""
    if sys.version_info < (3, 12):
        raise ReplayUnavailable(f"{INSTALL_HINT} (this is Python {sys.version_info[0]}.{sys.version_info[1]})")
    if not available():
        raise ReplayUnavailable(INSTALL_HINT)
    try:
        from loguru import logger

        logger.disable("tau2")  # its import logs where it found its data
        from tau2.registry import registry
    except Exception as exc:  # noqa: BLE001 - any failure to import is the same message to the user
        raise ReplayUnavailable(f"{INSTALL_HINT} (import tau2 failed: {type(exc).__name__}: {exc})") from None
    finally:
        try:
            logger.enable("tau2")
        except NameError:  # pragma: no cover
            pass
    return registry


def tau2_version() -> str | None:
    """The installed τ²-bench version (None when it is not installed)."""
    try:
        from importlib.metadata import version

        return version("tau2")
    except Exception:  # noqa: BLE001
        return None


def data_dir_hint() -> str:
    d = os.environ.get("TAU2_DATA_DIR")
    return f"TAU2_DATA_DIR={d}" if d else "TAU2_DATA_DIR is not set"


class Models:
    """τ²-bench's message, task and hashing models, imported once."""

    def __init__(self) -> None:
        require()
        from tau2.data_model import message as m
        from tau2.data_model import tasks as t
        from tau2.utils import update_pydantic_model_with_dict

        self.ToolCall = m.ToolCall
        self.AssistantMessage = m.AssistantMessage
        self.UserMessage = m.UserMessage
        self.ToolMessage = m.ToolMessage
        self.SystemMessage = m.SystemMessage
        self.Action = t.Action
        self.EnvAssertion = t.EnvAssertion
        self.InitialState = t.InitialState
        self.EvaluationCriteria = t.EvaluationCriteria
        self.Task = t.Task
        self.update_model = update_pydantic_model_with_dict
        try:  # the env kwargs τ²-bench's own re-grader passes (banking_knowledge: the read-log allow-list)
            from tau2.scripts.evaluate_trajectories import _build_eval_env_kwargs

            self.eval_env_kwargs = _build_eval_env_kwargs
        except ImportError:  # an older τ²-bench: no per-task env kwargs
            self.eval_env_kwargs = lambda domain, task: None


@lru_cache(maxsize=1)
def models() -> Models:
    return Models()
