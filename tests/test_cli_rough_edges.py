"""The command line's rough edges: defaults in --help, --k, filters, Parquet export, --out, audit --check, a tasks
file passed as results, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "data"


def _run(capsys, argv, code=0) -> tuple[str, str]:
    assert main(argv) == code
    out = capsys.readouterr()
    return out.out, out.err


def test_help_shows_the_defaults(capsys):
    for cmd in ("summary", "compare", "report", "audit"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        if cmd != "audit":
            assert "(default: 9999)" in text and "(default: 0.95)" in text and "(default: model)" in text, cmd
        assert "(default: table)" in text or cmd == "report"


def test_summary_k_and_filters(capsys):
    out, _ = _run(capsys, ["summary", str(SAMPLE), "--by", "agent", "--k", "1,3", "--agent", "baseline,atlas-large",
                           "--domain", "airline", "--format", "json", "--ci", "0"])  # fmt: skip
    recs = json.loads(out)
    assert [r["agent"] for r in recs] == ["atlas-large", "baseline"]
    assert all(set(r["pass_hat_k"]) == {"1", "3"} for r in recs)
    assert all(r["n_tasks"] == 25 and r["domain"] == "airline" for r in recs)
    _, err = _run(capsys, ["summary", str(SAMPLE), "--agent", "nobody"], code=2)
    assert "tauk: error:" in err and "atlas-large" in err


def test_export_writes_parquet_read_without_tauk(tmp_path, capsys):
    out, _ = _run(capsys, ["export", str(SAMPLE / "baseline_airline.json"), "--out", str(tmp_path),
                           "--frames", "runs,trials,tool_calls"])  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.parquet", "tool_calls.parquet", "trials.parquet"]
    import pyarrow.parquet as pq

    trials = pq.read_table(tmp_path / "trials.parquet")
    assert trials.num_rows == 100 and "reward" in trials.column_names
    want = tauk.load(SAMPLE / "baseline_airline.json").trials
    assert pl.read_parquet(tmp_path / "trials.parquet").equals(want)


def test_out_must_be_a_folder(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    for cmd in (["report", str(SAMPLE), "--out", str(f)], ["export", str(SAMPLE), "--out", str(f)]):
        _, err = _run(capsys, cmd, code=2)
        assert "is a file; give a folder" in err


def test_audit_check_exits_1_on_mismatches(capsys, shared_data):
    tool = shared_data / "nonconformant" / "toolorchestra_airline_1trial.json"
    _run(capsys, ["audit", str(tool), "--quiet"], code=0)
    _run(capsys, ["audit", str(tool), "--quiet", "--check"], code=1)
    _run(capsys, ["audit", str(SAMPLE / "baseline_airline.json"), "--check"], code=0)


def test_audit_csv(capsys):
    out, _ = _run(capsys, ["audit", str(SAMPLE / "baseline_airline.json"), "--format", "csv"])
    assert out.splitlines()[0].startswith("run,n_checked,communicate_mismatch")


def test_a_tasks_file_is_named_as_one(capsys, shared_data):
    _, err = _run(capsys, ["summary", str(shared_data / "tasks" / "v0.1.0_airline_tasks.json")], code=2)
    assert "task-definition file" in err and "--tasks" in err


def test_regrading_with_unrelated_tasks_is_refused(shared_data):
    res = tauk.load(shared_data / "tau2" / "v0.1_gpt-4.1_airline-test_1trial.json")
    with pytest.raises(tauk.EvaluationError, match="another domain"):
        tauk.score(res, tasks=shared_data / "tasks" / "head_telecom_tasks_small.json")


def test_errors_are_one_line_without_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    p = subprocess.run([sys.executable, "-m", "tauk", "summary", str(bad)], capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().startswith("tauk: error:") and len(p.stderr.strip().splitlines()) == 1


def test_a_stdout_command_ends_at_once_with_all_its_output(capsys):
    """``tauk summary`` in its own process (``tauk.cli.run``, the console script) ends without tearing its objects
    down (``ENDS_AT_ONCE``): the output is whole (the same bytes as ``main()`` called in-process, which returns),
    exit handlers still run, errors keep their status, a closed pipe is no traceback."""
    import os

    from tauk.cli import ENDS_AT_ONCE

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    code = ("import atexit, sys; atexit.register(lambda: sys.stderr.write('exit handler ran\\n')); "
            "from tauk.cli import run; run()")  # fmt: skip
    assert "summary" in ENDS_AT_ONCE and "report" not in ENDS_AT_ONCE  # commands that write files tear down
    p = subprocess.run([sys.executable, "-c", code, "summary", "data", "--format", "csv", "--quiet"], cwd=root,
                       env=env, capture_output=True, text=True)  # fmt: skip
    assert p.returncode == 0 and "exit handler ran" in p.stderr
    assert main(["summary", str(root / "data"), "--format", "csv", "--quiet"]) == 0
    assert p.stdout == capsys.readouterr().out and len(p.stdout) > 1000
    p = subprocess.run([sys.executable, "-c", code, "summary", "data", "--by", "nope"], cwd=root, env=env,
                       capture_output=True, text=True)  # fmt: skip
    assert p.returncode == 2 and "tauk: error:" in p.stderr and "exit handler ran" in p.stderr
    p = subprocess.run(f"{sys.executable} -c \"{code}\" summary data | head -c 10", shell=True, cwd=root, env=env,
                       capture_output=True, text=True)  # fmt: skip
    assert len(p.stdout) == 10 and "Traceback" not in p.stderr


def test_ending_at_once_keeps_what_a_normal_exit_gives(tmp_path):
    """The early end (``ENDS_AT_ONCE``) loses nothing a normal exit gives, with stdout block-buffered (no
    PYTHONUNBUFFERED): what an exit handler writes to stdout, a failed final write (a full disk: status 120, said
    on stderr, as Python's own exit), a profiler's report printed once the command returns."""
    import os

    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = str(root)
    sample = str(root / "data" / "baseline_airline.json")
    code = ("import atexit, sys; atexit.register(lambda: sys.stdout.write('exit handler wrote')); "
            "from tauk.cli import run; run()")  # fmt: skip
    p = subprocess.run([sys.executable, "-c", code, "summary", sample], cwd=tmp_path, env=env, capture_output=True,
                       text=True)  # fmt: skip
    assert p.returncode == 0 and p.stdout.endswith("exit handler wrote")
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            p = subprocess.run([sys.executable, "-m", "tauk", "summary", sample], cwd=tmp_path, env=env,
                               stdout=full, stderr=subprocess.PIPE, text=True)  # fmt: skip
        assert p.returncode != 0 and "No space left" in p.stderr
    p = subprocess.run([sys.executable, "-m", "cProfile", "-m", "tauk", "summary", sample], cwd=tmp_path, env=env,
                       capture_output=True, text=True)  # fmt: skip
    assert p.returncode == 0 and "function calls" in p.stdout
