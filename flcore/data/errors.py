"""Errors raised by the data layer."""
from __future__ import annotations


class DatasetError(Exception):
    """A dataset is missing or corrupt on disk.

    The message names the folder that was searched and says how to obtain the data
    (``download=True`` / the CLI's ``--download`` flag), so a user can act on it without
    reading a traceback.
    """
