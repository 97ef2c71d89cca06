"""Looking a name up in one of the registries of reproduction (papers, artifacts)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")


def registered(table: Mapping[str, T], key: str, kind: str) -> T:
    """``table[key]``; a name not registered raises ``KeyError`` naming the registered ones."""
    try:
        return table[key]
    except KeyError:
        raise KeyError(f"unknown {kind} {key!r}; registered: {', '.join(table) or 'none'}") from None
