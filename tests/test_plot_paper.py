"""Every number says what it is (figures): paper sizes with text ≥ 7 pt, untrusted labels escaped, no rows for
empty pairs, n and intervals on recomputed entries, under-sampled runs not ranked, cost 0.0 read as unknown,
captions naming the interval, and an Examples section on every public function of tauk.plot."""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.text import Text
from PIL import Image

import tauk
import tauk.plot as tp
from conftest import ROOT, SAMPLE_DATA
from tauk.errors import TaukError
from tauk.stats import compare_all, summarize

R = 199

pytestmark = pytest.mark.filterwarnings("ignore::tauk.LoadWarning")

UNTRUSTED = ["$\\x$", "a$b", "<img src=x onerror=alert(1)>", "p|q", "line\nbreak"]


@pytest.fixture(scope="module")
def res():
    return tauk.load(SAMPLE_DATA)


@pytest.fixture(scope="module")
def s_agent(res):
    return summarize(res, by="agent", resamples=R, pool_setups=True)


@pytest.fixture(scope="module")
def s_ad(res):
    return summarize(res, by=("agent", "domain"), resamples=R)


@pytest.fixture(scope="module")
def mc(res):
    return compare_all(res, by="domain", resamples=R, permutations=199)


@pytest.fixture(scope="module")
def scored(res):
    return tauk.score(res)


@pytest.fixture(scope="module")
def small_board():
    return pl.DataFrame(
        {
            "model": ["Model One", "Model Two", "Model One", "Model Three"],
            "domain": ["airline", "airline", "retail", "retail"],
            "pass_1": [0.9, 0.5, 0.6, 0.7],
            "cost": [0.2, 0.0, 0.3, None],
            "modality": ["text"] * 4,
            "submission_date": ["2025-01-01"] * 4,
            "submission_id": ["m1", "m2", "m1", "m3"],
        }
    )


def _figures(res, s_agent, s_ad, mc, scored, board):
    """Every figure function of tauk.plot, as name -> f(figsize)."""
    return {
        "pass_k_curve": lambda f: tp.pass_k_curve(s_agent, figsize=f),
        "domain_estimates": lambda f: tp.domain_estimates(s_ad, figsize=f),
        "forest": lambda f: tp.forest(mc, figsize=f),
        "success_heatmap": lambda f: tp.success_heatmap(res, figsize=f),
        "failure_breakdown": lambda f: tp.failure_breakdown(scored, figsize=f),
        "termination_reasons": lambda f: tp.termination_reasons(res, figsize=f),
        "cost_vs_pass": lambda f: tp.cost_vs_pass(s_ad, figsize=f),
        "leaderboard": lambda f: tp.leaderboard(board, recomputed=s_ad, figsize=f),
    }


def _drawn_texts(fig: Figure) -> list[Text]:
    """The text artists a render of ``fig`` shows (tick labels outside the view limits are not drawn)."""
    FigureCanvasAgg(fig).draw()
    hidden = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            drawn = {id(x) for tick in axis._update_ticks() for x in (tick.label1, tick.label2)}
            hidden |= {id(x) for tick in axis.get_major_ticks() + axis.get_minor_ticks()
                       for x in (tick.label1, tick.label2) if id(x) not in drawn}  # fmt: skip
    return [t for t in fig.findobj(Text) if id(t) not in hidden and t.get_visible() and t.get_text().strip()]


def _all_text(fig: Figure) -> str:
    """Every drawn text of the figure on one line (captions are wrapped to the figure's width)."""
    return " ".join(t.get_text().replace("\n", " ") for t in _drawn_texts(fig))


def _shown(t: Text) -> tuple[str, bool]:
    """What matplotlib will display for a text artist, and whether it would parse it as mathtext."""
    return t._preprocess_math(t.get_text())


