"""The time budgets the book keeps, estimated from a per-run cost model.

A run's *cost* is :func:`flcore.planning.planner.run_cost`: the gradient evaluations of
its clients (rounds x clients per round x local steps x evaluations per step).  Its time
is ``cost x core-seconds per unit of cost``, a rate measured by
``benchmarks/sweep_time.py`` on the same protocol with its evaluation schedule (so the
rate includes the evaluations): one rate for runs trained one at a time and one for runs
batched ``R`` to a group.  A group of ``r`` runs is charged at the rate interpolated
linearly in ``r`` between the two (the benchmark's groups are the largest the book's
planner makes, so smaller groups are charged closer to the one-at-a-time rate).  The
groups of a plan are scheduled longest first on ``cores`` single-threaded workers, as
``ensure_runs`` does, and the estimate is the last worker's finishing time.
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from flcore.config import resolve_config
from flcore.planning.planner import plan_groups, run_cost

#: ``make main``: every artifact with a notebook at the ``small`` scale, on 2 cores.
MAIN_BUDGET_S = 30 * 60
#: ``make test`` (CI).
TEST_BUDGET_S = 20 * 60


@dataclass(frozen=True)
class CostModel:
    """Core-seconds per unit of run cost, alone and batched ``batched_runs`` to a group."""

    alone: float
    batched: float
    batched_runs: int

    def rate(self, runs: int) -> float:
        if runs <= 1 or self.batched_runs <= 1:
            return self.alone
        share = min(1.0, (runs - 1) / (self.batched_runs - 1))
        return self.alone + share * (self.batched - self.alone)


def calibrate(rows: Sequence[dict]) -> CostModel:
    """A :class:`CostModel` from the latest CPU rows of ``benchmarks/sweep_time.py
    --append`` (fields ``engine``, ``device``, ``seconds``, ``workers``, ``cost``,
    ``group_runs``): core-seconds over the total cost of the runs timed."""
    latest = {}
    for row in rows:
        if row.get("device") == "cpu" and "cost" in row:
            latest[row["engine"]] = row
    if {"one-at-a-time", "batched"} - set(latest):
        raise ValueError("the results need a CPU 'one-at-a-time' and a 'batched' row with their cost")
    rate = {engine: row["seconds"] * row["workers"] / row["cost"] for engine, row in latest.items()}
    return CostModel(alone=rate["one-at-a-time"], batched=rate["batched"],
                     batched_runs=latest["batched"]["group_runs"])


def load_cost_model(path: str | Path) -> CostModel:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return calibrate(rows)


def estimate_seconds(specs: Sequence, model: CostModel, cores: int = 2, device: str = "cpu") -> float:
    """Estimated wall time to train ``specs`` as ``ensure_runs`` would on ``cores`` workers."""

    groups = plan_groups(specs, device=device, workers=cores)
    times = []
    for group in groups:
        cost = sum(run_cost(resolve_config({**values, "device": device})) for values in group.configs)
        times.append(cost * model.rate(group.size))
    finish = [0.0] * max(1, cores)
    for t in sorted(times, reverse=True):  # longest first, each to the worker free soonest
        finish[finish.index(min(finish))] += t
    return max(finish)


def book_specs(scale: str, root: str | Path, seeds: Sequence[int] = (0,)) -> list:
    """The distinct available runs the book trains: every artifact's whose notebook exists
    under ``root``, the seeds the claims' cells add (:func:`~flcore.reproduction.claims.claim_specs`)
    and the reference pairs whose spread decides comparisons with too few seeds."""

    from flcore.reproduction.artifacts import artifact_ids, get_artifact, runs_for
    from flcore.reproduction.claims import claim_specs, spread_specs

    ids = [a for a in artifact_ids() if (Path(root) / get_artifact(a).notebook_path).exists()]
    specs = [s for s in runs_for(ids, scale, seeds) if s.available]
    known = {s.run_id() for s in specs}
    for spec in claim_specs(scale, ids) + spread_specs(scale):
        if spec.run_id() not in known:
            known.add(spec.run_id())
            specs.append(spec)
    return specs


def book_estimate(scale: str, root: str | Path, model: CostModel, cores: int = 2) -> dict:
    """``runs``, ``groups`` and ``seconds`` (training only) of the book at ``scale``."""

    specs = book_specs(scale, root)
    return {"runs": len(specs), "groups": len(plan_groups(specs, device="cpu", workers=cores)),
            "seconds": math.ceil(estimate_seconds(specs, model, cores))}
