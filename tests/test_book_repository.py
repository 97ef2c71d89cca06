"""The repository URL a book build uses: ``_config.yml`` 's, else the checkout's GitHub
remote, else none -- then no Colab button or install cell points to a repository that
does not exist, and every page says how to set it.  Tested both ways, down to a built
one-page book."""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
import yaml

from flcore.report.repository import UNSET_NOTE, build_config, build_url, configured_url, main, remote_url

ROOT = Path(__file__).resolve().parents[1]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]


def _checkout(tmp_path: Path, url: str | None, remote: str | None) -> Path:
    """A folder with the book's ``_config.yml`` (its URL replaced by ``url``; None: empty)
    and, with ``remote``, a git repository whose ``origin`` is it."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["repository"]["url"] = url or ""
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    subprocess.run(GIT + ["init", "-q", str(tmp_path)], check=True)
    if remote:
        subprocess.run(GIT + ["-C", str(tmp_path), "remote", "add", "origin", remote], check=True)
    return tmp_path


@pytest.mark.parametrize("remote, expected", [
    ("git@github.com:lab/fork.git", "https://github.com/lab/fork"),
    ("https://github.com/lab/fork.git", "https://github.com/lab/fork"),
    ("https://github.com/lab/fork", "https://github.com/lab/fork"),
    ("ssh://git@github.com/lab/fl.core.git", "https://github.com/lab/fl.core"),
    ("https://gitlab.com/lab/fork.git", None),  # Colab opens notebooks from GitHub only
    (None, None),
])
def test_the_remote_names_the_repository_when_the_config_does_not(tmp_path, remote, expected):
    root = _checkout(tmp_path, None, remote)
    assert configured_url(root) is None and remote_url(root) == expected and build_url(root) == expected


def test_the_config_comes_first_and_is_used_as_it_is(tmp_path):
    root = _checkout(tmp_path, "https://github.com/owner/name", "git@github.com:lab/fork.git")
    assert build_url(root) == "https://github.com/owner/name" and build_config(root) is None


def test_without_a_url_the_build_hides_the_buttons_and_says_how_to_set_it(tmp_path, capsys):
    root = _checkout(tmp_path, None, None)
    config = build_config(root)
    assert config["repository"] == {"url": ""} and "launch_buttons" not in config
    assert not any(config["html"][b] for b in ("use_repository_button", "use_edit_page_button", "use_issues_button"))
    options = config["sphinx"]["config"]["html_theme_options"]
    assert options["announcement"] == UNSET_NOTE and options["launch_buttons"] == {}
    assert "repository.url in _config.yml" in UNSET_NOTE and "git remote origin" in UNSET_NOTE
    assert config["html"]["favicon"] == "book/_static/favicon.png"  # the rest of the configuration is kept
    assert main(["--root", str(root)]) == 1 and UNSET_NOTE in capsys.readouterr().err
    (tmp_path / "r").mkdir()
    with_remote = build_config(_checkout(tmp_path / "r", None, "git@github.com:lab/fork.git"))
    assert with_remote["repository"]["url"] == "https://github.com/lab/fork"
    assert with_remote["html"]["use_repository_button"] is True


def _colab_links():
    spec = importlib.util.spec_from_file_location("colab_links", ROOT / "book" / "_ext" / "colab_links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_install_cells_are_replaced_by_the_note_and_nothing_else_moves():
    drop = _colab_links().drop_install_cells
    install = ('<div class="cell docutils container"><div class="cell_input docutils container"><div class="highlight">'
               '<pre><span class="s2">&quot;flcore @ git+https://github.com/x/y&quot;</span></pre></div></div></div>')
    other = '<div class="cell docutils container"><div class="cell_output"><pre>kept</pre></div></div>'
    body = f"<section><h1>T</h1>{install}{other}{install}</section>"
    out = drop(body, "how to set it")
    assert out == ('<section><h1>T</h1><p class="flcore-install-hidden">how to set it</p>'
                   f'{other}<p class="flcore-install-hidden">how to set it</p></section>')
    assert drop(f"<p>{other}</p>", "note") == f"<p>{other}</p>"
    prose = "<p>The first cell installs flcore when it is missing (on Colab); the second holds the parameters.</p>"
    assert drop(f"<section>{prose}<p>kept</p>{install}</section>", "n") == (
        '<section><p>kept</p><p class="flcore-install-hidden">n</p></section>')


def _mini_book(root: Path) -> Path:
    """A one-page book with the repository's extensions and a notebook page with an install cell."""
    (root / "book").mkdir()
    for name in ("_ext", "_static", "_css"):
        shutil.copytree(ROOT / "book" / name, root / "book" / name)
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: book/nb\n")
    (root / "book" / "intro.md").write_text("# A book\n\nOne page.\n\n:::{container} flcore-needs-repository\n"
                                            "Open it on Colab.\n:::\n")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# A notebook page\n\nThe first cell installs flcore when it is "
                                              "missing (on Colab)."),
                nbformat.v4.new_code_cell('requirement = "flcore @ git+https://github.com/flcore/flcore"'),
                nbformat.v4.new_code_cell('print("kept")', outputs=[nbformat.v4.new_output("stream", text="kept\n")])]
    nbformat.write(nb, root / "book" / "nb.ipynb")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("remote", [None, "git@github.com:lab/fork.git"])
