"""Upstream's replay, call by call: which tool calls and which gold actions change τ²-bench's state (the judge of
tauk's action-level attribution on the shared τ²-bench files).

For every simulation of each results file, on the domain's own environment (τ²-bench imported as a library):

* the trajectory's calls are replayed the way upstream's DB check replays them (``Environment.set_state``: the
  task's initial state, then each state-changing call through ``get_response``, reads skipped), and for each call
  the pair (agent DB hash, user DB hash) is read before and after — ``changed`` is whether it moved;
* the gold actions are replayed the way the gold environment is built (``make_tool_call`` in gold order, errors
  logged and ignored) with the same before / after reading.

    TAU2_DATA_DIR=../shared/upstream/tau2-bench/data /work/venv312/bin/python \\
        benchmarks/deviation_evidence_upstream.py ../shared/data/tau2/*.json \\
        --out benchmarks/results/deviation_evidence_upstream.json

With ``--net`` (tauk importable: ``PYTHONPATH=.``) the replay is counterfactual instead, for each simulation in
which tauk finds a decisive deviation: the trajectory replayed with and without its decisive deviating calls
(``extra`` and ``wrong_args`` calls), the gold with and without its decisive deviating gold actions (``missing`` and
``wrong_args`` actions), end states compared (agent and user DB hashes) — whether those deviations, together, changed
the end state at all (per-call evidence cannot see a pair that cancels: a reset whose effect a later reboot undoes).
``order`` deviations are not tested (that needs a reordering, not a removal).

The evidence in ``benchmarks/results/deviation_evidence_upstream.json`` is the merge (``--merge``) of a per-call
run (``--only-decisive``: the simulations where evidence can change a verdict; split over several processes) and a
``--net`` run, over the 18 conformant shared files.

The output maps results file name → simulation id → ``{"calls": {call_idx: changed}, "gold": {action_idx:
changed}, "db": recorded db_reward}`` (with ``--net``: ``{"net_calls": [call_idx, …], "net_calls_changed": bool,
"net_gold": [action_idx, …], "net_gold_changed": bool, "db": …}``) (``call_idx``: the call's 0-based position among all the simulation's tool
calls, tauk's key). ``tests/test_scoring_deviations.py`` reads it: the deviations tauk calls neutral or decisive
are checked against what the replay says each call did.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--net", action="store_true", help="counterfactual replay without the decisive deviations")
    ap.add_argument("--only-decisive", action="store_true",
                    help="per-call replay only of the simulations with a decisive deviation (evidence can only make "
                         "a deviation neutral, so the others' verdicts cannot change); needs tauk importable")
    ap.add_argument("--swaps-only", action="store_true",
                    help="with --net: only the simulations whose deviating calls have identical copies")
    ap.add_argument("--merge", action="store_true",
                    help="the files are earlier outputs: merge them (per simulation) into --out, no replay")
    args = ap.parse_args(argv)
    if args.merge:
        merged: dict[str, dict] = {}
        for path in args.files:
            for name, rows in json.loads(path.read_text()).items():
                into = merged.setdefault(name, {})
                for sid, row in rows.items():
                    into.setdefault(sid, {}).update(row)
        args.out.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return 0

    import logging

    from loguru import logger

    logger.remove()
    logging.disable(logging.WARNING)
    from tau2.data_model.message import AssistantMessage, ToolMessage, UserMessage
    from tau2.data_model.simulation import Results
    from tau2.registry import registry
    from tau2.scripts.evaluate_trajectories import _build_eval_env_kwargs, is_solo_mode

    out: dict[str, dict] = {}
    for path in args.files:
        try:
            results = Results.load(path)
        except Exception as exc:  # noqa: BLE001 — a file upstream cannot read is reported, not fatal
            print(f"{path.name}: upstream cannot load it ({type(exc).__name__}), skipped", file=sys.stderr)
            continue
        if not results.simulations:
            continue
        domain = results.info.environment_info.domain_name
        solo = is_solo_mode(results)
        make_env = registry.get_env_constructor(domain)
        tasks = {str(t.id): t for t in results.tasks}
        rows, start = {}, time.process_time()
        drop = _decisive(path) if args.net else None
        only = _decisive(path, kinds=None) if args.only_decisive and not args.net else None
        for sim in results.simulations:
            if only is not None and str(sim.id) not in only:
                continue
            task = tasks.get(str(sim.task_id))
            if task is None or sim.messages is None:
                continue
            kw = _build_eval_env_kwargs(domain, task) or {}
            init = task.initial_state
            data = init.initialization_data if init is not None else None
            actions = init.initialization_actions if init is not None else None
            history = list(init.message_history or []) if init is not None else []

            def hashes(env):
                return env.get_db_hash(), env.get_user_db_hash()

            state = {"initialization_data": data, "initialization_actions": actions, "message_history": history,
                     "strict": False}  # fmt: skip
            gold_actions = (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []

            db = sim.reward_info.db_check.db_reward if sim.reward_info and sim.reward_info.db_check else None
            if drop is not None:
                d = drop.get(str(sim.id))
                if d is None:
                    continue
                row = {"net_calls": sorted(d["calls"]), "net_gold": sorted(d["gold"]), "db": db}
                variants = _identical_swaps(sim.messages, d["calls"])
                if args.swaps_only and len(variants) < 2:
                    continue
                if d["calls"]:
                    full = _replay(make_env(solo_mode=solo, **kw), state, sim.messages, set())
                    row["net_calls_changed"] = all(
                        _replay(make_env(solo_mode=solo, **kw), state, sim.messages, skip) != full for skip in variants)
                    if len(variants) > 1:
                        row["net_variants"] = len(variants)
                if d["gold"]:
                    full, without = (_replay_gold(make_env(**kw), state, gold_actions, skip)
                                     for skip in (set(), set(d["gold"])))  # fmt: skip
                    row["net_gold_changed"] = full != without
                rows[sim.id] = row
                continue

            env = make_env(solo_mode=solo, **kw)
            env.set_state(initialization_data=data, initialization_actions=actions, message_history=history,
                          strict=False)  # fmt: skip
            # a call that is not replayed (a read, an unknown tool) changes nothing; the state is hashed only around
            # the replayed ones, and the hash after one is the hash before the next (hashing the airline database is
            # the costly part)
            calls, idx, now = {}, 0, hashes(env)
            for msg in sim.messages:
                if isinstance(msg, AssistantMessage | UserMessage) and msg.is_tool_call():
                    for tc in msg.tool_calls:
                        if env._has_tool(tc.name) and env._is_mutating_tool(tc.name):
                            env.get_response(tc)
                            before, now = now, hashes(env)
                            calls[idx] = now != before
                        else:
                            calls[idx] = False
                        idx += 1
                elif isinstance(msg, ToolMessage):
                    continue
            gold_env = make_env(**kw)
            gold_env.set_state(initialization_data=data, initialization_actions=actions, message_history=history,
                               strict=False)  # fmt: skip
            gold, now = {}, hashes(gold_env)
            for i, action in enumerate(gold_actions):
                try:
                    gold_env.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
                except Exception:  # noqa: BLE001 — upstream's gold replay logs and goes on
                    pass
                before, now = now, hashes(gold_env)
                gold[i] = now != before
            rows[sim.id] = {"calls": calls, "gold": gold, "db": db}
        out[path.name] = rows
        print(f"{path.name}: {len(rows)} simulations replayed, {time.process_time() - start:.1f} s CPU",
              file=sys.stderr, flush=True)  # fmt: skip
        args.out.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")  # after each file
    return 0


def _hashes(env):
    return env.get_db_hash(), env.get_user_db_hash()


def _replay(env, state, messages, skip):
    """The end state (hashes) of a trajectory's state-changing calls replayed as upstream's DB check does, without
    the calls at positions ``skip``."""
    from tau2.data_model.message import AssistantMessage, UserMessage

    env.set_state(**state)
    idx = 0
    for msg in messages:
        if isinstance(msg, AssistantMessage | UserMessage) and msg.is_tool_call():
            for tc in msg.tool_calls:
                if idx not in skip and env._has_tool(tc.name) and env._is_mutating_tool(tc.name):
                    env.get_response(tc)
                idx += 1
    return _hashes(env)


def _replay_gold(env, state, gold_actions, skip):
    """The end state of the gold actions replayed as upstream builds the gold environment, without ``skip``."""
    env.set_state(**state)
    for i, action in enumerate(gold_actions):
        if i in skip:
            continue
        try:
            env.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
        except Exception:  # noqa: BLE001 — upstream's gold replay logs and goes on
            pass
    return _hashes(env)


def _identical_swaps(messages, calls: list[int], cap: int = 64) -> list[set[int]]:
    """The sets of calls to leave out: the deviating ``calls``, and every variant with one of them exchanged for an
    identical call (same tool, same arguments) — the multiset difference does not say which copy is the extra one
    (a reboot before an APN reset and one after it: the second applies the reset)."""
    import itertools

    from tau2.data_model.message import AssistantMessage, UserMessage

    sig, idx = {}, 0
    for msg in messages:
        if isinstance(msg, AssistantMessage | UserMessage) and msg.is_tool_call():
            for tc in msg.tool_calls:
                sig[idx] = (tc.name, json.dumps(tc.arguments, sort_keys=True, default=str))
                idx += 1
    options = [[c] + [j for j, s in sig.items() if s == sig.get(c) and j != c and j not in calls] for c in calls]
    out: list[set[int]] = []
    for combo in itertools.product(*options):
        if len(set(combo)) == len(combo) and set(combo) not in out:
            out.append(set(combo))
        if len(out) >= cap:
            break
    return out or [set()]


def _decisive(path: Path, kinds: tuple[str, ...] | None = ("extra", "wrong_args", "missing")
              ) -> dict[str, dict[str, list[int]]]:  # fmt: skip
    """simulation id → the call_idx of its decisive extra / wrong_args calls and the action_idx of its decisive
    missing / wrong_args gold actions (tauk's offline attribution); ``kinds=None``: every simulation with a decisive
    deviation of any kind (its positions left empty)."""
    import warnings

    import polars as pl

    import tauk
    from tauk.scoring import deviations

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dv = deviations(tauk.load(path)).filter(pl.col("decisive"))
    out: dict[str, dict[str, list[int]]] = {}
    for r in dv.iter_rows(named=True):
        d = out.setdefault(r["simulation_id"], {"calls": [], "gold": []})
        if kinds is None:
            continue
        if r["kind"] in ("extra", "wrong_args") and r["call_idx"] is not None:
            d["calls"].append(int(r["call_idx"]))
        if r["kind"] in ("missing", "wrong_args") and r["action_idx"] is not None:
            d["gold"].append(int(r["action_idx"]))
    return out if kinds is None else {k: v for k, v in out.items() if v["calls"] or v["gold"]}


if __name__ == "__main__":
    raise SystemExit(main())
