"""The papers' part of the book's table of contents, generated from the registry.

``_toc.yml`` is written by hand except for its part captioned "The papers": one chapter
per registered paper (its landing page, ``book/<paper>/index``) with a section per
registered artifact page, in the inventory's order (tables, then figures, by number), then
the book's own pages under the paper's chapter (:func:`~flcore.reproduction.artifacts.register_page`).
``flcore book`` rewrites that part before it builds (:func:`update_toc`), so a new paper
or artifact reaches the book without an edit outside its folder; the text around the part,
comments included, is kept as it is.

The rewrite checks before it writes (:func:`planned_toc`, called before any page is
written): ``_toc.yml`` must be a regular file reached without a link (a link could point
anywhere), writable when it changes, and hold the part; an entry inside the part that
flcore does not make (a chapter a user added there) is refused with one line naming it,
never dropped.  The new file replaces the old atomically.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from flcore.reproduction.artifacts import artifact_ids, get_artifact
from flcore.reproduction.inventory import inventory
from flcore.reproduction.paper_registry import paper_ids

#: The caption of the generated part.
PAPERS_CAPTION = "The papers"
_PART = f"  - caption: {PAPERS_CAPTION}\n"
#: A part's caption line, however it is spaced (``  -   caption: Tutorials``).
_CAPTION = re.compile(r"(?m)^(?P<indent> *)- +caption: *(?P<caption>[^#\n]*?) *(?:#[^\n]*)?$")
#: A top-level key of the file (``parts:``, ``defaults:``).
_TOP_LEVEL = re.compile(r"(?m)^[^\s#\-]")
#: An entry's page.
_FILE = re.compile(r"(?m)^ *- +file: *(?P<file>[^#\n]*?) *(?:#[^\n]*)?$")
#: The pages flcore makes in the part: a paper's landing page and its artifact pages.
_OURS = re.compile(r"book/(?:[a-z][a-z0-9_]*/index|artifacts/.+)")


class TocError(ValueError):
    """``_toc.yml`` cannot be rewritten safely (one line naming the file and why)."""


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


def _part_span(text: str) -> tuple[int, int]:
    """Where the papers' part starts and ends in ``text`` (the next part at its indent, or the end)."""
    captions = list(_CAPTION.finditer(text))
    for number, match in enumerate(captions):
        if match.group("caption").strip("'\"") == PAPERS_CAPTION:
            later = [m.start() for m in captions[number + 1:] if len(m.group("indent")) <= len(match.group("indent"))]
            top_level = _TOP_LEVEL.search(text, match.end())  # a key after the parts ends the part too
            ends = later[:1] + ([top_level.start()] if top_level else [])
            return match.start(), min(ends) if ends else len(text)
    raise TocError(f"_toc.yml has no part captioned {PAPERS_CAPTION!r}: add one (flcore writes its chapters)")


def with_papers_part(text: str) -> str:
    """``text`` (a ``_toc.yml``) with its papers' part replaced by :func:`papers_part`; an
    entry of the old part that flcore does not make is refused (:class:`TocError`)."""
    start, end = _part_span(text)
    generated = papers_part()
    mine = {m.group("file") for m in _FILE.finditer(generated)}
    foreign = [m.group("file") for m in _FILE.finditer(text[start:end])
               if m.group("file") not in mine and not _OURS.fullmatch(m.group("file"))]
    if foreign:
        raise TocError(f"_toc.yml: the part {PAPERS_CAPTION!r} is written by flcore, and holds entries it does not "
                       f"make: {', '.join(f[:80] for f in foreign[:5])}; move them to a part of your own")
    return text[:start] + generated + text[end:]


def planned_toc(root: Path) -> tuple[Path, str, str] | None:
    """``(path, old text, new text)`` of ``root/_toc.yml`` after every check of the module
    docstring (:class:`TocError` otherwise); None when the book has no ``_toc.yml``."""
    path = Path(root) / "_toc.yml"
    if path.is_symlink():
        raise TocError(f"{path} is a symbolic link: flcore rewrites its papers' part and never writes through a link; "
                       "replace it with the file")
    if not path.exists():
        return None
    if not path.is_file():
        raise TocError(f"{path} is not a regular file")
    old = path.read_text()
    new = with_papers_part(old)
    if new != old and not os.access(path, os.W_OK):
        raise TocError(f"{path} is read-only, and its papers' part needs rewriting; make it writable")
    return path, old, new


def write_toc(plan: tuple[Path, str, str] | None) -> bool:
    """Write a :func:`planned_toc` (atomically); True when the file changed."""
    if plan is None or plan[1] == plan[2]:
        return False
    path, _, new = plan
    temporary = path.with_name(f".{path.name}.flcore-tmp")
    temporary.write_text(new)
    os.replace(temporary, path)
    return True


def update_toc(root: Path) -> bool:
    """Rewrite the papers' part of ``root/_toc.yml``; True when the file changed."""
    return write_toc(planned_toc(root))
