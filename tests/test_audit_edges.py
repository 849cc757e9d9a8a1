"""Edges found by an adversarial audit of the public statistics API and the command line: plausible but bad
options that raised a raw traceback (Polars, NumPy, Python's format) instead of one line naming what was wrong,
numbers shown without the note that makes them readable, and figures or profiles that pooled setups silently."""

from __future__ import annotations

from pathlib import Path

import pytest

import tauk
from tauk.cli import main
from tauk.errors import TaukError

SAMPLE = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def sample():
    return tauk.load(SAMPLE)


# ---- bad options: one line, not a traceback ---------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda r: tauk.stats.summarize(r, by=("agent", "agent"), ci=None),
    lambda r: tauk.stats.compare_all(r, by=["domain", "domain"]),
    lambda r: tauk.stats.reliability(r, by=["agent", "agent"], trajectory=False),
    lambda r: tauk.stats.deviation_profile(r, by=["agent", "agent"]),
])  # fmt: skip
def test_a_column_named_twice_in_by_is_one_clear_error(sample, call):
    """``by=("agent", "agent")`` (``--by agent,agent``) raised Polars' DuplicateError from inside a grouping."""
    with pytest.raises(TaukError, match="'agent'|'domain'"):
        call(sample)


def test_a_negative_seed_is_one_clear_error(sample):
    """``seed=-5`` (``--seed -5``) raised NumPy's "expected non-negative integer" from inside the bootstrap."""
    with pytest.raises(TaukError, match="seed"):
        tauk.stats.summarize(sample, by="agent", seed=-5)


@pytest.mark.parametrize("argv", [
    ["summary", str(SAMPLE), "--by", "agent,agent"],
    ["summary", str(SAMPLE), "--seed", "-5"],
    ["summary", str(SAMPLE), "--by", "agent", "--ci", "0", "--digits", "0"],
    ["summary", str(SAMPLE), "--by", "agent", "--ci", "0", "--digits", "-1", "--format", "csv"],
    ["consistency", str(SAMPLE), "--flaky", "-1"],
])  # fmt: skip
def test_bad_options_on_the_command_line_are_one_line(capsys, argv):
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tauk: error: ") and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_power_analysis_refuses_zero_trials_per_task(sample):
    """``trials_per_task=(0,)`` divided by zero inside the variance model (a raw ZeroDivisionError)."""
    c = tauk.stats.compare(sample, "atlas-large", "atlas-small", resamples=199)
    with pytest.raises(TaukError, match="trials_per_task"):
        tauk.stats.power_analysis(c, delta=0.1, trials_per_task=(0, 4))
