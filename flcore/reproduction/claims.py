"""The papers' headline claims as checkable comparisons, and their verdicts on our runs.

Each paper's claims are data (``claims/<paper>.yaml``): the claim in words, the sentence of
the paper that makes it (``quote``), the artifacts whose runs check it, the metric and
which direction is better, and one or more *comparisons* between two cells of a
published table -- ``better`` should beat ``worse`` -- with the numbers the paper prints
for both.  A cell is a set of run labels (``dataset``, ``algorithm``, ``alpha``, ...) as the
artifact's :class:`~flcore.reproduction.artifacts.RunSpec` s carry them, so a cell names the
same runs at every scale (MNIST-1D stands in for CIFAR below ``paper``).

**Verdict of a comparison** (nothing is trained here: the runs are read from the store).
The gap is ``ours(better) - ours(worse)`` (negated when lower is better).  With n_b and
n_w seeds in the two cells and sigma the seed-to-seed standard deviation of one run's
metric, the gap's standard error is ``sigma * sqrt(1/n_b + 1/n_w)`` and the comparison

- *holds* when the gap exceeds twice that,
- *fails* when it is below minus twice that,
- is a *tie* in between (the two cells cannot be told apart from seed noise).

sigma is *measured*: from the cells' own seeds when both have at least two, otherwise
from the reference spread group (:func:`spread_specs`: FedAvg and FedSAM at the extreme
alphas of the FedSAM CIFAR-10 protocol, three seeds each, pooled over the four
configurations) at the same scale, for the claim's own metric (a claim on lambda_max is
judged against the spread of lambda_max over those runs, not of accuracy).  A metric may
instead register its own ``sigma(row)`` (:data:`METRIC_SIGMAS`: 0 for a count fixed by the
method, a measured standard error for a time); a cell of one seed then uses it.  When
none exists the comparison is *not checked*.

**Verdict of a claim**: *fails* if any checked comparison fails, *holds* if all hold,
*tie* otherwise; *not checked* when no comparison could be checked at this scale (the
artifact has no notebook yet, the scale does not run that cell, its runs are not in the
store, or the metric is not computed yet).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from flcore.config import chance_accuracy

VERDICTS = ("holds", "tie", "fails", "not_checked")
#: The comparison is decided at this many standard errors of the gap.
Z_THRESHOLD = 2.0
SPREAD_SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class Comparison:
    """``better`` beats ``worse`` (cells: run labels); the paper's numbers for both."""

    better: dict[str, Any]
    worse: dict[str, Any]
    published_better: float
    published_worse: float

    @property
    def published_gap(self) -> float:
        return self.published_better - self.published_worse


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    text: str
    quote: str
    artifacts: tuple[str, ...]
    source: str
    metric: str
    direction: str  # "higher" | "lower"
    comparisons: tuple[Comparison, ...]

    @property
    def sign(self) -> int:
        return 1 if self.direction == "higher" else -1


def _parse(paper_file: Path) -> list[Claim]:
    data = yaml.safe_load(paper_file.read_text())
    paper = data["paper"]
    out = []
    for raw in data["claims"]:
        comparisons = tuple(Comparison(dict(c["better"]), dict(c["worse"]), float(c["published"]["better"]),
                                       float(c["published"]["worse"])) for c in raw["comparisons"])
        direction = raw.get("direction", "higher")
        if direction not in ("higher", "lower"):
            raise ValueError(f"{paper_file.name}: claim {raw['id']}: direction must be higher or lower")
        out.append(Claim(id=raw["id"], paper=paper, text=raw["text"], quote=raw.get("quote", ""),
                         artifacts=tuple(raw["artifacts"]), source=raw.get("source", ""),
                         metric=raw.get("metric", "accuracy"), direction=direction, comparisons=comparisons))
    return out


def all_claims() -> tuple[Claim, ...]:
    """Every claim of the registered papers (``<paper folder>/claims.yaml``), in their order."""
    from flcore.reproduction.papers import paper_ids

    return _all_claims(paper_ids())


