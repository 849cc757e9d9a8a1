"""The store's parts on a local Dask cluster of two worker processes give every number of the single process."""

from __future__ import annotations

from pathlib import Path

import pytest

import tauk

pytest.importorskip("distributed", reason="the distributed extra (pip install tauk[distributed])")
SAMPLE = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as c:  # fmt: skip
        yield c


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dist") / "st"
    tauk.ingest(SAMPLE, root, progress=False, simulations_per_part=50)
    return root


def test_scoring_and_audit_on_two_workers_equal_one_process(client, store):
    from tauk.distributed import audit_distributed, score_distributed

    assert len(client.scheduler_info()["workers"]) == 2
    one = tauk.score(tauk.open(store)).sort("simulation_id")
    many = score_distributed(store, client=client).sort("simulation_id")
    assert many.equals(one)
    a1, a2 = tauk.audit(tauk.open(store)), audit_distributed(store, client=client)
    assert a1.to_frame().sort("run_id").equals(a2.to_frame().sort("run_id"))
    assert a2.totals()["n_checked"] == 600
    part = score_distributed(store, client=client, domain="retail")
    assert part.height == 300 and set(part["domain"]) == {"retail"}


def test_task_counts_on_two_workers_give_the_statistics_of_the_trials(client, store):
    """The reduction: per-part counts summed on the cluster give every pass^k, pass@k, summary and comparison
    figure of the single process (to the bit, but for the float sums' rounding)."""
    from tauk.distributed import task_counts_distributed

    counts = task_counts_distributed(store, client=client)
    res = tauk.open(store)
    for stat in (tauk.stats.pass_hat_k, tauk.stats.pass_at_k):
        a = stat(counts, by=("agent", "domain"), seed=3).to_frame()
        b = stat(res, by=("agent", "domain"), seed=3).to_frame()
        assert a.equals(b)
    # counts carry no task definitions (the store's inaction marks are given, so the substantive figures agree) and
    # no pass (trial index): the trials' run-effect columns are theirs alone, and only the trials widen an interval
    # by a run variance — with run_effects="report" every shared figure is the same
    dep = ("se_run", "se_cluster", "adjusted_for", "n_passes", "run_effect_q", "run_effect_p", "run_var",
           "run_effect_p_a", "run_effect_p_b", "run_var_a", "run_var_b", "n_passes_a", "n_passes_b", "df")
    s1 = tauk.stats.summarize(counts, by="agent", k=[1, 2], seed=3, marks=tauk.tasks.inaction_marks(res))
    s2 = tauk.stats.summarize(res, by="agent", k=[1, 2], seed=3, run_effects="report")
    assert s1.pass_hat_k.drop(dep, strict=False).equals(s2.pass_hat_k.drop(dep, strict=False))
    assert any("per-task counts carry no pass" in n for n in s1.summary().notes)
    g1, g2 = s1.groups.drop(dep, strict=False), s2.groups.drop(dep, strict=False)
    assert g1.drop("avg_reward", "avg_agent_cost", "task_definitions").equals(
        g2.drop("avg_reward", "avg_agent_cost", "task_definitions"))
    assert g1["task_definitions"].to_list() == ["given"] * g1.height
    for col in ("avg_reward", "avg_agent_cost"):
        assert (g1[col] - g2[col]).abs().max() < 1e-12
    c1 = tauk.stats.compare(counts, "atlas-large", "baseline", label="agent", by="domain", seed=3).to_frame()
    c2 = tauk.stats.compare(res, "atlas-large", "baseline", label="agent", by="domain", seed=3,
                            run_effects="report").to_frame()
    assert c1.drop(dep, strict=False).equals(c2.drop(dep, strict=False))
    with pytest.raises(tauk.TaukError, match="made with infra='drop'"):
        tauk.stats.pass_hat_k(counts, infra="fail")
    with pytest.raises(tauk.TaukError, match="not task counts"):
        tauk.stats.consistency(counts)
