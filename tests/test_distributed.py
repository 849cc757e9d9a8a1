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
