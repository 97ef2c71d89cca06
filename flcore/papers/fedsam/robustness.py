"""The FedSAM paper's robustness and sensitivity figures (Figs. 6, 8, 9 and 10) as data.

- **Fig. 6** (domain generalization, alpha = 0, 20 clients per round, severity 5): the final
  models of FedAvg, FedASAM and their SWA versions evaluated on CIFAR-10-C / CIFAR-100-C,
  one accuracy per corruption.  **Fig. 8** (App. D): the six algorithms of Table 2 (FedAvg,
  FedSAM, FedASAM, each with and without SWA) at every alpha, severity 5.  Both read runs of
  the ``sam-main`` group; the evaluation is :func:`flcore.analysis.robustness.corrupted_accuracy`.
- **Fig. 9** (App. E.2, run group ``sam-rho-sweep``): CIFAR-100, 5 clients per round, one
  line per alpha: (a) FedSAM's rho, (b) FedASAM's rho at eta = 0.2, (c) FedASAM's eta at
  rho = 0.5.
- **Fig. 10** (App. G, run group ``sam-sota``): convergence at alpha = 0 with 20 clients per
  round of FedAvgM (server momentum 0.9), FedAvgM+ASAM, their SWA versions, and FedSAM+SWA
  (CIFAR-100) / FedASAM+SWA (CIFAR-10).

Scales: ``paper`` keeps the paper's protocol and full grids.  ``small`` and ``smoke`` train
on MNIST-1D (:func:`flcore.papers.fedsam.runs.dataset_for`), with 5 clients per round
instead of 20 (Figs. 6, 8 and 10 then read Table 2's runs; at alpha = 0 both CIFAR settings
name the same runs) and, for Fig. 9, a few grid points with one seed (:data:`SWEEP`); the
corrupted test sets are flcore's 1-D corruptions of the MNIST-1D test signals
(:mod:`flcore.data.corruptions_1d`).  Every run is built with
:func:`flcore.papers.fedsam.runs.sam_main_run`, so a configuration shared with another
artifact is the same run.
"""
from __future__ import annotations

from collections.abc import Sequence

from flcore.analysis.robustness import corrupted_accuracy_of_runs
from flcore.data import DatasetError
from flcore.devices import resolve_device
from flcore.papers.fedsam.runs import DATASETS, PAPER, Algorithm, alphas_for, sam_main_run
from flcore.reproduction.artifacts import RunSpec, register_artifacts
from flcore.reproduction.stand_in import stand_in_for

#: Clients per round of Figs. 6, 8 and 10 (the paper: 20; below it Table 2's 5).
CLIENTS = {"smoke": 5, "small": 5, "paper": 20}
#: Fig. 9's participation (5% of 100 clients) at every scale.
SWEEP_CLIENTS = 5
#: The severity Figs. 6 and 8 show.
FIGURE_SEVERITY = 5
#: Below the paper scale Fig. 8 evaluates its ~30 runs on this many test examples (a fixed
#: random subset), which keeps the page's own compute within seconds on a CPU.
FIG8_SUBSET = 1000

FIG6_ALGORITHMS = ("FedAvg E=1", "FedASAM", "FedAvg+SWA", "FedASAM+SWA")
FIG8_ALGORITHMS = ("FedAvg E=1", "FedSAM", "FedASAM", "FedAvg+SWA", "FedSAM+SWA", "FedASAM+SWA")

#: Fig. 10's methods: FedAvgM (server momentum 0.9, FedSAM paper App. C.2) and its ASAM and
#: SWA compositions, plus the SWA method the caption names per data set.
FEDAVGM = (Algorithm("FedAvgM", "fedavgm"), Algorithm("FedAvgM+SWA", "fedavgm+swa"),
           Algorithm("FedAvgM+ASAM", "fedavgm+asam"), Algorithm("FedAvgM+ASAM+SWA", "fedavgm+asam+swa"))
FIG10_SWA = {"CIFAR-100": "FedSAM+SWA", "CIFAR-10": "FedASAM+SWA"}
FIG10_ALGORITHMS = tuple(a.label for a in FEDAVGM) + ("FedSAM+SWA", "FedASAM+SWA")
#: Below the paper scale Fig. 10 has one panel; it carries CIFAR-10's label (the setting
#: whose Table 6 numbers the claims on these runs quote).
FIG10_SMALL_PANEL = "CIFAR-10"

