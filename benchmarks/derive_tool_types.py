"""Derive tauk's per-domain tool table (``tauk/tasks/tool_types.json``) from τ²-bench's source tree.

The table states facts about τ²-bench's tools — each standard domain's tool names, on which side (agent or user) they
are offered, and the type their tool decorator declares — read from the source with ``ast`` (nothing is imported or
executed, nothing is copied):

* a tool is a method decorated ``@is_tool(ToolType.X[, mutates_state=...])`` or
  ``@is_discoverable_tool(ToolType.X[, ...])``; ``mutates_state`` defaults, as the decorator says, to
  ``tool_type == WRITE`` (upstream's replay re-executes exactly the tools with ``mutates_state``);
* a domain is a package ``src/tau2/domains/<d>/`` with an ``environment.py``; its toolkits are the classes of that
  package that define tools or inherit them from another class of the package (mixins included), each with the
  tools of its bases;
* a toolkit is on the **user** side when the domain's ``environment.py`` builds it as ``user_tools`` (an assignment
  ``user_tools = X(...)`` or an argument ``user_tools=X(...)``), otherwise on the **agent** side;
* toolkits outside the domain packages (``GenericToolKit``'s ``think`` / ``calculate``) belong to no domain: no
  domain's environment offers them, so a call of ``think`` in airline is "unknown", not "think".

Run: ``python benchmarks/derive_tool_types.py [--tree ../shared/upstream/tau2-bench] [--write | --check]``.
Without an option it prints the derived table; ``--write`` writes ``tauk/tasks/tool_types.json``; ``--check``
exits 1 when the shipped table differs from the derivation (``tests/test_tasks_tools.py`` runs the same check
whenever the tree is present).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "tauk" / "tasks" / "tool_types.json"
DEFAULT_TREE = ROOT.parent / "shared" / "upstream" / "tau2-bench"
DECORATORS = {"is_tool": False, "is_discoverable_tool": True}  # name -> marks a discoverable tool
TOOL_TYPES = ("read", "write", "think", "generic")


def _decorator(node: ast.expr) -> tuple[str, bool, bool | None] | None:
    """``(tool_type, discoverable, mutates_state or None)`` of a tool decorator, else None."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name not in DECORATORS:
        return None
    kind: str = "read"  # the decorator's default
    args = list(node.args) + [k.value for k in node.keywords if k.arg == "tool_type"]
    if args:
        a = args[0]
        if not (isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and a.value.id == "ToolType"):
            raise ValueError(f"line {node.lineno}: tool type is not ToolType.<NAME>: {ast.unparse(a)}")
        kind = a.attr.lower()
    if kind not in TOOL_TYPES:
        raise ValueError(f"line {node.lineno}: unknown tool type {kind!r}")
    mutates = None
    for k in node.keywords:
        if k.arg == "mutates_state":
            if not isinstance(k.value, ast.Constant) or not isinstance(k.value.value, bool):
                raise ValueError(f"line {node.lineno}: mutates_state is not a literal bool")
            mutates = k.value.value
    return kind, DECORATORS[name], mutates


def _classes(package: Path) -> dict[str, dict]:
    """Class name -> {bases, tools, file} for every class of a domain package."""
    out: dict[str, dict] = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            tools = {}
            for item in node.body:
                if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for dec in item.decorator_list:
                    found = _decorator(dec)
                    if found is not None:
                        kind, discoverable, mutates = found
                        tools[item.name] = {
                            "tool_type": kind,
                            "mutates_state": (kind == "write") if mutates is None else mutates,
                            "discoverable": discoverable,
                            "toolkit": node.name,
                        }
            bases = [b.id if isinstance(b, ast.Name) else ast.unparse(b) for b in node.bases]
            if node.name in out:
                raise ValueError(f"{package.name}: class {node.name} defined twice")
            out[node.name] = {"bases": bases, "tools": tools, "file": path}
    return out


def _resolved(name: str, classes: dict[str, dict], seen: tuple[str, ...] = ()) -> dict[str, dict]:
    """The tools of a class with those of its bases in the same package (Python's MRO: earlier bases win)."""
    if name in seen:
        raise ValueError(f"class cycle through {name}")
    cls = classes[name]
    tools: dict[str, dict] = {}
    for base in reversed(cls["bases"]):
        if base in classes:
            tools.update(_resolved(base, classes, (*seen, name)))
    tools.update(cls["tools"])
    return tools


