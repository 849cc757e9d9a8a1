"""Published τ²-bench leaderboard submissions as one tidy frame (docs/spec.md §3).

Upstream keeps one ``submission.json`` per submission (``submissions/<name>/submission.json``); the shared test data
keeps them flat as ``<name>.json`` beside ``schema.json`` and ``manifest.json``. :func:`load_leaderboard` reads
either layout (or single files), skipping ``schema.json`` and ``manifest.json``.

One row per (submission, domain) with published results; figures are percentages in the files and fractions in the
frame (``pass_1`` … ``pass_4``), the percentages kept as ``pass_1_pct`` … ``pass_4_pct``. ``overall`` is the
unweighted mean of the airline, retail and telecom pass^1 when all three are published (docs/spec.md §3), repeated on every
row of the submission (null otherwise).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tauk.conventions import DOMAIN_ORDER, OVERALL_DOMAINS, domain_sort_key
from tauk.errors import LoadError

__all__ = ["load_leaderboard", "load_interaction_metrics", "LEADERBOARD_SCHEMA", "INTERACTION_SCHEMA",
           "INTERACTION_METRICS", "INTERACTION_COUNTS", "OVERALL_DOMAINS"]

"""The domains whose pass^1 is averaged (unweighted) into ``overall``."""

_SKIP_NAMES = {"manifest.json", "schema.json"}
_PASS_KEYS = ("pass_1", "pass_2", "pass_3", "pass_4")
_MANIFEST_SECTIONS = {"submissions": "text", "voice_submissions": "voice", "legacy_submissions": "legacy"}

LEADERBOARD_SCHEMA: dict[str, pl.DataType] = {
    "submission_id": pl.String,
    "model": pl.String,
    "model_organization": pl.String,
    "submitting_organization": pl.String,
    "submission_date": pl.Date,
    "submission_type": pl.String,
    "modality": pl.String,
    "reasoning_effort": pl.String,
    "user_simulator": pl.String,
    "tau2_bench_version": pl.String,
    "trajectories_available": pl.Boolean,
    "is_new": pl.Boolean,
    "manifest_section": pl.String,
    "domain": pl.String,
    "pass_1": pl.Float64,
    "pass_2": pl.Float64,
    "pass_3": pl.Float64,
    "pass_4": pl.Float64,
    "pass_1_pct": pl.Float64,
    "pass_2_pct": pl.Float64,
    "pass_3_pct": pl.Float64,
    "pass_4_pct": pl.Float64,
    "cost": pl.Float64,
    "retrieval_config": pl.String,
    "overall": pl.Float64,
    "overall_pct": pl.Float64,
    "source": pl.String,
}
"""Columns of :func:`load_leaderboard`'s frame, in order."""


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _str(doc: dict, key: str, path: str, *, required: bool) -> str | None:
    if key not in doc or doc[key] is None:
        if required:
            raise LoadError(path, f"$.{key}", "missing required field (a string)")
        return None
    v = doc[key]
    if not isinstance(v, str):
        raise LoadError(path, f"$.{key}", f"expected a string, got {_type_name(v)} {v!r}")
    return v


#: the spellings of a boolean the leaderboard's own schema (pydantic, lax) accepts besides true / false
_BOOL_TEXT = {"1": True, "on": True, "t": True, "true": True, "y": True, "yes": True,
              "0": False, "off": False, "f": False, "false": False, "n": False, "no": False}  # fmt: skip


def _bool(doc: dict, key: str, path: str) -> bool | None:
    """A boolean field as the leaderboard's schema reads it: true / false, 0 / 1, or one of :data:`_BOOL_TEXT`
    (any case); anything else is an error."""
    v = doc.get(key)
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int | float) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.lower() in _BOOL_TEXT:
        return _BOOL_TEXT[v.lower()]
    raise LoadError(path, f"$.{key}", f"expected true/false (or 0/1, \"yes\"/\"no\"), got {_type_name(v)} {v!r}")


