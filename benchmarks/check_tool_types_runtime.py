"""Check tauk's shipped tool table against τ²-bench at run time (an independent check of the ``ast`` derivation).

Run it with a Python that has τ²-bench installed (≥ 3.12) and ``TAU2_DATA_DIR`` set:

    TAU2_DATA_DIR=../shared/upstream/tau2-bench/data /path/to/py312/bin/python benchmarks/check_tool_types_runtime.py

For every domain it builds upstream's own environment (``tau2.registry``'s environment constructor, default
options) and compares, tool by tool, the agent's and the user's tool lists with the table's non-discoverable tools of
that side, and each tool's ``tool_type`` / ``tool_mutates_state`` as the toolkit reports them. Discoverable and
retrieval-variant tools (banking_knowledge) are checked on their classes' decorator attributes. Prints one line per
domain and exits 1 on any difference. Reads ``tauk/tasks/tool_types.json`` as JSON (tauk itself is not imported:
the interpreter is τ²-bench's).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "tauk" / "tasks" / "tool_types.json"


def main() -> int:
    from tau2.environment.toolkit import DISCOVERABLE_ATTR, MUTATES_STATE_ATTR, TOOL_TYPE_ATTR
    from tau2.registry import registry

    rows = json.loads(TABLE.read_text(encoding="utf-8"))["tools"]
    bad = 0
    for domain in sorted({r["domain"] for r in rows}):
        mine = {(r["side"], r["name"]): r for r in rows if r["domain"] == domain}
        try:
            env = registry.get_env_constructor(domain)()
        except ImportError as exc:  # banking_knowledge's default retrieval needs optional packages
            print(f"{domain}: default environment needs {exc.name}; built with retrieval_variant='no_knowledge'")
            env = registry.get_env_constructor(domain)(retrieval_variant="no_knowledge")
        seen = {}
        for side, kit in (("agent", env.tools), ("user", env.user_tools)):
            if kit is None:
                continue
            for name in kit.get_tools():
                seen[(side, name)] = (kit.tool_type(name).value, bool(kit.tool_mutates_state(name)), False)
        # every decorated method of the table's toolkit classes, discoverable and retrieval mixins included
        for (side, name), r in mine.items():
            if (side, name) in seen:
                continue
            module = importlib.import_module(r["file"].removeprefix("src/").removesuffix(".py").replace("/", "."))
            fn = getattr(getattr(module, r["toolkit"]), name)
            seen[(side, name)] = (getattr(fn, TOOL_TYPE_ATTR).value, bool(getattr(fn, MUTATES_STATE_ATTR)),
                                  bool(getattr(fn, DISCOVERABLE_ATTR, False)))  # fmt: skip
        offered = {k for k, v in seen.items() if not v[2]}
        missing = sorted(k for k in seen if k not in mine)
        differ = sorted(k for k in mine if k in seen and seen[k] != (mine[k]["tool_type"], mine[k]["mutates_state"],
                                                                     mine[k]["discoverable"]))  # fmt: skip
        print(f"{domain}: {len(mine)} tools in the table, {len(offered)} offered by the default environment; "
              f"not in the table: {missing or 'none'}; differing: {differ or 'none'}")
        bad += len(missing) + len(differ)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
