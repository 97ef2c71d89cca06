"""Looking a name up in one of the registries of reproduction (papers, artifacts)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")


def by_scale(table: Mapping[str, T], scale: str) -> T:
    """``table[scale]``, settings by scale; another scale raises ``ValueError``."""
    try:
        return table[scale]
    except KeyError:
        raise ValueError(f"scale must be one of {', '.join(table)}, got {scale!r}") from None


def registered(table: Mapping[str, T], key: str, kind: str) -> T:
    """``table[key]``; a name not registered raises ``KeyError`` naming the registered ones."""
    try:
        return table[key]
    except KeyError:
        raise KeyError(f"unknown {kind} {key!r}; registered: {', '.join(table) or 'none'}") from None
