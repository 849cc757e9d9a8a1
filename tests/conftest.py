"""Shared fixtures.

Tests that read the real trial logs in ``../shared/data`` use the ``shared_data`` fixture: without the folder
they skip with a clear reason, but under ``TAUK_REQUIRE_SHARED_DATA=1`` (set by ``.ci/run``) a missing folder fails.

Property tests (hypothesis) draw new examples on every local run; under ``CI`` they run a fixed, derandomised set
so that a CI verdict is reproducible (a failure found locally is replayed from hypothesis's database and becomes a
regression test).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI", "") not in ("", "0", "false"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("TAUK_SHARED_DATA", ROOT.parent / "shared" / "data"))
SAMPLE_DATA = ROOT / "data"


def _require_shared() -> bool:
    return os.environ.get("TAUK_REQUIRE_SHARED_DATA", "") not in ("", "0", "false")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path to ../shared/data; skip (or fail under TAUK_REQUIRE_SHARED_DATA=1) when absent."""
    if not (SHARED_DATA / "EXPECTED.json").exists():
        msg = f"shared trial logs not found at {SHARED_DATA} (set TAUK_SHARED_DATA or place ../shared beside the project)"
        if _require_shared():
            pytest.fail("TAUK_REQUIRE_SHARED_DATA=1 but " + msg)
        pytest.skip(msg)
    return SHARED_DATA


@pytest.fixture(scope="session")
def expected(shared_data: Path) -> dict:
    """EXPECTED.json: per-file figures under the upstream rules."""
    return json.loads((shared_data / "EXPECTED.json").read_text())


UPSTREAM_TREE = Path(os.environ.get("TAUK_UPSTREAM", ROOT.parent / "shared" / "upstream" / "tau2-bench"))


@pytest.fixture(scope="session")
def upstream_tree() -> Path:
    """τ²-bench's source tree (../shared/upstream/tau2-bench); skip without it (fail under
    TAUK_REQUIRE_SHARED_DATA=1)."""
    if not (UPSTREAM_TREE / "src" / "tau2" / "domains").is_dir():
        msg = f"τ²-bench's source tree not found at {UPSTREAM_TREE} (set TAUK_UPSTREAM)"
        if _require_shared():
            pytest.fail("TAUK_REQUIRE_SHARED_DATA=1 but " + msg)
        pytest.skip(msg)
    return UPSTREAM_TREE


@pytest.fixture(scope="session")
def tau2() -> object:
    """τ²-bench's registry, for the replay tests (τ²-bench installed, Python ≥ 3.12; ``TAU2_DATA_DIR`` defaults to
    ../shared/upstream/tau2-bench/data). Skips without it — ``.ci/run`` runs these tests in a Python 3.12 venv
    with τ²-bench, where ``TAUK_REQUIRE_REPLAY=1`` makes a skip a failure."""
    if "TAU2_DATA_DIR" not in os.environ and (UPSTREAM_TREE / "data").is_dir():
        os.environ["TAU2_DATA_DIR"] = str(UPSTREAM_TREE / "data")
    from tauk.replay import ReplayUnavailable
    from tauk.replay._upstream import require

    try:
        return require()
    except ReplayUnavailable as exc:
        if os.environ.get("TAUK_REQUIRE_REPLAY", "") not in ("", "0", "false"):
            pytest.fail(f"TAUK_REQUIRE_REPLAY=1 but {exc}")
        pytest.skip(f"replay tests need τ²-bench (.ci/run runs them in its Python 3.12 venv): {exc}")


@pytest.fixture(scope="session")
def pdflatex() -> str:
    """The pdflatex executable; skip without it (fail under ``TAUK_REQUIRE_LATEX=1``, set by ``.ci/run``)."""
    import shutil

    exe = shutil.which("pdflatex")
    if exe is None:
        if os.environ.get("TAUK_REQUIRE_LATEX", "") not in ("", "0", "false"):
            pytest.fail("TAUK_REQUIRE_LATEX=1 but pdflatex is not installed")
        pytest.skip("pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
    return exe


def compile_latex_tables(exe: str, tex_files: list[Path], workdir: Path, width_pt: float) -> list[str]:
    """Compile each ``.tex`` table (as written, ``\\input`` into a stock ``article`` whose column is ``width_pt``
    wide) and return the problems: a pdflatex error, an overfull box, a scaled or tiny table."""
    import re
    import subprocess

    problems = []
    for i, tex in enumerate(tex_files):
        text = tex.read_text(encoding="utf-8")
        for bad in (r"\resizebox", r"\scalebox", r"\tiny"):
            if bad in text:
                problems.append(f"{tex.name}: {bad} (text below 7 pt)")
        d = workdir / f"t{i}"
        d.mkdir(parents=True, exist_ok=True)
        doc = ("\\documentclass{article}\n\\usepackage{booktabs,array}\n"
               f"\\setlength{{\\textwidth}}{{{width_pt}pt}}\\setlength{{\\columnwidth}}{{{width_pt}pt}}\n"
               f"\\begin{{document}}\nTable~\\ref{{{_label(text)}}}.\n\\input{{{tex.resolve()}}}\n\\end{{document}}\n")  # fmt: skip
        (d / "t.tex").write_text(doc, encoding="utf-8")
        for _ in range(2):  # twice: the reference resolves on the second run
            p = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=d,
                               capture_output=True, text=True, errors="replace", timeout=120)  # fmt: skip
            if p.returncode:
                problems.append(f"{tex.name}: pdflatex failed: {p.stdout[-1500:]}")
                break
        else:
            log = (d / "t.log").read_text(errors="replace")
            problems += [f"{tex.name}: {m}" for m in re.findall(r"Overfull \\hbox.*", log)]
            if "Reference" in log and "undefined" in log:
                problems.append(f"{tex.name}: the label does not resolve")
    return problems


