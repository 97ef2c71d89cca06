"""One comparison of a claim at a scale, from its two cells' per-seed values: its margin, its
verdict (:func:`flcore.reproduction.verdicts.decide_comparison`), its gap against the
paper's and the round from which its verdict settles -- the fields of ``flcore claims
--json``'s comparisons.

**Margins.**  Each comparison has a margin in its units, with its reason (``margin``,
``margin_reason``).  ``claims.yaml`` may state one per claim or per comparison (the
comparison's wins): ``margin: {stand_in: <value in the stand-in's units, below the paper
scale>, paper_fraction: <fraction of the published gap, at the paper scale>, reason:
<why>}``.  Unstated, the paper scale's margin is :data:`PAPER_MARGIN_FRACTION` of the
published gap, and below it the stand-in's margin of the metric's unit
(:data:`STAND_IN_MARGINS`: 1 point of accuracy); a metric without one has no margin, and its
comparisons are never *absent* or *negligible*.

**Learning.**  An accuracy comparison (and a flatness one, on its runs' accuracies) asks
first whether each cell learned (:func:`flcore.reproduction.verdicts.cell_state`, with the
data set's chance accuracy and :data:`~flcore.reproduction.verdicts.LEARN_MARGIN`): a cell
at chance makes the comparison *not testable on the stand-in* -- the flatness of a model
that learned nothing ranks nothing either way.  The papers' flatness rankings leave such a
method out by the same function (:func:`at_chance`).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from flcore.config import chance_accuracy
from flcore.config.presets import tuning_of
from flcore.reproduction.claim_cells import CellValues, cell_text, stand_in_needs, untestable_reason
from flcore.reproduction.claim_metrics import METRICS, resolution_of
from flcore.reproduction.claim_registry import Claim, Comparison
from flcore.reproduction.paired import MIN_OWN_SEEDS, sample_sd
from flcore.reproduction.plateau import NOT_SETTLED, cell_plateau
from flcore.reproduction.settling import settles_at, trajectory, window_means
from flcore.reproduction.targets import accuracy_curve
from flcore.reproduction.verdicts import (
    DEFAULT_LEARN_MARGIN,
    LEARN_MARGIN,
    VERDICT_TEXT,
    Decision,
    cell_state,
    decide_comparison,
)
from flcore.store import StoreError

#: At the paper scale, a comparison's margin unless its claims.yaml states one: this
#: fraction of the published gap.
PAPER_MARGIN_FRACTION = 0.5
#: Below the paper scale, a comparison's margin (value in the stand-in's units, reason) by
#: its metric's unit, unless its claims.yaml states one.
STAND_IN_MARGINS: dict[str, tuple[float, str]] = {
    "points": (1.0, "1 point of test accuracy on the stand-in: a difference under 1 point is no effect an accuracy "
                    "claim's words (\u201cimproves\u201d, \u201coutperforms\u201d) describe"),
}


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


def _round(value: float | None, digits: int = 4) -> float | None:
    """``value`` rounded; None for None and for a value that is not finite (JSON has none)."""
    return None if value is None or not math.isfinite(float(value)) else round(float(value), digits)


def learn_margin_of(dataset: str) -> float:
    """Points above chance a seed of ``dataset`` must reach to have learned."""
    return LEARN_MARGIN.get(dataset, DEFAULT_LEARN_MARGIN)


def at_chance(values: Sequence[float], chance: float, dataset: str = "mnist1d") -> bool:
    """Whether a cell whose seeds scored ``values`` (accuracy, %) did not learn: most of them
    below ``chance`` + the data set's learn margin (the verdicts' rule, one function)."""
    state = cell_state(list(values), chance, learn_margin_of(dataset), [False] * len(values))
    return state.status == "at_chance"


def _cell_stats(values: Sequence[float]) -> dict:
    """A cell's mean, sd (None below two seeds) and n over the seeds a comparison reads."""
    return {"mean": _round(_mean(values)), "sd": _round(sample_sd(values)) if len(values) >= 2 else None,
            "n": len(values)}


