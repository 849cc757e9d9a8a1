"""Benchmark: the vectorised scoring kernel vs a plain-Python reference of the same rules, on the same frames.

    python benchmarks/bench_scoring.py [--sims 100000] [--tasks 2000] [--seed 0]

Builds synthetic frames directly (numpy + Polars; the ARCHITECTURE.md column contract): τ²-bench-like
simulations of ~12 messages (greeting, user turns, assistant turns, tool results) and ~4 tool calls each, task
definitions with communicate strings (shown to the user with thousands separators, so comma stripping matters),
gold actions with compare_args null / [] / a subset, calls that copy the gold (as is, with 1 -> 1.0 and keys
reordered, or with an extra argument) or call something else, a few premature endings.  Both implementations
start from the same frames; the reference converts them to Python objects (part of its cost, as it would be for
any row-at-a-time implementation) and applies SPEC §2 simulation by simulation.  Prints both times, the ratio,
peak memory and checks that the results are identical.  Both sides are timed as best of several runs with nothing
else running; peak memory comes from one further run of each, sampled by a thread.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import threading
import time
from collections import defaultdict
from types import SimpleNamespace

import numpy as np
import polars as pl

from tauk.scoring import score

TOOLS = [f"tool_{i}" for i in range(12)]
ARG_KEYS = ["user_id", "reservation_id", "amount", "cabin", "flights", "reason", "payment_id", "count"]
WORDS = ["sure", "thank", "you", "for", "waiting", "let", "me", "check", "your", "reservation", "the", "flight", "is", "on", "time", "I", "have", "updated", "your", "booking", "please", "confirm", "whether", "you", "would", "like", "to", "proceed", "your", "total", "comes", "to", "and", "the", "refund", "will", "be", "processed", "within", "business", "days", "is", "there", "anything", "else", "I", "can", "help", "you", "with", "today"]
BASES = [["DB", "COMMUNICATE"]] * 6 + [["DB"], ["ENV_ASSERTION"], ["ENV_ASSERTION", "ACTION"], ["DB", "ACTION"]]
ENDINGS = np.array(["user_stop", "agent_stop", "max_steps", "too_many_errors"])
ROLES = ["assistant", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant", "user",
         "assistant", "user"]  # fmt: skip
CALL_MSG = [2, 2, 6, 6]  # message index carrying each of the 4 calls of a simulation (0,1: assistant; 2,3: ...)


def _rss_mb() -> float:
    """Current resident set size (Linux /proc), else the peak so far."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class PeakRSS:
    """Peak resident memory while the block runs (sampled every 2 ms by a thread), in MB above the start."""

    def __enter__(self) -> PeakRSS:
        self.start = self.peak = _rss_mb()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._poll, daemon=True)
        self._t.start()
        return self

    def _poll(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, _rss_mb())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, _rss_mb())

    @property
    def delta(self) -> float:
        return self.peak - self.start


