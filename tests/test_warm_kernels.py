"""A warm kernel executes one notebook after another as a fresh kernel would: nothing a
notebook leaves behind (names, working directory, environment, figures, the execution
counter) reaches the next; a kernel that died or whose environment changed is replaced."""
from __future__ import annotations

import json
import os

import nbformat
import pytest

papermill = pytest.importorskip("papermill")

from flcore.site.kernels import WarmKernel  # noqa: E402

LITTERING = """\
import os, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
left_behind = 41
plt.figure()
os.environ["FLCORE_TEST_LEFT"] = "1"
os.chdir("/")
print(os.getpid())
"""
INSPECTING = """\
import json, os, sys
plt = sys.modules.get("matplotlib.pyplot")
print(json.dumps({"names": "left_behind" in globals(), "cwd": os.getcwd(),
                  "env": os.environ.get("FLCORE_TEST_LEFT"), "store": os.environ.get("FLCORE_STORE"),
                  "figures": plt.get_fignums() if plt else [], "pid": os.getpid()}))
"""


def _notebook(path, *sources):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    nbformat.write(nb, path)
    return str(path)


def _execute(kernel, source, output, cwd):
    papermill.execute_notebook(source, str(output), kernel_name="python3", cwd=cwd, progress_bar=False,
                               km=kernel.manager(cwd))
    return nbformat.read(output, as_version=4)


def _seen(nb) -> dict:
    return json.loads(nb.cells[-1].outputs[0]["text"])


def test_a_notebook_leaves_nothing_to_the_next(tmp_path, monkeypatch):
    monkeypatch.setenv("FLCORE_STORE", str(tmp_path / "store"))
    littering = _notebook(tmp_path / "a.ipynb", "x = 1", LITTERING)
    inspecting = _notebook(tmp_path / "b.ipynb", "y = 2", INSPECTING)
    kernel = WarmKernel()
    try:
        fresh = _seen(_execute(WarmKernel(), inspecting, tmp_path / "fresh.ipynb", str(tmp_path)))
        first = _execute(kernel, littering, tmp_path / "a-out.ipynb", str(tmp_path))
        second = _execute(kernel, inspecting, tmp_path / "b-out.ipynb", str(tmp_path))
    finally:
        kernel.shutdown()
    seen = _seen(second)
    assert seen.pop("pid") == int(first.cells[-1].outputs[0]["text"])  # the same kernel process
    fresh.pop("pid")
    assert seen == fresh == {"names": False, "cwd": str(tmp_path), "env": None,
                             "store": str(tmp_path / "store"), "figures": []}
    assert [c.execution_count for c in second.cells] == [1, 2]  # numbered as in a fresh kernel
    assert all(not c.outputs for c in second.cells[:1])  # and no history warning on the page


def test_a_dead_kernel_or_another_environment_gets_a_new_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("FLCORE_STORE", str(tmp_path / "one"))
    inspecting = _notebook(tmp_path / "b.ipynb", INSPECTING)
    dying = _notebook(tmp_path / "d.ipynb", "import os; os._exit(1)")
    kernel = WarmKernel()
    try:
        before = _seen(_execute(kernel, inspecting, tmp_path / "1.ipynb", str(tmp_path)))
        with pytest.raises(Exception):  # noqa: B017 - papermill's error for a dead kernel
            _execute(kernel, dying, tmp_path / "2.ipynb", str(tmp_path))
        after_death = _seen(_execute(kernel, inspecting, tmp_path / "3.ipynb", str(tmp_path)))
        monkeypatch.setenv("FLCORE_STORE", str(tmp_path / "two"))
        moved = _seen(_execute(kernel, inspecting, tmp_path / "4.ipynb", str(tmp_path)))
    finally:
        kernel.shutdown()
    assert after_death["pid"] != before["pid"]
    assert moved["pid"] != after_death["pid"] and moved["store"] == str(tmp_path / "two")
    assert os.environ["FLCORE_STORE"] == str(tmp_path / "two")