def _numeric(v: Any) -> float | None:
    """A number, or a string holding one (the leaderboard's schema accepts "85.5" for 85.5); None otherwise — a
    boolean is never a number here (the schema would read true as 1.0)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _number(v: Any, path: str, loc: str, lo: float | None, hi: float | None) -> float | None:
    if v is None:
        return None
    x = _numeric(v)
    if x is None:
        raise LoadError(path, loc, f"expected a number or null, got {_type_name(v)} {v!r}")
    if math.isnan(x) or math.isinf(x):
        raise LoadError(path, loc, f"expected a finite number, got {v!r}")
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        rng = f"[{lo:g}, {hi:g}]" if hi is not None else f"≥ {lo:g}"
        raise LoadError(path, loc, f"{x:g} is outside {rng} (leaderboard figures are percentages)")
    return x


def _date(doc: dict, key: str, path: str) -> _dt.date:
    s = _str(doc, key, path, required=True)
    try:
        return _dt.date.fromisoformat(s)
    except ValueError:
        raise LoadError(path, f"$.{key}", f"expected a date YYYY-MM-DD, got {s!r}") from None


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark skipped, as results files are read
    except UnicodeDecodeError as exc:
        raise LoadError(str(path), f"byte {exc.start}", "not UTF-8 text") from None
    except OSError as exc:
        raise LoadError(str(path), None, f"cannot read: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoadError(str(path), f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}") from None


def _submission_rows(path: Path, submission_id: str, section: str | None) -> list[dict[str, Any]]:
    p = str(path)
    doc = _read_json(path)
    if not isinstance(doc, dict):
        raise LoadError(p, "$", f"expected a submission object, got {_type_name(doc)}")
    meta: dict[str, Any] = {
        "submission_id": submission_id,
        "model": _str(doc, "model_name", p, required=True),
        "model_organization": _str(doc, "model_organization", p, required=True),
        "submitting_organization": _str(doc, "submitting_organization", p, required=True),
        "submission_date": _date(doc, "submission_date", p),
        "submission_type": _str(doc, "submission_type", p, required=False) or "standard",
        "modality": _str(doc, "modality", p, required=False) or "text",
        "reasoning_effort": _str(doc, "reasoning_effort", p, required=False),
        "trajectories_available": _bool(doc, "trajectories_available", p),
        "is_new": _bool(doc, "is_new", p),
        "manifest_section": section,
        "source": p,
    }
    method = doc.get("methodology")
    if method is not None and not isinstance(method, dict):
        raise LoadError(p, "$.methodology", f"expected an object or null, got {_type_name(method)}")
    method = method or {}
    meta["user_simulator"] = _str(method, "user_simulator", p, required=False) if method else None
    meta["tau2_bench_version"] = _str(method, "tau2_bench_version", p, required=False) if method else None
    if "results" not in doc:
        raise LoadError(p, "$.results", "missing required field (an object of per-domain results)")
    results = doc["results"]
    if not isinstance(results, dict):
        raise LoadError(p, "$.results", f"expected an object of per-domain results, got {_type_name(results)}")
    rows = []
    for domain in sorted(results, key=domain_sort_key):
        res = results[domain]
        loc = f"$.results.{domain}"
        if res is None:
            continue
        if not isinstance(res, dict):
            raise LoadError(p, loc, f"expected an object or null, got {_type_name(res)} {res!r}")
        row = dict(meta)
        row["domain"] = domain
        for key in _PASS_KEYS:
            pct = _number(res.get(key), p, f"{loc}.{key}", 0.0, 100.0)
            row[f"{key}_pct"] = pct
            row[key] = None if pct is None else pct / 100.0
        row["cost"] = _number(res.get("cost"), p, f"{loc}.cost", 0.0, None)
        rc = res.get("retrieval_config")
        if rc is not None and not isinstance(rc, str):
            raise LoadError(p, f"{loc}.retrieval_config", f"expected a string or null, got {_type_name(rc)}")
        row["retrieval_config"] = rc
        if all(row[f"{k}_pct"] is None for k in _PASS_KEYS) and row["cost"] is None:
            continue  # a domain object with nothing published
        rows.append(row)
    p1 = {r["domain"]: r["pass_1_pct"] for r in rows}
    if all(p1.get(d) is not None for d in OVERALL_DOMAINS):
        overall_pct = sum(p1[d] for d in OVERALL_DOMAINS) / len(OVERALL_DOMAINS)
        overall = sum(p1[d] / 100.0 for d in OVERALL_DOMAINS) / len(OVERALL_DOMAINS)
    else:
        overall_pct = overall = None
    for r in rows:
        r["overall_pct"] = overall_pct
        r["overall"] = overall
    return rows


def _manifest_sections(directory: Path) -> dict[str, str] | None:
    mf = directory / "manifest.json"
    if not mf.is_file():
        return None
    doc = _read_json(mf)
    if not isinstance(doc, dict):
        raise LoadError(str(mf), "$", f"expected an object, got {_type_name(doc)}")
    out: dict[str, str] = {}
    for key, section in _MANIFEST_SECTIONS.items():
        names = doc.get(key)
        if names is None:
            continue
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise LoadError(str(mf), f"$.{key}", "expected a list of submission names")
        for n in names:
            out.setdefault(n, section)
    return out


def _discover(target: Path) -> list[tuple[Path, str, str | None]]:
    """(file, submission id, manifest section) for one file or every submission under a directory."""
    if target.is_file():
        sections = _manifest_sections(target.parent) or {}
        sid = target.parent.name if target.name == "submission.json" else target.stem
        return [(target, sid, sections.get(sid))]
    if not target.is_dir():
        raise LoadError(str(target), None, "no such file or directory")
    found: list[tuple[Path, str, str | None]] = []
    sections_cache: dict[Path, dict[str, str] | None] = {}

    def section_of(directory: Path, sid: str) -> str | None:
        # the manifest may sit in the folder itself or (upstream layout) one or two levels up
        for d in (directory, *list(directory.parents)[:2]):
            if d not in sections_cache:
                sections_cache[d] = _manifest_sections(d)
            if sections_cache[d] is not None:
                return sections_cache[d].get(sid)
        return None

    for f in sorted(target.rglob("*.json")):
        if f.name in _SKIP_NAMES or any(part.startswith(".") for part in f.relative_to(target).parts):
            continue
        if f.name == "submission.json":
            sid = f.parent.name
        elif f.parent == target:
            sid = f.stem
        else:
            continue  # nested JSON that is not a submission.json (e.g. trajectories)
        found.append((f, sid, section_of(f.parent if f.name != "submission.json" else f.parent.parent, sid)))
    if not found:
        raise LoadError(str(target), None, "no leaderboard submission files (*.json or */submission.json) found")
    return found


def _each_submission(targets: Iterable[str | Path]) -> Iterator[tuple[Path, str, str | None]]:
    """:func:`_discover` over every target, each file once; one submission id found in two files (a flat
    ``<name>.json`` beside ``<name>/submission.json``, or two folders holding one submission) is refused by name —
    its rows would count twice."""
    seen: set[Path] = set()
    ids: dict[str, Path] = {}
    for t in targets:
        for f, sid, section in _discover(Path(t)):
            rf = f.resolve()
            if rf in seen:
                continue
            seen.add(rf)
            if sid in ids:
                raise LoadError(str(f), None, f"submission {sid!r} is read from two files (the other: {ids[sid]}): "
                                "its rows would count twice; load one of them")  # fmt: skip
            ids[sid] = f
            yield f, sid, section


def load_leaderboard(path_or_dir: str | Path | Sequence[str | Path]) -> pl.DataFrame:
    """Read leaderboard submissions into a tidy frame, one row per (submission, domain) with published results.

    ``path_or_dir``: a submission file, a folder of ``<name>.json`` files, an upstream ``submissions/`` folder of
    ``<name>/submission.json``, or a list of those. ``schema.json`` and ``manifest.json`` are skipped; the manifest,
    when present, fills ``manifest_section`` ("text", "voice", "legacy" or null when not listed).

    Columns (see :data:`LEADERBOARD_SCHEMA`): submission_id (file stem / folder name), model (``model_name``),
    model_organization, submitting_organization, submission_date (date), submission_type, modality (default
    "text"), reasoning_effort, user_simulator, tau2_bench_version, trajectories_available, is_new, manifest_section,
    domain, pass_1 … pass_4 (fractions = published percentage / 100), pass_1_pct … pass_4_pct (as published), cost
    (USD per trajectory, as published), retrieval_config, overall / overall_pct (unweighted mean of the airline,
    retail and telecom pass^1 when all three are published, else null), source (file path).

    Raises:
        LoadError: naming the file and the JSON path (e.g. ``$.results.airline.pass_1``) of what is malformed.

    Examples
    --------
    >>> import json, tempfile, tauk
    >>> from pathlib import Path
    >>> sub = {"model_name": "M", "model_organization": "Org", "submitting_organization": "Org",
    ...        "submission_date": "2025-06-09",
    ...        "results": {"airline": {"pass_1": 56.0}, "retail": {"pass_1": 74.0}, "telecom": {"pass_1": 34.0}}}
    >>> path = Path(tempfile.mkdtemp()) / "m_org_2025-06-09.json"
    >>> _ = path.write_text(json.dumps(sub))
    >>> board = tauk.load_leaderboard(path)
    >>> board.select("domain", "pass_1", "overall").rows()
    [('airline', 0.56, 0.5466666666666667), ('retail', 0.74, 0.5466666666666667), ('telecom', 0.34, 0.5466666666666667)]
    """
    targets: Iterable[str | Path]
    targets = [path_or_dir] if isinstance(path_or_dir, str | Path) else list(path_or_dir)
    rows: list[dict[str, Any]] = []
    for f, sid, section in _each_submission(targets):
        rows.extend(_submission_rows(f, sid, section))
    if not rows:
        return pl.DataFrame(schema=LEADERBOARD_SCHEMA)
    frame = pl.DataFrame(rows, schema=LEADERBOARD_SCHEMA)
    order = {d: i for i, d in enumerate(DOMAIN_ORDER)}
    return (
        frame.with_columns(pl.col("domain").replace_strict(order, default=len(order), return_dtype=pl.Int64).alias("_d"))
        .sort("submission_id", "_d", "domain")
        .drop("_d")
    )


# ---- voice submissions: interaction metrics with their counts ---------------------------------------------------
INTERACTION_METRICS = ("response_latency_mean", "yield_latency_mean", "response_rate", "yield_rate",
                       "agent_interruption_rate", "selectivity_backchannel", "selectivity_vocal_tic",
                       "selectivity_non_directed")  # fmt: skip
"""The interaction-metric panel of a voice submission, in the leaderboard's order."""

