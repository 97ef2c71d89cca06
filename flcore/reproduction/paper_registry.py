"""The registered papers: their ids, names and data folders, in the book's order.

A paper's package registers itself (:func:`flcore.reproduction.papers.register_paper`,
which checks a paper from outside flcore first); the modules that read the papers' files
ask this registry, which knows no paper by name.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from flcore.reproduction.lookup import registered
from flcore.reproduction.paper_yaml import read_yaml


@dataclass(frozen=True)
class Paper:
    """A registered paper: its id (the prefix of its artifact ids), short name and folder."""

    id: str
    name: str
    folder: Path

    @cached_property
    def info(self) -> dict[str, Any]:
        """``paper.yaml``: title, authors, venue, question, method, protocol."""
        return read_yaml(self.folder / "paper.yaml")

    @property
    def builds_on(self) -> tuple[str, ...]:
        """The papers whose modules this paper's modules may import (``builds_on`` in
        ``paper.yaml``: e.g. a paper whose tables reuse FedSAM's runs)."""
        return tuple(self.info.get("builds_on") or ())

    @property
    def published_dir(self) -> Path:
        return self.folder / "published"


PAPERS: dict[str, Paper] = {}
#: What a paper id may be: it prefixes artifact ids (``<paper>-table-N``) and names folders
#: and pages (``book/<paper>/``), so it is a short lowercase word, never a path.
PAPER_ID = re.compile(r"[a-z][a-z0-9_]{0,39}")


def paper_ids() -> tuple[str, ...]:
    """The registered papers, in the book's order."""
    return tuple(PAPERS)


def get_paper(paper_id: str) -> Paper:
    return registered(PAPERS, paper_id, "paper")


def paper_of(artifact_id: str) -> Paper:
    """The paper an artifact id (``<paper>-table-N``, ``<paper>-fig-N``) belongs to."""
    return get_paper(artifact_id.split("-", 1)[0])


def import_layers(papers: tuple[str, ...] | None = None) -> list[str]:
    """The papers as import-linter layers, top first (``pyproject.toml``'s contract on
    ``flcore.papers``): a paper sits one layer above the highest paper it builds on, and
    the papers of one layer are independent (``a | b``: neither imports the other)."""
    papers = paper_ids() if papers is None else papers
    level: dict[str, int] = {}

    def depth(paper: str) -> int:
        if paper not in level:
            level[paper] = 1 + max((depth(p) for p in get_paper(paper).builds_on), default=-1)
        return level[paper]

    for paper in papers:
        depth(paper)
    layers = [[p for p in papers if level[p] == n] for n in range(max(level.values(), default=-1), -1, -1)]
    return [" | ".join(layer) for layer in layers if layer]