# ------------------------------------------------------------------------------------------------ synthesis
def synthesize(n_sims: int, n_tasks: int, seed: int) -> SimpleNamespace:
    rng = np.random.default_rng(seed)
    run_id = "bench"

    # task definitions (a few thousand: Python is fine here)
    trows, arows, info_rows, gold_variants = [], [], [], []
    for t in range(n_tasks):
        k = int(rng.integers(0, 4))
        amounts = rng.integers(100, 100_000, size=k)
        infos = [f"${a}" if i % 2 == 0 else f"code {a}x" for i, a in enumerate(amounts)]
        shown = [f"${a:,}" if i % 2 == 0 else f"Code {a}X" for i, a in enumerate(amounts)]
        comm: list[str] | None = infos if (k or rng.random() < 0.5) else None
        basis = BASES[int(rng.integers(0, len(BASES)))]
        trows.append(
            {"run_id": run_id, "task_id": f"t{t}", "reward_basis": basis, "reward_basis_defaulted": False,
             "has_evaluation_criteria": bool(rng.random() > 0.01), "communicate_info": comm, "nl_assertions": None,
             "n_actions": 0, "n_env_assertions": 0, "n_communicate_info": len(comm or []), "n_nl_assertions": 0,
             "description": None}  # fmt: skip
        )
        for i, s in enumerate(shown):
            info_rows.append({"_t": t, "_k": i, "_shown": s})
        n_gold = int(rng.integers(0, 5))
        trows[-1]["n_actions"] = n_gold
        for j in range(n_gold):
            keys = list(rng.choice(ARG_KEYS, size=int(rng.integers(1, 4)), replace=False))
            args = {}
            for key in keys:
                r = rng.random()
                args[key] = (int(rng.integers(0, 500)) if r < 0.4 else f"id_{int(rng.integers(0, 10**6))}"
                             if r < 0.8 else [{"n": int(rng.integers(0, 9)), "d": "2024-05-01"}])  # fmt: skip
            u = rng.random()
            ca = None if u < 0.8 else ([] if u < 0.85 else keys[:1])
            name = TOOLS[int(rng.integers(0, len(TOOLS)))]
            arows.append(
                {"run_id": run_id, "task_id": f"t{t}", "action_idx": j, "action_id": f"{t}_{j}", "name": name,
                 "arguments": json.dumps(args, sort_keys=True), "compare_args": ca, "requestor": "assistant"}  # fmt: skip
            )
            floaty = {k2: (float(v) if isinstance(v, int) else v) for k2, v in reversed(list(args.items()))}
            extra = {**args, "note": "x"}
            for variant in (args, floaty, extra):
                gold_variants.append({"_t": t, "_j": j, "_name": name, "_args": json.dumps(variant)})
    tasks = pl.DataFrame(trows, infer_schema_length=None).with_columns(
        pl.col("communicate_info").cast(pl.List(pl.String)), pl.col("nl_assertions").cast(pl.List(pl.String))
    )
    expected = pl.DataFrame(arows, schema_overrides={"compare_args": pl.List(pl.String)})
    info_df = pl.DataFrame(info_rows, schema={"_t": pl.Int64, "_k": pl.Int64, "_shown": pl.String})
    var_df = pl.DataFrame(gold_variants, schema={"_t": pl.Int64, "_j": pl.Int64, "_name": pl.String, "_args": pl.String})
    var_df = var_df.with_columns(_v=pl.int_range(pl.len()).over("_t", "_j"))

    # simulations
    task_of = rng.integers(0, n_tasks, size=n_sims)
    ends = ENDINGS[np.where(rng.random(n_sims) < 0.95, rng.integers(0, 2, n_sims), rng.integers(2, 4, n_sims))]
    sim_ids = [f"sim-{i:07d}" for i in range(n_sims)]
    db = (rng.random(n_sims) < 0.7).astype(float)
    trials = pl.DataFrame(
        {"run_id": run_id, "simulation_id": sim_ids, "task_id": [f"t{t}" for t in task_of], "trial": 0,
         "format": "tau2", "termination_reason": ends, "has_reward_info": True, "recorded_db": db,
         "recorded_env_assertion": (rng.random(n_sims) < 0.8).astype(float), "recorded_nl_assertion": 1.0,
         "reward_basis": [BASES[0]] * n_sims, "n_messages": len(ROLES), "n_tool_calls": len(CALL_MSG)}  # fmt: skip
    )

    # messages: 12 per simulation, random sentences; assistant turns often show one of the task's strings
    m = len(ROLES)
    n_msg = n_sims * m
    words = np.array(WORDS)
    lens = rng.integers(4, 14, size=n_msg)
    sentence_pool = [" ".join(rng.choice(words, size=int(k))) for k in rng.integers(4, 14, size=4096)]
    sent_idx = rng.integers(0, len(sentence_pool), size=n_msg)
    roles = np.tile(np.array(ROLES), n_sims)
    msgs = pl.DataFrame(
        {"_sim": np.repeat(np.arange(n_sims), m), "message_idx": np.tile(np.arange(m), n_sims), "role": roles,
         "_sent": sent_idx, "_k": rng.integers(0, 3, size=n_msg), "_show": rng.random(n_msg) < 0.35,
         "_blank": rng.random(n_msg) < 0.02}  # fmt: skip
    ).with_columns(_t=pl.col("_sim").replace_strict(np.arange(n_sims), task_of, return_dtype=pl.Int64))
    del lens
    pool = pl.Series("_text", sentence_pool)
    msgs = (
        msgs.join(info_df, on=["_t", "_k"], how="left")
        .with_columns(_base=pl.lit(pool).gather(pl.col("_sent")))
        .with_columns(
            content=pl.when(pl.col("_blank"))
            .then(pl.lit(" "))
            .when(pl.col("_show") & pl.col("_shown").is_not_null() & (pl.col("role") == "assistant"))
            .then(pl.concat_str([pl.col("_base"), pl.lit(" "), pl.col("_shown"), pl.lit(".")]))
            .otherwise(pl.col("_base"))
        )
    )
    # the greeting
    msgs = msgs.with_columns(
        content=pl.when(pl.col("message_idx") == 0).then(pl.lit("Hi! How can I help you today?")).otherwise("content")
    )

    # tool calls: 4 per simulation; call j copies gold j (some variant) with probability 0.75
    c = len(CALL_MSG)
    n_call = n_sims * c
    calls = pl.DataFrame(
        {"_sim": np.repeat(np.arange(n_sims), c), "call_idx": np.tile(np.arange(c), n_sims),
         "_copy": rng.random(n_call) < 0.75, "_v": rng.integers(0, 3, size=n_call),
         "_rname": rng.integers(0, len(TOOLS), size=n_call), "_rargs": rng.integers(0, 20_000, size=n_call)}  # fmt: skip
    ).with_columns(
        _t=pl.col("_sim").replace_strict(np.arange(n_sims), task_of, return_dtype=pl.Int64),
        _j=pl.col("call_idx"),
        message_idx=pl.col("call_idx").replace_strict(list(range(c)), CALL_MSG, return_dtype=pl.Int64),
    )
    rand_args = pl.Series([json.dumps({"user_id": f"id_{i}", "count": i % 7}) for i in range(20_000)])
    calls = (
        calls.join(var_df, on=["_t", "_j", "_v"], how="left")
        .with_columns(
            name=pl.when(pl.col("_copy") & pl.col("_name").is_not_null())
            .then(pl.col("_name"))
            .otherwise(pl.lit(pl.Series(TOOLS)).gather(pl.col("_rname"))),
            arguments=pl.when(pl.col("_copy") & pl.col("_args").is_not_null())
            .then(pl.col("_args"))
            .otherwise(pl.lit(rand_args).gather(pl.col("_rargs"))),
        )
        .with_columns(role=pl.when(pl.col("call_idx") < 3).then(pl.lit("assistant")).otherwise(pl.lit("user")))
    )
    sid = pl.Series("simulation_id", sim_ids)
    messages = (
        msgs.with_columns(simulation_id=pl.lit(sid).gather(pl.col("_sim")), run_id=pl.lit(run_id))
        .with_columns(n_tool_calls=pl.when(pl.col("message_idx") == 2).then(3).when(pl.col("message_idx") == 6).then(1)
                      .otherwise(0).cast(pl.Int64))  # fmt: skip
        .select("run_id", "simulation_id", "message_idx", "role", "content", "n_tool_calls")
    )
    # the user's call sits on a user turn
    calls = calls.with_columns(message_idx=pl.when(pl.col("call_idx") == 3).then(5).otherwise(pl.col("message_idx")))
    messages = messages.with_columns(
        n_tool_calls=pl.when(pl.col("message_idx") == 2).then(3).when(pl.col("message_idx") == 5).then(1).otherwise(0)
    )
    tool_calls = calls.with_columns(
        simulation_id=pl.lit(sid).gather(pl.col("_sim")), run_id=pl.lit(run_id), requestor=pl.col("role"),
        tool_call_id=pl.format("c{}", pl.col("call_idx")),
    ).select("run_id", "simulation_id", "message_idx", "call_idx", "tool_call_id", "name", "arguments", "requestor",
             "role")  # fmt: skip
    return SimpleNamespace(trials=trials, messages=messages, tool_calls=tool_calls, tasks=tasks,
                           expected_actions=expected)  # fmt: skip


