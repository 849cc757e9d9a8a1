"""tauk.tasks.tools: the shipped per-domain tool table and its lookup (one rule for validity, re-grade eligibility
and action-level attribution)."""

from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.errors import TaukError
from tauk.tasks import TOOL_TABLE_SOURCE, classify_tools, lookup_tool, recorded_tool_types, tool_table

ROOT = Path(__file__).resolve().parents[1]


def _derive_module():
    spec = importlib.util.spec_from_file_location("derive_tool_types", ROOT / "benchmarks" / "derive_tool_types.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_shipped_table_equals_the_derivation_from_upstream(upstream_tree: Path):
    derived = _derive_module().derive(upstream_tree)
    shipped = json.loads((ROOT / "tauk" / "tasks" / "tool_types.json").read_text(encoding="utf-8"))
    assert shipped == derived, "re-derive: python benchmarks/derive_tool_types.py --write"


def test_table_against_the_decorators_read_plainly(upstream_tree: Path):
    """An independent, line-based reading of the decorators of airline and retail: every decorated method's type."""
    for domain in ("airline", "retail"):
        lines = (upstream_tree / "src" / "tau2" / "domains" / domain / "tools.py").read_text().splitlines()
        found = {}
        for i, line in enumerate(lines):
            s = line.strip()
            if s.startswith("@is_tool(ToolType."):
                kind = s.removeprefix("@is_tool(ToolType.").split(")")[0].split(",")[0].lower()
                name = lines[i + 1].strip().removeprefix("def ").split("(")[0]
                found[name] = kind
        t = tool_table(domain)
        assert dict(t.select("name", "tool_type").rows()) == found
        assert (t.get_column("mutates_state") == (t.get_column("tool_type") == "write")).all()


def test_source_is_stated():
    assert TOOL_TABLE_SOURCE["project"].startswith("sierra-research/tau2-bench")
    assert TOOL_TABLE_SOURCE["derived_by"] == "benchmarks/derive_tool_types.py"
    assert TOOL_TABLE_SOURCE["version"] and TOOL_TABLE_SOURCE["commit"]
    t = tool_table()
    assert set(t["domain"]) == {"airline", "retail", "telecom", "mock", "banking_knowledge"}
    assert set(t["tool_type"]) <= {"read", "write", "think", "generic"}
    assert t.filter(pl.col("domain") == "telecom", pl.col("side") == "user").height > 0
    # the toolkit GenericToolKit (think, calculate) belongs to no domain's environment
    assert t.filter(pl.col("name") == "think").height == 0


def test_table_agrees_with_the_tool_types_a_v1_file_records(shared_data: Path):
    """v1.0 files record each action check's tool type: the table must say the same for every checked tool."""
    doc = json.loads((shared_data / "tau2" / "v1.0_whissle_airline_1trial.json").read_text())
    recorded = {}
    for s in doc["simulations"]:
        for c in (s.get("reward_info") or {}).get("action_checks") or []:
            if c.get("tool_type"):
                recorded.setdefault(c["action"]["name"], set()).add(c["tool_type"])
    assert recorded and all(len(v) == 1 for v in recorded.values())
    mine = dict(tool_table("airline").select("name", "tool_type").rows())
    assert {k: v.pop() for k, v in recorded.items()} == {k: mine[k] for k in recorded}
    # and the loader surfaces them as the expected actions' recorded tool types
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tauk.load(shared_data / "tau2" / "v1.0_whissle_airline_1trial.json")
    rec = recorded_tool_types(res)
    assert dict(rec.select("name", "tool_type").rows()) == {k: mine[k] for k in recorded}


def test_lookup_rules():
    frame = pl.DataFrame({
        "name": ["toggle_roaming", "toggle_roaming", "get_customer_by_id", "think", "nope", "give_discoverable_user_tool",
                 "rewrite_context", "get_flight_status", "cancel_reservation"],
        "requestor": ["user", "assistant", None, "assistant", None, "assistant", "assistant", "assistant", None],
        "domain": ["telecom", "telecom", "telecom", "airline", "retail", "banking_knowledge", "banking_knowledge",
                   "airline", None],
    })  # fmt: skip
    out = classify_tools(frame)
    assert out.select("tool_type", "state_changing", "tool_type_source").rows() == [
        ("write", True, "table"),  # a user tool called by the user
        ("unknown", None, None),  # the same name on the agent's side: no such agent tool
        ("read", False, "table"),  # no requestor: the one type over both sides
        ("unknown", None, None),  # think: no airline environment offers it
        ("unknown", None, None),
        ("generic", True, "table"),  # generic but changes state (its decorator says so)
        ("write", False, "table"),  # write that does not
        ("read", False, "table"),
        ("unknown", None, None),  # no domain
    ]
    # recorded tool types take precedence; with the table's type they keep the table's mutates_state
    rec = classify_tools(frame, recorded={"get_flight_status": "write", "give_discoverable_user_tool": "generic",
                                          "nope": "read", "think": "think"})  # fmt: skip
    got = dict(zip(frame["name"], zip(rec["tool_type"], rec["state_changing"], rec["tool_type_source"])))
    assert got["get_flight_status"] == ("write", True, "recorded")
    assert got["give_discoverable_user_tool"] == ("generic", True, "recorded")
    assert got["nope"] == ("read", False, "recorded")
    assert got["think"] == ("think", False, "recorded")
    # a recorded value that is no tool type is ignored
    assert classify_tools(frame.head(1), recorded={"toggle_roaming": "bogus"})["tool_type_source"].to_list() == ["table"]
    # per-run recorded types join on run_id
    runs = frame.head(2).with_columns(run_id=pl.Series(["a", "b"]))
    per_run = classify_tools(runs, recorded=pl.DataFrame({"run_id": ["b"], "name": ["toggle_roaming"],
                                                           "tool_type": ["read"]}))  # fmt: skip
    assert per_run.select("tool_type", "tool_type_source").rows() == [("write", "table"), ("read", "recorded")]
    # the row order and the other columns are kept
    assert out.select(frame.columns).equals(frame)


def test_lookup_tool_is_the_same_rule():
    for name, dom, req in [("cancel_reservation", "airline", None), ("toggle_data", "telecom", "user"),
                           ("toggle_data", "telecom", "assistant"), ("think", "retail", None)]:  # fmt: skip
        row = classify_tools(pl.DataFrame({"name": [name], "requestor": [req], "domain": [dom]},
                                          schema={"name": pl.String, "requestor": pl.String, "domain": pl.String})).row(0)  # fmt: skip
        assert tuple(lookup_tool(name, domain=dom, requestor=req)) == row[-3:]


def test_bad_arguments():
    with pytest.raises(TaukError, match="domain"):
        classify_tools(pl.DataFrame({"name": ["x"]}))
    with pytest.raises(TaukError, match="no 'tool' column"):
        classify_tools(pl.DataFrame({"name": ["x"]}), domain="airline", name="tool")
    with pytest.raises(TaukError, match="recorded="):
        classify_tools(pl.DataFrame({"name": ["x"]}), domain="airline", recorded=3)
    with pytest.raises(TaukError, match="not a column"):
        classify_tools(pl.DataFrame({"name": ["x"]}), domain="airline", recorded="tool_type")
