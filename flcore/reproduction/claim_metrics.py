"""The claims' metrics (what a claim reads from a run) and the reference pairs.

A metric reads one value from a run's row of :func:`flcore.reproduction.runner.results_frame`
in its unit; papers register the metrics their claims read (:func:`register_metric`).  Its
*resolution* (:func:`resolution_of`) is the smallest step its values take -- one test sample
of an accuracy -- under which a spread of seeds is not resolved.  The *reference pairs*
(FedSAM - FedAvg at one seed each, set by the FedSAM paper) give a spread pages may show.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flcore.reproduction import runner
from flcore.reproduction.paired import pooled_sd

#: Seeds of the reference pairs.
SPREAD_SEEDS = (0, 1, 2)
#: Test samples of each data set's test split (the MNIST-1D stand-in's: a fifth of its samples).
_TEST_SAMPLES = {"cifar10": 10_000, "cifar100": 10_000, "fmnist": 10_000}


def resolution_of(metric: str, cfg) -> float:
    """The smallest step of ``metric``'s values on ``cfg``'s runs: for an accuracy in points,
    one test sample (``100 / test samples``: 0.05 points for MNIST-1D's 2,000); 0 for the
    others (their comparisons are read as they are)."""
    found = METRICS.get(metric)
    if found is None or not found.accuracy:
        return 0.0
    tests = _TEST_SAMPLES.get(cfg.dataset)
    if tests is None and cfg.num_samples:
        tests = int(cfg.num_samples * 0.2)
    return 100.0 / tests if tests else 0.0


@dataclass(frozen=True)
class Metric:
    """A claim's metric: ``function(row)`` reads it from one run's row of
    :func:`~flcore.reproduction.runner.results_frame` (None: missing), in ``unit``.

    ``accuracy``: a test accuracy in points, whose chance level is the data set's;
    ``by_construction``: fixed by the methods' definitions (read without runs);
    ``timed``: read from timed runs only (their round times are their own); ``seeded``:
    the claims on it train the seeds their comparisons plan (a metric that needs an
    analysis of each stored model may keep one seed: indicative only); ``companions``:
    ``spec -> [RunSpec]``, the runs the metric reads besides the cell's own (a ratio to
    FedAvg's run on the same setting and seed), trained with the claims' seeds;
    ``flatness``: it measures how flat the trained model is, which ranks nothing when a
    model did not learn; ``censored(row)``: whether the run's value stands for "never
    reached the target" (ranked worst, decided by a sign test); ``in_rounds``: its values
    count rounds of a run, so a gap is compared with the paper's as a share of each run's
    length (rounds out of 100 and out of 400 are not one unit)."""

    name: str
    function: Callable[[dict], float | None]
    unit: str
    accuracy: bool = False
    by_construction: bool = False
    timed: bool = False
    seeded: bool = True
    companions: Callable[[Any], list] | None = None
    flatness: bool = False
    censored: Callable[[dict], bool] | None = None
    in_rounds: bool = False

    def __call__(self, row: dict) -> float | None:
        return self.function(row)


def accuracy_points(row) -> float | None:
    """A run's test accuracy in points (the mean over the last 100 rounds' evaluations)."""
    value = row.get("mean_last_100")
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else 100.0 * float(value)


#: metric name -> :class:`Metric`.  Metrics that need an analysis of stored models register
#: here when their artifact exists (``import flcore`` registers them all).
METRICS: dict[str, Metric] = {"accuracy": Metric("accuracy", accuracy_points, "points", accuracy=True)}


def register_metric(name: str, function: Callable[[dict], float | None], unit: str, *, accuracy: bool = False,
                    by_construction: bool = False, timed: bool = False, seeded: bool = True,
                    companions: Callable[[Any], list] | None = None,
                    censored: Callable[[dict], bool] | None = None, flatness: bool = False,
                    in_rounds: bool = False) -> Metric:
    """Register ``function(row)`` as the claims' metric ``name`` (see :class:`Metric`)."""
    METRICS[name] = Metric(name, function, unit, accuracy=accuracy, by_construction=by_construction, timed=timed,
                           seeded=seeded, companions=companions, censored=censored, flatness=flatness,
                           in_rounds=in_rounds)
    return METRICS[name]


