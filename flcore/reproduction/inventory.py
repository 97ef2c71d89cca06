"""Every table and figure of the five papers, and what flcore does with each.

Each registered paper's ``inventory.yaml`` (:mod:`flcore.reproduction.papers`) lists its
tables and figures (id, paper, kind, class, caption, the run groups they read); together
they are checked against the project's master inventory of 110 by a test.
An artifact's *status* follows from it and from the artifact registry
(:mod:`flcore.reproduction.artifacts`; computed by :mod:`flcore.reproduction.coverage`):

- ``not_regenerable``: class ``heavy`` (its data or pretrained weights cannot be had
  offline or through torchvision) or ``schematic`` (an illustration without data); the
  entry says why;
- ``regenerated``: flcore has a notebook that regenerates it (a registered artifact) --
  on the scale's stand-in data set below the ``paper`` scale, which is no reproduction;
  ``scales_built`` lists the scales at which its page was last built successfully in
  this checkout (from the book manifest);
- ``pending``: regenerable, but no notebook yet.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from flcore.reproduction.paper_registry import get_paper, paper_ids
from flcore.reproduction.paper_yaml import read_yaml

NOT_REGENERABLE_CLASSES = ("heavy", "schematic")


@dataclass(frozen=True)
class InventoryEntry:
    """One table or figure of a paper (see module docstring)."""

    id: str
    paper: str
    kind: str
    cls: str
    caption: str
    run_groups: tuple[str, ...] = ()
    not_regenerable: str = ""
    heavy_parts: tuple[str, ...] = field(default=())

    @property
    def number(self) -> str:
        """``"2"`` for ``fedsam-table-2``."""
        return self.id.rsplit("-", 1)[1]

    @property
    def label(self) -> str:
        """``"Table 2"`` / ``"Figure 11"``."""
        return f"{'Table' if self.kind == 'table' else 'Figure'} {self.number}"


def inventory() -> tuple[InventoryEntry, ...]:
    """Every registered paper's entries, papers in their order, tables before figures, by number."""

    return _inventory(paper_ids())


@lru_cache(maxsize=4)
def _inventory(papers: tuple[str, ...]) -> tuple[InventoryEntry, ...]:

    raw = [e for paper in papers for e in read_yaml(get_paper(paper).folder / "inventory.yaml")]
    entries = [InventoryEntry(id=e["id"], paper=e["paper"], kind=e["kind"], cls=e["class"], caption=e["caption"],
                              run_groups=tuple(e.get("run_groups") or ()),
                              not_regenerable=e.get("not_regenerable", ""),
                              heavy_parts=tuple(e.get("heavy_parts") or ())) for e in raw]

    def order(entry: InventoryEntry):
        number = entry.number
        return (papers.index(entry.paper), entry.kind != "table", int(number) if number.isdigit() else 0, number)

    return tuple(sorted(entries, key=order))


def entry(artifact_id: str) -> InventoryEntry:
    for item in inventory():
        if item.id == artifact_id:
            return item
    raise KeyError(f"{artifact_id!r} is not a table or figure of the five papers")


def artifact_class(artifact_id: str) -> str:
    """The artifact's class in its paper's inventory (``result`` when it is not listed)."""
    try:
        return entry(artifact_id).cls
    except KeyError:
        return "result"
