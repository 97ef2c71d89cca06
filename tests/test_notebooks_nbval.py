"""Every notebook runs at the smoke scale under nbval (lax: cells must not raise)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbval")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_notebooks_run_at_smoke_scale_under_nbval(tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    env = {**os.environ, "FLCORE_STORE": str(base / "smoke-store"), "FLCORE_CACHE": str(base / "flcore-cache")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval-lax", "-p", "no:cacheprovider", "-q", "notebooks"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and "failed" not in result.stdout.splitlines()[-1]