def _label(text: str) -> str:
    import re

    m = re.search(r"\\label\{([^}]*)\}", text)
    return m.group(1) if m else "none"


# ---- every CLI command the suite runs: 0 raw Python warnings on stderr (issue 27) -----------------------------------
# A warning reaches the terminal as one ``tauk: warning: …`` line; Python's own format (``path.py:12: UserWarning: …``
# and the echoed ``warnings.warn(…)`` source line) never. Checked for every in-process ``tauk.cli.main([...])`` (the
# function is wrapped here, before any test module imports it) and every ``subprocess.run`` of ``python -m tauk``
# or of a ``-c`` script calling ``tauk.cli.main``. The counts are printed at the end of the session.
import re as _re  # noqa: E402
import subprocess as _subprocess  # noqa: E402
import sys as _sys  # noqa: E402

import tauk.cli as _tauk_cli  # noqa: E402

RAW_WARNING = _re.compile(r"(Warning: |\.py:\d+: |^\s*warnings\.warn\()")
CLI_CHECKS = {"calls": 0, "leaks": []}


def raw_warning_lines(stderr: str) -> list[str]:
    """The lines of ``stderr`` in Python's warning format (not ``tauk: warning: …`` / ``tauk: error: …`` lines)."""
    return [ln for ln in str(stderr).replace("\r", "\n").splitlines()
            if RAW_WARNING.search(ln) and not ln.startswith("tauk: ")]  # fmt: skip


def _check_cli_stderr(stderr: str, what: object) -> None:
    CLI_CHECKS["calls"] += 1
    raw = raw_warning_lines(stderr)
    if raw:
        CLI_CHECKS["leaks"].append((str(what)[:200], raw[:3]))
        raise AssertionError(f"raw Python warning on stderr from `tauk {what}`: {raw[:3]}")


class _Tee:
    """sys.stderr while ``main`` runs: writes go through to the stream the test captures, and are kept."""

    def __init__(self, stream: object) -> None:
        self._stream, self._kept = stream, []

    def write(self, s: str) -> int:
        self._kept.append(s)
        return self._stream.write(s)

    def getvalue(self) -> str:
        return "".join(self._kept)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


_REAL_MAIN = _tauk_cli.main


def _checked_main(argv=None):  # noqa: ANN001, ANN202
    tee = _Tee(_sys.stderr)
    _sys.stderr = tee
    try:
        return _REAL_MAIN(argv)
    finally:
        if _sys.stderr is tee:
            _sys.stderr = tee._stream
        _check_cli_stderr(tee.getvalue(), " ".join(map(str, argv or [])))


_checked_main.__doc__ = _REAL_MAIN.__doc__
_tauk_cli.main = _checked_main
_REAL_RUN = _subprocess.run


def _is_cli(argv: object) -> bool:
    if not isinstance(argv, list | tuple):
        return False
    a = [str(x) for x in argv]
    if any(a[i : i + 2] == ["-m", "tauk"] for i in range(len(a))):
        return True
    return "-c" in a and any("tauk.cli" in x and ("main" in x or "run" in x) for x in a)


def _checked_run(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
    argv = args[0] if args else kwargs.get("args")
    if not _is_cli(argv):
        return _REAL_RUN(*args, **kwargs)
    shown = not (kwargs.get("capture_output") or kwargs.get("stderr") is not None)
    if shown:  # keep it to check, then show it as the test would have
        kwargs["stderr"] = _subprocess.PIPE
    p = _REAL_RUN(*args, **kwargs)
    err = p.stderr if isinstance(p.stderr, str) else (p.stderr or b"").decode("utf-8", "replace")
    if shown:
        _sys.stderr.write(err)
    if kwargs.get("stderr") is not _subprocess.STDOUT:
        _check_cli_stderr(err, " ".join(str(x) for x in argv[1:])[:200])
    else:
        out = p.stdout if isinstance(p.stdout, str) else (p.stdout or b"").decode("utf-8", "replace")
        _check_cli_stderr(out, " ".join(str(x) for x in argv[1:])[:200])
    return p


@pytest.fixture(autouse=True)
def _cli_subprocesses_checked(monkeypatch):
    monkeypatch.setattr(_subprocess, "run", _checked_run)
    yield


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001
    if CLI_CHECKS["calls"]:
        terminalreporter.write_line(f"CLI stderr checked for raw Python warnings: {CLI_CHECKS['calls']} calls, "
                                    f"{len(CLI_CHECKS['leaks'])} with a raw warning")  # fmt: skip
