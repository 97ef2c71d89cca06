"""Per-run scheduling overhead of the Ray executor against the local executor.

What is measured
----------------
The same smoke runs (by default the 21 runs of ``fedsam-table-2`` at the ``smoke``
scale; ``--runs N`` takes the first N) are trained twice from an empty store:

1. **local**: :class:`flcore.executors.LocalExecutor` with as many worker processes as the
   Ray cluster has CPUs (one thread each);
2. **ray**: :class:`flcore.executors.ray_executor.RayExecutor` on a Ray cluster with one CPU
   per task -- by default one started on this machine for the benchmark
   (:class:`flcore.executors.local_cluster.LocalRayCluster`: a head node plus
   ``--worker-nodes`` node processes of ``--cpus-per-node`` CPUs; starting it is not timed),
   or the cluster at ``--address``.

A cluster started for the benchmark lives in a private network namespace with only the
loopback interface (Ray's servers would otherwise listen on every interface), and the
benchmark measures from a copy of itself run inside it; where no namespace can be made
(not root, no ``ip netns``) it says so and uses this machine's network (``--no-netns``:
always).

``wall_s`` is the time from handing the runs to the executor until the last result is
back (for Ray it includes joining the cluster and the workers' cold start, as a
``flcore reproduce --executor ray`` driver pays them); ``overhead_per_run_s`` is
``(wall_s - local wall_s) / runs`` (0 for the local row).  Both builds use one thread per
run, so their records must be equal: ``equal_records`` says whether every run's metrics
and summary agree.  Timings on a machine shared with other jobs vary.

Running it
----------
::

    python benchmarks/cluster_overhead.py                 # table
    python benchmarks/cluster_overhead.py --json          # one JSON object per executor
    python benchmarks/cluster_overhead.py --json --runs 4 --address 127.0.0.1:6379

JSON fields: ``executor``, ``runs``, ``wall_s``, ``overhead_per_run_s``, ``parallel``
(runs trained at once), ``equal_records`` (ray row; null on the local row).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OVERRIDES = {"device": "cpu", "data_root": None, "download": None}


def _specs(artifact: str, runs: int | None):
    from flcore.reproduction.artifacts import runs_for

    specs = [s for s in runs_for([artifact], "smoke", [0]) if s.available]
    return specs[:runs] if runs else specs


def _build(executor, specs, store: Path) -> float:
    from flcore.executors import group_runs

    todo = {s.run_id(**OVERRIDES): s for s in specs}
    store.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if hasattr(executor, "connect"):
        executor.connect()
    results = [r for _, group in executor.map_groups(group_runs(todo), str(store), OVERRIDES) for r in group]
    wall = time.perf_counter() - started
    failed = [r for r in results if r["status"] == "failed"]
    if failed:
        raise SystemExit(f"{len(failed)} run(s) failed: {failed[0]['error']}")
    return wall


def _records(store: Path, run_ids) -> dict:
    from flcore.store import RunStore

    runs = RunStore(store)
    return {rid: (runs.run(rid).read_metrics(), runs.run(rid).summary()) for rid in run_ids}


def measure(args) -> list[dict]:
    from flcore.executors.local_cluster import LocalRayCluster, NetnsUnavailable
    from flcore.executors.ray_executor import import_ray

    import_ray()
    if args.address is not None:
        return _measure(args, args.address, cpus=None)
    repo = str(Path(__file__).resolve().parents[1])
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [repo, os.environ.get("PYTHONPATH")]))}
    cluster = LocalRayCluster(worker_nodes=args.worker_nodes, cpus_per_node=args.cpus_per_node, env=env,
                              netns=args.netns)
    try:
        try:
            cluster.start()
        except NetnsUnavailable as exc:
            print(f"no private network namespace ({exc}); the cluster uses this machine's network",
                  file=sys.stderr)
            cluster = LocalRayCluster(worker_nodes=args.worker_nodes, cpus_per_node=args.cpus_per_node, env=env)
            cluster.start()
        if cluster.netns:
            return _measure_inside(cluster, args)
        return _measure(args, cluster.address, cpus=(args.worker_nodes + 1) * args.cpus_per_node)
    finally:
        cluster.stop()


def _measure_inside(cluster, args) -> list[dict]:
    """Run this script with ``--address`` in the cluster's namespace and read its rows."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--json", "--address", cluster.address,
            "--artifact", args.artifact, *(["--runs", str(args.runs)] if args.runs else [])]
    done = subprocess.run(cluster.command(argv), env=cluster.env, capture_output=True, text=True)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode not in (0, 1) or len(rows) != 2:
        raise SystemExit(f"the measurement inside the cluster's namespace failed ({done.returncode}): "
                         f"{done.stderr[-2000:]}")
    return rows


def _measure(args, address: str, cpus: int | None) -> list[dict]:
    """Both builds against the Ray cluster at ``address`` (``cpus``: its CPUs, None: ask it)."""
    from flcore.executors import LocalExecutor
    from flcore.executors.ray_executor import RayExecutor

    specs = _specs(args.artifact, args.runs)
    run_ids = sorted({s.run_id(**OVERRIDES) for s in specs})
    with tempfile.TemporaryDirectory(prefix="flcore-overhead-") as tmp:
        ray_executor = RayExecutor(address=address, gpus_per_run=0, device="cpu")
        if cpus is None:
            cpus = int(ray_executor.connect().cluster_resources().get("CPU", 1))
        local_wall = _build(LocalExecutor(workers=cpus, device="cpu"), specs, Path(tmp) / "local")
        ray_wall = _build(ray_executor, specs, Path(tmp) / "ray")
        ray_executor.shutdown()
        equal = _records(Path(tmp) / "local", run_ids) == _records(Path(tmp) / "ray", run_ids)
    runs = len(run_ids)
    return [
        {"executor": "local", "runs": runs, "wall_s": round(local_wall, 2), "overhead_per_run_s": 0.0,
         "parallel": cpus, "equal_records": None},
        {"executor": "ray", "runs": runs, "wall_s": round(ray_wall, 2),
         "overhead_per_run_s": round((ray_wall - local_wall) / runs, 3), "parallel": cpus, "equal_records": equal},
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--artifact", default="fedsam-table-2", help="artifact whose smoke runs are trained")
    parser.add_argument("--runs", type=int, default=None, help="only the first N runs (default: all)")
    parser.add_argument("--address", default=None, help="an existing Ray cluster (default: start one here)")
    parser.add_argument("--worker-nodes", type=int, default=1, help="node processes besides the head")
    parser.add_argument("--cpus-per-node", type=int, default=1)
    parser.add_argument("--no-netns", dest="netns", action="store_false",
                        help="start the cluster on this machine's network, not in a private namespace")
    parser.add_argument("--json", action="store_true", help="one JSON object per executor")
    args = parser.parse_args(argv)
    rows = measure(args)
    if args.json:
        for row in rows:
            print(json.dumps(row, sort_keys=True))
    else:
        print(f"{'executor':<9} {'runs':>5} {'wall_s':>8} {'overhead_per_run_s':>19} {'parallel':>9}")
        for row in rows:
            print(f"{row['executor']:<9} {row['runs']:>5} {row['wall_s']:>8.2f} "
                  f"{row['overhead_per_run_s']:>19.3f} {row['parallel']:>9}")
        print(f"records equal: {rows[1]['equal_records']}")
    return 0 if rows[1]["equal_records"] else 1


if __name__ == "__main__":
    sys.exit(main())
