"""The import graph of ``tauk`` flows one way: io → results / tasks → scoring → stats → plot / widgets / report → cli.

Every ``import`` of a tauk module (top level, inside a function or under ``TYPE_CHECKING``) is read from the source
with ``ast``; a module may import only from its own layer or the layers before it, never a private name of another
package, and no library module imports the command line. Inside the statistics the questions are layered too
(options → tasks → intervals → estimate → passk / summary → comparisons → power; noise beside, on options and tasks
only). The whole graph has no cycle — and since imports inside functions are edges of it too, no import is made lazy
to break one — and no module of the library imports the package ``tauk`` itself (``import tauk``): it imports what
it uses from where it lives.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "tauk"

# layer of each top-level part of the package (lower = closer to the input)
LAYERS: dict[str, int] = {
    "conventions": 0,
    "errors": 0,
    "_compat": 0,
    "_lazy": 0,
    "_text": 0,
    "table": 0,
    "io": 1,
    "schema": 1,
    "synth": 1,
    "results": 2,
    "store": 2,
    "tasks": 2,
    "replay": 3,
    "scoring": 3,
    "stats": 4,
    "leaderboard": 5,
    "plot": 5,
    "widgets": 6,
    "html": 6,
    "report": 6,
    "report_sections": 6,
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


def _edges() -> dict[str, set[str]]:
    """module -> the tauk modules it imports (``from pkg import name`` is an edge to ``pkg.name`` when that is a
    module, else to ``pkg``; importing a submodule is not counted as importing its parent packages)."""
    names = {_module_name(p) for p in ROOT.rglob("*.py")}
    out: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        me = _module_name(path)
        targets = set()
        for _, mod, imported in _imports(path):
            subs = [f"{mod}.{n}" for n in imported if f"{mod}.{n}" in names]
            targets.update(subs)
            if len(subs) < len(imported) or not imported:
                parts = mod.split(".")
                while parts and ".".join(parts) not in names:
                    parts.pop()
                if parts:
                    targets.add(".".join(parts))
        out[me] = targets - {me}
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


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


# ---- inside the statistics: one folder or module per question, layered ------------------------------------
STATS_LAYERS: dict[str, float] = {
    "options": 0,
    "_old_paths": 0,
    "_special": 0,  # special functions in NumPy/math (the summary without SciPy): imports nothing of tauk
    "tasks": 1,
    "intervals": 2,
    "dependence": 2,
    "noise": 2,
    "reliability": 2,
    "estimate": 3,
    "substantive": 3.5,  # pass^k on the substantive tasks: estimate's rows on a subset; summary builds on it
    "passk": 4,
    "missing": 4,
    "summary": 5,
    "setup_mean": 5.5,  # overall(): the leaderboard's mean of a summary's per-setup rows
    "comparisons": 5,
    "power": 6,
    "deviation_profile": 6,
}
"""Layer of each part of ``tauk.stats`` (its module, or its package); a part imports only from lower layers."""

BESIDE = {"noise", "reliability", "deviation_profile"}
"""Parts no other part of the statistics builds on (only the facade ``tauk.stats`` imports them)."""

STATS = sorted(p for p in (ROOT / "stats").rglob("*.py") if p != ROOT / "stats" / "__init__.py")


def _stats_part(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "stats" else None


def test_every_part_of_the_statistics_has_a_layer():
    parts = {_stats_part(_module_name(p)) for p in STATS}
    assert parts <= set(STATS_LAYERS), f"give these parts of tauk.stats a layer: {sorted(parts - set(STATS_LAYERS))}"


def _stats_violations(me: str, imports: list[tuple[int, str, list[str]]]) -> list[str]:
    """The imports of stats part ``me`` against :data:`STATS_LAYERS` (``imports`` as :func:`_imports` gives them)."""
    bad = []
    for line, mod, names in imports:
        if mod == "tauk.stats":  # ``from tauk.stats import x``: a part of the statistics, or the facade
            if not names or any(n not in STATS_LAYERS for n in names):
                bad.append(f"line {line}: the facade tauk.stats (import from the module that holds the name)")
            targets = [f"{mod}.{n}" for n in names if n in STATS_LAYERS]
        else:
            targets = [mod]
        for target in targets:
            part = _stats_part(target)
            if part is None or part == me:
                continue
            if part in BESIDE or part not in STATS_LAYERS or STATS_LAYERS[part] >= STATS_LAYERS[me]:
                bad.append(f"line {line}: {target} ({part}, layer {STATS_LAYERS.get(part)}; {me} is {STATS_LAYERS[me]})")
    return bad


@pytest.mark.parametrize("path", STATS, ids=lambda p: str(p.relative_to(ROOT / "stats")))
def test_the_statistics_are_layered_by_question(path: Path):
    bad = _stats_violations(_stats_part(_module_name(path)), _imports(path))
    assert not bad, f"stats/{path.relative_to(ROOT / 'stats')} imports against the layers of the statistics:\n" + \
        "\n".join(bad)  # fmt: skip


def test_the_layer_check_of_the_statistics_can_fail():
    assert _stats_violations("tasks", [(3, "tauk.stats.intervals.model", ["model_interval"])])  # upward
    assert _stats_violations("passk", [(3, "tauk.stats.summary", ["summarize"])])  # a sibling
    assert _stats_violations("power", [(3, "tauk.stats.noise.analysis", ["consistency"])])  # noise is beside
    assert _stats_violations("power", [(3, "tauk.stats", ["compare"])])  # the facade
    assert not _stats_violations("power", [(3, "tauk.stats.comparisons.pairing", ["pair_tasks"])])
    assert not _stats_violations("intervals", [(3, "tauk.stats.intervals.posterior", ["beta_moment"])])


# ---- the whole package --------------------------------------------------------------------------------------
def test_no_import_cycle_anywhere():
    """Imports inside functions and under TYPE_CHECKING are edges too: a cycle held open by a lazy import counts."""
    graph = _edges()
    assert len(graph) > 100  # the whole package was read
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_library_module_imports_the_package_itself():
    """``import tauk`` inside the library hides where a name lives and ties the module to the facade (and, through
    it, to everything the facade loads)."""
    bare = []
    for path in MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name == "tauk" for a in node.names):
                bare.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert bare == []


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
    # nor Polars or NumPy before the command's process is set up (its collector tuned before their imports)
    code = "import sys, tauk, tauk.cli; print(sorted(m for m in ('polars', 'numpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    code = ("import tauk; from tauk import Results; print(tauk.stats.__name__, tauk.score.__name__, "
            "'load_leaderboard' in dir(tauk), Results.__name__, tauk.load_tasks.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["tauk.stats", "score", "True", "Results", "load_tasks"]
    # load()'s annotations resolve (through the same lazy names), and only when asked
    code = ("import sys, typing, tauk; before = 'polars' in sys.modules; h = typing.get_type_hints(tauk.load); "
            "print(before, h['return'].__name__, 'PathLike' in str(h['inputs']), 'tauk' in dir(tauk))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "Results", "True", "False"]


def test_a_command_imports_only_its_own_subcommand_module():
    """Startup (issue 27): ``tauk summary`` builds only its own parser, so the other subcommands' modules (and what
    they import: the report, the synthetic generator, the store) are not loaded; ``tauk --help`` still lists all."""
    import subprocess
    import sys

    code = (
        "import sys, tauk.cli; tauk.cli.build_parser(['summary', 'data']); "
        "print(sorted(m for m in ('tauk.cli.report', 'tauk.cli.synth', 'tauk.synth', 'tauk.store', 'tauk.report', "
        "'tauk.cli.summary') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["['tauk.cli.summary']"]
    from tauk.cli import COMMANDS, build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert tuple(sub.choices) == COMMANDS
    sub = next(a for a in build_parser(["--quiet-typo", "sumary"])._actions
               if isinstance(a, argparse._SubParsersAction))  # fmt: skip
    assert tuple(sub.choices) == COMMANDS  # a mistyped command is told every choice
