"""The CPUs this process may run on, and the thread pools sized from them.

A ``taskset -c 0,1`` or a container's cpuset limits a process to some of the machine's
cores; ``os.cpu_count()`` still counts them all, and torch's default thread pool is sized
from the machine's cores too.  Every worker and thread count in flcore comes from
:func:`available_cpus` -- the size of the process's CPU affinity mask
(``os.sched_getaffinity``), or ``os.cpu_count()`` where the platform has no affinity
(macOS, Windows) -- so such a limit is respected: two workers under ``taskset -c 0,1`` on
a 64-core machine, not 64 processes fighting over two cores.

A thread count the user set in ``$OMP_NUM_THREADS`` always wins.  A count flcore set
itself (:func:`limit_threads`) is marked in ``$FLCORE_THREADS`` so that a process that
shares the cores among several children (:func:`share_threads`) may lower it.
"""
from __future__ import annotations

import contextlib
import os

import torch

#: The variables OpenMP and MKL read for their thread pools' size.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: Set to the count flcore put in ``$OMP_NUM_THREADS`` (absent: the user's, or none).
MARKER = "FLCORE_THREADS"


def available_cpus() -> int:
    """Cores this process may run on: its affinity mask's size, else ``os.cpu_count()``,
    at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def user_threads() -> int | None:
    """The thread count the user set in ``$OMP_NUM_THREADS`` (None: unset, set by flcore
    or not a positive integer)."""
    raw = os.environ.get("OMP_NUM_THREADS", "").strip()
    if not raw.isdigit() or int(raw) < 1 or os.environ.get(MARKER) == raw:
        return None
    return int(raw)


def share_threads(threads: int) -> int:
    """Give this process and its children ``threads`` threads (``$OMP_NUM_THREADS``,
    ``$MKL_NUM_THREADS``), unless the user chose a count; returns the count in force.
    torch follows."""
    chosen = user_threads()
    if chosen is None:
        chosen = max(1, int(threads))
        for name in THREAD_VARIABLES:
            os.environ[name] = str(chosen)
        os.environ[MARKER] = str(chosen)
    if torch.get_num_threads() != chosen:
        torch.set_num_threads(chosen)
    return chosen


def limit_threads() -> int:
    """Size this process's thread pools, and its children's, by :func:`available_cpus`
    (:func:`share_threads`), never above torch's own default (the machine's physical
    cores: two threads on the two hyper-threads of one core gain nothing); returns the
    count in force."""
    return share_threads(min(available_cpus(), torch.get_num_threads()))


@contextlib.contextmanager
def one_torch_thread(on_cpu: bool = True):
    """Run the body with one intra-op torch thread when ``on_cpu`` (the count restored
    after): the analysed models are small and their batches short, and on a busy CPU
    torch's threads mostly wait on each other (a smoke run's FedGF Table 2 analysis: 2.3 s
    on one thread, 14 s on two, on a shared 2-core machine)."""
    if not on_cpu:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
