"""tauk.leaderboard.voice and tauk.io.leaderboard.load_interaction_metrics: rates with counts and exact intervals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

from tauk.errors import LoadError
from tauk.io.leaderboard import INTERACTION_COUNTS, INTERACTION_METRICS, load_interaction_metrics
from tauk.leaderboard import interaction_intervals
from tauk.leaderboard.voice import RATES, clopper_pearson, poisson_rate_interval


def test_exact_intervals():
    for x, n in [(0, 10), (3, 10), (10, 10), (356, 392), (17, 18)]:
        ci = stats.binomtest(x, n).proportion_ci(confidence_level=0.95, method="exact")
        assert clopper_pearson(x, n) == pytest.approx((ci.low, ci.high), abs=1e-12)
    for x, e in [(0, 100.0), (81, 392.0), (5, 7.0)]:
        lo, hi = poisson_rate_interval(x, e)
        # the Garwood bounds are where the one-sided tail probabilities reach α/2
        if x:
            assert stats.poisson.sf(x - 1, lo * e) == pytest.approx(0.025, abs=1e-9)
        assert stats.poisson.cdf(x, hi * e) == pytest.approx(0.025, abs=1e-9)


def test_clopper_pearson_covers_independent_events_but_not_clustered_ones():
    """The note's claim, small and seeded: 40 simulations × 8 events. Independent events: coverage ≥ 95 %; events
    sharing a per-simulation rate (intra-simulation correlation 0.2): coverage falls below the level."""
    rng = np.random.default_rng(7)
    sims, per, p, reps = 40, 8, 0.7, 400
    cover_ind = cover_clu = 0
    a, b = p * (1 / 0.2 - 1), (1 - p) * (1 / 0.2 - 1)  # beta with mean p and ICC 0.2
    for _ in range(reps):
        x = rng.binomial(sims * per, p)
        lo, hi = clopper_pearson(int(x), sims * per)
        cover_ind += lo <= p <= hi
        x = rng.binomial(per, rng.beta(a, b, sims)).sum()
        lo, hi = clopper_pearson(int(x), sims * per)
        cover_clu += lo <= p <= hi
    assert cover_ind / reps >= 0.93
    assert cover_clu / reps < 0.90


def test_shared_board_counts_are_whole_and_intervals_exact(shared_data: Path):
    m = load_interaction_metrics(shared_data / "leaderboard")
    m = m.filter(~pl.col("submission_id").str.starts_with("A_EXAMPLE"))
    assert m.filter(pl.col("domain") != "overall")["submission_id"].n_unique() == 19  # the voice submissions
    r = interaction_intervals(m)
    f = r.to_frame().filter(pl.col("kind") != "latency")
    assert f["numerator_whole"].all()  # every published rate is a count over its published denominator
    assert f["ci_low"].is_not_null().all()
    for row in f.sample(20, seed=1).iter_rows(named=True):
        if row["kind"] == "share":
            ci = stats.binomtest(row["numerator"], row["denominator"]).proportion_ci(method="exact")
            assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high), abs=1e-12)
        assert row["numerator"] / row["denominator"] == pytest.approx(row["value"], abs=1e-9)
    shares = r.adjacent.filter(pl.col("metric") != "agent_interruption_rate")
    assert (int(shares["n_overlapping"].sum()), int(shares["n_adjacent"].sum())) == (200, 235)  # as the issue found
    assert "cluster within simulations" in " ".join(r.summary().notes)


def test_reader_and_its_errors(tmp_path: Path):
    panel = {"response_rate": 0.5, "agent_interruption_rate": 1.25, "response_latency_mean": 1.2,
             "counts": {"n_simulations": 2, "response_total": 4, "agent_interrupts_count": 5}}  # fmt: skip
    doc = {"model_name": "v", "results": {"airline": {"pass_1": 50.0}},
           "interaction_metrics": {"version": "1.0", "domains": {"airline": panel}, "overall": panel}}  # fmt: skip
    f = tmp_path / "v_o_2026-01-01.json"
    f.write_text(json.dumps(doc))
    m = load_interaction_metrics(f)
    assert m.columns[:3] == ["submission_id", "model", "domain"]
    assert set(INTERACTION_COUNTS) | set(INTERACTION_METRICS) <= set(m.columns)
    assert m["domain"].to_list() == ["airline", "overall"]
    r = interaction_intervals(m).to_frame()
    ir = r.filter(pl.col("metric") == "agent_interruption_rate").row(0, named=True)
    assert ir["numerator"] == 5 and ir["ci_high"] > 1.25  # a rate per opportunity, not a share: may exceed 1
    assert r.filter(pl.col("kind") == "latency")["ci_low"].is_null().all()
    panel["counts"]["response_total"] = 4.5
    f.write_text(json.dumps(doc))
    with pytest.raises(LoadError, match=r"interaction_metrics\.domains\.airline\.counts\.response_total"):
        load_interaction_metrics(f)


def test_rates_table_is_complete():
    assert set(RATES) | {"response_latency_mean", "yield_latency_mean"} == set(INTERACTION_METRICS)
