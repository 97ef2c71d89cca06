"""Final accuracy of every registered method at one ``small`` setting, in one command.

    python benchmarks/methods_small.py [--alpha 0] [--seed 0] [--methods a,b] [--jobs 2] [--store runs/methods-small]

Each method runs the ``small`` scale (MNIST-1D, 100 clients x 80 samples, 5 per round,
300 rounds; centralized baselines: 20 epochs on the pooled data) with its default
hyper-parameters, through the run store, so a rerun only computes what is missing.
Prints a Markdown table (method, status, mean test accuracy over the last 100 rounds,
final and best accuracy, wall time) sorted by mean accuracy; ``--json`` prints one JSON
object per method instead.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor


def run_one(name: str, alpha: float, seed: int, store: str) -> dict:
    import torch

    torch.set_num_threads(1)
    from flcore import resolve_config, run_experiment

    started = time.perf_counter()
    summary = run_experiment(resolve_config(method=name, alpha=alpha, seed=seed, scale="small"), store=store)
    summary["wall_s"] = round(time.perf_counter() - started, 1)
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--alpha", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", default=None, help="comma-separated subset (default: all)")
    from flcore.cpus import available_cpus
    parser.add_argument("--jobs", type=int, default=min(2, available_cpus()))
    parser.add_argument("--store", default="runs/methods-small")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from flcore.algorithms import METHOD_NAMES

    names = args.methods.split(",") if args.methods else list(METHOD_NAMES)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {name: pool.submit(run_one, name, args.alpha, args.seed, args.store) for name in names}
        rows = []
        for name, future in futures.items():
            summary = future.result()
            rows.append({"method": name, **{k: summary.get(k) for k in
                         ("status", "mean_last_100", "final_accuracy", "best_accuracy", "wall_s", "run_id")}})
            print(f"done {name}", file=sys.stderr, flush=True)
    rows.sort(key=lambda r: -(r["mean_last_100"] or 0))
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    fmt = lambda v: "-" if v is None else f"{100 * v:.1f}"  # noqa: E731
    print(f"MNIST-1D small scale, alpha = {args.alpha}, seed {args.seed} (accuracy %, chance 10.0)\n")
    print("| method | status | mean last 100 | final | best | wall s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['method']} | {r['status']} | {fmt(r['mean_last_100'])} | {fmt(r['final_accuracy'])} | "
              f"{fmt(r['best_accuracy'])} | {r['wall_s']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