@lru_cache(maxsize=4)
def _all_claims(papers: tuple[str, ...]) -> tuple[Claim, ...]:
    from flcore.reproduction.papers import get_paper

    claims: list[Claim] = []
    for paper in papers:
        path = get_paper(paper).folder / "claims.yaml"
        if path.is_file():
            claims.extend(_parse(path))
    ids = [c.id for c in claims]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"claim ids used twice: {', '.join(duplicates)}")
    return tuple(claims)


def get_claim(claim_id: str) -> Claim:
    for claim in all_claims():
        if claim.id == claim_id:
            return claim
    raise KeyError(f"unknown claim {claim_id!r}")


def claims_by_artifact() -> dict[str, list[Claim]]:
    out: dict[str, list[Claim]] = {}
    for claim in all_claims():
        for artifact_id in claim.artifacts:
            out.setdefault(artifact_id, []).append(claim)
    return out


# --------------------------------------------------------------------------- metrics of a cell

def _accuracy(row) -> float | None:
    value = row.get("mean_last_100")
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else 100.0 * float(value)


#: metric name -> value of one finished run's row of :func:`~flcore.reproduction.runner.results_frame`.
#: Metrics that need an analysis of stored models register here when their artifact exists.
METRICS: dict[str, Callable[[dict], float | None]] = {"accuracy": _accuracy}


#: metric name -> ``sigma(row)``: the standard error of one run's value of a metric that
#: is not an accuracy (a count fixed by the method: 0; a time: from its rounds' spread),
#: used for a cell of one seed instead of the accuracies' seed spread.
METRIC_SIGMAS: dict[str, Callable[[dict], float | None]] = {}


#: metric name -> the metric whose seed spread on the reference runs decides its ties, for
#: a metric the reference runs cannot give (they keep no client models) but that shares
#: its unit with one they can (a client model's lambda_max -> the global model's).
SPREAD_METRICS: dict[str, str] = {}


def register_metric(name: str, function: Callable[[dict], float | None],
                    sigma: Callable[[dict], float | None] | None = None,
                    spread_from: str | None = None) -> None:
    """``function(row)`` as metric ``name``; ``sigma``: see :data:`METRIC_SIGMAS`;
    ``spread_from``: see :data:`SPREAD_METRICS`."""
    METRICS[name] = function
    if sigma is not None:
        METRIC_SIGMAS[name] = sigma
    if spread_from is not None:
        SPREAD_METRICS[name] = spread_from


# --------------------------------------------------------------------------- seed spread

#: ``function(scale, seeds) -> [RunSpec]``: the reference runs of the seed spread, set by
#: the paper that defines them (:func:`set_spread_reference`).
_SPREAD_REFERENCE: list[Callable[[str, Sequence[int]], list]] = []


def set_spread_reference(function: Callable[[str, Sequence[int]], list]) -> None:
    """Name the reference runs whose seed-to-seed spread decides ties (module docstring);
    the FedSAM paper's package sets them."""
    _SPREAD_REFERENCE[:] = [function]


def spread_specs(scale: str, seeds: Sequence[int] = SPREAD_SEEDS):
    """The reference runs whose seed-to-seed spread decides ties (module docstring); none
    when no paper has set them."""
    return list(_SPREAD_REFERENCE[0](scale, seeds)) if _SPREAD_REFERENCE else []


