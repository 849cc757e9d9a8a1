"""The store under a hostile or unlucky user: kills during a re-ingest, readers during re-ingests, stale locks,
links out of the store, mutated entries, damaged parts, read-only stores and same-size edits. The full sweeps (≥ 20
kill points, more mutants) are ``python tests/fuzz_inputs.py --store``; the suite runs a handful of each."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.cli import main
from tauk.store import StoreError, read_manifest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzz_inputs  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "data"
ONE = SAMPLE / "baseline_airline.json"


def _copy(tmp_path: Path, name: str = "baseline_airline.json") -> Path:
    out = tmp_path / "src" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(SAMPLE / name, out)
    return out


# ---- kills and readers (seeded; the full sweep is in tests/fuzz_inputs.py) --------------------------------------
def test_a_reingest_killed_at_seeded_write_points_leaves_old_or_new(tmp_path):
    counts, failures = fuzz_inputs.kill_points(tmp_path, count=4, seed=7)
    assert not failures, failures
    assert counts["chosen"] == 4 and counts["points"] >= 20  # the re-ingest has many write points to kill at
    assert counts["old_or_new"] + counts["completed"] == 4 and counts["old_or_new"] >= 3


def test_readers_never_fail_during_reingests(tmp_path):
    r = fuzz_inputs.readers_during_reingests(tmp_path, rounds=6, readers=1)
    assert r["failures"] == 0, r["errors"]
    assert r["reads"] > 0


def test_mutated_entries_give_named_errors_and_touch_nothing_outside(tmp_path):
    counts, failures = fuzz_inputs.mutate_store(tmp_path, seed=3, count=len(fuzz_inputs.ENTRY_MUTATIONS))
    assert not failures, failures
    kinds = {k for k, _, _ in counts}
    assert kinds == set(fuzz_inputs.ENTRY_MUTATIONS)
    assert all(cls in ("named_error", "loaded") for _, _, cls in counts)
    assert all(counts[(k, "open", "named_error")] for k in kinds)  # every mutation is seen when opened


# ---- the lock -----------------------------------------------------------------------------------------------
HOLD = """
import sys, time
from pathlib import Path
from tauk.store._layout import lock
with lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_lock_left_by_a_killed_ingest_is_taken_over(tmp_path):
    root = tmp_path / "st"
    root.mkdir()
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(root)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    with pytest.raises(StoreError, match=f"another ingest holds the store .pid {p.pid}"):
        tauk.ingest(ONE, root, progress=False)
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert (root / ".lock").exists()  # what a kill leaves
    with pytest.warns(tauk.LoadWarning, match=f"took over a stale lock .pid {p.pid}"):
        rep = tauk.ingest(ONE, root, progress=False)
    assert rep.counts()["stale_lock"] == 1 and len(rep.ingested) == 1
    assert not (root / ".lock").exists()


def test_an_old_lock_file_nobody_holds_is_stale(tmp_path):
    root = tmp_path / "st"
    root.mkdir()
    (root / ".lock").write_text("pid 1 since 2020-01-01 00:00:00")  # the layout-1 lock text
    with pytest.warns(tauk.LoadWarning, match="took over a stale lock"):
        assert len(tauk.ingest(ONE, root, progress=False).ingested) == 1


def test_without_flock_a_dead_pid_or_a_silent_holder_is_stale(tmp_path, monkeypatch):
    import fcntl
    import socket

    from tauk.store import _layout

    def no_flock(fd, op):
        raise OSError(errno.ENOLCK, "no locks")

    monkeypatch.setattr(fcntl, "flock", no_flock)
    root = tmp_path / "st"
    root.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    (root / ".lock").write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "since": "then"}))
    with pytest.warns(tauk.LoadWarning, match="stale lock"):
        tauk.ingest(ONE, root, progress=False)
    # a live holder on another host: held until its heartbeat is older than STALE_AFTER
    (root / ".lock").write_text(json.dumps({"pid": 1, "host": "elsewhere", "since": "now"}))
    with pytest.raises(StoreError, match="another ingest holds the store"):
        tauk.ingest(ONE, root, progress=False)
    old = time.time() - _layout.STALE_AFTER - 5
    os.utime(root / ".lock", (old, old))
    with pytest.warns(tauk.LoadWarning, match="stale lock"):
        tauk.ingest(ONE, root, progress=False)


