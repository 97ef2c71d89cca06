"""The FedLESAM claims' metrics: rounds, communication cost and compute time to a target
accuracy, as ratios to FedAvg's run on the same setting and seed (:mod:`.results`), the
seconds per round of the timed runs and the backward passes per step.  Registered when the
paper's package is imported."""
from __future__ import annotations

from flcore.config import grad_evals_per_step
from flcore.papers.fedlesam.results import fedavg_dir_of, run_efficiency, timing
from flcore.papers.fedlesam.runs import lesam_run
from flcore.reproduction.artifacts import RunSpec
from flcore.reproduction.claims import never_reached, register_metric


def _efficiency(row: dict) -> dict | None:
    if row.get("target") is None or row.get("run_dir") is None:
        return None
    return run_efficiency(row["run_dir"], fedavg_dir_of(row), row["target"])


def _field(name: str):
    def fn(row: dict) -> float | None:
        values = _efficiency(row)
        return None if values is None or values.get(name) is None else float(values[name])
    return fn


#: A run that never reached its target: its rounds (counted at ``T + eval_every``,
#: :func:`~flcore.papers.fedlesam.results.run_efficiency`), and the cost and time ratios they
#: give, are censored.
_never_reached = never_reached(lambda row: _efficiency(row), lambda values: values["reached"])


def _seconds_per_round(row: dict) -> float | None:
    """The mean seconds of the run's training rounds; None for a run trained in a batch
    (its record is a share of a shared round, not its own time)."""
    t = timing(row["run_dir"]) if row.get("run_dir") else None
    return None if t is None or t["batch_runs"] != 1 else t["seconds_per_round"]


def _fedavg_companion(spec: RunSpec) -> list[RunSpec]:
    """FedAvg on the setting and seed of an efficiency cell: its ratios are to that run
    (:func:`flcore.papers.fedlesam.results.fedavg_dir_of`)."""
    labels = spec.labels
    return [lesam_run(labels["dataset"], "FedAvg", labels["split"], labels["population"], labels["seed"],
                      spec.config["scale"])]


def _backprops_per_step(row: dict) -> float:
    return float(grad_evals_per_step(row["method"]))


def _register_metrics() -> None:
    """The claims' metrics.  The times are read from the timed runs (:data:`TIMED_SPLITS`:
    trained alone); the claims' repeats of a timed run are its seeds, each trained again
    (flcore.reproduction.claims)."""

    register_metric("wallclock_seconds_per_round", _seconds_per_round, "seconds per round", timed=True)
    register_metric("backprops_per_step", _backprops_per_step, "backprops per step", by_construction=True)
    register_metric("lesam_rounds", _field("rounds"), "rounds", companions=_fedavg_companion,
                    censored=_never_reached, in_rounds=True)
    # a run that never reached the target spent at least its cost and time: a lower bound, censored
    register_metric("communication_cost_ratio", _field("cost_ratio"), "x FedAvg's communication cost",
                    companions=_fedavg_companion, censored=_never_reached)
    register_metric("compute_time_ratio", _field("compute_ratio"), "x FedAvg's computation time", timed=True,
                    companions=_fedavg_companion, censored=_never_reached)


_register_metrics()
