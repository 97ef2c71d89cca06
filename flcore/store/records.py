"""Reading a JSON record that someone else may have written: bounded, strict, and checked
against its schema before any of it is used.

:func:`safe_read_json` is the one reader of the store's JSON files (and of any other
JSON file a command must not trust, such as an imported bundle's index):

1. the file is opened by :func:`flcore.safe_io.open_regular_file` -- a regular file,
   reached without links, at most ``max_bytes``;
2. it must be UTF-8 strict JSON: no ``NaN``/``Infinity`` tokens, no key given twice in
   one object, at most :data:`MAX_DEPTH` levels of nesting;
3. the value must satisfy ``schema`` (types and ranges of every field the readers use,
   lengths of lists and strings), so that code reading ``status["rounds_done"]`` gets an
   integer in range and never a string, a list or ``10**12``.

A schema is built from the small classes below (:class:`Record`, :class:`Int`,
:class:`Number`, :class:`Text`, :class:`ListOf`, :class:`JSONValue`, :class:`Nullable`).
``schema.problems(value)`` lists what is wrong, ``[]`` when nothing is.

Failures raise :class:`~flcore.store.errors.UnsafeFileError` (not a regular file, too
large) or :class:`~flcore.store.errors.InvalidRecordError` (not strict JSON, wrong
shape), each naming the file; a missing file gives ``None``.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from flcore.errors import quote
from flcore.safe_io import UnsafePathError, json_depth_exceeds, read_regular_bytes, unique_json_keys
from flcore.store.errors import InvalidRecordError, UnsafeFileError

__all__ = ["MAX_DEPTH", "MAX_RECORD_BYTES", "Bool", "Int", "JSONValue", "ListOf", "Nullable", "Number", "Record",
           "Schema", "Text", "parse_strict_json", "safe_read_json"]

#: Largest JSON record read (status, summary, config, digests): a status holds at most a
#: traceback of a few kilobytes.
MAX_RECORD_BYTES = 4 << 20
#: Deepest nesting of arrays and objects accepted (the store's records use three levels).
MAX_DEPTH = 32


class Schema:
    """What a JSON value must be; :meth:`problems` lists the ways it is not."""

    def problems(self, value: Any, where: str = "") -> list[str]:
        raise NotImplementedError


def _at(where: str) -> str:
    return f"{where}: " if where else ""


class Int(Schema):
    """An integer (not a bool) in ``low..high``."""

    def __init__(self, low: int | None = None, high: int | None = None) -> None:
        self.low, self.high = low, high

    def problems(self, value, where=""):
        if isinstance(value, bool) or not isinstance(value, int):
            return [f"{_at(where)}expected an integer, got {quote(value, 60)}"]
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            return [f"{_at(where)}{quote(value, 60)} is outside {self.low}..{self.high}"]
        return []


class Number(Schema):
    """A finite number (an int or a float, not a bool) in ``[low, high]``."""

    def __init__(self, low: float | None = None, high: float | None = None) -> None:
        self.low, self.high = low, high

    def problems(self, value, where=""):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return [f"{_at(where)}expected a number, got {quote(value, 60)}"]
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            return [f"{_at(where)}{quote(value, 60)} is outside [{self.low}, {self.high}]"]
        return []


class Text(Schema):
    """A string of at most ``max_length`` characters, one of ``choices`` if given."""

    def __init__(self, max_length: int = 4096, choices: Iterable[str] | None = None) -> None:
        self.max_length = max_length
        self.choices = tuple(choices) if choices is not None else None

    def problems(self, value, where=""):
        if not isinstance(value, str):
            return [f"{_at(where)}expected a string, got {quote(value, 60)}"]
        if len(value) > self.max_length:
            return [f"{_at(where)}a string of {len(value)} characters, more than {self.max_length}"]
        if self.choices is not None and value not in self.choices:
            return [f"{_at(where)}{quote(value, 60)} is not one of {', '.join(self.choices)}"]
        return []


class Bool(Schema):
    def problems(self, value, where=""):
        return [] if isinstance(value, bool) else [f"{_at(where)}expected true or false, got {quote(value, 60)}"]


class Nullable(Schema):
    """``null`` or a value of ``inner``."""

    def __init__(self, inner: Schema) -> None:
        self.inner = inner

    def problems(self, value, where=""):
        return [] if value is None else self.inner.problems(value, where)


def _container_problems(value, kind: type, named: str, size: str, limit: int, where: str) -> list[str]:
    """One problem when ``value`` is not a ``kind`` (``named``) or holds more than ``limit``
    entries (``size``, formatted with its length); none otherwise."""
    if not isinstance(value, kind):
        return [f"{_at(where)}expected {named}, got {quote(value, 60)}"]
    if len(value) > limit:
        return [f"{_at(where)}{size.format(len(value))}, more than {limit}"]
    return []


class ListOf(Schema):
    """A list of at most ``max_length`` items, each of ``item``."""

    def __init__(self, item: Schema, max_length: int = 1_000_000) -> None:
        self.item, self.max_length = item, max_length

    def problems(self, value, where=""):
        found = _container_problems(value, list, "a list", "a list of {} items", self.max_length, where)
        if found:
            return found
        for i, item in enumerate(value):
            found = self.item.problems(item, f"{where}[{i}]")
            if found:
                return found[:1]
        return []


class JSONValue(Schema):
    """Any JSON value whose strings and lists are bounded (a field the readers pass on
    without computing with it)."""

    def __init__(self, max_string: int = 1 << 20, max_items: int = 1_000_000) -> None:
        self.max_string, self.max_items = max_string, max_items

    def problems(self, value, where=""):
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, str) and len(item) > self.max_string:
                return [f"{_at(where)}a string of {len(item)} characters, more than {self.max_string}"]
            if isinstance(item, (list, dict)):
                if len(item) > self.max_items:
                    return [f"{_at(where)}{len(item)} items, more than {self.max_items}"]
                stack.extend(item.values() if isinstance(item, dict) else item)
        return []


_ANY = JSONValue()


class Record(Schema):
    """A JSON object: ``required`` and ``optional`` fields with their schemas; other keys
    (at most ``max_keys``, names of at most 256 characters) take ``extra`` (``None``:
    refused)."""

    def __init__(self, required: Mapping[str, Schema] | None = None, optional: Mapping[str, Schema] | None = None,
                 extra: Schema | None = _ANY, max_keys: int = 10_000) -> None:
        self.required = dict(required or {})
        self.optional = dict(optional or {})
        self.extra, self.max_keys = extra, max_keys

    def problems(self, value, where=""):
        found = _container_problems(value, dict, "an object", "{} keys", self.max_keys, where)
        if found:
            return found
        found = [f"{_at(where)}no '{name}'" for name in self.required if name not in value]
        for key, item in value.items():
            name = f"{where}.{key}" if where else str(key)
            if len(key) > 256:
                found.append(f"{_at(where)}a key of {len(key)} characters")
                continue
            schema = self.required.get(key) or self.optional.get(key) or self.extra
            if schema is None:
                found.append(f"{_at(where)}unexpected key {quote(key, 60)}")
            else:
                found += schema.problems(item, name)
        return found


def _refuse_constant(token: str):
    raise ValueError(f"{token} is not strict JSON")


def parse_strict_json(data: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """Strict JSON (module docstring, point 2); ``ValueError`` with a one-line reason."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    try:
        value = json.loads(text, object_pairs_hook=unique_json_keys, parse_constant=_refuse_constant)
    except RecursionError:
        raise ValueError(f"nested more than {max_depth} levels deep") from None
    except ValueError as exc:
        raise ValueError(str(exc).splitlines()[0][:200]) from None
    if json_depth_exceeds(value, max_depth):
        raise ValueError(f"nested more than {max_depth} levels deep")
    return value


def safe_read_json(path: str | Path, schema: Schema | None = None, max_bytes: int = MAX_RECORD_BYTES,
                   root: str | Path | None = None) -> Any:
    """The JSON value of ``path`` once it passed every check of the module docstring;
    ``None`` if the file does not exist.

    ``root``: the directory the file lies under without links (default: its parent must
    not be a link).  Raises :class:`~flcore.store.errors.UnsafeFileError` or
    :class:`~flcore.store.errors.InvalidRecordError` naming the file."""
    path = Path(path)
    try:
        data = read_regular_bytes(path, max_bytes, root)
    except FileNotFoundError:
        return None
    except UnsafePathError as exc:
        raise UnsafeFileError(str(exc)) from None
    except OSError as exc:
        raise UnsafeFileError(f"{path}: unreadable ({exc.strerror or exc})") from None
    try:
        value = parse_strict_json(data)
    except ValueError as exc:
        raise InvalidRecordError(path, f"not valid JSON ({exc})") from None
    if schema is not None:
        problems = schema.problems(value)
        if problems:
            shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
            raise InvalidRecordError(path, f"not a valid {path.name} ({shown})")
    return value
