"""Imported once by the fork server of replay's worker processes: τ²-bench and the engine, so that every worker
starts with them imported (τ²-bench's import alone takes seconds)."""

from tauk.replay._upstream import available, require

if available():
    try:
        require()
    except Exception:  # noqa: BLE001 - the worker reports it on first use
        pass
