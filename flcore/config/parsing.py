"""Parsing of raw config values (from YAML/JSON files or command-line strings) into typed
values; every failure is a :class:`~flcore.ConfigError` naming the field."""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import Field
from pathlib import Path
from typing import Any

from flcore.errors import ConfigError


def parse_int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ConfigError(name, f"expected an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            try:
                as_float = float(value)
            except ValueError:
                as_float = math.nan
            if as_float.is_integer():
                return int(as_float)
    raise ConfigError(name, f"expected an integer, got {value!r}")


def parse_float(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ConfigError(name, f"expected a number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ConfigError(name, f"expected a number, got {value!r}") from None
    if not math.isfinite(out):
        raise ConfigError(name, f"expected a finite number, got {value!r}")
    return out


def parse_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        return value.lower() in ("1", "true", "yes", "on")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ConfigError(name, f"expected true or false, got {value!r}")


def parse_str(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(name, f"expected a string, got {value!r}")
    return value.strip()


def parse_names(name: str, value: Any) -> tuple[str, ...]:
    """A list of names, or one comma-separated string (the command line's form)."""
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(name, f"expected a list of names, got {value!r}")
    return tuple(v.strip() for v in value)


def parse_rounds(name: str, value: Any) -> tuple[int, ...]:
    """A list of round numbers (or a comma-separated string), sorted, without repeats."""
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise ConfigError(name, f"expected a list of round numbers, got {value!r}")
    return tuple(sorted({parse_int(name, v) for v in value}))


def optional(parse: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    def parse_optional(name: str, value: Any) -> Any:
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null")):
            return None
        return parse(name, value)
    return parse_optional


Parser = Callable[[str, Any], Any]


def parsers_for(config_fields: Iterable[Field]) -> dict[str, Parser]:
    """One parser per dataclass field, chosen by its annotation (``int | None`` accepts
    ``none``/``null``/empty); the fields whose annotation does not say enough are set below."""
    parsers: dict[str, Parser] = {}
    for f in config_fields:
        kind = str(f.type)
        if kind.startswith("int"):
            parsers[f.name] = optional(parse_int) if "None" in kind else parse_int
        elif kind.startswith("float"):
            parsers[f.name] = parse_float
        elif kind.startswith("bool"):
            parsers[f.name] = parse_bool
        else:
            parsers[f.name] = optional(parse_str) if "None" in kind else parse_str
    parsers.update({"model": optional(parse_str), "clip_norm": optional(parse_float), "scale": optional(parse_str),
                    "probes": parse_names, "snapshot_rounds": parse_rounds})
    return parsers


def one_line(exc: Exception) -> str:
    """A parser's message on one line: YAML's "problem ... at line L, column C" or the
    first line of any other message."""
    problem, mark = getattr(exc, "problem", None), getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def read_mapping_file(path: str | Path) -> dict[str, Any]:
    """The mapping a YAML or JSON experiment file holds (raw values, keys as written)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError("config", f"file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError("config", f"{path} is not a text file (expected YAML or JSON)") from None
    except OSError as exc:
        raise ConfigError("config", f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001 - any parse error is the user's file
        raise ConfigError("config", f"cannot parse {path}: {one_line(exc)}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("config", f"{path} must hold a mapping of field: value")
    return data