INTERACTION_COUNTS = ("n_simulations", "response_total", "yield_total", "backchannel_total", "vocal_tic_total",
                      "non_directed_total", "agent_interrupts_count")  # fmt: skip
"""The event counts published beside the panel (every rate's denominator, and the interruptions)."""

INTERACTION_SCHEMA: dict[str, pl.DataType] = {
    "submission_id": pl.String,
    "model": pl.String,
    "domain": pl.String,
    "metrics_version": pl.String,
    **{c: pl.Int64 for c in INTERACTION_COUNTS},
    **{m: pl.Float64 for m in INTERACTION_METRICS},
    "source": pl.String,
}
"""Columns of :func:`load_interaction_metrics`'s frame, in order."""


def _count(v: Any, path: str, loc: str) -> int | None:
    if v is None:
        return None
    x = _numeric(v)
    if x is None or not x.is_integer():
        raise LoadError(path, loc, f"expected a whole number of events, got {_type_name(v)} {v!r}")
    v = int(x)
    if v < 0:
        raise LoadError(path, loc, f"expected a count ≥ 0, got {v!r}")
    return int(v)


def _interaction_rows(path: Path, submission_id: str) -> list[dict[str, Any]]:
    p = str(path)
    doc = _read_json(path)
    if not isinstance(doc, dict):
        raise LoadError(p, "$", f"expected a submission object, got {_type_name(doc)}")
    im = doc.get("interaction_metrics")
    if im is None:
        return []
    if not isinstance(im, dict):
        raise LoadError(p, "$.interaction_metrics", f"expected an object or null, got {_type_name(im)}")
    version = im.get("version")
    if version is not None and not isinstance(version, str):
        raise LoadError(p, "$.interaction_metrics.version", f"expected a string, got {_type_name(version)}")
    domains = im.get("domains") or {}
    if not isinstance(domains, dict):
        raise LoadError(p, "$.interaction_metrics.domains", f"expected an object, got {_type_name(domains)}")
    panels = [(d, domains[d], f"$.interaction_metrics.domains.{d}") for d in sorted(domains, key=domain_sort_key)]
    if im.get("overall") is not None:
        panels.append(("overall", im["overall"], "$.interaction_metrics.overall"))
    model = doc.get("model_name") if isinstance(doc.get("model_name"), str) else None
    rows = []
    for dom, panel, loc in panels:
        if panel is None:
            continue
        if not isinstance(panel, dict):
            raise LoadError(p, loc, f"expected an object, got {_type_name(panel)}")
        counts = panel.get("counts") or {}
        if not isinstance(counts, dict):
            raise LoadError(p, f"{loc}.counts", f"expected an object, got {_type_name(counts)}")
        row: dict[str, Any] = {"submission_id": submission_id, "model": model, "domain": dom,
                               "metrics_version": version, "source": p}  # fmt: skip
        for c in INTERACTION_COUNTS:
            row[c] = _count(counts.get(c), p, f"{loc}.counts.{c}")
        for m in INTERACTION_METRICS:
            row[m] = _number(panel.get(m), p, f"{loc}.{m}", 0.0, None)
        rows.append(row)
    return rows


