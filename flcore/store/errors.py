"""Errors of the run store a user can act on; each message names the file and the fix."""
from __future__ import annotations

import errno
from pathlib import Path


class StoreError(RuntimeError):
    """Base class of the run store's user-facing errors."""


class DamagedRunError(StoreError):
    """A run's record is damaged and could not be repaired from its checkpoint.

    ``problems`` lists ``"<file>: <what is wrong>"`` lines; the message ends with the fix.
    """

    def __init__(self, run_dir: str, problems: list[str], fix: str):
        self.run_dir = run_dir
        self.problems = list(problems)
        self.fix = fix
        super().__init__(f"damaged run record {run_dir}: {'; '.join(self.problems)}; fix: {fix}")


class DamagedLogError(DamagedRunError, ValueError):
    """A line of ``metrics.jsonl`` before the last that is not a row of its schema (a
    ``ValueError`` too, as the log reader has always raised for a corrupt line)."""


class UnsafeFileError(StoreError):
    """A file of the store that is not read: a link, a FIFO, a device or a file larger
    than its kind can be, or a ``.pt`` file that holds something other than tensors and
    plain containers (it may carry code) or cannot be read as one; it is never unpickled."""


class InvalidRecordError(StoreError):
    """A JSON record that is not strict JSON or not of its schema (``path``, ``problem``)."""

    def __init__(self, path: str | Path, problem: str):
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class RunBusyError(StoreError):
    """Another process is training the same run (it holds the run's lock)."""


class ReadOnlyStoreError(StoreError):
    """A run must be trained or repaired but its store cannot be written."""


#: ``errno`` values of a full file system (no space left, a disk quota reached).
DISK_FULL_ERRNOS = frozenset(getattr(errno, name) for name in ("ENOSPC", "EDQUOT") if hasattr(errno, name))


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised from) says the file system is full."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def full_path(exc: BaseException) -> str:
    """The file a disk-full error was writing, as the error names it (or "the store")."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS and exc.filename:
            return str(exc.filename)
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return "the store"


class StoreFullError(StoreError):
    """The file system holding a file to write is full (``ENOSPC``, ``EDQUOT``):
    ``path`` names the file, ``training`` says whether training had started (the run is
    then resumable from its last checkpoint)."""

    def __init__(self, message: str, path: str, training: bool):
        self.path = path
        self.training = training
        super().__init__(message)
