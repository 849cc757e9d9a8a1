"""``tauk.audit``: do the recorded COMMUNICATE, ACTION and reward agree with a recomputation (docs/spec.md §2)?

Recorded components compared are the ones that *counted*: the ``reward_breakdown`` entry when the simulation
records a breakdown (else ``recorded_communicate`` / ``recorded_action``).  Check lists recorded for components
outside the reward basis are diagnostics of the grader — in files whose embedded task definitions are not the ones
that were graded (``nonconformant/toolorchestra…``) they were computed against other gold actions — and are
compared separately (``*_diagnostic_mismatch``).  Only simulations whose value could be recomputed (task
definition present, messages recorded) and whose recorded value is present are compared.  With ``replay=True``
DB and ENV_ASSERTION are replayed through τ²-bench's environments (:mod:`tauk.replay`) and compared with the
recorded ``db_check.db_reward`` and ``env_assertions`` (``db_mismatch``, ``env_assertion_mismatch``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from tauk._compat import keyword_options
from tauk.conventions import SUCCESS_TOL
from tauk.errors import TaukError
from tauk.scoring._score import score
from tauk.table import SummaryTable

FIELDS = (
    "run",
    "run_id",
    "n_simulations",
    "n_checked",
    "communicate_mismatch",
    "action_mismatch",
    "reward_mismatch",
    "n_communicate_checked",
    "n_action_checked",
    "n_reward_checked",
    "communicate_diagnostic_mismatch",
    "action_diagnostic_mismatch",
    "n_not_recomputable",
    "db_mismatch",
    "env_assertion_mismatch",
    "n_db_checked",
    "n_env_assertion_checked",
)
_CORE = ("run", "n_checked", "communicate_mismatch", "action_mismatch", "reward_mismatch")
_REPLAYED = ("db_mismatch", "env_assertion_mismatch")
"""Shown (and counted by ``ok``) when the audit replayed DB / ENV_ASSERTION (``replay=True``)."""
_CHECKED = (("COMMUNICATE", "n_communicate_checked"), ("ACTION", "n_action_checked"), ("reward", "n_reward_checked"))
NOT_CHECKED = "not checked"
"""What the audit's table and headline say for a component nothing was compared for (never "0 mismatches")."""


