"""Flattening run records into DataFrame rows.

Nested dicts become dotted column names (``{"optim": {"lr": 0.1}}`` ->
``"optim.lr"``).  Lists become tuples so that columns stay hashable and can be used in
``groupby`` or ``drop_duplicates``.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def flatten_dict(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``record`` with nested mappings flattened to dotted keys and lists as tuples."""
    flat: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten_dict(value, prefix=f"{name}."))
        else:
            flat[name] = _hashable(value)
    return flat


def merge_sections(sections: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """Merge ``(section_name, columns)`` pairs into one row.

    Earlier sections win a name clash; the later section's column is renamed
    ``"<section_name>.<column>"`` so that no value is silently dropped.
    """
    row: dict[str, Any] = {}
    for section, columns in sections:
        for name, value in columns.items():
            while name in row:
                name = f"{section}.{name}"
            row[name] = value
    return row


def _hashable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, Mapping):
        return tuple((k, _hashable(v)) for k, v in value.items())
    return value