# ---------------------------------------------------------------------------------------------- 3: paper sizes
@pytest.mark.parametrize("size", ["single", "double"])
def test_every_figure_at_paper_size_has_the_width_and_no_text_under_7pt(tmp_path, res, s_agent, s_ad, mc, scored,
                                                                        small_board, size):  # fmt: skip
    width = tp.FIGSIZES[size]
    assert width == {"single": 3.3, "double": 7.0}[size]
    for name, make in _figures(res, s_agent, s_ad, mc, scored, small_board).items():
        fig = make(size)
        assert fig.get_size_inches()[0] == pytest.approx(width), name
        png = tp.save(fig, tmp_path / f"{name}_{size}.png")[0]
        assert Image.open(png).size[0] == round(width * 150), name  # save never crops (no bbox_inches="tight")
        assert fig.get_size_inches()[0] == pytest.approx(width), name
        texts = _drawn_texts(fig)
        assert texts, name
        small = [(t.get_text()[:30], t.get_fontsize()) for t in texts if t.get_fontsize() < tp.MIN_FONT_SIZE]
        assert not small, (name, small)
        # and nothing is cut off at the edges of the figure
        r = fig.canvas.get_renderer()
        W, H = fig.bbox.width, fig.bbox.height
        for t in texts:
            bb = t.get_window_extent(r)
            assert bb.x0 >= -1 and bb.y0 >= -1 and bb.x1 <= W + 1 and bb.y1 <= H + 1, (name, t.get_text()[:40])


def test_screen_default_has_no_text_under_7pt_either(res, s_agent, s_ad, mc, scored, small_board):
    for name, make in _figures(res, s_agent, s_ad, mc, scored, small_board).items():
        fig = make(None)
        small = [(t.get_text()[:30], t.get_fontsize()) for t in _drawn_texts(fig) if t.get_fontsize() < 7.0]
        assert not small, (name, small)


def test_explicit_size_presets_and_errors(res, s_agent):
    fig = tp.pass_k_curve(s_agent, figsize=(5.0, 2.5))
    assert fig.get_size_inches().tolist() == [5.0, 2.5]
    assert tp.preset((5, 2.5)).rc["xtick.labelsize"] >= tp.MIN_FONT_SIZE
    fonts = {k: v for k, v in tp.PAPER_RC.items() if k == "font.size" or k.endswith(("labelsize", "titlesize", "fontsize"))}
    assert len(fonts) >= 8 and min(fonts.values()) >= tp.MIN_FONT_SIZE
    with pytest.raises(TaukError, match="single"):
        tp.pass_k_curve(s_agent, figsize="column")
    with pytest.raises(TaukError, match="inches"):
        tp.pass_k_curve(s_agent, figsize=(0, 3))
    fig2 = Figure()
    with pytest.raises(TaukError, match="not both"):
        tp.pass_k_curve(s_agent, ax=fig2.add_subplot(), figsize="single")


def test_paper_preset_travels_with_the_figure(tmp_path, s_agent):
    fig = tp.pass_k_curve(s_agent, figsize="single")
    assert fig.tauk_preset.name == "single"
    a = tp.save(fig, tmp_path / "a.png")[0].read_bytes()
    b = tp.save(tp.pass_k_curve(s_agent, figsize="single"), tmp_path / "b.png")[0].read_bytes()
    assert a == b  # byte-identical at the paper size too
    assert fig._repr_png_().startswith(b"\x89PNG")


def test_old_positional_calls_warn_and_work(s_ad, mc):
    with pytest.warns(DeprecationWarning, match="k="):
        fig = tp.domain_estimates(s_ad, 1)
    assert isinstance(fig, Figure)
    with pytest.warns(DeprecationWarning):
        tp.forest(mc, None, 0.05)


# ---------------------------------------------------------------------------------------------- 4: untrusted labels
@pytest.fixture(scope="module")
def evil():
    files = ["baseline_airline.json", "atlas-small_airline.json", "atlas-large_airline.json", "baseline_retail.json",
             "atlas-small_retail.json"]  # fmt: skip
    return tauk.load({name: SAMPLE_DATA / f for name, f in zip(UNTRUSTED, files)})


