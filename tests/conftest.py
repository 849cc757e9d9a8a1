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
