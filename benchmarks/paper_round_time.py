"""Seconds of a paper-protocol round on a CPU for a model the CIFAR rows do not cover: the
rate :mod:`flcore.reproduction.pricing` prices its runs at, in place of a rate scaled from
the CIFAR CNN's by floating-point operations.

What is measured
----------------
FedIMA's Fashion-MNIST protocol (``fedima-table-1``'s runs at the paper scale: 100
clients of 600 images, 10 per round, 5 local epochs of batch 50, the 10,000 test images
evaluated every round) on the released files under ``--data-root``, for FedAvg and
FedASAM, each in one single-threaded process -- a worker of ``flcore book`` /
``flcore reproduce`` on a CPU.  A run of ``--rounds`` rounds is timed less a run of one
round (the data set's loading, the model's set-up), so ``seconds`` is ``--rounds - 1``
rounds; ``cost`` is those rounds' units of
:func:`flcore.planning.planner.run_cost` plus
:func:`flcore.reproduction.pricing.evaluation_cost`.  The floating-point scaling it
replaces priced a round at half its time: the 28 x 28 one-channel network runs fewer
operations per second than the CIFAR CNN (its max-pooling, its one input channel).

Running it
----------
::

    python benchmarks/paper_round_time.py --data-root /usr/share/datasets/fashion-mnist \\
        --append benchmarks/results/paper_round_time.jsonl

The row (``engine: one-at-a-time``, ``model``, ``seconds``, ``cost``, ``workers: 1``)
is read as a sweep row is (:func:`flcore.reproduction.budget.device_rates`).
"""
from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from provenance import emit, git_commit  # noqa: E402  (benchmarks/, the script's folder)


def time_runs(data_root: str, rounds: int, methods: list[str]) -> dict:
    """``seconds`` and ``cost`` of ``rounds - 1`` rounds of each method's run, single-threaded."""
    import torch

    from flcore.api import run_experiment
    from flcore.planning.planner import run_cost
    from flcore.reproduction.artifacts import runs_for
    from flcore.reproduction.pricing import evaluation_cost

    torch.set_num_threads(1)
    specs = [s for s in runs_for(["fedima-table-1"], "paper", [0]) if s.resolve().dataset == "fmnist"]
    seconds = cost = 0.0
    per_method = {}
    for method in methods:
        spec = next(s for s in specs if s.resolve().method == method)
        took = {}
        for n in (1, rounds):
            cfg = spec.resolve(max_rounds=n, data_root=data_root, device="cpu")
            start = time.perf_counter()
            run_experiment(cfg, store=None)
            took[n] = time.perf_counter() - start
        units = run_cost(cfg) + evaluation_cost(cfg) - (run_cost(cfg) + evaluation_cost(cfg)) / rounds
        seconds += took[rounds] - took[1]
        cost += units
        per_method[method] = round((took[rounds] - took[1]) / (rounds - 1), 3)
    return {"seconds": round(seconds, 3), "cost": cost, "s_per_round": per_method, "model": cfg.model,
            "dataset": cfg.dataset}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-root", required=True, help="the Fashion-MNIST files (flcore.data.load_fmnist)")
    p.add_argument("--rounds", type=int, default=3, help="rounds of the timed run (default 3; one is set-up)")
    p.add_argument("--methods", default="fedavg,fedasam")
    p.add_argument("--append", default=None, help="append the row to this JSON-lines file")
    args = p.parse_args(argv)
    if args.rounds < 2:
        p.error("--rounds: at least 2 (one round is the set-up)")
    from flcore.cpus import available_cpus

    found = time_runs(args.data_root, args.rounds, args.methods.split(","))
    command = "python benchmarks/paper_round_time.py --data-root DATA" + (
        f" --rounds {args.rounds}" if args.rounds != 3 else "") + (f" --append {args.append}" if args.append else "")
    row = {"engine": "one-at-a-time", "device": "cpu", "workers": 1, **found, "rounds": args.rounds - 1,
           "methods": args.methods.split(","), "machine": f"CPU, {available_cpus()} cores",
           "date": datetime.date.today().isoformat(), "commit": git_commit(), "command": command}
    emit(row, args.append)
    return 0


if __name__ == "__main__":
    sys.exit(main())