def test_escape_label():
    assert tp.escape_label("$\\x$") == "\\$\\x\\$"
    assert tp.escape_label("a\nb\r\nc\td") == "a b c d"
    assert tp.escape_label("\x00bell\x07") == "\ufffdbell\ufffd"
    assert tp.escape_label("_hidden") == " _hidden"
    assert tp.escape_label(None) == "—"
    for s in UNTRUSTED + ["\\$", "$$", "50% of $5"]:
        shown, math = Text(text=tp.escape_label(s))._preprocess_math(tp.escape_label(s))
        assert math is False
        assert shown == s.replace("\n", " ")



def test_a_bidi_override_in_a_label_cannot_reverse_the_numbers_after_it():
    """matplotlib (with libraqm) applies the bidi algorithm: a task id holding U+202E drew the rest of its tick label
    reversed: "t<U+202E>7  2/4" as "t4/2  7". Such characters (embeddings, overrides, isolates) are shown as U+FFFD like
    the other control characters."""
    for ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069":
        assert tp.escape_label(f"t{ch}7  2/4") == "t\ufffd7  2/4"


def test_untrusted_names_render_in_every_figure(evil):
    s_ad = summarize(evil, by=("agent", "domain"), resamples=99)
    s_ag = summarize(evil, by="agent", resamples=99, pool_setups=True)
    mc = compare_all(evil, resamples=99, permutations=99, pool_setups=True)
    board = pl.DataFrame({"model": ["$\\alpha$ model", "M|2\nx"], "domain": ["airline", "airline"], "pass_1": [0.5, 0.4],
                          "submission_date": ["2025-01-01"] * 2, "submission_id": ["a", "b"]})  # fmt: skip
    figs = {
        "curve": tp.pass_k_curve(s_ag),
        "runs": tp.pass_k_curve(summarize(evil, ci=None), figsize="single"),
        "domain": tp.domain_estimates(s_ad, figsize="double"),
        "forest": tp.forest(mc),
        "heatmap": tp.success_heatmap(evil),
        "failures": tp.failure_breakdown(tauk.score(evil), figsize="single"),
        "ends": tp.termination_reasons(evil),
        "cost": tp.cost_vs_pass(s_ag),
        "leaderboard": tp.leaderboard(board, recomputed=s_ad, min_simulations=0),
    }
    for name, fig in figs.items():
        shown = []
        for t in _drawn_texts(fig):  # draws the figure: mathtext would fail here ("Unknown symbol")
            text, math = _shown(t)
            assert math is False, (name, t.get_text())
            shown.append(text)
        assert any("$\\x$" in x or "a$b" in x for x in shown), name
        for ax in fig.axes:  # a line break in the data never reaches a label (a long label may wrap, at its width)
            ticks = [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
            legend = [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else []
            assert not [x for x in ticks + legend if any(u in x for u in UNTRUSTED if "\n" in u)], name
    legend = [t.get_text() for t in figs["curve"].axes[0].get_legend().get_texts()]
    assert "line break" in [_shown(Text(text=x))[0] for x in legend]


def test_untrusted_names_through_the_report_and_the_explorer(tmp_path, evil):
    from tauk import widgets
    from tauk.report import write_report

    paths = write_report(evil, tmp_path, resamples=99, formats=("png",), figsize="single")
    written = {p.name for p in paths}
    for f in ("pass_k_curve", "domain_estimates", "forest", "success_heatmap", "failure_breakdown",
              "termination_reasons", "cost_vs_pass"):  # fmt: skip
        assert f"{f}.png" in written
        assert Image.open(tmp_path / "figures" / f"{f}.png").size[0] == round(3.3 * 150)
    ex = widgets.explorer(evil, resamples=100)
    for name in ("domain_estimates", "pass_k_curve", "cost_vs_pass"):
        ex.figure.value = name
        assert ex.figure_png is not None, ex.output.outputs
    cw = widgets.comparison(evil, a="$\\x$", b="a$b", resamples=100)
    assert cw.figure_png is not None


# ---------------------------------------------------------------------------------------------- 2: empty pairs
def test_forest_has_no_row_for_a_pair_without_common_tasks(res):
    trials = res.trials.with_columns(
        pl.when(pl.col("agent") == "baseline").then(pl.lit("airline-only")).otherwise(pl.col("agent")).alias("agent")
    ).filter((pl.col("agent") != "airline-only") | (pl.col("domain") == "airline"))
    trials = trials.filter((pl.col("agent") != "atlas-small") | (pl.col("domain") == "retail"))
    mc = compare_all(trials, resamples=R, permutations=199, pool_setups=True)
    empty = mc.pairs.filter(pl.col("n_tasks") == 0)
    assert empty.height == 1  # airline-only vs atlas-small (retail only)
    fig = tp.forest(mc)
    ax = fig.axes[0]
    rows = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(rows) == mc.pairs.height - 1
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == mc.pairs.height - 1
    assert not any("airline-only" in x and "atlas-small" in x for x in labels)
    text = _all_text(fig)
    assert "no shared tasks" not in text
    assert text.count("No common tasks") == 1 and "(1 of 3 pairs): airline-only − atlas-small" in text
    # every pair empty: an empty plot that says so, and the footnote
    only = compare_all(trials.filter(pl.col("agent") != "atlas-large"), resamples=R, permutations=199,
                       pool_setups=True)
    fig = tp.forest(only, figsize="single")
    assert not [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)]
    assert "no pair shares a task" in _all_text(fig) and "No common tasks" in _all_text(fig)


def test_forest_on_the_real_logs_skips_empty_pairs(shared_data):
    logs = tauk.load(shared_data / "tau2", strict=False)
    mc = compare_all(logs, resamples=99, permutations=99, pool_setups=True)
    n_empty = mc.pairs.filter(pl.col("n_tasks") == 0).height
    assert n_empty > 0
    fig = tp.forest(mc)
    rows = [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)]
    assert len(rows) == mc.pairs.height - n_empty
    assert f"({n_empty} of {mc.pairs.height} pairs)" in _all_text(fig)


