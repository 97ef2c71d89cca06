"""How long the runs of a batch take to train on this machine, before they train.

Each group of the plan (:func:`flcore.executors.group_runs`) is priced at its runs'
remaining cost (:func:`flcore.planning.planner.run_cost`, from the rounds already in the
store; with its evaluations on a released data set,
:func:`flcore.reproduction.pricing.evaluation_cost`) times this machine's rate for their
model at the group's size
(:func:`flcore.reproduction.pricing.cost_rate`), plus their remaining evaluations at this
machine's measured seconds per evaluation where the probe measured them
(:class:`flcore.reproduction.budget.EvaluationCost`: a small run's 120 evaluations of the
test set are a fifth of a FedAvg run's time and do not scale with its gradients).  This
machine's rates are the benchmark rows scaled by its measured speed on a CPU
(:mod:`flcore.reproduction.calibration`), or the rows of its own kind on a GPU.  The
groups are then ordered longest first -- the executor's pool starts them in that order,
each on the worker free soonest, so the last minutes are not one long group alone -- and
the estimate is the last worker's finishing time
(:func:`flcore.reproduction.progress.finish_time`).

The book's runs cost more per unit of cost than the probe and the sweeps the rows come
from (methods with more vector work per step, groups of thirty runs, runs alone, their
records), so the estimate is last scaled by the *book correction*: the measured over the
estimated training of the latest book built on the rows' machine with the same rows and
probe (``benchmarks/results/training_estimate.jsonl``, a ``paper: book`` row whose
``calibration`` matches; 1 when none does).  A machine's probe factor then carries the
book's time from the rows' machine to this one.  The same figure is printed before
training starts, by ``--plan`` (nothing trains) and as the first "left" of the live line
(:class:`flcore.reproduction.progress.TrainingProgress`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flcore.planning.planner import run_cost
from flcore.planning.spec import RunSpec
from flcore.reproduction.budget import DeviceRates, EvaluationCost, load_device_rates, read_rows
from flcore.reproduction.calibration import PROBE_VERSION, machine_rates, reference_probe, reference_rates
from flcore.reproduction.pricing import cost_rate, evaluation_cost, local_kind
from flcore.reproduction.progress import clock_text, finish_time


@dataclass(frozen=True)
class Rates:
    """The rates estimates use here, and one line saying where they come from;
    ``correction``: the book correction (module docstring) and ``calibration``: what it is
    valid for (the reference rows' sources and the probe's version)."""

    rates: DeviceRates
    note: str
    evaluation: EvaluationCost | None = None  # None: the rows' rate covers the evaluations
    correction: float = 1.0
    calibration: str = ""

#: A book correction outside these bounds is a broken record, not a machine.
CORRECTION_BOUNDS = (0.5, 2.0)


def book_correction(results_dir: str | Path, calibration: str) -> float:
    """The book correction for ``calibration`` (module docstring) from the rows of
    ``results_dir/training_estimate.jsonl``: the latest ``paper: book`` row of the small
    scale recorded under the same calibration; 1 when there is none."""

    path = Path(results_dir) / "training_estimate.jsonl"
    rows = read_rows(path) if path.is_file() else []
    found = [r for r in rows if r.get("paper") == "book" and r.get("scale") == "small"
             and r.get("calibration") == calibration and r.get("estimate_s") and r.get("measured_s")]
    if not found:
        return 1.0
    last = found[-1]
    raw = float(last["estimate_s"]) / float(last.get("correction") or 1.0)
    return min(max(float(last["measured_s"]) / raw, CORRECTION_BOUNDS[0]), CORRECTION_BOUNDS[1])


def group_seconds(group: Sequence[RunSpec], overrides: Mapping[str, Any], done: Mapping[str, int],
                  rates: DeviceRates, evaluation: EvaluationCost | None = None) -> float:
    """Estimated seconds of one group: each run's remaining cost times the rate of its
    model at the group's size, plus its remaining evaluations priced by ``evaluation``
    (``done``: rounds already trained, by run id)."""
    total = 0.0
    for spec in group:
        cfg = spec.resolve(**overrides)
        rounds_done = done.get(cfg.run_id(), 0)
        total += (run_cost(cfg, rounds_done) + evaluation_cost(cfg, rounds_done)) * cost_rate(rates, cfg, len(group))[0]
        if evaluation is not None:
            total += evaluation.seconds(cfg, rounds_done)
    return total


def longest_first(groups: list, seconds: list[float]) -> tuple[list, list[float]]:
    """``groups`` and their ``seconds``, longest first (a stable sort: ties keep the plan's order)."""
    order = sorted(range(len(groups)), key=lambda i: -seconds[i])
    return [groups[i] for i in order], [seconds[i] for i in order]


def wall_seconds(seconds: Sequence[float], workers: int) -> float:
    """Wall time of groups of ``seconds`` started in that order on ``workers`` workers."""
    return finish_time(seconds, workers)


def estimate_line(runs: int, groups: int, workers: int, seconds: float | None, note: str) -> str:
    """``"training 404 runs in 175 groups on 2 workers: about 31:20 (estimate; ...)"``."""
    head = f"training {runs} run(s) in {groups} group(s) on {workers} worker(s): "
    if seconds is None:
        return head + f"no estimate ({note})"
    return head + f"about {clock_text(seconds)} (estimate; {note})"


def this_machine(root: str | Path, store: str | Path, device: str, workers: int, log=None,
                 keep: bool = True) -> Rates | None:
    """The rates of this machine (module docstring), measuring its speed once per store on a
    CPU (``keep``: keep the measurement in the store); None when nothing calibrates it (no
    CPU rows, or a GPU without rows of its own)."""
    rows = load_device_rates(Path(root) / "benchmarks" / "results")
    kind, device_type = local_kind(device)
    if device_type != "cpu":
        if kind in rows and rows[kind].models:
            return Rates(rows[kind], f"benchmark rows of {kind}")
        return None
    results = Path(root) / "benchmarks" / "results"
    probe_there = reference_probe(results, workers)
    found = machine_rates(store, rows, kind, workers, log=log, keep=keep, reference_s=probe_there)
    if found is None:
        return None
    rates, speed = found
    how = "kept in the store" if speed.cached else ("measured now" if keep else "measured now, not kept")
    # the book's runs are priced from the sweep and round rows: a paper-protocol row of
    # another model (paper_round_time.jsonl) leaves the book correction valid
    sources = [s for s in reference_rates(rows, kind).sources if not s.startswith("paper_round_time")]
    key = "; ".join(sources) + f"; probe {PROBE_VERSION}" + (
        "" if probe_there is None else f" against {probe_there:.1f} s")
    correction = book_correction(results, key)
    fixed = "" if correction == 1.0 else f" x {correction:.2f}, the last book's measured over its estimate"
    return Rates(rates, f"{speed.reference} rows x {speed.factor:.2f}, this machine's speed, {how}{fixed}",
                 speed.evaluation, correction, key)
