"""A paper's data files checked against their schema before anything reads them.

A paper kept outside flcore (``$FLCORE_PAPERS``) brings ``paper.yaml``, ``inventory.yaml``,
``claims.yaml`` and ``published/sources.yaml`` that no test of flcore has read.
:func:`check_paper_files` checks them when the paper registers
(:func:`flcore.reproduction.papers.register_paper`), so a wrong file is one line naming the
paper's folder, the file and the key, before any command reads it or writes anything:

- every file is a regular file of at most
  :data:`~flcore.reproduction.paper_yaml.MAX_FILE_BYTES`, and YAML without anchors
  or aliases (:func:`flcore.reproduction.paper_yaml.read_yaml`: an alias bomb expands a few
  lines into gigabytes);
- each file is the type it must be (a mapping, a list of mappings), with its required keys
  of the right types and no unknown key (a misspelt key would be ignored silently);
- ids follow their patterns: an artifact id is ``<paper>-table-N`` or ``<paper>-fig-N``,
  a claim id a lowercase hyphenated word; ids are unique across every registered paper;
- a claim names artifacts of its own paper's inventory, and its comparisons are mappings
  of run labels (the claims' own rules -- margins, seeds, later sources, needs -- are
  checked by parsing it, :mod:`flcore.reproduction.claim_registry`).

flcore's own papers are checked the same way by the test suite (``tests/test_paper_files.py``).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from flcore.reproduction.claim_registry import parse_claims
from flcore.reproduction.paper_yaml import MAX_FILE_BYTES, PaperFileError, read_yaml

#: What an artifact id is: ``<paper>-table-<n>`` or ``<paper>-fig-<n>``.
ARTIFACT_KINDS = {"table": "table", "figure": "fig"}
#: What a claim id is: lowercase words joined by hyphens.
CLAIM_ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+){0,15}")
#: The inventory classes (:mod:`flcore.reproduction.inventory`).
CLASSES = ("result", "analysis", "config", "heavy", "schematic")
#: paper.yaml: the texts its landing page shows (required) and the optional keys.
PAPER_TEXTS = ("title", "authors", "venue", "question", "method", "protocol")
#: claims.yaml: the keys of a claim, those it must have first.
CLAIM_REQUIRED = ("id", "text", "artifacts", "about", "comparisons")
CLAIM_KEYS = (*CLAIM_REQUIRED, "quote", "source", "metric", "direction", "one_seed", "margin", "by", "against",
              "seeds", "needs", "needs_reason", "published_rounds")
#: claims.yaml: the keys of a comparison.
COMPARISON_KEYS = ("better", "worse", "published", "about", "margin", "stand_in_labels", "seeds")
#: inventory.yaml: the keys of an entry.
ENTRY_REQUIRED = ("id", "paper", "kind", "class", "caption")
ENTRY_KEYS = (*ENTRY_REQUIRED, "run_groups", "not_regenerable", "heavy_parts")
#: published/sources.yaml: the keys of a source.
SOURCE_KEYS = ("paper", "source", "file", "value")


class _Where:
    """Builds the one line of a problem: ``<folder>: <file>: <key>: <problem>``."""

    def __init__(self, folder: Path, name: str):
        self.prefix = f"{folder.name}: {name}"

    def fail(self, key: str, problem: str) -> PaperFileError:
        return PaperFileError(f"{self.prefix}: {key}: {problem}" if key else f"{self.prefix}: {problem}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _mapping(value: Any, where: _Where, key: str, required: Iterable[str] = (), allowed: Iterable[str] = ()):
    if not isinstance(value, dict):
        raise where.fail(key, f"must be a mapping, got {type(value).__name__} {_short(value)}")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise where.fail(key, f"keys must be words, got {_short(bad[0])}")
    missing = [k for k in required if k not in value]
    if missing:
        raise where.fail(key, f"misses {', '.join(missing)}")
    allowed = tuple(allowed)
    unknown = [k for k in value if allowed and k not in allowed]
    if unknown:
        raise where.fail(key, f"unknown key {unknown[0]!r}; allowed: {', '.join(allowed)}")
    return value


def _text(value: Any, where: _Where, key: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise where.fail(key, f"must be {'a' if empty else 'a non-empty'} string, got {_short(value)}")
    return value


def _words(value: Any, where: _Where, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise where.fail(key, f"must be a list of strings, got {_short(value)}")
    return value


def _load(folder: Path, name: str, *, required: bool) -> Any:
    path = folder / name
    if not path.exists() and not path.is_symlink():
        if required:
            raise _Where(folder, name).fail("", "missing: a registered paper needs it")
        return None
    return read_yaml(path, where=f"{folder.name}: {name}")


def _check_paper_yaml(folder: Path, paper_id: str, registered: tuple[str, ...]) -> None:
    where = _Where(folder, "paper.yaml")
    data = _mapping(_load(folder, "paper.yaml", required=True), where, "", PAPER_TEXTS,
                    ("id", "order", "builds_on", *PAPER_TEXTS))
    for key in PAPER_TEXTS:
        _text(data[key], where, key)
    if "id" in data and data["id"] != paper_id:
        raise where.fail("id", f"is {_short(data['id'])}, but the package registers the paper {paper_id!r}")
    order = data.get("order")
    if order is not None and (isinstance(order, bool) or not isinstance(order, (int, float))):
        raise where.fail("order", f"must be a number, got {_short(order)}")
    builds_on = data.get("builds_on", [])
    if not isinstance(builds_on, list) or any(not isinstance(p, str) or p not in registered for p in builds_on):
        before = ", ".join(registered) or "none"
        raise where.fail("builds_on",
                         f"must be a list of papers registered before it ({before}), got {_short(builds_on)}")


def _check_inventory(folder: Path, paper_id: str, taken: set[str]) -> set[str]:
    where = _Where(folder, "inventory.yaml")
    data = _load(folder, "inventory.yaml", required=True)
    if not isinstance(data, list) or not data:
        raise where.fail("", f"must be a non-empty list of tables and figures, got {type(data).__name__}")
    pattern = re.compile(rf"{re.escape(paper_id)}-(table|fig)-[0-9]{{1,3}}[a-z]?")
    ids: set[str] = set()
    for number, raw in enumerate(data):
        key = f"entry {number}"
        entry = _mapping(raw, where, key, ENTRY_REQUIRED, ENTRY_KEYS)
        artifact_id = entry["id"]
        if not isinstance(artifact_id, str) or not pattern.fullmatch(artifact_id):
            raise where.fail(f"{key}.id", f"{_short(artifact_id)} must read {paper_id}-table-N or {paper_id}-fig-N")
        key = artifact_id
        if artifact_id in ids or artifact_id in taken:
            raise where.fail(key, "this id is used twice (ids are unique across every registered paper)")
        ids.add(artifact_id)
        if entry["paper"] != paper_id:
            raise where.fail(f"{key}.paper", f"is {_short(entry['paper'])}, not {paper_id!r}")
        if entry["kind"] not in ARTIFACT_KINDS:
            raise where.fail(f"{key}.kind", f"must be one of {', '.join(ARTIFACT_KINDS)}, got {_short(entry['kind'])}")
        if artifact_id.split("-")[-2] != ARTIFACT_KINDS[entry["kind"]]:
            raise where.fail(f"{key}.kind", f"is {entry['kind']}, but the id says {artifact_id.split('-')[-2]}")
        if entry["class"] not in CLASSES:
            raise where.fail(f"{key}.class", f"must be one of {', '.join(CLASSES)}, got {_short(entry['class'])}")
        _text(entry["caption"], where, f"{key}.caption")
        for field in ("run_groups", "heavy_parts"):
            if entry.get(field) is not None:
                _words(entry[field], where, f"{key}.{field}")
        if entry.get("not_regenerable") is not None:
            _text(entry["not_regenerable"], where, f"{key}.not_regenerable")
    return ids


def _check_claims(folder: Path, paper_id: str, artifacts: set[str], taken: set[str]) -> None:
    where = _Where(folder, "claims.yaml")
    data = _load(folder, "claims.yaml", required=False)
    if data is None:
        return
    data = _mapping(data, where, "", ("paper", "main_setting", "claims"), ("paper", "main_setting", "claims"))
    if data["paper"] != paper_id:
        raise where.fail("paper", f"is {_short(data['paper'])}, not {paper_id!r}")
    _mapping(data["main_setting"], where, "main_setting", ("dataset", "model"))
    if not isinstance(data["claims"], list):
        raise where.fail("claims", f"must be a list of claims, got {type(data['claims']).__name__}")
    ids: set[str] = set()
    for number, raw in enumerate(data["claims"]):
        claim = _mapping(raw, where, f"claims[{number}]", CLAIM_REQUIRED, CLAIM_KEYS)
        claim_id = claim["id"]
        if not isinstance(claim_id, str) or not CLAIM_ID.fullmatch(claim_id):
            raise where.fail(f"claims[{number}].id", f"{_short(claim_id)} must be lowercase words joined by hyphens")
        if claim_id in ids or claim_id in taken:
            raise where.fail(claim_id, "this id is used twice (ids are unique across every registered paper)")
        ids.add(claim_id)
        _text(claim["text"], where, f"{claim_id}.text")
        for key in ("quote", "source", "one_seed"):
            if key in claim:
                _text(claim[key], where, f"{claim_id}.{key}", empty=True)
        unknown = [a for a in _words(claim["artifacts"], where, f"{claim_id}.artifacts") if a not in artifacts]
        if unknown or not claim["artifacts"]:
            raise where.fail(f"{claim_id}.artifacts", f"{_short(unknown[0]) if unknown else 'none'}: a claim names "
                             "tables or figures of its own paper's inventory.yaml")
        _mapping(claim["about"], where, f"{claim_id}.about", ("dataset", "model"))
        if not isinstance(claim["comparisons"], list) or not claim["comparisons"]:
            raise where.fail(f"{claim_id}.comparisons", "must be a non-empty list of comparisons")
        for index, comparison in enumerate(claim["comparisons"]):
            key = f"{claim_id}.comparisons[{index}]"
            _mapping(comparison, where, key, ("better", "worse"), COMPARISON_KEYS)
            for side in ("better", "worse", "about", "stand_in_labels"):
                if side in comparison:
                    _mapping(comparison[side], where, f"{key}.{side}")

    try:  # the claims' own rules (margins, seeds, by, needs, directions)
        parse_claims(folder / "claims.yaml")
    except (ValueError, KeyError, TypeError) as exc:
        raise where.fail("", " ".join(str(exc).split())[:300]) from None


def _check_sources(folder: Path, paper_id: str, artifacts: set[str]) -> None:
    where = _Where(folder, "published/sources.yaml")
    data = _load(folder, "published/sources.yaml", required=False)
    if data is None:
        return
    for artifact_id, raw in _mapping(data, where, "").items():
        if artifact_id not in artifacts:
            raise where.fail(artifact_id, "is not an artifact of this paper's inventory.yaml")
        source = _mapping(raw, where, artifact_id, ("source",), SOURCE_KEYS)
        _text(source["source"], where, f"{artifact_id}.source")
        name = source.get("file")
        if name is not None:
            if not isinstance(name, str) or "/" in name or "\\" in name or name.startswith("."):
                raise where.fail(f"{artifact_id}.file", f"must be a file name in published/, got {_short(name)}")
            path = folder / "published" / name
            if path.is_symlink() or not path.is_file():
                raise where.fail(f"{artifact_id}.file", f"{name} is not a regular file in published/")
            if path.stat().st_size > MAX_FILE_BYTES:
                raise where.fail(f"{artifact_id}.file", f"{name} is over {MAX_FILE_BYTES:,} bytes")


def check_paper_files(paper_id: str, folder: Path, taken_artifacts: Iterable[str] = (),
                      taken_claims: Iterable[str] = (), registered: Iterable[str] = ()) -> None:
    """Check the data files of ``paper_id`` in ``folder`` (module docstring); ``taken_*``:
    the ids the papers registered before it hold; ``registered``: those papers, the ones
    its ``builds_on`` may name.  Raises
    :class:`~flcore.reproduction.paper_yaml.PaperFileError`, one line."""
    folder = Path(folder)
    _check_paper_yaml(folder, paper_id, tuple(registered))
    artifacts = _check_inventory(folder, paper_id, set(taken_artifacts))
    _check_claims(folder, paper_id, artifacts, set(taken_claims))
    _check_sources(folder, paper_id, artifacts)
