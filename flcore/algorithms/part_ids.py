"""The ids a part carries (docs/algorithms.md 7.1): ``@part_id("P1")`` on its class sets the
class attribute ``part_ids`` that :func:`flcore.algorithms.methods.parts_of_built` reads.  A
part that plays two roles names both (``@part_id("P6", also=("S8",))``: FedGloSS's start
perturbation is its server-side SAM too).  A part added after the catalog's names were
written names itself too: ``@part_id("C9", "global-trajectory distillation")``, read by
:func:`declared_part_names`.

A part also says what it sends beyond the model, as names of model-sized vectors: a
client part's ``uploads`` (``("scaffold_dc",)``), a server part's ``downloads``; a
method's traffic per round (rule R7) is counted from them
(:func:`flcore.algorithms.methods.traffic_of_built`)."""
from __future__ import annotations

_NAMES: dict[str, str] = {}


def part_id(id_: str, name: str | None = None, also: tuple[str, ...] = ()):
    """Class decorator: the class is the part ``id_`` of docs/algorithms.md 7.1 (and the
    parts ``also``), called ``name`` in the catalog when given."""
    if name is not None and _NAMES.setdefault(id_, name) != name:
        raise ValueError(f"part id {id_!r} named twice, differently")

    def mark(cls):
        cls.part_ids = (id_, *also)
        return cls
    return mark


def declared_part_names() -> dict[str, str]:
    """The catalog names parts gave with their ids."""
    return dict(_NAMES)