# ---------------------------------------------------------------------------------------------- 1, 5: leaderboard
@pytest.fixture(scope="module")
def board(shared_data: Path):
    from tauk.io.leaderboard import load_leaderboard

    return load_leaderboard(shared_data / "leaderboard")


@pytest.fixture(scope="module")
def one_sim(shared_data: Path):
    logs = tauk.load(shared_data / "tau2" / "v0.2_gpt-4.1-mini_airline_1sim.json")
    return summarize(logs, by=("agent", "domain"), resamples=R)


def _panel(fig, domain):
    return next(a for a in fig.axes if a.get_title(loc="left") == domain)


def _ranked_labels(ax):
    labels = [t.get_text() for t in ax.get_yticklabels()]
    return [lab for _, lab in sorted(zip(ax.get_yticks(), labels), reverse=True)]


def test_leaderboard_does_not_rank_a_one_simulation_run_first(board, one_sim):
    assert one_sim.long()["estimate"].to_list() == [1.0] and one_sim.groups["n_simulations"].to_list() == [1]
    fig = tp.leaderboard(board, recomputed=one_sim)
    ax = _panel(fig, "airline")
    ranked = _ranked_labels(ax)
    rec = "gpt-4.1-mini (recomputed)"
    assert ranked[0] != rec and ranked[-1] == rec  # below the ranking, not above every published model
    bar = ax.patches[-1]  # drawn last, at the bottom
    assert bar.get_hatch() and bar.get_facecolor()[:3] == (1.0, 1.0, 1.0)  # hatched, not filled
    text = _all_text(fig)
    assert "n=1 sim" in text and "fewer than 20 simulations" in text
    # omitted on request, named in the caption
    fig = tp.leaderboard(board, recomputed=one_sim, too_few="omit")
    assert rec not in _ranked_labels(_panel(fig, "airline"))
    assert "Not shown, fewer than 20 simulations: gpt-4.1-mini (airline, 1 simulation)" in _all_text(fig)
    # the threshold is an option: 0 ranks it with the rest (first, at 100 %)
    fig = tp.leaderboard(board, recomputed=one_sim, min_simulations=0)
    assert _ranked_labels(_panel(fig, "airline"))[0] == rec
    with pytest.raises(TaukError, match="too_few"):
        tp.leaderboard(board, recomputed=one_sim, too_few="hide")


