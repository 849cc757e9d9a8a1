"""tauk.plot: the artists are what they claim, colours are stable, saved files are byte-identical."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure

import tauk
import tauk.plot as tp
from conftest import SAMPLE_DATA
from tauk.errors import TaukError
from tauk.stats import compare, compare_all, pass_hat_k, summarize

R = 199  # resamples: enough for drawing


@pytest.fixture(scope="module")
def res():
    return tauk.load(SAMPLE_DATA)


@pytest.fixture(scope="module")
def agents(res):
    return sorted(res.trials["agent"].unique().to_list())


@pytest.fixture(scope="module")
def s_agent(res):
    return summarize(res, by="agent", ci=0.95, resamples=R, pool_setups=True)


@pytest.fixture(scope="module")
def s_ad(res):
    return summarize(res, by=("agent", "domain"), ci=0.95, resamples=R)


@pytest.fixture(scope="module")
def mc(res):
    return compare_all(res, resamples=R, permutations=999, pool_setups=True)


@pytest.fixture(scope="module")
def scored(res):
    from tauk.scoring import score

    return score(res)


def _bands(ax):
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


# ---------------------------------------------------------------------------------------------- pass^k
def test_pass_k_curve_one_line_and_band_per_agent(s_agent, agents):
    fig = tp.pass_k_curve(s_agent)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert len(ax.lines) == len(agents)
    assert sorted(line.get_label() for line in ax.lines) == agents
    assert len(_bands(ax)) == len(agents)
    for line in ax.lines:  # one colour per agent, the session's
        assert line.get_color() == tp.agent_color(line.get_label())
        assert list(line.get_xdata()) == [1, 2, 3, 4]
    est = s_agent.pass_hat_k.filter(pl.col("agent") == agents[0]).sort("k")["estimate"].to_list()
    line0 = next(line for line in ax.lines if line.get_label() == agents[0])
    assert np.allclose(line0.get_ydata(), est)


def test_pass_k_curve_passk_result_and_no_interval(res, agents):
    p = pass_hat_k(res, by="agent", ci=0.95, resamples=R, pool_setups=True)
    ax = tp.pass_k_curve(p).axes[0]
    assert len(ax.lines) == len(agents) and len(_bands(ax)) == len(agents)
    plain = summarize(res, by="agent", ci=None, pool_setups=True)  # no band
    ax = tp.pass_k_curve(plain).axes[0]
    assert len(ax.lines) == len(agents) and not _bands(ax)


def test_pass_k_curve_per_run_shares_agent_colour(res):
    s = summarize(res, ci=0.95, resamples=R)  # by run_id: two runs per agent
    ax = tp.pass_k_curve(s).axes[0]
    assert len(ax.lines) == res.runs.height
    agent_of = dict(zip(res.runs["run_id"], res.runs["agent"]))
    for line in ax.lines:
        assert line.get_color() == tp.agent_color(agent_of[line.get_label()])
    assert len({(line.get_color(), line.get_linestyle()) for line in ax.lines}) == res.runs.height


def test_pass_k_curve_into_given_axes(s_agent):
    fig = Figure()
    ax = fig.add_subplot()
    assert tp.pass_k_curve(s_agent, ax=ax) is fig


def test_domain_estimates_agents_side_by_side(s_ad, agents):
    ax = tp.domain_estimates(s_ad).axes[0]
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == len(agents)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["airline", "retail"]
    # the points are the Summary's estimates
    got = sorted(float(y) for c in bars for y in c.lines[0].get_ydata())
    want = sorted(s_ad.pass_hat_k.filter(pl.col("k") == 1)["estimate"].to_list())
    assert np.allclose(got, want)


def test_domain_estimates_needs_domains(s_agent):
    with pytest.raises(TaukError, match="domain"):
        tp.domain_estimates(s_agent)


# ---------------------------------------------------------------------------------------------- forest
def test_forest_one_row_per_pair_and_significance(mc):
    ax = tp.forest(mc).axes[0]
    rows = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(rows) == mc.pairs.height
    assert len(ax.get_yticklabels()) == mc.pairs.height
    assert any(np.allclose(line.get_xdata(), 0.0) for line in ax.lines if len(line.get_xdata()) == 2)  # zero line
    for c, r in zip(rows, mc.pairs.iter_rows(named=True)):
        filled = c.lines[0].get_markerfacecolor() != "white"
        assert filled == (r["p_adjusted"] < 0.05)
        assert np.isclose(c.lines[0].get_xdata()[0], r["diff"])


def test_forest_marks_hollow_when_not_significant(res):
    mcd = compare_all(res, by="domain", resamples=R, permutations=999)
    ax = tp.forest(mcd).axes[0]
    rows = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(rows) == mcd.pairs.height == 6
    filled = [c.lines[0].get_markerfacecolor() != "white" for c in rows]
    assert filled == [p < 0.05 for p in mcd.pairs["p_adjusted"].to_list()]
    assert not all(filled)  # the sample has one non-significant pair within a domain


def test_forest_single_comparison(res):
    c = compare(res, "atlas-large", "baseline", resamples=R, permutations=999, pool_setups=True)
    ax = tp.forest(c).axes[0]
    assert len([x for x in ax.containers if isinstance(x, ErrorbarContainer)]) == 1
    with pytest.raises(TaukError):
        tp.forest(res.trials)


@pytest.mark.parametrize("test", ["score", "t", "signflip"])
def test_forest_legend_and_caption_name_the_test(res, test):
    """Unadjusted p: the legend says which test's p (it said "p ()" for the default score test)."""
    from matplotlib.text import Text

    from tauk.stats.comparisons.results import TEST_NAMES

    mc = compare_all(res, adjust="none", test=test, resamples=R, permutations=999)
    text = " ".join(t.get_text() for t in tp.forest(mc).findobj(Text))
    assert f"p ({TEST_NAMES[test]}) < 0.05" in text and "p ()" not in text
    assert f"95% {TEST_NAMES[test]} interval" in " ".join(text.split())


