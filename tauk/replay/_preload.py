"""Imported once by the fork server of replay's worker processes: τ²-bench and the engine, so that every worker
starts with them imported (τ²-bench's import alone takes seconds). Each worker is one of several processes sharing
the machine's cores, so its Polars work (reading and planning its parts) uses one thread."""

import os

os.environ.setdefault("POLARS_MAX_THREADS", "1")

from tauk.replay._upstream import available, require  # noqa: E402

if available():
    try:
        require()
    except Exception:  # noqa: BLE001 - the worker reports it on first use
        pass