# ------------------------------------------------------------------------------------------------ reference
COMPONENTS = ["DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"]


def _call_matches(gold: dict, call: dict) -> bool:
    if gold["name"] != call["name"]:
        return False
    keys = call["arguments"].keys() if gold["compare_args"] is None else gold["compare_args"]
    if len(keys) == 0:
        return True
    return {k: v for k, v in call["arguments"].items() if k in keys} == {
        k: v for k, v in gold["arguments"].items() if k in keys
    }


def reference(r: SimpleNamespace) -> pl.DataFrame:
    """SPEC §2, one simulation at a time, in plain Python (evaluation="all", default basis from the task)."""
    tasks = {(row["run_id"], row["task_id"]): row for row in r.tasks.iter_rows(named=True)}
    golds: dict = defaultdict(list)
    for row in r.expected_actions.iter_rows(named=True):
        golds[(row["run_id"], row["task_id"])].append(
            {"name": row["name"], "arguments": json.loads(row["arguments"]), "compare_args": row["compare_args"]}
        )
    texts: dict = defaultdict(list)
    for run_id, sim_id, role, content in r.messages.select("run_id", "simulation_id", "role", "content").iter_rows():
        if role == "assistant" and content is not None and content.strip() != "":
            texts[(run_id, sim_id)].append(content)
    calls: dict = defaultdict(list)
    for run_id, sim_id, name, args in r.tool_calls.select("run_id", "simulation_id", "name", "arguments").iter_rows():
        calls[(run_id, sim_id)].append({"name": name, "arguments": json.loads(args)})
    out_comm, out_act, out_reward, out_fail = [], [], [], []
    for row in r.trials.iter_rows(named=True):
        key = (row["run_id"], row["simulation_id"])
        task = tasks[(row["run_id"], row["task_id"])]
        msgs = texts.get(key, [])
        comm = 1.0
        for s in task["communicate_info"] or []:
            if not any(s.lower() in m.lower().replace(",", "") for m in msgs):
                comm = 0.0
                break
        cs = calls.get(key, [])
        act = 1.0 if all(any(_call_matches(g, c) for c in cs) for g in golds.get((row["run_id"], row["task_id"]), [])) else 0.0
        vals = {"DB": 1.0 if row["recorded_db"] is None else row["recorded_db"],
                "ENV_ASSERTION": 1.0 if row["recorded_env_assertion"] is None else row["recorded_env_assertion"],
                "NL_ASSERTION": 1.0 if row["recorded_nl_assertion"] is None else row["recorded_nl_assertion"],
                "ACTION": act, "COMMUNICATE": comm}  # fmt: skip
        out_comm.append(comm)
        out_act.append(act)
        if row["termination_reason"] not in ("user_stop", "agent_stop"):
            out_reward.append(0.0)
            out_fail.append("premature:" + row["termination_reason"])
            continue
        if not task["has_evaluation_criteria"]:
            out_reward.append(1.0)
            out_fail.append(None)
            continue
        basis = task["reward_basis"]
        reward = 1.0
        zero = []
        for c in COMPONENTS:
            if c in basis:
                reward *= vals[c]
                if vals[c] == 0.0:
                    zero.append(c)
        out_reward.append(reward)
        out_fail.append("+".join(zero) or None)
    return r.trials.select("simulation_id").with_columns(
        communicate=pl.Series(out_comm), action=pl.Series(out_act), score_reward=pl.Series(out_reward),
        failure=pl.Series(out_fail, dtype=pl.String),
    )  # fmt: skip


