import os

import pytest
import torch

# One thread in every process a test starts too (CLI subprocesses, notebook kernels, Ray
# workers): the suite runs several workers per core, and torch's default of one thread per
# core makes them spin against each other.  Set before any test runs, so children inherit it.
for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Tests never write to the user's cache."""
    monkeypatch.setenv("FLCORE_CACHE", str(tmp_path_factory.getbasetemp() / "flcore-cache"))


@pytest.fixture(autouse=True, scope="session")
def _threads():
    # One thread: the tests' small models gain nothing from more, and on a shared machine
    # competing threads make runs slow and erratic.
    torch.set_num_threads(1)


LOUD_SKIPS = {
    "browser test of the book did not run": "BROWSER TEST SKIPPED: install chromium and chromium-driver to check "
                                            "the book pages (CI installs them)",
    "the Ray tests did not run": "RAY TESTS SKIPPED: they need a private network namespace (root and iproute2's "
                                 "ip netns; CI has both)",
    "the Flower simulation tests did not run": "FLOWER SIMULATION TESTS SKIPPED: they need a private network "
                                               "namespace (root and iproute2's ip netns; CI has both)",
    "the Flower tutorial page was left out of the smoke book": "FLOWER TUTORIAL PAGE NOT BUILT: it needs Flower "
                                                               "(.[flower]) and a private network namespace",
}


def pytest_terminal_summary(terminalreporter):
    """Say loudly when a check did not run here (no Chromium, no network namespace)."""
    skipped = [str(getattr(report, "longrepr", "")) for report in terminalreporter.stats.get("skipped", [])]
    for phrase, message in LOUD_SKIPS.items():
        if any(phrase in reason for reason in skipped):
            terminalreporter.write_sep("!", message, red=True, bold=True)
