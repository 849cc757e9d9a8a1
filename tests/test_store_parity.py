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


def _checkpoint_and_final(tmp_path):
    """A folder with a final file (100 simulations) and its checkpoint (the first 99), and the final document."""
    folder = tmp_path / "src"
    folder.mkdir()
    doc = json.loads((SAMPLE / "atlas-large_airline.json").read_text())
    (folder / "final.json").write_text(json.dumps(doc))
    (folder / "checkpoint.json").write_text(json.dumps(dict(doc, simulations=doc["simulations"][:99])))
    return folder, doc


def test_simulations_kept_once_come_back_when_the_run_holding_them_shrinks(tmp_path):
    folder, doc = _checkpoint_and_final(tmp_path)
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


def test_the_same_simulations_under_two_labels_are_both_kept(tmp_path):
    """tauk.load keeps a run compared with itself under two labels; the store refused it (strict) or dropped the
    second label's 100 simulations (strict=False), while its error advised giving different labels."""
    copy = tmp_path / "copy.json"
    copy.write_bytes((SAMPLE / "baseline_airline.json").read_bytes())
    inputs = {"a": SAMPLE / "baseline_airline.json", "b": copy}
    tauk.ingest(inputs, tmp_path / "st", progress=False)
    counts = tauk.open(tmp_path / "st").trials.group_by("agent").len().sort("agent").rows()
    assert counts == tauk.load(inputs).trials.group_by("agent").len().sort("agent").rows() == [("a", 100), ("b", 100)]


def test_overlaps_give_the_frames_and_report_of_load(tmp_path):
    """A file wholly in the store is left out (no run row, no tasks), a partial overlap's run and tasks are those of
    the simulations kept, and the store's report counts by kind as load's does."""
    folder = tmp_path / "src"
    folder.mkdir()
    doc = json.loads((SAMPLE / "atlas-large_airline.json").read_text())
    sims = doc["simulations"]
    (folder / "checkpoint.json").write_text(json.dumps(dict(doc, simulations=sims[:99])))
    (folder / "dups.json").write_text(json.dumps(dict(doc, simulations=sims[:10] + sims[:3])))
    (folder / "final.json").write_text(json.dumps(doc))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        tauk.ingest(folder, tmp_path / "st", strict=False, progress=False)
        files = tauk.load(folder, strict=False, progress=False)
    store = tauk.open(tmp_path / "st")
    assert store.runs.drop("run_id").equals(files.runs.drop("run_id"))
    assert store.runs["n_simulations"].to_list() == [99, 1]
    cols = files.tasks.columns
    assert store.tasks.select(cols).sort("run_id", "task_id").equals(files.tasks.sort("run_id", "task_id"))
    assert store.report.counts() == files.report.counts() == {"duplicate_simulation_id": 3, "duplicate_run": 1,
                                                              "overlapping_runs": 99}
    a = tauk.audit(files).to_frame().sort("run_id")
    assert tauk.audit(store).to_frame().sort("run_id").equals(a)


def test_reliability_and_deviation_profile_are_the_same_on_every_call():
    """Their per-task values were summed in a hash group_by's order: two calls on the same trials (or a store and
    its files) differed in the last bits of cv_*, trajectory_jsd, n_eff and the clustered bounds (and
    inaction_summary's pass1)."""
    for src in (SAMPLE, SAMPLE.parents[1] / "shared" / "data" / "taubench"):
        if not src.exists():
            continue
        res = tauk.load(src, progress=False)
        first = (tauk.stats.reliability(res).to_frame(), tauk.stats.deviation_profile(res).to_frame())
        for _ in range(5):
            assert tauk.stats.reliability(res).to_frame().equals(first[0])
            assert tauk.stats.deviation_profile(res).to_frame().equals(first[1])


def test_inaction_summary_is_the_same_on_every_call(tmp_path):
    from tauk.synth import write_results

    write_results(tmp_path, agents={"a": 0.6, "b": 0.5, "c": 0.4}, n_tasks=30, n_trials=5, seed=7,
                  infra_error_rate=0.1)  # fmt: skip
    res = tauk.load(tmp_path, progress=False)
    first = tauk.tasks.inaction_summary(res)
    for _ in range(8):
        assert tauk.tasks.inaction_summary(res).equals(first)