def _user_toolkits(environment: Path) -> set[str]:
    """Classes the environment module builds as ``user_tools``."""
    tree = ast.parse(environment.read_text(encoding="utf-8"))
    out: set[str] = set()

    def ctor(value: ast.expr) -> str | None:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            return value.func.id
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "user_tools" for t in node.targets):
            if (c := ctor(node.value)) is not None:
                out.add(c)
        elif isinstance(node, ast.keyword) and node.arg == "user_tools" and (c := ctor(node.value)) is not None:
            out.add(c)
    return out


def _domain_rows(package: Path, tree_root: Path) -> Iterator[dict]:
    classes = _classes(package)
    users = _user_toolkits(package / "environment.py")
    unknown = users - set(classes)
    if unknown:
        raise ValueError(f"{package.name}: user toolkit(s) {sorted(unknown)} not defined in the package")
    rows: dict[tuple[str, str], dict] = {}
    for name in classes:
        tools = _resolved(name, classes)
        if not tools:
            continue
        side = "user" if name in users else "agent"
        for tool, info in tools.items():
            key = (side, tool)
            defining = classes[info["toolkit"]]["file"].relative_to(tree_root).as_posix()
            row = {"domain": package.name, "side": side, "name": tool, **info, "file": defining}
            if key in rows and rows[key] != row:
                raise ValueError(f"{package.name}: tool {tool} ({side}) declared twice differently")
            rows[key] = row
    yield from (rows[k] for k in sorted(rows))


def _version(tree: Path) -> str | None:
    text = (tree / "pyproject.toml").read_text(encoding="utf-8") if (tree / "pyproject.toml").exists() else ""
    m = re.search(r'^version\s*=\s*"([^"]+)"', text, flags=re.M)
    return m.group(1) if m else None


def _commit(tree: Path) -> str | None:
    """The commit the tree was taken at, as the README beside it states (the tree itself has no .git)."""
    readme = tree.parent / "README.md"
    if readme.exists():
        m = re.search(r"at commit `([0-9a-f]{7,40})`", readme.read_text(encoding="utf-8"))
        if m:
            return m.group(1)
    return None


def derive(tree: Path = DEFAULT_TREE) -> dict:
    """The table as shipped: ``{"source": {...}, "tools": [rows]}`` (rows sorted by domain, side, name)."""
    domains = tree / "src" / "tau2" / "domains"
    if not domains.is_dir():
        raise FileNotFoundError(f"no τ²-bench source tree at {tree} (expected {domains})")
    rows = []
    for package in sorted(p for p in domains.iterdir() if (p / "environment.py").exists()):
        rows.extend(_domain_rows(package, tree))
    return {
        "source": {
            "project": "sierra-research/tau2-bench (MIT)",
            "version": _version(tree),
            "commit": _commit(tree),
            "derived_by": "benchmarks/derive_tool_types.py",
            "rule": (
                "each domain package's tool decorators (is_tool / is_discoverable_tool): the declared ToolType and "
                "mutates_state (default: tool_type == WRITE); side 'user' for the toolkit the domain's "
                "environment builds as user_tools, else 'agent'"
            ),
        },
        "tools": rows,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, default=DEFAULT_TREE, help="the τ²-bench source tree")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help=f"write {SHIPPED.relative_to(ROOT)}")
    mode.add_argument("--check", action="store_true", help="exit 1 when the shipped table differs")
    args = ap.parse_args(argv)
    table = derive(args.tree)
    text = json.dumps(table, indent=1, ensure_ascii=False) + "\n"
    if args.write:
        SHIPPED.write_text(text, encoding="utf-8")
        print(f"wrote {SHIPPED.relative_to(ROOT)}: {len(table['tools'])} tools")
        return 0
    if args.check:
        shipped = json.loads(SHIPPED.read_text(encoding="utf-8"))
        same = shipped == table
        print(f"{SHIPPED.relative_to(ROOT)} {'equals' if same else 'DIFFERS FROM'} the derivation from {args.tree}")
        return 0 if same else 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
