"""The tutorial notebooks run (papermill, seconds each) and are book pages executed at
build time (myst-nb's per-notebook ``execution_mode: force``), listed in the table of
contents under "Tutorials"."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "notebooks" / "tutorials").glob("*.ipynb"))


@pytest.mark.slow  # a kernel start and torch import: about 10-20 s on a loaded two-core machine
@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_runs(path: Path, tmp_path):
    papermill = pytest.importorskip("papermill")
    pytest.importorskip("ipykernel")
    out = tmp_path / path.name
    papermill.execute_notebook(str(path), str(out), kernel_name="python3", cwd=str(tmp_path), progress_bar=False)
    import nbformat

    text = "".join(o.get("text", "") for c in nbformat.read(out, as_version=4).cells if c.cell_type == "code"
                   for o in c.get("outputs", []))
    if path.stem == "checking-one-step":
        assert "max |hand - flcore|" in text and "resumed round equals the uninterrupted one" in text


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
