"""A throw-away Ray cluster on this machine: a head node plus worker node processes.

For trying the Ray executor without a cluster, for the tests and for
``benchmarks/cluster_overhead.py``.  :class:`LocalRayCluster` starts ``ray start --head``
on 127.0.0.1 (the address the driver connects to) and ``worker_nodes`` more node
processes, each with ``cpus_per_node`` CPUs, all under a fresh temporary directory, and
stops them on exit -- even when the body raised.  Stopping is scoped to this cluster:
``ray stop`` would end every Ray process of the user on the machine, so instead the
processes whose command line names this cluster's temporary directory or GCS port are
found in ``/proc`` and killed by id, with their children.

Even with ``--node-ip-address=127.0.0.1`` Ray's GCS server, raylets and agents listen on
every interface or on the machine's own address.  ``netns=True`` therefore starts the
whole cluster inside a private network namespace of its own (``ip netns``, needs root)
that has only the loopback interface: nothing in it can listen on, or reach, any other
address.  Every process that talks to the cluster must run in the same namespace:
:meth:`LocalRayCluster.command` prefixes a command line accordingly (``ip netns exec``).
:meth:`~LocalRayCluster.stop` kills every process left in the namespace and deletes it.
Process ids are not namespaced by it, so killing a worker by id works from outside.
The dashboard is off and the cluster lives only as long as the ``with`` block.

Ray starts its workers at niceness 15 (its ``worker_niceness`` setting).  On a machine
shared with other work at the normal priority -- a test suite, a notebook -- such workers
get a few percent of a core: a task's first ``import torch`` alone then takes minutes.
This cluster's workers run at niceness 0 (``RAY_worker_niceness``, unless ``env`` sets it).
"""
from __future__ import annotations

import os
import re
import secrets
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


class NetnsUnavailable(RuntimeError):
    """A private network namespace cannot be made here (no ``ip`` command, not root)."""


class LocalRayCluster:
    """``with LocalRayCluster(worker_nodes=1, cpus_per_node=1) as cluster: cluster.address``.

    ``netns=True``: the cluster lives in a private network namespace with only the loopback
    interface; run drivers through ``cluster.command(argv)``.  :meth:`start` raises
    :class:`NetnsUnavailable` when the namespace cannot be made.
    """

    def __init__(self, worker_nodes: int = 1, cpus_per_node: int = 1, env: dict[str, str] | None = None,
                 start_timeout: float = 180, netns: bool = False) -> None:
        self.worker_nodes = worker_nodes
        self.cpus_per_node = cpus_per_node
        self.env = {"RAY_worker_niceness": "0", **os.environ, **(env or {}), "RAY_USAGE_STATS_ENABLED": "0"}
        self.start_timeout = start_timeout
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        # short: Ray's unix socket paths live under it and must stay under 108 characters
        self.temp_dir = tempfile.mkdtemp(prefix="flray", dir="/tmp")
        self.netns = f"flray-{os.getpid()}-{secrets.token_hex(4)}" if netns else None
        self._netns_made = False

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` as a command line that runs where the cluster is reachable (its namespace)."""
        return ["ip", "netns", "exec", self.netns, *argv] if self.netns else list(argv)

    def _make_netns(self) -> None:
        if shutil.which("ip") is None:
            raise NetnsUnavailable("the ip command (iproute2) is not installed")
        steps = [["ip", "netns", "add", self.netns], self.command(["ip", "link", "set", "lo", "up"])]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, timeout=30)
            if done.returncode != 0:
                raise NetnsUnavailable(f"{' '.join(step)} failed ({done.returncode}): "
                                       f"{done.stderr.strip() or done.stdout.strip()}")
            self._netns_made = True

    def netns_pids(self) -> set[int]:
        """Ids of the processes inside the cluster's namespace (none without one)."""
        if not self._netns_made:
            return set()
        done = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True, text=True, timeout=30)
        return {int(pid) for pid in done.stdout.split()}

    def listening(self) -> list[tuple[str, int, set[int]]]:
        """The TCP sockets listening where the cluster runs (in its namespace, if it has one)."""
        return listening_sockets(self.command([]))

    def _ray(self, *args: str) -> None:
        command = [sys.executable, "-m", "ray.scripts.scripts", "start", *args,
                   f"--num-cpus={self.cpus_per_node}", "--num-gpus=0", f"--temp-dir={self.temp_dir}",
                   "--node-ip-address=127.0.0.1", "--disable-usage-stats"]
        done = subprocess.run(self.command(command), env=self.env, capture_output=True, text=True,
                              timeout=self.start_timeout)
        if done.returncode != 0:
            raise RuntimeError(f"ray start failed ({done.returncode}): {done.stderr[-2000:]}")

    def start(self) -> LocalRayCluster:
        try:
            if self.netns:
                self._make_netns()
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
        roots |= self.netns_pids() & set(table)
        roots.discard(os.getpid())
        found, frontier = set(roots), set(roots)
        while frontier:
            frontier = {pid for pid, (ppid, _) in table.items() if ppid in frontier and pid not in found}
            found |= frontier
        return sorted(found)

    def stop(self) -> None:
        """Kill this cluster's processes (by id), then delete its namespace and temporary directory."""
        try:
            for _ in range(5):  # a dying raylet may still spawn a worker: look again
                pids = self.processes()
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                time.sleep(0.5)
        finally:
            try:
                if self._netns_made:
                    subprocess.run(["ip", "netns", "del", self.netns], capture_output=True, timeout=30)
                    self._netns_made = False
            finally:
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


def listening_sockets(prefix: list[str] | None = None) -> list[tuple[str, int, set[int]]]:
    """``(address, port, owner pids)`` of every listening TCP socket (``ss -ltnp``), the
    command run behind ``prefix`` (e.g. ``ip netns exec NAME``) to look into a namespace."""
    done = subprocess.run([*(prefix or []), "ss", "-ltnpH"], capture_output=True, text=True, timeout=30, check=True)
    found = []
    for line in done.stdout.splitlines():
        fields = line.split()
        address, _, port = fields[3].rpartition(":")
        pids = {int(pid) for pid in re.findall(r"pid=(\d+)", " ".join(fields[5:]))}
        found.append((address.strip("[]"), int(port), pids))
    return found
