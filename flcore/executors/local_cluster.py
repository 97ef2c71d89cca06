"""A throw-away Ray cluster on this machine: a head node plus worker node processes.

For trying the Ray executor without a cluster, for the tests and for
``benchmarks/cluster_overhead.py``.  :class:`LocalRayCluster` starts ``ray start --head``
on 127.0.0.1 (the address the driver connects to) and ``worker_nodes`` more node
processes, each with ``cpus_per_node`` CPUs, all under a fresh temporary directory, and
stops them on exit -- even when the body raised.  Stopping is scoped to this cluster:
``ray stop`` would end every Ray process of the user on the machine, so instead the
processes whose command line names this cluster's temporary directory or GCS port are
found in ``/proc`` and killed by id, with their children.

Ray resolves 127.0.0.1 to the machine's own address for its nodes and its gRPC servers
listen on every interface; the dashboard is off and the cluster lives only as long as the
``with`` block.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    """A TCP port nobody listens on at the moment."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalRayCluster:
    """``with LocalRayCluster(worker_nodes=1, cpus_per_node=1) as cluster: cluster.address``."""

    def __init__(self, worker_nodes: int = 1, cpus_per_node: int = 1, env: dict[str, str] | None = None,
                 start_timeout: float = 180) -> None:
        self.worker_nodes = worker_nodes
        self.cpus_per_node = cpus_per_node
        self.env = {**os.environ, **(env or {}), "RAY_USAGE_STATS_ENABLED": "0"}
        self.start_timeout = start_timeout
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        # short: Ray's unix socket paths live under it and must stay under 108 characters
        self.temp_dir = tempfile.mkdtemp(prefix="flray", dir="/tmp")

    def _ray(self, *args: str) -> None:
        command = [sys.executable, "-m", "ray.scripts.scripts", "start", *args,
                   f"--num-cpus={self.cpus_per_node}", "--num-gpus=0", f"--temp-dir={self.temp_dir}",
                   "--node-ip-address=127.0.0.1", "--disable-usage-stats"]
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=self.start_timeout)
        if done.returncode != 0:
            raise RuntimeError(f"ray start failed ({done.returncode}): {done.stderr[-2000:]}")

    def start(self) -> LocalRayCluster:
        try:
            self._ray("--head", f"--port={self.port}", "--include-dashboard=false",
                      f"--ray-client-server-port={free_port()}")
            for _ in range(self.worker_nodes):
                self._ray(f"--address={self.address}")
        except BaseException:
            self.stop()
            raise
        return self

    def processes(self) -> list[int]:
        """Ids of this cluster's processes (daemons, their children and the workers)."""
        table = _process_table()
        marks = (self.temp_dir, f":{self.port}")
        roots = {pid for pid, (_, cmdline) in table.items() if any(m in cmdline for m in marks)}
        roots.discard(os.getpid())
        found, frontier = set(roots), set(roots)
        while frontier:
            frontier = {pid for pid, (ppid, _) in table.items() if ppid in frontier and pid not in found}
            found |= frontier
        return sorted(found)

    def stop(self) -> None:
        """Kill this cluster's processes (by id) and remove its temporary directory."""
        for _ in range(3):  # a dying raylet may still spawn a worker: look again
            pids = self.processes()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.5)
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> LocalRayCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _process_table() -> dict[int, tuple[int, str]]:
    """``{pid: (parent pid, command line)}`` of the processes visible in /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        table[int(entry.name)] = (ppid, cmdline)
    return table
