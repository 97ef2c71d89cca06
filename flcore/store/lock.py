"""One writer per run directory: an OS file lock held while a run trains.

``fcntl.flock`` on ``<run_dir>/.lock``: the kernel releases the lock when the holding
process exits, however it exits (a kill -9 included), so a crashed run never leaves a
stale lock behind.  The lock file itself stays; its existence means nothing.  The holder
writes its pid into it, for the message a second process prints.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from flcore.store.errors import RunBusyError

LOCK_FILE = ".lock"


class RunLock:
    """Exclusive lock on one run directory (use as a context manager or acquire/release)."""

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / LOCK_FILE
        self._fd: int | None = None

    def acquire(self, wait: bool = True) -> None:
        """Take the lock; with ``wait=False`` raise :class:`RunBusyError` if it is held."""
        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            error = RunBusyError(
                f"run {self.path.parent} is being trained by another process{holder}; "
                "`flcore run --wait` (the default) waits for it and prints its record")
            error.holder = f"run {self.path.parent} is being trained by another process{holder}"
            raise error from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def held(self) -> bool:
        """Whether some process (this one included) holds the lock now."""
        if self._fd is not None:
            return True
        if not self.path.is_file():
            return False
        fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""


@contextlib.contextmanager
def run_locks(store_root: str | Path, run_ids: Iterable[str]) -> Iterator[None]:
    """Hold the locks of several runs of one store (waiting for each), taken in run-id
    order so that two holders of overlapping sets cannot deadlock."""
    locks = [RunLock(Path(store_root) / rid) for rid in sorted(set(run_ids))]
    try:
        for lock in locks:
            lock.acquire(wait=True)
        yield
    finally:
        for lock in reversed(locks):
            lock.release()
