"""Keep freed CPU memory in the process, so large tensors stop paying page faults.

Every training step allocates the same large temporaries (a batch of 64 CIFAR images
through the paper's CNN makes 12.8 MB activations; an evaluation batch of 2,000 makes
400 MB).  glibc's ``malloc`` serves blocks above its mmap threshold (128 KiB to 32 MiB,
adjusted on the fly) with fresh ``mmap`` pages and hands freed heap tops back to the
kernel; the next step then faults every page in again.  On the 2-core benchmark machine
those faults cost about a third of a FedAvg round of the CNN (measured with
``benchmarks/round_time.py``: 1.13 s -> 0.78 s per round, minor faults per round
200,000 -> 0).  The arithmetic is untouched: only where the bytes live changes.

:func:`retain_freed_memory` raises glibc's mmap and trim thresholds with ``mallopt`` so
that freed blocks stay in the heap and are reused.  The cost is that the process keeps
its peak heap until it exits, which suits a simulation process.  It is a no-op off glibc
(macOS, Windows, musl) and when ``FLCORE_RETAIN_MEMORY=0`` is set in the environment.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os

#: ``mallopt`` parameter numbers from glibc's ``malloc.h``.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: Blocks up to 1 GiB come from the heap (an evaluation batch of 2,000 CIFAR images is
#: 400 MB of activations); the heap top is returned to the kernel only beyond 2 GiB - 1
#: of free space (``mallopt`` takes a C ``int``).
MMAP_THRESHOLD_BYTES = 1 << 30
TRIM_THRESHOLD_BYTES = (1 << 31) - 1

_applied: bool | None = None


def retain_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds once per process; returns whether they are
    set (False off glibc or when ``FLCORE_RETAIN_MEMORY=0``)."""
    global _applied
    if _applied is not None:
        return _applied
    _applied = False
    if os.environ.get("FLCORE_RETAIN_MEMORY", "1") == "0":
        return False
    libc = _glibc()
    if libc is None:
        return False
    mallopt = libc.mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    _applied = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
    return _applied


def _glibc():
    """The process's C library if it is glibc (it has ``gnu_get_libc_version``), else None."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        _ = libc.gnu_get_libc_version  # glibc has it; another C library raises AttributeError
    except (OSError, AttributeError):
        return None
    return libc
