"""Staging folders: work written inside a store and published by rename, which a failure
removes without touching anything else.

A command that writes runs into a store from elsewhere (``flcore bundle import``) first
writes them into its own staging folder in the store's root, named
``.staging-<kind>-<random>`` (hidden: :meth:`flcore.store.RunStore.run_ids` never lists
it as a run), and moves each finished run into place with one ``os.rename``.  On any
failure it removes its staging folder and nothing else -- never the store's root, even
one it created, since another process may have written there since.

The folder's owner holds an OS lock (``flock``) on the folder's ``.owner`` file for as long
as it works there; the kernel releases it when the process dies, however it dies.
:func:`remove_abandoned` (run by the next command that stages) removes the staging
folders whose lock no process holds: those of killed processes.  It takes the lock
itself before it removes a folder, and an owner checks, once it holds its lock, that
the lock file is still the one in its folder, so a folder is never removed under a live
owner, nor used after it was removed.
"""
from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import stat
import uuid
from pathlib import Path

#: Name of a staging folder in a store's root (``kind``: what stages there).
STAGING_PATTERN = re.compile(r"\.staging-[a-z]{1,16}-[0-9a-f]{32}")
#: The file the owner of a staging folder holds its lock on.
OWNER_FILE = ".owner"
_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _try_lock(folder: Path) -> int | None:
    """A descriptor holding the lock of ``folder``'s owner file, or None when another
    process holds it or the folder is gone (or was replaced while the lock was taken)."""
    try:
        fd = os.open(folder / OWNER_FILE, _FLAGS, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        info = os.fstat(fd)
        current = os.lstat(folder / OWNER_FILE)
        if stat.S_ISREG(info.st_mode) and os.path.samestat(info, current):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


class StagingFolder:
    """A staging folder of this process in ``root`` (created with its parents); use as a
    context manager: an exception inside removes the folder and re-raises, a normal exit
    removes whatever is left in it (what was not published)."""

    def __init__(self, root: str | Path, kind: str) -> None:
        if not re.fullmatch(r"[a-z]{1,16}", kind):
            raise ValueError(f"staging kind {kind!r}: 1 to 16 lowercase letters")
        self.root = Path(root)
        self.kind = kind
        self.path: Path | None = None
        self._fd: int | None = None

    def __enter__(self) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        for _ in range(100):
            path = self.root / f".staging-{self.kind}-{uuid.uuid4().hex}"
            os.mkdir(path)
            fd = _try_lock(path)
            if fd is not None:
                self.path, self._fd = path, fd
                return path
            # another command took the new folder for an abandoned one: let it remove it
        raise OSError(errno.EAGAIN, f"no staging folder could be made in {self.root}")

    def __exit__(self, *exc) -> None:
        self.remove()

    def remove(self) -> None:
        """Remove the folder (the lock held until it is gone)."""
        if self.path is None:
            return
        try:
            shutil.rmtree(self.path, ignore_errors=True)
        finally:
            if self._fd is not None:
                os.close(self._fd)
            self.path, self._fd = None, None


def remove_abandoned(root: str | Path) -> list[Path]:
    """Remove the staging folders in ``root`` that no live process owns (module
    docstring); returns them.  Folders of live owners, and anything not named like a
    staging folder, are left alone."""
    removed = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        if not STAGING_PATTERN.fullmatch(entry.name) or not entry.is_dir(follow_symlinks=False):
            continue
        folder = Path(entry.path)
        fd = _try_lock(folder)
        if fd is None:
            continue
        try:
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            os.close(fd)
        if not os.path.lexists(folder):
            removed.append(folder)
    return removed


def is_staging(name: str) -> bool:
    """Whether ``name`` (an entry of a store's root) is a staging folder's."""
    return STAGING_PATTERN.fullmatch(name) is not None


__all__ = ["OWNER_FILE", "STAGING_PATTERN", "StagingFolder", "is_staging", "remove_abandoned"]
