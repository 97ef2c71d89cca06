"""The FedSAM paper's remaining result tables (4, 5, 6, 13-17), its heavy tables (3, 7, 8) and
its robustness and sensitivity figures (6, 8, 9, 10).

Run groups of the paper's ``inventory.yaml`` and how flcore expresses them:

- ``sam-aug`` (Tables 4, 17, and the Mixup/Cutout rows of 5, 16): the ``sam-main`` runs with
  ``mixup_alpha = 1`` (Mixup, Beta(1, 1)) or ``cutout_size`` set (Cutout: 16x16 on CIFAR-10,
  8x8 on CIFAR-100 as the paper says -- its code uses 16 for both; a window of 8 of the 40
  positions of an MNIST-1D signal below the paper scale, our choice);
- ``sam-central`` (Tables 5, 16): the registered ``centralized-*`` methods -- one client
  holding the pooled training set, one round = one epoch (``flcore.config.CENTRALIZED_PROTOCOL``;
  the paper does not give its centralized recipe).  Centralized SWA averages every epoch
  (``swa_cycle = 1``, constant lr: SWA as Izmailov et al. run it), our choice; Mixup and
  Cutout are ``centralized-sgd`` with the augmentation;
- ``sam-sota`` (Table 6): FedAvgM, FedProx, SCAFFOLD, FedDyn, AdaBest, each + ASAM
  (FedDyn + SAM on CIFAR-10, FedDyn + ASAM on CIFAR-100, as the paper), with and without SWA;
- ``sam-serveropt`` (Table 13): ``fedopt`` (server SGD, no momentum), ``fedadam`` and
  ``fedadagrad`` at server lr {1, 0.1, 0.01, 0.001}; server SGD at lr 1 is the ``sam-main``
  FedAvg run.  The paper leaves the adaptive optimizers' epsilon unstated; its code uses 0.1
  (Adam) and 0.01 (AdaGrad), which the runs take;
- ``sam-swa-ablation`` (Table 14): weight averaging on/off x cyclical (c > 1) or constant
  (c = 1) lr.  (averaging, c > 1) and (none, c = 1) are the Table 2 runs; (averaging, c = 1)
  is ``X+swa`` with ``swa_cycle = 1``; (none, c > 1) is ``X+swalr`` (the cyclical lr alone);
- ``sam-swa-start`` (Table 15): FedAvg + SWA started at 5, 25, 50 % of the rounds (75 % is
  the Table 2 run).

Every CIFAR CNN run goes through :func:`flcore.papers.fedsam.runs.sam_main_run`, so a cell
shared with Table 2 is the same run.  Below the paper scale the grids are cut to fit the
CPU book (:data:`SMALL_GRID`: 5 clients per round, alpha = 0 -- the paper's headline
setting -- for most tables, one seed); the paper scale keeps every published cell.

Tables 3 (CIFAR-100-PAM, ResNet-18-GN), 7 (Landmarks-User-160k) and 8 (Cityscapes / IDDA
segmentation) need data not obtainable offline or through torchvision: their pages show
the published numbers and what the experiment needs; they train nothing.

**Robustness and sensitivity** (Figs. 6, 8, 9 and 10) as data:

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

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from flcore.analysis.robustness import corrupted_accuracy_of_runs
from flcore.config.scales import scale_defaults
from flcore.data import DatasetError
from flcore.devices import resolve_device
from flcore.papers.fedsam import runs as fedsam
from flcore.papers.fedsam.runs import DATASETS, PAPER, Algorithm, alphas_for, sam_main_run
from flcore.report import format_comparison, mean_sd_text, ours_accuracy, paper_vs_ours
from flcore.report.ordering import ordering_table
from flcore.report.page import SMOKE_NOTE, verdict_counts
from flcore.report.tables import NOT_RUN, run_here
from flcore.reproduction.artifacts import RunSpec, no_runs, register_artifacts
from flcore.reproduction.inventory import entry
from flcore.reproduction.published import published, source
from flcore.reproduction.stand_in import stand_in_for

#: Augmentations of Tables 3, 4, 17 in the paper's order ("none" = the Table 2 runs).
AUGMENTATIONS = ("none", "Mixup", "Cutout")
#: Cutout side by data set at the paper scale (the paper's text: 16x16 CIFAR-10, 8x8 CIFAR-100).
CUTOUT_SIZE = {"CIFAR-10": 16, "CIFAR-100": 8}
#: Cutout window on a 40-position MNIST-1D signal (below the paper scale; our choice).
CUTOUT_SIZE_MNIST1D = 8
MIXUP_ALPHA = 1.0

#: The rows of Tables 4 and 17: label -> (sam-main algorithm label).
AUG_ALGORITHMS = {"FedAvg": "FedAvg E=1", "FedSAM": "FedSAM", "FedASAM": "FedASAM", "FedAvg+SWA": "FedAvg+SWA",
                  "FedSAM+SWA": "FedSAM+SWA", "FedASAM+SWA": "FedASAM+SWA"}

#: What each scale below ``paper`` runs (the paper scale runs every published cell).
SMALL_GRID = {
    # Tables 4 / 17: alphas per data set, clients per round, algorithms
    "aug_alphas": {"CIFAR-100": (0.0,), "CIFAR-10": (0.0,)},
    "aug_algorithms": ("FedAvg", "FedASAM+SWA"),
    # Table 6
    "sota_alphas": (0.0,),
    "sota_swa": (False,),
    "sota_algorithms": ("FedAvg", "FedASAM", "FedAvgM", "FedProx", "SCAFFOLD", "FedDyn", "AdaBest", "FedProx+ASAM"),
    # Table 13: the (optimizer, server lr) cells the paper prints at alpha = 0
    "serveropt_alphas": (0.0,),
    "serveropt_cells": (("SGD", 1.0), ("SGD", 0.1), ("Adam", 0.01), ("AdaGrad", 0.01)),
    # Tables 14, 15
    # one MNIST-1D block: alpha = 0.5, whose X and X + SWA runs Table 2 already has
    "ablation_alphas": {"CIFAR-100": (0.5,), "CIFAR-10": ()},
    "ablation_algorithms": ("FedAvg",),
    "start_fractions": (0.5, 0.75),  # the rows the text keeps
    "start_alphas": {"CIFAR-100": (0.0,), "CIFAR-10": (0.0,)},
    # Tables 5 / 16: the federated alphas
    "improvement_alphas": {"fedsam-table-5": (0.0,), "fedsam-table-16": (1000.0,)},
    # centralized epochs (one round = one epoch; the preset's 20 at small cut to 5)
    "central_epochs": {"smoke": None, "small": 5},
}


def _paper(scale: str) -> bool:
    return stand_in_for(scale, PAPER).is_paper


# ----------------------------------------------------------------------------- sam-aug

def augmentation_config(augmentation: str, dataset_label: str, scale: str) -> dict[str, Any]:
    """Config values of an augmentation (``"none"``, ``"Mixup"``, ``"Cutout"``)."""
    if augmentation == "none":
        return {}
    if augmentation == "Mixup":
        return {"mixup_alpha": MIXUP_ALPHA}
    if augmentation == "Cutout":
        return {"cutout_size": CUTOUT_SIZE[dataset_label] if _paper(scale) else CUTOUT_SIZE_MNIST1D}
    raise ValueError(f"augmentation must be one of {', '.join(AUGMENTATIONS)}; got {augmentation!r}")


def aug_run(dataset_label: str, algorithm: str, augmentation: str, alpha: float, per_round: int, seed: int,
            scale: str) -> RunSpec:
    """One run of ``sam-aug`` (``augmentation="none"``: the ``sam-main`` run itself)."""
    spec = sam_main_run(dataset_label, AUG_ALGORITHMS[algorithm], alpha, per_round, seed, scale,
                        **augmentation_config(augmentation, dataset_label, scale))
    return RunSpec({**spec.labels, "algorithm": algorithm, "augmentation": augmentation}, spec.config)


def _aug_table_runs(dataset_label: str, scale: str, seeds: Sequence[int]) -> list[RunSpec]:
    if _paper(scale):
        alphas, ks, algorithms = fedsam.ALPHAS[dataset_label], fedsam.CLIENTS_PER_ROUND["paper"], AUG_ALGORITHMS
    else:
        alphas, ks, algorithms = SMALL_GRID["aug_alphas"][dataset_label], (5,), SMALL_GRID["aug_algorithms"]
    return [aug_run(dataset_label, algo, aug, alpha, k, seed, scale)
            for aug in AUGMENTATIONS for algo in algorithms for alpha in alphas for k in ks for seed in seeds]


def table4_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 4 (CIFAR-100) with its no-augmentation rows (Table 2's runs) for reference."""
    return _aug_table_runs("CIFAR-100", scale, seeds)


