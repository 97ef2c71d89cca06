"""The id a part carries (docs/algorithms.md 7.1): ``@part_id("P1")`` on its class sets the
class attribute ``part_id`` that :func:`flcore.algorithms.methods.built_part_ids` reads.  A
part added after the catalog's names were written names itself too:
``@part_id("C9", "global-trajectory distillation")``, read by :func:`declared_part_names`."""
from __future__ import annotations

_NAMES: dict[str, str] = {}


def part_id(id_: str, name: str | None = None):
    """Class decorator: the class is the part ``id_`` of docs/algorithms.md 7.1, called ``name``
    in the catalog when given."""
    if name is not None and _NAMES.setdefault(id_, name) != name:
        raise ValueError(f"part id {id_!r} named twice, differently")

    def mark(cls):
        cls.part_id = id_
        return cls
    return mark


def declared_part_names() -> dict[str, str]:
    """The catalog names parts gave with their ids."""
    return dict(_NAMES)
