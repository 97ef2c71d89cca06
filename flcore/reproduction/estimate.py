"""How long the runs of a batch take to train on this machine, before they train.

Each group of the plan (:func:`flcore.executors.group_runs`) is priced at its runs'
remaining cost (:func:`flcore.planning.planner.run_cost`, from the rounds already in the
store) times this machine's rate for their model at the group's size
(:func:`flcore.reproduction.pricing.cost_rate`), plus their remaining evaluations at this
machine's measured seconds per evaluation where the probe measured them
(:class:`flcore.reproduction.budget.EvaluationCost`: a small run's 120 evaluations of the
test set are a fifth of a FedAvg run's time and do not scale with its gradients).  This
machine's rates are the benchmark rows scaled by its measured speed on a CPU
(:mod:`flcore.reproduction.calibration`), or the rows of its own kind on a GPU.  The
groups are then ordered longest first -- the executor's pool starts them in that order,
each on the worker free soonest, so the last minutes are not one long group alone -- and
the estimate is the last worker's finishing time
(:func:`flcore.reproduction.progress.finish_time`).  The same figure is printed before
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
from flcore.reproduction.budget import DeviceRates, EvaluationCost, load_device_rates
from flcore.reproduction.calibration import machine_rates
from flcore.reproduction.pricing import cost_rate, local_kind
from flcore.reproduction.progress import clock_text, finish_time


@dataclass(frozen=True)
class Rates:
    """The rates estimates use here, and one line saying where they come from."""

    rates: DeviceRates
    note: str
    evaluation: EvaluationCost | None = None  # None: the rows' rate covers the evaluations


def group_seconds(group: Sequence[RunSpec], overrides: Mapping[str, Any], done: Mapping[str, int],
                  rates: DeviceRates, evaluation: EvaluationCost | None = None) -> float:
    """Estimated seconds of one group: each run's remaining cost times the rate of its
    model at the group's size, plus its remaining evaluations priced by ``evaluation``
    (``done``: rounds already trained, by run id)."""
    total = 0.0
    for spec in group:
        cfg = spec.resolve(**overrides)
        rounds_done = done.get(cfg.run_id(), 0)
        total += run_cost(cfg, rounds_done) * cost_rate(rates, cfg, len(group))[0]
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
    found = machine_rates(store, rows, kind, workers, log=log, keep=keep)
    if found is None:
        return None
    rates, speed = found
    how = "kept in the store" if speed.cached else ("measured now" if keep else "measured now, not kept")
    return Rates(rates, f"{speed.reference} rows x {speed.factor:.2f}, this machine's speed, {how}",
                 speed.evaluation)
