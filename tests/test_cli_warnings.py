"""The command line prints every warning as one ``tauk: warning: …`` line (no Python warning format, no file path
or source line), and a report whose tables are empty because of the options says so and exits 1."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT, SAMPLE_DATA

RAW = re.compile(r"(Warning: |\.py:\d+|^\s+warnings\.warn|^\s+fig\.)", re.M)


def _run(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "tauk", *argv], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)  # fmt: skip


@pytest.mark.parametrize("argv", [
    ["summary", str(SAMPLE_DATA), "--k", "5", "--ci", "0"],
    ["summary", str(SAMPLE_DATA), "--by", "agent", "--k", "1,5", "--ci", "0", "--format", "json"],
    ["consistency", str(SAMPLE_DATA), "--by", "agent"],
])  # fmt: skip
def test_warnings_are_one_line_each(argv):
    p = _run(*argv)
    assert p.returncode == 0, p.stderr[-2000:]
    lines = [ln for ln in p.stderr.replace("\r", "\n").splitlines() if ln.strip()]
    assert not RAW.search(p.stderr), p.stderr[-2000:]
    if "--k" in argv:
        warn = [ln for ln in lines if ln.startswith("tauk: warning: ")]
        assert warn and all("k above the trials" in ln for ln in warn)
        assert len(warn) == len(set(warn))


def test_cli_main_shows_library_warnings_as_one_line(capsys):
    import warnings

    from tauk.cli import _one_line_warning

    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        warnings.simplefilter("always")
        warnings.warn("first line\n  second line", UserWarning, stacklevel=1)
        warnings.warn("first line\n  second line", UserWarning, stacklevel=1)  # the same text: once
    err = capsys.readouterr().err
    assert err == "tauk: warning: first line second line\n"


def test_the_suite_checks_every_cli_call_for_raw_warnings():
    """tests/conftest.py wraps ``tauk.cli.main`` and ``subprocess.run`` of the CLI: a raw warning fails the test."""
    import subprocess

    import conftest
    from tauk.cli import main

    assert main is conftest._checked_main
    raw = "/x/tauk/stats/a.py:12: UserWarning: k above the trials\n  warnings.warn(msg, stacklevel=2)\n"
    assert len(conftest.raw_warning_lines(raw)) == 2
    assert conftest.raw_warning_lines("tauk: warning: k above the trials (UserWarning: no)\n") == []
    code = "import warnings; from tauk.cli import main; warnings.warn('leaked')"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with pytest.raises(AssertionError, match="raw Python warning"):
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    conftest.CLI_CHECKS["leaks"].pop()  # the leak made on purpose
