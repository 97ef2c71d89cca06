"""An append-only JSON-lines log that survives a crash in the middle of a write.

One JSON object per line.  Each append is written and flushed before it returns (a
reader sees it at once) and, unless the caller defers it, fsync'ed: a training run defers
the fsync of its rows to its next checkpoint or status record (:func:`sync_jsonl`), since
a resumed run keeps its rows only up to its checkpoint's round anyway.  On the 2-core
machine the book is timed on one fsync takes about 6 ms, and a small run evaluates 120
times.

A crash mid-append can leave a torn last line (no trailing newline, not valid JSON).
Readers ignore an invalid *last* line; an invalid line anywhere else is real
corruption and raises ``ValueError``.  The next append repairs the tail first: a torn
line is cut off, while a complete object that only lacks its newline is kept.  Without
this repair the new row would be glued onto the torn one and both would be lost.

Rewrites (``rewrite_jsonl``) go through an atomic replace.  The log assumes one writer
at a time.  Appends go only to a regular file reached without links and with one name
(:func:`flcore.safe_io.open_for_append`); readers get the bytes from the caller, who read
them as a bounded regular file.  Each line is strict JSON (no NaN tokens, no key twice,
bounded nesting: :func:`flcore.store.records.parse_strict_json`).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from flcore.safe_io import open_for_append
from flcore.store.atomic import atomic_write_text
from flcore.store.jsonable import dumps_json
from flcore.store.records import parse_strict_json

#: Largest metrics log read: a paper-scale run evaluated every round for 20,000 rounds
#: with per-client accuracies writes a few tens of MB.
MAX_LOG_BYTES = 256 << 20


def append_jsonl(path: str | Path, rows: Iterable[Mapping[str, Any]], root: str | Path | None = None,
                 durable: bool = True) -> None:
    """Append ``rows`` (one line each), repairing a torn last line first; fsync'ed unless
    not ``durable`` (then :func:`sync_jsonl` makes them durable later)."""
    payload = "".join(_line(row) for row in rows).encode("utf-8")
    try:
        with open_for_append(path, root) as f:
            _repair_tail(f)
            f.write(payload)
            f.flush()
            if durable:
                os.fsync(f.fileno())
    except OSError as exc:
        if exc.errno is not None and not exc.filename:
            exc.filename = str(path)  # a failed write() names no file (a full disk's message must)
        raise


def sync_jsonl(path: str | Path, root: str | Path | None = None) -> None:
    """fsync the log: every row appended so far is on disk when it returns."""
    with open_for_append(path, root) as f:
        os.fsync(f.fileno())


def read_jsonl(data: bytes, name: str = "the log") -> list[dict[str, Any]]:
    """All rows of a log's content ``data``, skipping a torn last line; a corrupt line
    before the last raises ``ValueError`` naming ``name`` and the line."""
    path = name
    lines = [(number, line) for number, line in enumerate(data.split(b"\n"), 1) if line.strip()]
    rows = []
    for index, (number, line) in enumerate(lines):
        row = _parse_row(line)
        if row is None:
            if index == len(lines) - 1:
                break  # a write torn by a crash
            raise ValueError(f"{path}:{number}: corrupt line (not a JSON object)")
        rows.append(row)
    return rows


def rewrite_jsonl(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Replace the whole log with ``rows`` atomically."""
    atomic_write_text(path, "".join(_line(row) for row in rows))


def _line(row: Mapping[str, Any]) -> str:
    if not isinstance(row, Mapping):
        raise TypeError(f"a log row must be a mapping, got {type(row).__name__}")
    return dumps_json(row) + "\n"


def _parse_row(line: bytes) -> dict[str, Any] | None:
    try:
        row = parse_strict_json(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) else None


def _repair_tail(f: IO[bytes]) -> None:
    """Make the file end at a line boundary (``f`` is open in ``a+b`` mode)."""
    end = f.seek(0, os.SEEK_END)
    if end == 0:
        return
    f.seek(end - 1)
    if f.read(1) == b"\n":
        return
    f.seek(0)
    data = f.read()
    start = data.rfind(b"\n") + 1
    if _parse_row(data[start:]) is not None:
        f.write(b"\n")
    else:
        f.truncate(start)