def table17_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 17 (CIFAR-10), no augmentation / Mixup / Cutout."""
    return _aug_table_runs("CIFAR-10", scale, seeds)


# ----------------------------------------------------------------------------- sam-central

#: Rows of Tables 5 and 16: label -> (centralized method, augmentation, federated label).
IMPROVEMENT_ROWS = {
    "SAM": ("centralized-sam", "none", "FedSAM"),
    "ASAM": ("centralized-asam", "none", "FedASAM"),
    "SWA": ("centralized-swa", "none", "FedAvg+SWA"),
    "SAM+SWA": ("centralized-sam+swa", "none", "FedSAM+SWA"),
    "ASAM+SWA": ("centralized-asam+swa", "none", "FedASAM+SWA"),
    "Mixup": ("centralized-sgd", "Mixup", "FedAvg"),
    "Cutout": ("centralized-sgd", "Cutout", "FedAvg"),
}
#: The references at the bottom of Tables 5 and 16.
REFERENCE = {"centralized": ("SGD", "centralized-sgd"), "federated": "FedAvg"}


def central_run(label: str, seed: int, scale: str) -> RunSpec:
    """One run of ``sam-central`` on the pooled CIFAR-100 training set (``label``: a row of
    Table 5 or ``"SGD"``, the reference)."""
    if label == REFERENCE["centralized"][0]:
        method, augmentation = REFERENCE["centralized"][1], "none"
    else:
        method, augmentation = IMPROVEMENT_ROWS[label][:2]
    config = {"method": method, "dataset": fedsam.dataset_for("CIFAR-100", scale), "scale": scale, "seed": int(seed),
              **augmentation_config(augmentation, "CIFAR-100", scale)}
    if method.endswith("swa"):
        config["swa_cycle"] = 1  # SWA averaging every epoch (module docstring)
    epochs = None if _paper(scale) else SMALL_GRID["central_epochs"][scale]
    if epochs is not None:
        config.update(rounds=epochs, eval_last=epochs)
    return RunSpec({"dataset": "CIFAR-100", "setting": "centralized", "algorithm": label, "seed": int(seed)}, config)


def _federated_improvement_run(label: str, alpha: float, seed: int, scale: str) -> RunSpec:
    if label == REFERENCE["federated"]:
        fed, augmentation = "FedAvg", "none"
    else:
        _, augmentation, fed = IMPROVEMENT_ROWS[label]
    spec = aug_run("CIFAR-100", fed, augmentation, alpha, 5, seed, scale)
    return RunSpec({**spec.labels, "setting": setting_label(alpha), "algorithm": label, "federated": fed},
                   spec.config)


def setting_label(alpha: float) -> str:
    """How Tables 5 and 16 name a federated column (``alpha=0``, ``alpha=0.5``, ``alpha=1000``)."""
    return f"alpha={alpha:g}"


def _improvement_runs(artifact_id: str, paper_alphas: Sequence[float], scale: str,
                      seeds: Sequence[int]) -> list[RunSpec]:
    alphas = paper_alphas if _paper(scale) else SMALL_GRID["improvement_alphas"][artifact_id]
    rows = [REFERENCE["centralized"][0], *IMPROVEMENT_ROWS]
    specs = [central_run(label, seed, scale) for label in rows for seed in seeds]
    specs += [_federated_improvement_run(label, alpha, seed, scale)
              for alpha in alphas for label in (REFERENCE["federated"], *IMPROVEMENT_ROWS) for seed in seeds]
    return specs


def table5_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 5: centralized vs federated (CIFAR-100, alpha = 0, 5 clients)."""
    return _improvement_runs("fedsam-table-5", (0.0,), scale, seeds)


