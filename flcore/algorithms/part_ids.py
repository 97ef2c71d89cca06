"""The id a part carries (docs/algorithms.md 7.1): ``@part_id("P1")`` on its class sets the
class attribute ``part_id`` that :func:`flcore.algorithms.methods.built_part_ids` reads."""
from __future__ import annotations


def part_id(id_: str):
    """Class decorator: the class is the part ``id_`` of docs/algorithms.md 7.1."""
    def mark(cls):
        cls.part_id = id_
        return cls
    return mark