def margin_of(claim: Claim, comparison: Comparison, scale: str) -> tuple[float | None, str]:
    """``(margin, reason)`` of ``comparison`` at ``scale`` in its units (module docstring);
    ``None`` with the reason when it has none."""
    stated = comparison.margin or claim.margin
    metric = METRICS.get(claim.metric)
    unit = metric.unit if metric else ""
    if scale == "paper":
        fraction = stated.paper_fraction if stated and stated.paper_fraction is not None else None
        reason = stated.reason if fraction is not None else (
            f"{PAPER_MARGIN_FRACTION:g} of the published gap: an effect under half the paper's is not the effect "
            "it reports")
        fraction = PAPER_MARGIN_FRACTION if fraction is None else fraction
        if comparison.published_gap is None:
            return None, "the later claim's source prints no numbers for this comparison: no margin"
        margin = fraction * abs(comparison.published_gap)
        if margin <= 0:
            return None, "the published gap is 0: no margin"
        return margin, f"{reason} ({fraction:g} x {abs(comparison.published_gap):g} {unit})".rstrip()
    if stated and stated.stand_in is not None:
        return stated.stand_in, stated.reason
    if unit in STAND_IN_MARGINS:
        return STAND_IN_MARGINS[unit]
    return None, f"no margin stated for {unit or 'this metric'} on the stand-in"


def size_of(gap: float, half_width: float, published_gap: float,
            relative_to: tuple[float | None, float | None] | None = None,
            lengths: tuple[float | None, float | None] | None = None) -> dict | None:
    """``{"ratio", "interval", "basis", "note"}``: our gap over the published gap, with the 95 %
    interval on our gap divided the same way; None when the source prints no gap (0 or None:
    a later claim without numbers).

    ``relative_to``: ``(our worse cell, the paper's worse cell)`` for a metric whose scale
    depends on the data and model (flatness: lambda_max of another network is not in our
    units): each gap is first divided by its own worse cell, so the ratio compares relative
    gaps (``basis`` "relative").  ``lengths``: ``(our runs' rounds, the paper's)`` for a
    metric that counts rounds: each gap is first divided by its own run's length (``basis``
    "run length": 30 rounds of 100 is 120 of 400); no ratio when the paper does not state
    its length.  A published gap smaller than ``half_width`` is within the
    noise of a gap measured under this protocol (the papers print one run, so their own noise is
    unknown; ours on these seeds stands for it): no ratio, ``note`` says so (a ratio over a
    published -0.10 says nothing)."""
    if not published_gap or not math.isfinite(gap):
        return None
    basis, ours, theirs = "absolute", 1.0, 1.0
    if relative_to is not None:
        our_worse, their_worse = relative_to
        if not our_worse or not their_worse:
            return _no_ratio("no ratio: a relative gap needs both worse cells")
        basis, ours, theirs = "relative", abs(our_worse), abs(their_worse)
    elif lengths is not None:
        our_length, their_length = lengths
        if not their_length:
            return _no_ratio("no ratio: the paper does not state its runs' length, and rounds out of "
                             "different lengths are not one unit")
        if not our_length:
            return _no_ratio("no ratio: the runs' length is not known")
        basis, ours, theirs = "run length", float(our_length), float(their_length)
    # the noise test in our units: the published gap as it would read on our runs
    if abs(published_gap / theirs * ours) < half_width:
        return _no_ratio(f"no ratio: the paper's gap {published_gap:+.2f} is within the 95 % half-width "
                         f"{half_width:.2f} of a gap on these seeds"
                         + (f" (its gap scaled to {ours:g} rounds: {published_gap / theirs * ours:+.2f})"
                            if basis == "run length" and ours != theirs else ""))
    scale = (published_gap / theirs) * ours
    ends = sorted(((gap - half_width) / scale, (gap + half_width) / scale))
    return {"ratio": _round(gap / scale), "interval": [_round(ends[0]), _round(ends[1])], "basis": basis,
            "note": None}


def _no_ratio(note: str) -> dict:
    return {"ratio": None, "interval": None, "basis": None, "note": note}