# ---- links and paths out of the store -----------------------------------------------------------------------
def test_a_linked_partition_folder_is_never_followed(tmp_path):
    src = _copy(tmp_path)
    root = tmp_path / "st"
    tauk.ingest(src, root, progress=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    for i in range(3):
        (outside / f"part-{i:05d}.parquet").write_bytes(b"precious")
    e = read_manifest(root)["sources"][0]
    folder = root / "trials" / f"run={e['run_key']}"
    shutil.rmtree(folder)
    folder.symlink_to(outside, target_is_directory=True)
    with pytest.raises(StoreError, match="symbolic link"):
        tauk.open(root)
    doc = json.loads(src.read_text())
    doc["simulations"] = doc["simulations"][:50]
    src.write_text(json.dumps(doc))
    with pytest.raises(StoreError, match="symbolic link; the store never follows links"):
        tauk.ingest(src, root, progress=False)
    assert sorted(p.name for p in outside.iterdir()) == [f"part-{i:05d}.parquet" for i in range(3)]
    assert all(p.read_bytes() == b"precious" for p in outside.iterdir())
    # the command line: one line, exit status 2
    assert main(["ingest", str(src), "--store", str(root), "--quiet"]) == 2


@pytest.mark.parametrize("bad", ["../../outside.parquet", "/etc/hostname", "trials/run=0000000000000000/x.parquet"])
def test_entry_paths_outside_the_store_are_refused(tmp_path, bad):
    root = tmp_path / "st"
    tauk.ingest(ONE, root, progress=False)
    entry = next((root / "sources").glob("*.json"))
    e = json.loads(entry.read_text())
    e["files"]["trials"][0] = bad
    e["sizes"][bad] = 10
    entry.write_text(json.dumps(e))
    with pytest.raises(StoreError, match="not a part of this run inside the store"):
        tauk.open(root)
    with pytest.raises(StoreError, match="sources/"):
        tauk.ingest(ONE, root, progress=False)


def test_a_source_listed_twice_is_refused_not_counted_twice(tmp_path):
    """The layout-1 manifest (one file) listing a source twice: refused by name (it counted 200 for 100)."""
    root = tmp_path / "st"
    tauk.ingest(ONE, root, progress=False)
    e = read_manifest(root)["sources"][0]
    e2 = json.loads(json.dumps(e))
    e2["run_id"] = e["run_id"] + "#2"
    from tauk.store._layout import run_key

    key = run_key(e2["run_id"])
    for frame, files in e["files"].items():
        e2["files"][frame] = [f.replace(e["run_key"], key) for f in files]
        for f, g in zip(files, e2["files"][frame]):
            (root / g).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(root / f, root / g)
    e2["sizes"] = {k.replace(e["run_key"], key): v for k, v in e["sizes"].items()}
    e2["run_key"] = key
    shutil.rmtree(root / "sources")
    (root / "manifest.json").write_text(json.dumps({"tauk_store": 1, "sources": [e, e2]}))
    with pytest.raises(StoreError, match="is listed twice"):
        tauk.open(root)


# ---- damaged parts and malformed entries: one line each, never a traceback --------------------------------------
def test_a_damaged_part_of_the_recorded_size_is_named(tmp_path):
    root = tmp_path / "st"
    tauk.ingest(ONE, root, progress=False)
    e = read_manifest(root)["sources"][0]
    part = root / e["files"]["trials"][0]
    data = bytearray(part.read_bytes())
    data[len(data) // 3 : len(data) // 3 + 64] = os.urandom(64)  # same size, damaged pages
    part.write_bytes(bytes(data))
    res = tauk.open(root)  # the sizes match: opening cannot see it …
    with pytest.raises(StoreError, match=r"trials/run=\w+/part-00000-\w+\.parquet \(trials of"):
        res.trials  # noqa: B018 - … reading names the part
    part.write_bytes(b"x" * len(data))  # not Parquet at all
    with pytest.raises(StoreError, match="cannot be read"):
        tauk.open(root).trials  # noqa: B018
    assert main(["summary", str(root), "--ci", "0"]) == 2


def test_a_foreign_part_is_named(tmp_path):
    root = tmp_path / "st"
    tauk.ingest(ONE, root, progress=False)
    entry = next((root / "sources").glob("*.json"))
    e = json.loads(entry.read_text())
    rel = e["files"]["trials"][0]
    pl.DataFrame({"x": [1, 2, 3]}).write_parquet(root / rel)
    e["sizes"][rel] = (root / rel).stat().st_size
    entry.write_text(json.dumps(e))
    with pytest.raises(StoreError, match="does not have the columns of trials"):
        tauk.open(root).trials  # noqa: B018


@pytest.mark.parametrize("mutation", ["no_files", "files_not_dict", "sizes_missing", "run_key", "not_json", "list"])
def test_malformed_entries_are_one_line(tmp_path, capsys, mutation):
    root = tmp_path / "st"
    tauk.ingest(ONE, root, progress=False)
    entry = next((root / "sources").glob("*.json"))
    e = json.loads(entry.read_text())
    if mutation == "no_files":
        del e["files"]
    elif mutation == "files_not_dict":
        e["files"] = ["trials"]
    elif mutation == "sizes_missing":
        e["sizes"] = {}
    elif mutation == "run_key":
        e["run_key"] = "0" * 16
    text = {"not_json": "{", "list": "[]"}.get(mutation, json.dumps(e))
    entry.write_text(text)
    for args in (["summary", str(root), "--ci", "0"], ["ingest", str(ONE), "--store", str(root), "--quiet"]):
        assert main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("tauk: error:") and "sources/" in err[0], err


# ---- read-only stores -----------------------------------------------------------------------------------------
def _read_only(monkeypatch, root: Path) -> None:
    """Make every write under ``root`` fail as on a read-only file system (the tests run as root, whom file modes
    do not stop)."""
    real_open = os.open
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def ro_open(path, flags, *args, **kwargs):
        if flags & writes and str(path).startswith(str(root)):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", ro_open)


def test_a_read_only_store_is_read_and_an_ingest_into_it_refused(tmp_path, monkeypatch, capsys):
    root = tmp_path / "st"
    tauk.ingest(SAMPLE, root, progress=False)
    want = tauk.stats.summarize(tauk.open(root), by="agent", k=1, ci=None).groups
    _read_only(monkeypatch, root)
    got = tauk.stats.summarize(tauk.open(root), by="agent", k=1, ci=None).groups  # nothing written to read
    assert got.equals(want)
    with pytest.raises(StoreError, match="the store is read-only"):
        tauk.ingest(SAMPLE, root, progress=False)  # even when nothing changed
    assert main(["ingest", str(SAMPLE), "--store", str(root), "--quiet"]) == 2
    assert "read-only" in capsys.readouterr().err


# ---- the fingerprint ------------------------------------------------------------------------------------------
def _same_size_edit(path: Path) -> None:
    """Flip one reward in place, keeping the size and the modification time (the attack on a sampled hash)."""
    info = path.stat()
    data = path.read_bytes()
    at = data.index(b'"reward": 1.0', len(data) // 2)
    path.write_bytes(data[:at] + b'"reward": 0.0' + data[at + 13 :])
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert path.stat().st_size == info.st_size and path.stat().st_mtime_ns == info.st_mtime_ns


def test_a_same_size_edit_with_the_time_kept_is_seen(tmp_path, monkeypatch):
    from tauk.store import _ingest

    big = tmp_path / "src" / "big.json"
    big.parent.mkdir()
    doc = json.loads(ONE.read_text())
    # 100 simulations …
    for s in doc["simulations"]:
        s["padding"] = "x" * 12_000  # … over 1 MiB, where the old fingerprint sampled blocks
    big.write_text(json.dumps(doc, indent=1))
    assert big.stat().st_size > (1 << 20)
    root = tmp_path / "st"
    tauk.ingest(big, root, progress=False)
    before = tauk.open(root).trials["reward"].sum()
    monkeypatch.setattr(_ingest, "RACY_NS", -1)  # trust the metadata as soon as it matches
    assert len(tauk.ingest(big, root, progress=False).unchanged) == 1
    _same_size_edit(big)
    rep = tauk.ingest(big, root, progress=False)
    assert len(rep.replaced) == 1
    assert tauk.open(root).trials["reward"].sum() == before - 1


def test_an_unchanged_source_is_proven_by_its_metadata_without_reading_it(tmp_path, monkeypatch):
    from tauk.store import _ingest, _sources

    src = _copy(tmp_path)
    root = tmp_path / "st"
    tauk.ingest(src, root, progress=False)
    monkeypatch.setattr(_ingest, "RACY_NS", -1)
    reads = []
    monkeypatch.setattr(_sources, "read_bytes", lambda *a, **k: reads.append(a) or b"")  # content_hash's reads
    assert len(tauk.ingest(src, root, progress=False).unchanged) == 1 and not reads
    os.utime(src)  # touched, not changed: hashed again, still unchanged
    monkeypatch.undo()
    assert len(tauk.ingest(src, root, progress=False).unchanged) == 1


def test_a_missing_part_is_repaired_by_the_next_ingest(tmp_path):
    src = _copy(tmp_path)
    root = tmp_path / "st"
    tauk.ingest(src, root, progress=False)
    e = read_manifest(root)["sources"][0]
    (root / e["files"]["messages"][0]).unlink()
    with pytest.raises(StoreError, match="which is missing; ingest the source again"):
        tauk.open(root)
    rep = tauk.ingest(src, root, progress=False)
    assert rep.counts() == {"repaired": 1} and len(rep.replaced) == 1
    assert tauk.open(root).messages.height == tauk.load(src).messages.height


def test_a_layout_1_store_is_read_and_converted(tmp_path):
    root = tmp_path / "st"
    tauk.ingest(SAMPLE, root, progress=False)
    want = tauk.open(root).trials.sort("run_id", "simulation_id")
    entries = read_manifest(root)["sources"]
    shutil.rmtree(root / "sources")
    (root / "manifest.json").write_text(json.dumps({"tauk_store": 1, "sources": entries}))
    assert tauk.open(root).trials.sort("run_id", "simulation_id").equals(want)
    rep = tauk.ingest(SAMPLE, root, progress=False)
    assert len(rep.unchanged) == 6
    assert json.loads((root / "manifest.json").read_text()) == {"tauk_store": 2}
    assert tauk.open(root).trials.sort("run_id", "simulation_id").equals(want)


def test_a_run_id_taken_by_another_source_is_not_overwritten(tmp_path):
    a = _copy(tmp_path / "a")
    b = _copy(tmp_path / "b")
    doc = json.loads(b.read_text())
    doc["simulations"] = doc["simulations"][:10]
    b.write_text(json.dumps(doc))
    root = tmp_path / "st"
    tauk.ingest({"mine": a}, root, progress=False)
    tauk.ingest({"mine": b}, root, progress=False, strict=False)  # the same label, another file
    assert sorted(e["run_id"] for e in read_manifest(root)["sources"]) == ["mine", "mine#2"]
    # b's 10 are a's too: kept once; b is a copy wholly in the store, left out as tauk.load leaves it (no run row)
    assert tauk.open(root).runs["run_id"].to_list() == ["mine"]
    assert tauk.open(root).trials.height == 100
