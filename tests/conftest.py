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
    """Tests never write to the user's cache, and start with no round cap or store in the
    environment: ``Page(max_rounds=...)`` sets ``$FLCORE_MAX_ROUNDS`` for the process it runs
    in (a notebook kernel), and a test that calls it must not cap the next test's runs."""
    monkeypatch.setenv("FLCORE_CACHE", str(tmp_path_factory.getbasetemp() / "flcore-cache"))
    for name in ("FLCORE_MAX_ROUNDS", "FLCORE_STORE"):
        monkeypatch.setenv(name, "")  # recorded, so whatever a test sets is undone after it
        monkeypatch.delenv(name)


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
    "not beside the repo": "PAPER-TEXT TESTS SKIPPED: they check the published numbers and the artifact list "
                           "against the papers' texts and reference notes, optional material read from ../shared/ "
                           "beside the repository",
    "the real Fashion-MNIST tests did not run": "REAL FASHION-MNIST TESTS SKIPPED: apt-get install "
                                                "dataset-fashion-mnist to check the loader and FedAvg/FedIMA on "
                                                "the released files (CI installs it)",
}


#: Test files that take longest (``--durations``), started first so that the run does not
#: end waiting on one of them; with ``--dist loadfile`` each file goes to one worker whole,
#: and ``--no-loadscope-reorder`` keeps this order.  The smoke book is a subprocess using
#: both cores for most of its time, so four workers share two cores.
LONGEST_FIRST = ("test_book_build.py", "test_flower.py", "test_learning.py", "test_ray_executor.py",
                 "test_book_reproduce.py", "test_publishing.py", "test_resume.py",
                 "test_benchmark_script.py", "test_paper_scale.py", "test_engine.py", "test_inventory_claims.py")


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order


def pytest_terminal_summary(terminalreporter):
    """Say loudly when a check did not run here (no Chromium, no network namespace, no real
    Fashion-MNIST, no optional material beside the repository), with the number of tests skipped."""
    skipped = [str(getattr(report, "longrepr", "")) for report in terminalreporter.stats.get("skipped", [])]
    for phrase, message in LOUD_SKIPS.items():
        count = sum(phrase in reason for reason in skipped)
        if count:
            terminalreporter.write_sep("!", f"{message} ({count} skipped)", red=True, bold=True)
