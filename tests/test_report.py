"""tauk report: tables (Markdown, LaTeX), figures (PDF, PNG), index README; numbers equal tauk.stats."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import tauk
from conftest import SAMPLE_DATA
from tauk.cli import main
from tauk.report import DEFAULT_RESAMPLES, write_report
from tauk.stats import compare_all, summarize

EXPECTED_FIGURES = [
    "pass_k_curve", "pass_k_curve_runs", "domain_estimates", "forest", "forest_by_domain", "success_heatmap",
    "failure_breakdown", "termination_reasons", "cost_vs_pass",
]  # fmt: skip
EXPECTED_TABLES = ["summary_agent_domain", "summary_agent", "summary_run", "comparisons", "comparisons_by_domain"]


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    assert main(["report", str(SAMPLE_DATA), "--out", str(out), "--quiet"]) == 0  # `tauk report data --out report`
    return out


@pytest.fixture(scope="module")
def res():
    return tauk.load(SAMPLE_DATA)


def _md_rows(path: Path) -> list[dict[str, str]]:
    lines = [ln for ln in path.read_text().splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(head, [c.strip() for c in ln.strip("|").split("|")])) for ln in lines[2:]]


def test_writes_tables_and_figures(report_dir: Path):
    for t in EXPECTED_TABLES:
        md, tex = report_dir / "tables" / f"{t}.md", report_dir / "tables" / f"{t}.tex"
        assert md.read_text().startswith("# ")
        assert r"\begin{tabular}" in tex.read_text() and r"\toprule" in tex.read_text()
    for f in EXPECTED_FIGURES:
        pdf, png = report_dir / "figures" / f"{f}.pdf", report_dir / "figures" / f"{f}.png"
        assert pdf.read_bytes().startswith(b"%PDF")
        assert png.read_bytes().startswith(b"\x89PNG")
    assert not (report_dir / "figures" / "leaderboard.pdf").exists()  # only with --leaderboard
    readme = (report_dir / "README.md").read_text()
    for t in EXPECTED_TABLES:
        assert f"tables/{t}.md" in readme and f"tables/{t}.tex" in readme
    for f in EXPECTED_FIGURES:
        assert f"figures/{f}.pdf" in readme and f"figures/{f}.png" in readme
    assert f"{DEFAULT_RESAMPLES} resamples" in readme
    assert not re.search(r"20\d\d-\d\d-\d\dT", readme)  # no timestamps


def test_markdown_pass1_equals_summarize(report_dir: Path, res):
    s = summarize(res, by=("agent", "domain"), ci=0.95, resamples=DEFAULT_RESAMPLES, seed=0)
    want = {(r["agent"], r["domain"]): r for r in s.long().filter(pl.col("k") == 1).iter_rows(named=True)}
    rows = _md_rows(report_dir / "tables" / "summary_agent_domain.md")
    assert len(rows) == len(want) == 6
    for r in rows:
        m = re.fullmatch(r"([\d.]+) \[([\d.]+), ([\d.]+)\]", r["pass^1"])
        assert m, r["pass^1"]
        w = want[(r["agent"], r["domain"])]
        assert float(m.group(1)) == pytest.approx(w["estimate"], abs=5e-5)
        assert float(m.group(2)) == pytest.approx(w["ci_low"], abs=5e-5)
        assert float(m.group(3)) == pytest.approx(w["ci_high"], abs=5e-5)
    # per run and per agent too
    s_run = summarize(res, by="run_id", ci=0.95, resamples=DEFAULT_RESAMPLES)
    runs = {r["run_id"]: r["estimate"] for r in s_run.pass_hat_k.filter(pl.col("k") == 1).iter_rows(named=True)}
    for r in _md_rows(report_dir / "tables" / "summary_run.md"):
        assert float(r["pass^1"].split()[0]) == pytest.approx(runs[r["run_id"]], abs=5e-5)


def test_comparison_table_is_compare_all_holm(report_dir: Path, res):
    mc = compare_all(res, ci=0.95, resamples=DEFAULT_RESAMPLES, seed=0, adjust="holm")
    rows = _md_rows(report_dir / "tables" / "comparisons.md")
    assert [(r["a"], r["b"]) for r in rows] == list(zip(mc.pairs["a"], mc.pairs["b"]))
    for r, w in zip(rows, mc.pairs.iter_rows(named=True)):
        assert float(r["difference"]) == pytest.approx(w["difference"], abs=5e-5)
        assert float(r["p_adjusted"]) == pytest.approx(w["p_adjusted"], abs=5e-5)


def test_readme_names_the_comparison_test_the_tables_used(report_dir: Path, res):
    from tauk.conventions import PAIRED_TEST_DESCRIPTIONS

    mc = compare_all(res, ci=0.95, resamples=DEFAULT_RESAMPLES, seed=0, adjust="holm")
    settings = next(ln for ln in (report_dir / "README.md").read_text().splitlines() if ln.startswith("Settings:"))
    assert f"comparisons: {PAIRED_TEST_DESCRIPTIONS[mc.test]} with its own interval" in settings
    others = [d for t, d in PAIRED_TEST_DESCRIPTIONS.items() if t != mc.test]
    assert not any(d in settings for d in others)


def test_single_agent_skips_what_it_cannot_draw(tmp_path: Path, res):
    one = res.trials.filter(pl.col("agent") == "baseline")
    paths = write_report(one, tmp_path, resamples=99, formats=("png",))
    names = {p.name for p in paths}
    assert "forest.png" not in names and "comparisons.md" not in names
    assert "failure_breakdown.png" not in names  # a bare trials frame cannot be scored
    assert {"pass_k_curve.png", "success_heatmap.png", "summary_agent_domain.md", "README.md"} <= names
    readme = (tmp_path / "README.md").read_text()
    assert "## Not written" in readme and "**forest**: fewer than two agents" in readme


def test_leaderboard_option(tmp_path: Path, shared_data: Path, res, pdflatex):
    """--leaderboard: the published figure beside the recomputed one, and the leaderboard section (recovered counts,
    intervals, tie groups: tauk.leaderboard.report_section) — its tables written, compiled, and its text in the
    README with the recovery counts it computed."""
    from conftest import compile_latex_tables
    from tauk.leaderboard import report_section
    from tauk.table import LATEX_WIDTH_PT

    out = tmp_path / "rep"
    paths = write_report(res, out, resamples=99, formats=("png",), leaderboard=shared_data / "leaderboard")
    assert out / "figures" / "leaderboard.png" in paths
    section = report_section(shared_data / "leaderboard", progress=False)
    names = [name for name, _, _ in section.tables]
    assert names and all(out / "tables" / f"{n}.md" in paths for n in names)
    for name, _, _ in section.figures:
        assert out / "figures" / f"{name}.png" in paths
    readme = (out / "README.md").read_text()
    assert f"## {section.title}" in readme and section.markdown.splitlines()[0] in readme
    tex = [out / "tables" / f"{n}.tex" for n in names]
    assert compile_latex_tables(pdflatex, tex, tmp_path, LATEX_WIDTH_PT) == []


def test_bad_infra_and_cli_errors(tmp_path: Path, res):
    with pytest.raises(tauk.TaukError):
        write_report(res, tmp_path, infra="maybe")
    with pytest.raises(SystemExit):
        main(["report", str(SAMPLE_DATA)])  # --out is required


def test_same_inputs_give_byte_identical_report(tmp_path: Path, res):
    # PNG here (PDF byte-identity of every save is tested in test_plot.py; font subsetting makes PDFs slow)
    a = write_report(res, tmp_path / "a", resamples=99, formats=("png",))
    b = write_report(res, tmp_path / "b", resamples=99, formats=("png",))
    assert [p.relative_to(tmp_path / "a") for p in a] == [p.relative_to(tmp_path / "b") for p in b]
    for x, y in zip(a, b):
        assert x.read_bytes() == y.read_bytes(), x.name


def test_untrusted_names_are_escaped_in_markdown_and_latex(tmp_path):
    import tauk
    from tauk.report import write_report

    name = "m_1 & 50%<img src=x onerror=alert(1)>`|"
    res = tauk.load({name: "data/baseline_airline.json", "other": "data/atlas-small_airline.json"})
    write_report(res, tmp_path, resamples=199, formats=("png",))
    md = (tmp_path / "tables" / "summary_agent.md").read_text()
    tex = (tmp_path / "tables" / "summary_agent.tex").read_text()
    index = (tmp_path / "README.md").read_text()
    for text in (md, index):
        assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert r"m\_1 \& 50\%" in tex.replace(r"\allowbreak{}", "")


# ---- every .tex the report writes compiles and fits the column -------------------------------------------------
@pytest.fixture(scope="module")
def shared_report_dir(tmp_path_factory, shared_data: Path) -> Path:
    """The report on the shared τ²-bench logs (many setups, long agent names, one-simulation runs)."""
    out = tmp_path_factory.mktemp("shared_report")
    assert main(["report", str(shared_data / "tau2"), "--out", str(out), "--quiet", "--formats", "png"]) == 0
    return out


@pytest.mark.parametrize("which", ["sample", "shared"])
def test_every_report_tex_compiles_and_fits_the_column(request, pdflatex, tmp_path, which):
    from conftest import compile_latex_tables
    from tauk.table import LATEX_WIDTH_PT

    out = request.getfixturevalue("report_dir" if which == "sample" else "shared_report_dir")
    tex = sorted((out / "tables").glob("*.tex"))
    assert len(tex) >= 5
    for t in tex:  # the label as given, never escaped
        assert f"\\label{{tab:{t.stem}}}" in t.read_text()
    assert compile_latex_tables(pdflatex, tex, tmp_path, LATEX_WIDTH_PT) == []


# ---- every report figure keeps its text inside the canvas, with no layout warning --------------------------------
@pytest.mark.parametrize("which,size", [("sample", None), ("sample", "single"), ("sample", "double"),
                                        ("shared", None), ("shared", "single"), ("shared", "double")])  # fmt: skip
def test_report_figures_keep_their_text_inside_the_canvas(request, which, size):
    import warnings

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from tauk.report import build_report

    data = SAMPLE_DATA if which == "sample" else request.getfixturevalue("shared_data") / "tau2"
    rep = build_report(tauk.load(data, progress=False), figsize=size, progress=False)
    assert len(rep.figures) >= 8
    outside, drawn = [], 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, _, make in rep.figures:
            try:
                fig = make()
            except tauk.TaukError:
                continue
            FigureCanvasAgg(fig)
            fig.canvas.draw()
            tight = fig.get_tightbbox(fig.canvas.get_renderer())  # inches, everything drawn
            w, h = fig.get_size_inches()
            if tight.x0 < -0.01 or tight.y0 < -0.01 or tight.x1 > w + 0.01 or tight.y1 > h + 0.01:
                outside.append((name, [round(float(v), 2) for v in (tight.x0, tight.y0, tight.x1 - w, tight.y1 - h)]))
            drawn += 1
    assert drawn >= 8
    assert outside == []
    assert [str(w.message) for w in caught if "layout" in str(w.message)] == []


def test_noise_floor_draws_only_groups_with_repeated_trials(res):
    import polars as pl

    one = res.trials.filter(pl.col("trial") == 0, pl.col("agent") == "baseline").with_columns(agent=pl.lit("one-trial"))
    both = pl.concat([res.trials, one], how="diagonal_relaxed")
    fig = tauk.plot.noise_floor(tauk.stats.consistency(both))
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels and not any("one-trial" in s for s in labels)
    assert any("one trial per task left out" in t.get_text() for t in fig.texts)
    with pytest.raises(tauk.TaukError, match="no group has two or more trials"):
        tauk.plot.noise_floor(tauk.stats.consistency(one))


def test_report_audits_definitions_once_and_draws_each_figure_once(tmp_path: Path, res, monkeypatch):
    """The folder and the HTML page share one drawing of each figure, and the three summaries and the
    task-validity section share one audit of the task definitions."""
    import importlib

    import tauk.tasks as tt
    from tauk.report import build_report, write_html_report

    sections = importlib.import_module("tauk.report_sections.validity")
    audits = []
    real = tt.validity

    def counting(*a, **kw):
        audits.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(sections, "validity", counting)
    monkeypatch.setattr(tt, "validity", counting)
    rep = build_report(res, ks=[1], progress=False)
    assert len(audits) == 1
    calls: dict[str, int] = {}

    def counted(name, make):
        def again():
            calls[name] = calls.get(name, 0) + 1
            return make()

        return again

    rep = type(rep)(**{**rep.__dict__, "figures": tuple((n, w, counted(n, m)) for n, w, m in rep.figures),
                       "drawn": {}})  # fmt: skip
    write_report(res, tmp_path / "r", formats=["png"], progress=False, report=rep)
    write_html_report(res, tmp_path / "r" / "report.html", rep)
    assert calls and set(calls.values()) == {1}, calls
    assert (tmp_path / "r" / "report.html").read_text().count("<svg") >= len(calls)
