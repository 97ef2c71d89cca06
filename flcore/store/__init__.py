"""Run records on disk: atomic writes, resumable runs, pandas queries.

See :mod:`flcore.store.run_store` for the store and its tables and
:mod:`flcore.store.run` for the files in a run directory.

Reading what someone else may have written: :func:`~flcore.store.records.safe_read_json` (a bounded, strict
JSON record checked against a schema, :mod:`flcore.store.records`) and
:func:`~flcore.safe_io.open_regular_file` (a bounded regular file reached without links,
:mod:`flcore.safe_io`).
"""
from flcore.safe_io import UnsafePathError, open_regular_file
from flcore.store.atomic import atomic_torch_save, atomic_write_json, atomic_write_text
from flcore.store.errors import (
    DamagedRunError,
    InvalidRecordError,
    ReadOnlyStoreError,
    RunBusyError,
    StoreError,
    StoreFullError,
    UnsafeFileError,
)
from flcore.store.integrity import check_run, live_status, prepare_resume
from flcore.store.jsonable import to_jsonable
from flcore.store.lifecycle import RunLifecycle, intact_terminal_summary, record_failure_if_free, run_lifecycle
from flcore.store.lock import RunLock, remove_unrecorded, run_locks
from flcore.store.records import safe_read_json
from flcore.store.run import (
    CHECKPOINT_FILE,
    CONFIG_FILE,
    DIGESTS_FILE,
    FINAL_MODEL_FILE,
    METRICS_FILE,
    NEW_STATUS,
    PROVENANCE_FILE,
    RUN_STATUSES,
    SNAPSHOT_DIR,
    STATUS_FILE,
    SUMMARY_FILE,
    TERMINAL_STATUSES,
    Run,
    config_digest,
    snapshot_file,
)
from flcore.store.run_store import RunStore

__all__ = [
    "CHECKPOINT_FILE",
    "CONFIG_FILE",
    "DIGESTS_FILE",
    "FINAL_MODEL_FILE",
    "METRICS_FILE",
    "PROVENANCE_FILE",
    "SNAPSHOT_DIR",
    "STATUS_FILE",
    "SUMMARY_FILE",
    "TERMINAL_STATUSES",
    "remove_unrecorded",
    "run_locks",
    "run_lifecycle",
    "RunLifecycle",
    "intact_terminal_summary",
    "record_failure_if_free",
    "NEW_STATUS",
    "RUN_STATUSES",
    "DamagedRunError",
    "InvalidRecordError",
    "ReadOnlyStoreError",
    "Run",
    "RunBusyError",
    "RunLock",
    "RunStore",
    "StoreError",
    "StoreFullError",
    "UnsafeFileError",
    "UnsafePathError",
    "check_run",
    "config_digest",
    "live_status",
    "open_regular_file",
    "prepare_resume",
    "safe_read_json",
    "snapshot_file",
    "atomic_torch_save",
    "atomic_write_json",
    "atomic_write_text",
    "to_jsonable",
]
