"""A Ray cluster for tests that start Flower's simulation: a head node on 127.0.0.1 in a
private network namespace that has only the loopback interface
(:class:`flcore.executors.local_cluster.LocalRayCluster`, as the Ray executor's tests
use), stopped on exit even when the body raised.

Commands run through ``cluster.command(argv)`` with the returned environment find the
cluster through ``RAY_ADDRESS``, which :func:`flcore.flower.run_simulation` (Flower's Ray
backend) connects to instead of starting a Ray of its own.  Token authentication is off
on both sides (``RAY_AUTH_MODE=disabled``): the namespace is the fence, and a token a
local ``ray.init`` once left in ``~/.ray`` must not make the driver and the cluster
disagree."""
from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

from flcore.executors.local_cluster import LocalRayCluster, NetnsUnavailable

REPO = Path(__file__).resolve().parents[1]
SKIPPED = "the Flower simulation tests did not run"


@contextmanager
def ray_in_namespace(env: dict[str, str], cpus: int = 2, skip: bool = True):
    """``(cluster, env)``: a started cluster and the environment of its drivers.  Outside
    CI a namespace that cannot be made skips the test (loudly), or with ``skip=False``
    gives ``(None, None)`` for the caller to leave Flower out; in CI it fails the test."""
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])), **env,
           "RAY_AUTH_MODE": "disabled"}
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(env["PYTHONPATH"].split(os.pathsep)))
    cluster = LocalRayCluster(worker_nodes=0, cpus_per_node=cpus, env=env, netns=True)
    try:
        try:
            cluster.start()
        except NetnsUnavailable as exc:
            reason = f"no private network namespace for Flower's Ray backend ({exc}): {SKIPPED}"
            if os.environ.get("CI"):
                pytest.fail(f"CI runs as root with iproute2: {reason}")
            if skip:
                pytest.skip(reason)
            yield None, None
            return
        yield cluster, {**os.environ, **env, "RAY_ADDRESS": cluster.address}
    finally:
        cluster.stop()
        assert cluster.processes() == []
        assert cluster.netns is None or cluster.netns not in subprocess.run(
            ["ip", "netns", "list"], capture_output=True, text=True).stdout
