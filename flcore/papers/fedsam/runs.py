"""The FedSAM paper's artifacts (Caldarola, Caputo, Ciccone, ECCV 2022) as data.

Run group ``sam-main`` of the paper's ``inventory.yaml``: CIFAR-10 (alpha 0, 0.05, 100) and CIFAR-100
(alpha 0, 0.5, 1000), 5/10/20 clients per round, FedAvg with E = 1 and E = 2, FedSAM,
FedASAM and the +SWA versions of FedAvg, FedSAM and FedASAM.  Table 2 reads all of it,
Fig. 11 the alpha = 0, 5-client runs, Fig. 3 the CIFAR-100 FedAvg runs (plus one run
ten times longer at alpha = 0, run group ``sam-long``).

Scales (design guide section 8):

- ``paper``: CIFAR-10/100 as published, every clients-per-round column;
- ``small``: both CIFAR settings map to MNIST-1D (the ``small`` default dataset), the
  alphas are kept as given (MNIST-1D has 10 classes, like CIFAR-10), 5 clients per round
  only (the paper's main setting; the 10/20-client columns would multiply the CPU time
  by 7) -- at alpha = 0 both datasets name the same run, which is computed once;
- ``smoke``: the same grid on the tiny MNIST-1D federation, one alpha per dataset.

Hyper-parameters are never set here: they come from the scale preset and the method's
paper preset (:mod:`flcore.config.presets`), so Tables 10-12 are rendered from the
same values the runs use.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from flcore.config.scales import scale_defaults
from flcore.reproduction.artifacts import RunSpec, no_runs, register_artifacts
from flcore.reproduction.claims import set_spread_reference
from flcore.reproduction.stand_in import stand_in_for

PAPER = "fedsam"
DATASETS = ("CIFAR-100", "CIFAR-10")
#: Table 2's heterogeneity levels (Dirichlet alpha; 0 = one class per client).
ALPHAS = {"CIFAR-10": (0.0, 0.05, 100.0), "CIFAR-100": (0.0, 0.5, 1000.0)}
#: Alphas run at the smoke scale (the extremes).
SMOKE_ALPHAS = {"CIFAR-10": (0.0, 100.0), "CIFAR-100": (0.0, 1000.0)}
#: Clients per round of Table 2's columns, by scale.
CLIENTS_PER_ROUND = {"smoke": (5,), "small": (5,), "paper": (5, 10, 20)}
#: Fig. 3c: the alpha = 0 run is trained about ten times longer than the others.
LONG_RUN_FACTOR = {"smoke": 2, "small": 10, "paper": 10}


@dataclass(frozen=True)
class Algorithm:
    """A row of Table 2: a registered method name plus config overrides."""

    label: str
    method: str
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def swa(self) -> bool:
        return self.method.endswith("+swa")


#: Table 2's rows, in the paper's order.
ALGORITHMS = (
    Algorithm("FedAvg E=1", "fedavg"),
    Algorithm("FedAvg E=2", "fedavg", {"local_epochs": 2}),
    Algorithm("FedSAM", "fedsam"),
    Algorithm("FedASAM", "fedasam"),
    Algorithm("FedAvg+SWA", "fedavg+swa"),
    Algorithm("FedSAM+SWA", "fedsam+swa"),
    Algorithm("FedASAM+SWA", "fedasam+swa"),
)
ALGORITHM = {a.label: a for a in ALGORITHMS}
#: Fig. 11's curves.
FIG11_ALGORITHMS = ("FedAvg E=1", "FedSAM", "FedASAM", "FedAvg+SWA", "FedSAM+SWA", "FedASAM+SWA")


def dataset_for(label: str, scale: str, paper: str = PAPER) -> str:
    """flcore's data set for the paper's data set ``label`` at ``scale`` (:mod:`flcore.reproduction.stand_in`)."""
    return stand_in_for(scale, paper).dataset_for(label)


def alphas_for(label: str, scale: str) -> tuple[float, ...]:
    return SMOKE_ALPHAS[label] if scale == "smoke" else ALPHAS[label]


def sam_main_run(dataset_label: str, algorithm: Algorithm | str, alpha: float, per_round: int,
                 seed: int, scale: str, **extra: Any) -> RunSpec:
    """One run of the ``sam-main`` group."""
    algorithm = ALGORITHM[algorithm] if isinstance(algorithm, str) else algorithm
    config = {"method": algorithm.method, "dataset": dataset_for(dataset_label, scale),
              "scale": scale, "alpha": float(alpha), "per_round": int(per_round), "seed": int(seed),
              **algorithm.overrides, **extra}
    labels = {"dataset": dataset_label, "algorithm": algorithm.label, "alpha": float(alpha),
              "clients_per_round": int(per_round), "seed": int(seed)}
    return RunSpec(labels, config)


def table2_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 2: every (dataset, alpha, clients, algorithm, seed) cell of the scale."""
    return [sam_main_run(ds, algo, alpha, k, seed, scale)
            for ds in DATASETS for algo in ALGORITHMS for alpha in alphas_for(ds, scale)
            for k in CLIENTS_PER_ROUND[scale] for seed in seeds]


def fig11_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 11: alpha = 0, 5 clients per round, FedAvg/FedSAM/FedASAM with and without SWA."""
    return [sam_main_run(ds, label, 0.0, 5, seed, scale)
            for ds in DATASETS for label in FIG11_ALGORITHMS for seed in seeds]


def fig3_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 3: CIFAR-100 FedAvg at alpha 0, 0.5, 1000 (5 clients assumed; the paper does
    not say), and the alpha = 0 run trained ``LONG_RUN_FACTOR`` times longer (panel c)."""
    specs = [sam_main_run("CIFAR-100", "FedAvg E=1", alpha, 5, seed, scale)
             for alpha in alphas_for("CIFAR-100", scale) for seed in seeds]
    rounds = scale_defaults(scale, dataset_for("CIFAR-100", scale))["rounds"] * LONG_RUN_FACTOR[scale]
    for seed in seeds:
        long = sam_main_run("CIFAR-100", "FedAvg E=1", 0.0, 5, seed, scale, rounds=rounds)
        specs.append(RunSpec({**long.labels, "length": "long"}, long.config))
    # the figure reads each client's accuracy, which the small scale does not record by
    # default (same run ids: the record is not part of a run's identity)
    return [RunSpec(s.labels, {**s.config, "client_accuracy": True}) for s in specs]


register_artifacts(PAPER, {
    "fedsam-table-2": table2_runs,
    "fedsam-fig-11": fig11_runs,
    "fedsam-fig-3": fig3_runs,
    "fedsam-table-10": no_runs,
    "fedsam-table-11": no_runs,
    "fedsam-table-12": no_runs,
    "fedsam-table-9": no_runs,
})


def spread_reference(scale: str, seeds: Sequence[int]) -> list[tuple[RunSpec, RunSpec]]:
    """The claims' reference pairs: FedSAM and FedAvg at the extreme alphas of the CIFAR-10
    protocol, 5 clients per round, one pair per alpha and seed (their per-seed difference
    measures the spread of a paired comparison: :mod:`flcore.reproduction.claims`)."""
    alphas = alphas_for("CIFAR-10", scale)
    return [(sam_main_run("CIFAR-10", "FedSAM", alpha, 5, seed, scale),
             sam_main_run("CIFAR-10", "FedAvg E=1", alpha, 5, seed, scale))
            for alpha in (alphas[0], alphas[-1]) for seed in seeds]


set_spread_reference(spread_reference)
