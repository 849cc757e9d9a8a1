"""The columnar store: ingest once, open lazily, identical numbers, incremental, consistent under interruption,
readable without tauk."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.cli import main
from tauk.store import StoreError, read_manifest

SAMPLE = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("store") / "st"
    tauk.ingest(SAMPLE, root, progress=False, simulations_per_part=40)
    return root


def _copy_sample(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    return src


def test_store_gives_the_numbers_of_the_files(store):
    files, st = tauk.load(SAMPLE), tauk.open(store)
    assert st.trials.height == files.trials.height == 600
    for by in (("agent",), ("agent", "domain")):
        a = tauk.stats.summarize(files, by=by, resamples=999).long().drop("run_id", strict=False)
        b = tauk.stats.summarize(st, by=by, resamples=999).long().drop("run_id", strict=False)
        assert a.equals(b)
    sa = tauk.score(files).drop("run_id").sort("simulation_id")
    sb = tauk.score(st).drop("run_id").sort("simulation_id")
    assert sa.equals(sb.select(sa.columns))
    assert tauk.audit(st).totals() == tauk.audit(files).totals()
    ca = tauk.stats.compare(files, "atlas-large", "baseline", by="domain", resamples=999).to_frame()
    cb = tauk.stats.compare(st, "atlas-large", "baseline", by="domain", resamples=999).to_frame()
    assert ca.equals(cb)
    assert st.n_partitions() == 6 * 3  # 100 simulations per run, at most 40 per part


def test_filters_push_down_to_the_runs(store):
    st = tauk.open(store, agent="baseline", domain=["retail"])
    assert st.runs["run_id"].to_list() == ["baseline_retail.json"]
    assert set(st.trials["agent"]) == {"baseline"} and st.trials.height == 100
    assert st.scan("messages").select(pl.len()).collect().item() == tauk.load(
        SAMPLE / "baseline_retail.json").messages.height


def test_ingest_is_incremental_and_idempotent(tmp_path):
    src = _copy_sample(tmp_path)
    root = tmp_path / "st"
    first = tauk.ingest(src, root, progress=False)
    assert len(first.ingested) == 6
    again = tauk.ingest(src, root, progress=False)
    assert (len(again.ingested), len(again.unchanged)) == (0, 6)
    before = read_manifest(root)
    # a changed source is ingested again, its partitions replaced
    doc = json.loads((src / "baseline_airline.json").read_text())
    doc["simulations"] = doc["simulations"][:60]
    (src / "baseline_airline.json").write_text(json.dumps(doc))
    third = tauk.ingest(src, root, progress=False)
    assert len(third.replaced) == 1 and len(third.unchanged) == 5
    res = tauk.open(root, agent="baseline", domain="airline")
    assert res.trials.height == 60
    after = read_manifest(root)
    assert len(after["sources"]) == len(before["sources"]) == 6
    # a source gone from disk is reported, its runs kept
    (src / "baseline_retail.json").unlink()
    gone = tauk.ingest(src, root, progress=False)
    assert gone.missing and gone.counts() == {"missing_source": 1}
    assert tauk.open(root).runs.height == 6


def test_overlapping_sources_as_load_does(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    doc = json.loads((SAMPLE / "atlas-large_airline.json").read_text())
    (folder / "final.json").write_text(json.dumps(doc))
    (folder / "checkpoint.json").write_text(json.dumps(dict(doc, simulations=doc["simulations"][:-1])))
    with pytest.raises(tauk.LoadError, match="already in the store") as ei:
        tauk.ingest(folder, tmp_path / "strict", progress=False)
    # the first source was committed on its own before the second failed: the error says so, and it is there
    assert "not stored; the 1 source(s) before it in this ingest were stored and stay" in str(ei.value)
    assert ei.value.path == str((folder / "final.json").resolve())
    assert tauk.open(tmp_path / "strict").trials.height == 99
    with pytest.warns(tauk.LoadWarning, match="kept once"):
        rep = tauk.ingest(folder, tmp_path / "lenient", strict=False, progress=False)
    assert rep.counts().get("overlapping_runs") == 99
    assert tauk.open(tmp_path / "lenient").trials.height == 100


def test_a_second_ingest_is_refused_while_one_holds_the_lock(tmp_path):
    from tauk.store._layout import lock

    root = tmp_path / "st"
    root.mkdir()
    held, release = threading.Event(), threading.Event()

    def holder():
        with lock(root):
            held.set()
            release.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(10)
    with pytest.raises(StoreError, match="another ingest holds the store .pid"):
        tauk.ingest(SAMPLE / "baseline_airline.json", root, progress=False)
    threading.Timer(0.5, release.set).start()
    rep = tauk.ingest(SAMPLE / "baseline_airline.json", root, progress=False, wait=10)
    t.join()
    assert len(rep.ingested) == 1 and not (root / ".lock").exists()


def test_bad_stores_get_named_errors(tmp_path, store):
    broken = tmp_path / "broken"
    shutil.copytree(store, broken)
    entry = read_manifest(broken)["sources"][0]
    victim = broken / entry["files"]["messages"][0]
    # a partially written partition
    victim.write_bytes(victim.read_bytes()[:100])
    with pytest.raises(StoreError, match="partially written or changed"):
        tauk.open(broken)
    victim.unlink()
    with pytest.raises(StoreError, match="which is missing"):
        tauk.open(broken)
    (broken / "manifest.json").write_text(json.dumps({"tauk_store": 999}))
    with pytest.raises(StoreError, match="layout version 999"):
        tauk.open(broken)
    with pytest.raises(StoreError, match="no store here"):
        tauk.open(tmp_path / "nothing")


def test_an_interrupted_ingest_leaves_the_store_consistent(tmp_path, monkeypatch):
    src = _copy_sample(tmp_path)
    root = tmp_path / "st"
    tauk.ingest(src / "baseline_airline.json", root, progress=False)
    calls = {"n": 0}
    real = pl.DataFrame.write_parquet

    def failing(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", failing)
    with pytest.raises(KeyboardInterrupt):
        tauk.ingest(src, root, progress=False)
    monkeypatch.setattr(pl.DataFrame, "write_parquet", real)
    res = tauk.open(root)  # still the committed store: one run, all files present
    assert res.runs.height >= 1 and res.trials.height == 100 * res.runs.height
    assert not list(root.rglob("*.tmp"))
    assert not (root / ".lock").exists()
    assert len(tauk.ingest(src, root, progress=False).ingested) >= 5


def test_the_store_is_plain_parquet(store):
    import pyarrow.dataset as ds

    trials = ds.dataset(str(store / "trials"), format="parquet").to_table()
    assert trials.num_rows == 600
    assert {"run_id", "simulation_id", "task_id", "reward", "agent", "domain"} <= set(trials.column_names)
    messages = ds.dataset(str(store / "messages"), format="parquet").to_table(columns=["simulation_id", "role"])
    assert messages.num_rows == tauk.load(SAMPLE).messages.height


def test_cli_on_a_store(tmp_path, capsys):
    root = tmp_path / "st"
    assert main(["ingest", str(SAMPLE), "--store", str(root), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["summary", str(root), "--by", "agent", "--format", "json", "--ci", "0"]) == 0
    from_store = json.loads(capsys.readouterr().out)
    assert main(["summary", str(SAMPLE), "--by", "agent", "--format", "json", "--ci", "0"]) == 0
    assert json.loads(capsys.readouterr().out) == from_store
    assert main(["audit", str(root), "--check", "--domain", "retail"]) == 0
    assert os.path.exists(root / "manifest.json")


def test_the_ingest_command_returns_freed_memory(tmp_path):
    """``tauk ingest`` from a shell re-runs itself once with the allocator set to give freed memory back (Polars
    reads it only when it loads), and ingests as the in-process command does."""
    import subprocess
    import sys

    from tauk.cli.ingest import ALLOCATOR, allocator_env

    assert allocator_env({}) == {"_RJEM_MALLOC_CONF": ALLOCATOR}
    polars_default = {"_RJEM_MALLOC_CONF": "dirty_decay_ms:500,muzzy_decay_ms:1000"}  # what Polars' import sets
    assert allocator_env(polars_default)["_RJEM_MALLOC_CONF"].endswith(ALLOCATOR)
    assert allocator_env({"_RJEM_MALLOC_CONF": f"dirty_decay_ms:500,{ALLOCATOR}"}) is None  # the re-run: no loop
    root = tmp_path / "st"
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    out = subprocess.run([sys.executable, "-m", "tauk", "ingest", str(SAMPLE), "--store", str(root), "--quiet"],
                         capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "source(s) ingested" in out.stdout
    assert tauk.open(root).trials.height == tauk.load(SAMPLE).trials.height


def test_a_failed_first_ingest_leaves_no_empty_store(tmp_path):
    """An ingest that made the store folder and stored nothing before failing removes it (it left an empty store
    that every command then had to refuse); a store that existed before is never removed."""
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(tauk.LoadError):
        tauk.ingest(bad, tmp_path / "new.tauk", progress=False)
    assert not (tmp_path / "new.tauk").exists()
    (tmp_path / "mine").mkdir()  # a folder the user made: kept
    with pytest.raises(tauk.LoadError):
        tauk.ingest(bad, tmp_path / "mine", progress=False)
    assert (tmp_path / "mine").is_dir()
    tauk.ingest(SAMPLE, tmp_path / "st", progress=False)
    with pytest.raises(tauk.LoadError):
        tauk.ingest(bad, tmp_path / "st", progress=False)
    assert tauk.open(tmp_path / "st").runs.height == 6
