"""Seeded synthetic τ²-bench results with known per-task success probabilities (``tauk synth``).

The generator writes monolithic τ²-bench results files with exactly the upstream shape (top-level ``timestamp``,
``info``, ``tasks``, ``simulations``, ``simulation_index: null``) whose per-task success probabilities are *known*:

* every task ``t`` of a domain gets a difficulty ``d_t ~ Normal(0, 1.3)``;
* every agent gets a level ``q`` (its success probability on a task of difficulty 0), i.e. a skill
  ``s = logit(q)``;
* ``p(agent, task) = sigmoid(s - d_t)`` (see :func:`true_success_probabilities`).

Each trial succeeds with probability ``p``; the trajectory is then *constructed* so that the reward rules (docs/spec.md §2:
termination gate, COMMUNICATE, ACTION with ``compare_args``, product over ``reward_basis`` with DB from
``db_check.db_reward``) give exactly the recorded reward. The rules are applied by :mod:`tauk.synth.oracle`, a
plain-Python grader deliberately independent of :mod:`tauk.scoring` (the tests use it as an oracle for the
vectorised kernel).

Everything is deterministic in the arguments: the same call gives byte-identical files (no wall clock, no global
RNG; ids are uuid4-shaped values drawn from seeded ``random.Random`` instances).

Modules: :mod:`~tauk.synth.templates` (airline and retail task templates), :mod:`~tauk.synth.tasks` (task
definitions), :mod:`~tauk.synth.agents` (agents and true probabilities), :mod:`~tauk.synth.oracle` (the reward
rules), :mod:`~tauk.synth.calls` and :mod:`~tauk.synth.conversation` (trajectories),
:mod:`~tauk.synth.simulation` (runs), :mod:`~tauk.synth.write` (files, corpus, sample), :mod:`~tauk.synth.sample`
(the bundled sample's settings).

Examples
--------
>>> from tauk.synth import synthesize
>>> (run,) = synthesize({"agent-a": 0.7}, ["retail"], n_tasks=3, n_trials=2, seed=1)
>>> list(run), len(run["simulations"])
(['timestamp', 'info', 'tasks', 'simulations', 'simulation_index'], 6)
"""

from tauk._lazy import lazy_exports as _lazy_exports

# imported on first use: the command line registers `tauk synth` without loading the generator
_LAZY = {
    "_cli": "._cli",  # the handler (tests call it directly)
    "add_cli": "._cli",
    "true_success_probabilities": ".agents",
    **dict.fromkeys(("SAMPLE_AGENTS", "SAMPLE_DOMAINS", "SAMPLE_N_TASKS", "SAMPLE_N_TRIALS", "SAMPLE_SEED"), ".sample"),
    "synthesize": ".simulation",
    **dict.fromkeys(("write_corpus", "write_results", "write_sample"), ".write"),
}
_lazy_exports(__name__, _LAZY)

__all__ = [
    "SAMPLE_AGENTS",
    "SAMPLE_DOMAINS",
    "SAMPLE_N_TASKS",
    "SAMPLE_N_TRIALS",
    "SAMPLE_SEED",
    "add_cli",
    "synthesize",
    "true_success_probabilities",
    "write_corpus",
    "write_results",
    "write_sample",
]


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
