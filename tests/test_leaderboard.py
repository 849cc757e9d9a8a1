"""load_leaderboard: every published submission loads, percentages become fractions, overall per docs/spec.md §3, and
malformed files raise LoadError naming the file and the JSON path."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tauk.errors import LoadError
from tauk.io.leaderboard import LEADERBOARD_SCHEMA, OVERALL_DOMAINS, load_leaderboard


@pytest.fixture(scope="module")
def board_dir(shared_data: Path) -> Path:
    return shared_data / "leaderboard"


@pytest.fixture(scope="module")
def board(board_dir: Path) -> pl.DataFrame:
    return load_leaderboard(board_dir)


def _submission_files(d: Path) -> list[Path]:
    return sorted(p for p in d.glob("*.json") if p.name not in ("manifest.json", "schema.json"))


def test_every_submission_loads(board: pl.DataFrame, board_dir: Path):
    files = _submission_files(board_dir)
    assert len(files) > 50  # 67 at the time of writing
    assert dict(board.schema) == LEADERBOARD_SCHEMA
    assert set(board["submission_id"].unique().to_list()) == {f.stem for f in files}
    # one row per published domain, no more
    want = 0
    for f in files:
        res = json.loads(f.read_text())["results"]
        want += sum(1 for v in res.values() if v and any(v.get(k) is not None for k in ("pass_1", "pass_2", "pass_3",
                                                                                        "pass_4", "cost")))  # fmt: skip
    assert board.height == want
    assert board.select(pl.struct("submission_id", "domain").is_unique().all()).item()


def test_percentages_become_fractions(board: pl.DataFrame, board_dir: Path):
    rows = {(r["submission_id"], r["domain"]): r for r in board.iter_rows(named=True)}
    checked = 0
    for f in _submission_files(board_dir):
        doc = json.loads(f.read_text())
        for dom, v in doc["results"].items():
            if not v or (f.stem, dom) not in rows:
                continue
            r = rows[(f.stem, dom)]
            assert r["model"] == doc["model_name"]
            assert r["submitting_organization"] == doc["submitting_organization"]
            assert str(r["submission_date"]) == doc["submission_date"]
            for k in ("pass_1", "pass_2", "pass_3", "pass_4"):
                pub = v.get(k)
                assert r[f"{k}_pct"] == pub
                assert (r[k] is None) if pub is None else r[k] == pytest.approx(pub / 100.0, abs=1e-15)
            assert r["cost"] == v.get("cost")
            checked += 1
    assert checked == board.height
    fr = board["pass_1"].drop_nulls()
    assert fr.min() >= 0.0 and fr.max() <= 1.0


def test_overall_is_unweighted_mean_of_three_domains(board: pl.DataFrame, board_dir: Path):
    for f in _submission_files(board_dir):
        res = json.loads(f.read_text())["results"]
        p1 = [(res.get(d) or {}).get("pass_1") for d in OVERALL_DOMAINS]
        sub = board.filter(pl.col("submission_id") == f.stem)
        overall = sub["overall"].unique().to_list()
        assert len(overall) == 1
        if any(x is None for x in p1):
            assert overall == [None]
        else:
            assert overall[0] == pytest.approx(sum(p1) / 300.0, abs=1e-12)
            assert sub["overall_pct"][0] == pytest.approx(sum(p1) / 3.0, abs=1e-10)
    one = board.filter(pl.col("submission_id") == "claude-opus-4-5_sierra_2026-02-26")
    assert one["overall"][0] == pytest.approx((84.0 + 79.61 + 92.32) / 300.0)
    assert "banking_knowledge" in one["domain"].to_list()  # a fourth domain does not enter overall
    partial = board.filter(pl.col("submission_id") == "claude-opus-4-1_anthropic_2025-01-15")  # no telecom
    assert partial["overall"].to_list() == [None] * partial.height


def test_manifest_sections(board: pl.DataFrame):
    sec = dict(board.select("submission_id", "manifest_section").unique().iter_rows())
    assert sec["A_EXAMPLE_new-model_example-org_2025-01-15"] is None
    assert sec["claude-opus-4-5_sierra_2026-02-26"] == "text"
    assert sec["gpt-realtime-1.5_sierra_2026-03-03"] == "voice"
    vo = board.filter(pl.col("submission_id") == "gpt-realtime-1.5_sierra_2026-03-03")
    assert set(vo["modality"].to_list()) == {"voice"}


def test_single_file_and_upstream_layout(tmp_path: Path, board_dir: Path):
    src = board_dir / "gpt-4-1_openai_2024-06-20.json"
    one = load_leaderboard(src)
    assert set(one["submission_id"]) == {"gpt-4-1_openai_2024-06-20"}
    assert one["domain"].to_list() == ["airline", "retail", "telecom"]  # canonical order
    # upstream: submissions/<name>/submission.json beside a manifest
    sub = tmp_path / "submissions"
    (sub / "my-model").mkdir(parents=True)
    (sub / "my-model" / "submission.json").write_text(src.read_text())
    (sub / "manifest.json").write_text(json.dumps({"submissions": ["my-model"]}))
    (sub / "schema.json").write_text("{}")
    up = load_leaderboard(sub)
    assert set(up["submission_id"]) == {"my-model"}
    assert set(up["manifest_section"]) == {"text"}
    assert up.drop("submission_id", "source", "manifest_section").equals(
        one.drop("submission_id", "source", "manifest_section")
    )


# ---------------------------------------------------------------------------------------------- malformed input
GOOD = {
    "model_name": "M",
    "model_organization": "O",
    "submitting_organization": "O",
    "submission_date": "2025-01-02",
    "contact_info": {},
    "results": {"airline": {"pass_1": 50.0, "pass_2": 40.0}, "retail": {"pass_1": 60.0}, "telecom": {"pass_1": 70.0}},
}


def _write(tmp_path: Path, doc, name: str = "bad.json") -> Path:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


def test_small_good_file(tmp_path: Path):
    b = load_leaderboard(_write(tmp_path, GOOD, "good.json"))
    assert b["pass_1"].to_list() == [0.5, 0.6, 0.7]
    assert b["pass_2"].to_list() == [0.4, None, None]
    assert b["overall"][0] == pytest.approx(0.6)
    assert b["modality"][0] == "text" and b["submission_type"][0] == "standard"


@pytest.mark.parametrize(
    ("mutate", "location"),
    [
        (lambda d: d["results"]["airline"].update(pass_1="high"), "$.results.airline.pass_1"),
        (lambda d: d["results"]["retail"].update(pass_2=150), "$.results.retail.pass_2"),
        (lambda d: d["results"]["telecom"].update(cost=-1), "$.results.telecom.cost"),
        (lambda d: d["results"].update(airline=[1, 2]), "$.results.airline"),
        (lambda d: d.pop("model_name"), "$.model_name"),
        (lambda d: d.update(submission_date="yesterday"), "$.submission_date"),
        (lambda d: d.update(results="none"), "$.results"),
        (lambda d: d.pop("results"), "$.results"),
    ],
)
def test_malformed_raises_with_path_and_location(tmp_path: Path, mutate, location: str):
    doc = json.loads(json.dumps(GOOD))
    mutate(doc)
    p = _write(tmp_path, doc)
    with pytest.raises(LoadError) as ei:
        load_leaderboard(tmp_path)
    assert ei.value.path == str(p)
    assert ei.value.location == location
    assert str(p) in str(ei.value) and location in str(ei.value)


def test_invalid_json_and_not_an_object(tmp_path: Path):
    p = _write(tmp_path, '{"model_name": "M",', "broken.json")
    with pytest.raises(LoadError, match="invalid JSON") as ei:
        load_leaderboard(p)
    assert ei.value.path == str(p) and "line 1" in ei.value.location
    q = _write(tmp_path, "[1, 2]", "list.json")
    with pytest.raises(LoadError) as ei:
        load_leaderboard(q)
    assert ei.value.location == "$"
    with pytest.raises(LoadError, match="no such file"):
        load_leaderboard(tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LoadError, match="no leaderboard submission"):
        load_leaderboard(empty)


# --------------------------------------------------------------------------- what the leaderboard's own schema reads
LAX = [  # (field, value): spellings upstream's Submission (pydantic, lax) reads, and some it refuses
    ("is_new", 1), ("is_new", 0), ("is_new", 1.0), ("is_new", "yes"), ("is_new", "No"), ("is_new", "TRUE"),
    ("is_new", "off"), ("is_new", 2), ("is_new", "maybe"), ("is_new", " true"), ("is_new", ""),
    ("trajectories_available", "t"), ("trajectories_available", 0.5),
    ("pass_1", "85.5"), ("pass_1", " 42 "), ("pass_1", "1e1"), ("pass_1", "high"), ("pass_1", ""),
]  # fmt: skip

_UPSTREAM_LAX = """
import json, sys
from tau2.scripts.leaderboard.submission import Submission
out = []
for doc in json.loads(sys.argv[1]):
    try:
        s = Submission.model_validate(doc)
        out.append([s.is_new, s.trajectories_available, s.results.airline.pass_1])
    except Exception:
        out.append(None)
