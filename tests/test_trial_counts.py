"""Per-task counts from one rule: a τ-bench task's successes are counted over the records its N counts, so
C(c, k) / C(n, k) never passes 1 — whatever records are deleted, duplicated, renumbered or stripped of their trial
number. Checked against an independent count (plain Python over the JSON) and against the per-task counts path."""

from __future__ import annotations

import json
import random
import warnings
from math import comb
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.errors import LoadError, TaukError


def _records(rng: random.Random, tasks: int, trials: int) -> list[dict]:
    p = [rng.random() for _ in range(tasks)]
    return [{"task_id": t, "trial": i, "reward": float(rng.random() < p[t]), "info": {}, "traj": []}
            for i in range(trials) for t in range(tasks)]  # fmt: skip


def _mutate(rng: random.Random, recs: list[dict]) -> list[dict]:
    """Random deletions, duplications (exact, renumbered, without a number), renumberings and stripped numbers;
    every task keeps at least one record."""
    out = [dict(r) for r in recs]
    for _ in range(rng.randint(1, 6)):
        kind = rng.choice(("delete", "duplicate", "renumber", "strip", "null"))
        i = rng.randrange(len(out))
        if kind == "delete":
            if sum(r["task_id"] == out[i]["task_id"] for r in out) > 1:
                del out[i]
        elif kind == "duplicate":
            copy = dict(out[i])
            how = rng.choice(("same", "fresh", "strip"))
            if how == "fresh":
                copy["trial"] = rng.randint(0, 9)
            elif how == "strip":
                copy.pop("trial", None)
            out.insert(rng.randrange(len(out) + 1), copy)
        elif kind == "renumber":
            out[i]["trial"] = rng.randint(0, 9)
        elif kind == "strip":
            out[i].pop("trial", None)
        else:
            out[i]["trial"] = None
    return out


def independent(recs: list[dict], ks: list[int]) -> dict[int, float]:
    """pass^k by the documented rule, in plain Python: a repeated (task, trial) counts once (the first), a record
    without a number takes the smallest index its task's numbered records leave free (in file order), N is the
    number of distinct indices, and each task's successes among its records are c."""
    seen, kept = set(), []
    for r in recs:
        t = r.get("trial")
        if t is not None:
            if (r["task_id"], t) in seen:
                continue
            seen.add((r["task_id"], t))
        kept.append(dict(r))
    used: dict = {}
    for r in kept:
        if r.get("trial") is not None:
            used.setdefault(r["task_id"], set()).add(r["trial"])
    for r in kept:
        if r.get("trial") is None:
            taken = used.setdefault(r["task_id"], set())
            r["trial"] = min(set(range(len(taken) + 1)) - taken)
            taken.add(r["trial"])
    n = len({r["trial"] for r in kept})
    c: dict = {}
    for r in kept:
        c[r["task_id"]] = c.get(r["task_id"], 0) + (r["reward"] == 1.0)
    return {k: sum(comb(x, k) / comb(n, k) for x in c.values()) / len(c) if k <= n else None for k in ks}


def _pass(res_or_counts, ks):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = tauk.stats.pass_hat_k(res_or_counts, k=ks, ci=None).to_frame()
    return dict(zip(f["k"].to_list(), f["estimate"].to_list()))


@pytest.mark.parametrize("seed", range(40))
def test_pass_hat_k_under_deletions_duplications_renumberings(tmp_path, seed):
    rng = random.Random(seed)
    clean = _records(rng, tasks=rng.randint(3, 8), trials=rng.randint(2, 5))
    ks = [1, 2, 3]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(clean))
    truth = _pass(tauk.load(path), ks)
    mutated = _mutate(rng, clean)
    path.write_text(json.dumps(mutated))
    stripped = any(r.get("trial") is None for r in mutated)
    if stripped:  # strict loading refuses a record without a trial number, by name
        with pytest.raises(LoadError, match=r"no trial number|duplicate \(task_id, trial\)"):
            tauk.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tauk.load(path, strict=False)
    got = _pass(res, ks)
    want = independent(mutated, ks)
    for k in ks:
        assert (got[k] is None) == (want[k] is None), (seed, k)
        if got[k] is None:
            continue
        assert got[k] == pytest.approx(want[k], abs=1e-12), (seed, k)
        assert 0.0 <= got[k] <= 1.0
    values = [got[k] for k in ks if got[k] is not None]
    assert values == sorted(values, reverse=True)  # pass^k never grows with k
    # the counts path gives the same figures
    assert _pass(tauk.stats.task_counts(res), ks) == pytest.approx(got)
    # not silent: a figure that differs from the clean file's comes with a load-report line
    if any(got[k] != pytest.approx(truth[k]) for k in ks if got[k] is not None):
        assert not res.report.ok, (seed, res.report)
    # the messages frame keys its rows by the same simulation ids as the trials frame
    assert set(res.messages["simulation_id"]) <= set(res.trials["simulation_id"])


