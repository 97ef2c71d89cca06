"""``_toc.yml`` rewritten safely (flcore.site.toc): never through a link, a user's entry in the
generated part refused by name, a read-only or part-less file refused before any page is
written, a re-spaced caption of another part kept, and the replacement atomic."""
import os
from pathlib import Path

import pytest
from cli_runner import run_cli

from flcore.site import toc
from flcore.site.toc import TocError, papers_part, planned_toc, update_toc, with_papers_part

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "_toc.yml").read_text()


def _book(tmp_path, text=TEXT) -> Path:
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_toc.yml").write_text(text)
    return tmp_path


def test_a_respaced_caption_of_another_part_is_kept():
    spaced = TEXT.replace("  - caption: Tutorials", "  -   caption: Tutorials")
    assert "caption: Tutorials" in with_papers_part(spaced) and with_papers_part(spaced) == spaced


def test_a_chapter_a_user_added_inside_the_generated_part_is_refused_by_name(tmp_path):
    mine = TEXT.replace("      - file: book/fedsam/index\n", "      - file: book/fedsam/index\n"
                                                              "      - file: book/my-notes\n")
    with pytest.raises(TocError, match="book/my-notes"):
        with_papers_part(mine)
    # an entry flcore made for a page it no longer makes is its own: dropped without a word
    stale = TEXT.replace("      - file: book/fedsam/index\n", "      - file: book/fedsam/index\n"
                                                               "      - file: book/artifacts/fedsam/fedsam-table-99\n")
    assert with_papers_part(stale) == TEXT


def test_a_link_is_never_written_through(tmp_path):
    outside = tmp_path / "outside.yml"
    outside.write_text(TEXT.replace(papers_part(), "  - caption: The papers\n    chapters: []\n"))
    book = tmp_path / "book"
    book.mkdir()
    (book / "_toc.yml").symlink_to(outside)
    before = outside.read_text()
    with pytest.raises(TocError, match="symbolic link"):
        update_toc(book)
    assert outside.read_text() == before


def test_a_read_only_file_that_needs_rewriting_is_refused(tmp_path, monkeypatch):
    book = _book(tmp_path, TEXT.replace(papers_part(), "  - caption: The papers\n    chapters: []\n"))
    (book / "_toc.yml").chmod(0o444)
    # as a user without the right to write it (root may write a read-only file: emulated)
    monkeypatch.setattr(toc.os, "access", lambda path, mode: not (mode & os.W_OK and Path(path).name == "_toc.yml"))
    with pytest.raises(TocError, match="read-only"):
        planned_toc(book)
    (tmp_path / "same").mkdir()
    assert planned_toc(_book(tmp_path / "same")) is not None  # unchanged: nothing to write, no refusal


def test_a_file_without_the_part_is_refused_before_anything_is_written(tmp_path, capsys):
    book = _book(tmp_path, "format: jb-book\nroot: book/intro\nparts:\n  - caption: Overview\n")
    code, _, err = run_cli(capsys, "book", "--scale", "smoke", "--root", str(book), "--store", str(tmp_path / "s"),
                           "--no-build")
    assert code == 2 and "no part captioned 'The papers'" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in book.iterdir()) == ["_toc.yml", "notebooks"]  # no page, no store


def test_the_rewrite_replaces_the_file_atomically(tmp_path, monkeypatch):
    book = _book(tmp_path, TEXT.replace(papers_part(), "  - caption: The papers\n    chapters: []\n"))
    replaced = []
    real = os.replace
    monkeypatch.setattr(toc.os, "replace", lambda a, b: replaced.append((Path(a).name, Path(b).name)) or real(a, b))
    assert update_toc(book) and (book / "_toc.yml").read_text() == TEXT
    assert replaced == [("._toc.yml.flcore-tmp", "_toc.yml")]
    assert not update_toc(book)  # nothing to change: nothing written
