"""Input hardening: no traceback, no hang, no silent double count (deep nesting, special files, files changed
after loading, overlapping runs, numbers written as text, byte-order marks, invalid UTF-8)."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.errors import LoadError
from tauk.io import scan

SAMPLE = Path(__file__).resolve().parents[1] / "data"
A = SAMPLE / "atlas-large_airline.json"
B = SAMPLE / "atlas-small_airline.json"
TAUBENCH = "taubench/gpt-4o_airline_4trials.json"


def _doc(path: Path = A) -> dict:
    return json.loads(path.read_text())


def _write(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc))
    return path


DEEP = "@@deep@@"


def _deep(levels: int) -> str:
    """A placeholder for a value nested ``levels`` deep (too deep for ``json.dumps`` to write): see :func:`_dump`."""
    return f"{DEEP}{levels}"


def _dump(doc) -> str:
    text = json.dumps(doc)
    while DEEP in text:
        at = text.index('"' + DEEP)
        end = text.index('"', at + 1)
        n = int(text[at + 1 + len(DEEP) : end])
        text = text[:at] + "[" * n + "]" * n + text[end + 1 :]
    return text


def _lenient(inputs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        return tauk.load(inputs, strict=False, **kw)


# ---- deep nesting ----------------------------------------------------------------------------------------------
def test_deep_nesting_in_one_simulation(tmp_path):
    doc = _doc()
    doc["simulations"][3]["x"] = _deep(1200)
    p = tmp_path / "deep.json"
    p.write_text(_dump(doc))
    with pytest.raises(LoadError) as e:
        tauk.load(p)
    assert e.value.location.startswith("$.simulations[3] (byte ") and "nested deeper than" in e.value.message
    res = _lenient(p)
    assert res.trials.height == len(doc["simulations"]) - 1
    assert res.report.counts() == {"invalid_simulation": 1}
    # the messages of the others decode too (the file as a whole cannot be)
    assert res.messages["simulation_id"].n_unique() == len(doc["simulations"]) - 1


def test_nesting_the_decoder_follows_still_loads(tmp_path):
    doc = _doc()
    doc["simulations"][0]["x"] = _deep(400)
    p = tmp_path / "ok.json"
    p.write_text(_dump(doc))
    assert tauk.load(p).trials.height == len(doc["simulations"])


def test_deep_nesting_in_directory_format(tmp_path):
    doc = _doc()
    run = tmp_path / "run"
    (run / "simulations").mkdir(parents=True)
    sims = doc.pop("simulations")
    doc["simulation_index"] = None
    (run / "results.json").write_text(json.dumps(doc))
    for s in sims[:3]:
        (run / "simulations" / f"{s['id']}.json").write_text(json.dumps(s))
    sims[1]["x"] = _deep(1500)
    (run / "simulations" / f"{sims[1]['id']}.json").write_text(_dump(sims[1]))
    with pytest.raises(LoadError, match="nested deeper"):
        tauk.load(run)
    assert _lenient(run).trials.height == 2


def test_deep_nesting_in_taubench_list(tmp_path, shared_data):
    recs = json.loads((shared_data / TAUBENCH).read_text())[:8]
    recs[2]["info"]["x"] = _deep(2000)
    p = tmp_path / "gpt-4o_airline_deep.json"
    p.write_text(_dump(recs))
    with pytest.raises(LoadError) as e:
        tauk.load(p)
    assert e.value.location.startswith("$[2] (byte ")
    res = _lenient(p)
    assert res.trials.height == 7 and res.messages["simulation_id"].n_unique() == 7


# ---- special files ---------------------------------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifos_are_never_opened(tmp_path):
    folder = tmp_path / "scan"
    folder.mkdir()
    shutil.copy(A, folder / "a.json")
    os.mkfifo(folder / "pipe.json")
    res = _lenient(folder)
    assert res.trials.height == 100 and res.report.counts() == {"not_a_regular_file": 1}
    with pytest.warns(tauk.LoadWarning, match="not a regular file"):  # a scan skips it in strict mode too
        assert tauk.load(folder).trials.height == 100
    with pytest.raises(LoadError, match="FIFO"):
        tauk.load(folder / "pipe.json")
    run = tmp_path / "run"
    (run / "simulations").mkdir(parents=True)
    os.mkfifo(run / "results.json")
    with pytest.raises(LoadError, match="FIFO"):
        tauk.load(run)
    (run / "results.json").unlink()
    doc = _doc()
    sims = doc.pop("simulations")
    (run / "results.json").write_text(json.dumps(doc))
    (run / "simulations" / f"{sims[0]['id']}.json").write_text(json.dumps(sims[0]))
    os.mkfifo(run / "simulations" / "pipe.json")
    res = _lenient(run)
    assert res.trials.height == 1 and res.report.counts() == {"not_a_regular_file": 1}


def test_devices_are_refused():
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    with pytest.raises(LoadError, match="character device"):
        tauk.load("/dev/zero")


# ---- files changed after loading -------------------------------------------------------------------------------
def test_messages_of_a_file_overwritten_after_loading_are_refused(tmp_path):
    p = tmp_path / "run.json"
    shutil.copy(A, p)
    res = tauk.load(p)
    assert res.trials.height == 100
    shutil.copy(B, p)  # another run under the same name
    with pytest.raises(LoadError, match="changed since it was loaded"):
        _ = res.messages
    res = tauk.load(p)
    doc = _doc(B)
    doc["simulations"] = doc["simulations"][:3]
    _write(p, doc)  # a smaller file: never an IndexError
    with pytest.raises(LoadError, match="changed since it was loaded"):
        _ = res.tool_calls


def test_a_same_size_edit_with_the_old_time_is_refused_and_hashing_waits_until_needed(tmp_path, monkeypatch):
    """The bytes held in memory are hashed when the file is first read again (not at load: a summary never pays
    for it), and that hash is of what was decoded: an edit of the same size with its modification time put back is
    still refused."""
    import os

    from tauk.io import rundata

    p = tmp_path / "run.json"
    shutil.copy(A, p)
    hashed: list[int] = []
    real = rundata.fingerprint
    monkeypatch.setattr(rundata, "fingerprint", lambda data: hashed.append(len(data)) or real(data))
    res = tauk.load(p)
    assert res.trials.height == 100 and hashed == []  # loaded and summarised: nothing hashed
    st = os.stat(p)
    raw = p.read_bytes()
    i = raw.index(b'"content"')
    edited = raw[:i] + raw[i:].replace(b"a", b"b", 1)
    assert len(edited) == len(raw) and edited != raw
    p.write_bytes(edited)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(LoadError, match="changed since it was loaded"):
        _ = res.messages
    assert hashed  # hashed when first needed


# ---- double counting -------------------------------------------------------------------------------------------
def test_taubench_trial_spelled_as_text_is_still_a_duplicate(tmp_path, shared_data):
    recs = json.loads((shared_data / TAUBENCH).read_text())
    copy = dict(recs[0])
    copy["trial"] = str(copy["trial"])
    p = tmp_path / "gpt-4o_airline_dup.json"
    p.write_text(json.dumps([*recs, copy]))
    with pytest.raises(LoadError, match="duplicate"):
        tauk.load(p)
    res = _lenient(p)
    s = tauk.stats.summarize(res, k=[1, 4], ci=None)
    est = s.pass_hat_k["estimate"].to_list()
    assert est == pytest.approx([0.42, 0.20])


def test_partial_overlap_of_two_files_is_counted_once(tmp_path):
    doc = _doc()
    ck = dict(doc, simulations=doc["simulations"][:-1])
    folder = tmp_path / "runs"
    folder.mkdir()
    _write(folder / "checkpoint.json", ck)
    _write(folder / "final.json", doc)
    with pytest.raises(LoadError, match="99 of its 100 simulations were already loaded"):
        tauk.load(folder)
    res = _lenient(folder)
    assert res.trials.height == 100 and res.report.counts() == {"overlapping_runs": 99}
    want = tauk.stats.summarize(tauk.load(A), by="agent", ci=None).groups["avg_reward"][0]
    got = tauk.stats.summarize(res, by="agent", ci=None).groups["avg_reward"][0]
    assert got == pytest.approx(want)
    # under different labels a run may be compared with itself
    assert tauk.load({"x": folder / "checkpoint.json", "y": folder / "final.json"}).trials.height == 199


# ---- numbers written as text -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("field", "value", "problem"), [
    ("agent_cost", "abc", "not a number"), ("agent_cost", "$0.05", "not a number"),
    ("trial", "1.9", "not an integer"), ("duration", "fast", "not a number"),
])  # fmt: skip
def test_bad_numbers_are_errors_or_reported(tmp_path, field, value, problem):
    doc = _doc()
    doc["simulations"][5][field] = value
    p = _write(tmp_path / "n.json", doc)
    with pytest.raises(LoadError) as e:
        tauk.load(p)
    assert e.value.location == f"$.simulations[5].{field}" and problem in e.value.message
    res = _lenient(p)
    assert res.report.counts() == {"invalid_number": 1}
    assert res.trials[field][5] is None


def test_numbers_as_text_and_nan_costs(tmp_path):
    doc = _doc()
    doc["simulations"][0]["agent_cost"] = "0.5"
    doc["simulations"][1]["agent_cost"] = "nan"
    trial = doc["simulations"][2]["trial"]
    doc["simulations"][2]["trial"] = str(trial)  # its own trial index, as text (another would repeat a trial)
    p = _write(tmp_path / "n.json", doc)
    with pytest.warns(tauk.LoadWarning, match="NaN or infinity"):
        res = tauk.load(p)
    t = res.trials
    assert t["agent_cost"][0] == 0.5 and t["agent_cost"][1] is None and t["trial"][2] == trial
    assert res.report.counts() == {"non_finite_number": 1}
    s = tauk.stats.summarize(res, by="agent", ci=None).groups
    costs = [c for c in t["agent_cost"].to_list() if c is not None]
    assert s["avg_agent_cost"][0] == pytest.approx(sum(costs) / len(costs))


# ---- text encoding ---------------------------------------------------------------------------------------------
def test_byte_order_mark_is_accepted(tmp_path):
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + A.read_bytes())
    res = tauk.load(p)
    assert res.trials.height == 100 and res.messages.height == tauk.load(A).messages.height


def test_invalid_utf8_names_the_byte(tmp_path):
    data = A.read_bytes()
    at = data.index(b'"role":"assistant","content":"') + 40
    p = tmp_path / "bad.json"
    p.write_bytes(data[:at] + b"\xff" + data[at:])
    res = tauk.load(p)
    with pytest.raises(LoadError) as e:
        _ = res.messages
    assert "invalid UTF-8" in e.value.message and "byte" in e.value.location


# ---- the structural scan ---------------------------------------------------------------------------------------
def _py_depth(text: str) -> int:
    depth = deepest = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


@pytest.mark.parametrize(("chunk", "docs"), [(2, 15), (7, 40), (64, 80), (1 << 22, 150)])
def test_scan_agrees_with_a_plain_reading(monkeypatch, chunk, docs):
    import random

    monkeypatch.setattr(scan, "_CHUNK", chunk)
    rng = random.Random(chunk)
    atoms = [1, 'a\\"[{', "]\\\\", 'x"y', None, 2.5, "\\", "}},", '\\\\\\"', ","]

    def value(d=0):
        r = rng.random()
        if d > 5 or r < 0.3:
            return rng.choice(atoms)
        if r < 0.65:
            return [value(d + 1) for _ in range(rng.randint(0, 3))]
        return {f'k{i}"[': value(d + 1) for i in range(rng.randint(0, 3))}

    for _ in range(docs):
        sims = [value() for _ in range(rng.randint(0, 5))]
        text = json.dumps({"info": value(), "simulations": sims, "z": [value()]}, indent=rng.choice([None, 1]))
        data = text.encode()
        assert [json.loads(data[a:b]) for a, b in scan.array_elements(data, key="simulations")] == sims
        listed = json.dumps(sims).encode()
        assert [json.loads(listed[a:b]) for a, b in scan.array_elements(listed)] == sims
        assert scan.max_depth(data) == _py_depth(text)


# ---- the command line ------------------------------------------------------------------------------------------
def test_cli_file_named_like_a_label_and_explicit_labels(tmp_path, capsys):
    from tauk.cli import main

    odd = tmp_path / "k=v.json"
    shutil.copy(A, odd)
    assert main(["summary", str(odd), "--format", "json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec[0]["agent"] == "atlas-large"  # a path, not the label "k"
    assert main(["summary", "--label", f"mine={A}", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["agent"] == "mine"
    assert main(["summary", "--label", "nolabel", "--format", "json"]) == 2
    assert "NAME=PATH" in capsys.readouterr().err


def test_cli_lenient_prints_the_report_not_a_pointer(tmp_path, capsys):
    from tauk.cli import main

    doc = _doc()
    doc["simulations"][0]["agent_cost"] = "abc"
    p = _write(tmp_path / "c.json", doc)
    assert main(["summary", str(p)]) == 2
    assert "agent_cost" in capsys.readouterr().err
    assert main(["summary", str(p), "--lenient", "--format", "csv"]) == 0
    err = capsys.readouterr().err
    assert "invalid_number" in err and "Results.report" not in err


# ---- a reward basis naming a component that does not exist ------------------------------------------------------
def test_unknown_component_costs_only_its_tasks(tmp_path):
    doc = _doc()
    target = doc["tasks"][2]
    target["evaluation_criteria"]["reward_basis"] = ["DB", "COMMUNICATE", "VIBES"]
    tid = str(target["id"])
    for s in doc["simulations"]:
        if str(s["task_id"]) == tid and s.get("reward_info"):
            s["reward_info"]["reward_basis"] = None
    p = _write(tmp_path / "basis.json", doc)
    with pytest.raises(tauk.EvaluationError, match=rf"VIBES \(task {tid}\)"):
        tauk.score(tauk.load(p))
    res = _lenient(p)
    with pytest.warns(tauk.LoadWarning, match="does not exist"):
        scored = tauk.score(res)
    hit = scored.filter(pl.col("task_id") == tid)
    assert hit.height and hit["score_reward"].null_count() == hit.height
    assert set(hit["failure"]) == {"unknown_component:VIBES"}
    rest = scored.filter(pl.col("task_id") != tid)
    assert rest["score_reward"].null_count() == 0
    assert res.report.counts().get("unknown_component") == hit.height


# ---- out of memory -------------------------------------------------------------------------------------------
UNDER_A_LIMIT = r"""
import contextlib, io, resource, sys
import tauk.cli
from tauk.cli import main
with contextlib.redirect_stdout(io.StringIO()):  # every lazy import and thread pool in place first
    main(["summary", sys.argv[2]])