def test_a_built_page_links_colab_to_the_remote_or_says_how_to_set_the_url(tmp_path, remote):
    pytest.importorskip("jupyter_book")
    from flcore.site.reproduce import RESOLVED_CONFIG, build_book

    root = _mini_book(_checkout(tmp_path, None, remote))
    assert build_book(root) == 0
    assert not (root / RESOLVED_CONFIG).exists()
    page = (root / "_build" / "html" / "book" / "nb.html").read_text()
    assert '<link rel="icon" href="../_static/favicon.png"/>' in page and "kept" in page
    if remote:
        assert "https://colab.research.google.com/github/lab/fork/blob/main/book/nb.ipynb" in page
        assert "flcore @ git+" in page and "flcore-install-hidden" not in page
    else:
        assert "colab.research.google.com" not in page and "executablebooks" not in page
        assert "flcore @ git+" not in page and page.count('class="flcore-install-hidden"') == 1
        assert "installs flcore" not in page
        assert "This build knows no public repository" in page.split("bd-header-announcement", 1)[1][:600]
    intro = (root / "_build" / "html" / "book" / "intro.html").read_text()
    assert ("Open it on Colab." in intro) == bool(remote) and "One page." in intro


def test_blocks_that_speak_of_the_repository_are_dropped_and_nothing_else_moves():
    drop = _colab_links().drop_repository_blocks
    block = '<div class="flcore-needs-repository docutils container"><p>Colab <div>x</div></p></div>'
    body = f"<section><p>kept</p>{block}<div class='other'>also kept</div>{block}</section>"
    assert drop(body) == "<section><p>kept</p><div class='other'>also kept</div></section>"
    assert drop("<p>nothing</p>") == "<p>nothing</p>"


def test_the_favicon_is_a_small_png_the_config_names():
    import struct

    path = ROOT / yaml.safe_load((ROOT / "_config.yml").read_text())["html"]["favicon"]
    data = path.read_bytes()
    assert path.parent == ROOT / "book" / "_static" and len(data) < 4096
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (32, 32)


#: The page that documents the repository URL and its buttons: its subject is how to set them.
ABOUT_PUBLISHING = "book/reference/publishing.md"


def _paragraphs(text: str) -> list[str]:
    return [block.strip() for block in re.split(r"\n\s*\n", text) if block.strip()]


def _outside_containers(markdown: str) -> str:
    """``markdown`` without its ``flcore-needs-repository`` containers (dropped with the buttons)."""
    return re.sub(r"(?ms)^:::\{container\} flcore-needs-repository\n.*?^:::\s*$", "", markdown)


def test_colab_and_install_prose_is_only_where_a_build_without_a_repository_drops_it():
    """Every paragraph that speaks of Colab is one the build drops with the buttons: a
    notebook's install prose (it starts with ``INSTALL_PROSE``) or cell (``INSTALL_MARK``),
    or a page's ``flcore-needs-repository`` block."""
    links = _colab_links()
    stale = []
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                if re.search("colab", cell.source, re.I) and links.INSTALL_MARK not in cell.source:
                    stale.append(f"{path.relative_to(ROOT)}: a code cell")
                continue
            stale += [f"{path.relative_to(ROOT)}: {p[:60]!r}" for p in _paragraphs(cell.source)
                      if re.search("colab", p, re.I) and not p.startswith(links.INSTALL_PROSE)]
    for path in sorted((ROOT / "book").rglob("*.md")):
        name = path.relative_to(ROOT).as_posix()
        if name == ABOUT_PUBLISHING or name.startswith(("book/artifacts/", "book/_build/")):
            continue
        stale += [f"{name}: {p[:60]!r}" for p in _paragraphs(_outside_containers(path.read_text()))
                  if re.search("colab", p, re.I)]
    assert not stale, stale
