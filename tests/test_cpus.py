"""Worker and thread counts follow the CPU affinity (a ``taskset`` or container limit),
not the machine's core count."""
import os

import pytest
import torch

from flcore import cpus
from flcore.planning.planner import default_workers
from flcore.reproduction.pricing import local_kind
from flcore.site import reproduce


@pytest.fixture
def two_of_64(monkeypatch):
    """A process limited to cores 0 and 1 of a 64-core machine."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)


@pytest.fixture
def torch_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_the_affinity_mask_counts_not_the_machine(two_of_64):
    assert cpus.available_cpus() == 2


def test_without_an_affinity_call_the_machine_counts(monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert cpus.available_cpus() == 6
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert cpus.available_cpus() == 1


def test_workers_notebooks_and_the_machine_kind_follow_the_affinity(two_of_64):
    assert default_workers("cpu", groups=10) == 2
    assert default_workers("cpu", groups=1) == 1
    assert reproduce.notebook_jobs(None, 10) == 2
    assert local_kind("cpu") == ("CPU, 2 cores", "cpu")


def test_flcore_sets_the_thread_pools_from_the_affinity(two_of_64, monkeypatch, torch_threads):
    for name in (*cpus.THREAD_VARIABLES, cpus.MARKER):
        monkeypatch.delenv(name, raising=False)
    torch.set_num_threads(8)  # torch's default: the machine's physical cores
    assert cpus.limit_threads() == 2
    assert os.environ["OMP_NUM_THREADS"] == os.environ["MKL_NUM_THREADS"] == "2"
    assert torch.get_num_threads() == 2
    # a notebook worker sharing the two cores with another lowers flcore's own count
    assert cpus.share_threads(1) == 1
    assert os.environ["OMP_NUM_THREADS"] == "1" and torch.get_num_threads() == 1


def test_a_thread_count_the_user_set_wins(two_of_64, monkeypatch, torch_threads):
    monkeypatch.delenv(cpus.MARKER, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert cpus.limit_threads() == 3
    assert cpus.share_threads(1) == 3
    assert os.environ["OMP_NUM_THREADS"] == "3" and torch.get_num_threads() == 3


def test_the_threads_never_exceed_torchs_default(two_of_64, monkeypatch, torch_threads):
    for name in (*cpus.THREAD_VARIABLES, cpus.MARKER):
        monkeypatch.delenv(name, raising=False)
    torch.set_num_threads(1)  # the two CPUs are hyper-threads of one core
    assert cpus.limit_threads() == 1 and os.environ["OMP_NUM_THREADS"] == "1"
