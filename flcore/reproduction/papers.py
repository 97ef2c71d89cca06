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

#: The largest data file of a paper read (YAML, published CSV): bounded before it is parsed.
MAX_FILE_BYTES = 2_000_000


class PaperFileError(ValueError):
    """A paper's data file that cannot be trusted: one line naming the file and the key."""


#: libyaml's safe loader where PyYAML has it: the pure-Python loader takes about 2 s over
#: the five papers' claims files, in every notebook kernel.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _no_aliases(text: str, label: str) -> None:
    """Refuse YAML anchors and aliases: a few lines of nested aliases expand into gigabytes
    (an alias bomb), and no paper file needs them."""
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            line = event.start_mark.line + 1
            raise PaperFileError(f"{label}: line {line}: YAML anchors and aliases (&name, *name) are refused in "
                                 "paper files")


def read_yaml(path: Path, where: str | None = None) -> Any:
    """A YAML data file of a paper's folder, checked before it is parsed: a regular file of at
    most :data:`MAX_FILE_BYTES`, UTF-8, valid YAML without anchors or aliases; else one
    :class:`PaperFileError` line starting with ``where`` (default: the file's name)."""
    path, label = Path(path), where or Path(path).name
    if path.is_symlink() or not path.is_file():
        raise PaperFileError(f"{label}: not a regular file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise PaperFileError(f"{label}: over {MAX_FILE_BYTES:,} bytes")
    try:
        text = path.read_text(encoding="utf-8")
        _no_aliases(text, label)
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 - the safe loader
    except UnicodeDecodeError:
        raise PaperFileError(f"{label}: not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise PaperFileError(f"{label}: not valid YAML ({problem}{at})") from None


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
    if not _ships_with_flcore(folder):  # flcore's own papers are checked by its tests
        _check_files(paper_id, folder)
    PAPERS[paper_id] = Paper(paper_id, name, folder)
    return PAPERS[paper_id]


def _ships_with_flcore(folder: Path) -> bool:
    return Path(folder).resolve().is_relative_to(Path(__file__).resolve().parents[1])


def _check_files(paper_id: str, folder: Path) -> None:
    """A paper from outside flcore: its files against their schema, and its ids against the
    papers registered before it (:mod:`flcore.reproduction.paper_files`)."""
    # imported here: these modules read the registry this module holds
    from flcore.reproduction.claim_registry import all_claims
    from flcore.reproduction.inventory import inventory
    from flcore.reproduction.paper_files import check_paper_files

    check_paper_files(paper_id, folder, {item.id for item in inventory()}, {claim.id for claim in all_claims()})


def paper_ids() -> tuple[str, ...]:
    """The registered papers, in the book's order."""
    return tuple(PAPERS)


def get_paper(paper_id: str) -> Paper:
    return registered(PAPERS, paper_id, "paper")


def paper_of(artifact_id: str) -> Paper:
    """The paper an artifact id (``<paper>-table-N``, ``<paper>-fig-N``) belongs to."""
    return get_paper(artifact_id.split("-", 1)[0])