def _state_fields(decision: Decision, seeds: Sequence[int]) -> dict:
    def named(state):
        return {"status": state.status, "collapsed": [seeds[i] for i in state.collapsed],
                "diverged": [seeds[i] for i in state.diverged], "divergence_rate": _round(state.divergence_rate),
                "n": state.seeds}
    return {side: named(decision.cells[key]) for side, key in (("better", "a"), ("worse", "b"))}


def per_seed(cell: CellValues) -> list[dict]:
    """Each seed of a cell with its value in the metric's units (None for a run that
    diverged) and its flag: ``diverged``, ``censored`` (never reached the target) or None."""
    seeds = sorted(set(cell.values) | set(cell.diverged))
    flags = {**{s: "censored" for s in cell.censored}, **{s: "diverged" for s in cell.diverged}}
    return [{"seed": s, "value": _round(cell.values.get(s)), "flag": flags.get(s)} for s in seeds]


def runs_on(configs) -> dict | None:
    """``{"dataset", "model"}`` the runs of a comparison train, when they all train one (below
    the paper scale: the stand-in, so a page can say what the paper's labels stand for)."""
    pairs = {(cfg.dataset, cfg.model) for cfg in configs}
    if len(pairs) != 1:
        return None
    dataset, model = pairs.pop()
    return {"dataset": dataset, "model": model}


def tuned_of(configs) -> list[dict]:
    """The hyper-parameters the comparison's runs took from a tuning record, and where each
    came from (:func:`flcore.config.presets.tuning_of`), once per method, field and value."""
    seen: dict[tuple, dict] = {}
    for cfg in configs:
        for item in tuning_of(cfg):
            seen.setdefault((item["method"], item["field"], item["value"]), item)
    return list(seen.values())


