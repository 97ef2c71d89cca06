"""What a small-scale run spends besides its gradients: evaluations and the store's fsyncs.

What is measured
----------------
- ``evaluations``: one group of ``--runs`` small-scale runs of ``--method`` (MNIST-1D,
  300 rounds, single-threaded, no store) trained twice, with and without the clients'
  accuracy recorded (``client_accuracy``), the time spent in each kind of evaluation
  measured around the engine's calls: ``total_s``, ``test_eval_s`` and ``test_evals``,
  ``client_eval_s`` and ``client_evals`` (0 without the record), their share of the group;
- ``fsync``: the mean seconds of one ``os.fsync`` after a metrics-sized append, in a
  temporary folder under ``--dir`` (default: this directory; put it on the disk the run
  store is on), against a flush alone;
- ``fsyncs_per_run``: the ``os.fsync`` calls of one run trained into a temporary store
  with the small scale's evaluation and checkpoint schedule (300 rounds; the smoke data,
  whose size does not change the count), in total and on its metrics log.

Multiply by the book's runs (``flcore book --scale small --plan``) for what each costs the
book.  One JSON object on stdout; nothing is written outside temporary folders.

Running it
----------
::

    taskset -c 1 python benchmarks/run_overheads.py --method fedavg
    taskset -c 1 python benchmarks/run_overheads.py --method fedsam --runs 6
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def evaluations(method: str, runs: int, client_accuracy: bool) -> dict:
    import torch

    from flcore.config import resolve_config
    from flcore.sim import engine
    from flcore.sim.multi_run import run_group

    spent = {"test_eval_s": 0.0, "test_evals": 0, "client_eval_s": 0.0, "client_evals": 0}
    evaluate, client = engine.Simulation.evaluate, engine.Simulation.client_accuracy

    def timed(function, seconds, count):
        def wrapper(self):
            started = time.perf_counter()
            try:
                return function(self)
            finally:
                spent[seconds] += time.perf_counter() - started
                spent[count] += 1
        return wrapper

    engine.Simulation.evaluate = timed(evaluate, "test_eval_s", "test_evals")
    engine.Simulation.client_accuracy = timed(client, "client_eval_s", "client_evals")
    try:
        cfgs = [resolve_config({"method": method, "dataset": "mnist1d", "scale": "small", "alpha": 0.5, "seed": s,
                                "device": "cpu", "client_accuracy": client_accuracy}) for s in range(runs)]
        started = time.perf_counter()
        run_group(cfgs, torch.device("cpu"))
        total = time.perf_counter() - started
    finally:
        engine.Simulation.evaluate, engine.Simulation.client_accuracy = evaluate, client
    share = (spent["test_eval_s"] + spent["client_eval_s"]) / total
    return {"client_accuracy": client_accuracy, "total_s": round(total, 2),
            **{k: round(v, 3) if isinstance(v, float) else v for k, v in spent.items()},
            "evaluation_share": round(share, 3)}


def fsync_seconds(folder: Path, appends: int = 200) -> dict:
    row = json.dumps({"round": 1, "train_loss": 0.5, "test_accuracy": 0.7, "test_loss": 0.9, "lr": 0.1}) + "\n"
    out = {}
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        path = Path(tmp) / "metrics.jsonl"
        for sync in (True, False):
            started = time.perf_counter()
            for _ in range(appends):
                with open(path, "a") as f:
                    f.write(row)
                    f.flush()
                    if sync:
                        os.fsync(f.fileno())
            out["fsync_s" if sync else "flush_s"] = round((time.perf_counter() - started) / appends, 5)
    return out


def fsyncs_per_run() -> dict:
    from flcore import run_experiment

    counts = {"all": 0, "metrics": 0}
    real = os.fsync

    def counting(fd):
        counts["all"] += 1
        try:
            counts["metrics"] += os.readlink(f"/proc/self/fd/{fd}").endswith("metrics.jsonl")
        except OSError:  # no /proc: the total only
            pass
        return real(fd)

    os.fsync = counting
    try:
        with tempfile.TemporaryDirectory() as store:
            run_experiment({"scale": "smoke", "rounds": 300, "eval_every": 10, "eval_last": 100,
                            "checkpoint_every": 50, "clients": 10, "per_round": 5, "device": "cpu"}, store=store)
    finally:
        os.fsync = real
    return counts


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--method", default="fedavg")
    p.add_argument("--runs", type=int, default=6, help="runs in the group (default 6)")
    p.add_argument("--dir", default=str(ROOT), help="where the fsync is timed (the run store's disk)")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import torch

    torch.set_num_threads(1)
    row = {"method": args.method, "runs": args.runs,
           "evaluations": [evaluations(args.method, args.runs, c) for c in (True, False)],
           "fsync": fsync_seconds(Path(args.dir)), "fsyncs_per_run": fsyncs_per_run(),
           "load": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None}
    print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
