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
    tables/task_validity.{md,tex,csv}          the audit of the task definitions the runs embed (do-nothing bound)
    tables/substantive.{md,tex,csv}            pass^1 on all tasks beside the substantive ones, per agent × domain
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
from tauk.table import markdown_escape

__all__ = ["write_report", "DEFAULT_RESAMPLES", "FIGURES", "markdown_table"]

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
    "substantive": "pass^1 on all tasks beside the substantive ones (not inaction-passable), with the do-nothing bound",
}
"""Every figure the report can write, by file name (without extension)."""


md_escape = markdown_escape  # the old name


def overall_table(summary: Any) -> Any:
    """One row per agent: the summary itself when every agent has one setup, else the leaderboard's mean of its
    per-setup figures (:func:`tauk.stats.overall`), which says so."""
    from tauk.stats import overall

    return overall(summary).summary() if "setup" in summary.by else summary.summary()


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
    sections: list[str] = field(default_factory=list)  # Markdown the sections add to the index

    def rel(self, p: Path) -> str:
        return p.relative_to(self.out).as_posix()


def _write_table(idx: _Index, name: str, what: str, table: Any) -> None:
    tdir = idx.out / "tables"
    tdir.mkdir(parents=True, exist_ok=True)
    md, tex, csv = (tdir / f"{name}.{ext}" for ext in ("md", "tex", "csv"))
    md.write_text(table.to_markdown(level=1), encoding="utf-8")
    tex.write_text(table.to_latex(label=f"tab:{name}") + "\n", encoding="utf-8")
    csv.write_text(table.to_csv(), encoding="utf-8")
    idx.written += [md, tex, csv]
    idx.tables.append((name, what, [md, tex, csv]))


def _write_figure(idx: _Index, name: str, make: Callable[[], Any], formats: Sequence[str]) -> None:
    from tauk.plot import save

    try:
        fig = make()
    except TaukError as exc:
        idx.skipped.append((name, str(exc)))
        return
    paths = save(fig, idx.out / "figures" / name, formats=formats)
    idx.written += paths
    idx.figures.append((name, FIGURES.get(name, ""), paths))


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

    Figures the data cannot support (one agent: no forest; no costs: no cost plot; …) are skipped and listed in
    the README with the reason.
    """
    import tauk.plot as tp
    from tauk.report_sections.validity import validity_section
    from tauk.stats import as_trials, compare_all, consistency, summarize

    if infra not in ("drop", "fail"):
        raise TaukError(f"infra must be 'drop' or 'fail', got {infra!r}")
    tp.preset(figsize)  # a bad size fails before any work
    fs = {"figsize": figsize}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    trials = as_trials(results)
    runs = getattr(results, "runs", None)
    idx = _Index(out)
    opts = {"infra": infra, "ci": ci, "method": method, "resamples": resamples, "seed": seed}
    kopt = {"k": list(ks)} if ks else {}

    agents = sorted({a for a in trials["agent"].to_list() if a is not None}) if "agent" in trials.columns else []
    domains = sorted({d for d in trials["domain"].to_list() if d is not None}) if "domain" in trials.columns else []
    tp.register_agents(agents)

    # ---- statistics (computed once, shared by tables and figures)
    s_ad = summarize(results, by=("agent", "domain"), **opts, **kopt)
    s_agent = summarize(results, by=("agent",), **opts, **kopt)
    s_run = summarize(results, by=("run_id",), **opts, **kopt)
    cmp_all = cmp_dom = None
    if len(agents) >= 2:
        cmp_all = compare_all(results, k=1, adjust="holm", **opts)
        if len(domains) > 1:
            cmp_dom = compare_all(results, k=1, by="domain", adjust="holm", **opts)

    # ---- tables
    _write_table(idx, "summary_agent_domain", "upstream metrics and pass^k per agent × domain", s_ad.summary())
    _write_table(idx, "summary_agent", "pass^k per agent: the mean of its per-setup figures (the leaderboard's "
                 "convention; setups are never pooled)", overall_table(s_agent))  # fmt: skip
    _write_table(idx, "summary_run", "upstream metrics and pass^k per results file", s_run.summary())
    if cmp_all is not None:
        _write_table(idx, "comparisons", "all pairs of agents, paired on shared tasks (Holm)", cmp_all.summary())
    else:
        idx.skipped.append(("comparisons", "fewer than two agents"))
    if cmp_dom is not None:
        _write_table(idx, "comparisons_by_domain", "all pairs within each domain (Holm over all)", cmp_dom.summary())
    # ---- run-to-run consistency (needs a task with at least two trials)
    cons = consistency(results, by=("agent", "domain"), infra=infra, alpha=round(1.0 - ci, 10))
    multi = cons.frame.height > 0 and (cons.frame["n_trials_max"].max() or 0) >= 2
    if multi:
        _write_table(idx, "consistency", "run-to-run noise per agent × domain: flip rate, ICC, noise floor",
                     cons.summary())  # fmt: skip
    else:
        idx.skipped.append(("consistency", "one trial per task"))

    # ---- task validity (tauk.report_sections.validity)
    sec = validity_section(results, s_ad)
    for name, what, table in sec.tables:
        _write_table(idx, name, what, table)
    idx.skipped += sec.skipped
    idx.sections += sec.markdown

    # ---- figures
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
        ("noise_floor", (lambda: tp.noise_floor(cons, **fs)) if multi else None, "one trial per task"),
        ("flaky_tasks", (lambda: tp.flaky_tasks(cons, **fs)) if multi else None, "one trial per task"),
        ("substantive", (lambda: tp.substantive_estimates(s_ad, **fs)) if any(n == "substantive" for n, _, _ in
         sec.tables) else None, "no task definitions"),
    ]  # fmt: skip
    if leaderboard is not None:
        figs.append(("leaderboard", _leaderboard_maker(leaderboard, s_ad, figsize), ""))
    for name, make, why in figs:
        if make is None:
            idx.skipped.append((name, why))
        else:
            _write_figure(idx, name, make, formats)

    readme = out / "README.md"
    readme.write_text(_readme(idx, trials, runs, opts, s_agent), encoding="utf-8")
    idx.written.append(readme)
    return idx.written


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


def _readme(idx: _Index, trials: pl.DataFrame, runs: pl.DataFrame | None, opts: dict[str, Any], s_agent: Any) -> str:
    n_infra = int(s_agent.groups["infra_error_count"].sum()) if s_agent.groups.height else 0
    L = [
        "# tauk report",
        "",
        f"Written by `tauk report` (tauk {__version__}). Inputs:",
        "",
        *_inputs_text(trials, runs),
        "",
        "Settings: "
        f"{_method_text(opts)}; "
        f"infrastructure errors {'dropped' if opts['infra'] == 'drop' else 'counted as failures'} "
        f"({n_infra} in the data). Success = reward within 1 ± 1e-6; pass^k = mean over tasks of C(c,k)/C(n,k).",
        "",
        markdown_table(overall_table(s_agent), level=2).rstrip(),
        "",
        *idx.sections,
        "## Tables",
        "",
    ]
    for name, what, paths in idx.tables:
        md, tex, csv = paths
        L.append(f"- **{name}** — {what}: [Markdown]({idx.rel(md)}) · [LaTeX]({idx.rel(tex)}) · [CSV]({idx.rel(csv)})")
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
        L += [f"- **{name}**: {why}" for name, why in idx.skipped]
        L.append("")
    return "\n".join(L).rstrip() + "\n"
