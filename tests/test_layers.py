"""The import graph of ``tauk`` flows one way: io → results → scoring → stats → plot / widgets / report → cli.

Every ``import`` of a tauk module (top level or inside a function) is read from the source with ``ast``; a module
may import only from its own layer or the layers before it, never a private name of another package, and no
library module imports the command line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "tauk"

# layer of each top-level part of the package (lower = closer to the input)
LAYERS: dict[str, int] = {
    "conventions": 0,
    "errors": 0,
    "_compat": 0,
    "table": 0,
    "io": 1,
    "schema": 1,
    "synth": 1,
    "results": 2,
    "store": 2,
    "replay": 3,
    "scoring": 3,
    "stats": 4,
    "plot": 5,
    "widgets": 6,
    "report": 6,
    "distributed": 6,
    "cli": 7,
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, imported module, imported names) of every tauk import in ``path``, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _module_name(path).split(".")
    package = me if path.name == "__init__.py" else me[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names if a.name.split(".")[0] == "tauk"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] == "tauk":
                out.append((node.lineno, mod, [a.name for a in node.names]))
    return out


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


MODULES = sorted(p for p in ROOT.rglob("*.py") if p != ROOT / "__init__.py" and p.name != "__main__.py")


def test_every_part_has_a_layer():
    parts = {_part(_module_name(p)) for p in MODULES}
    assert parts <= set(LAYERS), f"give these parts of tauk a layer: {sorted(parts - set(LAYERS))}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_flow_one_way(path: Path):
    me = _part(_module_name(path))
    bad = []
    for line, mod, names in _imports(path):
        part = _part(mod)
        if mod == "tauk":  # ``from tauk import x``: the layer of x
            for name in names:
                if name in LAYERS and LAYERS[name] > LAYERS[me]:
                    bad.append(f"line {line}: from tauk import {name} (layer {LAYERS[name]} > {LAYERS[me]})")
            continue
        if part is None or part == me:
            continue
        if LAYERS[part] > LAYERS[me]:
            bad.append(f"line {line}: {mod} (layer {LAYERS[part]} > {LAYERS[me]})")
        private = [p for p in mod.split(".")[2:] if p.startswith("_")] + [n for n in names if n.startswith("_")]
        if private and part != "cli":
            bad.append(f"line {line}: private {mod} {names} of another part of tauk")
    assert not bad, f"{path.relative_to(ROOT)} imports against the layers:\n" + "\n".join(bad)


def test_no_library_imports_the_cli():
    users = [
        str(p.relative_to(ROOT))
        for p in MODULES
        if _part(_module_name(p)) != "cli" and any(m.startswith("tauk.cli") for _, m, _ in _imports(p))
    ]
    assert users == []


def test_import_tauk_and_the_cli_stay_light():
    """``import tauk`` and building the command line load neither scipy nor matplotlib nor ipywidgets (the
    statistics and scoring layers load on first use), so ``tauk --help`` starts about as fast as Polars."""
    import subprocess
    import sys

    code = (
        "import sys, tauk, tauk.cli; tauk.cli.build_parser(); "
        "print(sorted(m for m in ('scipy', 'matplotlib', 'ipywidgets', 'tauk.stats', 'tauk.scoring') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    code = "import tauk; print(tauk.stats.__name__, tauk.score.__name__, 'load_leaderboard' in dir(tauk))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["tauk.stats", "score", "True"]