def test_the_issue_case_on_the_real_file(tmp_path, shared_data, expected):
    """One record per task of the τ-bench gpt-4o airline file without its trial number: strict refuses it by name,
    lenient numbers it and gives the file's published figures (it printed 0.56 / 0.5467 / 0.88 before)."""
    name = "taubench/gpt-4o_airline_4trials.json"
    recs = json.loads((shared_data / name).read_text())
    first: set = set()
    for r in recs:
        if r["task_id"] not in first:
            first.add(r["task_id"])
            del r["trial"]
    path = tmp_path / "x.json"
    path.write_text(json.dumps(recs))
    with pytest.raises(LoadError, match="no trial number"):
        tauk.load(path)
    with pytest.warns(tauk.LoadWarning, match="50 record.s. without a trial number"):
        res = tauk.load(path, strict=False)
    assert res.report.counts() == {"trial_numbered": 1}
    got = _pass(res, [1, 2, 3, 4])
    for k, v in expected[name]["pass_hat_k"].items():
        assert got[int(k)] == pytest.approx(v, abs=1e-12)
    # with every number removed the same figures again (the file is written trial by trial)
    for r in recs:
        r.pop("trial", None)
    path.write_text(json.dumps(recs))
    with pytest.warns(tauk.LoadWarning):
        got = _pass(tauk.load(path, strict=False), [1, 2, 3, 4])
    for k, v in expected[name]["pass_hat_k"].items():
        assert got[int(k)] == pytest.approx(v, abs=1e-12)


def test_counts_with_more_successes_than_trials_are_refused():
    """The guard behind "impossible by construction": counts that would give C(c,k)/C(n,k) > 1 (only a counts
    frame made by hand can) are refused by name, never turned into a figure."""
    trials = pl.DataFrame({"run_id": ["r"] * 4, "format": ["taubench"] * 4, "agent": ["a"] * 4,
                           "domain": ["d"] * 4, "task_id": ["1", "1", "2", "2"], "trial": [0, 1, 0, 1],
                           "reward": [1.0, 1.0, 0.0, 1.0], "num_trials": [2] * 4})  # fmt: skip
    counts = tauk.stats.task_counts(trials)
    assert _pass(counts, [1, 2]) == pytest.approx({1: 0.75, 2: 0.5})
    doctored = counts.with_columns(successes=pl.when(pl.col("task_id") == "2").then(5).otherwise(pl.col("successes")))
    with pytest.raises(TaukError, match="task '2' has 5 successes in 2 trials"):
        tauk.stats.pass_hat_k(doctored, k=1, ci=None)


def test_a_hand_made_frame_with_unnumbered_records_stays_within_one():
    """A trials frame built by hand whose τ-bench records lack numbers: each task's n is at least its own records,
    so pass^k stays a probability (the loader never produces such a frame)."""
    trials = pl.DataFrame({"run_id": ["r"] * 5, "format": ["taubench"] * 5, "agent": ["a"] * 5,
                           "domain": ["d"] * 5, "task_id": ["1", "1", "1", "2", "2"], "trial": [None, 1, 2, 1, 2],
                           "reward": [1.0, 1.0, 1.0, 0.0, 1.0]})  # fmt: skip
    got = _pass(trials, [1, 2, 3])
    assert got[1] == pytest.approx((3 / 3 + 1 / 2) / 2)
    assert all(0 <= v <= 1 for v in got.values() if v is not None)


SAMPLE = Path(__file__).resolve().parents[1] / "data"
