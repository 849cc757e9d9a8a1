"""``tauk report``: summary and comparison tables (Markdown + LaTeX) and every figure the data supports (PDF + PNG),
with an index ``README.md``, in one folder.

    tauk report data --out report
    tauk report PATH... --out DIR [--ci LEVEL] [--resamples N] [--seed S] [--infra drop|fail] [--leaderboard DIR]

Defaults: the one set of every statistic (``tauk.conventions``: level, method, resamples, seed), so the report's
intervals are the ones ``tauk summary`` and the API give for the same data. The same inputs and seed give
byte-identical files (figures are saved without timestamps; the README carries no date).

Layout of the output folder::

    README.md                         index of everything written (with the PNGs inline)
    tables/summary_agent_domain.{md,tex,csv}   upstream metrics + pass^k intervals per agent × domain
    tables/summary_agent.{md,tex,csv}          … per agent: the mean of its per-setup figures (leaderboard convention)
    tables/summary_run.{md,tex,csv}            … per results file
    tables/comparisons.{md,tex,csv}            all pairs of agents, paired on shared tasks, Holm-adjusted
    tables/comparisons_by_domain.{md,tex,csv}  the same within each domain (when there are several)
    tables/consistency.{md,tex,csv}            run-to-run noise per agent × domain (when a task has ≥ 2 trials)
    figures/<name>.{pdf,png}               see ``FIGURES``
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from tauk import __version__
from tauk.conventions import CI_LEVEL, CI_METHOD, INFRA, RESAMPLES, SEED
from tauk.errors import TaukError
from tauk.table import Interval, markdown_escape

__all__ = ["write_report", "build_report", "Report", "ReportWarning", "DEFAULT_RESAMPLES", "FIGURES", "STAGES", "markdown_table", "overall_table", "empty_reason"]

DEFAULT_RESAMPLES = RESAMPLES
"""Bootstrap resamples of the report's intervals: the one default of every statistic (``tauk.conventions``)."""

FIGURES: dict[str, str] = {
    "pass_k_curve": "pass^k against k per agent, shaded interval (beta-binomial model by default)",
    "pass_k_curve_runs": "pass^k against k per results file",
    "domain_estimates": "pass^1 per domain with intervals, agents side by side",
    "forest": "paired pass^1 differences between agents (filled: Holm-adjusted p < α)",
    "forest_by_domain": "paired pass^1 differences within each domain (Holm over all of them)",
    "success_heatmap": "task × agent success rate, tasks ordered by difficulty",
    "failure_breakdown": "which reward component sinks the failed trials (tauk.score)",
    "termination_reasons": "how trials ended, per agent",
    "cost_vs_pass": "mean agent cost per trial against pass^1, with the Pareto front",
    "leaderboard": "published leaderboard pass^1 beside the recomputed figures",
    "noise_floor": "per-trial pass^1 with the fixed-task mean and the band where one run lands",
    "flaky_tasks": "tasks × trials outcomes, the most undecided tasks first",
}
"""Every figure the report can write, by file name (without extension)."""


md_escape = markdown_escape  # the old name


def overall_table(summary: Any, include_small: bool = False) -> Any:
    """One row per agent: the summary itself when every agent has one setup, else the leaderboard's mean of its
    per-setup figures (:func:`tauk.stats.overall`: n, an interval, setups under the minimum left out and flagged
    unless ``include_small``), which says which setups it averaged."""
    from tauk.stats import overall

    return overall(summary, include_small=include_small).summary() if "setup" in summary.by else summary.summary()


def markdown_table(table: Any, level: int = 2) -> str:
    """A :class:`tauk.table.SummaryTable` as GitHub Markdown (its :meth:`~tauk.table.SummaryTable.to_markdown`)."""
    return table.to_markdown(level=level)


