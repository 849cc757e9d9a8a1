"""``tauk.widgets.explorer``: pick agents, domains, k, the infra convention and the evaluation → table + figure.

The expensive part (the task bootstrap behind every interval) runs once per (selection of runs, infra,
evaluation, reward basis): :func:`tauk.stats.summarize` is asked for every k at once, and moving the k slider or
changing the figure only re-slices that cached :class:`~tauk.stats.Summary` and redraws.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

import ipywidgets as w
import polars as pl

from tauk import plot, scoring, stats
from tauk.conventions import CI_LEVEL, CI_METHOD, INFRA, INFRA_RULES, RESAMPLES, SEED

from ._common import WidgetBase, check_choice, error_html, esc, show_figure, show_text, trials_of

__all__ = ["Explorer", "explorer", "summary_html", "NO_DOMAIN", "BASIS_CHOICES", "FIGURES"]

NO_DOMAIN = "(no domain)"
_INFRA_LABELS = {"drop": "drop infra errors (τ²-bench ≥ 1.0)", "fail": "count infra errors as failures"}
INFRA_CHOICES = [(_INFRA_LABELS[rule], rule) for rule in INFRA_RULES]
RECORDED = "recorded"

BASIS_CHOICES: tuple[tuple[str, str], ...] = (
    ("each task's own", ""),
    ("DB", "DB"),
    ("COMMUNICATE", "COMMUNICATE"),
    ("ACTION", "ACTION"),
    ("DB × COMMUNICATE", "DB+COMMUNICATE"),
    ("DB × ACTION", "DB+ACTION"),
    ("DB × COMMUNICATE × ACTION", "DB+COMMUNICATE+ACTION"),
    ("ACTION × COMMUNICATE", "ACTION+COMMUNICATE"),
)
"""Reward-basis overrides offered by the explorer (label, components joined by ``+``); ``""`` keeps each task's own
basis. Any other ``"A+B"`` string may be set on ``Explorer.reward_basis.options`` too."""

FIGURES: tuple[tuple[str, str], ...] = (
    ("pass^k at k, by domain", "domain_estimates"),
    ("pass^k curve (every k)", "pass_k_curve"),
    ("cost vs pass^k at k", "cost_vs_pass"),
)
"""Figures the explorer can draw (label, ``tauk.plot`` function name)."""


def summary_html(summary: stats.Summary, k: int | None = None) -> str:
    """The HTML table of a :class:`~tauk.stats.Summary`, restricted to one ``k`` (all k when ``None``)."""
    if k is not None:
        summary = dataclasses.replace(summary, pass_hat_k=summary.pass_hat_k.filter(pl.col("k") == int(k)))
    return summary.summary()._repr_html_()


def _labels(values: Sequence[Any]) -> list[str]:
    return sorted({NO_DOMAIN if v is None else str(v) for v in values})


class Explorer(WidgetBase):
    """The explorer's widgets (``agents``, ``domains``, ``k``, ``infra``, ``evaluation``, ``reward_basis``,
    ``figure``, ``table``, ``status``, ``output``) and its cache of summaries.

    Drive it from Python by setting a child's ``value``; the observers recompute (or re-slice) at once.
    ``n_computed`` counts the calls to :func:`tauk.stats.summarize` (the bootstrap), ``n_drawn`` the figures drawn.
    """

    def __init__(
        self,
        results: Any,
        *,
        by: Sequence[str] = ("agent", "domain"),
        ci: float | None = CI_LEVEL,
        method: str = CI_METHOD,
        resamples: int = RESAMPLES,
        seed: int | None = SEED,
        figure: str = "domain_estimates",
    ):
        self.results = results
        self.by = (by,) if isinstance(by, str) else tuple(by)
        self.ci, self.method, self.resamples, self.seed = ci, method, resamples, seed
        trials = trials_of(results, "widgets.explorer", ("agent", "domain", "task_id", *self.by))
        check_choice("figure", figure, [name for _, name in FIGURES], "figures the explorer draws")
        self._trials = trials
        self._cache: dict[tuple, stats.Summary] = {}
        self._scored: dict[tuple, pl.DataFrame] = {}
        self._marks: Any = None  # the results' inaction verdicts (their embedded task definitions), found once
        self.n_computed = 0
        self.n_drawn = 0
        self.summary: stats.Summary | None = None
        self.figure_png: bytes | None = None
        self._busy = False

        agents = _labels(trials["agent"].to_list())
        domains = _labels(trials["domain"].to_list())
        pick = w.Layout(width="260px")
        wide = w.Layout(width="340px")
        style = {"description_width": "80px"}
        self.agents = w.SelectMultiple(options=agents, value=tuple(agents), rows=min(6, max(3, len(agents))),
                                       description="agents", layout=pick, style=style)
        self.domains = w.SelectMultiple(options=domains, value=tuple(domains), rows=min(6, max(3, len(domains))),
                                        description="domains", layout=pick, style=style)
        self.k = w.IntSlider(value=1, min=1, max=1, description="k", continuous_update=False, layout=wide, style=style)
        self.infra = w.Dropdown(options=INFRA_CHOICES, value=INFRA, description="infra", layout=wide, style=style)
        self.evaluation = w.Dropdown(options=[("recorded reward", RECORDED), *[(e, e) for e in scoring.EVALUATION_TYPES]],
                                     value=RECORDED, description="evaluation", layout=wide, style=style)
        self.reward_basis = w.Dropdown(options=list(BASIS_CHOICES), value="", description="basis", disabled=True,
                                       layout=wide, style=style)
        self.figure = w.Dropdown(options=list(FIGURES), value=figure, description="figure", layout=wide, style=style)
        self.table = w.HTML()
        self.status = w.HTML()
        self.output = w.Output()
        controls = w.HBox([
            w.VBox([self.agents, self.domains]),
            w.VBox([self.k, self.infra, self.evaluation, self.reward_basis, self.figure]),
        ])
        self.widget = w.VBox([controls, self.status, self.table, self.output])

        for c in (self.agents, self.domains, self.infra, self.evaluation, self.reward_basis):
            c.observe(self._on_selection, names="value")
        self.k.observe(self._on_k, names="value")
        self.figure.observe(self._on_k, names="value")
        self.refresh()

    # -- data ----------------------------------------------------------------------------------------------
    def _key(self) -> tuple:
        basis = self.reward_basis.value if self.evaluation.value != RECORDED else ""
        return (tuple(sorted(self.agents.value)), tuple(sorted(self.domains.value)), self.infra.value,
                self.evaluation.value, basis)

    def _trials_for(self, evaluation: str, basis: str) -> pl.DataFrame:
        if evaluation == RECORDED:
            return self._trials
        key = (evaluation, basis)
        if key not in self._scored:
            scored = scoring.score(self.results, evaluation=evaluation, reward_basis=basis.split("+") if basis else None)
            self._scored[key] = scored.with_columns(pl.col("score_reward").alias("reward"))
        return self._scored[key]

    def _select(self, trials: pl.DataFrame, agents: Sequence[str], domains: Sequence[str]) -> pl.DataFrame:
        dom = [d for d in domains if d != NO_DOMAIN]
        keep_dom = pl.col("domain").is_in(dom)
        if NO_DOMAIN in domains:
            keep_dom = keep_dom | pl.col("domain").is_null()
        return trials.filter(pl.col("agent").cast(pl.String).is_in(list(agents)) & keep_dom.fill_null(False))

    def compute(self) -> stats.Summary:
        """The Summary (every k) of the current selection, from the cache when it was computed before."""
        key = self._key()
        if key not in self._cache:
            agents, domains, infra, evaluation, basis = key
            trials = self._select(self._trials_for(evaluation, basis), agents, domains)
            self._cache[key] = stats.summarize(trials, by=self.by, infra=infra, ci=self.ci, method=self.method,
                                               resamples=self.resamples, seed=self.seed, progress=False,
                                               marks=self._task_marks())  # fmt: skip
            self.n_computed += 1
        return self._cache[key]

    def _task_marks(self) -> Any:
        """The inaction verdicts of the results' own task definitions, as :func:`tauk.stats.summarize` of the
        results finds them (a selection is a trials frame, which carries none: its substantive figures were null
        while the library's, for the same selection, were not); None for a trials frame given."""
        if isinstance(self.results, pl.DataFrame):
            return None
        if self._marks is None:
            from tauk.stats.substantive import ResolvedMarks

            self._marks = ResolvedMarks.of(self.results)
        return self._marks

    @contextlib.contextmanager
    def hold(self) -> Iterator[Explorer]:
        """Change several controls at once and compute once, on leaving the ``with`` block::

            with ex.hold():
                ex.evaluation.value = "all"
                ex.reward_basis.value = "DB+COMMUNICATE+ACTION"
        """
        busy, self._busy = self._busy, True
        try:
            yield self
        finally:
            self._busy = busy
        if not busy:
            self.refresh()

    # -- events --------------------------------------------------------------------------------------------
    def _on_selection(self, change: Any = None) -> None:
        if not self._busy:
            self.refresh()

    def _on_k(self, change: Any = None) -> None:
        if not self._busy:
            self.render()

    def refresh(self) -> None:
        """Recompute (or fetch from the cache) for the current selection, then render."""
        self.reward_basis.disabled = self.evaluation.value == RECORDED
        if not self.agents.value or not self.domains.value:
            self.summary = None
            self.status.value = "<i>select at least one agent and one domain</i>"
            self.table.value = ""
            show_text(self.output, "nothing selected")
            return
        try:
            summary = self.compute()
        except Exception as exc:  # shown in the widget: e.g. the safety rule of an evaluation type
            self.summary = None
            self.status.value = error_html(exc)
            self.table.value = ""
            show_text(self.output, "no figure: the selection could not be summarised")
            return
        self.summary = summary
        ks = summary.pass_hat_k["k"].to_list()
        kmax = max(ks) if ks else 1
        self._busy = True
        try:
            if self.k.value > kmax:
                self.k.value = kmax
            self.k.max = kmax
        finally:
            self._busy = False
        n_sims = int(summary.groups["n_simulations"].sum()) if summary.groups.height else 0
        infra_n = int(summary.groups["infra_error_count"].sum()) if summary.groups.height else 0
        self.status.value = (
            f"<span class='tauk-status'>{summary.groups.height} group(s), {n_sims} simulation(s) kept, "
            f"{infra_n} infra error(s) ({esc(self.infra.value)}); evaluation: {esc(self.evaluation.value)}"
            f"{'' if self.evaluation.value == RECORDED else ', basis: ' + esc(self.reward_basis.label)}</span>"
        )
        self.render()

    def render(self) -> None:
        """Re-slice the cached Summary at the current k and redraw the figure (no bootstrap here)."""
        if self.summary is None:
            return
        k = int(self.k.value)
        self.table.value = summary_html(self.summary, k)
        name = self.figure.value
        fn = getattr(plot, name)
        try:  # drawing happens on saving: errors there are shown too, never raised into the notebook
            fig = fn(self.summary) if name == "pass_k_curve" else fn(self.summary, k=k)
            self.figure_png = show_figure(self.output, fig, alt=name)
        except Exception as exc:
            self.figure_png = None
            show_text(self.output, f"could not draw {name}: {type(exc).__name__}: {exc}")
            return
        self.n_drawn += 1


def explorer(results: Any, **kwargs: Any) -> Explorer:
    """An interactive pass^k explorer of ``results`` (a :class:`tauk.Results` or a trials frame).

    Keyword options: ``by`` (default ``("agent", "domain")``), ``ci``, ``method``, ``resamples``,
    ``seed`` (defaults from :mod:`tauk.conventions`), ``figure`` (one of :data:`FIGURES`' names). Input it cannot use (another object, a missing column, an
    unknown figure) raises :class:`tauk.TaukError` saying what is available.
    """
    return Explorer(results, **kwargs)