@dataclass(frozen=True)
class Audit:
    """Per-run agreement between the record and the recomputation.  Immutable; build it with :func:`audit`.

    ``to_frame()``: one row per run (``run``, ``run_id``, ``n_simulations``, ``n_checked``,
    ``communicate_mismatch``, ``action_mismatch``, ``reward_mismatch``, per-check counts, diagnostic mismatches).
    ``records()``: the same rows as JSON-ready dicts. ``mismatches()``: one row per disagreement naming the
    simulation. ``summary()``: the shared :class:`tauk.table.SummaryTable` (text with ``str``, HTML, LaTeX).
    """

    _runs: pl.DataFrame = field(repr=False)
    _mismatches: pl.DataFrame = field(repr=False)
    _regrade: pl.DataFrame | None = field(default=None, repr=False)

    def to_frame(self) -> pl.DataFrame:
        """One row per run (a copy)."""
        return self._runs.clone()

    def mismatches(self, diagnostic: bool = False) -> pl.DataFrame:
        """``run, run_id, simulation_id, task_id, component, recorded, recomputed`` — ``component`` is
        ``COMMUNICATE``, ``ACTION``, ``REWARD``, ``DB`` or ``ENV_ASSERTION`` (the last two when replayed; with ``diagnostic=True`` also ``COMMUNICATE (diagnostic)`` /
        ``ACTION (diagnostic)``: disagreements with check lists of components outside the basis)."""
        m = self._mismatches
        if not diagnostic:
            m = m.filter(~pl.col("component").str.ends_with("(diagnostic)"))
        return m.clone()

    def records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per run (the rows of :meth:`to_frame`)."""
        return self._runs.to_dicts()

    def regrade(self) -> pl.DataFrame | None:
        """With ``tasks=``: ``run, run_id, regrade_class, n_tasks, n_simulations`` — how many (run, task) pairs and
        simulations fall in each re-grade class (:func:`tauk.tasks.regrade_eligibility`); None without ``tasks=``."""
        return None if self._regrade is None else self._regrade.clone()

    def regrade_summary(self) -> SummaryTable | None:
        """:meth:`regrade` as a :class:`tauk.table.SummaryTable` (None without ``tasks=``)."""
        if self._regrade is None:
            return None
        f = self._regrade
        notes = [
            "re-graded rewards are reported for unchanged and regradable only; needs_replay (DB / ENV_ASSERTION "
            "cannot be carried), needs_judge (live NL assertions), not_comparable (scenario, initial state or "
            "graded definitions differ, or the task is missing) get a null score_reward",
        ]
        return SummaryTable.build(
            f"re-grade eligibility: {int(f['n_tasks'].sum())} (run, task) pair(s), {int(f['n_simulations'].sum())} "
            "simulation(s)", ("run", "regrade_class", "n_tasks", "n_simulations"),
            f.select("run", "regrade_class", "n_tasks", "n_simulations").rows(), notes, keys=2,
        )  # fmt: skip

    @property
    def replayed(self) -> bool:
        """Whether DB / ENV_ASSERTION were replayed (and compared with the record) for some simulation."""
        f = self._runs
        return f.height > 0 and int(f.select(pl.sum_horizontal("n_db_checked", "n_env_assertion_checked").sum())
                                    .item()) > 0  # fmt: skip

    def _core(self) -> tuple[str, ...]:
        return _CORE + _REPLAYED if self.replayed else _CORE

    @property
    def ok(self) -> bool:
        """True when no run has a COMMUNICATE, ACTION, reward (or, replayed, DB / ENV_ASSERTION) mismatch."""
        f = self._runs
        return f.height == 0 or int(f.select(pl.sum_horizontal(*self._core()[2:]).sum()).item()) == 0

    def totals(self) -> dict[str, int]:
        """``n_checked`` and the mismatch counts (DB / ENV_ASSERTION too when replayed), summed over the runs."""
        return {c: int(self._runs.get_column(c).sum()) for c in self._core()[1:]}

    def not_checked(self) -> list[str]:
        """The components (``COMMUNICATE``, ``ACTION``, ``reward``) no simulation of any run could be compared for:
        their mismatch count of 0 says nothing.

        Examples
        --------
        >>> import tauk
        >>> tauk.audit(tauk.load("data")).not_checked()
        []
        """
        return [name for name, col in _CHECKED if int(self._runs.get_column(col).sum()) == 0]

    def summary(self, fmt: str | None = None) -> SummaryTable:
        """The per-run table as a :class:`tauk.table.SummaryTable`: ``str()`` for text, ``_repr_html_()``,
        ``to_latex()``.

        ``fmt`` (``"text"``, ``"html"``, ``"latex"``) is deprecated: it returns that rendering as a string, as
        before, with a :class:`DeprecationWarning`.

        Examples
        --------
        >>> import tauk
        >>> table = tauk.audit(tauk.load("data")).summary()
        >>> table.columns
        ('run', 'n_checked', 'communicate_mismatch', 'action_mismatch', 'reward_mismatch')
        >>> print(table.title)
        tauk audit: 6 run(s); mismatches / checked: COMMUNICATE 0/550, ACTION 0/78, reward 0/600
        """
        t = self.totals()
        f = self._runs
        checked, unchecked = [], []
        for (name, col), mm in zip(_CHECKED, _CORE[2:]):
            n = int(f.get_column(col).sum())
            (checked.append(f"{name} {t[mm]}/{n}") if n else unchecked.append(name))
        title = f"tauk audit: {f.height} run(s)"
        if checked:
            title += "; mismatches / checked: " + ", ".join(checked)
        if unchecked:
            title += f"; {', '.join(unchecked)} {NOT_CHECKED}"
        notes = []
        core = self._core()
        if self.replayed:
            n = {c: int(f.get_column(c).sum()) for c in ("n_db_checked", "n_env_assertion_checked")}
            title += (f"; replayed: DB {t['db_mismatch']}/{n['n_db_checked']}, "
                      f"ENV_ASSERTION {t['env_assertion_mismatch']}/{n['n_env_assertion_checked']}")  # fmt: skip
            notes.append(
                f"DB and ENV_ASSERTION replayed through τ²-bench's environments and compared with the record on "
                f"{n['n_db_checked']} / {n['n_env_assertion_checked']} simulation(s); the reward is recomputed "
                "from the replayed verdicts"
            )
        unseen = int(f.get_column("n_not_recomputable").sum())
        if unseen:
            notes.append(f"{unseen} simulation(s) not recomputed in full (no task definition, no messages or ticks, or "
                         "no recorded reward info for DB / ENV_ASSERTION / NL_ASSERTION)")  # fmt: skip
        diag = {c: int(self._runs.get_column(c).sum()) for c in ("communicate_diagnostic_mismatch",
                                                                  "action_diagnostic_mismatch")}  # fmt: skip
        if any(diag.values()):
            notes.append(
                f"check lists outside the reward basis disagree too (diagnostic): COMMUNICATE "
                f"{diag['communicate_diagnostic_mismatch']}, ACTION {diag['action_diagnostic_mismatch']}"
            )
        if self._regrade is not None:
            counts = self._regrade.group_by("regrade_class").agg(pl.col("n_tasks").sum())
            by = dict(counts.rows())
            from tauk.tasks import REGRADE_CLASSES

            notes.append("re-grade against other definitions, (run, task) pairs by class: " + ", ".join(
                f"{c} {by.get(c, 0)}" for c in REGRADE_CLASSES) + " (only unchanged and regradable are re-graded)")  # fmt: skip
        checked_cols = (*_CHECKED, ("DB", "n_db_checked"), ("ENV_ASSERTION", "n_env_assertion_checked"))
        rows = [
            [r["run"], r["n_checked"], *(r[mm] if r[col] else NOT_CHECKED for (_, col), mm in zip(checked_cols, core[2:]))]
            for r in f.iter_rows(named=True)
        ]
        table = SummaryTable.build(title, core, rows, notes, align="l" + "r" * (len(core) - 1))
        if fmt is None:
            return table
        warnings.warn(
            "Audit.summary(fmt) is deprecated; Audit.summary() returns a SummaryTable: use str(table), "
            "table._repr_html_() or table.to_latex()",
            DeprecationWarning,
            stacklevel=2,
        )
        renderers = {"text": str, "html": SummaryTable._repr_html_, "latex": SummaryTable.to_latex}
        if fmt not in renderers:
            raise TaukError(f"fmt must be 'text', 'html' or 'latex', not {fmt!r}")
        return renderers[fmt](table)  # type: ignore[return-value]

    def __str__(self) -> str:
        return str(self.summary())

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()


def _breakdown(tr: pl.DataFrame, key: str, fallback: str) -> pl.Expr:
    fb = pl.col(fallback).cast(pl.Float64) if fallback in tr.columns else pl.lit(None, pl.Float64)
    if "reward_breakdown" not in tr.columns:
        return fb
    bd = pl.col("reward_breakdown")
    return pl.when(bd.is_not_null()).then(bd.str.json_path_match(f"$.{key}").cast(pl.Float64, strict=False)).otherwise(fb)


@keyword_options(("results", "tasks"))
def audit(results: Any, *, tasks: Any = None, replay: Any = None) -> Audit:
    """Recompute COMMUNICATE, ACTION and the reward (``evaluation="all"``) and count, per run, the simulations
    whose recorded values disagree (only where the recorded value is present and the recomputation possible).

    Parameters
    ----------
    results
        A :class:`tauk.Results` (as for :func:`tauk.score`).
    tasks
        Optional other task definitions (as for :func:`tauk.score`).
    replay
        ``True`` (or a :func:`tauk.replay.replay` frame): DB and ENV_ASSERTION replayed through τ²-bench's
        environments too, compared with the recorded ``db_check`` / ``env_assertions`` (``db_mismatch``,
        ``env_assertion_mismatch``), and the reward recomputed from them.

    Returns
    -------
    Audit
        ``ok``, ``totals()``, ``to_frame()`` / ``records()`` (per run), ``mismatches()``, ``summary()``.

    Examples
    --------
    >>> import tauk
    >>> a = tauk.audit(tauk.load("data"))
    >>> a.ok, a.totals()
    (True, {'n_checked': 600, 'communicate_mismatch': 0, 'action_mismatch': 0, 'reward_mismatch': 0})
    """
    return audit_scored(score(results, evaluation="all", tasks=tasks, replay=replay), getattr(results, "runs", None))


def audit_scored(s: pl.DataFrame, runs: pl.DataFrame | None = None) -> Audit:
    """The audit of an already scored frame (``tauk.score(..., evaluation="all")``, e.g. scored part by part on a
    cluster); ``runs`` names the runs (their ``source``).

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data/baseline_airline.json")
    >>> audit_scored(tauk.score(res), res.runs).totals() == tauk.audit(res).totals()
    True
    """
    rc = _breakdown(s, "COMMUNICATE", "recorded_communicate")
    ra = _breakdown(s, "ACTION", "recorded_action")
    diag_c = pl.col("recorded_communicate") if "recorded_communicate" in s.columns else pl.lit(None, pl.Float64)
    diag_a = pl.col("recorded_action") if "recorded_action" in s.columns else pl.lit(None, pl.Float64)
    comm_ok = pl.col("communicate_source") == "recomputed"
    act_ok = pl.col("action_source") == "recomputed"
    rew = pl.col("reward") if "reward" in s.columns else pl.lit(None, pl.Float64)
    rec_db = pl.col("recorded_db") if "recorded_db" in s.columns else pl.lit(None, pl.Float64)
    rec_env = pl.col("recorded_env_assertion") if "recorded_env_assertion" in s.columns else pl.lit(None, pl.Float64)
    db_rep = (pl.col("db_source") == "replayed") if "db_source" in s.columns else pl.lit(False)
    env_rep = (pl.col("env_assertion_source") == "replayed") if "env_assertion_source" in s.columns else pl.lit(False)
    s = s.with_columns(
        _rdb=rec_db,
        _renv=rec_env,
        _db_chk=(db_rep & rec_db.is_not_null()).fill_null(False),
        _env_chk=(env_rep & rec_env.is_not_null()).fill_null(False),
        _rc=rc,
        _ra=ra,
        _c_chk=(comm_ok & rc.is_not_null()).fill_null(False),
        _a_chk=(act_ok & ra.is_not_null()).fill_null(False),
        _r_chk=(rew.is_not_null() & pl.col("score_reward").is_not_null()).fill_null(False),
        _cd_chk=(comm_ok & diag_c.is_not_null()).fill_null(False),
        _ad_chk=(act_ok & diag_a.is_not_null()).fill_null(False),
        _rdc=diag_c,
        _rda=diag_a,
        _rr=rew,
    ).with_columns(
        _c_mm=pl.col("_c_chk") & ((pl.col("communicate") - pl.col("_rc")).abs() > SUCCESS_TOL),
        _a_mm=pl.col("_a_chk") & ((pl.col("action") - pl.col("_ra")).abs() > SUCCESS_TOL),
        _r_mm=pl.col("_r_chk") & ((pl.col("score_reward") - pl.col("_rr")).abs() > SUCCESS_TOL),
        _cd_mm=pl.col("_cd_chk") & ((pl.col("communicate") - pl.col("_rdc")).abs() > SUCCESS_TOL),
        _ad_mm=pl.col("_ad_chk") & ((pl.col("action") - pl.col("_rda")).abs() > SUCCESS_TOL),
        _db_mm=pl.col("_db_chk") & ((pl.col("db") - pl.col("_rdb")).abs() > SUCCESS_TOL),
        _env_mm=pl.col("_env_chk") & ((pl.col("env_assertion") - pl.col("_renv")).abs() > SUCCESS_TOL),
    )
    per_run = s.group_by("run_id").agg(
        n_simulations=pl.len(),
        n_checked=pl.any_horizontal("_c_chk", "_a_chk", "_r_chk").sum(),
        communicate_mismatch=pl.col("_c_mm").sum(),
        action_mismatch=pl.col("_a_mm").sum(),
        reward_mismatch=pl.col("_r_mm").sum(),
        n_communicate_checked=pl.col("_c_chk").sum(),
        n_action_checked=pl.col("_a_chk").sum(),
        n_reward_checked=pl.col("_r_chk").sum(),
        communicate_diagnostic_mismatch=pl.col("_cd_mm").sum(),
        action_diagnostic_mismatch=pl.col("_ad_mm").sum(),
        n_not_recomputable=(pl.col("score_reward").is_null() | ~comm_ok.fill_null(False)).sum(),
        db_mismatch=pl.col("_db_mm").sum(),
        env_assertion_mismatch=pl.col("_env_mm").sum(),
        n_db_checked=pl.col("_db_chk").sum(),
        n_env_assertion_checked=pl.col("_env_chk").sum(),
    )
    if isinstance(runs, pl.DataFrame) and "run_id" in runs.columns:
        src = pl.col("source") if "source" in runs.columns else pl.col("run_id")
        base = runs.select("run_id", run=src.cast(pl.String))
    else:
        base = s.select("run_id").unique(maintain_order=True).with_columns(run=pl.col("run_id"))
    counts = [c for c in FIELDS if c not in ("run", "run_id")]
    frame = (
        base.join(per_run, on="run_id", how="left")
        .with_columns([pl.col(c).fill_null(0).cast(pl.Int64) for c in counts])
        .select(list(FIELDS))
    )
    run_of = base.select("run_id", "run")
    parts = []
    for flag, comp, rec, new in (
        ("_c_mm", "COMMUNICATE", "_rc", "communicate"),
        ("_a_mm", "ACTION", "_ra", "action"),
        ("_r_mm", "REWARD", "_rr", "score_reward"),
        ("_cd_mm", "COMMUNICATE (diagnostic)", "_rdc", "communicate"),
        ("_ad_mm", "ACTION (diagnostic)", "_rda", "action"),
        ("_db_mm", "DB", "_rdb", "db"),
        ("_env_mm", "ENV_ASSERTION", "_renv", "env_assertion"),
    ):
        parts.append(
            s.filter(pl.col(flag)).select(
                "run_id",
                "simulation_id",
                "task_id",
                component=pl.lit(comp),
                recorded=pl.col(rec).cast(pl.Float64),
                recomputed=pl.col(new).cast(pl.Float64),
            )
        )
    mm = pl.concat(parts).join(run_of, on="run_id", how="left").select(
        "run", "run_id", "simulation_id", "task_id", "component", "recorded", "recomputed"
    )
    regrade = None
    if "regrade_class" in s.columns and s.get_column("regrade_class").null_count() < s.height:
        from tauk.tasks import REGRADE_CLASSES

        order = pl.col("regrade_class").replace_strict({c: i for i, c in enumerate(REGRADE_CLASSES)}, default=99)
        regrade = (
            s.group_by("run_id", "regrade_class")
            .agg(n_tasks=pl.col("task_id").n_unique().cast(pl.Int64), n_simulations=pl.len().cast(pl.Int64))
            .join(run_of, on="run_id", how="left")
            .sort("run_id", order)
            .select("run", "run_id", "regrade_class", "n_tasks", "n_simulations")
        )
    return Audit(frame, mm, regrade)
