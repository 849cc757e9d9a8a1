"""``tauk synth``: the command line of the synthetic generator."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_cli"]


def _parse_agents(text: str) -> dict[str, float] | list[str]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if all("=" in p for p in parts):
        out: dict[str, float] = {}
        for p in parts:
            name, _, val = p.partition("=")
            try:
                out[name.strip()] = float(val)
            except ValueError:
                raise argparse.ArgumentTypeError(f"--agents: {p!r}: level must be a number") from None
        return out
    if any("=" in p for p in parts):
        raise argparse.ArgumentTypeError("--agents: give either all levels (a=0.7,b=0.5) or none (a,b)")
    return parts


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``synth`` subcommand on an ``argparse`` subparsers object (handler: ``args.func``)."""
    p = subparsers.add_parser(
        "synth", help="write seeded synthetic τ²-bench results",
        description="Write seeded synthetic τ²-bench results files (<agent>_<domain>.json) with known per-task "
                    "success probabilities. `tauk synth --sample` regenerates the bundled sample in data/.")
    p.add_argument("out_dir", nargs="?", default=None, help="output folder (with --sample: default data)")
    p.add_argument("--sample", action="store_true", help="write the bundled sample (fixed agents, seed, sizes)")
    p.add_argument("--agents", type=_parse_agents, default=None,
                   help="agents as name=level,... (level: success probability on a median task) or name,...")
    p.add_argument("--domains", default="airline,retail", help="comma-separated: airline,retail")
    p.add_argument("--tasks", type=int, default=50, help="tasks per domain (default 50)")
    p.add_argument("--trials", type=int, default=4, help="trials per task (default 4)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--payload-bytes", type=int, default=0, help="pad each message's raw_data to about this size")
    p.add_argument("--infra-error-rate", type=float, default=0.0, help="share of infrastructure_error simulations")
    p.set_defaults(func=_cli)
    return p


def _cli(args: argparse.Namespace) -> int:
    from tauk.synth.sample import SAMPLE_AGENTS
    from tauk.synth.write import write_results, write_sample

    try:
        if args.sample:
            paths = write_sample(args.out_dir or "data")
        else:
            if args.out_dir is None:
                print("tauk synth: give OUT_DIR (or --sample)")
                return 2
            agents = args.agents if args.agents is not None else dict(SAMPLE_AGENTS)
            domains = [d.strip() for d in args.domains.split(",") if d.strip()]
            paths = write_results(args.out_dir, agents, domains, args.tasks, args.trials, args.seed,
                                  infra_error_rate=args.infra_error_rate, payload_bytes=args.payload_bytes)
    except ValueError as e:
        print(f"tauk synth: {e}")
        return 2
    total = 0
    for path in paths:
        size = path.stat().st_size
        total += size
        print(f"{path}  ({size:,} bytes)")
    print(f"wrote {len(paths)} files, {total:,} bytes")
    return 0
