"""tauk.stats on the real trial logs (../shared/data) loaded by tauk.load: EXPECTED.json parity and comparisons."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import binom

import tauk
from stats.frames import taubench_frame
from tauk.stats import compare, pass_hat_k, summarize

pytestmark = pytest.mark.shared_data

METRICS = ("n_simulations", "n_tasks", "infra_error_count")
FLOATS = ("avg_reward", "avg_agent_cost")


def _load(paths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tauk.load(paths)


def _check(rec_drop, rec_fail, exp, name):
    for m in METRICS:
        assert rec_drop[m] == exp[m], (name, m)
    for m in FLOATS:
        if exp[m] is None:
            assert rec_drop[m] is None, (name, m)
        else:
            assert rec_drop[m] == pytest.approx(exp[m], abs=1e-9), (name, m)
    for rec, key in ((rec_drop, "pass_hat_k"), (rec_fail, "pass_hat_k_infra_as_failure")):
        got = {k: v["estimate"] for k, v in rec["pass_hat_k"].items()}
        assert got.keys() == exp[key].keys(), (name, key)
        for k in got:
            assert got[k] == pytest.approx(exp[key][k], abs=1e-9), (name, key, k)
    assert rec_fail["infra_error_count"] == exp["infra_error_count"]


def test_expected_parity_every_file(shared_data, expected):
    for name, exp in expected.items():
        res = _load([shared_data / name])
        drop = summarize(res, infra="drop", ci=None).records()
        fail = summarize(res, infra="fail", ci=None).records()
        assert len(drop) == len(fail) == 1, name
        _check(drop[0], fail[0], exp, name)


def test_expected_parity_all_files_in_one_load(shared_data, expected):
    """Grouping by run_id over one multi-file load gives each file's figures (no cross-talk between runs)."""
    names = list(expected)
    res = _load([shared_data / n for n in names])
    runs = res.runs
    by_source = {str(s): r for s, r in zip(runs["source"].to_list(), runs["run_id"].to_list())}
    drop = {r["run_id"]: r for r in summarize(res, infra="drop", ci=None).records()}
    fail = {r["run_id"]: r for r in summarize(res, infra="fail", ci=None).records()}
    assert len(drop) == len(names)
    for n in names:
        rid = by_source[str(shared_data / n)]
        _check(drop[rid], fail[rid], expected[n], n)


def test_taubench_loader_matches_json_reference(shared_data):
    res = _load([shared_data / "taubench/gpt-4o_airline_4trials.json"])
    a = pass_hat_k(res, ci=0.95, resamples=1999).to_frame().drop("run_id")
    b = pass_hat_k(taubench_frame(shared_data / "taubench/gpt-4o_airline_4trials.json"), ci=0.95, resamples=1999)
    assert a.equals(b.to_frame().drop("run_id"))


def test_infra_wrapper_both_conventions(shared_data):
    res = _load([shared_data / "nonconformant/adaptive-agent_airline_wrapper_infra-error.json"])
    d = summarize(res, infra="drop", ci=0.95, resamples=999).records()[0]
    f = summarize(res, infra="fail", ci=0.95, resamples=999).records()[0]
    assert d["pass_hat_k"]["1"]["estimate"] == 1.0 and f["pass_hat_k"]["1"]["estimate"] == pytest.approx(0.98)
    assert d["infra_error_count"] == f["infra_error_count"] == 1
    # all 49 kept tasks succeed under "drop": not a point at 1 but Blaker's exact interval for 49 of 49 tasks
    # (n = 1): inside Clopper–Pearson's [0.025^(1/49), 1]; its lower end by brute force over a grid of p
    low = d["pass_hat_k"]["1"]["ci_low"]
    assert 0.025 ** (1 / 49) < low < 1.0 and d["pass_hat_k"]["1"]["ci_high"] == 1.0

    def blaker_p(p0: float, x: int = 49, n: int = 49) -> float:
        pmf = binom.pmf(np.arange(n + 1), n, p0)
        tails = np.minimum(np.cumsum(pmf), np.cumsum(pmf[::-1])[::-1])
        return float(pmf[tails <= tails[x] * (1 + 1e-7)].sum())

    grid = np.linspace(0.9, 0.96, 6001)
    inside = grid[[blaker_p(p) > 0.05 for p in grid]]
    assert low == pytest.approx(inside.min(), abs=2e-5)
    assert f["pass_hat_k"]["1"]["ci_low"] < 0.98 < f["pass_hat_k"]["1"]["ci_high"] <= 1.0


