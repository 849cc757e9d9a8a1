"""Writing synthetic results: results files, a benchmark corpus and the bundled sample in ``data/``."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from tauk.synth.sample import (
    SAMPLE_AGENTS,
    SAMPLE_DOMAINS,
    SAMPLE_N_TASKS,
    SAMPLE_N_TRIALS,
    SAMPLE_RAW_DATA,
    SAMPLE_SEED,
)
from tauk.synth.simulation import Options, iter_runs

__all__ = ["write_corpus", "write_results", "write_sample"]


def _write_stream(path: Path, header: dict[str, Any], sims: Iterator[dict[str, Any]]) -> None:
    """Write ``{**header, "simulations": [...], "simulation_index": null}`` one simulation at a time.

    The bytes equal ``orjson.dumps(whole)`` (compact JSON; checked by the tests) without holding the file in memory.
    Written to a temporary name first, then renamed.
    """
    head = orjson.dumps({**header, "simulations": None})
    assert head.endswith(b'"simulations":null}')
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(head[: -len(b"null}")])
        f.write(b"[")
        for i, sim in enumerate(sims):
            if i:
                f.write(b",")
            f.write(orjson.dumps(sim))
        f.write(b'],"simulation_index":null}')
    tmp.replace(path)


def write_results(out_dir: str | Path, agents: Mapping[str, float] | Sequence[str] = SAMPLE_AGENTS,
                  domains: Sequence[str] = ("airline", "retail"), n_tasks: int = 50, n_trials: int = 4,
                  seed: int = 0, *, infra_error_rate: float = 0.0, premature_rate: float = 0.12,
                  diagnostic_rate: float = 0.2, agent_stop_rate: float = 0.05, max_steps: int = 50,
                  max_errors: int = 10, payload_bytes: int = 0, raw_data: str = "all") -> list[Path]:
    """Write one ``<agent>_<domain>.json`` per agent × domain into ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path
        Created if missing; existing files of the same names are replaced.
    agents, domains, n_tasks, n_trials, seed, infra_error_rate, premature_rate, diagnostic_rate, agent_stop_rate, \
max_steps, max_errors, payload_bytes, raw_data
        As for :func:`~tauk.synth.synthesize`, whose dicts the files hold (as compact JSON).

    Returns
    -------
    list of Path
        The files written, domain-major.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     [p.name for p in write_results(tmp, ["a", "b"], ["retail"], n_tasks=3, n_trials=1)]
    ['a_retail.json', 'b_retail.json']
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    opts = Options(infra_error_rate, premature_rate, diagnostic_rate, agent_stop_rate, max_steps, max_errors,
                   payload_bytes, raw_data)
    paths = []
    for agent, domain, header, sims in iter_runs(agents, domains, n_tasks, n_trials, seed, opts):
        p = out / f"{agent}_{domain}.json"
        _write_stream(p, header, sims)
        paths.append(p)
    return paths


def write_corpus(path: str | Path, n_simulations: int = 12500, payload_bytes: int = 1000, seed: int = 0, *,
                 agent: str = "atlas-large", level: float = 0.6, domain: str = "airline", n_tasks: int = 50,
                 infra_error_rate: float = 0.01) -> Path:
    """One big results file for benchmarks: ``n_tasks`` tasks × ceil(n_simulations / n_tasks) trials.

    The defaults make a file of about 200 MB whose messages carry raw_data of the size and parse cost per byte of
    real results files (about 1 kB each).

    Parameters
    ----------
    path : str or Path
        The file to write (its folder is created if missing).
    n_simulations : int
        At least this many simulations are written.
    payload_bytes : int
        Approximate size of each message's ``raw_data``.
    seed, agent, level, domain, n_tasks, infra_error_rate
        As for :func:`~tauk.synth.synthesize` (one agent at ``level``, one domain).

    Returns
    -------
    Path

    Examples
    --------
    >>> import tempfile, orjson
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     doc = orjson.loads(write_corpus(f"{tmp}/corpus.json", n_simulations=30, payload_bytes=200).read_bytes())
    >>> len(doc["simulations"]), doc["info"]["num_trials"]
    (30, 1)
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    n_tasks = max(1, min(n_tasks, n_simulations))
    n_trials = max(1, math.ceil(n_simulations / n_tasks))
    opts = Options(infra_error_rate, 0.12, 0.2, 0.05, 50, 10, payload_bytes)
    for _a, _d, header, sims in iter_runs({agent: level}, [domain], n_tasks, n_trials, seed, opts):
        _write_stream(p, header, sims)
    return p


def _sample_readme() -> str:
    agents = ", ".join(f"`{a}` (level {q})" for a, q in SAMPLE_AGENTS.items())
    return (
        "# Bundled sample data (synthetic)\n\n"
        "These files are **generated** by `tauk synth --sample` (equivalently\n"
        "`python -c \"from tauk.synth import write_sample; write_sample('data')\"`) with seed "
        f"`{SAMPLE_SEED}`. Do not edit them by hand: `tests/test_synth.py` regenerates them and checks the bytes.\n\n"
        f"- agents: {agents}\n"
        f"- domains: {', '.join(SAMPLE_DOMAINS)}; {SAMPLE_N_TASKS} tasks per domain, {SAMPLE_N_TRIALS} trials\n"
        "- one τ²-bench monolithic results file per agent × domain: `<agent>_<domain>.json`\n"
        "- `raw_data` (the provider response) is kept on user-simulator messages only, to keep the files small\n\n"
        "The true per-task success probabilities are known:\n\n"
        "```python\n"
        "from tauk.synth import true_success_probabilities, SAMPLE_AGENTS, SAMPLE_DOMAINS, SAMPLE_N_TASKS, SAMPLE_SEED\n"
        "true_success_probabilities(SAMPLE_AGENTS, SAMPLE_DOMAINS, SAMPLE_N_TASKS, SAMPLE_SEED)\n"
        "```\n\n"
        "p = sigmoid(logit(level) - difficulty); airline task `7` asks for a communicate string with a comma, which\n"
        "can never match (p = 0); retail task `5` has no evaluation criteria (reward 1 unless the trial ends early).\n"
        "Recorded rewards follow the τ²-bench scoring kernel exactly.\n"
    )


def write_sample(out_dir: str | Path = "data") -> list[Path]:
    """Write the project's bundled sample (3 agents × airline, retail × 25 tasks × 4 trials) and its README.md.

    The settings are those of :mod:`tauk.synth.sample`; ``tests/test_synth.py`` checks that ``data/`` holds
    exactly these bytes.

    Parameters
    ----------
    out_dir : str or Path
        Folder to write into (``data`` for the bundled copy).

    Returns
    -------
    list of Path
        The six results files, then README.md.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     paths = write_sample(tmp)
    ...     paths[0].read_bytes() == Path("data", paths[0].name).read_bytes()
    True
    """
    out = Path(out_dir)
    paths = write_results(out, SAMPLE_AGENTS, SAMPLE_DOMAINS, SAMPLE_N_TASKS, SAMPLE_N_TRIALS, SAMPLE_SEED,
                          raw_data=SAMPLE_RAW_DATA)
    readme = out / "README.md"
    readme.write_text(_sample_readme(), encoding="utf-8")
    return [*paths, readme]