def never_reached(measure: Callable[[dict], Any], reached: Callable[[Any], bool]) -> Callable[[dict], bool]:
    """A metric's ``censored`` test for a cost toward a target (rounds, transmissions,
    bits...): a run whose ``measure(row)`` exists and says (``reached``) that the target was
    never reached holds a censored value, ranked worst by the claims' sign test."""

    def censored(row: dict) -> bool:
        value = measure(row)
        return value is not None and not reached(value)

    return censored


def metric_unit(name: str) -> str | None:
    return METRICS[name].unit if name in METRICS else None


# --------------------------------------------------------------------------- reference pairs

#: ``function(scale, seeds) -> [(RunSpec a, RunSpec b)]``: the reference pairs (the same
#: configuration but the method, at one seed), set by the paper that defines them.
_SPREAD_REFERENCE: list[Callable[[str, Sequence[int]], list]] = []


def set_spread_reference(function: Callable[[str, Sequence[int]], list]) -> None:
    """Name the reference pairs (FedSAM - FedAvg at one seed each) whose spread of differences
    pages may show (FedGloSS's Figure 7 tests a one-seed cell against chance with it); no
    claim's verdict borrows it.  The FedSAM paper's package sets them."""
    _SPREAD_REFERENCE[:] = [function]


def reference_pairs(scale: str, seeds: Sequence[int] = SPREAD_SEEDS) -> list[tuple]:
    """The reference pairs ``(a, b)`` of ``scale``: the difference ``a - b`` is measured per seed."""
    return list(_SPREAD_REFERENCE[0](scale, seeds)) if _SPREAD_REFERENCE else []


def spread_specs(scale: str, seeds: Sequence[int] = SPREAD_SEEDS):
    """The runs of the reference pairs (module docstring); none when no paper has set them."""
    out, seen = [], set()
    for a, b in reference_pairs(scale, seeds):
        for spec in (a, b):
            if id(spec) not in seen:
                seen.add(id(spec))
                out.append(spec)
    return out


def reference_spread(scale: str, store=None, metric: str = "accuracy") -> dict | None:
    """``{"sd", "df", "pairs", "runs"}``: the pooled standard deviation (and its degrees of
    freedom) of the per-seed differences of the reference pairs' ``metric``, pooled over
    the pairs' configurations (one group per configuration, its seeds the values; a
    configuration whose differences are all equal is left out); None when no configuration
    has two seeds with differing values."""

    if metric not in METRICS or METRICS[metric].by_construction:
        return None
    pairs = reference_pairs(scale)
    if not pairs:
        return None
    frame_a = runner.results_frame([a for a, _ in pairs], store).to_dict("records")
    frame_b = runner.results_frame([b for _, b in pairs], store).to_dict("records")
    groups: dict[tuple, list[float]] = {}
    for (a, _), row_a, row_b in zip(pairs, frame_a, frame_b):
        if row_a["status"] != "finished" or row_b["status"] != "finished":
            continue
        va, vb = METRICS[metric].function(row_a), METRICS[metric].function(row_b)
        if va is None or vb is None or not math.isfinite(va - vb):
            continue
        key = tuple(sorted((k, repr(v)) for k, v in a.labels.items() if k != "seed"))
        groups.setdefault(key, []).append(float(va - vb))
    # a configuration whose differences are all equal (the metric cannot vary there: neither
    # run reaches a target, both stay at one count) says nothing about the spread
    used = [g for g in groups.values() if len(g) >= 2 and max(g) - min(g) > 0]
    pooled = pooled_sd(used)
    if pooled is None:
        return None
    return {"sd": pooled[0], "df": pooled[1], "pairs": len(used), "runs": 2 * sum(len(g) for g in used)}