def test_a_kill_before_the_overlapping_run_is_ingested_again_is_caught_up(tmp_path, monkeypatch):
    """The run that held the simulations is committed first; killed before the run that dropped them is ingested
    again, the next ingest (of any sources) takes it up: it was marked before the commit."""
    from tauk.store import _ingest

    folder, doc = _checkpoint_and_final(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        tauk.ingest(folder, tmp_path / "st", strict=False, progress=False)
        (folder / "checkpoint.json").write_text(json.dumps(dict(doc, simulations=doc["simulations"][:50])))
        real = _ingest._ingest_one
        seen = []

        def killed(root, path, *a, **k):
            seen.append(path.name)
            if len(seen) == 2:  # final.json, after checkpoint.json was committed
                raise KeyboardInterrupt
            return real(root, path, *a, **k)

        monkeypatch.setattr(_ingest, "_ingest_one", killed)
        try:
            tauk.ingest(folder / "checkpoint.json", tmp_path / "st", strict=False, progress=False)
        except KeyboardInterrupt:
            pass
        monkeypatch.setattr(_ingest, "_ingest_one", real)
        assert seen == ["checkpoint.json", "final.json"] and tauk.open(tmp_path / "st").trials.height == 51
        rep = tauk.ingest(folder / "checkpoint.json", tmp_path / "st", strict=False, progress=False)
    assert rep.counts().get("overlap_freed") == 1
    assert tauk.open(tmp_path / "st").trials.height == tauk.load(folder, strict=False, progress=False).trials.height


def test_compare_by_setup_pairs_the_two_setups(tmp_path):
    """label='setup' raised a Polars DuplicateError: the setup split was added to by= a second time."""
    doc = json.loads((SAMPLE / "baseline_airline.json").read_text())
    (tmp_path / "a.json").write_text(json.dumps(doc))
    doc["info"]["user_info"]["llm"] = "another-user-model"
    (tmp_path / "b.json").write_text(json.dumps(doc))
    res = tauk.load({"a.json": tmp_path / "a.json", "b.json": tmp_path / "b.json"})  # one run under two setups
    sa, sb = (res.trials.filter(run_id=r)["setup"][0] for r in ("a.json", "b.json"))
    assert sa != sb
    by_setup = tauk.stats.compare(res, sa, sb, label="setup", resamples=99, permutations=99).to_frame()
    by_run = tauk.stats.compare(res, "a.json", "b.json", label="run_id", resamples=99, permutations=99,
                                pool_setups=True).to_frame()  # across the two setups: asked for  # fmt: skip
    cols = ["n_tasks", "estimate_a", "estimate_b", "diff", "ci_low", "ci_high", "p_value"]
    cols = [c for c in cols if c in by_run.columns]
    assert len(cols) >= 4 and by_setup.select(cols).equals(by_run.select(cols))


def test_a_checkpoint_that_grows_takes_its_simulations_back_as_load_keeps_them(tmp_path):
    """tauk.load keeps a simulation in the first file (in the order of the sources) that has it: a checkpoint grown
    from 50 to 99 simulations holds 99 and final.json 1; the store kept 50 and 50 (whichever was stored first)."""
    folder = tmp_path / "src"
    folder.mkdir()
    doc = json.loads((SAMPLE / "atlas-large_airline.json").read_text())
    (folder / "checkpoint.json").write_text(json.dumps(dict(doc, simulations=doc["simulations"][:50])))
    (folder / "final.json").write_text(json.dumps(doc))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        tauk.ingest(folder, tmp_path / "st", strict=False, progress=False)
        (folder / "checkpoint.json").write_text(json.dumps(dict(doc, simulations=doc["simulations"][:99])))
        rep = tauk.ingest(folder, tmp_path / "st", strict=False, progress=False)
        files = tauk.load(folder, strict=False, progress=False)
    per_run = [("checkpoint.json", 99), ("final.json", 1)]
    assert files.trials.group_by("run_id").len().sort("run_id").rows() == per_run
    assert tauk.open(tmp_path / "st").trials.group_by("run_id").len().sort("run_id").rows() == per_run
    assert rep.counts().get("overlap_taken") == 1
    a = tauk.audit(files).to_frame().sort("run_id")
    assert tauk.audit(tauk.open(tmp_path / "st")).to_frame().sort("run_id").equals(a)
