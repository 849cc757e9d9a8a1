"""``tauk synth``: seeded synthetic τ²-bench results (the bundled sample, corpora for benchmarks)."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> argparse.ArgumentParser:
    from tauk.synth import add_cli

    return add_cli(sub)
