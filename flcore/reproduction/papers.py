"""The registry of papers: each paper's package registers itself here when imported.

A paper is a folder (``flcore/papers/<id>/``) holding its data files -- ``paper.yaml``
(title, authors, the question its landing page asks), ``inventory.yaml`` (its tables and
figures), ``claims.yaml`` (its headline claims as checkable comparisons) and
``published/`` (its published numbers, one CSV per table, and ``sources.yaml``) -- beside
its Python modules (run definitions and page helpers).  The machinery of this package
(inventory, claims, published values, artifacts) reads every registered paper's folder and
knows no paper by name; the order of registration is the order of the book.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from flcore.reproduction.lookup import registered


def read_yaml(path: Path) -> Any:
    """A YAML data file shipped in a paper's folder (part of the package, so trusted),
    parsed by libyaml's safe loader where PyYAML has it: the pure-Python loader takes about
    2 s over the five papers' claims files, in every notebook kernel."""
    return yaml.load(Path(path).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506


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
    def published_dir(self) -> Path:
        return self.folder / "published"


PAPERS: dict[str, Paper] = {}
#: What a paper id may be: it prefixes artifact ids (``<paper>-table-N``) and names folders
#: and pages (``book/<paper>/``), so it is a short lowercase word, never a path.
PAPER_ID = re.compile(r"[a-z][a-z0-9_]{0,39}")


def register_paper(paper_id: str, name: str, folder: str | Path) -> Paper:
    """Register the paper whose data files are in ``folder`` (call it from the paper's
    package ``__init__``, before its modules register their artifacts)."""
    folder = Path(folder)
    if not isinstance(paper_id, str) or not PAPER_ID.fullmatch(paper_id):
        raise ValueError(f"paper id {str(paper_id)[:60]!r}: must match {PAPER_ID.pattern} (a lowercase word: it "
                         "prefixes artifact ids and names the paper's folder and pages)")
    if paper_id in PAPERS:
        raise ValueError(f"paper {paper_id!r} registered twice")
    if not (folder / "paper.yaml").is_file():
        raise FileNotFoundError(f"{folder / 'paper.yaml'}: a registered paper needs its paper.yaml")
    PAPERS[paper_id] = Paper(paper_id, name, folder)
    return PAPERS[paper_id]


def paper_ids() -> tuple[str, ...]:
    """The registered papers, in the book's order."""
    return tuple(PAPERS)


def get_paper(paper_id: str) -> Paper:
    return registered(PAPERS, paper_id, "paper")


def paper_of(artifact_id: str) -> Paper:
    """The paper an artifact id (``<paper>-table-N``, ``<paper>-fig-N``) belongs to."""
    return get_paper(artifact_id.split("-", 1)[0])