def compare(claim: Claim, comparison: Comparison, hi: CellValues, lo: CellValues, scale: str,
            planned: int = MIN_OWN_SEEDS) -> dict:
    """The verdict of one comparison from its two cells' values (module docstring); the
    fields of ``flcore claims --json``'s comparisons.  ``planned``: the seeds it planned."""
    metric = METRICS.get(claim.metric)
    margin, margin_reason = margin_of(claim, comparison, scale)
    out: dict[str, Any] = {
        "cells": {"better": comparison.better, "worse": comparison.worse},
        "published": {"better": comparison.published_better, "worse": comparison.published_worse,
                      "gap": _round(comparison.published_gap)},
        "seeds": [], "better": None, "worse": None, "gap": None, "sd": None, "sd_from": None, "df": None,
        "threshold": None, "mde": None, "units": metric.unit if metric else None, "verdict": "not_run",
        "margin": _round(margin), "margin_reason": margin_reason, "interval_90": None, "interval_95": None,
        "test": None, "p": None, "p_tost": None, "p_holm": None, "q": None, "needs": None, "size": None,
        "censored": None, "settles_at": None, "reason": hi.reason or lo.reason or None,
        "run_ids": {"better": sorted(set(hi.run_ids.values())), "worse": sorted(set(lo.run_ids.values()))},
        "cell_stats": None, "cell_states": None,
        "left_out": {"better": sorted(hi.diverged), "worse": sorted(lo.diverged)},
        "note": None, "runs_on": runs_on(hi.configs + lo.configs),
        "per_seed": {"better": per_seed(hi), "worse": per_seed(lo)},
        "tuned": tuned_of(hi.configs + lo.configs),
    }
    if hi.configs and lo.configs:
        reason = untestable_reason(claim, comparison, hi.configs + lo.configs, scale)
    else:  # not run at this scale: a need the stand-in cannot offer still decides it
        reason = stand_in_needs(claim, scale)
    if reason:
        out.update(verdict="not_testable", reason=reason)
        return out
    has = {side: bool(cell.values or cell.diverged) for side, cell in (("better", hi), ("worse", lo))}
    if not all(has.values()):
        return out
    seeds = sorted((set(hi.values) | set(hi.diverged)) & (set(lo.values) | set(lo.diverged)))
    if not seeds:
        out["reason"] = "the two cells share no seed"
        return out
    shared = [s for s in seeds if s in hi.values and s in lo.values]
    if metric.by_construction:
        gap = _mean(hi.values[s] - lo.values[s] for s in shared)
        out.update(seeds=shared, gap=_round(gap), verdict="by_construction" if claim.sign * gap > 0 else "fails",
                   reason="follows from the methods' definitions: not evidence")
        return out
    dataset = hi.configs[0].dataset
    chance = chance_accuracy(dataset) if metric.accuracy else None
    learned = None
    if metric.flatness:  # a flatness comparison asks whether its models learned, on their accuracies
        learned = {side: cell_state([cell.accuracy.get(s) for s in seeds], chance_accuracy(dataset),
                                    learn_margin_of(dataset), [s in cell.diverged for s in seeds])
                   for side, cell in (("better", hi), ("worse", lo))}
    decision = decide_comparison(
        [hi.values.get(s) for s in seeds], [lo.values.get(s) for s in seeds], better=claim.direction,
        chance=chance, margin=margin, resolution=resolution_of(claim.metric, hi.configs[0]),
        censored_a=[s in hi.censored for s in seeds], censored_b=[s in lo.censored for s in seeds],
        diverged_a=[s in hi.diverged for s in seeds], diverged_b=[s in lo.diverged for s in seeds],
        planned=planned, learn_margin=learn_margin_of(dataset),
        names=(cell_text(comparison.better), cell_text(comparison.worse)))
    if learned and any(state.status == "at_chance" for state in learned.values()):
        sleeping = [side for side, state in learned.items() if state.status == "at_chance"]
        decision.verdict = "at_chance"
        decision.reason = (f"the {' and '.join(sleeping)} cell's models did not learn (most seeds' accuracy below "
                           f"chance + {learn_margin_of(dataset):g}): the flatness of a model that learned nothing "
                           "ranks nothing, either way")
    ranked = {"better": sorted(seeds[i] for i in (*decision.cells["a"].collapsed, *decision.cells["a"].diverged)),
              "worse": sorted(seeds[i] for i in (*decision.cells["b"].collapsed, *decision.cells["b"].diverged))}
    ranked["better"] = sorted(set(ranked["better"]) | {s for s in seeds if s in hi.censored})
    ranked["worse"] = sorted(set(ranked["worse"]) | {s for s in seeds if s in lo.censored})
    used = [s for s in shared if s not in ranked["better"] and s not in ranked["worse"]] \
        if decision.test == "sign" else shared
    out.update(
        seeds=used, verdict=decision.verdict, reason=decision.reason or None, gap=_round(decision.gap),
        better=_round(_mean(hi.values[s] for s in used)) if used else None,
        worse=_round(_mean(lo.values[s] for s in used)) if used else None,
        run_ids={"better": [hi.run_ids[s] for s in seeds if s in hi.run_ids],
                 "worse": [lo.run_ids[s] for s in seeds if s in lo.run_ids]},
        cell_stats={"better": _cell_stats([hi.values[s] for s in used]),
                    "worse": _cell_stats([lo.values[s] for s in used])} if used else None,
        cell_states=_state_fields(decision, seeds), test=decision.test, p=_round(decision.p, 6),
        left_out={side: [s for s in seeds if s not in used and s in (hi if side == "better" else lo).run_ids]
                  for side in ("better", "worse")},
        censored=ranked if decision.test == "sign" else None, needs=decision.needs)
    for side, state in (out["cell_states"] or {}).items():  # a seed at chance in a cell that learned
        for row in out["per_seed"][side]:
            if row["seed"] in state["collapsed"] and row["flag"] is None:
                row["flag"] = "collapsed"
    if decision.verdict == "inconclusive" and decision.needs is not None and decision.needs > len(seeds):
        out["reason"] = f"needs about {decision.needs} seeds to find a difference of the margin four times in five"
    left = [f"{cell_text(getattr(comparison, side))}: seeds {', '.join(str(s) for s in ranked[side])}"
            for side in ("better", "worse") if ranked[side]]
    if left and decision.test == "sign":
        out["note"] = f"ranked worst (diverged, collapsed or censored): {'; '.join(left)}"
    if decision.test == "paired t":
        half95 = (decision.interval_95[1] - decision.interval_95[0]) / 2
        out.update(sd=_round(decision.sd), sd_from="paired seeds" + (", floored at the resolution"
                                                                     if decision.sd_floored else ""),
                   df=decision.df, threshold=_round(half95), mde=_round(decision.mde),
                   interval_90=[_round(v) for v in decision.interval_90],
                   interval_95=[_round(v) for v in decision.interval_95], p_tost=_round(decision.p_tost, 6),
                   # our gap over the paper's only where both are in the same units: the paper's data
                   size=size_of(decision.gap, half95, comparison.published_gap,
                                (_mean(lo.values[s] for s in used), comparison.published_worse)
                                if metric.flatness else None,
                                (hi.configs[0].rounds, claim.published_rounds) if metric.in_rounds else None)
                   if scale == "paper" else None)
        if claim.metric == "accuracy":
            out.update(_settling(claim, hi, lo, used, margin))
    out["verdict_text"] = decision.text if decision.verdict == out["verdict"] else VERDICT_TEXT[out["verdict"]]
    return unsettled(out, scale)


