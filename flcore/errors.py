"""Errors a user can act on, and how they quote what the user gave."""
from __future__ import annotations

import reprlib

#: The most characters of any value an error message quotes.
QUOTE_LIMIT = 200

_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = QUOTE_LIMIT
_REPR.maxother = QUOTE_LIMIT
_REPR.maxlong = 60
for _name in ("maxdict", "maxlist", "maxtuple", "maxset", "maxfrozenset", "maxdeque", "maxarray"):
    setattr(_REPR, _name, 6)


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` cut to at most ``limit`` characters (``...`` marks the cut).

    Nested containers are shown to three levels and six items each, so quoting a value
    built from YAML aliases (a few hundred bytes that expand to billions of items) costs
    as little as quoting a number."""
    try:
        text = _REPR.repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails is still quoted
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ConfigError(ValueError):
    """A configuration value is invalid.  Raised before any compute starts.

    The message names the field, the value given (quoted by :func:`quote`) and the values
    allowed; the CLI prints it without a traceback and exits with status 2.
    """

    def __init__(self, field: str, message: str):
        self.field = field
        shown = field if field.isidentifier() and len(field) <= 64 else quote(field, 64)
        super().__init__(f"invalid config field '{shown}': {message}")


def check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    """A part's string option: ``ValueError`` naming the allowed values unless ``value`` is one."""
    if value not in allowed:
        raise ValueError(f"{name} must be {' or '.join(repr(a) for a in allowed)}, got {value!r}")
