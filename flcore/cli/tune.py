"""``flcore tune``: the papers' hyper-parameter grids on the stand-in's validation split.

``flcore tune --scale small [--paper P] [--plan]`` trains every grid point of the paper's
studies (:mod:`flcore.reproduction.tuning`) on the tuning seeds, batched and resumable like
a sweep (runs already in the store are not trained again), then writes the paper's record
to ``flcore/config/tuning/<paper>-<scale>.json``, which the presets read.  ``--plan``
prints the runs and their estimated time and trains nothing.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from flcore.cli.arguments import add_store_option, add_workers_option
from flcore.planning.sweep import run_sweep
from flcore.reproduction.budget import load_device_rates
from flcore.reproduction.pricing import plan_text, price_runs
from flcore.reproduction.tuning import (
    TUNABLE_SCALES,
    make_record,
    papers_tuned,
    studies_of,
    tuning_configs,
    write_record,
)
from flcore.store.bundle import git_commit


def register(subparsers) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = subparsers.add_parser("tune", help="tune the stand-in's hyper-parameters on its validation split",
                              description=__doc__.split("\n\n")[1])
    p.add_argument("--scale", default="small", choices=TUNABLE_SCALES, help="the scale to tune (default small)")
    p.add_argument("--paper", default=None, choices=papers_tuned(), help="one paper's studies (default: all)")
    p.add_argument("--plan", action="store_true", help="print the runs and their estimated time; train nothing")
    p.add_argument("--json", action="store_true", help="with --plan: the plan as JSON")
    add_workers_option(p, "default: the CPU cores on a CPU")
    p.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")
    p.add_argument("--root", default=".", help="the repository root holding benchmarks/results (for --plan)")
    add_store_option(p)
    return {"tune": _cmd_tune}


def _cmd_tune(args: argparse.Namespace) -> int:
    papers = [args.paper] if args.paper else papers_tuned()
    configs = tuning_configs([s for paper in papers for s in studies_of(paper)], args.scale)
    if args.plan:
        rates = load_device_rates(Path(args.root) / "benchmarks" / "results")
        plan = price_runs(configs, args.store, rates, device=configs[0].device)
        print(json.dumps(plan, sort_keys=True) if args.json else
              plan_text(plan, f"tuning {', '.join(papers)} at the {args.scale} scale"))
        return 0
    summaries = run_sweep(configs, args.store, workers=args.workers, progress=not args.no_progress)
    failed = [s for s in summaries if s["status"] not in ("finished", "diverged")]  # diverging is a result
    if failed:
        print(f"flcore tune: {len(failed)} of {len(summaries)} tuning runs did not finish (the first: "
              f"{failed[0]['run_id']}, {failed[0].get('error')}); run the same command again to resume them",
              file=sys.stderr)
        return 1
    by_id = {s["run_id"]: s for s in summaries}
    for paper in papers:
        command = f"flcore tune --scale {args.scale} --paper {paper}"
        record = make_record(paper, args.scale, by_id, git_commit(), command)
        path = write_record(record)
        print(f"{path}: " + "; ".join(f"{s['name']} {r['row']} {r['choice']}" for s in record["studies"]
                                      for r in s["rows"]))
    return 0