#: Fig. 9's grids: panel -> (algorithm, swept field, values, the other field held fixed).
#: ``paper``: the paper's grids (App. E.2).  Below it a few
#: points around flcore's MNIST-1D defaults (SAM rho 0.05, ASAM rho 0.5, eta 0.2), which
#: are also Table 2's runs.
SWEEP = {
    "paper": {"a": ("FedSAM", "rho", (0.01, 0.02, 0.05, 0.1, 0.2, 0.5), {}),
              "b": ("FedASAM", "rho", (0.05, 0.1, 0.2, 0.5, 0.7, 1.0, 2.0), {"eta": 0.2}),
              "c": ("FedASAM", "eta", (0.0, 0.01, 0.1, 0.2), {"rho": 0.5})},
    "small": {"a": ("FedSAM", "rho", (0.01, 0.05, 0.5), {}),
              "b": ("FedASAM", "rho", (0.1, 0.5, 2.0), {"eta": 0.2}),
              "c": ("FedASAM", "eta", (0.0, 0.2), {"rho": 0.5})},
    "smoke": {"a": ("FedSAM", "rho", (0.05, 0.5), {}),
              "b": ("FedASAM", "rho", (0.5, 2.0), {"eta": 0.2}),
              "c": ("FedASAM", "eta", (0.0, 0.2), {"rho": 0.5})},
}
PANEL_TITLES = {"a": "(a) FedSAM: rho", "b": "(b) FedASAM: rho (eta = 0.2)", "c": "(c) FedASAM: eta (rho = 0.5)"}
#: Fig. 9's alphas (CIFAR-100's); smoke: the extremes.
SWEEP_ALPHAS = {"paper": (0.0, 0.5, 1000.0), "small": (0.0, 0.5, 1000.0), "smoke": (0.0, 1000.0)}


def _panel_datasets(scale: str) -> tuple[str, ...]:
    """Both CIFAR panels at the paper scale; below it one (they name the same MNIST-1D runs
    at alpha = 0)."""
    return DATASETS if stand_in_for(scale, PAPER).is_paper else DATASETS[:1]


def fig6_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 6: alpha = 0, FedAvg / FedASAM with and without SWA, per data set."""
    return [sam_main_run(ds, label, 0.0, CLIENTS[scale], seed, scale)
            for ds in _panel_datasets(scale) for label in FIG6_ALGORITHMS for seed in seeds]


def fig8_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 8: the six algorithms at every alpha of the data set."""
    return [sam_main_run(ds, label, alpha, CLIENTS[scale], seed, scale)
            for ds in DATASETS for alpha in alphas_for(ds, scale) for label in FIG8_ALGORITHMS for seed in seeds]


def fig9_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 9: CIFAR-100, 5 clients per round; labels ``panel``, ``parameter``, ``value``."""
    specs = []
    for panel, (label, field, values, fixed) in SWEEP[scale].items():
        for alpha in SWEEP_ALPHAS[scale]:
            for value in values:
                for seed in seeds:
                    spec = sam_main_run("CIFAR-100", label, alpha, SWEEP_CLIENTS, seed, scale, **fixed,
                                        **{field: value})
                    specs.append(RunSpec({**spec.labels, "panel": panel, "parameter": field, "value": value},
                                         spec.config))
    return specs


def fig10_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 10: alpha = 0, FedAvgM and its ASAM / SWA versions, and FedSAM+SWA (CIFAR-100) or
    FedASAM+SWA (CIFAR-10); below the paper scale one MNIST-1D panel with both."""
    if stand_in_for(scale, PAPER).is_paper:
        panels = [(ds, [FIG10_SWA[ds]]) for ds in DATASETS]
    else:
        panels = [(FIG10_SMALL_PANEL, list(FIG10_SWA.values()))]
    return [sam_main_run(ds, algorithm, 0.0, CLIENTS[scale], seed, scale)
            for ds, swa in panels for algorithm in list(FEDAVGM) + swa for seed in seeds]


# ----------------------------------------------------------------------------- pages of Figs. 6 and 8

#: The columns of the runs Figs. 6 and 8 evaluate, as their pages list them.
EVALUATED_COLUMNS = ["dataset", "algorithm", "alpha", "clients_per_round", "status", "mean_last_100", "run_id"]


def show_evaluated_runs(page, runs, counted: str = "{finished} finished runs of {total}") -> None:
    """Figs. 6 and 8: the runs whose final models are evaluated, captioned with ``counted``
    (``{finished}``, ``{total}``: the counts of finished and listed runs)."""
    finished = int((runs["status"] == "finished").sum())
    page.table(runs[EVALUATED_COLUMNS], f"The final models evaluated here: "
                                        f"{counted.format(finished=finished, total=len(runs))}; mean_last_100 is "
                                        "the clean test accuracy (a fraction).")


def corrupted_scores(runs, device: str = "auto", data_root=None, severities: Sequence[int] = (1, 2, 3, 4, 5),
                     samples: int | None = None):
    """Figs. 6 and 8: :func:`flcore.analysis.robustness.corrupted_accuracy_of_runs` of the
    finished runs with an ``accuracy (%)`` column, or ``None`` -- saying so on the page --
    when the corrupted test sets are missing."""
    from IPython.display import Markdown, display


    try:
        scores = corrupted_accuracy_of_runs(runs, severities=severities, device=str(resolve_device(device)),
                                            data_root=data_root, samples=samples)
    except DatasetError as error:
        display(Markdown(f"**The corrupted test sets are missing**, so this page has no figure: {error}"))
        return None
    scores["accuracy (%)"] = scores["accuracy"] * 100
    return scores


register_artifacts(PAPER, {
    "fedsam-fig-6": fig6_runs,
    "fedsam-fig-8": fig8_runs,
    "fedsam-fig-9": fig9_runs,
    "fedsam-fig-10": fig10_runs,
})
