"""The committed notebooks are the executed output of notebooks/build.py, read well on GitHub and are deterministic.

(The notebooks themselves are re-run and their ``# NBVAL_CHECK_OUTPUT`` cells compared by ``pytest --nbval-lax``.)
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

NB_DIR = Path(__file__).resolve().parents[1] / "notebooks"


def _build_module():
    spec = importlib.util.spec_from_file_location("tauk_notebooks_build", NB_DIR / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BUILD = _build_module()
NAMES = list(BUILD.NOTEBOOKS)


def test_expected_notebooks():
    assert NAMES == ["01_quickstart", "02_explore_with_widgets", "03_compare_agents", "04_paper_figures",
                     "05_failure_analysis", "06_noise_floor", "07_leaderboard"]
    assert sorted(p.stem for p in NB_DIR.glob("*.ipynb")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_notebook_matches_build_script(name):
    nb = nbformat.read(NB_DIR / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    want = BUILD.NOTEBOOKS[name]
    assert [(c.cell_type, c.source) for c in nb.cells] == list(want), (
        f"{name}.ipynb is out of date: run `python notebooks/build.py {name}`"
    )
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")


@pytest.mark.parametrize("name", NAMES)
def test_notebook_saved_with_clean_outputs(name):
    nb = nbformat.read(NB_DIR / f"{name}.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "saved without running every cell"
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))
    checked = [c for c in code if c.source.startswith("# NBVAL_CHECK_OUTPUT")]
    assert checked, "every notebook checks some numbers under nbval"
    for c in code:
        assert "execution" not in c.metadata, "timing must not be recorded"
        for out in c.outputs:
            assert out.output_type != "error", f"error output in {name}: {out.get('ename')}"
            if out.output_type == "stream":
                assert out.name == "stdout", f"stderr in {name}: {out.text[:200]}"
    for c in checked:
        text = "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream")
        assert text, "a checked cell prints what it checks"
        assert not re.search(r"0x[0-9a-f]{6,}", text), "memory address in a checked output"
        assert not re.search(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", text), "timestamp in a checked output"
        assert not any(o.output_type in ("display_data", "execute_result") for o in c.outputs), \
            "checked cells print text only (no rich outputs)"


@pytest.mark.parametrize("name", NAMES)
def test_notebook_uses_public_api_only(name):
    for kind, src in BUILD.NOTEBOOKS[name]:
        if kind == "code":
            assert not re.search(r"\b(tauk|stats|plot|widgets|scoring)\.(_\w+)", src), src
            assert "tauk._" not in src and "from tauk." not in src.replace("from tauk import", "")


def test_figures_folder_is_ignored():
    assert "figures/" in (NB_DIR / ".gitignore").read_text().split()
