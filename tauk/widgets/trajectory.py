"""``tauk.widgets.trajectory_viewer``: one simulation's conversation, its tool calls and why it failed.

The widget picks a run, task and trial and shows the HTML of :func:`render_trajectory` (a pure function, frames or
dicts in, an HTML string out, in ``tauk.widgets._trajectory_html``, imported here). Every piece of text that comes
from a results file — message content, tool names, arguments, results, check strings, ids — is HTML-escaped: model
output is untrusted.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w
import polars as pl

from tauk import scoring
from tauk.conventions import NORMAL_ENDINGS, success_expr
from tauk.errors import TaukError

from ._common import WidgetBase, check_choice, error_html
from ._trajectory_html import MAX_CHARS, failure_reasons, render_trajectory

__all__ = ["TrajectoryViewer", "trajectory_viewer", "render_trajectory", "failure_reasons", "NORMAL_ENDINGS"]


# ------------------------------------------------------------------------------------------------ widget
def _task_sort_key(t: Any) -> tuple:
    s = str(t)
    return (0, int(s), s) if s.isdigit() else (1, 0, s)


class TrajectoryViewer(WidgetBase):
    """Widgets ``run``, ``task``, ``trial`` (value = simulation_id), ``failures_only`` and ``html`` (the rendered
    conversation). ``scored`` is :func:`tauk.score` of the results (computed once when not given)."""

    def __init__(self, results: Any, scored: pl.DataFrame | None = None, *, failures_only: bool = False,
                 max_chars: int | None = MAX_CHARS):  # fmt: skip
        if not all(hasattr(results, a) for a in ("runs", "trials", "messages", "tool_calls")):
            raise TaukError("widgets.trajectory_viewer takes a tauk.Results (tauk.load(...)): it reads the messages, "
                            f"which a {type(results).__name__} does not carry")  # fmt: skip
        if max_chars is not None and (isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1):
            raise TaukError(f"max_chars must be a whole number ≥ 1 or None, got {max_chars!r}")
        self.results = results
        self.max_chars = max_chars
        self._checks: tuple[pl.DataFrame, pl.DataFrame] | None = None
        self.scored = scored if scored is not None else scoring.score(results)
        sc = self.scored
        if "score_reward" not in sc.columns:
            sc = sc.with_columns(pl.col("reward").alias("score_reward"))
        if "failure" not in sc.columns:
            sc = sc.with_columns(pl.lit(None, pl.String).alias("failure"))
        self._table = sc.with_columns(success_expr("score_reward").alias("_ok"))
        runs = results.runs
        run_opts = []
        for r in runs.iter_rows(named=True):
            extra = ", ".join(str(r[c]) for c in ("agent", "domain") if r.get(c))
            run_opts.append((f"{r['run_id']} ({extra})" if extra else str(r["run_id"]), r["run_id"]))
        self.run = w.Dropdown(options=run_opts, description="run", layout=w.Layout(width="auto"))
        self.failures_only = w.Checkbox(value=failures_only, description="failures only")
        self.task = w.Dropdown(options=[], description="task")
        self.trial = w.Dropdown(options=[], description="trial", layout=w.Layout(width="auto"))
        self.html = w.HTML()
        self.widget = w.VBox([w.HBox([self.run, self.failures_only]), w.HBox([self.task, self.trial]), self.html])
        self._busy = False
        self.run.observe(self._on_run, names="value")
        self.failures_only.observe(self._on_run, names="value")
        self.task.observe(self._on_task, names="value")
        self.trial.observe(self._on_trial, names="value")
        self._on_run()

    # -- data ----------------------------------------------------------------------------------------------
    @property
    def checks(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(communicate_checks, action_checks) of the whole results, computed on first use."""
        if self._checks is None:
            self._checks = (scoring.communicate_checks(self.results), scoring.action_checks(self.results))
        return self._checks

    @property
    def deviations(self) -> pl.DataFrame | None:
        """:func:`tauk.scoring.deviations` of the whole results (computed on first use; None if they cannot be)."""
        if not hasattr(self, "_deviations"):
            try:
                self._deviations = scoring.deviations(self.results)
            except TaukError:
                self._deviations = None
        return self._deviations

    def _run_rows(self) -> pl.DataFrame:
        df = self._table.filter(pl.col("run_id") == self.run.value)
        if self.failures_only.value:
            df = df.filter(~pl.col("_ok"))
        return df

    def render(self, run_id: str, simulation_id: str) -> str:
        """The HTML of one simulation (what the widget shows)."""
        key = (pl.col("run_id") == run_id) & (pl.col("simulation_id") == simulation_id)
        rows = self._table.filter(key).drop("_ok")
        trial = rows.row(0, named=True) if rows.height else {"run_id": run_id, "simulation_id": simulation_id}
        comm, acts = self.checks
        devs = self.deviations
        return render_trajectory(
            self.results.messages.filter(key),
            self.results.tool_calls.filter(key),
            trial=trial,
            communicate=comm.filter(key),
            actions=acts.filter(key),
            deviations=devs.filter(key) if devs is not None else None,
            max_chars=self.max_chars,
        )

    # -- events --------------------------------------------------------------------------------------------
    def _on_run(self, change: Any = None) -> None:
        if self._busy:
            return
        df = self._run_rows()
        # counted as tauk.stats counts them (infra="drop", the default): an infrastructure error is no attempt — it
        # was counted as a failed one (2/5 passed where tauk.stats.per_task gives 2/3) — and is named apart
        infra = pl.col("is_infra_error").fill_null(False) if "is_infra_error" in df.columns else pl.lit(False)
        per = df.group_by("task_id").agg((~infra).sum().alias("n"), pl.col("_ok").filter(~infra).sum().alias("c"),
                                         infra.sum().alias("m"))  # fmt: skip
        opts = [(f"{t} ({c}/{n} passed{f', {m} infra error(s) not counted' if m else ''})", t) for t, n, c, m in
                sorted(per.iter_rows(), key=lambda r: _task_sort_key(r[0]))]
        self._busy = True
        try:
            self.task.options = opts
            self.task.value = opts[0][1] if opts else None
        finally:
            self._busy = False
        self._on_task()

    def _on_task(self, change: Any = None) -> None:
        if self._busy:
            return
        df = self._run_rows().filter(pl.col("task_id") == self.task.value)
        df = df.sort(pl.col("trial").fill_null(-1), "simulation_id")
        opts = []
        for r in df.iter_rows(named=True):
            mark = "passed" if r["_ok"] else f"failed: {r['failure'] or 'reward < 1'}"
            opts.append((f"trial {r['trial'] if r['trial'] is not None else '?'} — {mark}", r["simulation_id"]))
        self._busy = True
        try:
            self.trial.options = opts
            self.trial.value = opts[0][1] if opts else None
        finally:
            self._busy = False
        self._on_trial()

    def _on_trial(self, change: Any = None) -> None:
        if self._busy:
            return
        if self.trial.value is None:
            self.html.value = "<i>no simulation to show for this selection</i>"
            return
        try:
            self.html.value = self.render(self.run.value, self.trial.value)
        except Exception as exc:
            self.html.value = error_html(exc)

    def show(self, run_id: str, simulation_id: str) -> None:
        """Select one simulation (e.g. the first failure of a frame) in the widgets."""
        rows = self._table.filter((pl.col("run_id") == run_id) & (pl.col("simulation_id") == simulation_id))
        if rows.height == 0:
            runs = [v for _, v in self.run.options]
            if run_id not in runs:
                check_choice("run_id", run_id, runs, "runs of the results")
            raise TaukError(f"no simulation {simulation_id!r} in run {run_id!r}")
        task = rows["task_id"][0]
        if self.failures_only.value and bool(rows["_ok"][0]):
            self.failures_only.value = False
        self.run.value = run_id
        self.task.value = task
        self.trial.value = simulation_id


def trajectory_viewer(results: Any, scored: pl.DataFrame | None = None, **kwargs: Any) -> TrajectoryViewer:
    """Browse the conversations of ``results`` (a :class:`tauk.Results`): pick run, task and trial; the reasons a
    simulation failed are highlighted (unsaid communicate strings, unmatched gold actions, premature endings).
    ``scored``: :func:`tauk.score` output to use (e.g. under another evaluation type); computed when omitted.
    Options: ``failures_only`` (default False), ``max_chars`` (cut long texts; default 4000)."""
    return TrajectoryViewer(results, scored, **kwargs)
