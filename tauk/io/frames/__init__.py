"""Build the tidy Polars frames from decoded runs, one module per table.

The columns, dtypes and meanings of every frame are the contracts of :mod:`tauk.io.columns`. ``runs`` and
``trials`` come from the light decode (:mod:`~tauk.io.frames.runs`, :mod:`~tauk.io.frames.trials`); ``tasks`` and
``expected_actions`` from the task definitions (:mod:`~tauk.io.frames.tasks`); ``messages`` and ``tool_calls``
from the full decode, on first use (:mod:`~tauk.io.frames.messages`); the full-duplex ``ticks``, ``utterances``
and ``tick_tool_calls`` likewise (:mod:`~tauk.io.frames.ticks`). :mod:`~tauk.io.frames._build` holds what they
share.

Examples
--------
>>> from pathlib import Path
>>> from tauk.errors import LoadReport
>>> from tauk.io.read import read_source
>>> from tauk.io.frames import build_runs, build_trials
>>> run = read_source(Path("data/atlas-large_airline.json"), True, LoadReport())
>>> build_trials([run], ["a"], ["atlas-large"], [None], [4]).group_by("trial").len().height
4
"""

from tauk.io.frames._build import canonical_json, taubench_simulation_id
from tauk.io.frames.messages import build_messages
from tauk.io.frames.runs import build_runs, run_agent, run_domain
from tauk.io.frames.tasks import build_tasks, tasks_from_list, taubench_task
from tauk.io.frames.ticks import build_ticks
from tauk.io.frames.trials import build_trials

__all__ = [
    "build_messages",
    "build_runs",
    "build_tasks",
    "build_ticks",
    "build_trials",
    "canonical_json",
    "run_agent",
    "run_domain",
    "taubench_simulation_id",
    "taubench_task",
    "tasks_from_list",
]
