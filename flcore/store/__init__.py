"""Run records on disk: atomic writes, resumable runs, pandas queries.

See :mod:`flcore.store.run_store` for the store and its tables and
:mod:`flcore.store.run` for the files in a run directory.
"""
from flcore.store.atomic import atomic_torch_save, atomic_write_json, atomic_write_text
from flcore.store.errors import DamagedRunError, RunBusyError, StoreError, UnsafeFileError
from flcore.store.integrity import check_run, prepare_resume
from flcore.store.jsonable import to_jsonable
from flcore.store.lock import RunLock, run_locks
from flcore.store.run import (
                  CHECKPOINT_FILE,
                  CONFIG_FILE,
                  FINAL_MODEL_FILE,
                  METRICS_FILE,
                  NEW_STATUS,
                  PROVENANCE_FILE,
                  RUN_STATUSES,
                  STATUS_FILE,
                  SUMMARY_FILE,
                  TERMINAL_STATUSES,
                  Run,
                  config_digest,
)
from flcore.store.run_store import RunStore

__all__ = [
    "CHECKPOINT_FILE",
    "CONFIG_FILE",
    "FINAL_MODEL_FILE",
    "METRICS_FILE",
    "PROVENANCE_FILE",
    "STATUS_FILE",
    "SUMMARY_FILE",
    "TERMINAL_STATUSES",
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