def _settling(claim: Claim, hi: CellValues, lo: CellValues, seeds: Sequence[int], margin: float | None) -> dict:
    """``settles_at``, the protocol's ``rounds`` and the ``trajectory`` (gap, 95 % interval and
    paired verdict per evaluated round) of an accuracy comparison, from the runs' logged
    evaluations (:mod:`flcore.reproduction.settling`); nothing when a run's log is not there."""
    curves, raw = [], []
    for cell in (hi, lo):
        if not all(s in cell.runs for s in seeds):
            return {}
        total = int(cell.configs[0].rounds)
        try:
            raw.append({s: accuracy_curve(cell.runs[s].read_metrics()) for s in seeds})
        except StoreError as exc:
            return {"settles_reason": str(exc).splitlines()[0][:200]}
        curves.append({s: window_means(curve, total) for s, curve in raw[-1].items()})
    points = trajectory(curves[0], curves[1], claim.sign, margin)
    out = {"settles_at": settles_at(points), "rounds": int(hi.configs[0].rounds),
           "trajectory": [{"round": p["round"], "gap": _round(p["gap"], 3), "low": _round(p["low"], 3),
                           "high": _round(p["high"], 3), "verdict": p["verdict"]} for p in points]}
    if margin is not None:
        out["plateau"] = {side: _plateau_fields(cell_plateau(curve, int(cell.configs[0].rounds), margin))
                          for side, curve, cell in (("better", raw[0], hi), ("worse", raw[1], lo))}
    return out


def _plateau_fields(state: dict) -> dict:
    return {**state, "change": _round(state["change"], 3), "tolerance": _round(state["tolerance"], 3)}


#: Verdicts on final accuracy that a cell still climbing (or falling) cannot give.
ON_FINAL_ACCURACY = ("holds", "fails", "absent", "negligible")


def unsettled(result: dict, scale: str) -> dict:
    """``result`` (a comparison's fields) made *not settled* where a cell has not reached its
    plateau below the paper scale (:mod:`flcore.reproduction.plateau`): inconclusive, with the
    cells' changes as its reason.  At the paper scale the runs keep the paper's rounds."""
    plateau = result.get("plateau") or {}
    moving = [(side, state) for side, state in plateau.items() if state.get("reached") is False]
    if scale == "paper" or not moving or result["verdict"] not in ON_FINAL_ACCURACY:
        return result
    parts = [f"the {side} cell moved {state['change']:+.2f} points over the last fifth of the rounds"
             for side, state in moving]
    tolerance = moving[0][1]["tolerance"]
    result.update(verdict="inconclusive", verdict_text=NOT_SETTLED, settled_verdict=result["verdict"],
                  reason=f"not settled: {' and '.join(parts)} (a plateau moves less than {tolerance:g}); "
                         f"at the last round it read {VERDICT_TEXT[result['verdict']]}")
    return result
