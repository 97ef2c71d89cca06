"""The tutorial notebooks run (papermill, seconds each) and are book pages executed at
build time (myst-nb's per-notebook ``execution_mode: force``), listed in the table of
contents under "Tutorials".  A tutorial that starts Flower's simulation runs inside a
private network namespace whose Ray head listens on 127.0.0.1 (``ray_namespace.py``),
stopped even when the notebook fails."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "notebooks" / "tutorials").glob("*.ipynb"))
#: tutorials that start Flower's simulation (Ray)
FLOWER_TUTORIALS = {"flower-fedsam-fedgloss"}


@pytest.mark.slow  # a kernel start and torch import: about 10-20 s on a loaded two-core machine
@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_runs(path: Path, tmp_path):
    papermill = pytest.importorskip("papermill")
    pytest.importorskip("ipykernel")
    out = tmp_path / path.name
    if path.stem in FLOWER_TUTORIALS:
        pytest.importorskip("flwr")
        from ray_namespace import ray_in_namespace

        with ray_in_namespace({}) as (cluster, env):
            done = subprocess.run(cluster.command([sys.executable, "-m", "papermill", str(path), str(out), "--cwd",
                                                   str(tmp_path), "-k", "python3", "--no-progress-bar"]),
                                  env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    else:
        papermill.execute_notebook(str(path), str(out), kernel_name="python3", cwd=str(tmp_path),
                                   progress_bar=False)
    import nbformat

    text = "".join(o.get("text", "") for c in nbformat.read(out, as_version=4).cells if c.cell_type == "code"
                   for o in c.get("outputs", []))
    if path.stem == "checking-one-step":
        assert "max |hand - flcore|" in text and "resumed round equals the uninterrupted one" in text
    if path.stem == "flower-fedsam-fedgloss":
        for name in ("fedsam", "fedgloss-sam"):
            assert f"{name}: same clients True, max |Flower - flcore| = 0.0e+00" in text
        assert "12 Flower rounds in" in text


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