def test_leaderboard_labels_are_percentages_on_a_percentage_axis(board, one_sim):
    fig = tp.leaderboard(board, recomputed=one_sim, figsize="double")
    ax = _panel(fig, "airline")
    assert ax.get_xlim() == (0.0, 100.0) and "(%)" in ax.get_xlabel()
    widths = sorted((p.get_width() for p in ax.patches), reverse=True)
    pub = board.filter((pl.col("domain") == "airline") & pl.col("manifest_section").is_not_null())
    top = sorted(pub["pass_1_pct"].drop_nulls().to_list(), reverse=True)[:15]
    assert np.allclose([w for w in widths if w < 99.9][:15], top)  # bar lengths are the published percentages
    values = [float(m) for t in ax.texts for m in re.findall(r"^(\d+\.\d)", t.get_text())]
    assert values and all(0.0 <= v <= 100.0 for v in values) and max(values) > 1.0  # not fractions
    assert sorted(values, reverse=True)[: len(top)] == pytest.approx([round(v, 1) for v in [100.0] + top][: len(top)])


def test_leaderboard_recomputed_entries_carry_n_and_interval(board, shared_data):
    logs = tauk.load([shared_data / "tau2" / f"v0.1_gpt-4.1_{d}-test_1trial.json" for d in ("airline", "retail")])
    s = summarize(logs, by=("agent", "domain"), resamples=R)
    fig = tp.leaderboard(board, recomputed=s)
    for d in ("airline", "retail"):
        ax = _panel(fig, d)
        row = s.long().filter((pl.col("domain") == d) & (pl.col("k") == 1)).row(0, named=True)
        bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
        assert len(bars) == 1  # the recomputed entry's interval
        seg = bars[0].lines[2][0].get_segments()[0]
        assert np.allclose(sorted(x for x, _ in seg), [100 * row["ci_low"], 100 * row["ci_high"]])
        label = next(t.get_text() for t in ax.texts if t.get_fontweight() == "bold")
        assert f"{100 * row['estimate']:.1f}" in label and f"n={row['n_tasks']} ({row['n_simulations']})" in label
    text = _all_text(fig)
    assert "95% beta-binomial model interval" in text and "n = tasks (simulations)" in text


# ---------------------------------------------------------------------------------------------- 1, 5: cost
@pytest.fixture(scope="module")
def unpriced(res):
    """The sample with the cheapest agent's cost recorded as 0.0 (what τ²-bench writes for an unpriced model)."""
    trials = res.trials.with_columns(
        pl.when(pl.col("agent") == "baseline").then(0.0).otherwise(pl.col("agent_cost")).alias("agent_cost")
    )
    return summarize(trials, by="agent", resamples=R, pool_setups=True)


