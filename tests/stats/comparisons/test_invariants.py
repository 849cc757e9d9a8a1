"""Issue 23's invariants of a comparison on awkward but valid input (hypothesis, seeded, small): swapping the agents
negates the difference, mirrors the interval and keeps the p-value; renaming or reordering the tasks changes
nothing; the interval lies in [−1, 1] and holds the estimate; a zero-width interval carries a note."""

from __future__ import annotations

import warnings

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stats.frames import make_trials, two_agents
from tauk.stats import compare

_trials = st.lists(st.integers(0, 1), min_size=1, max_size=3)
_agents = st.integers(1, 9).flatmap(lambda T: st.tuples(st.lists(_trials, min_size=T, max_size=T),
                                                        st.lists(_trials, min_size=T, max_size=T)))  # fmt: skip


def _row(df, a, b, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare(df, a, b, **kw).row()


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_agents, st.sampled_from(["score", "t", "signflip", "signflip-mid"]), st.sampled_from([1, 2]))
def test_swap_relabel_range_and_notes(agents, test, k):
    df = make_trials(two_agents(*agents))
    ab = _row(df, "A", "B", test=test, k=k)
    if ab["difference"] is None:  # no shared task with k trials: said so
        assert ab["n_tasks"] == 0 and ab["interval_note"]
        return
    ba = _row(df, "B", "A", test=test, k=k)
    renamed = df.with_columns(pl.col("task_id").map_elements(lambda s: f"t{50 - int(s)}", return_dtype=pl.String))
    rn = _row(renamed.reverse(), "A", "B", test=test, k=k)
    d, lo, hi, p = ab["difference"], ab["ci_low"], ab["ci_high"], ab["p_value"]
    assert ba["difference"] == pytest.approx(-d, abs=1e-12)
    assert (ba["ci_low"] is None) == (lo is None) and (ba["p_value"] is None) == (p is None)
    if lo is not None:
        assert ba["ci_low"] == pytest.approx(-hi, abs=1e-9) and ba["ci_high"] == pytest.approx(-lo, abs=1e-9)
        assert -1.0 - 1e-12 <= lo <= d + 1e-12 and d - 1e-12 <= hi <= 1.0 + 1e-12
        if hi - lo < 1e-12:
            assert ab["interval_note"], ab
    else:
        assert ab["interval_note"], ab  # no interval: the note says why
    if p is not None:
        assert ba["p_value"] == pytest.approx(p, abs=1e-12)
    for f in ("difference", "ci_low", "ci_high", "p_value", "p_t", "p_signflip"):
        assert rn[f] == pytest.approx(ab[f], abs=1e-12), f
