import os

import pytest
import torch


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Tests never write to the user's cache."""
    monkeypatch.setenv("FLCORE_CACHE", str(tmp_path_factory.getbasetemp() / "flcore-cache"))


@pytest.fixture(autouse=True, scope="session")
def _threads():
    # One thread: the tests' small models gain nothing from more, and on a shared machine
    # competing threads make runs slow and erratic.
    torch.set_num_threads(1)


def pytest_terminal_summary(terminalreporter):
    """Say loudly when the browser test of the book did not run (no Chromium here)."""
    skipped = terminalreporter.stats.get("skipped", [])
    if any("browser test of the book did not run" in str(getattr(report, "longrepr", "")) for report in skipped):
        terminalreporter.write_sep("!", "BROWSER TEST SKIPPED: install chromium and chromium-driver to check the book "
                                        "pages (CI installs them)", red=True, bold=True)
