"""Atomic file replacement: a reader sees the old file or the new one, never a mix.

The content goes to a uniquely named hidden temporary file in the destination's own
directory (so the final rename never crosses file systems), is flushed and fsync'ed,
and then ``os.replace`` moves it over the destination in one step.  The directory is
fsync'ed afterwards (where the OS allows) so the rename itself survives a power cut.

A crash before the rename leaves the destination untouched and at most one stray
``.<name>.<random>.tmp`` file behind; readers never look at those (see
``Run.remove_temp_files`` to clear them).
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import torch

from flcore.store.jsonable import dumps_json

#: Suffix of the temporary files written next to their destination.
TEMP_SUFFIX = ".tmp"


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    """Replace ``path`` with ``text`` atomically.  The parent directory must exist."""
    data = text.encode(encoding)
    _replace_atomically(Path(path), lambda f: f.write(data))


def atomic_write_json(path: str | Path, value: Any, *, sort_keys: bool = False) -> None:
    """Replace ``path`` with ``value`` as indented strict JSON (see ``to_jsonable``)."""
    atomic_write_text(path, dumps_json(value, indent=2, sort_keys=sort_keys) + "\n")


def atomic_torch_save(obj: Any, path: str | Path) -> None:
    """``torch.save(obj)`` to ``path`` atomically.  The parent directory must exist."""
    _replace_atomically(Path(path), lambda f: torch.save(obj, f))


def atomic_torch_save_digest(obj: Any, path: str | Path,
                             before_replace: Callable[[str, int], None] | None = None) -> tuple[str, int]:
    """``torch.save(obj)`` to ``path`` atomically; returns the SHA-256 and size of the bytes
    written.  ``before_replace(digest, size)`` runs once the content is on disk and before
    it replaces ``path`` (the run store records the digest there, so that a crash at any
    point leaves a file whose digest is recorded)."""
    result: dict[str, Any] = {}

    def hashed(tmp: Path) -> None:
        digest, size = hashlib.sha256(), 0
        with open(tmp, "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
        result["digest"], result["size"] = digest.hexdigest(), size
        if before_replace is not None:
            before_replace(result["digest"], size)

    _replace_atomically(Path(path), lambda f: torch.save(obj, f), hashed)
    return result["digest"], result["size"]


def temp_path_for(path: Path) -> Path:
    """A fresh temporary path next to ``path``, hidden and unique per writer."""
    return path.with_name(f".{path.name}.{uuid.uuid4().hex}{TEMP_SUFFIX}")


def _replace_atomically(path: Path, write: Callable[[IO[bytes]], Any],
                        before_replace: Callable[[Path], None] | None = None) -> None:
    tmp = temp_path_for(path)
    # os.open with mode 0o666 lets the umask decide the permissions, as a plain open()
    # would (tempfile.mkstemp would force 0o600).
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(tmp, flags, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        if before_replace is not None:
            before_replace(tmp)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno is not None and not exc.filename:
            exc.filename = str(path)  # a failed write() names no file: the message must
        elif isinstance(exc, RuntimeError) and _no_space_left(path.parent):
            # torch.save reports a failed write as a RuntimeError of its own
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path)) from exc
        raise
    fsync_directory(path.parent)


def _no_space_left(directory: Path) -> bool:
    """Whether the file system holding ``directory`` has no block left for this user."""
    try:
        return os.statvfs(directory).f_bavail == 0
    except (OSError, AttributeError):
        return False


def fsync_directory(directory: Path) -> None:
    """Persist a directory's entries (renames, new files); a no-op where unsupported."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