def test_cost_zero_is_unknown_not_the_cheapest_point(unpriced):
    assert unpriced.groups.filter(pl.col("agent") == "baseline")["avg_agent_cost"].item() == 0.0
    fig = tp.cost_vs_pass(unpriced)
    ax = fig.axes[0]
    pts = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(pts) == 2 and all(c.lines[0].get_xdata()[0] > 0 for c in pts)
    front = next(line for line in ax.lines if line.get_label() == "Pareto front")
    assert 0.0 not in list(front.get_xdata())
    assert not any("baseline" in t.get_text() for t in ax.get_legend().get_texts())
    assert re.search(r"Recorded cost 0\.0 read as unknown .*baseline", _all_text(fig))
    fig = tp.cost_vs_pass(unpriced, zero_cost="free")
    front = next(line for line in fig.axes[0].lines if line.get_label() == "Pareto front")
    assert list(front.get_xdata())[0] == 0.0
    with pytest.raises(TaukError, match="zero_cost"):
        tp.cost_vs_pass(unpriced, zero_cost="zero")


def test_cost_flags_too_few_simulations_and_states_n(res):
    trials = res.trials.filter((pl.col("agent") != "atlas-large") | (pl.col("task_id") == "1") & (pl.col("trial") == 0)
                               & (pl.col("domain") == "airline"))  # fmt: skip
    s = summarize(trials, by="agent", resamples=R, pool_setups=True)
    assert s.groups.filter(pl.col("agent") == "atlas-large")["n_simulations"].item() == 1
    fig = tp.cost_vs_pass(s)
    ax = fig.axes[0]
    hollow = [c for c in ax.containers if isinstance(c, ErrorbarContainer) and c.lines[0].get_markerfacecolor() == "white"]
    assert len(hollow) == 1
    x_few = hollow[0].lines[0].get_xdata()[0]
    front = next(line for line in ax.lines if line.get_label() == "Pareto front")
    assert x_few not in list(front.get_xdata())
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "atlas-large (n=1)" in legend and "baseline (n=50)" in legend
    assert "n=1 sim" in _all_text(fig)
    fig = tp.cost_vs_pass(s, min_simulations=0)
    assert not [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)
                and c.lines[0].get_markerfacecolor() == "white"]  # fmt: skip


def test_cost_on_the_real_logs_leaves_unpriced_runs_off(shared_data):
    logs = tauk.load(shared_data / "tau2", strict=False)
    s = summarize(logs, by="agent", resamples=99, pool_setups=True)
    zero = s.groups.filter(pl.col("avg_agent_cost") == 0.0)["agent"].to_list()
    assert zero  # the fine-tuned gpt-4.1 and the local qwen record 0.0
    fig = tp.cost_vs_pass(s)
    for line in fig.axes[0].lines:
        assert 0.0 not in list(line.get_xdata())
    legend = " ".join(t.get_text() for t in fig.axes[0].get_legend().get_texts())
    assert not any(z[:10] in legend for z in zero)


# ---------------------------------------------------------------------------------------------- 8: captions
def test_figures_say_which_interval_and_on_how_many_tasks(s_agent, s_ad, mc):
    cases = {
        "pass_k_curve": tp.pass_k_curve(s_agent),
        "domain_estimates": tp.domain_estimates(s_ad),
        "forest": tp.forest(mc),
        "cost_vs_pass": tp.cost_vs_pass(s_ad),
    }
    for name, fig in cases.items():
        text = _all_text(fig)
        # the default intervals: the beta-binomial model (summaries), the score test's own (comparisons)
        want = "95% score interval" if name == "forest" else "95% beta-binomial model interval (new tasks)"
        assert want in text, name
        assert re.search(r"n = |n=\d", text), name
    bca = tp.pass_k_curve(summarize(tauk.load(SAMPLE_DATA), by="agent", method="bca", resamples=R,
                                    pool_setups=True))
    assert "95% BCa" in _all_text(bca) and f"({R} resamples)" in _all_text(bca)
    assert "n = 50 tasks per line" in _all_text(cases["pass_k_curve"])
    assert "n = 25 tasks per estimate" in _all_text(cases["domain_estimates"])
    plain = tp.pass_k_curve(summarize(tauk.load(SAMPLE_DATA), by="agent", ci=None, pool_setups=True))
    assert "interval" not in _all_text(plain)


