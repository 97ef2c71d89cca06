"""Run records on disk: atomic writes, resumable runs, pandas queries.

See :mod:`flcore.store.run_store` for the store and its tables and
:mod:`flcore.store.run` for the files in a run directory.
"""
from .atomic import atomic_torch_save, atomic_write_json, atomic_write_text
from .errors import DamagedRunError, RunBusyError, StoreError, UnsafeFileError
from .integrity import check_run, prepare_resume
from .jsonable import to_jsonable
from .lock import RunLock, run_locks
from .run import NEW_STATUS, RUN_STATUSES, Run, config_digest
from .run_store import RunStore

__all__ = [
    "run_locks",
    "NEW_STATUS",
    "RUN_STATUSES",
    "DamagedRunError",
    "Run",
    "RunBusyError",
    "RunLock",
    "RunStore",
    "StoreError",
    "UnsafeFileError",
    "check_run",
    "config_digest",
    "prepare_resume",
    "atomic_torch_save",
    "atomic_write_json",
    "atomic_write_text",
    "to_jsonable",
]