def vm():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
room = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_AS, (vm() + room, resource.RLIM_INFINITY))
sys.exit(main(["summary", sys.argv[1]]))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc to read the address space")
def test_a_file_too_big_for_the_address_space_is_refused_in_one_line(tmp_path):
    """Past an address-space limit the native decoders abort the process (SIGABRT, no Python error); the decode
    is refused before it starts instead: one line, exit status 2."""
    import subprocess
    import sys

    from tauk.synth import write_corpus

    big = tmp_path / "big.json"
    write_corpus(big, n_simulations=400, payload_bytes=1000, seed=0)
    size = big.stat().st_size
    assert size > 2 << 20  # memory-mapped, checked
    out = subprocess.run([sys.executable, "-c", UNDER_A_LIMIT, str(big), str(A), str(size)],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 2, out.stderr[-2000:]
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    assert lines[0].startswith(f"tauk: error: {big}: not enough memory to decode this file")
    assert "MB of address space needed" in lines[0] and "tauk ingest" in lines[0]


def test_a_file_bigger_than_the_memory_left_is_refused(tmp_path, monkeypatch):
    from tauk.io import files

    big = tmp_path / "big.json"
    big.write_bytes(A.read_bytes() + b" " * (2 << 20))  # trailing blanks: valid JSON, over the mmap threshold
    assert tauk.load(big, progress=False).trials.height == tauk.load(A, progress=False).trials.height
    kb = {"MemAvailable": 1024, "SwapFree": 0, "VmSize": 0}
    monkeypatch.setattr(files, "_proc_kb", lambda path, key: kb[key])
    with pytest.raises(LoadError, match=r"MB of memory needed, 1 MB left\); free memory, or ingest"):
        tauk.load(big, progress=False)
    monkeypatch.setenv("TAUK_MEMORY_CHECK", "0")  # the user's word
    assert tauk.load(big, progress=False).trials.height > 0
