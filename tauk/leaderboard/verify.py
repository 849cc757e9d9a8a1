"""Verify a leaderboard submission against its own trajectories (upstream #342's ask).

A submission folder holds ``submission.json`` and its trajectories (upstream's layout: ``trajectories/`` beside it,
the files named by ``trajectory_files``; a text domain is one results file, a voice domain an experiment folder).
Every domain's trajectories are loaded with :func:`tauk.load` and pass^k recomputed under **both** infrastructure
conventions — dropped (τ²-bench ≥ 1.0) and counted as failed trials (the leaderboard's older convention) — and
compared with the published figures within the submission's rounding: each (domain, k) says which convention
reproduces it, and every difference is listed. The figures are the recorded rewards'; each domain's trajectories are
also re-graded (:func:`tauk.audit`, on the task definitions they embed), and a domain some of whose recorded rewards
do not follow from them says so (``rewards_checked``, ``rewards_not_following``; the verdict "verified from the
recorded rewards (N of the verified domains' rewards do not follow from the trajectories)").

>>> from tauk.leaderboard import verify_submission
>>> v = verify_submission("path/to/submission_dir")  # doctest: +SKIP
>>> print(v.summary())  # doctest: +SKIP
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from tauk.errors import LoadError, StatsWarning, TaukError
from tauk.results import load
from tauk.table import SummaryTable

from ._stats import pass_hat_k
from .recovery import published_decimals, rounding_tolerance

__all__ = ["Verification", "verify_submission", "find_trajectories", "TRAJECTORY_DIR"]

TRAJECTORY_DIR = "trajectories"
"""Upstream's folder of a submission's trajectories, beside its ``submission.json``."""

CONVENTIONS = ("drop", "fail")


def _submission_file(path: Path) -> Path:
    if path.is_dir():
        f = path / "submission.json"
        if not f.is_file():
            raise LoadError(str(path), None, "no submission.json in this folder")
        return f
    if not path.is_file():
        raise LoadError(str(path), None, "no such file or directory")
    return path


def find_trajectories(submission: str | Path, *, search: str | Path | None = None) -> dict[str, Path | None]:
    """Domain → the trajectory file or folder named by the submission's ``trajectory_files`` (None where it is not
    found), looked for in ``search`` (if given), the submission's ``trajectories/`` folder, then beside it."""
    f = _submission_file(Path(submission))
    try:
        doc = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LoadError(str(f), None, f"cannot read the submission: {exc}") from None
    names = doc.get("trajectory_files") if isinstance(doc, dict) else None
    if names is None:
        return {}
    if not isinstance(names, dict) or not all(isinstance(v, str) for v in names.values()):
        raise LoadError(str(f), "$.trajectory_files", "expected an object of domain → file name")
    roots = [Path(search)] if search is not None else []
    roots += [f.parent / TRAJECTORY_DIR, f.parent]
    out: dict[str, Path | None] = {}
    for dom, name in names.items():
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise LoadError(str(f), f"$.trajectory_files.{dom}", f"a file name inside the submission, got {name!r}")
        out[dom] = next((r / name for r in roots if (r / name).exists()), None)
    return out


