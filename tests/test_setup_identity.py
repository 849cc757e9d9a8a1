"""Setup identity: runs that differ in retrieval config, speech complexity, evaluator version (or another setting
that makes them distinct experiments) are never pooled silently; spellings that mean the same are one setup."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.io.frames.runs import SETUP_FIELDS, pooling_note, setup_differences, setup_legend

TEXT = "tau2/v1.0_whissle_airline_1trial.json"
VOICE = "tau2-dir-voice"


def _variant(shared_data: Path, tmp: Path, name: str, *, info: dict | None = None, sims=None, suffix: str = "") -> Path:
    """A copy of the v1.0 text run with ``info`` keys replaced, each simulation passed through ``sims`` and its id
    suffixed (distinct runs have distinct simulation ids)."""
    doc = json.loads((shared_data / TEXT).read_text())
    doc["info"].update(info or {})
    for s in doc["simulations"]:
        s["id"] += suffix
        if sims is not None:
            sims(s)
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


def _pass1(res, **kw) -> pl.DataFrame:
    return tauk.stats.pass_hat_k(res, by="agent", k=1, ci=None, **kw).to_frame()


@pytest.mark.parametrize(("field", "a", "b"), [
    ("retrieval_config", {"retrieval_config": "bm25", "retrieval_config_kwargs": {"top_k": 5}},
     {"retrieval_config": "bm25", "retrieval_config_kwargs": {"top_k": 10}}),
    ("speech_complexity", {"speech_complexity": "regular"}, {"speech_complexity": "control"}),
    ("evaluator_version", {"git_commit": "121283b87f0e5e14917e9fea3a6411e90408a6e1"},
     {"git_commit": "c0dd2331a751ad5a721c587f9ca76e52f0951a28"}),
])  # fmt: skip
def test_runs_differing_in_one_setting_are_not_pooled(shared_data, tmp_path, field, a, b):
    pa = _variant(shared_data, tmp_path, "a", info=a, suffix="-a")
    pb = _variant(shared_data, tmp_path, "b", info=b, suffix="-b")
    res = tauk.load([pa, pb])
    runs = res.runs
    assert runs["setup"].n_unique() == 2 and runs["agent"].n_unique() == 1
    diff = setup_differences(runs)
    changed = {"retrieval_config": {"retrieval_config_kwargs"}}.get(field, {field})
    assert set(diff) == changed, diff
    n_sims = len(json.loads((shared_data / TEXT).read_text())["simulations"])
    apart = _pass1(res)
    assert "setup" in apart.columns and apart.height == 2  # one figure per setup, not one over both
    assert apart["n_tasks"].to_list() == [n_sims, n_sims]
    pooled = _pass1(res, pool_setups=True)
    assert pooled.height == 1
    note = pooling_note(runs)
    assert note is not None and note.startswith("pooled over 2 setups that differ in ")
    for f in changed:
        assert f in note
    # a summary that pools says what it pooled over; one that does not, pools nothing
    s = tauk.stats.summarize(res, by="agent", ci=None, pool_setups=True)
    assert s.groups.height == 1 and any(n.endswith(note) for n in s.summary().notes)
    assert tauk.stats.summarize(res, by="agent", ci=None).pooling == ()
    # the label stays short and says which base it is; the legend spells out the key
    assert all(len(s) < 80 for s in runs["setup"]) and all("#" in s for s in runs["setup"])
    legend = setup_legend(runs)
    assert legend.height == 2 and set(legend.columns) >= set(SETUP_FIELDS)


def test_spellings_that_mean_the_same_are_one_setup(shared_data, tmp_path):
    """half_duplex = no mode (upstream's default), text_streaming_config absent = its default value."""
    def no_mode(s):
        s.pop("mode")

    doc = json.loads((shared_data / TEXT).read_text())
    assert {s["mode"] for s in doc["simulations"]} == {"half_duplex"}
    assert doc["info"]["text_streaming_config"] == {"chunk_by": "words", "chunk_size": 1}
    plain = _variant(shared_data, tmp_path, "plain", sims=no_mode, suffix="-x")
    stripped = json.loads(plain.read_text())
    del stripped["info"]["text_streaming_config"]
    plain.write_text(json.dumps(stripped))
    res = tauk.load([shared_data / TEXT, plain])
    assert res.runs["setup"].n_unique() == 1 and res.runs["mode"].to_list() == ["normal", "normal"]
    assert _pass1(res).height == 1  # repeated trials of one experiment: pooled, no note needed
    assert setup_differences(res.runs) == {}
    # a streaming config other than the default is a setting
    odd = _variant(shared_data, tmp_path, "odd", info={"text_streaming_config": {"chunk_by": "chars", "chunk_size": 3}},
                   suffix="-y")  # fmt: skip
    assert set(setup_differences(tauk.load([shared_data / TEXT, odd]).runs)) == {"text_streaming_config"}


def test_audio_settings_leave_out_the_agent_itself(shared_data, tmp_path):
    """Two voice runs of different agents (provider/model) under the same audio settings are one setup; another
    tick length is another setup."""
    import shutil

    def copy(name: str, **audio) -> Path:
        folder = tmp_path / name
        shutil.copytree(shared_data / VOICE, folder)
        meta = json.loads((folder / "results.json").read_text())
        meta["info"]["audio_native_config"].update(audio)
        (folder / "results.json").write_text(json.dumps(meta))
        for f in (folder / "simulations").glob("*.json"):  # distinct runs, distinct ids
            sim = json.loads(f.read_text())
            sim["id"] += f"-{name}"
            f.unlink()
            (folder / "simulations" / f"{sim['id']}.json").write_text(json.dumps(sim))
        return folder

    other_agent = copy("gemini", provider="gemini", model="gemini-live", reasoning_effort=None)
    slower = copy("slow", tick_duration_seconds=0.5)
    res = tauk.load([shared_data / VOICE, other_agent])
    assert res.runs["setup"].n_unique() == 1 and res.runs["mode"].to_list() == ["full_duplex"] * 2
    res = tauk.load([shared_data / VOICE, slower])
    assert set(setup_differences(res.runs)) == {"audio_settings"}
    voice = tauk.load(shared_data / VOICE).runs.row(0, named=True)
    assert voice["speech_complexity"] == "regular" and voice["user_implementation"] == "voice_streaming_user_simulator"
    assert "model" not in json.loads(voice["audio_settings"])


def test_identity_columns_on_every_shared_file(shared_data):
    """Every run gets the setup columns; τ-bench files (no info) have no key, τ²-bench files their git commit."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        runs = tauk.load(shared_data, strict=False, progress=False).runs
    for r in runs.iter_rows(named=True):
        if r["format"] == "taubench":
            assert "#" not in r["setup"] and r["evaluator_version"] is None
        elif r["format"] == "tau2":
            assert r["evaluator_version"] == json.loads(Path(r["source"]).read_text())["info"]["git_commit"]
            assert r["setup"].endswith("#" + r["setup"].rsplit("#", 1)[1]) and len(r["setup"].rsplit("#", 1)[1]) == 6
        assert r["setup"].startswith(f"{r['domain'] or '?'}/{r['mode']}/")
    # the same fields give the same key, across loads
    again = tauk.load(shared_data / TEXT).runs["setup"][0]
    assert again in runs["setup"].to_list()


def test_agents_in_different_setups_are_not_compared_silently(shared_data, tmp_path):
    """Two agents each in one setup, but not the same one, are not paired on their task ids unless asked: a τ-bench
    airline run and a τ²-bench airline run share the ids 0 … 49 but not the tasks, user simulator or grader."""
    import warnings

    tb, t2 = shared_data / "taubench/gpt-4o_airline_4trials.json", shared_data / TEXT
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        res = tauk.load({"tb": tb, "t2": t2})
    runs = res.runs
    assert runs["setup"].n_unique() == 2 and runs["domain"].n_unique() == 1  # the premise, from the files
    ids = [set(res.trials.filter(agent=a)["task_id"].to_list()) for a in ("tb", "t2")]
    assert ids[0] & ids[1]  # ids that look shared
    c = tauk.stats.compare(res, "tb", "t2", ci=None)
    assert "setup" in c.by and all(n == 0 for n in c.to_frame()["n_tasks"].to_list())
    mc = tauk.stats.compare_all(res, ci=None)
    assert "setup" in mc.by and all(n == 0 for n in mc.pairs["n_tasks"].to_list())
    pooled = tauk.stats.compare(res, "tb", "t2", ci=None, pool_setups=True).to_frame()
    assert pooled.height == 1 and pooled["n_tasks"][0] == len(ids[0] & ids[1])  # asked: paired on the ids


def test_agents_differing_only_in_evaluator_version_are_compared_per_setup(shared_data, tmp_path):
    """The same split run at two τ²-bench commits by two agents: one setup each, so no silent cross-setup pair."""
    pa = _variant(shared_data, tmp_path, "a", info={"git_commit": "121283b87f0e5e14917e9fea3a6411e90408a6e1"},
                  suffix="-a")  # fmt: skip
    pb = _variant(shared_data, tmp_path, "b", info={"git_commit": "c0dd2331a751ad5a721c587f9ca76e52f0951a28"},
                  suffix="-b")  # fmt: skip
    res = tauk.load({"A": pa, "B": pb})
    assert set(setup_differences(res.runs)) == {"evaluator_version"}
    rows = tauk.stats.compare(res, "A", "B", ci=None).to_frame()
    assert "setup" in rows.columns and rows["n_tasks"].to_list() == [0, 0]
    n_tasks = res.trials["task_id"].n_unique()
    assert tauk.stats.compare(res, "A", "B", ci=None, pool_setups=True).to_frame()["n_tasks"].to_list() == [n_tasks]
