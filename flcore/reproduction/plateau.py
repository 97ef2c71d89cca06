"""Whether a cell's accuracy had reached a plateau when its runs stopped.

A claim about accuracy is a claim about where training ends, not how fast it gets there:
a comparison read while a cell still climbs measures speed.  The criterion, stated on the
Claims page: over the last fifth of the protocol's rounds, ``(4R/5, R]``, the cell's mean
test accuracy moved less than half the comparison's margin against the fifth before,
``(3R/5, 4R/5]``.  Each seed's change is the mean of its evaluations in the last fifth minus
the mean of those in the fifth before (points); the cell's change is the mean over its
seeds, so evaluation noise that a single seed shows averages out the way the cell's value
does (our decision: the issue proposed "at every seed", which a seed's round-to-round noise
alone fails).  The tolerance is half the margin (0.5 points with the stand-in's 1-point
margin): a cell still moving by that much over a fifth of its rounds could move its mean by
more than the margin in the rounds the paper runs beyond ours.

A comparison whose cell has not reached a plateau is *not settled*
(:func:`flcore.reproduction.claim_compare.compare`): inconclusive, never a hold or a fail on
final accuracy.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

#: The share of the protocol's rounds each of the two compared windows spans.
WINDOW_SHARE = 0.2
#: The tolerance as a fraction of the comparison's margin.
TOLERANCE_OF_MARGIN = 0.5
#: A comparison's ``verdict_text`` when a cell has not reached its plateau.
NOT_SETTLED = "not settled"


def is_not_settled(comparison: dict) -> bool:
    """Whether a comparison (``flcore claims --json``'s) reads *not settled*."""
    return comparison.get("verdict_text") == NOT_SETTLED


def fifth_change(curve: Sequence[tuple[int, float]], rounds: int) -> float | None:
    """The mean accuracy (points) of ``curve``'s evaluations in the last fifth of ``rounds``
    minus that in the fifth before; None when either window has no evaluation.
    ``curve``: ``(round, accuracy as a fraction)`` pairs."""
    width = WINDOW_SHARE * rounds
    last = [acc for r, acc in curve if rounds - width < r <= rounds]
    before = [acc for r, acc in curve if rounds - 2 * width < r <= rounds - width]
    if not last or not before:
        return None
    return 100.0 * (sum(last) / len(last) - sum(before) / len(before))


def cell_plateau(curves: Mapping[int, Sequence[tuple[int, float]]], rounds: int, margin: float) -> dict:
    """``{"reached", "change", "tolerance", "seeds"}`` of one cell: its seeds' mean change over
    the last fifth (points), the tolerance (half ``margin``) and whether ``|change|`` is
    below it; ``reached`` is None when a seed's curve cannot say (too few evaluations)."""
    tolerance = TOLERANCE_OF_MARGIN * margin
    changes = [fifth_change(curve, rounds) for curve in curves.values()]
    if not changes or any(c is None for c in changes):
        return {"reached": None, "change": None, "tolerance": tolerance, "seeds": len(changes)}
    change = sum(changes) / len(changes)
    return {"reached": abs(change) < tolerance, "change": change, "tolerance": tolerance, "seeds": len(changes)}


def criterion_text(margin: float) -> str:
    """The criterion in words, for the Claims page."""
    return (f"a cell is at a plateau when its mean accuracy over its seeds moved less than "
            f"{TOLERANCE_OF_MARGIN * margin:g} points (half the margin) from the fifth of the rounds before the last "
            "fifth to the last fifth")


def plateau_counts(comparisons: Sequence[dict]) -> dict:
    """Over the distinct accuracy cells ``comparisons`` read (a cell: its runs; counted once
    however many comparisons read it), how many have a plateau state, how many reached it,
    and how many comparisons are *not settled*."""
    states: dict[tuple, bool | None] = {}
    for comparison in comparisons:
        for side, state in (comparison.get("plateau") or {}).items():
            runs = tuple(sorted((comparison.get("run_ids") or {}).get(side) or ()))
            if runs:
                states[runs] = state.get("reached")
    judged = [reached for reached in states.values() if reached is not None]
    return {"cells": len(judged), "reached": sum(judged), "unknown": len(states) - len(judged),
            "not_settled": sum(is_not_settled(c) for c in comparisons)}