# ---------------------------------------------------------------------------------------------- tasks
def test_success_heatmap_shape_and_order(res, agents):
    ax = tp.success_heatmap(res.trials).axes[0]
    arr = ax.images[0].get_array()
    n_tasks = res.trials.select("domain", "task_id").unique().height
    assert arr.shape == (n_tasks, len(agents))
    means = np.asarray(arr.mean(axis=1))
    assert np.all(np.diff(means) <= 1e-12)  # easiest first
    assert [t.get_text() for t in ax.get_xticklabels()] == ["atlas-large", "atlas-small", "baseline"]


def test_success_heatmap_small_frame_with_k_and_missing_cell():
    df = pl.DataFrame(
        {
            "run_id": ["r"] * 6 + ["s"] * 2,
            "task_id": ["1", "1", "2", "2", "3", "3", "1", "1"],
            "agent": ["A"] * 6 + ["B"] * 2,
            "domain": ["d"] * 8,
            "reward": [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0],
            "termination_reason": ["user_stop"] * 8,
            "is_infra_error": [False] * 8,
            "format": ["tau2"] * 8,
            "trial": [0, 1, 0, 1, 0, 1, 0, 1],
            "num_trials": [2] * 8,
        }
    )
    ax = tp.success_heatmap(df).axes[0]
    arr = ax.images[0].get_array()
    assert arr.shape == (3, 2)
    assert arr.mask.sum() == 2  # B ran only task 1
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1", "2", "3"]  # 1: (1 + .5)/2, 2: .5, 3: 0
    ax2 = tp.success_heatmap(df, k=2).axes[0]
    assert np.isclose(ax2.images[0].get_array()[0, 0], 1.0)  # A, task 1: C(2,2)/C(2,2)


# ---------------------------------------------------------------------------------------------- failures
def test_failure_breakdown_bars_agents_by_categories(scored, agents):
    ax = tp.failure_breakdown(scored).axes[0]
    cats = scored["failure"].drop_nulls().unique().to_list()
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert len(bars) == len(cats)
    assert all(len(b.patches) == len(agents) for b in bars)
    assert len(ax.patches) == len(agents) * len(cats)
    assert set(ax.get_legend_handles_labels()[1]) == set(cats)
    # heights sum to each agent's failed trials
    tops = np.sum([[p.get_height() for p in b.patches] for b in bars], axis=0)
    want = scored.filter(pl.col("failure").is_not_null()).group_by("agent").len().sort("agent")["len"].to_list()
    assert np.allclose(tops, want)
    ax = tp.failure_breakdown(scored, normalize=True).axes[0]
    tops = np.sum([[p.get_height() for p in b.patches] for b in ax.containers], axis=0)
    assert np.allclose(tops, 1.0)


