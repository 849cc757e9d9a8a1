"""A seeded batch of the input fuzzer (tests/fuzz_inputs.py): no traceback, no hang, no silently wrong count.

The full run (``python tests/fuzz_inputs.py --count 3000``, its output in benchmarks/results/fuzz_3000_seed1.txt) takes
minutes; the suite (and so CI) runs a fixed batch of 300 mutants of the smaller files, every mutation kind many times.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the workers (spawned) import it by name too
import fuzz_inputs  # noqa: E402


@pytest.mark.shared_data
def test_seeded_mutants_give_named_errors_or_reports(shared_data):
    counts, failures = fuzz_inputs.fuzz(seed=20261130, count=300, data=shared_data, jobs=2, timeout=30,
                                        small_only=True, progress=False)  # fmt: skip
    assert sum(counts.values()) == 300 * len(fuzz_inputs.MODES)
    kinds = {k for k, _, _ in counts}
    assert kinds == set(fuzz_inputs.KINDS)
    assert not failures, fuzz_inputs.table(counts) + "\n" + "\n".join(map(str, failures[:5]))
    # the batch exercises every class but the failures
    classes = {c for _, _, c in counts}
    assert {"loaded", "reported", "named_error"} <= classes