@dataclass
class _Index:
    out: Path
    written: list[Path] = field(default_factory=list)
    tables: list[tuple[str, str, list[Path]]] = field(default_factory=list)
    figures: list[tuple[str, str, list[Path]]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    empty: list[tuple[str, str]] = field(default_factory=list)  # tables written with no estimate in them
    warnings: list[str] = field(default_factory=list)

    def rel(self, p: Path) -> str:
        return p.relative_to(self.out).as_posix()


def empty_reason(table: Any) -> str | None:
    """Why a table has nothing to show (no row, or no estimate in any ``pass^``/``pass@``/difference column),
    or None."""
    if not table.rows:
        return "no row"
    cols = [i for i, c in enumerate(table.columns) if c.startswith(("pass^", "pass@")) or c in ("difference", "diff")]
    if not cols:
        return None

    def value(v: Any) -> Any:
        return v.estimate if isinstance(v, Interval) else v

    if all(value(r[i]) is None or value(r[i]) != value(r[i]) for r in table.rows for i in cols):
        return "no estimate in any row (" + ", ".join(table.columns[i] for i in cols) + ")"
    return None


def _write_table(idx: _Index, name: str, what: str, table: Any) -> None:
    why = empty_reason(table)
    if why:
        idx.empty.append((name, why))
    tdir = idx.out / "tables"
    tdir.mkdir(parents=True, exist_ok=True)
    md, tex, csv = (tdir / f"{name}.{ext}" for ext in ("md", "tex", "csv"))
    md.write_text(table.to_markdown(level=1), encoding="utf-8")
    tex.write_text(table.to_latex(label=f"tab:{name}") + "\n", encoding="utf-8")
    csv.write_text(table.to_csv(), encoding="utf-8")
    idx.written += [md, tex, csv]
    idx.tables.append((name, what, [md, tex, csv]))


def _inputs_text(trials: pl.DataFrame, runs: pl.DataFrame | None) -> list[str]:
    lines = []
    if runs is not None and runs.height:
        for r in runs.iter_rows(named=True):
            lines.append(
                f"- {md_escape(r.get('run_id'))} — agent {md_escape(r.get('agent'))}, domain {md_escape(r.get('domain'))}, "
                f"{r.get('n_simulations')} simulations, {r.get('n_infra_errors', 0)} infrastructure errors"
            )
    else:
        lines.append(f"- a trials frame of {trials.height} simulations")
    return lines


STAGES = ("summaries", "comparisons", "consistency", "tables", "table NAME", "figure NAME", "README")
"""The stages of :func:`build_report` and :func:`write_report`, in order (the progress bar names each)."""


@dataclass(frozen=True)
class Report:
    """What the report shows, computed once (:func:`build_report`), before anything is written: for
    :func:`write_report` and any other renderer (an HTML page).

    ``tables``: (name, what, :class:`~tauk.table.SummaryTable`) in order; ``figures``: (name, what, make) where
    ``make()`` draws the matplotlib figure (it may raise :class:`~tauk.TaukError`: then the figure is skipped);
    ``skipped``: (name, why) of what the data cannot support; ``empty``: (name, why) of tables with no estimate
    (because of the options, e.g. a k above every task's trials); ``headline``: the README's table (one row per
    agent); ``settings``: one sentence on how the intervals were made; ``inputs``: one line per input file;
    ``warnings``: every distinct warning raised while computing (one line each)."""

    tables: tuple[tuple[str, str, Any], ...]
    figures: tuple[tuple[str, str, Callable[[], Any]], ...]
    skipped: tuple[tuple[str, str], ...]
    empty: tuple[tuple[str, str], ...]
    headline: Any
    settings: str
    inputs: tuple[str, ...]
    warnings: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)
    sections: tuple[str, ...] = ()  # Markdown lines the sections add to the index (the task-validity section)
    drawn: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # figures drawn so far, by name

    def draw(self, name: str) -> Any:
        """The figure ``name`` of :attr:`figures`, drawn on the first call and the same object after (the folder
        and the HTML page share one drawing); raises :class:`~tauk.TaukError` where the data cannot support it."""
        if name not in self.drawn:
            makers = {n: make for n, _, make in self.figures}
            if name not in makers:
                raise TaukError(f"the report has no figure {name!r}; it has {sorted(makers)}")
            self.drawn[name] = makers[name]()
        return self.drawn[name]