def test_failure_breakdown_needs_scored_frame(res):
    with pytest.raises(TaukError, match="tauk.score"):
        tp.failure_breakdown(res.trials)


def test_failure_order():
    got = tp.failures.failure_order(["premature:max_steps", "DB+COMMUNICATE", "COMMUNICATE", "DB", "no_reward_info"])
    assert got == ["DB", "COMMUNICATE", "DB+COMMUNICATE", "no_reward_info", "premature:max_steps"]


def test_termination_reasons(res, agents):
    ax = tp.termination_reasons(res.trials).axes[0]
    reasons = res.trials["termination_reason"].unique().to_list()
    assert len(ax.patches) == len(agents) * len(reasons)
    tops = np.sum([[p.get_height() for p in b.patches] for b in ax.containers], axis=0)
    assert np.allclose(tops, res.trials.group_by("agent").len().sort("agent")["len"].to_list())


# ---------------------------------------------------------------------------------------------- cost
def test_cost_vs_pass_has_pareto_line(s_agent, agents):
    ax = tp.cost_vs_pass(s_agent).axes[0]
    fronts = [line for line in ax.lines if line.get_label().startswith("Pareto front")]
    assert len(fronts) == 1
    pts = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(pts) == len(agents)
    # on the sample every agent is on the front (dearer agents are better)
    g = s_agent.groups.sort("avg_agent_cost")
    assert np.allclose(fronts[0].get_xdata(), g["avg_agent_cost"].to_list())


def test_cost_vs_pass_front_per_domain(s_ad):
    ax = tp.cost_vs_pass(s_ad).axes[0]
    assert sorted(line.get_label() for line in ax.lines if line.get_label().startswith("Pareto")) == [
        "Pareto front (airline)", "Pareto front (retail)"]  # fmt: skip


def test_pareto_front():
    cost = np.array([1.0, 2.0, 3.0, 1.5, np.nan, 0.5])
    val = np.array([0.5, 0.7, 0.6, 0.4, 0.9, 0.5])
    # 0.5@0.5 beats 0.5@1.0 (cheaper, equal); 0.7@2.0 beats 0.6@3.0; 1.5 beaten by 0.5; nan ignored
    assert tp.pareto_front(cost, val).tolist() == [5, 1]


# ---------------------------------------------------------------------------------------------- leaderboard
def test_leaderboard_published_beside_recomputed(s_ad):
    board = pl.DataFrame(
        {
            "model": ["M1", "M2", "M1", "M3"],
            "domain": ["airline", "airline", "retail", "telecom"],
            "pass_1": [0.9, 0.5, 0.6, 0.7],
            "modality": ["text"] * 4,
            "submission_date": ["2025-01-01"] * 4,
            "submission_id": ["m1", "m2", "m1", "m3"],
        }
    )
    fig = tp.leaderboard(board, recomputed=s_ad)
    panels = [a for a in fig.axes if a.get_title(loc="left")]
    assert [a.get_title(loc="left") for a in panels] == ["airline", "retail"]
    airline = panels[0]
    labels = [t.get_text() for t in airline.get_yticklabels()]
    assert len(airline.patches) == 2 + 3  # two published + three recomputed
    assert "M1" in labels and "atlas-large (recomputed)" in labels
    # ranked best first (top of the axes = largest y)
    ranked = [lab for _, lab in sorted(zip(airline.get_yticks(), labels), reverse=True)]
    assert ranked == ["M1", "atlas-large (recomputed)", "atlas-small (recomputed)", "M2", "baseline (recomputed)"]
    fig = tp.leaderboard(board)  # no recomputed: default domains airline, retail, telecom
    assert len([a for a in fig.axes if a.get_title(loc="left")]) == 3