def load_interaction_metrics(path_or_dir: str | Path | Sequence[str | Path]) -> pl.DataFrame:
    """The voice submissions' interaction metrics *with their counts* (which :func:`load_leaderboard` leaves out):
    one row per (submission, domain), plus a row ``domain="overall"`` where the submission publishes one (the
    leaderboard's unweighted mean of the domain rates, counts summed).

    Columns (see :data:`INTERACTION_SCHEMA`): submission_id, model, domain, metrics_version, the counts
    :data:`INTERACTION_COUNTS` (n_simulations and each rate's denominator: response_total, yield_total,
    backchannel_total, vocal_tic_total, non_directed_total; agent_interrupts_count), the panel
    :data:`INTERACTION_METRICS` as published (rates as fractions, latencies in seconds), source.

    Raises:
        LoadError: naming the file and the JSON path of what is malformed (e.g. a fractional count).

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> sub = {"model_name": "V", "results": {"airline": {"pass_1": 58.0}},
    ...        "interaction_metrics": {"version": "1.0", "domains": {"airline": {
    ...            "response_rate": 0.9, "counts": {"n_simulations": 50, "response_total": 10}}}}}
    >>> path = Path(tempfile.mkdtemp()) / "v_org_2026-01-01.json"
    >>> _ = path.write_text(json.dumps(sub))
    >>> load_interaction_metrics(path).select("domain", "n_simulations", "response_total", "response_rate").rows()
    [('airline', 50, 10, 0.9)]
    """
    targets: Iterable[str | Path]
    targets = [path_or_dir] if isinstance(path_or_dir, str | Path) else list(path_or_dir)
    rows: list[dict[str, Any]] = []
    for f, sid, _section in _each_submission(targets):
        rows.extend(_interaction_rows(f, sid))
    if not rows:
        return pl.DataFrame(schema=INTERACTION_SCHEMA)
    return pl.DataFrame(rows, schema=INTERACTION_SCHEMA).sort("submission_id")
