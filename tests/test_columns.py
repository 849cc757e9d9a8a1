"""Column contracts (tauk.io.columns): the builders follow them and ARCHITECTURE.md shows exactly them."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

import tauk
from tauk.io.columns import CONTRACTS, markdown_table, schema

ROOT = Path(__file__).resolve().parents[1]


def _doc_tables() -> dict[str, list[str]]:
    """Frame name → the Markdown table lines under its ``### <frame> — ...`` heading in ARCHITECTURE.md."""
    tables: dict[str, list[str]] = {}
    frame = None
    for line in (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^###\s+(\w+)\s+—", line)
        if heading:
            frame = heading.group(1)
            tables[frame] = []
        elif line.startswith("#"):
            frame = None
        elif frame is not None and line.startswith("|"):
            tables[frame].append(line)
    return tables


def test_architecture_frame_sections_are_the_contracts() -> None:
    tables = _doc_tables()
    assert sorted(tables) == sorted(CONTRACTS), "ARCHITECTURE.md: one '### <frame> — ...' section per frame"
    for frame in CONTRACTS:
        fix = f'python -c "from tauk.io.columns import markdown_table; print(markdown_table({frame!r}))"'
        assert tables[frame] == markdown_table(frame).splitlines(), f"ARCHITECTURE.md, {frame}: paste `{fix}`"


def _check(res: tauk.Results) -> None:
    for frame, contract in CONTRACTS.items():
        df = getattr(res, frame)
        assert dict(df.schema) == schema(contract), frame
        for col in contract:
            if not col.nullable:
                assert df[col.name].null_count() == 0, f"{frame}.{col.name} is declared non-null"


def test_sample_frames_follow_the_contracts() -> None:
    _check(tauk.load(ROOT / "data"))


def test_shared_frames_follow_the_contracts(shared_data: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        _check(tauk.load(shared_data, strict=False, progress=False))


@pytest.mark.parametrize("frame", list(CONTRACTS))
def test_column_names_unique(frame: str) -> None:
    names = [c.name for c in CONTRACTS[frame]]
    assert len(names) == len(set(names))