# ---------------------------------------------------------------------------------------------- colours
def test_agent_color_stable_and_order_independent():
    names = ["gpt-4.1", "claude", "qwen", "atlas-large", "atlas-small", "baseline"]
    tp.reset_agent_colors()
    a = tp.register_agents(names)
    first = {n: tp.agent_color(n) for n in names}
    tp.reset_agent_colors()
    b = tp.register_agents(list(reversed(names)))
    tp.reset_agent_colors()
    c = {n: tp.agent_color(n) for n in sorted(names)}
    assert a == b == c == first
    assert len(set(a.values())) == len(names)  # distinct (collision handling)
    assert set(a.values()) <= set(tp.OKABE_ITO.values())  # Okabe–Ito first
    assert tp.agent_color("gpt-4.1") == a["gpt-4.1"]  # stable across calls
    # a newcomer does not move anyone
    tp.agent_color("newcomer")
    assert {n: tp.agent_color(n) for n in names} == a
    tp.reset_agent_colors()
    full = tp.register_agents([f"agent-{i}" for i in range(len(tp.AGENT_PALETTE))])
    assert set(full.values()) == set(tp.AGENT_PALETTE)  # every colour used before any repeats
    assert tp.agent_color("one-too-many") in tp.AGENT_PALETTE


def test_agent_color_same_in_a_fresh_process_and_headless():
    code = (
        "import sys, tauk.plot as tp; tp.register_agents(['b', 'a', 'c']); "
        "print(tp.agent_color('a'), tp.agent_color('b'), tp.agent_color('c'), 'matplotlib.pyplot' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    tp.reset_agent_colors()
    tp.register_agents(["a", "b", "c"])
    assert out[:3] == [tp.agent_color("a"), tp.agent_color("b"), tp.agent_color("c")]
    assert out[3] == "False"  # figures are made without pyplot


# ---------------------------------------------------------------------------------------------- saving
def test_save_byte_identical_pdf_png(tmp_path, s_agent, scored):
    fig = tp.pass_k_curve(s_agent)
    p1 = tp.save(fig, tmp_path / "a")
    p2 = tp.save(fig, tmp_path / "b")
    assert [p.suffix for p in p1] == [".pdf", ".png"]
    for x, y in zip(p1, p2):
        assert x.read_bytes() == y.read_bytes()
    pdf = p1[0].read_bytes()
    assert b"CreationDate" not in pdf and b"ModDate" not in pdf
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf  # TrueType (pdf.fonttype 42)
    # drawing again from the same inputs gives the same files
    for name, make in [("curve", lambda: tp.pass_k_curve(s_agent)), ("fail", lambda: tp.failure_breakdown(scored))]:
        f1 = tp.save(make(), tmp_path / f"{name}1")
        f2 = tp.save(make(), tmp_path / f"{name}2")
        for x, y in zip(f1, f2):
            assert x.read_bytes() == y.read_bytes(), x.name
    svg = tp.save(fig, tmp_path / "c.svg")
    assert svg[0].read_bytes() == tp.save(fig, tmp_path / "d.svg")[0].read_bytes()


def test_style_context_sets_truetype():
    import matplotlib as mpl

    before = mpl.rcParams["pdf.fonttype"]
    with tp.style():
        assert mpl.rcParams["pdf.fonttype"] == 42
        assert mpl.rcParams["svg.hashsalt"] == "tauk"
    assert mpl.rcParams["pdf.fonttype"] == before


def test_jupyter_display_does_not_change_saved_files(tmp_path, s_agent):
    shown = tp.pass_k_curve(s_agent)
    assert shown._repr_png_().startswith(b"\x89PNG")  # rich display without pyplot
    fresh = tp.pass_k_curve(s_agent)
    a = tp.save(shown, tmp_path / "shown")
    b = tp.save(fresh, tmp_path / "fresh")
    for x, y in zip(a, b):
        assert x.read_bytes() == y.read_bytes()


def test_long_labels_are_wrapped_never_cut_in_the_middle():
    from tauk.plot._common import escape_label, wrap_label

    name = "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm"
    s = wrap_label(name, 20)
    assert "…" not in s and s.replace("\n", "") == name and all(len(x) <= 20 for x in s.split("\n"))
    assert wrap_label("short", 30) == "short"
    for w in (8, 12, 30):  # two labels that differ only at the end stay different
        a, b = escape_label("v0.1_ft-gpt-4.1_telecom-solo-test", width=w), escape_label("v0.1_ft-gpt-4.1_telecom-test", width=w)
        assert a != b and "…" not in a + b
    assert wrap_label("x" * 1000, 30).endswith("…") and "…" not in wrap_label("x" * 1000, 30)[:-1]  # cut at the end only
