"""The runs the book trains, and their estimated time: every artifact's whose notebook
exists, the seeds the claims' cells add and the reference pairs of the claims' spread.

Above the artifact registry and the claims, which it joins, and the budget's cost model.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from flcore.planning.planner import plan_groups
from flcore.reproduction.artifacts import artifact_ids, get_artifact, runs_for
from flcore.reproduction.budget import CostModel, estimate_seconds
from flcore.reproduction.claims import claim_specs, spread_specs


def book_specs(scale: str, root: str | Path, seeds: Sequence[int] = (0,)) -> list:
    """The distinct available runs the book trains: every artifact's whose notebook exists
    under ``root``, the seeds the claims' cells add (:func:`~flcore.reproduction.claims.claim_specs`)
    and the reference pairs whose spread decides comparisons with too few seeds."""

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
