"""How many seeds each claim comparison trains, fixed before its runs by a power analysis.

The plan is data: ``seed_plan.json`` beside this module, made once from the store the book
had before the plan (three seeds of every claim cell) by ``python -m
flcore.reproduction.plan_seeds --store DIR --write`` and committed.  It is read by the
planner (:func:`flcore.reproduction.claims.claim_specs`) and by the verdicts, which read a
comparison's planned seeds and no others; it is never made from outcomes.

For an accuracy comparison the plan reads the *variance only*: the standard deviation of
the per-seed differences of its two cells (``paired_sd``, ``n - 1`` degrees of freedom --
the gap is never read), and finds ``needed``, the fewest seeds whose paired t test (two
-sided, 5 %) finds a true difference of the comparison's margin four times in five (its
MDE, :attr:`flcore.reproduction.paired.PairedTest.mde`, at most the margin).  The seeds
planned at the ``small`` scale:

- ``needed`` when it is between :data:`MIN_SEEDS` (3) and :data:`CAP` (6), or 3 below;
- :data:`CAP` when more are needed: six seeds is what the book's 30 minutes on 2 cores
  buy; such a comparison that stays inconclusive says about how many it needs;
- :data:`CAP` for a comparison whose paired sd the store could not give (a cell without
  runs or with fewer than two shared seeds);
- :data:`CAP` for a *censored* comparison (rounds to a target: the exact sign test), which
  cannot reach 5 % with fewer than six seeds (2 x 0.5^5 = 0.0625);
- :data:`OTHER_SEEDS` (3) for the other seeded metrics (timings, curve-derived counts);
- what ``claims.yaml`` states, with its reason (``seeds: {n: 4, reason: ...}`` on a claim
  or a comparison), over all of these.

A cell read by several comparisons trains the most seeds any of them plans.  The other
scales plan one seed (the paper scale's runs are priced per claim: ``flcore claims
--plan``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from flcore.reproduction.paired import needed_seeds_for

#: The plan's file, ``seed_plan.json`` beside this module.
#:
#: :meta hide-value:
PLAN_FILE = Path(__file__).with_name("seed_plan.json")
#: The scale the plan is made for; the others plan one seed.
PLANNED_SCALE = "small"
#: Fewest seeds a decided comparison reads (``flcore.reproduction.paired.MIN_OWN_SEEDS``).
MIN_SEEDS = 3
#: Most seeds the small book's budget trains for one comparison.
CAP = 6
#: Seeds of the seeded metrics that are neither accuracies nor censored.
OTHER_SEEDS = 3
#: The power at which ``needed`` detects the margin.
POWER = 0.80
#: Most seeds the power search tries (a comparison needing more is said to need "over N").
SEARCH_LIMIT = 400


@dataclass(frozen=True)
class Planned:
    """A comparison's planned seeds and why (module docstring)."""

    seeds: int
    reason: str
    paired_sd: float | None = None
    pairs: int | None = None
    needed: int | None = None

    def as_dict(self) -> dict:
        return {"seeds": self.seeds, "reason": self.reason, "paired_sd": self.paired_sd, "pairs": self.pairs,
                "needed": self.needed}


def key_of(claim_id: str, index: int) -> str:
    """The plan's key of a claim's listed comparison ``index``: ``"claim-id#index"``."""
    return f"{claim_id}#{index}"


def needed_seeds(paired_sd: float, margin: float, power: float = POWER, limit: int = SEARCH_LIMIT) -> int | None:
    """The fewest seeds ``n >= 2`` whose two-sided 5 % paired t test finds a true mean
    difference of ``margin`` with probability ``power`` (noncentral t on ``n - 1``
    degrees of freedom); None when more than ``limit`` are needed."""
    return needed_seeds_for(paired_sd, margin, power, limit)


def planned_from_sd(paired_sd: float | None, pairs: int | None, margin: float | None) -> Planned:
    """The seeds an accuracy comparison plans from its paired sd (module docstring)."""
    if paired_sd is None or margin is None:
        why = "no margin" if paired_sd is not None else "no paired sd in the store"
        return Planned(CAP, f"{why}: the cap, {CAP} seeds", paired_sd, pairs)
    needed = needed_seeds(paired_sd, margin)
    measured = f"paired sd {paired_sd:.2f} ({pairs} seeds)"
    if needed is None:
        return Planned(CAP, f"{measured}: over {SEARCH_LIMIT} seeds would find a difference of the margin, "
                            f"{margin:g}, with 80 % power; the cap, {CAP}", paired_sd, pairs, None)
    base = f"{measured}: {needed} seeds find a difference of the margin, {margin:g}, with 80 % power"
    if needed > CAP:
        return Planned(CAP, f"{base}; the cap, {CAP}", paired_sd, pairs, needed)
    return Planned(max(MIN_SEEDS, needed), base + (f"; at least {MIN_SEEDS}" if needed < MIN_SEEDS else ""),
                   paired_sd, pairs, needed)


@lru_cache(maxsize=4)
def load_plan(path: str | None = None) -> dict:
    """The committed plan (``{"comparisons": {key: {...}}, ...}``) read from ``path`` (default
    :data:`PLAN_FILE`); an empty plan when the file is absent (every accuracy comparison then
    plans :data:`CAP`)."""
    file = PLAN_FILE if path is None else Path(path)
    if not file.is_file():
        return {"comparisons": {}}
    data = json.loads(file.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("comparisons"), dict):
        raise ValueError(f"{file}: a seed plan holds a 'comparisons' mapping")
    return data


def planned(claim, index: int, scale: str, metric) -> Planned:
    """The planned seeds of ``claim``'s listed comparison ``index`` at ``scale``, its metric
    ``metric`` (a :class:`flcore.reproduction.claims.Metric`, None when not registered;
    module docstring)."""
    stated = claim.comparisons[index].seeds or claim.seeds
    if scale != PLANNED_SCALE:
        return Planned(1, f"one seed at the {scale} scale")
    if stated is not None:
        return Planned(stated.n, stated.reason)
    if claim.one_seed or metric is None or not metric.seeded or metric.by_construction:
        return Planned(1, claim.one_seed or "an analysis of each stored model: one seed")
    if metric.censored is not None:
        return Planned(CAP, f"censored: the exact sign test reaches 5 % from {CAP} seeds")
    if not metric.accuracy:
        return Planned(OTHER_SEEDS, f"a {metric.unit} comparison: {OTHER_SEEDS} seeds")
    entry = load_plan()["comparisons"].get(key_of(claim.id, index))
    if entry is None:
        return Planned(CAP, f"not in the plan: the cap, {CAP} seeds")
    return Planned(int(entry["seeds"]), str(entry["reason"]), entry.get("paired_sd"), entry.get("pairs"),
                   entry.get("needed"))
