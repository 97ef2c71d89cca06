"""The estimate of the training time printed before training, against the time measured.

What is measured
----------------
One paper's runs at one scale (default: FedGF's small-scale runs, 28 runs in 12 groups,
a few minutes on 2 cores), trained into a fresh temporary store exactly as ``flcore
book`` trains the book's runs: this machine's speed measured by the probe
(:mod:`flcore.reproduction.calibration`), the groups planned and ordered longest first
with their estimated seconds (:func:`flcore.reproduction.runner.plan_training`), the
estimate (:func:`flcore.reproduction.estimate.wall_seconds`) taken before the first group
starts, then the groups trained by the local executor with the live line on stderr.

Row (``--append FILE``, one JSON object per line): ``paper``, ``scale``, ``runs``,
``groups``, ``workers``, ``estimate_s`` (before training), ``measured_s`` (wall time of
the training), ``ratio`` (measured over estimate; the book's target is within 0.75-1.25),
``factor`` and ``probe_s`` (this machine's speed against the reference rows and the
probe's seconds), ``estimate_uncalibrated_s`` (the reference rows alone), ``group_s``
(each group's ``[estimate, measured]`` seconds, in the order they started), ``load``
(the 1-minute load average before the start: other jobs distort the figures), ``machine``,
``date``, ``command``.

Running it
----------
On a quiet machine, limited to two cores (what the README's figures assume)::

    taskset -c 0,1 python benchmarks/training_estimate.py --append benchmarks/results/training_estimate.jsonl

From a ``make main`` (or any ``flcore book``/``flcore reproduce`` that trained with an
estimate): the build keeps its estimate and measured time in the store's
``.training-estimates.jsonl`` (:mod:`flcore.reproduction.estimate_record`); ``--from-store``
turns its last record into a row of this file -- ``paper`` ``"book"``, ``scale`` the runs'
scales, ``factor`` and ``probe_s`` from the store's ``.machine-speed.json`` when it
holds them, ``estimate_uncalibrated_s`` null, plus ``cpus`` (the affinity) and
``processor`` -- nothing trains::

    PIP_NO_CACHE_DIR=1 taskset -c 0,1 make main
    python benchmarks/training_estimate.py --from-store runs --append benchmarks/results/training_estimate.jsonl
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--paper", default="fedgf", help="the paper whose artifacts' runs are trained (default: fedgf)")
    p.add_argument("--scale", default="small")
    p.add_argument("--append", default=None, help="append the row to this JSON-lines file")
    p.add_argument("--from-store", default=None, metavar="STORE",
                   help="no training: the last estimate a build recorded in this run store (runs: make main)")
    p.add_argument("--command", default="PIP_NO_CACHE_DIR=1 taskset -c 0,1 make main",
                   help="with --from-store: the command that trained (kept in the row)")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.from_store is not None:
        return from_store(Path(args.from_store), args.append, args.command)
    from flcore.cpus import available_cpus, limit_threads
    from flcore.executors import LocalExecutor
    from flcore.reproduction.artifacts import artifact_ids, get_artifact, runs_for
    from flcore.reproduction.budget import load_device_rates
    from flcore.reproduction.calibration import SPEED_FILE, reference_rates
    from flcore.reproduction.estimate import Rates, this_machine, wall_seconds
    from flcore.reproduction.progress import TrainingProgress
    from flcore.reproduction.runner import missing_runs, plan_training
    from flcore.store import RunStore

    limit_threads()
    ids = [a for a in artifact_ids() if get_artifact(a).paper == args.paper
           and (ROOT / get_artifact(a).notebook_path).exists()]
    if not ids:
        print(f"no artifact notebooks for paper {args.paper!r}", file=sys.stderr)
        return 2
    specs = [s for s in runs_for(ids, args.scale, [0]) if s.available]
    workers = available_cpus()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    if load is not None and load > 0.5 * workers:
        print(f"warning: load average {load:.2f} on {workers} CPUs: other jobs will distort the figures",
              file=sys.stderr)
    overrides = {"device": "cpu", "data_root": None, "download": None, "max_rounds": None}
    with tempfile.TemporaryDirectory() as store:
        started = time.perf_counter()
        here = this_machine(ROOT, store, "cpu", workers, log=lambda line: print(line, file=sys.stderr))
        probe_s = time.perf_counter() - started
        todo, done = missing_runs(specs, RunStore(store), overrides)
        executor = LocalExecutor(device="cpu")
        groups, seconds = plan_training(todo, done, overrides, "cpu", executor, here)
        pool = executor.pool_size(len(groups))
        estimate = wall_seconds(seconds, pool)
        reference = reference_rates(load_device_rates(ROOT / "benchmarks" / "results"), "")
        _, plain = plan_training(todo, done, overrides, "cpu", executor, Rates(reference, "reference rows"))
        print(f"{len(todo)} runs in {len(groups)} groups on {pool} workers: estimate {estimate:.0f} s "
              f"({here.note})", file=sys.stderr)
        tracker = TrainingProgress(seconds, [len(g) for g in groups], pool, stream=sys.stderr).start()
        measured_groups = [0.0] * len(groups)
        started = time.perf_counter()
        try:
            for index, results in executor.map_groups(groups, store, overrides):
                failed = [r["error"] for r in results if r["status"] == "failed"]
                if failed:
                    raise RuntimeError(f"a run failed: {failed[0]}")
                measured_groups[index] = results[0]["seconds"]
                tracker.group_done(index)
        finally:
            tracker.close()
        measured = time.perf_counter() - started
        speed = json.loads((Path(store) / SPEED_FILE).read_text())["fields"]
    row = {"paper": args.paper, "scale": args.scale, "runs": len(todo), "groups": len(groups), "workers": pool,
           "estimate_s": round(estimate, 1), "measured_s": round(measured, 1), "ratio": round(measured / estimate, 3),
           "factor": round(speed["factor"], 3), "probe_s": round(probe_s, 1),
           "estimate_uncalibrated_s": round(wall_seconds(sorted(plain, reverse=True), pool), 1),
           "group_s": [[round(e, 1), round(m, 1)] for e, m in zip(seconds, measured_groups)],
           "load": None if load is None else round(load, 2), "machine": f"CPU, {workers} cores",
           "date": datetime.date.today().isoformat(),
           "command": "taskset -c 0,1 python benchmarks/training_estimate.py" + (
               f" --paper {args.paper}" if args.paper != "fedgf" else "")}
    print(json.dumps(row))
    if args.append:
        with open(args.append, "a") as f:
            f.write(json.dumps(row) + "\n")
    return 0


def store_row(store: Path, command: str) -> dict | None:
    """The row of the last estimate recorded in ``store`` (module docstring), or None."""
    from flcore.reproduction.calibration import read_speed
    from flcore.reproduction.estimate_record import read_records

    records = read_records(store)
    if not records:
        return None
    last = records[-1]
    speed = read_speed(store, last["workers"])
    return {"paper": "book", "scale": ",".join(last.get("scales") or []), "runs": last["runs"],
            "groups": last["groups"], "workers": last["workers"], "estimate_s": last["estimate_s"],
            "measured_s": last["measured_s"], "ratio": last["ratio"],
            "factor": None if speed is None else round(speed["factor"], 3),
            "probe_s": None if speed is None else round(speed["measured"], 1),
            "estimate_uncalibrated_s": None, "group_s": last["group_s"], "load": last.get("load"),
            "machine": last.get("machine"), "cpus": last["cpus"], "processor": last.get("processor"),
            "correction": last.get("correction", 1.0), "calibration": last.get("calibration", ""),
            "date": last["date"][:10], "command": command}


def from_store(store: Path, append: str | None, command: str) -> int:
    if not store.is_dir():
        print(f"--from-store: {store} is not a directory (a run store)", file=sys.stderr)
        return 2
    row = store_row(store, command)
    if row is None:
        print(f"--from-store: {store} holds no recorded estimate (a build that trained with an estimate writes "
              f"one)", file=sys.stderr)
        return 2
    print(json.dumps(row))
    if append:
        with open(append, "a") as f:
            f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