print(json.dumps(out))
"""


def test_lax_spellings_read_as_the_leaderboard_schema_reads_them(tmp_path: Path):
    """0/1, "yes"/"no", "85.5" …: what upstream's pydantic Submission accepts, tauk reads to the same value; what it
    refuses, tauk refuses with the file and the place (a boolean where a number belongs is refused here although
    the schema would read true as 1.0)."""
    from upstream_tau2 import run_upstream

    base = {**GOOD, "contact_info": {"email": "a@b.c"}, "is_new": False, "trajectories_available": False}
    docs = []
    for field, value in LAX:
        doc = json.loads(json.dumps(base))
        (doc["results"]["airline"] if field == "pass_1" else doc)[field] = value
        docs.append(doc)
    theirs = run_upstream(_UPSTREAM_LAX, json.dumps(docs))
    for (field, value), doc, want in zip(LAX, docs, theirs, strict=True):
        p = _write(tmp_path, doc, "lax.json")
        if want is None:
            with pytest.raises(LoadError) as ei:
                load_leaderboard(p)
            assert ei.value.path == str(p) and field in ei.value.location, (field, value)
            continue
        row = load_leaderboard(p).row(0, named=True)
        assert (row["is_new"], row["trajectories_available"]) == (want[0], want[1]), (field, value)
        assert row["pass_1"] == pytest.approx(want[2] / 100.0), (field, value)
    p = _write(tmp_path, {**base, "results": {**GOOD["results"], "airline": {"pass_1": True}}}, "bool.json")
    with pytest.raises(LoadError, match="expected a number"):
        load_leaderboard(p)
