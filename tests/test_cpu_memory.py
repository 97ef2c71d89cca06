"""flcore.sim.cpu_memory: freed tensor memory is reused instead of faulted in again."""
import json
import os
import platform
import subprocess
import sys

import pytest

PROBE = r"""
import json, resource, sys, torch
from flcore.sim.cpu_memory import retain_freed_memory

def faults_per_allocation():
    # Median minor page faults of a fresh 64 MB tensor over 9 allocations (a 64 MB block
    # is served by fresh mmap pages under glibc's default thresholds).  The median,
    # because once memory is retained the first allocation grows the heap and, now and
    # then, a later one does too; the steady state reuses it.
    counts = []
    for _ in range(9):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        torch.zeros(16 << 20)
        counts.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return sorted(counts)[len(counts) // 2]

default = faults_per_allocation()
applied = retain_freed_memory()
print(json.dumps({"applied": applied, "default": default, "retained": faults_per_allocation()}))
"""

glibc_linux = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")


def run_probe(env_extra: dict) -> dict:
    env = {**os.environ, **env_extra}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@glibc_linux
def test_retained_memory_stops_page_faults():
    out = run_probe({})
    assert out["applied"] is True
    # a fresh 64 MB mapping faults in 16,384 pages of 4 KiB (fewer with huge pages)
    assert out["default"] > 1000
    assert out["retained"] < 0.05 * out["default"]


@glibc_linux
def test_environment_switch_turns_it_off():
    out = run_probe({"FLCORE_RETAIN_MEMORY": "0"})
    assert out["applied"] is False
    assert out["retained"] > 1000