@pytest.mark.parametrize("split", ["airline-test", "retail-test", "telecom-test", "telecom-solo-test"])
def test_real_paired_comparison_ft_vs_base(shared_data, expected, split):
    fa = f"tau2/v0.1_ft-gpt-4.1_{split}_1trial.json"
    fb = f"tau2/v0.1_gpt-4.1_{split}_1trial.json"
    res = _load([shared_data / fa, shared_data / fb])
    agents = res.runs["agent"].to_list()
    ft = next(a for a in agents if a.startswith("ft"))
    # telecom-solo-test: the two runs come from two τ²-bench commits (two setups): not paired unless asked
    pool = res.runs["setup"].n_unique() > 1
    if pool:
        apart = compare(res, ft, "gpt-4.1", ci=None)
        assert "setup" in apart.by and set(apart.to_frame()["n_tasks"].to_list()) == {0}
    c = compare(res, ft, "gpt-4.1", resamples=1999, pool_setups=pool)
    r = c.row()
    ea, eb = expected[fa], expected[fb]
    assert r["n_tasks"] == ea["n_tasks"] == eb["n_tasks"]
    assert r["n_tasks_only_a"] == r["n_tasks_only_b"] == 0  # same test tasks
    assert r["estimate_a"] == pytest.approx(ea["pass_hat_k"]["1"], abs=1e-12)
    assert r["estimate_b"] == pytest.approx(eb["pass_hat_k"]["1"], abs=1e-12)
    assert r["diff"] == pytest.approx(ea["pass_hat_k"]["1"] - eb["pass_hat_k"]["1"], abs=1e-12)
    # one trial per task: McNemar applies; discordant counts explain the difference exactly
    assert r["p_mcnemar"] is not None
    assert (r["mcnemar_a_only"] - r["mcnemar_b_only"]) == round(r["diff"] * r["n_tasks"])
    if r["perm_method"] == "exact":
        # with 0/1 differences the exact sign-flip test *is* the exact McNemar test
        assert r["p_perm"] == pytest.approx(r["p_mcnemar"], abs=1e-12)
    assert r["ci_low"] <= r["diff"] <= r["ci_high"]
    assert r["t_low"] <= r["diff"] <= r["t_high"]
    print(f"{split}: diff {r['diff']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}], "
          f"McNemar {r['mcnemar_a_only']}/{r['mcnemar_b_only']} p={r['p_mcnemar']:.4f}, perm p={r['p_perm']:.4f}")


def test_a_group_of_several_agents_says_so(shared_data):
    """by="domain" over gpt-4.1 and its fine-tune on the airline test split: one figure over both agents, as asked;
    the agent cell is empty (several), and a note must say the row pools those agents rather than leave '—'."""
    names = ["tau2/v0.1_gpt-4.1_airline-test_1trial.json", "tau2/v0.1_ft-gpt-4.1_airline-test_1trial.json"]
    res = _load([shared_data / n for n in names])
    agents = sorted(res.runs["agent"].to_list())
    assert len(set(agents)) == 2 and res.runs["setup"].n_unique() == 1  # the premise
    s = tauk.stats.summarize(res, by="domain", ci=None)
    assert s.groups["agent"].to_list() == [None]
    notes = "\n".join(s.summary().notes)
    assert "several agents" in notes and all(a in notes for a in agents)
    alone = tauk.stats.summarize(_load([shared_data / names[0]]), by="domain", ci=None)
    assert "several agents" not in "\n".join(alone.summary().notes)
