"""Make the small book's seed plan (:mod:`flcore.reproduction.seed_plan`) from a run store.

``python -m flcore.reproduction.plan_seeds --store DIR`` prints the plan; ``--write``
writes it to ``flcore/reproduction/seed_plan.json``.  It reads, for every accuracy
comparison, the per-seed values of its two cells at the first three seeds in ``DIR``
and keeps their paired standard deviation -- never their gap -- and the seeds it plans.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from datetime import datetime, timezone

from flcore.reproduction.claims import METRICS, all_claims, cell_values, margin_of
from flcore.reproduction.seed_plan import CAP, MIN_SEEDS, PLAN_FILE, PLANNED_SCALE, POWER, key_of, planned_from_sd


def paired_sd(claim, comparison, scale: str, store) -> tuple[float | None, int]:
    """The standard deviation of the per-seed differences of ``comparison``'s cells at the
    first :data:`MIN_SEEDS` seeds in ``store`` (None below two shared seeds), and the seeds."""
    better, worse = comparison.cells_at(scale)
    seeds = tuple(range(MIN_SEEDS))
    hi = cell_values(claim, better, scale, seeds, store)
    lo = cell_values(claim, worse, scale, seeds, store)
    shared = sorted(set(hi.values) & set(lo.values))
    if len(shared) < 2:
        return None, len(shared)
    diffs = [hi.values[s] - lo.values[s] for s in shared]
    mean = sum(diffs) / len(diffs)
    return math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)), len(shared)


def make_plan(store, scale: str = PLANNED_SCALE) -> dict:
    """``{key: planned seeds}`` of every accuracy comparison whose claim trains seeds."""
    out = {}
    for claim in all_claims():
        metric = METRICS.get(claim.metric)
        if claim.one_seed or metric is None or not metric.accuracy or metric.censored is not None:
            continue
        for index, comparison in enumerate(claim.comparisons):
            sd, pairs = paired_sd(claim, comparison, scale, store)
            margin, _ = margin_of(claim, comparison, scale)
            plan = planned_from_sd(None if sd is None else round(sd, 4), pairs if sd is not None else None, margin)
            out[key_of(claim.id, index)] = plan.as_dict()
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, help="the run store the plan reads (three seeds of every cell)")
    parser.add_argument("--write", action="store_true", help=f"write {PLAN_FILE.name}")
    args = parser.parse_args(argv)
    plan = {"scale": PLANNED_SCALE, "cap": CAP, "min_seeds": MIN_SEEDS, "power": POWER,
            "made": datetime.now(timezone.utc).date().isoformat(),
            "command": "python -m flcore.reproduction.plan_seeds --store STORE --write",
            "comparisons": make_plan(args.store)}
    text = json.dumps(plan, indent=1, sort_keys=True) + "\n"
    if args.write:
        PLAN_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {PLAN_FILE} ({len(plan['comparisons'])} comparisons)")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