@dataclass(frozen=True)
class Verification:
    """A submission's published figures against its recomputed trajectories (immutable; from
    :func:`verify_submission`).

    ``frame`` (:meth:`to_frame`): one row per (submission_id, domain, k) — published (points), drop and fail (pass^k
    recomputed with infrastructure errors dropped / counted as failures, points; null where that convention gives no
    pass^k: a task with fewer kept trials than k), difference_drop, difference_fail (recomputed − published, points), reproduces
    (``"drop"``, ``"fail"``, ``"both"`` or ``"neither"`` within ``tolerance`` points), tolerance.
    ``domains``: one row per domain — trajectory path (null when missing), status (``verified``, ``differs``,
    ``missing``, ``unreadable``), tasks, simulations, infra_errors, trials_per_task, convention (the one reproducing
    every published k), rewards_checked / rewards_not_following (recorded rewards :func:`tauk.audit` re-graded, and
    of them those that do not follow from the trajectories and the embedded tasks; null for a bare trials frame),
    note. The figures are recomputed from the rewards as recorded: "verified" says the published pass^k follow from
    them, and the verdict says when some of them do not follow from the trajectories.
    """

    submission_id: str
    frame: pl.DataFrame
    domains: pl.DataFrame

    def to_frame(self) -> pl.DataFrame:
        """One row per (submission_id, domain, k); see the class docs."""
        return self.frame

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready: one dict per domain, with its ``figures`` (one per k). ``diff_drop`` / ``diff_fail``: the
        old keys of ``difference_drop`` / ``difference_fail``, kept one release."""
        per: dict[str, list[dict[str, Any]]] = {}
        for r in self.frame.iter_rows(named=True):
            rec = {c: v for c, v in r.items() if c not in ("submission_id", "domain")}
            rec |= {"diff_drop": rec["difference_drop"], "diff_fail": rec["difference_fail"]}  # one release
            per.setdefault(r["domain"], []).append(rec)
        return [{**d, "figures": per.get(d["domain"], [])} for d in self.domains.iter_rows(named=True)]

    @property
    def ok(self) -> bool:
        """Every domain's trajectories were found and reproduce every published figure under one convention."""
        return bool(self.domains.height) and bool((self.domains["status"] == "verified").all())

    def differences(self) -> pl.DataFrame:
        """The (domain, k) rows that neither convention reproduces."""
        return self.frame.filter(pl.col("reproduces") == "neither")

    def summary(self) -> SummaryTable:
        """The verification table (text / HTML / LaTeX): published vs recomputed under both conventions."""
        cols = ["domain", "k", "published", "infra dropped", "infra = failure", "difference dropped",
                "difference failure", "reproduces"]
        fields = ["domain", "k", "published", "drop", "fail", "difference_drop", "difference_fail", "reproduces"]
        rows = [[r["domain"], r["k"], r["published"], r["drop"], r["fail"], r["difference_drop"], r["difference_fail"],
                 r["reproduces"]] for r in self.frame.iter_rows(named=True)]  # fmt: skip
        notes = [f"submission {self.submission_id}: pass^k in points, recomputed from the rewards recorded in the "
                 "trajectories; difference = recomputed − published; reproduces: within the submission's rounding "
                 "(half a unit of its last decimal)"]  # fmt: skip
        for d in self.domains.iter_rows(named=True):
            if d["status"] in ("missing", "unreadable"):
                notes.append(f"{d['domain']}: {d['status']} — {d['note']}")
            else:
                notes.append(f"{d['domain']}: {d['status']} — {d['tasks']} tasks, {d['simulations']} simulations, "
                             f"{d['infra_errors']} infrastructure error(s)"
                             + (f"; reproduced with infrastructure errors {_conv_text(d['convention'])}"
                                if d["convention"] else "") + (f"; {d['note']}" if d["note"] else ""))  # fmt: skip
        st = self.domains["status"].to_list()
        n_ok = st.count("verified")
        verdict = ("verified" if self.ok else f"partly verified ({n_ok} of {len(st)} domains)" if n_ok and
                   "differs" not in st else "NOT verified")  # fmt: skip
        verified = self.domains.filter(pl.col("status") == "verified")
        off = int(verified["rewards_not_following"].fill_null(0).sum())  # of the domains the verdict vouches for
        if off:
            verdict += (f" from the recorded rewards ({off} of the verified domains' rewards do not follow from the "
                        "trajectories)")  # fmt: skip
        return SummaryTable.build(f"Verification of {self.submission_id}: {verdict}", cols, rows, notes, digits=2,
                                  fields=fields, keys=2)  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def _conv_text(c: str | None) -> str:
    return {"drop": "dropped", "fail": "counted as failures", "both": "dropped or counted as failures (none occurred"
            " or they change nothing)"}.get(c or "", str(c))  # fmt: skip


def _recompute(trials: pl.DataFrame, infra: str) -> dict[int, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatsWarning)
        f = pass_hat_k(trials, by=None, ci=None, infra=infra, pool_setups=True).to_frame()
    return {int(k): 100.0 * float(e) for k, e in f.select("k", "estimate").rows() if e is not None}


