"""tauk.stats.overall: small setups (under MIN_SIMULATIONS / MIN_TASKS) are flagged and left out of the means and
the ranking unless asked; every row has n and an interval; the notes name the setups averaged."""

from __future__ import annotations

import polars as pl

import tauk
from tauk.conventions import MIN_SIMULATIONS, MIN_TASKS
from tauk.table import Interval


def _trials(spec: list[tuple[str, str, int, int, float]]) -> pl.DataFrame:
    """(agent, setup, n_tasks, trials per task, success rate) → a trials frame."""
    rows = []
    for agent, setup, n, t, p in spec:
        for i in range(n):
            for j in range(t):
                rows.append({"run_id": f"{agent}-{setup}", "simulation_id": f"{agent}-{setup}-{i}-{j}",
                             "task_id": f"t{i}", "trial": j, "agent": agent, "domain": setup, "setup": setup,
                             "reward": 1.0 if (i * t + j) % 10 < p * 10 else 0.0})  # fmt: skip
    return pl.DataFrame(rows)


def test_small_setups_are_left_out_and_flagged():
    df = _trials([("big", "airline", 30, 1, 0.5), ("big", "retail", 30, 1, 0.5), ("big", "mock", 1, 1, 1.0),
                  ("tiny", "airline", 2, 1, 1.0)])  # fmt: skip
    s = tauk.stats.summarize(df, by="agent", ci=0.95, method="t")
    o = tauk.stats.overall(s)
    big = o.to_frame().filter(agent="big", k=1).row(0, named=True)
    assert big["setups"] == ["airline", "retail"] and big["left_out"] == ["mock"] and not big["flagged"]
    want = s.long().filter(pl.col("agent") == "big", pl.col("setup") != "mock", pl.col("k") == 1)["estimate"].mean()
    assert big["estimate"] == want  # the mock setup's 1.0 does not lift the mean
    assert big["ci_low"] < big["estimate"] < big["ci_high"] and big["n_simulations"] == 60
    tiny = o.to_frame().filter(agent="tiny", k=1).row(0, named=True)
    assert tiny["flagged"] and tiny["estimate"] == 1.0
    assert o.ranking()["agent"].to_list() == ["big"]  # flagged groups are not ranked
    table = o.summary()
    assert [r[0] for r in table.rows] == ["big", "tiny"] and table.columns[-1] == "flag"
    assert all(isinstance(r[table.columns.index("pass^1")], Interval) for r in table.rows)
    assert any("big: averaged 2 setup(s): airline; retail — left out: mock (1 sim < 20)" in n for n in table.notes)
    # asked: everything enters
    keep = tauk.stats.overall(s, include_small=True).to_frame().filter(agent="big", k=1).row(0, named=True)
    assert keep["n_setups"] == 3 and keep["left_out"] == []


def test_summary_flags_small_rows_only():
    df = _trials([("a", "airline", MIN_TASKS, 2, 0.5), ("b", "airline", MIN_TASKS - 1, 3, 0.5),
                  ("c", "airline", 25, 1, 0.5)])  # fmt: skip
    table = tauk.stats.summarize(df, by="agent", ci=None).summary()
    flags = dict(zip([r[0] for r in table.rows], [r[-1] for r in table.rows]))
    assert table.columns[-1] == "flag"
    assert flags == {"a": f"{2 * MIN_TASKS} sims < {MIN_SIMULATIONS}" if 2 * MIN_TASKS < MIN_SIMULATIONS else "",
                     "b": f"{MIN_TASKS - 1} tasks < {MIN_TASKS}", "c": ""}  # fmt: skip
    assert any("too few to rank" in n for n in table.notes)
    ok = tauk.stats.summarize(_trials([("c", "airline", 25, 1, 0.5)]), by="agent", ci=None).summary()
    assert "flag" not in ok.columns


def test_a_k_that_averages_fewer_setups_says_which(shared_data):
    """gpt-4o on τ-bench airline (4 trials a task) and on τ²-bench telecom (1 trial): pass^1 averages both setups,
    pass^2 … 4 only the airline one. The table's row (setups, tasks, sims) describes pass^1; a column averaging
    other setups must say so, not pass as the mean over the row's setups."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        res = tauk.load([shared_data / "taubench/gpt-4o_airline_4trials.json",
                         shared_data / "tau2/v0.1.2_gpt-4o_telecom-small_1trial.json"])  # fmt: skip
    s = tauk.stats.summarize(res, by="agent", ci=None)
    o = tauk.stats.overall(s)
    f = o.to_frame().filter(agent="gpt-4o").sort("k")
    per_k = dict(zip(f["k"].to_list(), f["setups"].to_list()))
    assert len(per_k[1]) == 2 and max(per_k) > 1  # the premise, from the files
    fewer = {k: v for k, v in per_k.items() if set(v) != set(per_k[1])}
    assert fewer
    notes = "\n".join(o.summary().notes)
    for k, setups in fewer.items():
        assert f"pass^{k}" in notes and all(x in notes for x in setups)
    assert f"averaged {len(per_k[1])} setup(s)" in notes  # the row's own setups, as before


def test_rows_averaging_different_setups_say_their_order_mixes_them():
    """An agent that ran only the easy setup ranks above one that ran both; the table says the rows average
    different sets of setups (the real-data audit: claude-opus-4-6, airline only, above gpt-4.1's four setups)."""
    df = _trials([("easy-only", "airline", 30, 1, 0.8), ("both", "airline", 30, 1, 0.7),
                  ("both", "retail", 30, 1, 0.3)])  # fmt: skip
    o = tauk.stats.overall(tauk.stats.summarize(df, by="agent", ci=None))
    assert o.ranking()["agent"].to_list() == ["easy-only", "both"]
    said = [n for n in o.summary().notes if "different sets of setups" in n]
    assert len(said) == 1 and "easy-only 1" in said[0] and "both 2" in said[0]
    both = [(a, s, 30, 1, 0.5) for a in ("a", "b") for s in ("airline", "retail")]
    same = tauk.stats.overall(tauk.stats.summarize(_trials(both), by="agent", ci=None))
    assert not any("different sets" in n for n in same.summary().notes)


def test_a_k_whose_figure_comes_from_a_left_out_setup_says_so():
    """X: airline (30 tasks, 1 trial) kept, retail (4 tasks × 4 trials, 16 sims) left out as small. pass^2 exists
    only in retail, so the pass^2 column shows the small setup's figure (its frame row flagged); the note said
    'pass^2 averaged only 1 of these setup(s): retail' — retail is not one of the row's setups, it is the one the
    row says it left out."""
    df = _trials([("X", "airline", 30, 1, 0.6), ("X", "retail", 4, 4, 0.5), ("Y", "airline", 30, 1, 0.4)])
    o = tauk.stats.overall(tauk.stats.summarize(df, by="agent", k=[1, 2], ci=None))
    x2 = o.to_frame().filter(agent="X", k=2).row(0, named=True)
    assert x2["setups"] == ["retail"] and x2["flagged"]  # the premise
    notes = [n for n in o.summary().notes if n.startswith("X: pass^2")]
    assert len(notes) == 1 and "of these" not in notes[0] and "left out" in notes[0] and "retail" in notes[0], notes