def seed_spread(scale: str, store=None, metric: str = "accuracy") -> dict | None:
    """``{"sigma", "configurations", "runs"}``: the pooled standard deviation over seeds of
    the reference runs' ``metric`` (accuracy in points; another metric in its own unit, so
    a claim on lambda_max is judged against the seed-to-seed spread of lambda_max), or None
    when fewer than two seeds give a value.  For a metric other than accuracy,
    configurations where it does not vary (FedAvg's own speed-up is 1 by definition) are left out."""

    from flcore.reproduction.runner import results_frame

    if metric not in METRICS:
        return None
    frame = results_frame(spread_specs(scale), store)
    frame = frame[frame["status"] == "finished"]
    variances, runs = [], 0
    for _, group in frame.groupby(["algorithm", "alpha"]):
        values = [v for v in (METRICS[metric](row) for row in group.to_dict("records")) if v is not None]
        if metric != "accuracy":
            values = [float(v) for v in values if math.isfinite(v)]
            if len(set(values)) <= 1:
                continue
        if len(values) >= 2:
            mean = sum(values) / len(values)
            variances.append(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
            runs += len(values)
    if not variances:
        return None
    return {"sigma": math.sqrt(sum(variances) / len(variances)), "configurations": len(variances), "runs": runs}


# --------------------------------------------------------------------------- evaluation

def _matches(labels: dict, cell: dict) -> bool:
    for key, wanted in cell.items():
        have = labels.get(key)
        if isinstance(wanted, (int, float)) and not isinstance(wanted, bool) and isinstance(have, (int, float)):
            if not math.isclose(float(have), float(wanted), rel_tol=1e-9, abs_tol=1e-12):
                return False
        elif have != wanted:
            return False
    return True


@dataclass
class CellValue:
    value: float | None
    seeds: int
    std: float | None
    reason: str = ""


def _cell_value(claim: Claim, cell: dict, scale: str, seeds: Sequence[int], store) -> CellValue:

    from flcore.reproduction.artifacts import artifact_ids, get_artifact
    from flcore.reproduction.runner import results_frame

    known = set(artifact_ids())
    registered = [a for a in claim.artifacts if a in known]
    if not registered:
        return CellValue(None, 0, None, "its artifact has no notebook yet")
    specs = []
    for artifact_id in registered:
        specs = [s for s in get_artifact(artifact_id).runs(scale, seeds) if _matches(s.labels, cell)]
        if specs:
            break
    if not specs:
        return CellValue(None, 0, None, f"the {scale} scale does not run this cell")
    if claim.metric not in METRICS:
        return CellValue(None, 0, None, f"the metric {claim.metric} is not computed yet")
    frame = results_frame(specs, store)
    capped = capped_reason(frame)
    if capped is not None:
        return CellValue(None, 0, None, capped)
    statuses = set(frame["status"])
    if not statuses <= {"finished", "diverged"}:
        return CellValue(None, 0, None, "its runs are not in the store" if statuses - {"pending"}
                         else "a method is not implemented yet")
    values = []
    for spec, row in zip(specs, frame.to_dict("records")):
        if row["status"] == "diverged":
            values.append(chance_accuracy(spec.config.get("dataset", "")) if claim.metric == "accuracy" else None)
        else:
            values.append(METRICS[claim.metric](row))
    if any(v is None for v in values):
        return CellValue(None, 0, None, f"the metric {claim.metric} is missing from a run")
    mean = sum(values) / len(values)
    std = (math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else None)
    if std is None and claim.metric in METRIC_SIGMAS:
        std = METRIC_SIGMAS[claim.metric](frame.to_dict("records")[0])
    return CellValue(mean, len(values), std)


# --------------------------------------------------------------------------- capped previews

#: ``"500 of 10000 rounds"``: the reason a comparison on runs stopped at a ``max_rounds``
#: cap is not checked.
CAPPED_REASON = re.compile(r"\d+ of \d+ rounds")


def capped_reason(frame) -> str | None:
    """``"N of M rounds"`` when runs of a cell stopped at a ``max_rounds`` cap (status
    ``capped``: a preview, N the fewest rounds any of them has done, M their protocol's):
    such runs never decide a verdict, whatever their numbers.  None otherwise."""
    capped = frame[frame["status"] == "capped"]
    if capped.empty:
        return None
    return f"{int(capped['rounds_done'].min())} of {int(capped['rounds'].max())} rounds"


def is_capped_reason(reason: str | None) -> bool:
    """Whether a claim's ``reason`` is :func:`capped_reason`'s (the verdict then reads
    "not checked: N of M rounds")."""
    return bool(reason) and any(CAPPED_REASON.fullmatch(part) for part in reason.split("; "))


def _decide(signed_gap: float, threshold: float) -> str:
    if signed_gap > threshold:
        return "holds"
    if signed_gap < -threshold:
        return "fails"
    return "tie"


def evaluate(claim: Claim, scale: str, store=None, seeds: Sequence[int] = (0,), spread: dict | None = None) -> dict:
    """The claim's verdict at ``scale`` from the runs in ``store`` (module docstring).

    Returns the fields of ``flcore claims --json``: ``id``, ``paper``, ``text``, ``artifacts``,
    ``verdict``, ``published`` and ``ours`` (one entry per comparison), plus ``metric``,
    ``direction``, ``source``, ``scale``, ``sigma`` and ``reason`` (why not checked).
    """
    published, ours, reasons = [], [], []
    for comparison in claim.comparisons:
        published.append({"better": comparison.published_better, "worse": comparison.published_worse,
                          "gap": round(comparison.published_gap, 4), "cells": {"better": comparison.better,
                                                                              "worse": comparison.worse}})
        hi = _cell_value(claim, comparison.better, scale, seeds, store)
        lo = _cell_value(claim, comparison.worse, scale, seeds, store)
        if hi.value is None or lo.value is None:
            reasons.append(hi.reason or lo.reason)
            ours.append(None)
            continue
        if hi.std is not None and lo.std is not None:
            sigma, sigma_from = math.sqrt((hi.std ** 2 + lo.std ** 2) / 2), "cells"
        elif spread is not None:
            sigma, sigma_from = spread["sigma"], "reference"
        else:
            reasons.append("the seed-to-seed spread is not measured at this scale")
            ours.append(None)
            continue
        threshold = Z_THRESHOLD * sigma * math.sqrt(1 / hi.seeds + 1 / lo.seeds)
        gap = hi.value - lo.value
        ours.append({"better": round(hi.value, 4), "worse": round(lo.value, 4), "gap": round(gap, 4),
                     "threshold": round(threshold, 4), "seeds": [hi.seeds, lo.seeds], "sigma_from": sigma_from,
                     "verdict": _decide(claim.sign * gap, threshold)})
    decided = [o["verdict"] for o in ours if o is not None]
    if not decided:
        verdict = "not_checked"
    elif "fails" in decided:
        verdict = "fails"
    elif all(v == "holds" for v in decided):
        verdict = "holds"
    else:
        verdict = "tie"
    reason = "; ".join(dict.fromkeys(r for r in reasons if r)) or None
    return {"id": claim.id, "paper": claim.paper, "text": claim.text, "artifacts": list(claim.artifacts),
            "verdict": verdict, "published": published, "ours": ours, "metric": claim.metric,
            "direction": claim.direction, "source": claim.source, "scale": scale,
            "sigma": None if spread is None else round(spread["sigma"], 4), "reason": reason}


def evaluate_claims(scale: str, store=None, seeds: Sequence[int] = (0,), papers: Iterable[str] | None = None,
                    artifact: str | None = None) -> list[dict]:
    """:func:`evaluate` for every claim (of ``papers``, or checked by ``artifact``)."""
    spreads: dict[str, dict | None] = {}
    wanted = set(papers) if papers else None
    out = []
    for claim in all_claims():
        if wanted is not None and claim.paper not in wanted:
            continue
        if artifact is not None and artifact not in claim.artifacts:
            continue
        if claim.metric not in spreads:
            spreads[claim.metric] = seed_spread(scale, store, SPREAD_METRICS.get(claim.metric, claim.metric))
        out.append(evaluate(claim, scale, store, seeds, spreads[claim.metric]))
    return out
