"""Errors a user can act on."""
from __future__ import annotations


class ConfigError(ValueError):
    """A configuration value is invalid.  Raised before any compute starts.

    The message names the field, the value given and the values allowed; the CLI prints it
    without a traceback and exits with status 2.
    """

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"invalid config field '{field}': {message}")