# --------------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=100_000)
    ap.add_argument("--tasks", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5, help="vectorised runs (best time reported)")
    ap.add_argument("--ref-repeat", type=int, default=3, help="reference runs (best time reported)")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    data = synthesize(args.sims, args.tasks, args.seed)
    gen = time.perf_counter() - t0
    n_distinct = data.tool_calls.get_column("arguments").n_unique()
    print(f"synthetic data: {data.trials.height:,} simulations, {data.messages.height:,} messages, "
          f"{data.tool_calls.height:,} tool calls ({n_distinct:,} distinct argument texts), "
          f"{data.tasks.height:,} tasks, {data.expected_actions.height:,} gold actions  [built in {gen:.1f}s]")  # fmt: skip

    # timings first, with nothing else running (a memory-sampling thread would compete for the GIL and a
    # core); then one more run of each under the sampler for peak memory
    def best_of(fn, n):
        out, times = None, []
        for _ in range(n):
            gc.collect()
            t0 = time.perf_counter()
            out = fn(data)
            times.append(time.perf_counter() - t0)
        return out, times

    fast, times = best_of(lambda d: score(d, evaluation="all"), args.repeat)
    ref, ref_times = best_of(reference, args.ref_repeat)
    t_fast, t_ref = min(times), min(ref_times)
    gc.collect()
    with PeakRSS() as mem_fast:
        score(data, evaluation="all")
    gc.collect()
    with PeakRSS() as mem_ref:
        reference(data)  # not under tracemalloc, which would slow the Python code several-fold

    cols = ["simulation_id", "communicate", "action", "score_reward", "failure"]
    identical = fast.select(cols).equals(ref.select(cols))
    ratio = t_ref / t_fast
    print(f"vectorised tauk.score : {t_fast:8.3f} s  (best of {args.repeat}: {', '.join(f'{t:.3f}' for t in times)})")
    print(f"plain-Python reference: {t_ref:8.3f} s  (best of {args.ref_repeat}: {', '.join(f'{t:.3f}' for t in ref_times)})")
    print(f"speed-up              : {ratio:8.1f}x  (target >= 20x)")
    print(f"peak memory           : vectorised +{mem_fast.delta:.0f} MB, reference +{mem_ref.delta:.0f} MB above the "
          f"{mem_fast.start:.0f} MB resident with the data built (RSS sampled every 2 ms)")  # fmt: skip
    print(f"identical results     : {identical}")
    succ = fast.get_column("score_reward").eq(1.0).mean()
    print(f"(success rate {succ:.3f}; failures: "
          f"{dict(fast.get_column('failure').value_counts().sort('count', descending=True).head(5).rows())})")  # fmt: skip
    if not identical:
        diff = fast.select(cols).join(ref.select(cols), on="simulation_id", suffix="_ref").filter(
            pl.any_horizontal([~pl.col(c).eq_missing(pl.col(f"{c}_ref")) for c in cols[1:]])
        )
        print(diff.head(10))
        return 1
    return 0 if ratio >= 20 else 2


if __name__ == "__main__":
    sys.exit(main())
