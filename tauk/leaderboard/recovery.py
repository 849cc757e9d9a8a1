r"""Per-task success counts recovered from a leaderboard row's published pass^1 … pass^n.

With T tasks each run n times, pass^k = (1/T) Σ_t C(c_t, k)/C(n, k) depends on the tasks only through the
histogram h_c = #{t : c_t = c}. Each S_k = Σ_c h_c C(c, k) = T·C(n, k)·pass^k is an integer, and the binomial
inversion h_c = Σ_{k ≥ c} (−1)^{k−c} C(k, c) S_k (S_0 = T) makes pass^1 … pass^n and Σ_c h_c = T a triangular
system: the published figures of one row determine its whole histogram. They are rounded, so each S_k lies in an
interval as wide as the rounding (half a unit of the row's last published decimal either way); every integer
combination inside those intervals whose h_c are all ≥ 0 reproduces the row within its rounding, and the search
below enumerates them all (level by level, k = n … 1, pruning on h_k ≥ 0), so

* exactly one histogram → **recovered**: the row's per-task counts, exact;
* several → **ambiguous** (the rounding is too coarse for this T; each is listed). A row whose figures all end in
  .0 reads as rounded to integers (a JSON float keeps no trailing zero); it is read again at one decimal, and a
  unique histogram there is the recovery, with the chance that integer-rounded figures fit it by accident;
* none → **flagged**, with the residual of the nearest histogram in points (the smallest possible max_k |reproduced
  − published| over every integer histogram: a global minimum, not a heuristic), after trying the other
  infrastructure convention (tasks lost whole, tasks one trial short) and the domain's other task sets; a layout
  that reproduces the row is reported with ``false_fit_chance``, the chance that figures of that precision would fit
  it by accident (Π_k min(1, 2·tol·T·C(n, k)/100), an upper bound), because with enough layouts tried something
  always fits;
* rows that do not publish every pass^1 … pass^n (n trials per task) → **insufficient**.

A recovered histogram becomes a :func:`tauk.stats.task_counts` frame (:meth:`Recovery.task_counts`), so every
statistic accepts it. The histogram does not say *which* task had which count, so the task ids are placeholders
unique to the row (``<run_id>:c3-07``: its 8th task with 3 successes) and nothing pairs across rows.

Examples
--------
>>> fit = recover_row({1: 42.0, 2: 27.3, 3: 22.0, 4: 20.0}, tasks=50, trials=4)   # τ-bench gpt-4o airline
>>> fit.status, fit.histogram, fit.decimals
('recovered', (14, 12, 10, 4, 10), 1)
>>> bad = recover_row({1: 64.2, 2: 58.9, 3: 55.4, 4: 52.1}, tasks=50, trials=4)   # 64.2 is not a multiple of 0.5
>>> bad.status, round(bad.residual, 2)
('flagged', 0.2)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from tauk.conventions import INFRA
from tauk.errors import TaukError
from tauk.io.leaderboard import load_interaction_metrics, load_leaderboard
from tauk.table import SummaryTable

from ._stats import COUNT_COLUMNS, LABEL_COLUMNS
from .choices import STATUSES
from .histogram import (
    HistogramFit,
    Layout,
    fit_histogram,
    published_decimals,
    rounding_tolerance,
)
from .task_sets import alternative_tasks, default_tasks

__all__ = [
    "Layout",
    "HistogramFit",
    "RowRecovery",
    "Recovery",
    "STATUSES",
    "published_decimals",
    "rounding_tolerance",
    "fit_histogram",
    "recover_row",
    "recover",
    "histogram_counts",
    "PUBLISHED_SETUP_FIELDS",
]

PUBLISHED_SETUP_FIELDS = ("user_simulator", "tau2_bench_version", "retrieval_config")
"""The published fields of a row that are part of its setup (``Recovery.meta`` keeps them per row): rows that differ
in one are not runs of one experiment, whatever their domain and modality."""

_SHORT_MAX = 3  # tasks one trial short tried under the drop convention
_LOST_MAX = 3  # tasks lost whole tried under the drop convention
PLAUSIBLE_CHANCE = 0.05
"""An alternative layout that fits is reported as an explanation only when figures of this precision would fit it by
accident with probability at most this (else it is listed as uninformative)."""


# ------------------------------------------------------------------------------------------------ one row
@dataclass(frozen=True)
class RowRecovery:
    """The recovery of one row: ``status`` (one of :data:`STATUSES`), the ``fit`` under the published layout, the
    ``alternatives`` that reproduce a flagged row (each a :class:`HistogramFit`), every layout ``tried``, the row's
    ``decimals`` and ``tolerance`` (points) and a ``note``."""

    status: str
    published: tuple[tuple[int, float], ...]
    layout: Layout | None
    fit: HistogramFit | None
    alternatives: tuple[HistogramFit, ...] = ()
    tried: tuple[str, ...] = ()
    decimals: int = 0
    tolerance: float = 0.0
    note: str | None = None

    @property
    def cells(self) -> tuple[tuple[int, int, int], ...] | None:
        """The recovered histogram as ``((trials, successes, tasks), …)`` (None unless recovered)."""
        return self.fit.histograms[0] if self.status == "recovered" and self.fit else None

    @property
    def histogram(self) -> tuple[int, ...] | None:
        """h_0 … h_n of the recovered histogram (None unless recovered)."""
        cells = self.cells
        return None if cells is None else tuple(h for _, _, h in cells)

    @property
    def residual(self) -> float | None:
        """max_k |reproduced − published| (points) of the recovered histogram, else of the nearest one."""
        return None if self.fit is None else self.fit.residual

    @property
    def explanation(self) -> HistogramFit | None:
        """The most telling alternative that reproduces a flagged row (lowest false-fit chance, at most
        :data:`PLAUSIBLE_CHANCE`), else None."""
        ok = [a for a in self.alternatives if a.false_fit_chance <= PLAUSIBLE_CHANCE]
        return min(ok, key=lambda a: a.false_fit_chance) if ok else None


def recover_row(published: Mapping[int, float | None], *, tasks: int, trials: int, domain: str | None = None,
                decimals: int | None = None, tolerance: float | None = None,
                alternatives: bool = True) -> RowRecovery:  # fmt: skip
    """Recover one row's histogram from ``published`` ({k: percentage}); see the module docs.

    ``tasks``/``trials``: the published layout (T, n); ``domain`` names the other task sets to try; ``decimals`` /
    ``tolerance`` override the rounding read from the figures (``tolerance`` in points).
    """
    pub = {int(k): float(v) for k, v in published.items() if v is not None and not math.isnan(float(v))}  # NaN: unpublished
    d = published_decimals(pub.values()) if decimals is None else int(decimals)
    tol = rounding_tolerance(d) if tolerance is None else float(tolerance)
    items = tuple(sorted(pub.items()))
    layout = Layout(int(tasks), int(trials))
    missing = [k for k in range(1, trials + 1) if k not in pub]
    if missing:
        ks = ", ".join(f"pass^{k}" for k in sorted(pub)) or "nothing"
        return RowRecovery("insufficient", items, layout, None, (), (), d, tol,
                           f"publishes {ks}; {trials} trials per task need pass^1 … pass^{trials}")  # fmt: skip
    fit = fit_histogram(pub, layout, tol)
    if fit.n_solutions == 1:
        return RowRecovery("recovered", items, layout, fit, (), (layout.describe(),), d, tol)
    if fit.n_solutions > 1:
        if decimals is None and tolerance is None and d < 1:
            # A JSON float shows no trailing zero: four figures ending in .0 read as integers. At one decimal (what
            # the leaderboard shows) a unique histogram is the recovery, unless integer-rounded figures fit one by
            # accident — with probability at most the one-decimal fit's false-fit chance, reported in the note.
            tol1 = rounding_tolerance(1)
            fine = fit_histogram(pub, layout, tol1)
            if fine.n_solutions == 1:
                return RowRecovery("recovered", items, layout, fine, (), (layout.describe(),), 1, tol1,
                                   "every figure ends in .0: read at one decimal (integer-rounded figures would fit "
                                   f"a histogram there by accident with chance ≤ {fine.false_fit_chance:.2g})")  # fmt: skip
        return RowRecovery("ambiguous", items, layout, fit, (), (layout.describe(),), d, tol,
                           f"{fit.n_solutions} histograms reproduce the figures within ±{tol:.3g} points")  # fmt: skip
    alts: list[HistogramFit] = []
    tried = [layout.describe()]
    if alternatives:
        for lay in _alternative_layouts(layout, domain):
            tried.append(lay.describe())
            f = fit_histogram(pub, lay, tol, nearest=False)
            if f.fits:
                alts.append(f)
    return RowRecovery("flagged", items, layout, fit, tuple(alts), tuple(tried), d, tol, _flag_note(fit, alts))


def _alternative_layouts(layout: Layout, domain: str | None) -> list[Layout]:
    T, n = layout.tasks, layout.trials
    out = [Layout(T - m, n, 0, f"base − {m} lost") for m in range(1, _LOST_MAX + 1) if T - m >= 1]
    if n >= 2:
        out += [Layout(T, n, j) for j in range(1, _SHORT_MAX + 1) if j < T]
    for name, t in (alternative_tasks(domain) if domain else {}).items():
        if t != T:
            out.append(Layout(t, n, 0, name))
    return out


def _flag_note(fit: HistogramFit, alts: list[HistogramFit]) -> str:
    far = "more than 12.8" if math.isinf(fit.residual) else f"{fit.residual:.3f}"
    text = f"no integer histogram of {fit.layout.describe()} within ±{fit.tolerance:.3g} points (nearest: {far} points off)"
    ok = [a for a in alts if a.false_fit_chance <= PLAUSIBLE_CHANCE]
    if ok:
        best = min(ok, key=lambda a: a.false_fit_chance)
        text += (f"; reproduced by {best.layout.describe()} (false-fit chance {best.false_fit_chance:.2g}"
                 + (f", {len(ok) - 1} other layout(s) too" if len(ok) > 1 else "") + ")")  # fmt: skip
    elif alts:
        listed = "; ".join(f"{a.layout.describe()}, chance {a.false_fit_chance:.2g}" for a in alts[:3])
        text += (f"; {len(alts)} alternative layout(s) fit but figures of this precision would fit them by accident "
                 f"too often to tell (chance above {PLAUSIBLE_CHANCE:g}): {listed}")  # fmt: skip
    return text


# ------------------------------------------------------------------------------------------------ counts frame
def histogram_counts(cells: Sequence[tuple[int, int, int]], *, run_id: str, domain: str, agent: str | None = None,
                     setup: str | None = None, format: str = "tau2", keys: Mapping[str, Any] | None = None,
                     infra: str = INFRA) -> pl.DataFrame:  # fmt: skip
    """A :func:`tauk.stats.task_counts` frame of one histogram: one row per task, placeholder task ids
    ``{run_id}:c{successes}-{i:02d}`` (``…:n{trials}c{successes}-{i}`` for short tasks) — unique to the run, so
    nothing pairs them with another run's tasks —, no infrastructure errors, binary rewards (``reward_sum`` =
    successes), no cost; ``keys`` adds key columns after the label columns (as ``by=``).

    >>> f = histogram_counts(((4, 0, 1), (4, 4, 2)), run_id="r", domain="airline")
    >>> f.select("task_id", "kept", "successes").rows()
    [('r:c0-00', 4, 0), ('r:c4-00', 4, 4), ('r:c4-01', 4, 4)]
    """
    extra = dict(keys or {})
    one = {"run_id": run_id, "format": format, "agent": agent, "setup": setup or f"{domain}/normal/?/?",
           "domain": domain, **extra}  # fmt: skip
    return _counts_frame([(one, cells)], list(extra), infra)


def _counts_frame(items: Sequence[tuple[Mapping[str, Any], Sequence[tuple[int, int, int]]]], extra: list[str],
                  infra: str) -> pl.DataFrame:  # fmt: skip
    """Several histograms (labels, cells) as one counts frame, built as columns (no loop over tasks)."""
    labels: dict[str, list] = {c: [] for c in (*LABEL_COLUMNS, *extra) if c != "task_id"}
    n_col, c_col, h_col, top_col = [], [], [], []
    for lab, cells in items:
        top = max(n for n, _, _ in cells)
        for n, c, h in cells:
            for col in labels:
                labels[col].append(lab.get(col))
            n_col.append(int(n))
            c_col.append(int(c))
            h_col.append(int(h))
            top_col.append(top)
    schema = {c: pl.String for c in labels}
    cells_df = pl.DataFrame({**labels, "_n": n_col, "_c": c_col, "_h": h_col, "_top": top_col},
                            schema={**schema, "_n": pl.Int64, "_c": pl.Int64, "_h": pl.Int64, "_top": pl.Int64})  # fmt: skip
    n, c = pl.col("_n"), pl.col("_c")
    idx = pl.col("_i").cast(pl.String).str.zfill(2)
    frame = (
        cells_df.filter(pl.col("_h") > 0)
        .with_columns(pl.int_ranges(0, pl.col("_h")).alias("_i"))
        .explode("_i")
        .with_columns(
            pl.when(n == pl.col("_top"))
            .then(pl.format("{}:c{}-{}", pl.col("run_id"), c, idx))
            .otherwise(pl.format("{}:n{}c{}-{}", pl.col("run_id"), n, c, idx))
            .alias("task_id"),
            n.alias("trials"),
            n.alias("kept"),
            c.alias("successes"),
            n.alias("rewarded"),
            pl.lit(0, dtype=pl.Int64).alias("fractional"),
            pl.lit(0, dtype=pl.Int64).alias("infra"),
            c.cast(pl.Float64).alias("reward_sum"),
            pl.lit(0.0).alias("cost_sum"),
            pl.lit(0, dtype=pl.Int64).alias("cost_n"),
            pl.col("_top").alias("num_trials"),
            pl.int_ranges(0, n).cast(pl.List(pl.Int64)).alias("trial_indices"),
            pl.lit(infra).alias("infra_rule"),
            pl.lit("reward").alias("reward_column"),
        )
    )
    return frame.select([*LABEL_COLUMNS, *extra, *COUNT_COLUMNS, "infra_rule", "reward_column"])


# ------------------------------------------------------------------------------------------------ the board
_FRAME_SCHEMA: dict[str, pl.DataType] = {
    "submission_id": pl.String,
    "domain": pl.String,
    "model": pl.String,
    "modality": pl.String,
    "manifest_section": pl.String,
    "published_ks": pl.String,
    "decimals": pl.Int64,
    "tolerance": pl.Float64,
    "tasks": pl.Int64,
    "trials": pl.Int64,
    "trials_source": pl.String,
    "status": pl.String,
    "n_solutions": pl.Int64,
    "histogram": pl.List(pl.Int64),
    "residual": pl.Float64,
    "nearest_histogram": pl.List(pl.Int64),
    "false_fit_chance": pl.Float64,
    "convention": pl.String,
    "explanation": pl.String,
    "n_alternatives": pl.Int64,
    "simulations_published": pl.Int64,
    "note": pl.String,
}


@dataclass(frozen=True)
class Recovery:
    """Per-task counts recovered from every row of a leaderboard (immutable; from :func:`recover`).

    ``frame`` (:meth:`to_frame`): one row per (submission_id, domain) — the join keys of every leaderboard table —
    with model, modality, manifest_section, published_ks (e.g. ``"1-4"``), decimals and tolerance (points: the
    rounding), tasks and trials (the published layout; ``trials_source`` says where n came from), status,
    n_solutions, histogram (h_0 … h_n when recovered), residual (points: of the recovered histogram, else of the
    nearest), nearest_histogram, false_fit_chance, convention (which infrastructure convention the reproducing
    layout stands for), explanation (the alternative layout that reproduces a flagged row), n_alternatives,
    simulations_published (voice rows: simulations with interaction metrics) and note.
    ``rows``: the :class:`RowRecovery` of each (submission_id, domain).
    """

    frame: pl.DataFrame
    rows: Mapping[tuple[str, str], RowRecovery] = field(repr=False)
    meta: Mapping[tuple[str, str], Mapping[str, Any]] = field(repr=False)

    def to_frame(self) -> pl.DataFrame:
        """One row per (submission_id, domain); see the class docs."""
        return self.frame

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready dicts, one per row."""
        return self.frame.to_dicts()

    def row(self, submission_id: str, domain: str) -> RowRecovery:
        """The :class:`RowRecovery` of one row."""
        try:
            return self.rows[(submission_id, domain)]
        except KeyError:
            raise TaukError(f"no leaderboard row {submission_id!r} / {domain!r}") from None

    def task_counts(self, *, status: str | Sequence[str] = "recovered", infra: str = INFRA) -> pl.DataFrame:
        """The recovered histograms as one :func:`tauk.stats.task_counts` frame, with ``submission_id`` as an
        extra key (``run_id`` = ``submission_id/domain``; ``agent`` = the model name; placeholder task ids unique
        to each row, so nothing pairs across rows). ``infra``: the rule recorded in the frame — a recovered row has
        no visible infrastructure errors (under the ``fail`` convention they are among its failures), so either
        rule gives the same figures; it only has to match the ``infra=`` of the statistic called on it.

        Examples
        --------
        >>> import json, tempfile, tauk
        >>> from pathlib import Path
        >>> sub = {"model_name": "M", "model_organization": "O", "submitting_organization": "O",
        ...        "submission_date": "2025-06-09",
        ...        "results": {"airline": {"pass_1": 42.0, "pass_2": 27.3, "pass_3": 22.0, "pass_4": 20.0}}}
        >>> path = Path(tempfile.mkdtemp()) / "m_o_2025-06-09.json"
        >>> _ = path.write_text(json.dumps(sub))
        >>> counts = recover(path).task_counts()
        >>> tauk.stats.pass_hat_k(counts, k=4, ci=None).to_frame()["estimate"].to_list()
        [0.2]
        """
        wanted = {status} if isinstance(status, str) else set(status)
        bad = wanted - set(STATUSES)
        if bad:
            raise TaukError(f"status must be among {STATUSES}, got {sorted(bad)}")
        items = []
        for key, rr in self.rows.items():
            if rr.status not in wanted or rr.status != "recovered":
                continue
            m = self.meta[key]
            items.append(({"run_id": f"{key[0]}/{key[1]}", "format": "tau2", "agent": m["model"], "setup": m["setup"],
                           "domain": key[1], "submission_id": key[0]}, rr.cells))  # fmt: skip
        if not items:
            raise TaukError("no recovered rows to turn into task counts")
        return _counts_frame(items, ["submission_id"], infra)

    def summary(self, *, domain: str | Sequence[str] | None = None) -> SummaryTable:
        """The recovery table (text / HTML / LaTeX): status, layout, histogram, residual and explanation per row
        (``domain`` keeps some domains)."""
        frame = self.frame
        if domain is not None:
            frame = frame.filter(pl.col("domain").is_in([domain] if isinstance(domain, str) else list(domain)))
        cols = ["submission", "domain", "published", "T×n", "status", "histogram h0..hn", "residual (pt)",
                "false-fit chance", "explanation / note"]  # fmt: skip
        fields = ["submission_id", "domain", "published_ks", "layout", "status", "histogram", "residual",
                  "false_fit_chance", "note"]  # fmt: skip
        rows = []
        for r in frame.iter_rows(named=True):
            h = r["histogram"] if r["histogram"] is not None else r["nearest_histogram"]
            htxt = None if h is None else ("" if r["histogram"] is not None else "nearest ") + " ".join(map(str, h))
            rows.append([r["submission_id"], r["domain"], r["published_ks"], f"{r['tasks']}×{r['trials']}",
                         r["status"], htxt, r["residual"], r["false_fit_chance"],
                         r["explanation"] or (r["note"] if r["status"] != "recovered" else None)])  # fmt: skip
        counts = frame.group_by("status").len()
        tally = ", ".join(f"{n} {s}" for s, n in sorted(counts.rows(), key=lambda x: STATUSES.index(x[0])))
        notes = [
            f"{frame.height} rows: {tally}",
            "recovered: the one integer histogram (tasks with c = 0 … n successes) that reproduces every published "
            "pass^1 … pass^n within the row's rounding (half a unit of its last decimal); residual: max over k of "
            "|reproduced − published| in points (of the nearest histogram when none fits)",
            "flagged rows were tried under the other infrastructure convention (tasks lost whole, tasks one trial "
            "short) and the domain's other task sets; an explanation is given only where figures of that precision "
            f"would fit by accident with probability ≤ {PLAUSIBLE_CHANCE:g} (false-fit chance, an upper bound)",
        ]
        return SummaryTable.build("Leaderboard rows: recovered per-task counts", cols, rows, notes, fields=fields,
                                  keys=2)  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def _ks_text(ks: Sequence[int]) -> str:
    if not ks:
        return ""
    ks = sorted(ks)
    if ks == list(range(ks[0], ks[-1] + 1)) and len(ks) > 1:
        return f"{ks[0]}-{ks[-1]}"
    return ",".join(map(str, ks))


