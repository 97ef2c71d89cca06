"""Opening files that someone else may have prepared: only regular files, never through a
link, never more than a bound.

A run store, a data cache or a config file may come from a collaborator, a CI cache or
an archive.  A name in it can be a symbolic link to a file elsewhere (reading it shows
that file's content; writing through it changes that file), a FIFO (reading blocks for
ever), a device such as ``/dev/zero`` (reading never ends) or a file of any size.
:func:`open_regular_file` opens a path only when

- no component from ``root`` down to the file is a symbolic link (``lstat`` of each
  directory, ``O_NOFOLLOW`` on the file itself);
- the file is a regular file (``fstat`` after opening: a FIFO is opened non-blocking,
  so even a FIFO never blocks the check);
- its size is at most ``max_bytes``.

Anything else raises :class:`UnsafePathError` naming the path and what it is.  A missing
file raises ``FileNotFoundError`` (the caller decides whether that is damage).  The same
checks guard the few places that write into an existing file (:func:`open_for_append`):
a file with a second hard link is refused there, since appending would change the other
name's content too.

Errors quote values through :func:`flcore.errors.quote`.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["UnsafePathError", "check_real_directory", "json_depth_exceeds", "open_for_append", "open_regular_file",
           "read_regular_bytes", "unique_json_keys"]


class UnsafePathError(OSError):
    """A path that is not what a reader expects (a link, a FIFO, a device, too large)."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def check_real_directory(path: str | Path, root: str | Path | None = None) -> None:
    """Every directory below ``root`` (exclusive: the root itself may be a link the user
    made) down to ``path`` (inclusive) is a real directory, not a link; with ``root``
    None, ``path`` itself.

    ``FileNotFoundError`` if one does not exist; :class:`UnsafePathError` otherwise."""
    path = Path(path)
    if root is None:
        parts = [path]
    else:
        root = Path(root)
        try:
            relative = path.relative_to(root)
        except ValueError:
            raise UnsafePathError(f"{path} is outside {root}") from None
        parts, current = [], root
        for name in relative.parts:
            if name in ("..", "."):
                raise UnsafePathError(f"{path}: '{name}' is not allowed inside {root}")
            current = current / name
            parts.append(current)
    for part in parts:
        mode = os.lstat(part).st_mode
        if not stat.S_ISDIR(mode):
            raise UnsafePathError(f"{part} is {_kind(mode)}, not a directory")


def open_regular_fd(path: str | Path, flags: int, one_name: str | None = None) -> int:
    """A blocking descriptor of ``path`` opened with ``flags`` (``O_NOFOLLOW`` among them
    refuses a link), refused (:class:`UnsafePathError`, the descriptor closed) unless it is a
    regular file; with ``one_name`` (why) also when it has a second hard link.  Opened
    non-blocking, so that a FIFO does not hang the open."""
    try:
        fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link
            raise UnsafePathError(f"{path} is a symbolic link; it is not followed") from None
        if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket or a FIFO without a writer
            raise UnsafePathError(f"{path} is not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePathError(f"{path} is {_kind(info.st_mode)}, not a regular file")
        if one_name is not None and info.st_nlink > 1:
            raise UnsafePathError(f"{path} has {info.st_nlink} hard links; {one_name}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_regular_file(path: str | Path, max_bytes: int, root: str | Path | None = None,
                      follow_links: bool = False) -> BinaryIO:
    """``path`` opened for binary reading after the checks of the module docstring.

    ``root``: the directory the file must lie under without links (its parent is checked
    when ``root`` is None).  ``follow_links``: a file the user named (a config file) may
    be reached through links; it must still be a bounded regular file.  The caller closes
    the file."""
    path = Path(path)
    nofollow = 0
    if not follow_links:
        check_real_directory(path.parent, root)
        nofollow = getattr(os, "O_NOFOLLOW", 0)
    fd = open_regular_fd(path, os.O_RDONLY | nofollow)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise UnsafePathError(f"{path} holds {size} bytes, more than the {max_bytes} expected")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular_bytes(path: str | Path, max_bytes: int, root: str | Path | None = None,
                       follow_links: bool = False) -> bytes:
    """The whole content of a regular file of at most ``max_bytes`` (see
    :func:`open_regular_file`); reading stops at the bound even if the file grows."""
    with open_regular_file(path, max_bytes, root, follow_links) as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UnsafePathError(f"{path} grew past the {max_bytes} bytes expected while it was read")
    return data


def open_for_append(path: str | Path, root: str | Path | None = None) -> BinaryIO:
    """``path`` opened in ``a+b`` mode (created if missing), refused when it is a link,
    not a regular file, or has a second hard link (the append would change it too)."""
    path = Path(path)
    check_real_directory(path.parent, root)
    fd = open_regular_fd(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                         one_name="appending would change the other names")
    try:
        return os.fdopen(fd, "a+b")
    except BaseException:
        os.close(fd)
        raise


def unique_json_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads(..., object_pairs_hook=unique_json_keys)``: an object whose key is given
    twice is refused (``ValueError``) instead of keeping the last value silently."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {str(key)[:60]!r} given twice")
        out[key] = value
    return out


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether lists and objects in ``value`` nest deeper than ``limit`` (checked without
    recursion, so a hostile nesting cannot exhaust the stack)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, (list, dict)))
    return False
