"""The import paths of the statistics before they were arranged by question keep working for one release, each with
a DeprecationWarning naming the new module — and tauk's own code (the library, the tests, the benchmarks, the
notebooks) uses none of them."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import tauk.stats
from tauk.stats._old_paths import MOVED, RENAMED, SHADOWED

ROOT = Path(__file__).resolve().parents[2]

# names each old path held, and where they live now (independent of the alias table)
SAMPLES = {
    "tauk.stats.model": {"model_interval": "tauk.stats.intervals.model", "beta_moment": "tauk.stats.intervals.posterior",
                         "check_threshold": "tauk.stats.intervals.model_check", "Prior": "tauk.stats.intervals.posterior"},
    "tauk.stats.paired": {"paired_test": "tauk.stats.comparisons.paired_tests"},
    "tauk.stats.sample_size": {"tasks_needed": "tauk.stats.power.planning",
                               "variance_from_pilot": "tauk.stats.power.variance"},
    "tauk.stats.counts": {"task_counts": "tauk.stats.tasks", "merge_task_counts": "tauk.stats.tasks"},
    "tauk.stats.pvalues": {"holm": "tauk.stats.comparisons.pvalues"},
    "tauk.stats.ranks": {"rank_intervals": "tauk.stats.comparisons.ranks"},
    "tauk.stats.overall": {"overall": "tauk.stats.setup_mean"},
    "tauk.stats.compare": {"Comparison": "tauk.stats.comparisons.results", "holm": "tauk.stats.comparisons.pvalues"},
    "tauk.stats.consistency": {"ConsistencyResult": "tauk.stats.noise.analysis",
                               "noise_floor": "tauk.stats.noise.noise_floor"},
    "tauk.stats._core": {"u_hat": "tauk.stats.tasks", "INTERVAL_METHODS": None},
    "tauk.stats._bootstrap": {"interval": "tauk.stats.intervals.bootstrap", "CI_METHODS": None},
    "tauk.stats._posterior": {"_resample": "tauk.stats.intervals.posterior"},
    "tauk.stats._model_parts": {"_unbiased": "tauk.stats.tasks", "ppc_pvalue": "tauk.stats.intervals.model_check"},
    "tauk.stats._reliability_groups": {"_ranking": "tauk.stats.noise.ranking"},
}  # fmt: skip


def _fresh(name: str):
    if name in SHADOWED:  # always in sys.modules (importing must not replace the function): warns on use
        module = sys.modules[name]
        assert module.__all__
        return module
    sys.modules.pop(name, None)
    return importlib.import_module(name)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_old_path_imports_with_a_warning_naming_the_new_one(old):
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated.*import from tauk\.stats\.") as caught:
        module = _fresh(old)
    assert any(MOVED[old][0] in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in module.__all__[:3]:  # the names of the modules it moved to
            assert getattr(module, name) is not None


@pytest.mark.parametrize("old", SHADOWED)
def test_importing_an_old_path_keeps_the_function_of_the_same_name(old):
    import tauk.stats as ts

    function = getattr(ts, old.rsplit(".", 1)[1])
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated"):
        exec(f"from {old} import __all__", {})
    exec(f"import {old}", {})
    assert getattr(ts, old.rsplit(".", 1)[1]) is function and callable(function)


@pytest.mark.parametrize("old", sorted(SAMPLES))
def test_the_old_names_are_the_new_objects(old):
    with pytest.warns(DeprecationWarning):
        module = _fresh(old)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name, where in SAMPLES[old].items():
            new_name = RENAMED.get(old, {}).get(name, name.lstrip("_"))
            if where is None:  # a constant renamed: the same list under its new name
                assert getattr(module, name) is not None
                continue
            assert getattr(module, name) is getattr(importlib.import_module(where), new_name), (old, name)
        with pytest.raises(AttributeError, match="deprecated: now"):
            module.no_such_name  # noqa: B018


def test_old_attribute_paths_and_reexports():
    import tauk.stats as ts

    sys.modules.pop("tauk.stats.model", None)
    ts.__dict__.pop("model", None)
    with pytest.warns(DeprecationWarning):
        assert ts.model.model_interval is importlib.import_module("tauk.stats.intervals.model").model_interval
    from tauk.stats import passk

    with pytest.warns(DeprecationWarning, match="passk.unanimous_interval is deprecated"):
        assert passk.unanimous_interval is importlib.import_module("tauk.stats.intervals").unanimous_interval
    assert ts.compare.__module__ == "tauk.stats.comparisons.pairwise"  # the function, as before


def test_the_old_paths_warn_where_they_are_imported():
    code = ("import warnings; warnings.simplefilter('always')\n"
            "import tauk.stats\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    from tauk.stats.paired import paired_test\n"
            "print(w[0].filename, w[0].lineno)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["<string>", "5"]


def _old_imports(path: Path) -> list[str]:
    return _old_imports_in(path, ROOT)


def _old_imports_in(path: Path, root: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    text = "\n".join("" if line.startswith("%") else line for line in text.splitlines())  # notebook magics
    tree = ast.parse(text)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            # ``from tauk.stats import overall`` is the function; ``from tauk.stats import model`` the old module
            mods = [node.module] + [f"{node.module}.{a.name}" for a in node.names
                                    if node.module != "tauk.stats" or not (a.name in tauk.stats._LAZY
                                                                            or callable(vars(tauk.stats).get(a.name)))]
        elif isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        else:
            continue
        found += [f"{path.relative_to(root)}:{node.lineno} {m}" for m in mods if m in MOVED]
    return found


def test_the_scan_finds_old_paths(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("from tauk.stats import model, overall\nimport tauk.stats.paired\nfrom tauk.stats.ranks import r\n")
    hits = [h.split(" ")[1] for h in _old_imports_in(f, tmp_path)]
    assert hits == ["tauk.stats.model", "tauk.stats.paired", "tauk.stats.ranks"]


def test_taus_own_code_uses_no_old_path():
    files = [p for d in ("tauk", "tests", "benchmarks") for p in (ROOT / d).rglob("*.py")]
    files += list((ROOT / "notebooks").glob("[0-9]*.py"))  # the notebooks' sources (build.py writes the .ipynb)
    files = [p for p in files if p.name != "test_old_paths.py" and p.name != "_old_paths.py"]
    assert len(files) > 100
    assert [hit for p in files for hit in _old_imports(p)] == []