def _trials_of(r: Mapping[str, Any], ks: Sequence[int], tasks: int, simulations: int | None,
               trials: Any) -> tuple[int, str]:  # fmt: skip
    sid = r["submission_id"]
    if isinstance(trials, Mapping):
        got = trials.get((sid, r["domain"]), trials.get(sid))
        if got is not None:
            return int(got), "given"
    elif trials is not None:
        return int(trials), "given"
    if simulations:
        n = max(1, round(simulations / tasks))
        return n, "interaction metrics (simulations / tasks)"
    if r.get("modality") == "voice":
        return 1, "voice protocol (one trial per task)"
    if ks and max(ks) > 1:
        return max(ks), "highest published k"
    return 4, "leaderboard protocol (4 trials per task)"


def recover(board: Any, *, trials: int | Mapping[Any, int] | None = None, tasks: Mapping[Any, int] | None = None,
            decimals: int | None = None, tolerance: float | None = None, alternatives: bool = True,
            metrics: Any = None, listed_only: bool = False, templates: bool = False) -> Recovery:  # fmt: skip
    """Recover the per-task counts of every row of a leaderboard.

    Parameters
    ----------
    board
        The frame of :func:`tauk.io.leaderboard.load_leaderboard`, or a path / folder to load it from (the voice
        rows' interaction-metric counts are then read too).
    trials
        Trials per task: an int for every row, or a mapping (submission_id or (submission_id, domain) → n). Default:
        the voice rows' simulations / T, one for other voice rows, else the highest published k (4 for pass^1 … 4),
        else 4 (the leaderboard's protocol: such a row is then *insufficient*).
    tasks
        T per domain or per (submission_id, domain) (default: the domain's base task set, :mod:`.task_sets`).
    decimals, tolerance
        Override the rounding read from each row's figures: its decimals, or a tolerance in points for every row
        (e.g. 0.06 to admit rows whose nearest histogram misses the rounding by a hair — they are then *recovered*,
        with their residual in the frame).
    alternatives
        Try the other infrastructure convention and the other task sets for a flagged row (default True).
    metrics
        The frame of :func:`tauk.io.leaderboard.load_interaction_metrics` (read from ``board`` when it is a path).
    listed_only
        Keep only the rows the manifest lists.
    templates
        Keep upstream's ``A_EXAMPLE_*`` submission templates (left out by default: they are not submissions).

    Returns
    -------
    Recovery
    """
    if not isinstance(board, pl.DataFrame):
        path = board
        board = load_leaderboard(path)
        if metrics is None:
            metrics = load_interaction_metrics(path)
    if "domain" not in board.columns or "submission_id" not in board.columns:
        raise TaukError("recover takes the frame of load_leaderboard(...) or a path to load it from")
    if not templates:
        board = board.filter(~pl.col("submission_id").str.starts_with("A_EXAMPLE"))
    if listed_only and "manifest_section" in board.columns:
        board = board.filter(pl.col("manifest_section").is_not_null())
    sims: dict[tuple[str, str], int] = {}
    if metrics is not None and metrics.height:
        for sid, dom, n in (metrics.filter(pl.col("domain") != "overall")
                            .select("submission_id", "domain", "n_simulations").unique().rows()):  # fmt: skip
            if n is not None:
                sims[(sid, dom)] = int(n)
    out_rows, rows, meta = [], {}, {}
    for r in board.iter_rows(named=True):
        sid, dom = r["submission_id"], r["domain"]
        pub = {k: r.get(f"pass_{k}_pct") for k in range(1, 5)}
        pub = {k: v for k, v in pub.items() if v is not None}
        ks = sorted(pub)
        if not ks:
            continue  # a cost-only row
        if isinstance(tasks, Mapping) and ((sid, dom) in tasks or dom in tasks):
            T = int(tasks.get((sid, dom), tasks.get(dom)))
        else:
            T = default_tasks(dom)
        n_sim = sims.get((sid, dom))
        n, n_src = _trials_of(r, ks, T, n_sim, trials)
        rr = recover_row(pub, tasks=T, trials=n, domain=dom, decimals=decimals, tolerance=tolerance,
                         alternatives=alternatives)  # fmt: skip
        note = rr.note
        convention = None
        if rr.status == "recovered":
            convention = "complete: every task n trials (no infrastructure error, or counted as failures)"
            if n_sim is not None and n_sim != T * n:
                drop = fit_histogram(pub, Layout(n_sim // n, n), rr.tolerance, nearest=False) if n_sim >= n else None
                convention = ("fail: infrastructure errors counted as failed trials" if not (drop and drop.fits)
                              else "complete (a drop over fewer tasks fits too)")  # fmt: skip
                note = (f"interaction metrics cover {n_sim} simulations, not {T * n}: the figure is over {T} tasks"
                        + ("" if not (drop and drop.fits) else f" (or over {n_sim // n}: both fit)")
                        + (", so the missing ones count as failures" if not (drop and drop.fits) else ""))  # fmt: skip
        elif rr.status == "flagged" and rr.explanation is not None:
            convention = rr.explanation.layout.convention
        expl = rr.explanation
        fit = rr.fit
        out_rows.append({
            "submission_id": sid, "domain": dom, "model": r.get("model"), "modality": r.get("modality"),
            "manifest_section": r.get("manifest_section"), "published_ks": _ks_text(ks), "decimals": rr.decimals,
            "tolerance": rr.tolerance, "tasks": T, "trials": n, "trials_source": n_src, "status": rr.status,
            "n_solutions": None if fit is None else fit.n_solutions,
            "histogram": None if rr.histogram is None else list(rr.histogram),
            "residual": None if fit is None or math.isinf(fit.residual) else fit.residual,
            "nearest_histogram": None if fit is None or fit.nearest is None else [h for _, _, h in fit.nearest],
            "false_fit_chance": None if fit is None else fit.false_fit_chance,
            "convention": convention,
            "explanation": None if expl is None else f"{expl.layout.describe()} (false-fit chance "
                                                     f"{expl.false_fit_chance:.2g})",
            "n_alternatives": len(rr.alternatives), "simulations_published": n_sim, "note": note,
        })  # fmt: skip
        rows[(sid, dom)] = rr
        mode = "full_duplex" if r.get("modality") == "voice" else "normal"
        meta[(sid, dom)] = {"model": r.get("model"), "setup": f"{dom}/{mode}/{r.get('user_simulator') or '?'}/?",
                            **{f: r.get(f) for f in PUBLISHED_SETUP_FIELDS}}
    frame = pl.DataFrame(out_rows, schema=_FRAME_SCHEMA) if out_rows else pl.DataFrame(schema=_FRAME_SCHEMA)
    return Recovery(frame, rows, meta)
