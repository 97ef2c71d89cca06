"""The papers' part of the book's table of contents, generated from the registry.

``_toc.yml`` is written by hand except for its part captioned "The papers": one chapter
per registered paper (its landing page, ``book/<paper>/index``) with a section per
registered artifact page, in the inventory's order (tables, then figures, by number), then
the book's own pages under the paper's chapter (:func:`~flcore.reproduction.artifacts.register_page`).
``flcore book`` rewrites that part before it builds (:func:`update_toc`), so a new paper
or artifact reaches the book without an edit outside its folder; the text around the part,
comments included, is kept as it is.
"""
from __future__ import annotations

from pathlib import Path

from flcore.reproduction.artifacts import artifact_ids, get_artifact
from flcore.reproduction.inventory import inventory
from flcore.reproduction.papers import paper_ids

#: The caption of the generated part.
PAPERS_CAPTION = "The papers"
_PART = f"  - caption: {PAPERS_CAPTION}\n"


def papers_part() -> str:
    """The generated part of ``_toc.yml`` (YAML text, two-space indents as the file's)."""
    registered = set(artifact_ids())
    lines = [_PART.rstrip("\n"), "    chapters:"]
    for paper in paper_ids():
        lines.append(f"      - file: book/{paper}/index")
        pages = [get_artifact(item.id).book_path.removesuffix(".ipynb") for item in inventory()
                 if item.paper == paper and item.id in registered]
        pages += [get_artifact(a).book_path.removesuffix(".ipynb") for a in artifact_ids()  # the book's own, last
                  if get_artifact(a).paper == paper and get_artifact(a).kind == "page"]
        if pages:
            lines.append("        sections:")
            lines += [f"          - file: {page}" for page in pages]
    return "\n".join(lines) + "\n"


def with_papers_part(text: str) -> str:
    """``text`` (a ``_toc.yml``) with its papers' part replaced by :func:`papers_part`."""
    start = text.find(_PART)
    if start < 0:
        raise ValueError(f"_toc.yml has no part captioned {PAPERS_CAPTION!r}")
    end = text.find("  - caption: ", start + len(_PART))
    return text[:start] + papers_part() + (text[end:] if end >= 0 else "")


def update_toc(root: Path) -> bool:
    """Rewrite the papers' part of ``root/_toc.yml``; True when the file changed."""
    path = root / "_toc.yml"
    text = path.read_text()
    updated = with_papers_part(text)
    if updated != text:
        path.write_text(updated)
    return updated != text
