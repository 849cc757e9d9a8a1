"""``tauk.widgets.comparison``: pick two agents → the paired comparison table and the forest plot."""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from tauk import plot, stats
from tauk.conventions import CI_LEVEL, CI_METHOD, INFRA, RESAMPLES, SEED
from tauk.errors import TaukError

from ._common import WidgetBase, check_choice, error_html, show_figure, show_text, trials_of
from .explorer import INFRA_CHOICES

__all__ = ["ComparisonWidget", "comparison", "comparison_html"]


def comparison_html(result: stats.Comparison) -> str:
    """The HTML of a :class:`~tauk.stats.Comparison` summary table."""
    return result.summary()._repr_html_()


class ComparisonWidget(WidgetBase):
    """Widgets ``a``, ``b`` (agents), ``k``, ``infra``, ``by_domain``, ``table`` (HTML of
    :func:`tauk.stats.compare`'s summary), ``status`` and ``output`` (the forest plot).

    Results are cached per (a, b, k, infra, by); ``n_computed`` counts the comparisons computed.
    """

    def __init__(self, results: Any, *, a: str | None = None, b: str | None = None, k: int = 1, by_domain: bool = True,
                 ci: float = CI_LEVEL, method: str = CI_METHOD, resamples: int = RESAMPLES,
                 seed: int | None = SEED):  # fmt: skip
        self.results = results
        trials = trials_of(results, "widgets.comparison", ("agent", "task_id"))
        self._trials = trials
        self.ci, self.method, self.resamples, self.seed = ci, method, resamples, seed
        agents = sorted({str(x) for x in trials["agent"].to_list() if x is not None})
        if len(agents) < 2:
            raise TaukError(f"a comparison needs at least two agents; the results have {agents}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise TaukError(f"k must be a whole number ≥ 1, got {k!r}")
        for name, value in (("a", a), ("b", b)):
            if value is not None:
                check_choice(name, value, agents, "agents in the results")
        a = a if a is not None else agents[0]
        b = b if b is not None else next(x for x in agents if x != a)
        per_task = trials.group_by("run_id", "task_id").len()["len"]
        kmax = max(1, int(per_task.max() or 1))
        self.a = w.Dropdown(options=agents, value=a, description="agent A")
        self.b = w.Dropdown(options=agents, value=b, description="agent B")
        self.k = w.IntSlider(value=min(k, kmax), min=1, max=kmax, description="k", continuous_update=False)
        self.infra = w.Dropdown(options=INFRA_CHOICES, value=INFRA, description="infra", layout=w.Layout(width="340px"))
        self.by_domain = w.Checkbox(value=by_domain, description="split by domain")
        self.table = w.HTML()
        self.status = w.HTML()
        self.output = w.Output()
        self.widget = w.VBox([
            w.HBox([self.a, self.b]), w.HBox([self.k, self.by_domain]), self.infra, self.status, self.table, self.output
        ])
        self._cache: dict[tuple, stats.Comparison] = {}
        self.n_computed = 0
        self.comparison: stats.Comparison | None = None
        self.figure_png: bytes | None = None
        for c in (self.a, self.b, self.k, self.infra, self.by_domain):
            c.observe(self._on_change, names="value")
        self.refresh()

    def compute(self) -> stats.Comparison:
        """:func:`tauk.stats.compare` of the current choice, cached."""
        by = "domain" if self.by_domain.value else None
        key = (self.a.value, self.b.value, int(self.k.value), self.infra.value, by)
        if key not in self._cache:
            a, b, k, infra, _ = key
            opts = dict(k=k, by=by, infra=infra, ci=self.ci, method=self.method, resamples=self.resamples,
                        seed=self.seed, progress=False)
            self._cache[key] = stats.compare(self._trials, a, b, **opts)
            self.n_computed += 1
        return self._cache[key]

    def _on_change(self, change: Any = None) -> None:
        self.refresh()

    def refresh(self) -> None:
        if self.a.value == self.b.value:
            self.comparison = None
            self.status.value = "<i>pick two different agents</i>"
            self.table.value = ""
            show_text(self.output, "pick two different agents")
            return
        try:
            cmp = self.compute()
        except Exception as exc:
            self.comparison = None
            self.status.value = error_html(exc)
            self.table.value = ""
            show_text(self.output, "no comparison")
            return
        self.comparison = cmp
        self.status.value = ""
        self.table.value = comparison_html(cmp)
        try:  # drawing happens on saving: errors there are shown too, never raised into the notebook
            self.figure_png = show_figure(self.output, plot.forest(cmp), alt="forest")
        except Exception as exc:
            self.figure_png = None
            show_text(self.output, f"could not draw the forest plot: {type(exc).__name__}: {exc}")


def comparison(results: Any, **kwargs: Any) -> ComparisonWidget:
    """Compare two agents of ``results`` (a :class:`tauk.Results` or trials frame) on their shared tasks.

    Options: ``a``, ``b`` (initial agents), ``k`` (default 1), ``by_domain`` (default True), ``ci``, ``method``,
    ``resamples``, ``seed`` (defaults from :mod:`tauk.conventions`). An agent not in the results, or fewer than two
    agents, raise :class:`tauk.TaukError` naming the agents present."""
    return ComparisonWidget(results, **kwargs)
