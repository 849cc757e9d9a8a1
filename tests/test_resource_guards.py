"""Huge values under an address-space limit: a file holding one huge string (where an id, a message or a tool
call's arguments belong) is refused with one line before the work that cannot fit starts — never a crash of the
process (SIGSEGV / SIGABRT from the native encoders, or a hang after a failed allocation in a Polars thread)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tauk

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "baseline_airline.json"
CHARS = 10_000_000

UNDER_A_LIMIT = r"""
import contextlib, io, resource, sys
from tauk.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    main(["summary", sys.argv[2], "--ci", "0"])  # every lazy import and thread pool in place first
    main(["audit", sys.argv[2]])
def vm():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm() + int(sys.argv[3]), resource.RLIM_INFINITY))
sys.exit(main(sys.argv[4:]))
"""


def _huge(tmp_path: Path, where: str) -> Path:
    """The sample with one value of 10 M characters (one of them beyond U+FFFF: 4 bytes a character in Python)."""
    doc = json.loads(SAMPLE.read_text())
    s = "é" * CHARS + "😀"
    sim = doc["simulations"][0]
    if where == "arguments":
        call = next(m for m in sim["messages"] if m.get("tool_calls"))["tool_calls"][0]
        call["arguments"] = {"x": s}
    elif where == "content":
        sim["messages"][1]["content"] = s
    elif where == "task_id":  # a task of that id too: the file stays consistent (no simulation without its task)
        task = next(t for t in doc["tasks"] if t["id"] == sim["task_id"])
        doc["tasks"].append({**task, "id": s})
        sim["task_id"] = s
    path = tmp_path / f"huge_{where}.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc to read the address space")
@pytest.mark.parametrize(("where", "command"), [("arguments", "audit"), ("content", "ingest"),
                                                 ("task_id", "summary")])  # fmt: skip
def test_a_huge_string_is_refused_in_one_line_under_an_address_space_limit(tmp_path, where, command):
    path = _huge(tmp_path, where)
    size = path.stat().st_size
    room = 12 * size  # more than the file's own check asks (2x), less than a huge value needs (20x)
    args = {"audit": ["audit", str(path)], "ingest": ["ingest", str(path), "--store", str(tmp_path / "st")],
            "summary": ["summary", str(path), "--ci", "0"]}[command]  # fmt: skip
    out = subprocess.run([sys.executable, "-c", UNDER_A_LIMIT, str(path), str(SAMPLE), str(room), *args],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tauk: error: {path}"), lines
    assert "MB of address space" in lines[0] and "raise the limit" in lines[0]


def test_without_a_limit_the_same_file_loads(tmp_path):
    path = _huge(tmp_path, "arguments")
    res = tauk.load(path)
    calls = res.tool_calls
    assert calls["arguments"].str.len_chars().max() > CHARS
    assert res.trials.height == 100