class _Progress:
    """One bar over :data:`STAGES` (tqdm.auto), named by the stage it is in; nothing when ``progress`` is False."""

    def __init__(self, progress: bool | None, total: int) -> None:
        self.bar = None
        if progress is not False:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc="report", unit="step", disable=None if progress is None else False)

    def step(self, name: str) -> None:
        """Stage ``name`` begins (and counts)."""
        if self.bar is not None:
            self.bar.set_description(f"report: {name}")
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _collect(caught: list[Any], into: list[str]) -> None:
    for w in caught:
        text = " ".join(str(w.message).split())
        if text and text not in into:
            into.append(text)


def build_report(
    results: Any,
    ci: float = CI_LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    infra: str = INFRA,
    method: str = CI_METHOD,
    leaderboard: str | Path | pl.DataFrame | None = None,
    ks: Sequence[int] | None = None,
    figsize: Any = None,
    include_small: bool = False,
    progress: bool | None = None,
) -> Report:
    """Compute every table of the report and prepare every figure (see :func:`write_report` for the arguments);
    nothing is written. The warnings raised on the way are collected in ``Report.warnings`` (not shown)."""
    import tauk.plot as tp
    from tauk.report_sections.validity import validity_section
    from tauk.stats import as_trials, compare_all, consistency, summarize
    from tauk.stats.substantive import ResolvedMarks

    if infra not in ("drop", "fail"):
        raise TaukError(f"infra must be 'drop' or 'fail', got {infra!r}")
    tp.preset(figsize)  # a bad size fails before any work
    fs = {"figsize": figsize}
    trials = as_trials(results)
    runs = getattr(results, "runs", None)
    opts = {"infra": infra, "ci": ci, "method": method, "resamples": resamples, "seed": seed}
    kopt = {"k": list(ks)} if ks else {}
    bar = _Progress(progress, 4)
    seen: list[str] = []
    tables: list[tuple[str, str, Any]] = []
    skipped: list[tuple[str, str]] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            agents = sorted({a for a in trials["agent"].to_list() if a is not None}) if "agent" in trials.columns else []
            domains = sorted({d for d in trials["domain"].to_list() if d is not None}) if "domain" in trials.columns else []
            tp.register_agents(agents)
            bar.step("summaries")
            # ---- statistics (computed once, shared by tables and figures; the task definitions audited once)
            marks = ResolvedMarks.of(results)
            s_ad = summarize(results, by=("agent", "domain"), marks=marks, **opts, **kopt)
            s_agent = summarize(results, by=("agent",), marks=marks, **opts, **kopt)
            s_run = summarize(results, by=("run_id",), marks=marks, **opts, **kopt)
            bar.step("comparisons")
            cmp_all = cmp_dom = None
            if len(agents) >= 2:
                cmp_all = compare_all(results, k=1, adjust="holm", **opts)
                if len(domains) > 1:
                    cmp_dom = compare_all(results, k=1, by="domain", adjust="holm", **opts)
            bar.step("consistency")
            cons = consistency(results, by=("agent", "domain"), infra=infra, alpha=round(1.0 - ci, 10))
            multi = cons.frame.height > 0 and (cons.frame["n_trials_max"].max() or 0) >= 2
            bar.step("tables")
            headline = overall_table(s_agent, include_small)
            tables.append(("summary_agent_domain", "upstream metrics and pass^k per agent × domain", s_ad.summary()))
            tables.append(("summary_agent", "pass^k per agent: the mean of its per-setup figures (the leaderboard's "
                           "convention; setups are never pooled; small setups left out and flagged)", headline))  # fmt: skip
            tables.append(("summary_run", "upstream metrics and pass^k per results file", s_run.summary()))
            if cmp_all is not None:
                tables.append(("comparisons", "all pairs of agents, paired on shared tasks (Holm)", cmp_all.summary()))
            else:
                skipped.append(("comparisons", "fewer than two agents"))
            if cmp_dom is not None:
                tables.append(("comparisons_by_domain", "all pairs within each domain (Holm over all)",
                               cmp_dom.summary()))  # fmt: skip
            if multi:
                tables.append(("consistency", "run-to-run noise per agent × domain: flip rate, ICC, noise floor",
                               cons.summary()))  # fmt: skip
            else:
                skipped.append(("consistency", "one trial per task"))
            # ---- task validity (tauk.report_sections.validity)
            sec = validity_section(results, s_ad, audit=marks.audit)
            tables += list(sec.tables)
            skipped += list(sec.skipped)
            sections = list(sec.markdown)
            # ---- the leaderboard (tauk.leaderboard.report_section): recovered counts, intervals, tie groups
            board_figs: list[tuple[str, str, Callable[[], Any]]] = []
            if isinstance(leaderboard, str | Path):
                from tauk.leaderboard import report_section

                lb = report_section(leaderboard, figsize=figsize, ci=ci, progress=False)
                tables += list(lb.tables)
                board_figs = list(lb.figures)
                sections += [f"## {lb.title}", "", lb.markdown.rstrip(), ""]
            elif leaderboard is not None:
                skipped.append(("leaderboard section", "a leaderboard frame was given: pass its folder for the section"))
            _collect(caught, seen)
    finally:
        bar.close()

    # ---- figures: each made on demand (the noise floor only for groups with two or more trials per task)
    figs: list[tuple[str, Callable[[], Any] | None, str]] = [
        ("pass_k_curve", lambda: tp.pass_k_curve(s_agent, **fs), ""),
        ("pass_k_curve_runs", (lambda: tp.pass_k_curve(s_run, **fs)) if s_run.groups.height > 1 else None, "a single run"),
        ("domain_estimates", (lambda: tp.domain_estimates(s_ad, **fs)) if domains else None, "no domain recorded"),
        ("forest", (lambda: tp.forest(cmp_all, **fs)) if cmp_all is not None else None, "fewer than two agents"),
        ("forest_by_domain", (lambda: tp.forest(cmp_dom, **fs)) if cmp_dom is not None else None,
         "fewer than two agents or a single domain"),
        ("success_heatmap", lambda: tp.success_heatmap(trials, infra=infra, **fs), ""),
        ("failure_breakdown", _failure_maker(results, infra, figsize), "needs a tauk.Results to score"),
        ("termination_reasons", lambda: tp.termination_reasons(trials, **fs), ""),
        ("cost_vs_pass", (lambda: tp.cost_vs_pass(s_agent, **fs))
         if s_agent.groups["avg_agent_cost"].drop_nulls().len() > 0 else None, "no agent_cost recorded"),
        ("noise_floor", (lambda: tp.noise_floor(cons, **fs)) if multi else None,
         "no group has two or more trials per task (no run-to-run noise to show)"),
        ("flaky_tasks", (lambda: tp.flaky_tasks(cons, **fs)) if multi else None,
         "no group has two or more trials per task"),
        ("substantive", (lambda: tp.substantive_estimates(s_ad, **fs))
         if any(n == "substantive" for n, _, _ in sec.tables) else None, "no task definitions"),
    ]  # fmt: skip
    if leaderboard is not None:
        figs.append(("leaderboard", _leaderboard_maker(leaderboard, s_ad, figsize), ""))
    figs += [(name, make, "") for name, _, make in board_figs]
    board_what = {name: what for name, what, _ in board_figs}
    figures = []
    for name, make, why in figs:
        if make is None:
            skipped.append((name, why))
        else:
            figures.append((name, FIGURES.get(name, board_what.get(name, "")), make))
    empty = [(name, why) for name, _, t in tables if (why := empty_reason(t))]
    n_infra = int(s_agent.groups["infra_error_count"].sum()) if s_agent.groups.height else 0
    settings = (f"{_method_text(opts)}; infrastructure errors "
                f"{'dropped' if infra == 'drop' else 'counted as failures'} ({n_infra} in the data). Success = reward "
                "within 1 ± 1e-6; pass^k = mean over tasks of C(c,k)/C(n,k).")  # fmt: skip
    return Report(tuple(tables), tuple(figures), tuple(skipped), tuple(empty), headline, settings,
                  tuple(_inputs_text(trials, runs)), tuple(seen), opts, tuple(sections))  # fmt: skip


