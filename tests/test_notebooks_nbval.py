"""Notebooks outside the artifact registry (the tutorials) run under nbval (lax: cells
must not raise).  Every artifact notebook is executed at the smoke scale by the smoke book
build (``tests/test_book_build.py``, papermill), so running it a second time here would
only repeat that execution."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_tutorials import FLOWER_TUTORIALS

pytest.importorskip("nbval")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_notebooks_outside_the_registry_run_under_nbval(tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    env = {**os.environ, "FLCORE_STORE": str(base / "smoke-store"), "FLCORE_CACHE": str(base / "flcore-cache")}
    from flcore.reproduction.artifacts import artifact_ids, get_artifact

    executed_by_the_book = {get_artifact(a).notebook_path for a in artifact_ids()}
    # the Flower tutorial starts Ray: test_flower.py runs it inside a private network namespace
    started_elsewhere = {f"notebooks/tutorials/{stem}.ipynb" for stem in FLOWER_TUTORIALS}
    others = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").rglob("*.ipynb")
                    if ".ipynb_checkpoints" not in p.parts and str(p.relative_to(ROOT)) not in executed_by_the_book
                    and str(p.relative_to(ROOT)) not in started_elsewhere)
    assert others, "no notebook outside the artifact registry (the tutorials) was found"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-o", "addopts=", "--nbval-lax", "-p", "no:cacheprovider", "-q", *others],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and "failed" not in result.stdout.splitlines()[-1]