def table16_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 16: centralized vs federated at alpha 0.5 and 1000 (the caption's values)."""
    return _improvement_runs("fedsam-table-16", (0.5, 1000.0), scale, seeds)


def improvements(cells: pd.DataFrame, value: str = "ours") -> pd.DataFrame:
    """Tables 5 / 16 from accuracies: for each ``setting`` the reference row (``SGD``
    centralized, ``FedAvg`` federated) and every other row's absolute (``acc - ref``) and
    relative (``100 (acc - ref) / ref``) improvement.

    ``cells``: columns ``setting``, ``algorithm``, ``value``.
    """
    rows = []
    for setting, block in cells.groupby("setting", sort=False):
        ref_label = REFERENCE["centralized"][0] if setting == "centralized" else REFERENCE["federated"]
        ref = block.loc[block["algorithm"] == ref_label, value]
        ref = float(ref.iloc[0]) if len(ref) else math.nan
        for row in block.itertuples():
            acc = float(getattr(row, value))
            is_ref = row.algorithm == ref_label
            rows.append({"setting": setting, "algorithm": row.algorithm, "accuracy": acc,
                         "absolute_improvement": math.nan if is_ref else acc - ref,
                         "relative_improvement": math.nan if is_ref or ref == 0 else 100.0 * (acc - ref) / ref})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- sam-sota

#: Table 6's rows in the paper's order: label -> (method on CIFAR-10, method on CIFAR-100).
SOTA_ALGORITHMS = {
    "FedAvg": ("fedavg", "fedavg"), "FedSAM": ("fedsam", "fedsam"), "FedASAM": ("fedasam", "fedasam"),
    "FedAvgM": ("fedavgm", "fedavgm"), "FedProx": ("fedprox", "fedprox"), "SCAFFOLD": ("scaffold", "scaffold"),
    "FedDyn": ("feddyn", "feddyn"), "AdaBest": ("adabest", "adabest"),
    "FedAvgM+ASAM": ("fedavgm+asam", "fedavgm+asam"), "FedProx+ASAM": ("fedprox+asam", "fedprox+asam"),
    "SCAFFOLD+ASAM": ("scaffold+asam", "scaffold+asam"), "FedDyn+SAM": ("feddyn+sam", None),
    "FedDyn+ASAM": (None, "feddyn+asam"), "AdaBest+ASAM": ("adabest+asam", "adabest+asam"),
}
SOTA_HETEROGENEOUS = {"CIFAR-10": 0.05, "CIFAR-100": 0.5}


def sota_run(dataset_label: str, algorithm: str, swa: bool, alpha: float, per_round: int, seed: int,
             scale: str) -> RunSpec:
    """One run of ``sam-sota`` (FedAvg / FedSAM / FedASAM: the ``sam-main`` runs)."""
    method = SOTA_ALGORITHMS[algorithm][0 if dataset_label == "CIFAR-10" else 1]
    if method is None:
        raise ValueError(f"Table 6 runs {algorithm} on {'CIFAR-100' if dataset_label == 'CIFAR-10' else 'CIFAR-10'} "
                         f"only, not on {dataset_label}")
    method = f"{method}+swa" if swa else method
    spec = sam_main_run(dataset_label, Algorithm(algorithm + ("+SWA" if swa else ""), method), alpha, per_round,
                        seed, scale)
    return RunSpec({**spec.labels, "algorithm": algorithm, "swa": "yes" if swa else "no"}, spec.config)


def table6_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 6: every baseline, + ASAM (or SAM), with and without SWA."""
    specs = []
    for ds in fedsam.DATASETS:
        alphas = (0.0, SOTA_HETEROGENEOUS[ds]) if _paper(scale) else SMALL_GRID["sota_alphas"]
        ks = (5, 20) if _paper(scale) else (5,)
        swas = (False, True) if _paper(scale) else SMALL_GRID["sota_swa"]
        algorithms = SOTA_ALGORITHMS if _paper(scale) else SMALL_GRID["sota_algorithms"]
        for algorithm in algorithms:
            if SOTA_ALGORITHMS[algorithm][0 if ds == "CIFAR-10" else 1] is None:
                continue
            specs += [sota_run(ds, algorithm, swa, alpha, k, seed, scale)
                      for swa in swas for alpha in alphas for k in ks for seed in seeds]
    return specs


# ----------------------------------------------------------------------------- sam-serveropt

#: Table 13's optimizers: label -> (method, fixed config values).  The epsilons are the
#: official code's (the paper gives none); AdaGrad has beta_1 = beta_2 = 0 (the paper, after
#: Reddi et al.), Adam (0.9, 0.99).
SERVER_OPTIMIZERS = {
    "SGD": ("fedopt", {"server_momentum": 0.0}),
    "Adam": ("fedadam", {"server_beta1": 0.9, "server_beta2": 0.99, "server_tau": 0.1}),
    "AdaGrad": ("fedadagrad", {"server_beta1": 0.0, "server_beta2": 0.0, "server_tau": 0.01}),
}
SERVER_LRS = (1.0, 0.1, 0.01, 0.001)


def serveropt_run(optimizer: str, server_lr: float, alpha: float, seed: int, scale: str) -> RunSpec:
    """One run of ``sam-serveropt`` (CIFAR-100, 5 clients); SGD at lr 1 is FedAvg's run."""
    if optimizer == "SGD" and server_lr == 1.0:
        spec = sam_main_run("CIFAR-100", "FedAvg E=1", alpha, 5, seed, scale)
    else:
        method, fixed = SERVER_OPTIMIZERS[optimizer]
        spec = sam_main_run("CIFAR-100", Algorithm(optimizer, method, {**fixed, "server_lr": float(server_lr)}),
                            alpha, 5, seed, scale)
    return RunSpec({**spec.labels, "optimizer": optimizer, "server_lr": float(server_lr)}, spec.config)


def table13_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 13: server SGD / Adam / AdaGrad x server lr, CIFAR-100 alpha 0 and 1000."""
    if _paper(scale):
        alphas, cells = (0.0, 1000.0), [(opt, lr) for opt in SERVER_OPTIMIZERS for lr in SERVER_LRS]
    else:
        alphas, cells = SMALL_GRID["serveropt_alphas"], SMALL_GRID["serveropt_cells"]
    return [serveropt_run(opt, lr, alpha, seed, scale) for opt, lr in cells for alpha in alphas for seed in seeds]


# ----------------------------------------------------------------------------- sam-swa-ablation

ABLATION_BASES = {"FedAvg": "fedavg", "FedSAM": "fedsam", "FedASAM": "fedasam"}


def ablation_run(dataset_label: str, algorithm: str, weights_avg: bool, cyclical: bool, alpha: float,
                 per_round: int, seed: int, scale: str) -> RunSpec:
    """One cell of Table 14: weight averaging on/off x cyclical (c > 1) or constant (c = 1) lr."""
    base = ABLATION_BASES[algorithm]
    if weights_avg:
        method, extra = f"{base}+swa", ({} if cyclical else {"swa_cycle": 1})
    else:
        method, extra = (f"{base}+swalr", {}) if cyclical else (base, {})
    label = f"{algorithm} avg={weights_avg} cyclical={cyclical}"
    spec = sam_main_run(dataset_label, Algorithm(label, method, extra), alpha, per_round, seed, scale)
    return RunSpec({**spec.labels, "algorithm": algorithm, "weights_avg": "yes" if weights_avg else "no",
                    "lr_schedule": "cyclical" if cyclical else "constant"}, spec.config)


def table14_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 14 on both data sets."""
    specs = []
    for ds in fedsam.DATASETS:
        alphas = fedsam.ALPHAS[ds] if _paper(scale) else SMALL_GRID["ablation_alphas"][ds]
        algorithms = ABLATION_BASES if _paper(scale) else SMALL_GRID["ablation_algorithms"]
        ks = fedsam.CLIENTS_PER_ROUND[scale]
        specs += [ablation_run(ds, algorithm, avg, cyc, alpha, k, seed, scale)
                  for algorithm in algorithms for avg in (True, False) for cyc in (True, False)
                  for alpha in alphas for k in ks for seed in seeds]
    return specs


# ----------------------------------------------------------------------------- sam-swa-start

START_FRACTIONS = (0.05, 0.25, 0.5, 0.75)


def swa_start_run(dataset_label: str, fraction: float, alpha: float, seed: int, scale: str) -> RunSpec:
    """FedAvg + SWA from ``fraction`` of the rounds (5 clients); 75 % is the Table 2 run."""
    if math.isclose(fraction, 0.75):
        spec = sam_main_run(dataset_label, "FedAvg+SWA", alpha, 5, seed, scale)
    else:
        rounds = scale_defaults(scale, fedsam.dataset_for(dataset_label, scale))["rounds"]
        spec = sam_main_run(dataset_label, "FedAvg+SWA", alpha, 5, seed, scale, swa_start=int(fraction * rounds))
    return RunSpec({**spec.labels, "start_fraction": float(fraction)}, spec.config)


def table15_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    fractions = START_FRACTIONS if _paper(scale) else SMALL_GRID["start_fractions"]
    specs = []
    for ds in fedsam.DATASETS:
        alphas = fedsam.ALPHAS[ds] if _paper(scale) else SMALL_GRID["start_alphas"][ds]
        specs += [swa_start_run(ds, f, alpha, seed, scale) for f in fractions for alpha in alphas for seed in seeds]
    return specs


# ----------------------------------------------------------------------------- pages

#: Grouping columns of each result table's cells (run labels and published columns).
TABLE_KEYS = {
    "fedsam-table-4": ["dataset", "augmentation", "algorithm", "alpha", "clients_per_round"],
    "fedsam-table-17": ["dataset", "augmentation", "algorithm", "alpha", "clients_per_round"],
    "fedsam-table-5": ["setting", "algorithm"],
    "fedsam-table-16": ["setting", "algorithm"],
    "fedsam-table-6": ["dataset", "swa", "algorithm", "alpha", "clients_per_round"],
    "fedsam-table-13": ["dataset", "optimizer", "server_lr", "alpha"],
    "fedsam-table-14": ["dataset", "weights_avg", "lr_schedule", "algorithm", "alpha", "clients_per_round"],
    "fedsam-table-15": ["dataset", "start_fraction", "alpha"],
}


def published_cells(artifact_id: str) -> pd.DataFrame:
    """The published accuracies of a result table in the shape of our cells
    (:data:`TABLE_KEYS` + ``accuracy`` + ``note``).

    Table 4 prints no rows without augmentation: Table 2's CIFAR-100 rows stand for them.
    Table 14's ``c`` becomes ``lr_schedule`` (``cyclical`` for c > 1, ``constant`` for 1).
    """
    frame = published(artifact_id).copy()
    if artifact_id == "fedsam-table-4":
        labels = {v: k for k, v in AUG_ALGORITHMS.items()}
        t2 = published("fedsam-table-2")
        t2 = t2[(t2["dataset"] == "CIFAR-100") & t2["algorithm"].isin(labels)].copy()
        t2["algorithm"] = t2["algorithm"].map(labels)
        t2["augmentation"] = "none"
        t2["note"] = [("Table 2; " + n).strip("; ") for n in t2["note"]]
        frame = pd.concat([t2[frame.columns], frame], ignore_index=True)
    if artifact_id == "fedsam-table-14":
        frame["lr_schedule"] = ["cyclical" if c > 1 else "constant" for c in frame["c"]]
    if "alpha" in frame:
        frame["alpha"] = frame["alpha"].astype(float)
    if "server_lr" in frame:
        frame["server_lr"] = frame["server_lr"].astype(float)
    return frame[TABLE_KEYS[artifact_id] + ["accuracy", "note"]]


#: What a table's orderings rank (``item``: these columns joined) and within which blocks.
ORDERING = {
    "fedsam-table-4": (("augmentation", "algorithm"), ["dataset", "alpha", "clients_per_round"]),
    "fedsam-table-17": (("augmentation", "algorithm"), ["dataset", "alpha", "clients_per_round"]),
    "fedsam-table-6": (("algorithm",), ["dataset", "swa", "alpha", "clients_per_round"]),
    "fedsam-table-13": (("optimizer", "server_lr"), ["dataset", "alpha"]),
    "fedsam-table-14": (("algorithm", "weights_avg", "lr_schedule"), ["dataset", "alpha", "clients_per_round"]),
    "fedsam-table-15": (("start_fraction",), ["dataset", "alpha"]),
}


def _item(values) -> str:
    parts = []
    for value in values:
        parts.append(f"{value:g}" if isinstance(value, float) else str(value))
    return " ".join(parts)


def comparison(artifact_id: str, runs: pd.DataFrame, scale: str) -> pd.DataFrame:
    """Published beside ours for every cell run at ``scale`` (``runs``: :func:`results_frame`
    or :func:`ensure_runs` of the artifact's specs)."""

    keys = TABLE_KEYS[artifact_id]
    datasets = {label: fedsam.dataset_for(label, scale) for label in fedsam.DATASETS}
    cells = ours_accuracy(runs, keys, datasets)
    frame = paper_vs_ours(published_cells(artifact_id), cells, keys)
    columns = ORDERING[artifact_id][0]
    frame["item"] = [_item(values) for values in frame[list(columns)].itertuples(index=False)]
    return frame


#: The columns :func:`improvement_comparison` adds for our accuracy's spread over seeds.
SPREAD_COLUMNS = {"ours_std": "accuracy sd (ours)", "seeds": "n (ours)", "status": "status (ours)"}


def improvement_comparison(artifact_id: str, runs: pd.DataFrame, scale: str) -> pd.DataFrame:
    """Tables 5 / 16: published accuracy and improvements beside ours (:func:`improvements`),
    every published row; a setting this scale does not run has no values of ours and says
    so in its note.  Our accuracy is each cell's mean over its seeds
    (:func:`flcore.report.ours_accuracy`: the claims' verdicts read the same), with its sd,
    n and status in :data:`SPREAD_COLUMNS`; a diverged seed left out is said in the note, and
    the improvements are differences of those means."""

    datasets = {"CIFAR-100": fedsam.dataset_for("CIFAR-100", scale)}
    cells = ours_accuracy(runs.assign(dataset="CIFAR-100"), ["dataset", "setting", "algorithm"], datasets)
    ours = improvements(cells[cells["status"].isin(["finished", "diverged"])])
    paper = published(artifact_id)
    for column in ("absolute_improvement", "relative_improvement"):
        paper[column] = pd.to_numeric(paper[column], errors="coerce")
    run = paper["setting"].isin(set(cells["setting"]))
    left_out = {(row["setting"], row["algorithm"]): int(row.get("left_out") or 0) for row in cells.to_dict("records")
                if row.get("left_out") == row.get("left_out")}
    paper["note"] = ["; ".join(filter(None, [note if ran else "; ".join(filter(None, [NOT_RUN, note])),
                                             _left_out_note(left_out.get((setting, algorithm), 0))]))
                     for note, ran, setting, algorithm in zip(paper["note"], run, paper["setting"], paper["algorithm"])]
    merged = paper.drop(columns="dataset").merge(ours, on=["setting", "algorithm"], how="left",
                                                 suffixes=(" (paper)", " (ours)"))
    spread = cells[["setting", "algorithm", *SPREAD_COLUMNS]].rename(columns=SPREAD_COLUMNS)
    return merged.merge(spread, on=["setting", "algorithm"], how="left")


def _left_out_note(count: int) -> str:
    return f"ours: {count} diverged seed{'s' if count > 1 else ''} left out" if count else ""


def improvement_display(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`improvement_comparison` as a page shows it: our accuracy printed as its seed mean
    ± sd (n) (:func:`flcore.report.mean_sd_text`), the spread columns folded into it."""
    shown = table.copy()
    shown["accuracy (ours)"] = [
        mean_sd_text(mean, sd, n, status=status if isinstance(status, str) else "finished")
        for mean, sd, n, status in zip(shown["accuracy (ours)"], shown["accuracy sd (ours)"], shown["n (ours)"],
                                       shown["status (ours)"])]
    return shown.drop(columns=list(SPREAD_COLUMNS.values()))


def larger_federated_gains(table: pd.DataFrame, column: str = "relative_improvement (ours)") -> tuple[list[str], int]:
    """The rows of :func:`improvement_comparison` whose federated relative gain exceeds
    the centralized gain of the same row (Table 5's message), and how many were compared."""
    rel = table.dropna(subset=[column])
    central = rel[rel["setting"] == "centralized"].set_index("algorithm")[column]
    federated = rel[(rel["setting"] != "centralized") & rel["algorithm"].isin(central.index)]
    larger = [f"{row['algorithm']} ({row['setting']})" for _, row in federated.iterrows()
              if row[column] > central[row["algorithm"]]]
    return larger, len(federated)


# ----------------------------------------------------------------------------- heavy tables

#: Why Tables 3, 7 and 8 are not regenerated (shown on their pages).
HEAVY_NEEDS = {
    "fedsam-table-3": {
        "data": "CIFAR-100-PAM: the TensorFlow Federated split of CIFAR-100 by its coarse and fine labels "
                "(Pachinko allocation, Reddi et al. 2021), 500 clients x 100 images",
        "model": "ResNet-18 with GroupNorm (2 groups), trained in FedJAX",
        "protocol": "10,000 rounds, 10 or 20 clients per round, E in {1, 2}, batch 20, lr 0.01, momentum 0.9, "
                    "weight decay 4e-4; accuracy at 5k and 10k rounds and with SWA",
        "why": "the TFF split is not distributed through torchvision and cannot be fetched offline; flcore "
               "partitions CIFAR-100 by Dirichlet label skew only",
    },
    "fedsam-table-7": {
        "data": "Landmarks-User-160k (GLDv2 federated by author): 164,172 images of 2,028 landmarks over 1,262 "
                "clients, 19,526 test images",
        "model": "MobileNetV2 with GroupNorm (8 groups), pre-trained on ImageNet",
        "protocol": "5,000 rounds, 10 clients per round, E = 5, batch 64, lr 0.1; SWA from 75 % or 100 % "
                    "of the rounds, c = 5, lr 0.1 -> 0.001",
        "why": "the data set is downloaded through TensorFlow Federated and the pre-trained backbone through "
               "a JAX model zoo; neither is obtainable offline",
    },
    "fedsam-table-8": {
        "data": "Cityscapes and IDDA with the FedDrive splits (uniform and heterogeneous; IDDA seen and "
                "unseen country / rainy domains)",
        "model": "BiSeNetV2 (semantic segmentation)",
        "protocol": "1,500 rounds, 5 clients per round, E = 2, batch 8, SGD momentum 0.9, lr 0.05 (Cityscapes) "
                    "/ 0.1 (IDDA), polynomial lr, OHEM loss; SiloBN keeps BatchNorm statistics local",
        "why": "Cityscapes needs a registered account and IDDA a separate download; flcore covers image "
               "classification only",
    },
}


def heavy_needs_table(artifact_id: str) -> pd.DataFrame:
    """Tables 3, 7 and 8: what the experiment needs, one row (``what``, ``needs``) per item of
    :data:`HEAVY_NEEDS`, the reason it is not regenerated last."""
    return pd.DataFrame([{"what": k, "needs": v} for k, v in HEAVY_NEEDS[artifact_id].items()])


def show_heavy_needs(page) -> None:
    """Tables 3, 7 and 8 (not regenerated): :func:`heavy_needs_table` and the reason the
    project inventory gives."""
    from IPython.display import Markdown, display


    page.table(heavy_needs_table(page.artifact_id),
               "What the experiment needs; the last row says why flcore does not run it.")
    display(Markdown(f"The project inventory lists it as not regenerable: {entry(page.artifact_id).not_regenerable}"))


def show_published_only(page, caption: str, index: Sequence[str] | None = None, columns=None,
                        values: str | None = None) -> None:
    """Tables 3, 7 and 8 (not regenerated): the published values under ``caption``, shown as
    the paper lays them out (``index`` x ``columns`` of ``values``, in the published order)
    or as they are when no ``index`` is given, and their source."""
    from IPython.display import Markdown, display


    paper_values = published(page.artifact_id)
    shown = paper_values if index is None else paper_values.pivot_table(index=list(index), columns=columns,
                                                                        values=values, sort=False)
    page.table(paper_values, caption, show=shown)
    cited = source(page.artifact_id)
    display(Markdown(f"Published values: {cited['source']}. {cited['value']}."))


register_artifacts(PAPER, {
    "fedsam-table-3": no_runs,
    "fedsam-table-4": table4_runs,
    "fedsam-table-5": table5_runs,
    "fedsam-table-6": table6_runs,
    "fedsam-table-7": no_runs,
    "fedsam-table-8": no_runs,
    "fedsam-table-13": table13_runs,
    "fedsam-table-14": table14_runs,
    "fedsam-table-15": table15_runs,
    "fedsam-table-16": table16_runs,
    "fedsam-table-17": table17_runs,
})


# ----------------------------------------------------------------------------- pages

def best_items(block: pd.DataFrame) -> tuple[str, str]:
    """The rows (``item``) with the highest published and the highest of our accuracy among
    the cells of a block of :func:`comparison` that run here (``"none"`` where no cell has a
    value): ``(paper, ours)``."""
    block = run_here(block)
    paper_rows = block.dropna(subset=["paper"])
    ours = block.dropna(subset=["ours"])
    paper_best = paper_rows.loc[paper_rows["paper"].idxmax(), "item"] if len(paper_rows) else "none"
    return paper_best, (ours.loc[ours["ours"].idxmax(), "item"] if len(ours) else "none")


#: How Tables 4, 6, 13, 14, 15 and 17 lay out their cells, as the paper does: the columns of
#: the rows, the columns of the columns, and what the caption says they are.
COMPARISON_LAYOUT = {
    "fedsam-table-4": (["augmentation", "algorithm"], ["alpha", "clients_per_round"],
                       "by augmentation and algorithm (rows), alpha and clients per round (columns)"),
    "fedsam-table-17": (["augmentation", "algorithm"], ["alpha", "clients_per_round"],
                        "by augmentation and algorithm (rows), alpha and clients per round (columns)"),
    "fedsam-table-6": (["algorithm"], ["swa", "alpha", "clients_per_round"],
                       "by algorithm (rows), SWA, alpha and clients per round (columns)"),
    "fedsam-table-13": (["optimizer", "server_lr"], ["alpha"],
                        "by server optimizer and server lr (rows) and alpha (columns)"),
    "fedsam-table-14": (["weights_avg", "lr_schedule", "algorithm"], ["alpha", "clients_per_round"],
                        "by weight averaging, lr schedule and algorithm (rows), alpha and clients per round "
                        "(columns)"),
    "fedsam-table-15": (["start_fraction"], ["alpha"],
                        "of FedAvg + SWA by the fraction of the rounds at which SWA starts (rows) and alpha "
                        "(columns)"),
}

#: What differs below the paper scale on the tables that run both CIFAR settings.
FEWER_CELLS = ("Both CIFAR settings run on MNIST-1D at this scale, with fewer cells than the paper "
               "(see the settings).")


def show_comparison(page, runs: pd.DataFrame, scale: str, rows: Sequence[str] | None = None,
                    columns: Sequence[str] | None = None, layout: str | None = None) -> pd.DataFrame:
    """Tables 4, 6, 13, 14, 15 and 17 of the FedSAM paper: per dataset, the published accuracy
    beside ours (:func:`comparison`) laid out with ``rows`` and ``columns`` like the paper's
    table (:func:`flcore.report.format_comparison`; the difference at the ``paper`` scale only),
    captioned "accuracy (%) ``layout``" (what the rows and columns are) and the paper's and our
    best row; returns the comparison.  ``rows``, ``columns`` and ``layout`` default to the
    page's :data:`COMPARISON_LAYOUT`."""
    from IPython.display import Markdown, display

    default_rows, default_columns, default_layout = COMPARISON_LAYOUT.get(page.artifact_id, (None, None, None))
    rows = default_rows if rows is None else rows
    columns = default_columns if columns is None else columns
    layout = default_layout if layout is None else layout

    at_paper = stand_in_for(scale, PAPER).is_paper
    table = comparison(page.artifact_id, runs, scale)
    paper_values = published_cells(page.artifact_id)
    for label, block in table.groupby("dataset", sort=False):
        stand_in = stand_in_for(scale, PAPER).ours()
        paper_best, best = best_items(block)
        caption = (f"{label}{stand_in}: accuracy (%) {layout}. Among the cells run here the paper's best is "
                   f"{paper_best}, ours is {best}.")
        page.table(block, caption, show=format_comparison(block, list(rows), list(columns), delta=at_paper),
                   downloads={"published": paper_values[paper_values["dataset"] == label],
                              "ours": block.drop(columns=["paper", "delta"])})
    display(Markdown(f"Published values: {source(page.artifact_id)['source']}."))
    return table


def show_orderings(page, table: pd.DataFrame) -> float:
    """Within each block of the table (:data:`ORDERING`), the rows from best to worst by the
    paper and by our runs with Kendall's tau between them; returns the mean tau (NaN: no block)."""

    _, blocks = ORDERING[page.artifact_id]
    orderings = ordering_table(table, blocks, item="item")
    mean_tau = orderings["Kendall's \u03c4"].mean() if len(orderings) else float("nan")
    page.table(orderings, show=orderings.set_index(blocks) if len(orderings) else orderings,
               caption=f"The rows ranked by the paper and by our runs; mean Kendall's \u03c4 over the "
                       f"{len(orderings)} blocks: {mean_tau:.2f}.")
    return mean_tau


def show_improvements(page, runs: pd.DataFrame, scale: str) -> pd.DataFrame:
    """Tables 5 and 16 of the FedSAM paper: accuracy and the absolute and relative improvement
    over each setting's reference (:func:`improvement_comparison`), the paper's beside ours,
    captioned with the rows whose relative gain is larger federated than centralized
    (:func:`larger_federated_gains`); returns the table shown."""
    from IPython.display import Markdown, display


    columns = ["setting", "algorithm", "accuracy (paper)", "accuracy (ours)", "absolute_improvement (paper)",
               "absolute_improvement (ours)", "relative_improvement (paper)", "relative_improvement (ours)", "note",
               *SPREAD_COLUMNS.values()]
    table = improvement_comparison(page.artifact_id, runs, scale)[columns]
    larger, compared = larger_federated_gains(table)
    trained = stand_in_for(scale, PAPER)
    stand_in = "" if trained.is_paper else f" Ours: {trained.name} at the {scale} scale."
    page.table(table, f"Accuracy (%) and improvements over the reference of each setting; our accuracy is a cell's "
                      f"mean over its seeds, ± their sd (n) where it has several, and our improvements are "
                      f"differences of those means.{stand_in} In our runs the "
                      f"relative gain is larger in federated than in centralized training for {len(larger)} of "
                      f"{compared} rows{': ' + ', '.join(larger) if larger else ''}.",
               show=improvement_display(table).set_index(["setting", "algorithm"]),
               downloads={"published": published(page.artifact_id), "ours": table})
    display(Markdown(f"Published values: {source(page.artifact_id)['source']}."))
    return table


def table_findings(verdicts: pd.DataFrame, mean_tau: float, scale: str, stand_in: str) -> list[str]:
    """The "What we found" sentences of a FedSAM table page: the agreement of the rankings
    (when there is one), the claims' verdict counts, ``stand_in`` (what differs below the
    ``paper`` scale) and, at ``smoke``, that it proves the code path only."""

    lines = [f"At the **{scale}** scale, {verdict_counts(verdicts)}."]
    if mean_tau == mean_tau:
        lines.insert(0, f"The paper's and our rankings agree with a mean Kendall's \u03c4 of {mean_tau:.2f}.")
    if not stand_in_for(scale, PAPER).is_paper:
        lines.append(stand_in)
    if scale == "smoke":
        lines.append(SMOKE_NOTE)
    return lines


def show_table_findings(page, mean_tau: float, stand_in: str = FEWER_CELLS) -> pd.DataFrame:
    """The "What we found" of a FedSAM table page: the claims checked (``page.check_claims``)
    and :func:`table_findings` at the page's scale shown as one paragraph; returns the
    verdicts."""
    verdicts = page.check_claims()
    page.note(" ".join(table_findings(verdicts, mean_tau, page.scale, stand_in)))
    return verdicts


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


def panel_name(stand_in, dataset: str, scale: str) -> str:
    """A panel title of Figures 6 and 8: ``"CIFAR-10-C"`` at the paper scale, else what stands
    in for ``dataset`` (``stand_in``: the page's :class:`~flcore.reproduction.stand_in.StandIn`)
    and the scale."""
    return f"{dataset}-C" if stand_in.is_paper else f"{stand_in.name}, {dataset} alphas ({scale} scale)"


def best_values(points: pd.DataFrame, panel: str, alphas: Sequence[float]) -> dict[float, float]:
    """Per alpha of ``alphas`` that ``panel`` has, the swept ``value`` with the highest
    ``accuracy (%)`` among the rows of ``points`` (Figure 9)."""
    data = points[points["panel"] == panel]
    return {a: data.loc[data[data["alpha"] == a]["accuracy (%)"].idxmax(), "value"]
            for a in alphas if (data["alpha"] == a).any()}
