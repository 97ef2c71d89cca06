"""``flcore claims --plan`` and ``flcore claims --decide CLAIM_ID``: a claim's price and its runs.

``--plan`` prices every claim (of ``--paper``, default all) at ``--scale`` without training:
the distinct runs each needs -- its comparisons' cells at ``--seeds`` (default 0,1,2), with
the runs its metric reads beside them -- those another claim needs too (*shared*), what they
add to the store and the hours on one machine of each device kind the benchmark rows know,
then the same for each paper's claims together and for the book, a shared run counted once
(:mod:`flcore.reproduction.claim_plan`, priced as ``flcore reproduce --plan`` prices).  With
``--json``: one object, its fields in :func:`flcore.reproduction.claim_plan.plan_claims`.

``--decide CLAIM_ID`` trains exactly those runs of one claim as ``flcore reproduce`` trains
its batch (shared runs once, in groups, resumable; ``--max-rounds N`` a capped preview that
continues from its checkpoints when run again with a higher cap or none), then prints the
claim's verdict as ``flcore claims`` does.  An unknown claim or a bad option exits with
status 2 and one line before anything trains.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from flcore.reproduction.budget import load_device_rates
from flcore.reproduction.claim_plan import DECIDE_SEEDS, claim_runs, plan_claims, size_text
from flcore.reproduction.claims import all_claims
from flcore.reproduction.runner import results_frame
from flcore.site.reproduce import train_runs

EXIT_FAILED = 1
EXIT_USAGE = 2


def check_claim_options(args: argparse.Namespace) -> str | None:
    """Why ``--plan``/``--decide``/``--max-rounds`` cannot go together as given (one line,
    allowed values named), or None."""
    if args.plan and args.decide is not None:
        return "give --plan or --decide CLAIM_ID, not both"
    if args.max_rounds is not None and not (args.plan or args.decide is not None):
        return "--max-rounds goes with --plan or --decide CLAIM_ID"
    if args.decide is not None:
        ids = [claim.id for claim in all_claims()]
        if args.decide not in ids:
            return f"--decide {args.decide[:80]!r}: unknown claim; allowed values: {', '.join(ids)}"
        if args.paper:
            return "--decide names one claim: give no --paper with it"
    return None


def print_plan(args: argparse.Namespace) -> int:
    """``flcore claims --plan``: nothing trains, nothing is written."""
    rates = load_device_rates(Path(args.root) / "benchmarks" / "results")
    plan = plan_claims(args.scale, Path(args.store).expanduser(), rates, args.seeds or DECIDE_SEEDS,
                       papers=args.paper, max_rounds=args.max_rounds, device=args.device)
    if args.json:
        print(json.dumps(plan, sort_keys=True))
        return 0
    print(plan_text(plan))
    return 0


def plan_text(plan: dict) -> str:
    """The plan as a table for the terminal: one line per claim, then per paper and the book."""
    kinds = list(plan["book"]["hours"])
    cap = f", capped at {plan['max_rounds']} rounds" if plan["max_rounds"] is not None else ""
    seeds = ", ".join(str(s) for s in plan["seeds"])
    width = max([len(row["id"]) for row in plan["claims"]] + [24])
    lines = [f"Deciding each claim at the {plan['scale']} scale on seeds {seeds}{cap}: the distinct runs it needs "
             "(shared: needed by another claim too, counted once in the totals), those not yet in the store, what "
             "they add to it, and the hours on one machine of each kind (benchmark rows).",
             f"{'claim':<{width}} {'runs':>5} {'shared':>6} {'to train':>8} {'store':>9}"
             + "".join(f" {kind[:22]:>22}" for kind in kinds)]

    def line(name: str, entry: dict, shared: str) -> str:
        hours = entry["hours"]
        return (f"{name:<{width}} {entry['distinct_runs']:>5} {shared:>6} {entry['to_train']:>8} "
                f"{size_text(entry['store_bytes']):>9}"
                + "".join(f" {_hours_text(hours.get(k)):>22}" for k in kinds))

    for row in plan["claims"]:
        lines.append(line(row["id"], row, str(row["shared_runs"])))
        if not row["distinct_runs"] and row["unpriced"]:
            lines.append(f"{'':<{width}}   no run: {row['unpriced'][0]}")
    for paper, total in plan["papers"].items():
        lines.append(line(f"{paper} ({total['claims']} claims)", total, ""))
    lines.append(line(f"book ({plan['book']['claims']} claims)", plan["book"], ""))
    lines.append(f"Nothing was trained. Decide one: flcore claims --decide CLAIM_ID --scale {plan['scale']}"
                 " (--json: every claim's runs, whom it shares them with, its price per device kind)")
    return "\n".join(lines)


def _hours_text(hours: float | None) -> str:
    if hours is None:
        return "-"
    return f"{hours:,.1f} h" if hours >= 10 else f"{hours:.2f} h"


def train_claim(args: argparse.Namespace, log=print) -> int:
    """``flcore claims --decide CLAIM_ID``: train the claim's runs (none when it needs
    none); returns 1 when a run failed, else 0 (its verdict is printed by the caller)."""
    claim = next(c for c in all_claims() if c.id == args.decide)
    seeds = list(args.seeds or DECIDE_SEEDS)
    needs = claim_runs(claim, args.scale, seeds)
    for reason in needs.unpriced:
        log(f"{claim.id}: {reason}")
    if not needs.specs:
        log(f"{claim.id}: nothing to train at the {args.scale} scale")
        return 0
    store = str(Path(args.store).expanduser().resolve())
    cap = f", capped at {args.max_rounds} rounds (a preview: not checked)" if args.max_rounds else ""
    log(f"{claim.id}: {len(needs.specs)} run(s) on seeds {', '.join(map(str, seeds))} at the {args.scale} "
        f"scale{cap}")
    failed = (train_runs(list(needs.specs), args, store, log)["status"] == "failed").any()
    frame = results_frame(list(needs.specs), store).drop_duplicates("run_id")  # as stored: capped, finished ...
    counts = frame["status"].value_counts()
    log(f"{claim.id}: " + ", ".join(f"{n} {state}" for state, n in counts.items()))
    return EXIT_FAILED if failed else 0


def usage_error(message: str) -> int:
    print(f"flcore: error: {message}", file=sys.stderr)
    return EXIT_USAGE