def write_report(
    results: Any,
    out_dir: str | Path,
    ci: float = CI_LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    infra: str = INFRA,
    method: str = CI_METHOD,
    leaderboard: str | Path | pl.DataFrame | None = None,
    formats: Sequence[str] = ("pdf", "png"),
    ks: Sequence[int] | None = None,
    figsize: Any = None,
    include_small: bool = False,
    progress: bool | None = None,
    report: Report | None = None,
) -> list[Path]:
    """Write the report for ``results`` into ``out_dir`` and return the paths written (README.md last).

    Args:
        results: a :class:`tauk.Results` (a bare trials frame works too; the failure breakdown then needs
            scoring input it does not have and is skipped).
        ci, method, resamples, seed: interval settings for every table and figure (default ``"model"``: the
            beta-binomial model, with a BCa fallback of ``resamples`` where its check fails; comparisons:
            the paired t test's interval, or the paired task bootstrap for a bootstrap ``method``). Defaults from
            ``tauk.conventions``.
        infra: ``"drop"`` (τ²-bench ≥ 1.0) or ``"fail"`` (leaderboard convention) for infrastructure errors.
        leaderboard: a leaderboard folder (or the frame of ``load_leaderboard``) to add the leaderboard figure.
        formats: figure formats (default PDF and PNG).
        figsize: size of every figure: ``None`` (screen sizes), ``"single"`` (one paper column, 3.3 in wide),
            ``"double"`` (7 in wide) or ``(width, height)`` inches; the paper sizes keep all text ≥ 7 pt in print
            (see :func:`tauk.plot.preset`).
        include_small: keep setups under ``tauk.conventions.MIN_SIMULATIONS`` / ``MIN_TASKS`` in the headline's
            means and ranking (default: left out, flagged).
        progress: a progress bar over the stages (:data:`STAGES`; None: tqdm's default, shown on a terminal).
        report: a :class:`Report` already built by :func:`build_report` (then the statistics options are its).

    Figures the data cannot support (one agent: no forest; no costs: no cost plot; …) are skipped and listed in
    the README with the reason; tables with no estimate (because of the options) are listed as empty. Every distinct
    warning raised while computing is listed in the README and raised again once (one line each in the CLI).
    """
    from tauk.plot import save

    out = Path(out_dir)
    rep = report or build_report(results, ci=ci, resamples=resamples, seed=seed, infra=infra, method=method,
                                 leaderboard=leaderboard, ks=ks, figsize=figsize, include_small=include_small,
                                 progress=progress)  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    idx = _Index(out)
    idx.warnings += list(rep.warnings)
    bar = _Progress(progress, len(rep.tables) + len(rep.figures) + 1)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for name, what, table in rep.tables:
                bar.step(f"table {name}")
                _write_table(idx, name, what, table)
            idx.skipped += [s for s in rep.skipped]
            for name, what, _ in rep.figures:
                bar.step(f"figure {name}")
                try:
                    fig = rep.draw(name)
                except TaukError as exc:
                    idx.skipped.append((name, str(exc)))
                    continue
                paths = save(fig, out / "figures" / name, formats=formats)
                idx.written += paths
                idx.figures.append((name, what, paths))
            _collect(caught, idx.warnings)
        bar.step("README")
        readme = out / "README.md"
        readme.write_text(_readme(idx, rep), encoding="utf-8")
        idx.written.append(readme)
    finally:
        bar.close()
    for text in idx.warnings:  # once each, after the work (the CLI prints one line each)
        warnings.warn(text, ReportWarning, stacklevel=2)
    return idx.written


