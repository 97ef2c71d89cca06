"""The FedGloSS paper's result artifacts (Caldarola, Cagnasso, Caputo, Ciccone; arXiv:2412.03752).

Run groups of the paper's ``inventory.yaml`` defined here (the analysis artifacts of the paper read the
same runs through :func:`gloss_cnn_run`):

- ``gloss-cnn-main``: the heterogeneous CNN grid -- CIFAR-10 at alpha 0 / 0.05, CIFAR-100 at
  alpha 0 / 0.5, 5 clients per round, the eleven methods of Table 3 (:data:`GLOSS_ALGORITHMS`:
  SGD block FedAvg, FedProx, FedDyn, SCAFFOLD, FedGloSS-SGD; SAM block FedSAM, FedDyn+SAM,
  FedSpeed, FedGAMMA, FedSMOO, FedGloSS-SAM).  FedAvg and FedSAM are the FedSAM paper's
  ``sam-main`` runs (:func:`flcore.papers.fedsam.runs.sam_main_run`): same protocol, same runs.
- ``gloss-resnet-main``: ResNet-18-GN, CIFAR-10 alpha 0.05 and CIFAR-100 alpha 0.5, 10 clients
  per round, 10k rounds (the paper's Table 12 ResNet row: lr 0.01, momentum 0.7, weight
  decay 1e-5).  Registered at the ``paper`` scale only: below it every model is the MNIST-1D
  CNN, so the ResNet block would repeat the CNN runs; the pages say so.
- ``gloss-naive``: NaiveFedGloSS (two exchanges per round) on the CNN settings (alpha = 0 only
  below the paper scale).
- ``gloss-central``: centralized SAM and SAM~ (SAM with FedGloSS's previous-gradient
  approximation) on the pooled training set (Table 6, Figs. 15, 16, 18); at the paper scale
  centralized SGD too, for the dashed SGD references of Figs. 15-16 (the paper does not name
  their optimizer).
- ``gloss-homog``: the homogeneous CNN settings (CIFAR-10 alpha 100, CIFAR-100 alpha 1000)
  of Table 9, FedGloSS with and without ADMM.
- ``gloss-rho-sweep``: FedGloSS-SAM's server radius rho_s on CIFAR-100 (Fig. 19).

Scales (design guide section 8): at ``paper`` CIFAR-10/100 as published; at ``small`` both
CIFAR labels run MNIST-1D (:func:`flcore.papers.fedsam.runs.dataset_for`), with one seed;
the CIFAR-100 block runs alpha 0 only, which is the CIFAR-10 alpha = 0 run (the same config),
so its alpha = 0.5 column is not run at small, and the CIFAR-10 alpha = 0.05 column skips
FedDyn and SCAFFOLD (:data:`SMALL_SKIPPED_CELLS`); Table 9 and the rho_s sweep train a quarter
of the rounds.  These cuts keep the small book's training time.  ``smoke`` runs alpha 0 only.

Published numbers: ``published/fedgloss-table-{3,4,5,6,7,9,10}.csv``.  Claims of the paper
use the metrics registered here: ``communication`` (bits to reach FedAvg's accuracy, in units
of B) and ``speedup`` (T / rounds to reach it), computed with :mod:`flcore.reproduction.targets`,
and ``accuracy_at_progress`` (Table 6's Acc@50% / Acc@100%).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from flcore.config.scales import scale_defaults
from flcore.papers.fedgloss import runs as gloss_runs
from flcore.papers.fedgloss.runs import (
    ALGORITHM,
    GLOSS_ALGORITHMS,
    RESNET_CONFIG,
    RESNET_SETTINGS,
    GlossAlgorithm,
    run_config,
)
from flcore.papers.fedsam import runs as fedsam
from flcore.report import algorithm_color
from flcore.report.numbers import format_number
from flcore.report.ordering import ordering_table
from flcore.report.page import SMOKE_NOTE, verdict_counts
from flcore.report.plots import accuracy_curves, schedule_change
from flcore.report.tables import format_comparison, ours_accuracy, run_here
from flcore.reproduction.artifacts import RunSpec, no_runs, register_artifacts
from flcore.reproduction.claims import never_reached, register_metric
from flcore.reproduction.published import published, source
from flcore.reproduction.runner import run_metrics
from flcore.reproduction.stand_in import paper_dataset, stand_in_for
from flcore.reproduction.targets import accuracy_curve, cost_row, transmissions_per_round
from flcore.store.run import Run

if TYPE_CHECKING:
    import pandas as pd

PAPER = gloss_runs.PAPER
DATASETS = ("CIFAR-10", "CIFAR-100")
#: Table 3's heterogeneous CNN settings.
CNN_ALPHAS = {"CIFAR-10": (0.0, 0.05), "CIFAR-100": (0.0, 0.5)}
#: Alphas run below the paper scale (module docstring).
SCALE_CNN_ALPHAS = {
    "small": {"CIFAR-10": (0.0, 0.05), "CIFAR-100": (0.0,)},
    "smoke": {"CIFAR-10": (0.0,), "CIFAR-100": (0.0,)},
}
#: Table 9's homogeneous settings.
HOMOG_ALPHA = {"CIFAR-10": 100.0, "CIFAR-100": 1000.0}
CNN_PER_ROUND = 5
#: Fig. 19's server radii: CNN CIFAR-100 alpha 0 and ResNet-18 CIFAR-100 alpha 0.5 (grids
#: inferred from the paper's Table 13).  Below the paper scale the CNN grid is run around the
#: MNIST-1D default rho_s = 0.15, with a quarter of the rounds (:data:`SWEEP_ROUND_FRACTION`,
#: labelled ``rounds`` on the page) to keep the book's budget.
RHO_SERVER_GRID = {"CNN": (0.01, 0.05, 0.1, 0.2), "ResNet-18": (0.01, 0.05, 0.1, 0.5)}
SMALL_RHO_SERVER_GRID = (0.01, 0.15, 0.3)
SWEEP_ROUND_FRACTION = {"smoke": 1.0, "small": 1 / 4, "paper": 1.0}
#: Epochs of the centralized references below the paper scale (the presets' 20 at small cost
#: as much as a federated SAM run; the pooled MNIST-1D training set needs far fewer).
CENTRAL_EPOCHS = {"small": 4}


#: Centralized references on the pooled data (one client; a round is an epoch).
CENTRAL_METHODS = {"SAM": "centralized-sam", "SAM~": "centralized-samtilde", "SGD": "centralized-sgd"}
#: Table 9's rows.
HOMOG_ALGORITHMS = ("FedAvg", "FedSAM", "FedDyn", "FedDyn+SAM", "FedSMOO", "FedGloSS-SGD",
                    "FedGloSS-SGD w/o ADMM", "FedGloSS-SAM", "FedGloSS-SAM w/o ADMM")
SMALL_HOMOG_ALGORITHMS = ("FedGloSS-SAM", "FedGloSS-SAM w/o ADMM")
#: Table 3's cells run below the paper scale where the grid is cut to keep the book's budget:
#: the CIFAR-10 alpha = 0.05 column runs the SGD rows the claims compare (FedAvg, FedProx,
#: FedGloSS-SGD) and the whole SAM block; NaiveFedGloSS runs at alpha = 0 only.
SMALL_SKIPPED_CELLS = {("CIFAR-10", 0.05, "FedDyn"), ("CIFAR-10", 0.05, "SCAFFOLD"),
                       ("CIFAR-10", 0.05, "NaiveFedGloSS")}


def cnn_alphas(dataset_label: str, scale: str) -> tuple[float, ...]:
    """The heterogeneity levels of the CNN grid run at ``scale`` (module docstring)."""
    return SCALE_CNN_ALPHAS[scale][dataset_label] if scale in SCALE_CNN_ALPHAS else CNN_ALPHAS[dataset_label]


def _labels(dataset_label: str, algorithm: GlossAlgorithm, alpha: float, per_round: int, seed: int,
            model: str) -> dict[str, Any]:
    return {"dataset": dataset_label, "algorithm": algorithm.label, "alpha": float(alpha),
            "clients_per_round": int(per_round), "seed": int(seed), "model": model, "block": algorithm.block}


def gloss_cnn_run(dataset_label: str, algorithm_label: str, alpha: float, seed: int, scale: str,
                  **extra: Any) -> RunSpec:
    """One run of ``gloss-cnn-main`` (also Tables 6 and 9, Figs. 18 and 19 with ``extra``):
    the CNN (MNIST-1D's CNN below ``paper``) with 5 clients per round.  FedAvg and FedSAM are
    the ``sam-main`` runs of the FedSAM pages.  Hyper-parameters come from the presets."""
    algorithm = ALGORITHM[algorithm_label]
    if algorithm.fedsam_label is not None:
        config = fedsam.sam_main_run(dataset_label, algorithm.fedsam_label, alpha, CNN_PER_ROUND, seed, scale,
                                     **extra).config
    else:
        config = {"method": algorithm.method, "dataset": fedsam.dataset_for(dataset_label, scale),
                  "scale": scale, "alpha": float(alpha), "per_round": CNN_PER_ROUND, "seed": int(seed),
                  **algorithm.overrides, **extra}
    return RunSpec(_labels(dataset_label, algorithm, alpha, CNN_PER_ROUND, seed, "CNN"), config)


def gloss_resnet_run(dataset_label: str, algorithm_label: str, alpha: float, seed: int, scale: str,
                     **extra: Any) -> RunSpec:
    """One run of ``gloss-resnet-main``: ResNet-18-GN on CIFAR, 10 clients per round, 10k
    rounds (Table 12).  Only the ``paper`` scale runs it (module docstring)."""
    if not stand_in_for(scale, PAPER).is_paper:
        raise ValueError(f"scale: the ResNet-18 runs exist at the paper scale only, got {scale!r}")
    algorithm = ALGORITHM[algorithm_label]
    config = {"method": algorithm.method, "dataset": paper_dataset(dataset_label), "scale": scale,
              "alpha": float(alpha), "seed": int(seed), **RESNET_CONFIG, **algorithm.overrides, **extra}
    return RunSpec(_labels(dataset_label, algorithm, alpha, RESNET_CONFIG["per_round"], seed, "ResNet-18"),
                   config)


def central_run(dataset_label: str, optimizer: str, seed: int, scale: str) -> RunSpec:
    """A centralized reference (``gloss-central``): one client holding the pooled training
    set, a round is an epoch (epochs from the presets)."""
    config = {"method": CENTRAL_METHODS[optimizer], "dataset": fedsam.dataset_for(dataset_label, scale),
              "scale": scale, "seed": int(seed)}
    if scale in CENTRAL_EPOCHS:
        epochs = CENTRAL_EPOCHS[scale]
        config.update(rounds=epochs, eval_last=epochs, checkpoint_every=epochs)
    labels = {"dataset": dataset_label, "algorithm": f"Centralized {optimizer}", "seed": int(seed),
              "model": "CNN", "block": "central"}
    return RunSpec(labels, config)


# ----------------------------------------------------------------------------- run groups

def cnn_main_runs(scale: str, seeds: Sequence[int] = (0,),
                  algorithms: Sequence[str] = tuple(a.label for a in GLOSS_ALGORITHMS)) -> list[RunSpec]:
    """``gloss-cnn-main``: every (dataset, alpha, algorithm, seed) of the scale."""
    return [gloss_cnn_run(ds, label, alpha, seed, scale)
            for ds in DATASETS for alpha in cnn_alphas(ds, scale) for label in algorithms for seed in seeds
            if runs_cell(ds, alpha, label, scale)]


def runs_cell(dataset_label: str, alpha: float, algorithm_label: str, scale: str) -> bool:
    """Whether ``scale`` runs this (dataset, alpha, algorithm) cell (see :data:`SMALL_SKIPPED_CELLS`)."""
    skipped = (dataset_label, float(alpha), algorithm_label) in SMALL_SKIPPED_CELLS
    return stand_in_for(scale, PAPER).is_paper or not skipped


def resnet_main_runs(scale: str, seeds: Sequence[int] = (0,),
                     algorithms: Sequence[str] = tuple(a.label for a in GLOSS_ALGORITHMS)) -> list[RunSpec]:
    """``gloss-resnet-main`` at the paper scale; nothing below it (module docstring)."""
    if not stand_in_for(scale, PAPER).is_paper:
        return []
    return [gloss_resnet_run(ds, label, alpha, seed, scale)
            for ds, alpha in RESNET_SETTINGS for label in algorithms for seed in seeds]


def central_runs(scale: str, seeds: Sequence[int] = (0,),
                 optimizers: Sequence[str] = ("SAM", "SAM~")) -> list[RunSpec]:
    """``gloss-central``: the pooled-data references of each dataset label (below the paper
    scale both labels are the same MNIST-1D run)."""
    return [central_run(ds, opt, seed, scale) for ds in DATASETS for opt in optimizers for seed in seeds]


def table3_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    return cnn_main_runs(scale, seeds) + resnet_main_runs(scale, seeds)


def table6_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 6: FedGloSS-SAM and NaiveFedGloSS on the CNN settings, each read at 50% and 100%
    of the rounds (label ``training_progress``), and the centralized SAM / SAM~ bounds."""
    specs = []
    for ds in DATASETS:
        for alpha in cnn_alphas(ds, scale):
            for label in ("NaiveFedGloSS", "FedGloSS-SAM"):
                if not runs_cell(ds, alpha, label, scale):
                    continue
                for seed in seeds:
                    spec = gloss_cnn_run(ds, label, alpha, seed, scale)
                    for progress in (0.5, 1.0):
                        specs.append(RunSpec({**spec.labels, "training_progress": progress}, spec.config))
    return specs + central_runs(scale, seeds)


def table7_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 7: FedSAM / FedDyn+SAM / FedGloSS-SAM and FedAvg / FedDyn / FedGloSS-SGD, CNN at
    alpha 0 and (paper scale) ResNet-18."""
    labels = ("FedSAM", "FedDyn+SAM", "FedGloSS-SAM", "FedAvg", "FedDyn", "FedGloSS-SGD")
    cnn = [gloss_cnn_run(ds, label, 0.0, seed, scale) for ds in DATASETS for label in labels for seed in seeds]
    return cnn + resnet_main_runs(scale, seeds, labels)


def table9_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 9: the homogeneous CNN settings (``gloss-homog``).  Below the paper scale the
    CIFAR-10 setting only (alpha 100 on MNIST-1D; alpha 1000 would be a second near-iid run)
    and the rows :data:`SMALL_HOMOG_ALGORITHMS` (the ADMM ablation of FedGloSS-SAM is the
    table's point), with a quarter of the rounds
    like the rho_s sweep (:func:`sweep_rounds`)."""
    datasets = DATASETS if stand_in_for(scale, PAPER).is_paper else ("CIFAR-10",)
    labels = HOMOG_ALGORITHMS if stand_in_for(scale, PAPER).is_paper else SMALL_HOMOG_ALGORITHMS
    rounds = sweep_rounds(scale)
    extra = {} if rounds is None else {"rounds": rounds}
    return [gloss_cnn_run(ds, label, HOMOG_ALPHA[ds], seed, scale, **extra)
            for ds in datasets for label in labels for seed in seeds]


def cost_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Tables 5 and 10: the runs of Table 3 (their curves give the rounds to FedAvg's accuracy)."""
    return table3_runs(scale, seeds)


def central_references(scale: str) -> tuple[str, ...]:
    """The dashed references of Figs. 15-16: centralized SAM, and at the paper scale
    centralized SGD too (below it SAM only, to keep the book's budget)."""
    return ("SAM", "SGD") if stand_in_for(scale, PAPER).is_paper else ("SAM",)


def fig15_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    return ([s for s in cnn_main_runs(scale, seeds) if s.labels["dataset"] == "CIFAR-10"]
            + [s for s in central_runs(scale, seeds, central_references(scale)) if s.labels["dataset"] == "CIFAR-10"])


def fig16_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    return ([s for s in cnn_main_runs(scale, seeds) if s.labels["dataset"] == "CIFAR-100"]
            + [s for s in central_runs(scale, seeds, central_references(scale)) if s.labels["dataset"] == "CIFAR-100"])


def fig17_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 17: the ResNet-18 curves; nothing below the paper scale (module docstring)."""
    return resnet_main_runs(scale, seeds)


def fig18_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    return ([gloss_cnn_run(ds, label, alpha, seed, scale) for ds in DATASETS for alpha in cnn_alphas(ds, scale)
             for label in ("NaiveFedGloSS", "FedGloSS-SAM") for seed in seeds if runs_cell(ds, alpha, label, scale)]
            + central_runs(scale, seeds))


def rho_server_grid(model: str, scale: str) -> tuple[float, ...]:
    return RHO_SERVER_GRID[model] if stand_in_for(scale, PAPER).is_paper else SMALL_RHO_SERVER_GRID


def sweep_rounds(scale: str) -> int | None:
    """Rounds of the CNN rho_s sweep at ``scale`` (None: the scale's default)."""
    if SWEEP_ROUND_FRACTION[scale] == 1.0:
        return None
    default = scale_defaults(scale, fedsam.dataset_for("CIFAR-100", scale))["rounds"]
    return int(round(default * SWEEP_ROUND_FRACTION[scale]))


def fig19_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 19: FedGloSS-SAM on CIFAR-100 over the server radius rho_s (label ``rho_server``):
    the CNN at alpha 0, and at the paper scale ResNet-18 at alpha 0.5."""
    specs = []
    rounds = sweep_rounds(scale)
    extra = {} if rounds is None else {"rounds": rounds}
    for rho in rho_server_grid("CNN", scale):
        for seed in seeds:
            spec = gloss_cnn_run("CIFAR-100", "FedGloSS-SAM", 0.0, seed, scale, gloss_rho_server=rho, **extra)
            specs.append(RunSpec({**spec.labels, "rho_server": rho}, spec.config))
    if stand_in_for(scale, PAPER).is_paper:
        for rho in rho_server_grid("ResNet-18", scale):
            for seed in seeds:
                spec = gloss_resnet_run("CIFAR-100", "FedGloSS-SAM", 0.5, seed, scale, gloss_rho_server=rho)
                specs.append(RunSpec({**spec.labels, "rho_server": rho}, spec.config))
    return specs


#: Columns of the published FedGloSS tables that hold numbers (blank: not converged / not reached).
NUMERIC_COLUMNS = ("alpha", "accuracy", "std", "rounds", "speedup", "cost_B", "lambda_1", "lambda_1_std",
                   "training_progress")


def published_numeric(artifact_id: str) -> pd.DataFrame:
    """:func:`flcore.reproduction.published.published` with the number columns as floats
    (blank cells -- a run that did not converge, a target not reached -- as NaN)."""

    frame = published(artifact_id).copy()
    for column in NUMERIC_COLUMNS:
        if column in frame:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame


# ----------------------------------------------------------------------------- metrics

def _curve(run_dir: str) -> tuple[tuple[int, float], ...]:
    """The stored ``(round, accuracy)`` curve of a run (cached until its log changes)."""
    log = Path(run_dir) / "metrics.jsonl"
    return _read_curve(str(run_dir), log.stat().st_mtime_ns if log.is_file() else 0)


@lru_cache(maxsize=512)
def _read_curve(run_dir: str, stamp: int) -> tuple[tuple[int, float], ...]:

    path = Path(run_dir)
    return tuple(accuracy_curve(Run(path, path.name).read_metrics()))


def reference_spec(labels: dict, scale: str, seed: int) -> RunSpec:
    """FedAvg's run in the same setting (dataset, alpha, model) as a run with ``labels``."""
    if labels.get("model") == "ResNet-18":
        return gloss_resnet_run(labels["dataset"], "FedAvg", labels["alpha"], seed, scale)
    return gloss_cnn_run(labels["dataset"], "FedAvg", labels["alpha"], seed, scale)


def _mean_last_100(run_dir: Path) -> float | None:

    value = Run(run_dir, run_dir.name).summary().get("mean_last_100")
    return None if value is None else float(value)


def cost_to_fedavg(row: dict) -> dict | None:
    """Rounds, speed-up and relative bits for the run of ``row`` (a ``results_frame`` row) to
    reach FedAvg's accuracy in the same setting and seed (Tables 5 and 10).

    The target is FedAvg's accuracy as Table 3 reports it (mean over the last 100 rounds);
    T is FedAvg's number of rounds.  FedAvg itself is the reference: T rounds, 1x, 1 B (the
    paper's FedAvg row).  ``None`` when FedAvg's run is not in the same store.
    """
    run_dir = row.get("run_dir")
    if not run_dir or not (Path(run_dir) / "config.json").is_file() or row.get("alpha") is None:
        return None
    config = run_config(run_dir)
    reference = reference_spec(row, config["scale"], int(row.get("seed", config.get("seed", 0))))
    ref_id = reference.run_id()
    ref_dir = Path(run_dir).parent / ref_id
    target = _mean_last_100(ref_dir)
    if target is None:
        return None
    total = int(run_config(str(ref_dir))["rounds"])
    if ref_id == Path(run_dir).name:
        return {"rounds": total, "speedup": 1.0, "cost": None, "relative_bits": 1.0, "target": target}
    out = cost_row(list(_curve(str(run_dir))), target, config["method"], total)
    out["target"] = target
    return out


def bits_of(cost: dict) -> float:
    """Metric ``relative_bits`` of a :func:`cost_to_fedavg` result: the bits to reach FedAvg's
    accuracy in units of B; infinite when never reached."""
    return math.inf if cost["relative_bits"] is None else float(cost["relative_bits"])


def speedup_of(cost: dict) -> float:
    """Metric ``speedup`` of a :func:`cost_to_fedavg` result: T / rounds to reach FedAvg's
    accuracy; 0 when never reached."""
    return 0.0 if cost["speedup"] is None else float(cost["speedup"])


def _communication(row: dict) -> float | None:
    cost = cost_to_fedavg(row)
    return None if cost is None else bits_of(cost)


def _speedup(row: dict) -> float | None:
    cost = cost_to_fedavg(row)
    return None if cost is None else speedup_of(cost)


#: A run that never reached FedAvg's accuracy: its bits (infinite) and speed-up (0) are censored.
_never_reached = never_reached(lambda row: cost_to_fedavg(row), lambda cost: cost["speedup"] is not None)


def accuracy_at_progress(curve: Sequence[tuple[int, float]], total_rounds: int, progress: float,
                         mean_last_100: float | None = None) -> float | None:
    """Table 6's Acc@p (%): at ``progress`` = 1 the paper's accuracy (mean of the last 100
    rounds, ``mean_last_100``); below 1 the test accuracy of the last evaluation at or
    before round ``progress x T``."""
    if progress >= 1.0:
        return None if mean_last_100 is None else 100.0 * mean_last_100
    cutoff = progress * total_rounds
    before = [acc for rnd, acc in curve if rnd <= cutoff]
    return 100.0 * before[-1] if before else None


def _accuracy_at_progress(row: dict) -> float | None:
    run_dir = row.get("run_dir")
    if not run_dir or not (Path(run_dir) / "config.json").is_file():
        return None
    progress = row.get("training_progress")
    progress = 1.0 if progress is None or (isinstance(progress, float) and math.isnan(progress)) else float(progress)
    total = int(run_config(run_dir)["rounds"])
    return accuracy_at_progress(_curve(str(run_dir)), total, progress, row.get("mean_last_100"))


#: The per-run numbers of Tables 5 and 10, each a mean per cell with its ``_sd``.
COST_COLUMNS = ("rounds", "speedup", "relative_bits", "target")


def cost_frame(runs: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Tables 5 and 10 from the runs of :func:`~flcore.reproduction.runner.ensure_runs`: one row
    per ``keys`` group over its finished runs with a FedAvg run beside them (each run once; a
    diverged run is left out, counted in ``left_out``), as the claims' verdicts read them
    (:func:`flcore.reproduction.table_check.printed_cell`):

    - ``speedup``: the mean of the metric ``speedup`` (T / rounds), a seed that never reaches
      FedAvg's accuracy counted as 0 (:func:`speedup_of`), over all ``seeds``;
    - ``relative_bits`` (x B) and ``rounds``: the mean over the seeds that reach it (the
      metric's finite values: :func:`bits_of` is infinite for the others);
    - ``target``: FedAvg's accuracy (%), mean over the seeds;

    each with its standard deviation (``<column>_sd``, NaN below two values); ``seeds`` (n),
    ``never`` (the seeds of n that never reach the target), ``reached`` (the fraction that
    do), ``left_out`` and ``status`` (``finished`` when a seed has a cost, else the runs')."""
    once = runs.drop_duplicates([*keys, "run_id"]) if "run_id" in runs else runs
    rows = []
    for row in once.to_dict("records"):
        out = {key: row.get(key) for key in keys}
        out["status"] = row.get("status")
        cost = cost_to_fedavg(row) if row.get("status") == "finished" else None
        if cost is not None:
            out.update(rounds=cost["rounds"], speedup=speedup_of(cost), relative_bits=bits_of(cost),
                       target=100.0 * cost["target"], never=cost["rounds"] is None, costed=True)
        rows.append(out)
    frame = pd.DataFrame(rows)
    for column in (*COST_COLUMNS, "never", "costed"):
        if column not in frame:
            frame[column] = np.nan
    cells = []
    for key, group in frame.groupby(list(keys), sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        costed = group[group["costed"].eq(True)]
        cell = dict(zip(keys, key))
        for column in COST_COLUMNS:
            values = pd.to_numeric(costed[column], errors="coerce")
            values = values[np.isfinite(values.to_numpy(dtype=float))]
            cell[column] = values.mean() if len(values) else np.nan
            cell[f"{column}_sd"] = values.std() if len(values) > 1 else np.nan
        never = int(costed["never"].eq(True).sum())
        statuses = sorted(set(group["status"]))
        cell.update(seeds=len(costed), never=never,
                    reached=(len(costed) - never) / len(costed) if len(costed) else np.nan,
                    left_out=int(group["status"].eq("diverged").sum()),
                    status="finished" if len(costed) else "diverged" if "diverged" in statuses else statuses[0])
        cells.append(cell)
    return pd.DataFrame(cells)


def progress_accuracy_frame(runs: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Table 6: accuracy (%) at each run's ``training_progress`` (see :func:`accuracy_at_progress`),
    mean (``ours``), sd (``sd``, NaN for one seed) and number (``n``) of the finished seeds per
    ``keys`` group (``keys`` should include ``training_progress``): a diverged seed is left
    out, as the claims' verdicts leave it out."""
    rows = []
    for row in runs.to_dict("records"):
        value = _accuracy_at_progress(row) if row.get("status") == "finished" else None
        rows.append({**{key: row.get(key) for key in keys}, "ours": value, "status": row.get("status")})
    frame = pd.DataFrame(rows)
    frame["ours"] = pd.to_numeric(frame["ours"], errors="coerce")
    return (frame.groupby(list(keys), sort=False, dropna=False)
            .agg(ours=("ours", "mean"), sd=("ours", "std"), n=("ours", "count"), status=("status", "first"),
                 seeds=("ours", "count")).reset_index())


def _cost_text(value, digits: int = 1, unit: str = "") -> str:
    if pd.isna(value):
        return "-"
    return f"{value:.{digits}f}{unit}" if digits else f"{int(value)}{unit}"


def cost_cell_text(mean, sd, n, never: int = 0, digits: int = 2, unit: str = "", never_counted: str = "") -> str:
    """One of our cells of Tables 5 and 10: the mean over ``n`` seeds with its sd and n
    (``"3.75x \u00b1 0.20 (n = 3)"``), and how many seeds never reached FedAvg's accuracy
    (``"80 \u00b1 14.1 (n = 2; 1 never reached)"``; ``never_counted``: how a mean over all ``n``
    counts them, e.g. ``", counted as 0x"``).  ``"-"``: no seed reaches it (``"- (3 never
    reached)"`` over several), or no run has a cost."""
    n = 0 if pd.isna(n) else int(n)
    never = 0 if pd.isna(never) else int(never)
    if pd.isna(mean) or (never_counted and never and never >= n):
        return "-" + (f" ({never} never reached)" if never > 1 else "")
    text = f"{mean:.{digits}f}{unit}"
    if n > 1 and not pd.isna(sd):
        text += f" \u00b1 {sd:.{digits}f}"
    notes = ([f"n = {n}"] if n > 1 or never else []) + ([f"{never} never reached{never_counted}"] if never else [])
    return text + (f" ({'; '.join(notes)})" if notes else "")


def cost_comparison(runs: pd.DataFrame, artifact_id: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tables 5 and 10: ``(merged, ours, published)``, our :func:`cost_frame` (restricted to the
    table's own settings, the MobileNetV2 column left out: Table 4's page) joined with the
    published rounds / speed-up / bits, suffixes `` (ours)`` and `` (paper)``."""
    keys = ["model", "dataset", "alpha", "block", "algorithm"]
    paper_values = published_numeric(artifact_id)
    paper_values = paper_values[paper_values["model"] != "MobileNetV2"]
    ours = cost_frame(runs, keys)
    settings = paper_values[["model", "dataset", "alpha"]].drop_duplicates()
    ours = ours.merge(settings, on=["model", "dataset", "alpha"])
    merged = ours.merge(paper_values.drop(columns=["paper_name", "rounds_printed"]), on=keys, how="left",
                        suffixes=(" (ours)", " (paper)"))
    return merged, ours, paper_values


def cost_cells(merged: pd.DataFrame) -> pd.DataFrame:
    """The cells of Tables 5 and 10 from :func:`cost_comparison`: rounds, speed-up and bits,
    the paper's (``2.0x``, ``0.5 B``) beside ours (:func:`cost_cell_text`: the mean over the
    seeds with sd and n, the seeds that never reach the target said); "-": never reached;
    ``\u2717``: the paper's run did not converge.  The published speed-up column is only
    there when the table has one (Table 10)."""
    def column(name, default=float("nan")):
        return merged[name] if name in merged else pd.Series(default, index=merged.index)

    def ours(name):
        # the merge suffixes " (ours)" only where the published table has the column too
        # (Table 5 prints no speed-up): ours is then the plain name
        return column(f"{name} (ours)") if f"{name} (ours)" in merged else column(name)

    failed = merged["note"].fillna("").str.startswith("did not converge")
    seeds, never = column("seeds", 1), column("never", 0).fillna(0)
    # rounds and bits average the seeds that reach the target, the speed-up every seed (0 if not)
    reaching = seeds - never

    def paper_cells(name, digits, unit=""):
        return ["\u2717" if no else _cost_text(v, digits, unit) for v, no in zip(column(name), failed)]

    def our_cells(name, sd, n, digits, unit="", counted=""):
        return [cost_cell_text(v, s, k, m, digits, unit, counted)
                for v, s, k, m in zip(ours(name), column(sd), n, never)]

    rounds = ours("rounds")
    round_digits = [0 if pd.isna(v) or float(v).is_integer() else 1 for v in rounds]
    shown = pd.DataFrame({"block": merged["block"], "algorithm": merged["algorithm"],
                          "rounds (paper)": paper_cells("rounds (paper)", 0),
                          "rounds (ours)": [cost_cell_text(v, s, k, m, d) for v, s, k, m, d in
                                            zip(rounds, column("rounds_sd"), reaching, never, round_digits)],
                          "speed-up (paper)": paper_cells("speedup (paper)", 1, "x"),
                          "speed-up (ours)": our_cells("speedup", "speedup_sd", seeds, 2, "x", ", counted as 0x"),
                          "bits (paper)": paper_cells("cost_B", 1, " B"),
                          "bits (ours)": our_cells("relative_bits", "relative_bits_sd", reaching, 2, " B")})
    if "speedup (paper)" not in merged:
        shown = shown.drop(columns=["speed-up (paper)"])
    return shown


def show_cost_tables(page, runs: pd.DataFrame, scale: str) -> pd.DataFrame:
    """Tables 5 and 10 on ``page``: one table per setting (:func:`cost_cells`) whose caption
    names the method with the fewest bits, ours and the paper's, and FedAvg's accuracy (the
    target); returns the merged frame of :func:`cost_comparison`."""
    from IPython.display import Markdown, display


    merged, ours, paper_values = cost_comparison(runs, page.artifact_id)
    shown = cost_cells(merged)
    setting = ["model", "dataset", "alpha"]
    for (model, label, alpha), idx in merged.groupby(setting, sort=False).groups.items():
        part = merged.loc[idx]
        reached = part.dropna(subset=["relative_bits"])
        fewest = reached.loc[reached["relative_bits"].idxmin(), "algorithm"] if len(reached) else "none"
        published_part = part.dropna(subset=["cost_B"])
        paper_fewest = (published_part.loc[published_part["cost_B"].idxmin(), "algorithm"]
                        if len(published_part) else "none")
        trained = stand_in_for(scale, PAPER)
        stand_in = "" if trained.is_paper else f" (ours: {trained.name} CNN at the {scale} scale)"
        target = part["target"].dropna()
        target_text = f"; FedAvg's accuracy {target.iloc[0]:.1f}%" if len(target) else ""
        same = {"published": paper_values, "ours": ours}
        page.table(shown.loc[idx], f"{model}, {label}, alpha = {alpha:g}{stand_in}{target_text}: fewest bits to "
                                   f"reach FedAvg's accuracy, ours {fewest}, paper {paper_fewest}.",
                   show=shown.loc[idx].set_index(["block", "algorithm"]),
                   downloads={name: frame[(frame["model"] == model) & (frame["dataset"] == label)
                                          & (frame["alpha"] == alpha)] for name, frame in same.items()})
    display(Markdown(f"Published values: {source(page.artifact_id)['source']}. The Landmarks-User-160k column "
                     "(MobileNetV2) is on the page of Table 4: its data cannot be had offline."))
    return merged


def show_cost_orderings(page, merged: pd.DataFrame) -> float:
    """Tables 5 and 10: per setting the methods from fewest to most bits (FedAvg left out; a
    method that never reaches the target ranks last), the paper's and ours, with Kendall's tau;
    returns the mean tau over the settings."""

    ranked = merged[merged["algorithm"] != "FedAvg"].copy()
    ranked["paper"] = -ranked["cost_B"]
    ranked["ours"] = -ranked["relative_bits"].fillna(float("inf"))
    ranked.loc[ranked["status"] != "finished", "ours"] = float("nan")
    orderings = ordering_table(ranked, ["model", "dataset", "alpha"])
    mean_tau = orderings["Kendall's \u03c4"].mean() if len(orderings) else float("nan")
    page.table(orderings, show=orderings.set_index(["model", "dataset", "alpha"]) if len(orderings) else orderings,
               caption=f"The methods ranked by the bits they need (fewest first), by the paper and by our runs; "
                       f"mean Kendall's \u03c4 over the {len(orderings)} settings: {mean_tau:.2f}.")
    return mean_tau


def cost_findings(verdicts: pd.DataFrame, mean_tau: float, scale: str) -> list[str]:
    """Tables 5 and 10's "What we found": the agreement of the rankings by bits and the
    claims' verdict counts (and, at ``smoke``, that it proves the code path only)."""

    lines = [f"At the **{scale}** scale the paper's and our rankings by bits agree with a mean Kendall's \u03c4 of "
             f"{mean_tau:.2f}; {verdict_counts(verdicts)}."]
    if scale == "smoke":
        lines.append(SMOKE_NOTE)
    return lines


def final_accuracy_leaders(federated: pd.DataFrame, panels: Sequence[str]) -> tuple[pd.Series, dict]:
    """Figs. 15 and 16: each (panel, algorithm)'s final accuracy (%, ``mean_last_100`` of its
    first seed; runs without one left out) and, per panel of ``panels`` that has runs, the
    algorithm with the highest."""
    final = federated.drop_duplicates(["panel", "algorithm"]).set_index(["panel", "algorithm"])["mean_last_100"]
    final = final.astype(float).mul(100).dropna()
    leaders = {panel: final[panel].idxmax() for panel in panels if panel in final.index.get_level_values(0)}
    return final, leaders


def accuracy_leaders_text(final: pd.Series, leaders: dict) -> str:
    """``"panel: method (81.2%); ..."`` from :func:`final_accuracy_leaders`."""
    return "; ".join(f"{p}: {name} ({final[(p, name)]:.1f}%)" for p, name in leaders.items())


def show_accuracy_curves(page, runs: pd.DataFrame, dataset_label: str, scale: str,
                         store=None) -> tuple[pd.Series, dict]:
    """Figs. 15 (CIFAR-10) and 16 (CIFAR-100) of the FedGloSS paper: test accuracy against
    rounds with the CNN, one panel per heterogeneity level and client optimizer (SAM / SGD
    block), the centralized reference of the panel's optimizer as a dashed line; returns
    :func:`final_accuracy_leaders`."""

    federated = runs[runs["block"] != "central"].copy()
    federated["panel"] = [f"alpha = {a:g}, {b} clients" for a, b in zip(federated["alpha"], federated["block"])]
    panels = list(dict.fromkeys(f"alpha = {a:g}, {b} clients" for a in cnn_alphas(dataset_label, scale)
                                for b in ("SAM", "SGD")))
    metrics = run_metrics(federated, store=store)
    order = [a.label for a in GLOSS_ALGORITHMS]
    figure = accuracy_curves(metrics, hue="algorithm", col="panel", hue_order=order, col_order=panels, height=3.2)
    central = runs[runs["block"] == "central"].set_index("algorithm")["final_accuracy"].astype(float) * 100
    for ax in figure.axes:
        block = "SAM" if "SAM clients" in ax.get_title() else "SGD"
        value = central.get(f"Centralized {block}")
        if value is not None and not pd.isna(value):
            ax.axhline(value, linestyle="--", color="0.4", linewidth=1.0)
            ax.annotate(f"centralized {block}", (0.02, value), xycoords=("axes fraction", "data"), fontsize=8,
                        va="bottom", color="0.3")
    final, leaders = final_accuracy_leaders(federated, panels)
    data_name = stand_in_for(scale, PAPER).data_name(dataset_label)
    page.figure(figure, f"Test accuracy against rounds on {data_name} with the CNN. Highest at the end (mean of the "
                        "last 100 rounds): " + "; ".join(f"{p}: {name}" for p, name in leaders.items()) + ".",
                alt=f"Line charts of test accuracy in percent against communication rounds on {data_name}, one "
                    "panel per heterogeneity level and client optimizer, one line per method: "
                    + "; ".join(f"{p}: " + ", ".join(f"{a} ending at {v:.1f}%" for a, v in final[p].items())
                                for p in leaders) + ". Dashed horizontal lines: centralized references.")
    return final, leaders


def best_in_block(comparison: pd.DataFrame, column: str, block: str) -> str:
    """The algorithm of ``comparison``'s ``block`` (``SGD`` / ``SAM``) with the highest
    ``column`` among the cells run here (``"none"`` where none has a value)."""
    shown = run_here(comparison)
    shown = shown[shown["block"] == block].dropna(subset=[column])
    return shown.loc[shown[column].idxmax(), "algorithm"] if len(shown) else "none"


def show_table3(page, comparison: pd.DataFrame, paper_values: pd.DataFrame, cells: pd.DataFrame,
                scale: str) -> None:
    """Table 3 of the FedGloSS paper: one table per model and data set of the published
    values (every published cell: :func:`flcore.report.tables.paper_vs_ours`' ``comparison``), with
    ours beside them (the difference at the ``paper`` scale only), captioned with the best
    SGD and SAM method per alpha, the paper's and ours, among the cells run here; the CSVs
    are ``paper_values`` and our ``cells`` of the table."""
    at_paper = stand_in_for(scale, PAPER).is_paper
    order = {"algorithm": [a.label for a in GLOSS_ALGORITHMS]}
    for (model, label), part in comparison.groupby(["model", "dataset"], sort=False):
        stand_in = "" if at_paper else f" (ours: {stand_in_for(scale, PAPER).name} CNN at the {scale} scale)"
        ran = run_here(part)
        if len(ran):
            findings = "; ".join(
                f"alpha = {alpha:g}: best SGD {best_in_block(block, 'ours', 'SGD')} (paper "
                f"{best_in_block(block, 'paper', 'SGD')}), best SAM {best_in_block(block, 'ours', 'SAM')} (paper "
                f"{best_in_block(block, 'paper', 'SAM')})" for alpha, block in ran.groupby("alpha", sort=False))
            findings = f"Among the cells run here: {findings}."
        else:
            findings = f"No cell of this table runs at the {scale} scale."
        page.table(part, f"{model}, {label}{stand_in}: accuracy (%) by block, algorithm and alpha. {findings}",
                   show=format_comparison(part, ["block", "algorithm"], ["alpha"], order, delta=at_paper),
                   downloads={"published": paper_values[(paper_values["model"] == model)
                                                        & (paper_values["dataset"] == label)],
                              "ours": cells[(cells["model"] == model) & (cells["dataset"] == label)]})


#: The two methods Fig. 18 compares.
FIG18_METHODS = ("FedGloSS-SAM", "NaiveFedGloSS")


def fig18_panels(federated: pd.DataFrame) -> pd.DataFrame:
    """One row per panel of Fig. 18 (``federated``: the runs with a ``panel`` column, in
    panel order): each method's final accuracy (%, mean of the last 100 rounds) as the mean
    over its seeds (:func:`flcore.report.ours_accuracy`: a diverged seed left out), with
    ``<method> sd`` and ``<method> n``; missing where the scale does not run it; and the
    distinct runs the panel draws."""
    rows = []
    for panel, part in federated.groupby("panel", sort=False):
        row = {"panel": panel}
        for method in FIG18_METHODS:
            cell = part[part["algorithm"] == method].drop_duplicates("run_id")
            mean = ours_accuracy(cell, ["algorithm"]).to_dict("records")[0] if len(cell) else {}
            found = mean.get("status") == "finished"
            row[method] = float(mean["ours"]) if found else float("nan")
            row[f"{method} sd"] = float(mean["ours_std"]) if found else float("nan")
            row[f"{method} n"] = int(mean["seeds"]) if found else 0
        row["runs"] = int(part["run_id"].nunique())
        rows.append(row)
    return pd.DataFrame(rows, columns=["panel", *(f"{m}{s}" for m in FIG18_METHODS for s in ("", " sd", " n")),
                                       "runs"])


def fig18_ends(panels: pd.DataFrame) -> str:
    """``"CIFAR-10, alpha = 0: FedGloSS 70.1% \u00b1 0.4 (n = 3), NaiveFedGloSS 69.8%; CIFAR-10,
    alpha = 0.05: FedGloSS 71.0%, NaiveFedGloSS not run"``: :func:`fig18_panels` in words (sd
    and n where a method has several seeds)."""
    def value(row, method):
        mean, sd, n = row[method], row.get(f"{method} sd"), row.get(f"{method} n", 1)
        if _missing(mean):
            return "not run"
        return f"{mean:.1f}%" + ("" if _missing(sd) or not n or n < 2 else f" \u00b1 {sd:.1f} (n = {int(n)})")

    return "; ".join(f"{row['panel']}: FedGloSS {value(row, 'FedGloSS-SAM')}, NaiveFedGloSS "
                     f"{value(row, 'NaiveFedGloSS')}" for row in panels.to_dict("records"))


def fig18_communication_curves(metrics: pd.DataFrame, panels: Sequence[str]):
    """Fig. 18's curves against the model-sized vectors each client has exchanged (rounds x
    the method's transmissions per round, from the method registry): ``metrics`` as
    :func:`~flcore.reproduction.runner.run_metrics` gives them with a ``panel`` column, drawn
    by :func:`flcore.report.plots.accuracy_curves` (several seeds: their mean with a band).  The
    two methods switch to evaluating every round at different exchange counts: a dotted line
    in each method's colour marks where (:func:`flcore.report.plots.schedule_change`)."""
    exchanged = metrics.copy()
    per_round = {label: transmissions_per_round(ALGORITHM[label].method) for label in FIG18_METHODS}
    exchanged["round"] = exchanged["round"] * exchanged["algorithm"].map(per_round)
    figure = accuracy_curves(exchanged, hue="algorithm", col="panel", hue_order=list(FIG18_METHODS),
                             col_order=list(panels), height=3.2)
    evaluated = metrics[metrics["test_accuracy"].notna()]
    for ax, panel in zip(figure.axes, panels):
        ax.set_xlabel("vectors exchanged per client")
        for label in FIG18_METHODS:
            mine = evaluated[(evaluated["panel"] == panel) & (evaluated["algorithm"] == label)]
            change = schedule_change(mine["round"])
            if change is not None:
                ax.axvline(change * per_round[label], color=algorithm_color(label), linestyle=":", linewidth=1.0)
    return figure


def fig18_coverage(panels: pd.DataFrame, scale: str) -> str:
    """The sentence that says which panels compare the two methods at ``scale``, counted
    from :func:`fig18_panels`."""
    both = panels.dropna(subset=list(FIG18_METHODS))
    alone = panels[~panels["panel"].isin(both["panel"])]
    text = (f"At the {scale} scale {len(both)} of the {len(panels)} panels draw both methods"
            + (f" ({'; '.join(both['panel'])})" if len(both) else ""))
    if len(alone):
        text += f"; {' and '.join(alone['panel'])} {'has' if len(alone) == 1 else 'have'} one method only"
    return text + "."


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _fedavg_reference(spec: RunSpec) -> list[RunSpec]:
    """The run :func:`cost_to_fedavg` reads beside a cell's: FedAvg's in the same setting and
    seed (trained with the claim's runs: ``flcore claims --decide``)."""
    return [reference_spec(spec.labels, spec.config.get("scale", "small"),
                           int(spec.labels.get("seed", spec.config.get("seed", 0))))]


register_metric("relative_bits", _communication, "x B (FedAvg's bits over all rounds)", companions=_fedavg_reference,
                censored=_never_reached)
register_metric("speedup", _speedup, "x speed-up (T / rounds)", companions=_fedavg_reference, censored=_never_reached)
register_metric("accuracy_at_progress", _accuracy_at_progress, "points", accuracy=True)


# ----------------------------------------------------------------------------- artifacts

register_artifacts(PAPER, {
    "fedgloss-table-3": table3_runs,
    "fedgloss-table-4": no_runs,
    "fedgloss-table-5": cost_runs,
    "fedgloss-table-6": table6_runs,
    "fedgloss-table-7": table7_runs,
    "fedgloss-table-9": table9_runs,
    "fedgloss-table-10": cost_runs,
    "fedgloss-fig-3": no_runs,
    "fedgloss-fig-15": fig15_runs,
    "fedgloss-fig-16": fig16_runs,
    "fedgloss-fig-17": fig17_runs,
    "fedgloss-fig-18": fig18_runs,
    "fedgloss-fig-19": fig19_runs,
})


def equal_communication(frame) -> dict:
    """Table 6 at equal communication: per (dataset, alpha) of ``frame`` (columns ``dataset``,
    ``alpha``, ``algorithm``, ``training_progress``, ``ours``), FedGloSS-SAM's accuracy at 100%
    of the rounds minus NaiveFedGloSS's at 50% (NaiveFedGloSS exchanges twice per round, so
    both have sent as much); a cell lacking either value is left out."""
    out = {}
    for (dataset, alpha), part in frame.groupby(["dataset", "alpha"], sort=False):
        cell = part.set_index(["algorithm", "training_progress"])["ours"]
        if ("FedGloSS-SAM", 1.0) in cell and ("NaiveFedGloSS", 0.5) in cell:
            out[(dataset, alpha)] = cell[("FedGloSS-SAM", 1.0)] - cell[("NaiveFedGloSS", 0.5)]
    return out


def ladder_text(comparison: pd.DataFrame, block: str, names: Sequence[str]) -> str:
    """One ablation ladder of Table 7 in our numbers: ``"FedSAM 41.2 → FedDyn+SAM 44.0 → ..."``,
    the first cell run here of each of ``names`` in the rows of ``block`` (``SAM`` or ``SGD``
    clients), a missing one printed as the book prints a missing number."""
    part = run_here(comparison[comparison["block"] == block])
    firsts = part.drop_duplicates("algorithm").set_index("algorithm")["ours"]
    return " \u2192 ".join(f"{name} {format_number(firsts.get(name))}" for name in names)


def landmarks_accuracy_text(accuracy: float, std: float) -> str:
    """A Table 4 cell as the page prints it: ``"63.2 ± 0.4"``, or ``"✗ (did not converge)"``
    for a run without a number (NaN)."""
    return "\u2717 (did not converge)" if accuracy != accuracy else f"{accuracy:.1f} \u00b1 {std:.1f}"


def show_landmarks(page) -> pd.DataFrame:
    """Table 4 on ``page`` (published only: Landmarks-User-160k is not regenerated here): the
    accuracies as published (:func:`landmarks_accuracy_text`), captioned with the most
    accurate method and its gain over FedAvg; returns the published table."""
    table = published_numeric(page.artifact_id)
    shown = table.assign(accuracy=[landmarks_accuracy_text(a, s) for a, s in zip(table["accuracy"], table["std"])])
    best = table.loc[table["accuracy"].idxmax()]
    fedavg = table.set_index("algorithm").loc["FedAvg", "accuracy"]
    page.table(table, f"MobileNetV2 on Landmarks-User-160k as published: {best['algorithm']} is the most accurate "
                      f"({best['accuracy']:.1f}%, {best['accuracy'] - fedavg:+.1f} points over FedAvg) at FedAvg's "
                      "communication per round; SCAFFOLD and FedGAMMA do not converge.",
               show=shown[["algorithm", "paper_name", "comm_cost", "accuracy"]].set_index("algorithm"),
               downloads={"published": table})
    return table
