"""The README: a two-minute read whose links and figure exist.

- At most 1,500 words (``wc -w``: whitespace-separated tokens).
- Every relative link and image in it points to a file of the repository.
- Its figure is copied out of the book by ``book/_static/readme_figure.py``: the first
  PNG an executed artifact page embeds, refused unless the page was built ok at the
  README's scale.
"""
from __future__ import annotations

import base64
import importlib.util
import json
import re
from pathlib import Path
from urllib.parse import unquote

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pytest  # noqa: E402

from flcore.report.page import figure_html  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: Inline Markdown links and images: [text](target) and ![alt](target "title").
LINK = re.compile(r"!?\[[^\]]*\]\(\s*(?:<([^>]*)>|([^)\s]+))(?:\s+\"[^\"]*\")?\s*\)")


def _script():
    spec = importlib.util.spec_from_file_location("readme_figure", ROOT / "book" / "_static" / "readme_figure.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def relative_links(text: str) -> list[str]:
    """The link targets of ``text`` that name a file of the repository (no scheme, no
    pure anchor), without their ``#fragment``."""
    targets = []
    for bracketed, bare in LINK.findall(text):
        target = bracketed or bare
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue
        targets.append(unquote(target.split("#", 1)[0]))
    return targets


def test_readme_is_at_most_1500_words():
    words = len(README.read_text().split())
    assert words <= 1500, f"README.md has {words} words; move reference material to book/reference/"


def test_link_pattern_finds_links_and_images_and_skips_urls_and_anchors():
    text = ("See [a](book/intro.md), ![fig](book/x.png \"title\"), [b](https://example.org/c.md), "
            "[c](#set-up), [d](<notebooks/a b.ipynb>) and [e](book/run%20store.md#exit).")
    assert relative_links(text) == ["book/intro.md", "book/x.png", "notebooks/a b.ipynb", "book/run store.md"]


def test_every_relative_link_in_the_readme_points_to_an_existing_file():
    links = relative_links(README.read_text())
    assert "book/_static/readme-figure.png" in links and any(link.startswith("book/reference/") for link in links)
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_readme_figure_is_a_png():
    assert (ROOT / "book" / "_static" / "readme-figure.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def _page(root: Path, figures: list, status: str = "ok", scale: str = "small") -> None:
    """An executed artifact page as ``flcore reproduce`` leaves it: the notebook under
    book/artifacts/ with the figures' HTML outputs, and its manifest entry."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Figure 11"), nbformat.v4.new_code_cell("page.table(...)")]
    notebook.cells[1].outputs = [nbformat.v4.new_output("display_data", {"text/plain": "<table>"})]
    for fig in figures:
        cell = nbformat.v4.new_code_cell("page.figure(...)")
        cell.outputs = [nbformat.v4.new_output("display_data", {"text/html": figure_html(fig, "alt", "caption"),
                                                                "text/plain": "<IPython.core.display.HTML>"})]
        notebook.cells.append(cell)
    path = root / "book" / "artifacts" / "fedsam" / "fedsam-fig-11.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)  # nbformat splits the HTML into a list of lines
    manifest = {"artifacts": {"fedsam-fig-11": {"status": status, "scale": scale}}}
    (root / "book" / "_artifacts.json").write_text(json.dumps(manifest))


def _figure(colour: str):
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1], [0, 1], color=colour)
    return fig


def test_readme_figure_script_copies_the_pages_first_figure_byte_for_byte(tmp_path):
    first, second = _figure("red"), _figure("blue")
    expected = base64.b64decode(re.search(r"base64,([^\"]+)\"", figure_html(first, "a", "c")).group(1))
    _page(tmp_path, [first, second])
    plt.close("all")
    output = tmp_path / "figure.png"
    assert _script().main(["--root", str(tmp_path), "--output", str(output)]) == 0
    assert output.read_bytes() == expected
    assert _script().page_figure(tmp_path, index=1) != expected  # the second figure differs


@pytest.mark.parametrize("status, scale", [("ok", "smoke"), ("failed", "small")])
def test_readme_figure_script_refuses_a_page_built_otherwise(tmp_path, capsys, status, scale):
    _page(tmp_path, [_figure("red")], status=status, scale=scale)
    plt.close("all")
    output = tmp_path / "figure.png"
    assert _script().main(["--root", str(tmp_path), "--output", str(output)]) == 2
    assert not output.exists()
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "flcore reproduce fedsam-fig-11 --scale small" in err


def test_readme_figure_script_refuses_a_missing_page_and_a_page_without_figures(tmp_path):
    script = _script()
    with pytest.raises(script.FigureError, match="not built"):
        script.page_figure(tmp_path)
    _page(tmp_path, [])
    with pytest.raises(script.FigureError, match="0 figure"):
        script.page_figure(tmp_path)
