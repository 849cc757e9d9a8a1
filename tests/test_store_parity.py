"""Store vs files after the changes an incremental ingest must follow: the numbers of ``tauk.open(store)`` equal
those of ``tauk.load(files)`` on the same inputs (found by the store audit)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import tauk

SAMPLE = Path(__file__).resolve().parents[1] / "data"


def _figures(res) -> tuple:
    t = res.trials
    return t.height, sorted(t["agent"].unique()), t["reward"].sum()


def test_simulations_kept_once_come_back_when_the_run_holding_them_shrinks(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    doc = json.loads((SAMPLE / "atlas-large_airline.json").read_text())
    (folder / "final.json").write_text(json.dumps(doc))
    (folder / "checkpoint.json").write_text(json.dumps(dict(doc, simulations=doc["simulations"][:99])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        tauk.ingest(folder, tmp_path / "st", strict=False, progress=False)
        # the checkpoint (read first) holds 99 simulations, final.json 1; the checkpoint is cut to 50: final.json's
        # 49 simulations it no longer holds count again, as they do when the files are loaded
        (folder / "checkpoint.json").write_text(json.dumps(dict(doc, simulations=doc["simulations"][:50])))
        rep = tauk.ingest(folder, tmp_path / "st", strict=False, progress=False)
        files = tauk.load(folder, strict=False, progress=False)
    store = tauk.open(tmp_path / "st")
    assert _figures(store) == _figures(files) and store.trials.height == 100
    assert rep.counts().get("overlap_freed") == 1
    a = tauk.stats.summarize(files, by="agent", resamples=99).long().drop("run_id", strict=False)
    b = tauk.stats.summarize(store, by="agent", resamples=99).long().drop("run_id", strict=False)
    assert a.equals(b)


def test_a_new_label_for_an_unchanged_source_relabels_its_run(tmp_path):
    src = SAMPLE / "baseline_airline.json"
    tauk.ingest({"x": src}, tmp_path / "st", progress=False)
    rep = tauk.ingest({"y": src}, tmp_path / "st", progress=False)
    assert rep.counts().get("relabelled") == 1 and not rep.unchanged
    assert _figures(tauk.open(tmp_path / "st")) == _figures(tauk.load({"y": src}))
    tauk.ingest(src, tmp_path / "st2", progress=False)
    tauk.ingest({"lab": src}, tmp_path / "st2", progress=False)
    assert set(tauk.open(tmp_path / "st2").trials["agent"]) == {"lab"}
    assert len(tauk.ingest({"lab": src}, tmp_path / "st2", progress=False).unchanged) == 1
