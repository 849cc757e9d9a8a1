"""A columnar store: ingest results files once into Parquet, open them lazily with the same API.

``tauk.ingest(SRC..., store=DIR)`` reads results files / directories of every supported shape one at a time and
writes the six frames as plain Parquet (a folder per frame, a sub-folder ``run=<key>`` per run, parts of at most
:data:`SIMULATIONS_PER_PART` whole simulations), with one entry per run that is that run's commit point: a kill at
any point leaves every run old or new, readers never fail during a re-ingest, and nothing outside the store is
read or deleted (:mod:`tauk.store._layout`). ``tauk.open(DIR)`` gives back the :class:`tauk.Results` API over lazy
Parquet scans; ``tauk.score`` and ``tauk.audit`` stream over its parts, statistics read only the trial columns they
need. The layout, its promises and the schema are in ARCHITECTURE.md; DuckDB, PyArrow and pandas read the files
without tauk.

Examples
--------
>>> import tauk, tempfile
>>> store = tempfile.mkdtemp()
>>> print(tauk.ingest("data", store, progress=False).ingested.__len__())
6
>>> res = tauk.open(store, domain="retail")
>>> sorted(res.runs["agent"])
['atlas-large', 'atlas-small', 'baseline']
"""

from ._ingest import SIMULATIONS_PER_PART, IngestReport, ingest
from ._layout import FORMAT, StoreError, read_manifest
from ._results import StoreResults, open_store

__all__ = ["FORMAT", "SIMULATIONS_PER_PART", "IngestReport", "StoreError", "StoreResults", "ingest", "open_store",
           "read_manifest"]
