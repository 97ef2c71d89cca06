"""Registering a paper: each paper's package calls :func:`register_paper` when imported.

A paper is a folder (``flcore/papers/<id>/``) holding its data files -- ``paper.yaml``
(title, authors, the question its landing page asks), ``inventory.yaml`` (its tables and
figures), ``claims.yaml`` (its headline claims as checkable comparisons) and
``published/`` (its published numbers, one CSV per table, and ``sources.yaml``) -- beside
its Python modules (run definitions and page helpers).  The machinery of this package
(inventory, claims, published values, artifacts) reads every registered paper's folder and
knows no paper by name; the order of registration is the order of the book
(:mod:`flcore.reproduction.paper_registry` holds it).  A paper from outside flcore has its
files checked first (:mod:`flcore.reproduction.paper_files`), against the ids of the papers
registered before it.
"""
from __future__ import annotations

from pathlib import Path

from flcore.reproduction.claim_registry import all_claims
from flcore.reproduction.inventory import inventory
from flcore.reproduction.paper_files import check_paper_files
from flcore.reproduction.paper_registry import PAPER_ID, PAPERS, Paper


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
    if not _ships_with_flcore(folder):  # flcore's own papers are checked by its tests
        _check_files(paper_id, folder)
    PAPERS[paper_id] = Paper(paper_id, name, folder)
    return PAPERS[paper_id]


def _ships_with_flcore(folder: Path) -> bool:
    return Path(folder).resolve().is_relative_to(Path(__file__).resolve().parents[1])


def _check_files(paper_id: str, folder: Path) -> None:
    """A paper from outside flcore: its files against their schema, and its ids against the
    papers registered before it (:mod:`flcore.reproduction.paper_files`)."""
    check_paper_files(paper_id, folder, {item.id for item in inventory()}, {claim.id for claim in all_claims()},
                      tuple(PAPERS))
