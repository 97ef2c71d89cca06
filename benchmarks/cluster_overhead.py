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
import sys
import tempfile
import time
from pathlib import Path

OVERRIDES = {"device": "cpu", "data_root": None, "download": None}


def _specs(artifact: str, runs: int | None):
    from flcore.experiments.artifacts import runs_for

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
    from flcore.executors import LocalExecutor
    from flcore.executors.local_cluster import LocalRayCluster
    from flcore.executors.ray_executor import RayExecutor, import_ray

    import_ray()
    specs = _specs(args.artifact, args.runs)
    run_ids = sorted({s.run_id(**OVERRIDES) for s in specs})
    with tempfile.TemporaryDirectory(prefix="flcore-overhead-") as tmp:
        cluster = None
        if args.address is None:
            cluster = LocalRayCluster(worker_nodes=args.worker_nodes, cpus_per_node=args.cpus_per_node,
                                      env={"PYTHONPATH": str(Path(__file__).resolve().parents[1])})
            cluster.start()
        try:
            ray_executor = RayExecutor(address=args.address or cluster.address, gpus_per_run=0, device="cpu")
            cpus = None
            if cluster is not None:
                cpus = (args.worker_nodes + 1) * args.cpus_per_node
            else:
                cpus = int(ray_executor.connect().cluster_resources().get("CPU", 1))
            local_wall = _build(LocalExecutor(workers=cpus, device="cpu"), specs, Path(tmp) / "local")
            ray_wall = _build(ray_executor, specs, Path(tmp) / "ray")
            ray_executor.shutdown()
        finally:
            if cluster is not None:
                cluster.stop()
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
