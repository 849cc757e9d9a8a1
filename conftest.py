"""Project-wide pytest set-up: the docstring examples of ``tauk`` run as doctests from the project root (where the
bundled sample ``data/`` is), and the notebooks' percent-format sources are not modules to import."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
collect_ignore_glob = ["notebooks/*.py", "benchmarks/*", "tests/fuzz_inputs.py"]


@pytest.fixture(autouse=True)
def _doctests_at_the_project_root(request, monkeypatch):
    """Doctests read ``data/`` relative to the project root, whatever the directory pytest was started from."""
    if isinstance(request.node, pytest.DoctestItem):
        monkeypatch.chdir(ROOT)
        monkeypatch.setenv("MPLBACKEND", os.environ.get("MPLBACKEND", "Agg"))
    yield
