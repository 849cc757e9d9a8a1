"""Calling upstream τ²-bench (the judge) from tests: its package lives in a Python 3.12 venv, so it runs in a
subprocess that prints JSON.

Where: ``TAUK_UPSTREAM_PYTHON`` (default ``/work/venv312/bin/python``) with ``tau2`` installed as
``../shared/upstream/README.md`` says, and ``TAU2_DATA_DIR`` (default ``../shared/upstream/tau2-bench/data``). Without
it a test that needs the judge skips with the reason; under ``TAUK_REQUIRE_UPSTREAM=1`` it fails instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM_PYTHON = Path(os.environ.get("TAUK_UPSTREAM_PYTHON", "/work/venv312/bin/python"))
TAU2_DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", ROOT.parent / "shared" / "upstream" / "tau2-bench" / "data"))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["TAU2_DATA_DIR"] = str(TAU2_DATA_DIR)
    return env


@lru_cache(maxsize=1)
def _available() -> str | None:
    """None when the judge can be called, else why not."""
    if not UPSTREAM_PYTHON.exists():
        return f"upstream τ²-bench venv not found at {UPSTREAM_PYTHON} (set TAUK_UPSTREAM_PYTHON)"
    try:
        out = subprocess.run([str(UPSTREAM_PYTHON), "-c", "import tau2.metrics.agent_metrics"], env=_env(),
                             capture_output=True, text=True, timeout=300)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"upstream τ²-bench venv at {UPSTREAM_PYTHON} does not run: {exc}"
    if out.returncode != 0:
        return f"`import tau2` fails in {UPSTREAM_PYTHON}: {out.stderr.strip().splitlines()[-1:]}"
    return None


def require_upstream() -> None:
    """Skip (or fail under ``TAUK_REQUIRE_UPSTREAM=1``) when upstream τ²-bench cannot be called."""
    why = _available()
    if why is None:
        return
    if os.environ.get("TAUK_REQUIRE_UPSTREAM", "") not in ("", "0", "false"):
        pytest.fail("TAUK_REQUIRE_UPSTREAM=1 but " + why)
    pytest.skip(why)


def run_upstream(script: str, *args: str) -> object:
    """Run ``script`` (Python source using ``tau2``; its last stdout line is JSON) with ``args`` as ``sys.argv[1:]``
    in the upstream venv, and return the decoded JSON."""
    require_upstream()
    out = subprocess.run([str(UPSTREAM_PYTHON), "-c", textwrap.dedent(script), *args], env=_env(),
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    if out.returncode != 0:
        raise AssertionError(f"upstream script failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])