def verify_submission(submission: str | Path, *, trajectories: str | Path | Mapping[str, Any] | None = None,
                      decimals: int | None = None) -> Verification:  # fmt: skip
    """Recompute a submission's published pass^k from its trajectories, under both infrastructure conventions.

    Parameters
    ----------
    submission
        The submission folder (with ``submission.json``) or the ``submission.json`` file.
    trajectories
        Where the trajectory files are (a folder searched first for the names in ``trajectory_files``), or a mapping
        domain → trajectories (a path, a :class:`tauk.Results` or a trials frame) that replaces them.
    decimals
        Override the rounding read from the published figures.

    Returns
    -------
    Verification
    """
    from tauk.io.leaderboard import load_leaderboard

    f = _submission_file(Path(submission))
    board = load_leaderboard(f)
    sid = board["submission_id"][0] if board.height else f.parent.name
    if isinstance(trajectories, Mapping):
        given: dict[str, Any] = dict(trajectories)
    else:
        given = dict(find_trajectories(f, search=trajectories))
    if not given:
        raise TaukError(f"{f}: the submission names no trajectory_files and none were given; nothing to verify")
    published = {r["domain"]: {k: r[f"pass_{k}_pct"] for k in range(1, 5) if r[f"pass_{k}_pct"] is not None}
                 for r in board.iter_rows(named=True)}  # fmt: skip
    d_all = published_decimals(v for p in published.values() for v in p.values())
    tol = rounding_tolerance(d_all if decimals is None else decimals)
    fig_rows, dom_rows = [], []
    for dom in sorted(set(published) | set(given)):
        pub = published.get(dom, {})
        src = given.get(dom)
        base = {"domain": dom, "trajectory": None if src is None or not isinstance(src, str | Path) else str(src),
                "tasks": None, "simulations": None, "infra_errors": None, "trials_per_task": None, "convention": None}  # fmt: skip
        if src is None:
            dom_rows.append({**base, "status": "missing", "note": "no trajectories found for this domain"})
            continue
        if not pub:
            dom_rows.append({**base, "status": "missing", "note": "trajectories but no published pass^k"})
            continue
        try:
            trials, loaded = _trials(src)
        except TaukError as exc:
            dom_rows.append({**base, "status": "unreadable", "note": str(exc)})
            continue
        doms = trials["domain"].drop_nulls().unique().to_list()
        note = None
        if doms and dom not in doms:
            note = f"the trajectories are of {', '.join(sorted(doms))}"
        per_task = trials.group_by("task_id").len()["len"]
        base.update(tasks=trials["task_id"].n_unique(), simulations=trials.height,
                    infra_errors=int(trials["is_infra_error"].sum()),
                    trials_per_task=f"{per_task.min()}" if per_task.min() == per_task.max() else
                    f"{per_task.min()}-{per_task.max()}")  # fmt: skip
        got = {c: _recompute(trials, c) for c in CONVENTIONS}
        convs = set(CONVENTIONS)
        for k, p in sorted(pub.items()):
            vals = {c: got[c].get(k) for c in CONVENTIONS}
            ok = {c for c, v in vals.items() if v is not None and abs(v - p) <= tol}
            convs &= ok
            rep = "both" if ok == set(CONVENTIONS) else ok.pop() if ok else "neither"
            fig_rows.append({"submission_id": sid, "domain": dom, "k": k, "published": p, "drop": vals["drop"],
                             "fail": vals["fail"],
                             "difference_drop": None if vals["drop"] is None else round(vals["drop"] - p, 9),
                             "difference_fail": None if vals["fail"] is None else round(vals["fail"] - p, 9),
                             "reproduces": rep, "tolerance": tol})  # fmt: skip
        conv = "both" if convs == set(CONVENTIONS) else (next(iter(convs)) if convs else None)
        status = "verified" if conv else "differs"
        if status == "differs":
            bad = [r for r in fig_rows if r["domain"] == dom and r["reproduces"] == "neither"]
            note = "; ".join(x for x in [note, f"{len(bad)} figure(s) reproduced by neither convention"
                                          if bad else "no single convention reproduces every k"] if x)  # fmt: skip
        checked, off = _rewards_checked(loaded)
        if off:
            note = "; ".join(x for x in [note, f"{off} of {checked} recorded rewards do not follow from the "
                                         "trajectories and the embedded tasks (tauk.audit): the figures reproduce "
                                         "from the rewards as recorded, not as re-graded"] if x)  # fmt: skip
        dom_rows.append({**base, "status": status, "convention": conv, "rewards_checked": checked,
                         "rewards_not_following": off, "note": note})
    frame = pl.DataFrame(fig_rows, schema={"submission_id": pl.String, "domain": pl.String, "k": pl.Int64,
                                           "published": pl.Float64, "drop": pl.Float64, "fail": pl.Float64,
                                           "difference_drop": pl.Float64, "difference_fail": pl.Float64,
                                           "reproduces": pl.String, "tolerance": pl.Float64})  # fmt: skip
    domains = pl.DataFrame(dom_rows, schema={"domain": pl.String, "trajectory": pl.String, "status": pl.String,
                                             "tasks": pl.Int64, "simulations": pl.Int64, "infra_errors": pl.Int64,
                                             "trials_per_task": pl.String, "convention": pl.String,
                                             "rewards_checked": pl.Int64, "rewards_not_following": pl.Int64,
                                             "note": pl.String})  # fmt: skip
    return Verification(sid, frame, domains)


def _trials(src: Any) -> tuple[pl.DataFrame, Any]:
    """The trials of a domain's trajectories and the loaded results they came from (None for a bare frame)."""
    if isinstance(src, pl.DataFrame):
        return src, None
    if hasattr(src, "trials"):
        return src.trials, src
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = load(src, strict=False, progress=False)
    return res.trials, res


def _rewards_checked(res: Any) -> tuple[int | None, int | None]:
    """(recorded rewards re-graded, of them not following from the trajectories and the embedded tasks) by
    :func:`tauk.audit`; (None, None) where the results cannot be re-graded."""
    if res is None:
        return None, None
    from tauk.scoring.audit import audit

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            totals = audit(res).totals()
    except TaukError:
        return None, None
    checked = int(totals.get("n_checked") or 0)
    return (checked, int(totals.get("reward_mismatch") or 0)) if checked else (None, None)