class ReportWarning(UserWarning):
    """A warning raised while a report was computed (the original's text; listed in the report's README too)."""


def _failure_maker(results: Any, infra: str, figsize: Any = None) -> Callable[[], Any] | None:
    if not hasattr(type(results), "messages"):  # asked of the class: the property would decode every message
        return None

    def make() -> Any:
        import tauk.plot as tp
        from tauk.scoring import score

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scored = score(results)
        return tp.failure_breakdown(scored, infra="drop" if infra == "drop" else "keep", figsize=figsize)

    return make


def _leaderboard_maker(board: Any, s_ad: Any, figsize: Any = None) -> Callable[[], Any]:
    def make() -> Any:
        import tauk.plot as tp
        from tauk.io.leaderboard import load_leaderboard

        b = board if isinstance(board, pl.DataFrame) else load_leaderboard(board)
        return tp.leaderboard(b, recomputed=s_ad, figsize=figsize)

    return make


def _method_text(opts: dict[str, Any]) -> str:
    """How the report's intervals were made (one sentence for the README)."""
    ci, method = opts["ci"], opts["method"]
    if method == "model":
        return (f"{ci:.0%} intervals from a beta-binomial model of the tasks (population: a new draw of tasks; "
                "re-run: the same tasks again), checked by a posterior predictive test and joined with a BCa "
                f"task interval ({opts['resamples']} resamples, seed {opts['seed']}) where the check fails; "
                "comparisons: paired t test with its own interval, Holm-adjusted")  # fmt: skip
    boot = "t intervals over tasks" if method == "t" else f"{method} task-bootstrap intervals"
    return (f"{ci:.0%} {boot}, {opts['resamples']} resamples, seed {opts['seed']}; comparisons: paired t test "
            f"with the paired {method} interval, Holm-adjusted")  # fmt: skip


