"""The bundled sample in ``data/``: which agents, domains, sizes and seed ``tauk synth --sample`` writes."""

from __future__ import annotations

__all__ = ["SAMPLE_AGENTS", "SAMPLE_DOMAINS", "SAMPLE_N_TASKS", "SAMPLE_N_TRIALS", "SAMPLE_RAW_DATA", "SAMPLE_SEED"]

SAMPLE_AGENTS: dict[str, float] = {"atlas-large": 0.8, "atlas-small": 0.55, "baseline": 0.3}
"""Agent → level (success probability on a task of median difficulty); also the generator's default agents."""
SAMPLE_DOMAINS: tuple[str, ...] = ("airline", "retail")
SAMPLE_N_TASKS = 25
SAMPLE_N_TRIALS = 4
SAMPLE_SEED = 2025
SAMPLE_RAW_DATA = "user"
"""Provider raw_data on user-simulator messages only (keeps the sample small)."""
