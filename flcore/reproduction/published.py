"""The papers' published numbers as data files (``<paper folder>/published/``, see
:mod:`flcore.reproduction.papers`).

One CSV per artifact, named by its id in the paper's ``inventory.yaml`` (``fedsam-table-2.csv``), in
long format: one row per published cell, a ``note`` column for the cells whose reading
needed a correction (OCR tokens, cross-checks with other tables).  ``sources.yaml``
says which table or figure each file transcribes.  Figures whose paper gives no
numbers have an entry with ``file: null``.
"""
from __future__ import annotations

from functools import lru_cache

import pandas as pd

from flcore.reproduction.paper_registry import get_paper, paper_ids, paper_of
from flcore.reproduction.paper_yaml import read_yaml


def sources() -> dict[str, dict]:
    """``artifact id -> {paper, source, file, value}`` from every registered paper's
    ``published/sources.yaml``."""

    return _sources(paper_ids())


@lru_cache(maxsize=4)
def _sources(papers: tuple[str, ...]) -> dict[str, dict]:

    out: dict[str, dict] = {}
    for paper in papers:
        path = get_paper(paper).published_dir / "sources.yaml"
        if path.is_file():
            out.update(read_yaml(path) or {})
    return out


def source(artifact_id: str) -> dict:
    """Where the published values of ``artifact_id`` come from."""
    try:
        return dict(sources()[artifact_id])
    except KeyError:
        raise KeyError(f"no published source recorded for {artifact_id!r}; known: "
                       + ", ".join(sorted(sources()))) from None


def has_published_values(artifact_id: str) -> bool:
    return source(artifact_id).get("file") is not None


def published(artifact_id: str) -> pd.DataFrame:
    """The published values of ``artifact_id`` as a DataFrame (one row per cell).

    Text columns stay text (``"1-2"`` epochs, ``"0/0.2"``); the ``note`` column is ``""``
    where there is nothing to say.
    """

    info = source(artifact_id)
    if info.get("file") is None:
        raise ValueError(f"{artifact_id} has no published numbers ({info.get('value')})")
    frame = pd.read_csv(paper_of(artifact_id).published_dir / info["file"], dtype=str, keep_default_na=False)
    for column in frame.columns:
        if column in ("dataset", "algorithm", "note"):
            continue
        converted = pd.to_numeric(frame[column], errors="coerce")
        if converted.notna().all():
            frame[column] = converted
    return frame