def _readme(idx: _Index, rep: Report) -> str:
    L = [
        "# tauk report",
        "",
        f"Written by `tauk report` (tauk {__version__}). Inputs:",
        "",
        *rep.inputs,
        "",
        f"Settings: {rep.settings}",
        "",
        markdown_table(rep.headline, level=2).rstrip(),
        "",
        *rep.sections,
        "## Tables",
        "",
    ]
    for name, what, paths in idx.tables:
        md, tex, csv = paths
        L.append(f"- **{name}** — {what}: [Markdown]({idx.rel(md)}) · [LaTeX]({idx.rel(tex)}) · [CSV]({idx.rel(csv)})")
    if idx.empty:
        L += ["", "## Empty tables", "", "Written, but with no estimate in them because of the options:", ""]
        L += [f"- **{name}**: {why}" for name, why in idx.empty]
    L += ["", "## Figures", ""]
    for name, what, paths in idx.figures:
        links = " · ".join(f"[{p.suffix[1:].upper()}]({idx.rel(p)})" for p in paths)
        L.append(f"### {name}")
        L.append("")
        L.append(f"{what}. {links}")
        png = [p for p in paths if p.suffix == ".png"]
        if png:
            L += ["", f"![{name}]({idx.rel(png[0])})"]
        L.append("")
    if idx.skipped:
        L += ["## Not written", ""]
        L += [f"- **{name}**: {md_escape(why)}" for name, why in idx.skipped]
        L.append("")
    if idx.warnings:
        L += ["## Warnings", ""]
        L += [f"- {md_escape(w)}" for w in idx.warnings]
        L.append("")
    return "\n".join(L).rstrip() + "\n"


def write_html_report(
    results: Any,
    path: str | Path,
    report: Report,
    *,
    failed: bool | None = True,
    task: str | Sequence[str] | None = None,
    termination: str | Sequence[str] | None = None,
) -> Path:
    """The report as one self-contained HTML page (:func:`tauk.html.write_report`): the headline and every table,
    every figure inlined as SVG, the settings, warnings and what was not drawn as notes, and the viewer of the
    failed simulations (``failed`` / ``task`` / ``termination`` choose which). Returns the path.

    Examples
    --------
    >>> import tauk, tempfile, pathlib
    >>> res = tauk.load("data/baseline_airline.json")
    >>> rep = build_report(res, ks=[1], progress=False)
    >>> out = write_html_report(res, pathlib.Path(tempfile.mkdtemp()) / "report.html", report=rep)
    >>> text = out.read_text()
    >>> text.count("<svg") >= len(rep.figures), "Failed simulations" in text
    (True, True)
    """
    from tauk.html import write_report as write_page

    summary = [report.headline] + [t for name, _, t in report.tables if not name.startswith("comparisons")]
    comparisons = [t for name, _, t in report.tables if name.startswith("comparisons")]
    figures = []
    notes = [f"Settings: {report.settings}"]
    for name, what, _ in report.figures:
        try:  # drawn once: a report already written to a folder hands over the same figures
            figures.append((f"{name}: {what}" if what else name, report.draw(name)))
        except TaukError as exc:
            notes.append(f"figure {name} not drawn: {exc}")
    notes += [f"not shown — {name}: {why}" for name, why in report.skipped]
    notes += [f"warning: {w}" for w in report.warnings]
    return write_page(path, results, title="tauk report", summary=summary, comparisons=comparisons,
                      figures=figures, notes=notes, failed=failed, task=task, termination=termination)  # fmt: skip

