"""Parsing of raw config values (from YAML/JSON files or command-line strings) into typed
values; every failure is a :class:`~flcore.ConfigError` naming the field and
quoting at most 200 characters of the value (:func:`flcore.errors.quote`).

Values mean one thing only:

- a float is canonical: ``-0.0`` is ``0.0`` (one experiment, one run id);
- a config file is read as a bounded regular file (:data:`MAX_CONFIG_BYTES`), YAML with
  the YAML 1.2 core schema's scalars (``1:30`` is the string ``"1:30"``, not YAML 1.1's
  sexagesimal 90; ``yes``/``on`` are strings, which boolean fields accept; no
  timestamps), without anchors or aliases (a few hundred bytes of aliases expand to
  billions of items), and a key given twice in one mapping (YAML or JSON) is an error
  rather than the last one silently winning.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from flcore.errors import ConfigError, quote
from flcore.safe_io import UnsafePathError, json_depth_exceeds, read_regular_bytes, unique_json_keys


def parse_int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ConfigError(name, f"expected an integer, got {quote(value)}")
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
    raise ConfigError(name, f"expected an integer, got {quote(value)}")


def parse_float(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ConfigError(name, f"expected a number, got {quote(value)}")
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(name, f"expected a number, got {quote(value)}") from None
    if not math.isfinite(out):
        raise ConfigError(name, f"expected a finite number, got {quote(value)}")
    return out + 0.0  # -0.0 + 0.0 == 0.0: one value, one run id


def parse_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        return value.lower() in ("1", "true", "yes", "on")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ConfigError(name, f"expected true or false, got {quote(value)}")


def parse_str(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(name, f"expected a string, got {quote(value)}")
    return value.strip()


def parse_names(name: str, value: Any) -> tuple[str, ...]:
    """A list of names, or one comma-separated string (the command line's form)."""
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(name, f"expected a list of names, got {quote(value)}")
    return tuple(v.strip() for v in value)


def parse_rounds(name: str, value: Any) -> tuple[int, ...]:
    """A list of round numbers (or a comma-separated string), sorted, without repeats."""
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise ConfigError(name, f"expected a list of round numbers, got {quote(value)}")
    return tuple(sorted({parse_int(name, v) for v in value}))


def optional(parse: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    def parse_optional(name: str, value: Any) -> Any:
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null")):
            return None
        return parse(name, value)
    return parse_optional


Parser = Callable[[str, Any], Any]


def parser_for(kind: str) -> Parser:
    """The parser of a field annotated ``kind`` (``int | None`` accepts ``none``/``null``/empty)."""
    if kind.startswith("int"):
        return optional(parse_int) if "None" in kind else parse_int
    if kind.startswith("float"):
        return optional(parse_float) if "None" in kind else parse_float
    if kind.startswith("bool"):
        return parse_bool
    return optional(parse_str) if "None" in kind else parse_str


def parsers_for(field_types: Mapping[str, str]) -> dict[str, Parser]:
    """One parser per field, chosen by its annotation (:func:`parser_for`); the fields whose
    annotation does not say enough are set below."""
    parsers: dict[str, Parser] = {name: parser_for(kind) for name, kind in field_types.items()}
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


#: Largest config file read (a config holds a few dozen fields).
MAX_CONFIG_BYTES = 1 << 20
#: Deepest nesting of a config file (its values are scalars or lists of them).
MAX_CONFIG_DEPTH = 8


def _strict_loader():
    """A PyYAML ``SafeLoader`` with the YAML 1.2 core schema's scalars, no anchors or
    aliases and no key twice in one mapping (module docstring)."""
    class StrictLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.composer.ComposerError(None, None, "YAML aliases (*name) are not allowed in a config",
                                                  event.start_mark)
            event = self.peek_event()
            if getattr(event, "anchor", None) is not None:
                raise yaml.composer.ComposerError(None, None, "YAML anchors (&name) are not allowed in a config",
                                                  event.start_mark)
            return super().compose_node(parent, index)

        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                except TypeError:  # an unhashable key: the base class reports it
                    break
                if duplicate:
                    raise yaml.constructor.ConstructorError(None, None, f"key {quote(key, 60)} given twice",
                                                            key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    StrictLoader.yaml_implicit_resolvers = {}
    core = [
        ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
        ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
        ("tag:yaml.org,2002:float",
         r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
         "-+.0123456789"),
        ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ]
    for tag, pattern, first in core:
        StrictLoader.add_implicit_resolver(tag, re.compile(pattern), list(first))
    StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_core_int)
    return StrictLoader


def _construct_core_int(loader, node) -> int:
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text)


def _shown(path: Path) -> str:
    text = str(path)
    return text if len(text) <= 200 else quote(text)[1:-1]


def read_mapping_file(path: str | Path) -> dict[str, Any]:
    """The mapping a YAML or JSON experiment file holds (raw values, keys as written;
    module docstring)."""
    path = Path(path)
    try:
        data = read_regular_bytes(path, MAX_CONFIG_BYTES, follow_links=True)
    except FileNotFoundError:
        raise ConfigError("config", f"file not found: {_shown(path)}") from None
    except IsADirectoryError:
        raise ConfigError("config", f"{_shown(path)} is a directory, not a YAML or JSON file") from None
    except UnsafePathError as exc:
        raise ConfigError("config", f"{exc} (expected a YAML or JSON file)") from None
    except OSError as exc:
        raise ConfigError("config", f"cannot read {_shown(path)}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError("config", f"{_shown(path)} is not a text file (expected YAML or JSON)") from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text, object_pairs_hook=unique_json_keys)
        else:
            data = yaml.load(text, Loader=_strict_loader())  # noqa: S506 - a SafeLoader subclass
    except RecursionError:
        raise ConfigError("config", f"cannot parse {_shown(path)}: nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - any parse error is the user's file
        raise ConfigError("config", f"cannot parse {_shown(path)}: {one_line(exc)[:300]}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("config", f"{_shown(path)} must hold a mapping of field: value")
    if json_depth_exceeds(data, MAX_CONFIG_DEPTH):
        raise ConfigError("config", f"{_shown(path)} is nested more than {MAX_CONFIG_DEPTH} levels deep "
                          "(fields take scalars or lists)")
    return data
