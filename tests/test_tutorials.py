"""The tutorial notebooks are book pages executed at build time (myst-nb's per-notebook
``execution_mode: force``), listed in the table of contents under "Tutorials".  What they
print is checked where they run: on the smoke book's pages (``test_book_build.py``), and
the Flower tutorial, which starts Ray, under Flower's engine inside a private network
namespace whose Ray head listens on 127.0.0.1 (``test_flower.py``, the extended tier)."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "notebooks" / "tutorials").glob("*.ipynb"))
#: tutorials that start Flower's simulation (Ray)
FLOWER_TUTORIALS = {"flower-fedsam-fedgloss"}


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_is_a_book_page_executed_at_build_time(path: Path):
    import nbformat
    import yaml

    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.get("mystnb", {}).get("execution_mode") == "force"
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    parts = {part["caption"]: part for part in toc["parts"]}
    assert "Tutorials" in parts
    captions = [part["caption"] for part in toc["parts"]]
    assert captions.index("Tutorials") < captions.index("Reference")
    assert f"notebooks/tutorials/{path.stem}" in [c["file"] for c in parts["Tutorials"]["chapters"]]
