"""Which small-scale protocol brings the claims' accuracy cells to a plateau, and at what cost.

    python benchmarks/plateau_search.py                 # human table
    python benchmarks/plateau_search.py --json --append benchmarks/results/plateau_search.jsonl

The plateau criterion is the Claims page's (:mod:`flcore.reproduction.plateau`): a cell's
mean accuracy over its seeds moved less than half the 1-point margin from the fifth of the
rounds before the last fifth to the last fifth.  Each candidate protocol below is the small
scale's MNIST-1D protocol with a few fields changed; each trains FedAvg and FedSAM at the
two heterogeneity extremes the claims read (Dirichlet alpha 0 and 100) on seeds 0, 1 and 2,
planned before any run, into a temporary store.  One row per candidate:

- ``cells``: per (method, alpha), the mean accuracy (points) over the last fifth of its
  rounds, its change against the fifth before (``change``, points) and ``reached``;
- ``reached`` / ``cells_total``: how many of the four cells are at a plateau;
- ``cost``: the candidate's client steps per run over today's small protocol's, the factor
  by which it would lengthen ``make main``'s training (the book's budget has no room left:
  README, "Building the book").

The candidates vary what a protocol may vary within that budget -- the client learning
rate, a per-round decay of it (``lr_decay``, the schedule FedIMA and FedLESAM use) -- and one
that does not fit: five times the rounds, to show how far away the plateau is.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from provenance import emit, git_commit  # noqa: E402

#: (name, fields changed from the small MNIST-1D protocol).
CANDIDATES = (
    ("small scale today", {}),
    ("lr decay 0.99 a round", {"lr_decay": 0.99}),
    ("lr 0.3", {"lr": 0.3}),
    ("lr 0.3, decay 0.995 a round", {"lr": 0.3, "lr_decay": 0.995}),
    ("5x the rounds", {"rounds": 1500}),
)
METHODS = ("fedavg", "fedsam")
ALPHAS = (0.0, 100.0)
SEEDS = (0, 1, 2)
MARGIN = 1.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--candidates", default=None,
                   help="comma-separated candidate numbers, from 1 (default: all)")
    p.add_argument("--rounds", type=int, default=None,
                   help="override every candidate's rounds (a quick check; the rows then say so)")
    p.add_argument("--seeds", type=int, default=len(SEEDS), help="seeds 0..N-1 per cell (default 3)")
    p.add_argument("--json", action="store_true", help="one JSON line per candidate")
    p.add_argument("--append", default=None, help="with --json, also append the rows to this JSON-lines file")
    return p.parse_args(argv)


def cell_summary(curves: list[list[tuple[int, float]]], rounds: int) -> dict:
    """One cell's last-fifth mean (points) and plateau state from its seeds' curves
    (``(round, accuracy as a fraction)``), by :func:`flcore.reproduction.plateau.cell_plateau`."""
    from flcore.reproduction.plateau import WINDOW_SHARE, cell_plateau

    state = cell_plateau(dict(enumerate(curves)), rounds, MARGIN)
    width = WINDOW_SHARE * rounds
    last = [statistics.fmean(a for r, a in curve if rounds - width < r <= rounds) for curve in curves]
    return {"accuracy": round(100 * statistics.fmean(last), 2),
            "change": None if state["change"] is None else round(state["change"], 2),
            "reached": state["reached"]}


def _curve(run) -> list[tuple[int, float]]:
    return [(row["round"], row["test_accuracy"]) for row in run.read_metrics()
            if row.get("test_accuracy") is not None]


def run_candidate(name: str, changes: dict, store: str, seeds: int, rounds: int | None) -> dict:
    from flcore.config import resolve_config
    from flcore.planning.sweep import run_sweep
    from flcore.store import RunStore

    changes = {**changes, **({"rounds": rounds} if rounds else {})}
    configs = [resolve_config(scale="small", dataset="mnist1d", method=method, alpha=alpha, seed=seed, **changes)
               for method in METHODS for alpha in ALPHAS for seed in range(seeds)]
    start = time.perf_counter()
    summaries = run_sweep(configs, store, progress=False)
    wall = time.perf_counter() - start
    failed = [s for s in summaries if s["status"] != "finished"]
    if failed:
        raise SystemExit(f"{name}: {len(failed)} runs did not finish: {failed[0].get('error')}")
    runs = RunStore(store)
    today = resolve_config(scale="small", dataset="mnist1d", method="fedavg")
    cells = []
    for method in METHODS:
        for alpha in ALPHAS:
            cfgs = [c for c in configs if c.method == method and c.alpha == alpha]
            curves = [_curve(runs.run(c.run_id())) for c in cfgs]
            cells.append({"method": method, "alpha": alpha, **cell_summary(curves, cfgs[0].rounds)})
    first = configs[0]
    steps = first.rounds * first.local_epochs
    return {"benchmark": "plateau_search", "candidate": name, "changes": changes,
            "rounds": first.rounds, "lr": first.lr, "lr_decay": first.lr_decay, "seeds": seeds,
            "cost": round(steps / (today.rounds * today.local_epochs), 2),
            "cells": cells, "reached": sum(bool(c["reached"]) for c in cells), "cells_total": len(cells),
            "wall_s": round(wall, 1), "commit": git_commit()}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    chosen = CANDIDATES if not args.candidates else [CANDIDATES[int(i) - 1] for i in args.candidates.split(",")]
    with tempfile.TemporaryDirectory(prefix="plateau-search-") as store:
        for name, changes in chosen:
            row = run_candidate(name, changes, store, args.seeds, args.rounds)
            if args.json:
                emit(row, args.append)
                continue
            print(f"{name}: {row['reached']} of {row['cells_total']} cells at a plateau, cost x{row['cost']:g} "
                  f"({row['wall_s']:.0f} s)")
            for cell in row["cells"]:
                print(f"  {cell['method']:<7} alpha {cell['alpha']:<6g} {cell['accuracy']:6.2f} %  "
                      f"last fifth moved {cell['change']:+.2f}  {'plateau' if cell['reached'] else 'climbing'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
