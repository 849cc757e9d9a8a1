"""Benchmark: the vectorised scoring kernel vs a plain-Python reference of the same rules, on the same frames.

    python benchmarks/bench_scoring.py [--sims 100000] [--tasks 2000] [--seed 0] [--shape stress|real|all]

Builds synthetic frames directly (numpy + Polars; the ARCHITECTURE.md column contract) in two shapes, both run by
default and each checked against the target:

* ``stress``: communicate-heavy; 12 short messages (greeting, user turns, assistant turns, tool results) and 4 tool
  calls per simulation, three tasks in four with communicate strings;
* ``real``: the shape of the shared τ²-bench logs; 37 messages and 10 tool calls per simulation, assistant text of
  ~250 characters (none on messages that carry tool calls), communicate strings on 9% of tasks, ~3.4 gold
  actions per task.

Task definitions have communicate strings (shown to the user with thousands separators, so comma stripping
matters), gold actions with compare_args null / [] / a subset; calls copy the gold (as is, with 1 -> 1.0 and keys
reordered, or with an extra argument) or call something else; a few simulations end prematurely.  Both
implementations start from the same frames; the reference converts them to Python objects (part of its cost, as
it would be for any row-at-a-time implementation) and applies docs/spec.md §2 simulation by simulation.  Prints both
times, the ratio, peak memory and checks that the results are identical.  Both sides are timed as best of several
runs, interleaved, with nothing else running; peak memory comes from a run of each before the timings, sampled
by a thread.
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
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import polars as pl

from tauk.scoring import score

TOOLS = [f"tool_{i}" for i in range(12)]
ARG_KEYS = ["user_id", "reservation_id", "amount", "cabin", "flights", "reason", "payment_id", "count"]
WORDS = ["sure", "thank", "you", "for", "waiting", "let", "me", "check", "your", "reservation", "the", "flight", "is", "on", "time", "I", "have", "updated", "your", "booking", "please", "confirm", "whether", "you", "would", "like", "to", "proceed", "your", "total", "comes", "to", "and", "the", "refund", "will", "be", "processed", "within", "business", "days", "is", "there", "anything", "else", "I", "can", "help", "you", "with", "today"]
BASES = [["DB", "COMMUNICATE"]] * 6 + [["DB"], ["ENV_ASSERTION"], ["ENV_ASSERTION", "ACTION"], ["DB", "ACTION"]]
ENDINGS = np.array(["user_stop", "agent_stop", "max_steps", "too_many_errors"])


@dataclass(frozen=True)
class Shape:
    """What one synthetic simulation and task look like."""

    roles: tuple[str, ...]  # the roles of a simulation's messages
    calls: tuple[tuple[int, str], ...]  # (message index, requestor) of each tool call
    words: dict[str, tuple[int, int]]  # words per message by role (low, high)
    infos: tuple[float, ...]  # P(a task has k communicate strings), k = 0, 1, ...
    golds: tuple[float, ...]  # P(a task has k gold actions), k = 0, 1, ...
    compare_args: tuple[float, float]  # P(null), P([]); otherwise a one-key subset
    silent_calls: bool  # an assistant message carrying tool calls has no text (as in real logs)


def _real_roles() -> tuple[tuple[str, ...], tuple[tuple[int, str], ...]]:
    roles, calls = ["assistant"], []
    for turn in range(9):
        roles.append("user")
        if turn in (2, 5):  # the user's own tool call (telecom), answered by a tool message
            calls.append((len(roles) - 1, "user"))
            roles.append("tool")
        if turn < 8:
            roles.append("assistant")
            calls.append((len(roles) - 1, "assistant"))
            roles.append("tool")
        roles.append("assistant")
    return tuple(roles), tuple(calls)


# the comm-heavy stress shape (every message short, most tasks with communicate strings): the default
STRESS = Shape(
    roles=("assistant", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant", "user",
           "assistant", "user"),  # fmt: skip
    calls=((2, "assistant"), (2, "assistant"), (6, "assistant"), (5, "user")),
    words={"assistant": (4, 14), "user": (4, 14), "tool": (4, 14)},
    infos=(0.25, 0.25, 0.25, 0.25),
    golds=(0.2, 0.2, 0.2, 0.2, 0.2),
    compare_args=(0.8, 0.05),
    silent_calls=False,
)
# the shape of the shared τ²-bench logs (../shared/data/tau2, 426 simulations): 35 messages and 11.6 tool calls
# per simulation, assistant text of ~300 characters, communicate strings on 9% of tasks, 3.6 gold actions per task
_R, _C = _real_roles()
REAL = Shape(
    roles=_R,
    calls=_C,
    words={"assistant": (20, 80), "user": (10, 40), "tool": (5, 30)},
    infos=(0.909, 0.062, 0.019, 0.010),
    golds=(0.046, 0.317, 0.113, 0.125, 0.065, 0.120, 0.072, 0.043, 0.024, 0.019, 0.034, 0.022),
    compare_args=(0.966, 0.0),
    silent_calls=True,
)
SHAPES = {"stress": STRESS, "real": REAL}


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
def _pick(rng: np.random.Generator, probs: tuple[float, ...]) -> int:
    p = np.asarray(probs, dtype=float)
    return int(rng.choice(p.size, p=p / p.sum()))


def synthesize(n_sims: int, n_tasks: int, seed: int, shape: Shape = STRESS) -> SimpleNamespace:
    rng = np.random.default_rng(seed)
    run_id = "bench"

    # task definitions (a few thousand: Python is fine here)
    trows, arows, info_rows, gold_variants = [], [], [], []
    p_null, p_empty = shape.compare_args
    for t in range(n_tasks):
        k = _pick(rng, shape.infos)
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
        n_gold = _pick(rng, shape.golds)
        trows[-1]["n_actions"] = n_gold
        for j in range(n_gold):
            keys = list(rng.choice(ARG_KEYS, size=int(rng.integers(1, 4)), replace=False))
            args = {}
            for key in keys:
                r = rng.random()
                args[key] = (int(rng.integers(0, 500)) if r < 0.4 else f"id_{int(rng.integers(0, 10**6))}"
                             if r < 0.8 else [{"n": int(rng.integers(0, 9)), "d": "2024-05-01"}])  # fmt: skip
            u = rng.random()
            ca = None if u < p_null else ([] if u < p_null + p_empty else keys[:1])
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
    m, c = len(shape.roles), len(shape.calls)
    trials = pl.DataFrame(
        {"run_id": run_id, "simulation_id": sim_ids, "task_id": [f"t{t}" for t in task_of], "trial": 0,
         "format": "tau2", "termination_reason": ends, "has_reward_info": True, "recorded_db": db,
         "recorded_env_assertion": (rng.random(n_sims) < 0.8).astype(float), "recorded_nl_assertion": 1.0,
         "reward_basis": [BASES[0]] * n_sims, "n_messages": m, "n_tool_calls": c}  # fmt: skip
    )

    # messages: random sentences; assistant turns often show one of the task's strings (with thousands
    # separators and in another case than the task writes it)
    n_msg = n_sims * m
    words = np.array(WORDS)
    role_list = list(shape.roles)
    calls_at = np.bincount([i for i, _ in shape.calls], minlength=m)
    pools = {}
    for role, (lo, hi) in shape.words.items():
        pools[role] = [" ".join(rng.choice(words, size=int(k))) for k in rng.integers(lo, hi + 1, size=2048)]
    pool = pl.Series("_text", pools["assistant"] + pools["user"] + pools["tool"])
    offset = {"assistant": 0, "user": 2048, "tool": 4096}
    msg_offset = np.array([offset[r] for r in role_list])
    msgs = pl.DataFrame(
        {"_sim": np.repeat(np.arange(n_sims), m), "message_idx": np.tile(np.arange(m), n_sims),
         "role": np.tile(np.array(role_list), n_sims),
         "_sent": np.tile(msg_offset, n_sims) + rng.integers(0, 2048, size=n_msg),
         "_k": rng.integers(0, 3, size=n_msg), "_show": rng.random(n_msg) < 0.35, "_blank": rng.random(n_msg) < 0.02,
         "n_tool_calls": np.tile(calls_at, n_sims).astype(np.int64)}  # fmt: skip
    ).with_columns(_t=pl.col("_sim").replace_strict(np.arange(n_sims), task_of, return_dtype=pl.Int64))
    silent = (pl.col("n_tool_calls") > 0) & (pl.col("role") == "assistant") if shape.silent_calls else pl.lit(False)
    msgs = (
        msgs.join(info_df, on=["_t", "_k"], how="left")
        .with_columns(_base=pl.lit(pool).gather(pl.col("_sent")))
        .with_columns(
            content=pl.when(pl.col("message_idx") == 0)
            .then(pl.lit("Hi! How can I help you today?"))
            .when(silent)
            .then(pl.lit(None, pl.String))
            .when(pl.col("_blank"))
            .then(pl.lit(" "))
            .when(pl.col("_show") & pl.col("_shown").is_not_null() & (pl.col("role") == "assistant"))
            .then(pl.concat_str([pl.col("_base"), pl.lit(" "), pl.col("_shown"), pl.lit(".")]))
            .otherwise(pl.col("_base"))
        )
    )

    # tool calls: call j copies gold j (some variant) with probability 0.75, else calls something at random
    n_call = n_sims * c
    call_msg = np.array([i for i, _ in shape.calls])
    call_role = np.array([r for _, r in shape.calls])
    calls = pl.DataFrame(
        {"_sim": np.repeat(np.arange(n_sims), c), "call_idx": np.tile(np.arange(c), n_sims),
         "message_idx": np.tile(call_msg, n_sims), "role": np.tile(call_role, n_sims),
         "_copy": rng.random(n_call) < 0.75, "_v": rng.integers(0, 3, size=n_call),
         "_rname": rng.integers(0, len(TOOLS), size=n_call), "_rargs": rng.integers(0, 20_000, size=n_call)}  # fmt: skip
    ).with_columns(
        _t=pl.col("_sim").replace_strict(np.arange(n_sims), task_of, return_dtype=pl.Int64),
        _j=pl.col("call_idx"),
    )
    rand_args = pl.Series([json.dumps({"user_id": f"id_{i}", "count": i % 7}) for i in range(20_000)])
    calls = calls.join(var_df, on=["_t", "_j", "_v"], how="left").with_columns(
        name=pl.when(pl.col("_copy") & pl.col("_name").is_not_null())
        .then(pl.col("_name"))
        .otherwise(pl.lit(pl.Series(TOOLS)).gather(pl.col("_rname"))),
        arguments=pl.when(pl.col("_copy") & pl.col("_args").is_not_null())
        .then(pl.col("_args"))
        .otherwise(pl.lit(rand_args).gather(pl.col("_rargs"))),
    )
    sid = pl.Series("simulation_id", sim_ids)
    messages = msgs.with_columns(simulation_id=pl.lit(sid).gather(pl.col("_sim")), run_id=pl.lit(run_id)).select(
        "run_id", "simulation_id", "message_idx", "role", "content", "n_tool_calls"
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
    """docs/spec.md §2, one simulation at a time, in plain Python (evaluation="all", default basis from the task)."""
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
def run_shape(name: str, args: argparse.Namespace) -> tuple[float, bool]:
    """Build one shape's data, time both implementations, print the figures; (speed-up, identical)."""
    t0 = time.perf_counter()
    data = synthesize(args.sims, args.tasks, args.seed, SHAPES[name])
    gen = time.perf_counter() - t0
    n_distinct = data.tool_calls.get_column("arguments").n_unique()
    asst = data.messages.filter(pl.col("role") == "assistant").get_column("content")
    print(f"synthetic data ({name}): {data.trials.height:,} simulations, {data.messages.height:,} messages, "
          f"{data.tool_calls.height:,} tool calls ({n_distinct:,} distinct argument texts), "
          f"{data.tasks.height:,} tasks, {data.expected_actions.height:,} gold actions  [built in {gen:.1f}s]")
    print(f"  per simulation: {data.messages.height / data.trials.height:.1f} messages, "
          f"{data.tool_calls.height / data.trials.height:.1f} tool calls, assistant text {asst.str.len_chars().mean():.0f} "
          f"characters ({asst.is_not_null().mean():.0%} with text); per task: "
          f"{data.tasks.get_column('communicate_info').list.len().fill_null(0).mean():.2f} communicate strings, "
          f"{data.expected_actions.height / data.tasks.height:.2f} gold actions")  # fmt: skip

    # peak memory first, one run of each under a sampling thread (not under tracemalloc, which would slow the
    # Python code several-fold)
    gc.collect()
    with PeakRSS() as mem_fast:
        score(data, evaluation="all")
    gc.collect()
    with PeakRSS() as mem_ref:
        reference(data)

    # then the timings, with nothing else running (the sampler would compete for the GIL and a core), the two
    # implementations interleaved so that both see the same spells of a noisy machine
    def timed(fn):
        gc.collect()
        t0 = time.perf_counter()
        out = fn(data)
        return out, time.perf_counter() - t0

    times: list[float] = []
    ref_times: list[float] = []
    for i in range(max(args.repeat, args.ref_repeat)):
        if i < args.repeat:
            fast, t = timed(lambda d: score(d, evaluation="all"))
            times.append(t)
        if i < args.ref_repeat:
            ref, t = timed(reference)
            ref_times.append(t)
    t_fast, t_ref = min(times), min(ref_times)
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
    return ratio, identical


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=100_000)
    ap.add_argument("--tasks", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shape", choices=[*sorted(SHAPES), "all"], default="all",
                    help="stress: short messages, most tasks with communicate strings; real: the shape of the shared "
                         "τ²-bench logs; all (default): both, one after the other")  # fmt: skip
    ap.add_argument("--repeat", type=int, default=5, help="vectorised runs (best time reported)")
    ap.add_argument("--ref-repeat", type=int, default=3, help="reference runs (best time reported)")
    args = ap.parse_args(argv)
    shapes = ["stress", "real"] if args.shape == "all" else [args.shape]
    results = {}
    for i, name in enumerate(shapes):
        if i:
            print()
        results[name] = run_shape(name, args)
        gc.collect()
    if len(shapes) > 1:
        print("\n" + "; ".join(f"{n}: {r:.1f}x" for n, (r, _) in results.items()) + "  (target >= 20x each)")
    if not all(ok for _, ok in results.values()):
        return 1
    return 0 if all(r >= 20 for r, _ in results.values()) else 2


if __name__ == "__main__":
    sys.exit(main())
