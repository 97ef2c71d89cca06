"""One writer per run directory: an OS file lock held while a run trains.

``fcntl.flock`` on ``<run_dir>/.lock``: the kernel releases the lock when the holding
process exits, however it exits (a kill -9 included), so a crashed run never leaves a
stale lock behind.  The lock file itself stays; its existence means nothing.  The holder
writes its pid into it, for the message a second process prints.

The lock is opened only as a regular file with one name, in a run directory that is not a
link (no ``O_CREAT`` through a link, no truncation of a file elsewhere); a store that
cannot be written raises :class:`~flcore.store.errors.ReadOnlyStoreError` (reading a
finished run needs no lock: ``flcore.api``).
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from flcore.safe_io import UnsafePathError, check_real_directory, open_regular_fd
from flcore.store.errors import ReadOnlyStoreError, RunBusyError, UnsafeFileError

LOCK_FILE = ".lock"
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


def _open_lock(path: Path, flags: int) -> int:
    """The lock file's descriptor, refused unless it is a regular file with one name."""
    try:
        return open_regular_fd(path, flags | getattr(os, "O_NOFOLLOW", 0), one_name="a lock must have one name")
    except UnsafePathError as exc:
        raise UnsafeFileError(f"{exc}; fix: delete {path}") from None


class RunLock:
    """Exclusive lock on one run directory (use as a context manager or acquire/release)."""

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / LOCK_FILE
        self._fd: int | None = None

    def acquire(self, wait: bool = True) -> None:
        """Take the lock; with ``wait=False`` raise :class:`RunBusyError` if it is held."""
        if self._fd is not None:
            return
        for _ in range(100):
            fd = self._lock_once(wait)
            if fd is not None and _still_in_place(fd, self.path):
                break
            if fd is not None:
                os.close(fd)  # the holder removed the (empty) run folder: lock the new one
        else:
            raise RunBusyError(f"run {self.path.parent} keeps being removed while its lock is taken")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def _lock_once(self, wait: bool) -> int | None:
        """The locked descriptor, or None when the folder vanished meanwhile."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            check_real_directory(self.path.parent)
            fd = _open_lock(self.path, os.O_RDWR | os.O_CREAT)
        except UnsafePathError as exc:
            raise UnsafeFileError(f"{exc}; fix: remove it (a run directory is never a link, and nothing is "
                                  "written through one)") from None
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in _READ_ONLY:
                raise ReadOnlyStoreError(
                    f"the run store holding {self.path.parent} cannot be written ({exc.strerror}): the run must "
                    "be trained or repaired there; use a writable --store (a copy of this one)") from None
            raise
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
        return fd

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
        try:
            fd = _open_lock(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return False
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


def _still_in_place(fd: int, path: Path) -> bool:
    """Whether the locked file ``fd`` is still the lock file at ``path`` (a holder that
    created a run folder and recorded nothing removes it, lock file included, before it
    lets go: a process that waited on that file then locks a fresh one)."""
    try:
        return os.path.samestat(os.fstat(fd), os.lstat(path))
    except OSError:
        return False


def _read_holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""


@contextlib.contextmanager
def run_locks(store_root: str | Path, run_ids: Iterable[str]) -> Iterator[None]:
    """Hold the locks of several runs of one store (waiting for each), taken in run-id
    order so that two holders of overlapping sets cannot deadlock.  The writers of runs use
    :func:`flcore.store.lifecycle.run_lifecycle`, which takes the same locks and adds the
    finished-run lookup, resume checks, failure record and cleanup."""
    locks = [RunLock(Path(store_root) / rid) for rid in sorted(set(run_ids))]
    try:
        for lock in locks:
            lock.acquire(wait=True)
        yield
    finally:
        for lock in reversed(locks):
            lock.release()


def remove_unrecorded(run_dir: str | Path) -> None:
    """Remove a run folder its caller created and recorded nothing in, while holding its
    lock: the lock file, then the folder only if that left it empty.  A process waiting on
    the lock then takes a fresh one (:class:`RunLock` checks the file it locked is still
    there).  Never a link, never the store's root: another process may have put a run
    there meanwhile."""
    path = Path(run_dir)
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            os.unlink(path / LOCK_FILE)
            os.rmdir(path)  # only if empty: nothing else is removed