# ---------------------------------------------------------------------------------------------- 6: widgets
def test_widget_inputs_raise_taukerror_naming_what_is_there(res):
    from tauk import widgets

    with pytest.raises(TaukError, match=r"a='gpt-9'.*'atlas-large', 'atlas-small', 'baseline'"):
        widgets.comparison(res, a="gpt-9")
    with pytest.raises(TaukError, match="b='nobody'"):
        widgets.comparison(res, b="nobody")
    with pytest.raises(TaukError, match="k must"):
        widgets.comparison(res, k=0)
    with pytest.raises(TaukError, match="two agents"):
        widgets.comparison(res.trials.filter(pl.col("agent") == "baseline"))
    with pytest.raises(TaukError, match=r"figure='bars'.*domain_estimates"):
        widgets.explorer(res, figure="bars")
    with pytest.raises(TaukError, match="tauk.Results"):
        widgets.explorer([1, 2, 3])
    with pytest.raises(TaukError, match="column"):
        widgets.explorer(res, by=("agent", "model"))
    with pytest.raises(TaukError, match="tauk.Results"):
        widgets.trajectory_viewer(res.trials)
    v = widgets.trajectory_viewer(res)
    with pytest.raises(TaukError, match="run_id='nope'"):
        v.show("nope", "x")


# ---------------------------------------------------------------------------------------------- 7: examples
def test_every_public_function_of_tauk_plot_has_a_running_example(monkeypatch):
    missing = []
    for name in tp.__all__:
        obj = getattr(tp, name)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and "Examples\n    --------" not in (obj.__doc__ or ""):
            missing.append(name)
    assert not missing, f"no Examples section: {missing}"
    monkeypatch.chdir(ROOT)  # the examples read the bundled sample as "data"
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    modules = sorted({getattr(tp, n).__module__ for n in tp.__all__ if hasattr(getattr(tp, n), "__module__")
                      and getattr(tp, n).__module__.startswith("tauk.plot")})  # fmt: skip
    n = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mod in modules:
            for test in finder.find(importlib.import_module(mod)):
                if test.examples:
                    n += 1
                    runner.run(test)
    assert n >= 17
    assert runner.failures == 0, f"{runner.failures} example(s) failed"


def test_bars_are_unchanged_by_the_presets(res, scored):
    # the same counts at every size: presets change layout, never data
    heights = []
    for size in (None, "single", "double"):
        ax = tp.failure_breakdown(scored, figsize=size).axes[0]
        heights.append(np.sum([[p.get_height() for p in b.patches] for b in ax.containers
                               if isinstance(b, BarContainer)], axis=0))  # fmt: skip
    assert np.allclose(heights[0], heights[1]) and np.allclose(heights[0], heights[2])


def test_rotated_agent_labels_do_not_run_into_each_other(shared_data):
    """The report's bar charts of 11 agents (one of them a 51-character fine-tune name): a rotated label is a strip
    as thick as its lines, and neighbouring strips are dx·sin θ apart — the strips must not overlap."""
    import math

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logs = tauk.load(shared_data, strict=False, progress=False)
    fig = tauk.plot.termination_reasons(logs.trials)
    fig = fig if hasattr(fig, "canvas") else fig.figure
    fig.canvas.draw()
    ax = fig.axes[0]
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    assert len(labels) >= 10 and any(len(t.get_text()) > 40 for t in labels)
    xs = [ax.transData.transform((t.get_position()[0], 0))[0] for t in labels]
    dx = min(b - a for a, b in zip(xs, xs[1:], strict=False))
    angle = labels[0].get_rotation()
    assert angle > 0
    thickness = []
    for t in labels:
        t.set_rotation(0)
        thickness.append(t.get_window_extent().height)
        t.set_rotation(angle)
    assert max(thickness) < dx * math.sin(math.radians(angle))
