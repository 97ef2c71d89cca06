"""The FedGloSS paper's analysis artifacts: Hessian eigenvalues, loss landscapes, the
training-time records (delta_eps, ||w^t||) and the NaiveFedGloSS-FedGloSS interpolation.

Runs
----
Every artifact here reads the ``gloss-cnn-main`` group of the paper's ``inventory.yaml``: the paper's
heterogeneous CNN grid, 100 clients, 5 per round, the methods' presets and nothing else
(:func:`gloss_run`; FedAvg and FedSAM through :func:`flcore.papers.fedsam.runs.sam_main_run`,
so they are the FedSAM pages' runs).  Scales: ``paper`` -- CIFAR-10 at alpha 0 / 0.05 and
CIFAR-100 at alpha 0 / 0.5; ``small`` -- MNIST-1D at alpha 0 and 0.05 (the CIFAR-10
settings; the CIFAR-100 alpha = 0 cells name the same MNIST-1D runs, so the claims on
them are checked with no extra run); ``smoke`` -- alpha 0 only.

Three kinds of run read more than the final model, and are extra runs (a config field that
records enters the run id; recorded runs train alone), kept to a few configurations:

- *recorded* runs (:func:`recorded_run`): alpha = 0, ``snapshot_rounds = [T]`` (the global
  model and the 5 client models of the last round, Table 1 and Figs. 2, 5, 10, 11) and the
  probes ``param_norm`` (Fig. 8) and, for FedGloSS, ``delta_eps`` (Fig. 4).  At ``small``
  and ``smoke`` they are Table 1's methods; at ``paper`` Fig. 8 reads ResNet-18 runs
  instead (its published setting);
- FedGloSS-SAM without ADMM with the ``delta_eps`` probe (Fig. 4's other series);
- NaiveFedGloSS (Fig. 9, the ``gloss-naive`` group), a plain run.

Analysis protocol (what the paper leaves open, our choices)
-----------------------------------------------------------
- lambda_1 of a global model (Table 8, Fig. 7; metric ``lambda_max``): power iteration (20
  products at ``paper`` and ``small``, tolerance 1e-4) on the test set (the official code's
  eigenvalue script uses it), a random subset of ``ANALYSIS[scale]["samples"]`` examples
  below ``paper``.  The repository averages the last 100 global models first; a run stores
  its final model only, which is what we analyse (a known difference).
- Table 1 (metric ``client_lambda_max``): the top eigenvalue of each of the 5 client models
  of the last round, on the client's own training data (``local``) and on the pooled
  training data of all clients (``global``, the paper's D = union of the D_k; a subset below
  ``paper``).  The paper identifies a client by the class it holds; our last round samples
  other clients, so the paper's column ``i`` is matched to our ``i``-th sampled client, and
  the table shows the class ours holds.
- Landscapes: ``L(w + a d1 + b d2)`` for ``a, b`` in ``[-1, 1]`` (the paper's range) on the
  pooled training data, filter-normalised directions drawn from the run's seed and rescaled
  to each model (:func:`flcore.analysis.landscape.shared_direction_landscapes`), so the
  compared methods share the random plane; grid 21 x 21 at ``paper``, 11 x 11 at ``small``,
  5 x 5 at ``smoke``.
"""
from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import torch

from flcore.analysis.evaluation import DatasetEvaluator
from flcore.analysis.interpolation import interpolate
from flcore.analysis.io import load_run
from flcore.analysis.landscape import (
    grid_points,
    landscapes_on_datasets,
    random_directions,
    shared_direction_landscapes,
)
from flcore.analysis.probes import client_top_eigenvalue
from flcore.analysis.recording import load_snapshot, snapshot_path, snapshot_rounds_of
from flcore.config import chance_accuracy
from flcore.config.scales import scale_defaults
from flcore.cpus import one_torch_thread
from flcore.data import CIFAR10_CLASSES, normalize
from flcore.papers.fedgloss import results as fedgloss_results
from flcore.papers.fedgloss import runs as gloss_runs
from flcore.papers.fedgloss.runs import (
    ALGORITHM,
    RESNET_CONFIG,
    RESNET_SETTINGS,
    SAM_ALGORITHMS,
    SGD_ALGORITHMS,
    run_config,
)
from flcore.papers.fedsam import runs as fedsam
from flcore.report import mean_sd_text, ours_values
from flcore.report.landscape_figures import local_global_panels, net_over_solid
from flcore.reproduction.artifacts import RunSpec, register_artifacts
from flcore.reproduction.claims import at_chance, register_metric
from flcore.reproduction.runner import run_metrics
from flcore.reproduction.stand_in import stand_in_for

if TYPE_CHECKING:
    import pandas as pd

PAPER = gloss_runs.PAPER

#: The methods of Tables 3 and 8 (SGD block, then SAM block): label -> registered method.
METHOD = {a.label: a.method for a in gloss_runs.GLOSS_ALGORITHMS} | {
    "NaiveFedGloSS": ALGORITHM["NaiveFedGloSS"].method,
    "FedGloSS-SAM-noADMM": ALGORITHM["FedGloSS-SAM w/o ADMM"].method,
}
SGD_BLOCK = SGD_ALGORITHMS
SAM_BLOCK = SAM_ALGORITHMS
GLOSS_ALGORITHMS = SGD_BLOCK + SAM_BLOCK
#: FedAvg and FedSAM are the FedSAM pages' runs (its row labels).
_SAM_MAIN_LABEL = {a.label: a.fedsam_label for a in gloss_runs.GLOSS_ALGORITHMS if a.fedsam_label}

#: (dataset label, alpha) of the CNN grid by scale (module docstring).
CNN_SETTINGS = {
    "paper": (("CIFAR-10", 0.0), ("CIFAR-10", 0.05), ("CIFAR-100", 0.0), ("CIFAR-100", 0.5)),
    "small": (("CIFAR-10", 0.0), ("CIFAR-10", 0.05)),
    "smoke": (("CIFAR-10", 0.0),),
}
#: Below ``paper`` the CIFAR-100 alpha = 0 cells are the CIFAR-10 alpha = 0 runs (both MNIST-1D).
ALIASED_SETTINGS = (("CIFAR-100", 0.0),)
PER_ROUND = 5

#: Table 1's methods and clients (the paper's rows: the class each last-round client holds).
TABLE1_ALGORITHMS = ("FedAvg", "FedSAM", "FedDyn", "FedDyn+SAM", "FedSMOO", "FedGloSS-SAM")
TABLE1_CLIENTS = {
    "CIFAR-10": ("airplane", "cat", "bird", "airplane", "frog"),
    "CIFAR-100": ("sea", "snail", "bear", "skyscraper", "possum"),
}
EVAL_DATA = ("local", "global")
#: Methods with recorded runs at each scale (Table 1; Fig. 8 below paper; Figs. 2, 5, 10, 11).
#: FedDyn (SGD) is left out below the paper scale to keep the small book's budget (recorded
#: runs train alone); no claim reads its column.  Smoke keeps the methods the claims read.
RECORDED_ALGORITHMS = {"paper": TABLE1_ALGORITHMS,
                       "small": tuple(a for a in TABLE1_ALGORITHMS if a != "FedDyn"),
                       "smoke": ("FedAvg", "FedSAM", "FedSMOO", "FedGloSS-SAM")}
#: Fig. 8 ("SAM-based methods"; the list is inferred).
FIG8_ALGORITHMS = ("FedSAM", "FedDyn+SAM", "FedSMOO", "FedGloSS-SAM")
#: Fig. 8 and Fig. 14 at ``paper``: ResNet-18-GN, 10 clients per round, Table 12's local
#: momentum 0.7 and weight decay 1e-5.
RESNET = {key: RESNET_CONFIG[key] for key in ("model", "momentum", "weight_decay")}
RESNET_PER_ROUND = RESNET_CONFIG["per_round"]

#: How much each analysis computes, by scale.
#: ``samples``: examples of a pooled split (None: all); ``iters``: power-iteration products
#: for a global model, ``client_iters`` for Table 1's 50-60 client models (fewer below the
#: paper scale: the page must build in seconds); ``grid``: points per
#: landscape axis; ``interp_points``: points of Fig. 9's line.
#: ``client_samples``: the pooled training subset Table 1's lambda_1,g uses.
ANALYSIS = {
    "smoke": {"samples": 100, "client_samples": 100, "iters": 3, "client_iters": 3, "grid": 5, "interp_points": 7},
    "small": {"samples": 500, "client_samples": 250, "iters": 20, "client_iters": 6, "grid": 11,
              "interp_points": 13},
    "paper": {"samples": None, "client_samples": None, "iters": 20, "client_iters": 20, "grid": 21,
              "interp_points": 31},
}


# --------------------------------------------------------------------------- run specs

def gloss_run(dataset_label: str, algorithm: str, alpha: float, per_round: int, seed: int, scale: str,
              **extra: Any) -> RunSpec:
    """One ``gloss-cnn-main`` run: the method's preset at ``scale``; ``extra`` config values
    only for the recorded and ResNet variants.  Labels: dataset, algorithm, alpha,
    clients_per_round, seed."""
    if algorithm not in METHOD:
        raise ValueError(f"algorithm must be one of {', '.join(METHOD)}, got {algorithm!r}")
    labels = {"dataset": dataset_label, "algorithm": algorithm, "alpha": float(alpha),
              "clients_per_round": int(per_round), "seed": int(seed)}

    if algorithm in fedgloss_results.ALGORITHM and per_round == fedgloss_results.CNN_PER_ROUND:
        # the result pages' run of this cell (the same configuration, one definition)
        return RunSpec(labels, fedgloss_results.gloss_cnn_run(dataset_label, algorithm, alpha, seed, scale,
                                                              **extra).config)
    if algorithm in _SAM_MAIN_LABEL:
        spec = fedsam.sam_main_run(dataset_label, _SAM_MAIN_LABEL[algorithm], alpha, per_round, seed, scale,
                                   **extra)
        return RunSpec({**spec.labels, "algorithm": algorithm}, spec.config)
    config = {"method": METHOD[algorithm], "dataset": fedsam.dataset_for(dataset_label, scale), "scale": scale,
              "alpha": float(alpha), "per_round": int(per_round), "seed": int(seed), **extra}
    labels = {"dataset": dataset_label, "algorithm": algorithm, "alpha": float(alpha),
              "clients_per_round": int(per_round), "seed": int(seed)}
    return RunSpec(labels, config)


def _settings(scale: str, aliases: bool = True) -> list[tuple[str, float]]:
    settings = list(CNN_SETTINGS[scale])
    if aliases and not stand_in_for(scale, PAPER).is_paper:
        settings += [s for s in ALIASED_SETTINGS if s not in settings]
    return settings


def cnn_runs(algorithms: Sequence[str], scale: str, seeds: Sequence[int] = (0,),
             settings: Sequence[tuple[str, float]] | None = None) -> list[RunSpec]:
    """Plain ``gloss-cnn-main`` runs of ``algorithms`` on ``settings`` (default: the scale's
    grid, with the aliased CIFAR-100 alpha = 0 cells below ``paper``)."""
    settings = _settings(scale) if settings is None else settings
    return [gloss_run(ds, algo, alpha, PER_ROUND, seed, scale)
            for ds, alpha in settings for algo in algorithms for seed in seeds]


def _last_round(dataset_label: str, scale: str) -> int:
    return int(scale_defaults(scale, fedsam.dataset_for(dataset_label, scale))["rounds"])


def recorded_run(dataset_label: str, algorithm: str, alpha: float, seed: int, scale: str,
                 snapshot: bool = True) -> RunSpec:
    """A run that also saves the last round's models (``snapshot``) and records
    ``param_norm`` (and ``delta_eps`` for the FedGloSS methods) at the evaluation rounds."""
    probes = ["param_norm"] + (["delta_eps"] if METHOD[algorithm].startswith("fedgloss") else [])
    extra: dict[str, Any] = {"probes": probes}
    if snapshot:
        extra["snapshot_rounds"] = [_last_round(dataset_label, scale)]
    spec = gloss_run(dataset_label, algorithm, alpha, PER_ROUND, seed, scale, **extra)
    return RunSpec({**spec.labels, "recorded": True}, spec.config)


def _recorded_settings(scale: str) -> list[str]:
    return ["CIFAR-10", "CIFAR-100"]  # alpha = 0; below paper the two are one run


def table1_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 1: one spec per (dataset, method, client position, eval data); the specs of
    one run share its config (the run is trained once)."""
    specs = []
    for ds in _recorded_settings(scale):
        for algo in RECORDED_ALGORITHMS[scale]:
            for seed in seeds:
                run = recorded_run(ds, algo, 0.0, seed, scale)
                for position, client_class in enumerate(TABLE1_CLIENTS[ds], start=1):
                    for eval_data in EVAL_DATA:
                        specs.append(RunSpec({**run.labels, "client": position, "client_class": client_class,
                                              "eval_data": eval_data}, run.config))
    return specs


def _unique(specs: Sequence[RunSpec]) -> list[RunSpec]:
    out: dict[str, RunSpec] = {}
    for spec in specs:
        out.setdefault(json.dumps([spec.labels, spec.config], sort_keys=True, default=str), spec)
    return list(out.values())


def recorded_runs(algorithms: Sequence[str], scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """The recorded runs (one per dataset label at alpha = 0) of ``algorithms``."""
    return [recorded_run(ds, a, 0.0, seed, scale) for ds in _recorded_settings(scale)
            for a in algorithms if a in RECORDED_ALGORITHMS[scale] for seed in seeds]


def table8_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 8 and Fig. 7: every method of the grid."""
    return cnn_runs(GLOSS_ALGORITHMS, scale, seeds)


def _landscape_runs(algorithms, settings_by_scale):
    def runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
        wanted = settings_by_scale(scale)
        return cnn_runs(algorithms, scale, seeds, settings=wanted)
    return runs


def _mild(scale: str) -> list[tuple[str, float]]:
    """The milder heterogeneity levels (C10 0.05, C100 0.5) run at ``scale``."""
    return [s for s in CNN_SETTINGS[scale] if s[1] > 0] or list(CNN_SETTINGS[scale])


def fig4_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 4: FedGloSS-SAM with and without ADMM, delta_eps recorded (alpha = 0)."""
    specs = []
    for ds in (["CIFAR-10", "CIFAR-100"] if stand_in_for(scale, PAPER).is_paper else ["CIFAR-10"]):
        for seed in seeds:
            specs.append(recorded_run(ds, "FedGloSS-SAM", 0.0, seed, scale))
            specs.append(recorded_run(ds, "FedGloSS-SAM-noADMM", 0.0, seed, scale, snapshot=False))
    return specs


def fig8_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 8: ||w^t|| of the SAM-based methods; ResNet-18 at ``paper``, the recorded
    MNIST-1D runs below it."""
    if not stand_in_for(scale, PAPER).is_paper:
        return [s for s in recorded_runs(FIG8_ALGORITHMS, scale, seeds) if s.labels["dataset"] == "CIFAR-10"]
    specs = []
    for ds, alpha in RESNET_SETTINGS:
        for algo in FIG8_ALGORITHMS:
            for seed in seeds:
                spec = gloss_run(ds, algo, alpha, RESNET_PER_ROUND, seed, scale, probes=["param_norm"],
                                 **RESNET)
                specs.append(RunSpec({**spec.labels, "model": "ResNet-18"}, spec.config))
    return specs


def fig14_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 14: ResNet-18 global models at ``paper``; the MNIST-1D CNN runs of the milder
    alphas below it."""
    algorithms = ("FedAvg", "FedSAM", "FedSMOO", "FedGloSS-SAM")
    if not stand_in_for(scale, PAPER).is_paper:
        return cnn_runs(algorithms, scale, seeds, settings=_mild(scale))
    specs = []
    for ds, alpha in RESNET_SETTINGS:
        for algo in algorithms:
            for seed in seeds:
                spec = gloss_run(ds, algo, alpha, RESNET_PER_ROUND, seed, scale, **RESNET)
                specs.append(RunSpec({**spec.labels, "model": "ResNet-18"}, spec.config))
    return specs


def fig6_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 6: CNN at alpha = 0 (both data sets); the ResNet-18 panel is Fig. 14's setting."""
    algorithms = ("FedSAM", "FedSMOO", "FedGloSS-SAM")
    specs = cnn_runs(algorithms, scale, seeds, settings=[s for s in CNN_SETTINGS[scale] if s[1] == 0])
    if stand_in_for(scale, PAPER).is_paper:
        specs += [s for s in fig14_runs(scale, seeds)
                  if s.labels["dataset"] == "CIFAR-10" and s.labels["algorithm"] in algorithms]
    return specs


def fig9_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 9: NaiveFedGloSS and FedGloSS-SAM final models of the same seed (alpha = 0)."""
    datasets = ("CIFAR-10", "CIFAR-100") if stand_in_for(scale, PAPER).is_paper else ("CIFAR-10",)
    return cnn_runs(("NaiveFedGloSS", "FedGloSS-SAM"), scale, seeds, settings=[(ds, 0.0) for ds in datasets])


def _client_figure_runs(algorithms):
    def runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
        return [s for s in recorded_runs(algorithms, scale, seeds) if s.labels["dataset"] == "CIFAR-100"]
    return runs


# --------------------------------------------------------------------------- loading (cached)

def one_thread(function):
    """Run ``function`` with one intra-op thread (restored after).  The analysed models are
    small (MNIST-1D nets: 12k parameters; the CNN: 0.8M) and their batches short: on a busy
    CPU, PyTorch's threads mostly wait on each other (Table 1 at the smoke scale: 118 s with
    two threads on a loaded 2-core machine, 12 s with one)."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with one_torch_thread(not torch.cuda.is_available()):
            return function(*args, **kwargs)
    return wrapper


_DATASETS: dict = {}


def analysis_settings(run_dir: str | Path) -> dict:
    """:data:`ANALYSIS` for the scale the run was trained at."""
    return ANALYSIS.get(run_config(run_dir).get("scale", "paper"), ANALYSIS["paper"])


def load(run_dir: str | Path, which: str = "auto"):
    """:func:`flcore.analysis.io.load_run` on the CPU, sharing one loaded data set between
    runs on the same data."""

    cfg = run_config(run_dir)
    key = (cfg.get("dataset"), cfg.get("num_samples"), cfg.get("samples_per_client"), cfg.get("seed"),
           cfg.get("data_root"))
    loaded = load_run(run_dir, device="cpu", which=which, dataset=_DATASETS.get(key))
    _DATASETS[key] = loaded.dataset
    return loaded


def _pooled_train(loaded, samples):
    return loaded.data("train", samples=samples, seed=loaded.config.seed)


def _client_data(loaded, client_id: int):

    idx = loaded.client_indices()[client_id]
    x = normalize(loaded.dataset.train_x[idx], loaded.dataset.mean, loaded.dataset.std)
    return x, loaded.dataset.train_y[idx]


def top_eigenvalue(flat, w, x, y, iters: int, seed: int = 0) -> float:
    """lambda_1 of the loss Hessian of ``w`` on ``(x, y)`` (power iteration, tol 1e-4)."""

    return float(client_top_eigenvalue(flat, w[None], [(x, y)], iters=iters, seed=seed)[0])


@lru_cache(maxsize=512)
@one_thread
def _global_lambda(run_dir: str, mtime: float) -> float:
    loaded = load(run_dir, which="final")
    settings = analysis_settings(run_dir)
    x, y = loaded.data("test", samples=settings["samples"], seed=loaded.config.seed)
    return top_eigenvalue(loaded.flat, loaded.w, x, y, settings["iters"], loaded.config.seed)


def global_lambda_max(run_dir: str | Path) -> float:
    """lambda_1 of a run's final global model on the test set (module docstring)."""
    path = Path(run_dir) / "final_model.pt"
    return _global_lambda(str(run_dir), path.stat().st_mtime if path.exists() else 0.0)


def last_round_clients(run_dir: str | Path) -> list[dict]:
    """The clients of the last snapshot round, in sampling order: ``position`` (1..K),
    ``client_id`` and ``class`` (the label most of its data carries)."""

    rounds = snapshot_rounds_of(run_dir)
    if not rounds:
        raise FileNotFoundError(f"run {run_dir} saved no snapshot (snapshot_rounds not set)")
    snap = load_snapshot(run_dir, rounds[-1])
    loaded = load(run_dir)
    out = []
    for position, client in enumerate(snap["client_ids"].tolist(), start=1):
        labels = loaded.dataset.train_y[loaded.client_indices()[int(client)]]
        major = int(labels.bincount(minlength=loaded.dataset.num_classes).argmax()) if len(labels) else -1
        out.append({"position": position, "client_id": int(client), "class": class_name(loaded.config.dataset, major),
                    "classes_held": int((labels.bincount(minlength=loaded.dataset.num_classes) > 0).sum())})
    return out


def class_name(dataset: str, label: int) -> str:
    if dataset == "cifar10" and 0 <= label < 10:
        return CIFAR10_CLASSES[label]
    return f"digit {label}" if dataset == "mnist1d" else f"class {label}"


@lru_cache(maxsize=2048)
@one_thread
def _client_lambda(run_dir: str, position: int, eval_data: str, mtime: float) -> float:

    if eval_data not in EVAL_DATA:
        raise ValueError(f"eval_data must be one of {', '.join(EVAL_DATA)}, got {eval_data!r}")
    snap = load_snapshot(run_dir, snapshot_rounds_of(run_dir)[-1])
    if not 1 <= position <= len(snap["client_ids"]):
        raise ValueError(f"client position must be in 1..{len(snap['client_ids'])}, got {position}")
    loaded = load(run_dir)
    settings = analysis_settings(run_dir)
    w_k = snap["client_models"][position - 1].to(loaded.w.dtype)
    if eval_data == "local":
        x, y = _client_data(loaded, int(snap["client_ids"][position - 1]))
    else:
        x, y = _pooled_train(loaded, settings["client_samples"])
    return top_eigenvalue(loaded.flat, w_k, x, y, settings["client_iters"], loaded.config.seed)


def client_lambda_max(run_dir: str | Path, position: int, eval_data: str) -> float:
    """lambda_1 of the ``position``-th client model of the last snapshot round, on its own
    data (``local``) or on the pooled training data (``global``): Table 1."""

    rounds = snapshot_rounds_of(run_dir)
    if not rounds:
        raise FileNotFoundError(f"run {run_dir} saved no snapshot (snapshot_rounds not set)")
    mtime = snapshot_path(run_dir, rounds[-1]).stat().st_mtime
    return _client_lambda(str(run_dir), int(position), eval_data, mtime)


# --------------------------------------------------------------------------- claim metrics

def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def lambda_max_metric(row: dict) -> float | None:
    """Metric ``lambda_max`` of a results row: :func:`global_lambda_max` of its run."""
    if not row.get("run_dir") or row.get("status") != "finished":
        return None
    return _finite(global_lambda_max(row["run_dir"]))


def client_lambda_max_metric(row: dict) -> float | None:
    """Metric ``client_lambda_max`` of a Table 1 row (labels ``client``, ``eval_data``)."""
    if not row.get("run_dir") or row.get("status") != "finished" or row.get("client") is None:
        return None
    try:
        return _finite(client_lambda_max(row["run_dir"], int(row["client"]), str(row["eval_data"])))
    except FileNotFoundError:
        return None


# each run's Hessian is an analysis of its stored model: these claims keep one seed (indicative)
register_metric("fedgloss_lambda_max", lambda_max_metric, "lambda_max", seeded=False, flatness=True)
register_metric("client_lambda_max", client_lambda_max_metric, "lambda_max", seeded=False, flatness=True)


# --------------------------------------------------------------------------- tables

def lambda_table(runs) -> pd.DataFrame:
    """Table 8: ``lambda_1`` of each run, as the claims' metric ``fedgloss_lambda_max`` reads
    it (:func:`lambda_max_metric`; NaN for a run that did not finish or a non-finite value)."""
    values = [lambda_max_metric(r) for r in runs.to_dict("records")]
    out = runs[["dataset", "algorithm", "alpha", "seed", "status"]].copy().reset_index(drop=True)
    out["lambda_1"] = [float("nan") if v is None else float(v) for v in values]
    return out


def lambda_cells(runs, keys: Sequence[str] = ("dataset", "alpha", "algorithm")) -> pd.DataFrame:
    """Table 8 and Fig. 7 per cell (``keys``): ``ours``, the mean ``lambda_1`` of the cell's
    finished runs (each once), ``ours_std``, ``seeds`` (n), ``left_out`` and ``status``
    (:func:`flcore.report.ours_values`) -- the cell a claim's verdict reads
    (:func:`flcore.reproduction.table_check.printed_cell`)."""
    once = runs.drop_duplicates([*keys, "run_id"]) if "run_id" in runs else runs
    return ours_values(lambda_table(once), list(keys), "lambda_1")


def chance_rule(specs: Sequence[RunSpec]) -> float:
    """What :func:`flattest_learning` needs to tell a method that did not learn: the chance
    accuracy (%) of ``specs``' data set."""
    return chance_accuracy(specs[0].resolve().dataset)


def flattest_learning(table: pd.DataFrame, runs: pd.DataFrame, chance: float, keys: Sequence[str] = ("setting",),
                      value: str = "lambda_1") -> tuple[pd.DataFrame, dict[tuple, list[str]]]:
    """The flattest method per ``keys`` group of ``table`` (columns ``keys``, ``algorithm``,
    ``value``: one mean per method and group) among the methods that learn, and the methods
    left out per group for sitting at ``chance``: a model that does not learn is not ranked
    for flatness (the rule of Table 8's and Fig. 7's captions).

    ``runs`` has one row per run (``keys``, ``algorithm``, ``status``, ``mean_last_100``); a
    method did not learn when most of its seeds' accuracy sits below chance plus the learn
    margin (:func:`flcore.reproduction.claims.at_chance`, the verdicts' rule).
    """
    keys = list(keys)
    finished = runs[runs["status"] == "finished"]
    if "run_id" in finished:
        finished = finished.drop_duplicates([*keys, "run_id"])
    left_out: dict[tuple, list[str]] = {}
    learning = []
    for row in table.to_dict("records"):
        mine = finished
        for key in keys + ["algorithm"]:
            mine = mine[mine[key] == row[key]]
        values = [100.0 * float(v) for v in mine["mean_last_100"] if v is not None and v == v]
        if values and at_chance(values, chance):
            left_out.setdefault(tuple(row[k] for k in keys), []).append(row["algorithm"])
        else:
            learning.append(row)
    ranked = pd.DataFrame(learning, columns=table.columns).dropna(subset=[value])
    flattest = ranked.loc[ranked.groupby(keys, sort=False)[value].idxmin()] if len(ranked) else ranked
    return flattest, left_out


def setting_text(dataset: str, alpha: float) -> str:
    """``"CIFAR-10 alpha = 0.05"``: a setting of the CNN grid as the captions name it."""
    return f"{dataset} alpha = {float(alpha):g}"


def flattest_captions(cells: pd.DataFrame, runs: pd.DataFrame, chance: float) -> tuple[str, str]:
    """Table 8's and Fig. 7's ranking in words, from :func:`lambda_cells` (the seed means)
    and the runs' accuracy (:func:`flattest_learning`): ``(found, not_ranked)``, e.g.
    ``"CIFAR-10 alpha = 0: FedGloSS-SAM (2.03 ± 0.10 (n = 3))"`` per setting (empty when no
    method learns) and ``" Not ranked, at chance (10 %): CIFAR-10 alpha = 0: FedSpeed."``
    (empty when every method learns)."""
    flattest, at_chance = flattest_learning(cells, runs, chance, keys=("dataset", "alpha"), value="ours")
    found = "; ".join(f"{setting_text(r['dataset'], r['alpha'])}: {r['algorithm']} "
                      f"({mean_sd_text(r['ours'], r['ours_std'], r['seeds'])})" for r in flattest.to_dict("records"))
    not_ranked = "; ".join(f"{setting_text(d, a)}: {', '.join(names)}" for (d, a), names in at_chance.items())
    return found, (f" Not ranked, at chance ({chance:.0f} %): {not_ranked}." if not_ranked else "")


def table1_values(runs) -> pd.DataFrame:
    """Table 1 from its runs' rows: dataset, algorithm, client (position), paper's class,
    our client's id and class, eval_data, lambda_1."""
    rows, clients = [], {}
    for r in runs.to_dict("records"):
        if r["status"] != "finished":
            continue
        if r["run_dir"] not in clients:
            clients[r["run_dir"]] = {c["position"]: c for c in last_round_clients(r["run_dir"])}
        ours = clients[r["run_dir"]][int(r["client"])]
        rows.append({"dataset": r["dataset"], "algorithm": r["algorithm"], "seed": r["seed"],
                     "client": int(r["client"]), "paper_class": r["client_class"], "our_client": ours["client_id"],
                     "our_class": ours["class"], "eval_data": r["eval_data"],
                     "lambda_1": client_lambda_max(r["run_dir"], int(r["client"]), r["eval_data"])})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- landscapes, curves

@one_thread
def global_landscapes(run_dirs: dict, grid: int | None = None, seed: int | None = None) -> dict:
    """Surfaces of the final models of ``run_dirs`` (``{name: run_dir}``, runs on the same
    data) along shared directions, on the pooled training data: ``{name: Landscape2D}``."""

    loaded = {name: load(d, which="final") for name, d in run_dirs.items()}
    first = next(iter(loaded.values()))
    settings = analysis_settings(next(iter(run_dirs.values())))
    x, y = _pooled_train(first, settings["samples"])
    evaluate = DatasetEvaluator(first.flat, x, y)
    axis = grid_points(1.0, grid or settings["grid"])
    return shared_direction_landscapes(evaluate, first.flat, {n: ln.w for n, ln in loaded.items()},
                                       seed=first.config.seed if seed is None else seed, xs=axis, ys=axis)


@one_thread
def client_landscapes(run_dir: str | Path, positions: Sequence[int], grid: int | None = None) -> dict:
    """For each client position of the last snapshot round: its model's surface on its own
    data and on the pooled training data, along the same directions (Figs. 2, 5, 10, 11):
    ``{position: {"local": Landscape2D, "global": Landscape2D}}``."""

    loaded = load(run_dir)
    settings = analysis_settings(run_dir)
    snap = load_snapshot(run_dir, snapshot_rounds_of(run_dir)[-1])
    xg, yg = _pooled_train(loaded, settings["samples"])
    axis = grid_points(1.0, grid or settings["grid"])
    out = {}
    for position in positions:
        w_k = snap["client_models"][position - 1].to(loaded.w.dtype)
        xl, yl = _client_data(loaded, int(snap["client_ids"][position - 1]))
        d1, d2 = random_directions(loaded.flat, w_k, 2, loaded.config.seed)
        evaluators = {"local": DatasetEvaluator(loaded.flat, xl, yl), "global": DatasetEvaluator(loaded.flat, xg, yg)}
        out[position] = landscapes_on_datasets(evaluators, w_k, d1, d2, axis, axis)
    return out


@one_thread
def naive_interpolation(naive_dir: str | Path, gloss_dir: str | Path, points: int | None = None) -> dict:
    """Fig. 9: loss along ``w(g) = g w_FedGloSS + (1 - g) w_Naive`` for ``g`` in ``[-1, 2]``
    on the training data and the test set: ``{"train": Interpolation, "test": Interpolation}``."""

    naive, gloss = load(naive_dir, which="final"), load(gloss_dir, which="final")
    settings = analysis_settings(naive_dir)
    points = points or settings["interp_points"]
    out = {}
    for split in ("train", "test"):
        x, y = naive.data(split, samples=settings["samples"], seed=naive.config.seed)
        out[split] = interpolate(DatasetEvaluator(naive.flat, x, y), naive.w, gloss.w, num=points,
                                 t_min=-1.0, t_max=2.0)
    return out


def landscape_settings(runs, methods: Sequence[str]) -> list[dict]:
    """The global-landscape panels of a figure: for each (dataset, alpha, model) of
    ``runs`` (first seed, finished runs of ``methods``), the surfaces of those methods'
    final models along shared directions: ``[{"dataset", "alpha", "model", "surfaces"}]``."""
    frame = runs[(runs["status"] == "finished") & runs["algorithm"].isin(methods)]
    if len(frame) == 0:
        return []
    frame = frame[frame["seed"] == frame["seed"].min()]
    model = frame["model"] if "model" in frame else None
    frame = frame.assign(model=(model.fillna("CNN") if model is not None else "CNN"))
    out = []
    for (dataset, alpha, arch), group in frame.groupby(["dataset", "alpha", "model"], sort=False):
        dirs = {a: group[group["algorithm"] == a].iloc[0]["run_dir"] for a in methods
                if (group["algorithm"] == a).any()}
        out.append({"dataset": dataset, "alpha": float(alpha), "model": arch, "surfaces": global_landscapes(dirs)})
    return out


def landscape_summary(panels: Sequence[dict]) -> pd.DataFrame:
    """One row per (panel, method): the loss at the model and the mean rise over the grid."""
    rows = []
    for panel in panels:
        for name, surface in panel["surfaces"].items():
            centre = float(surface.loss[surface.xs.abs().argmin(), surface.ys.abs().argmin()])
            rows.append({"dataset": panel["dataset"], "alpha": panel["alpha"], "model": panel["model"],
                         "algorithm": name, "loss at the model": round(centre, 4),
                         "mean rise over the grid": round(surface_rise(surface), 4)})
    return pd.DataFrame(rows)


def surface_rise(surface) -> float:
    """Mean loss over the grid minus the loss at the centre: how fast the loss grows around
    the model (a one-number summary of a surface's flatness for captions)."""
    centre = surface.loss[surface.xs.abs().argmin(), surface.ys.abs().argmin()]
    return float(surface.loss.mean() - centre)


def client_landscape_finding(summary: pd.DataFrame) -> str:
    """Figs. 2, 5, 10 and 11: in how many cases the loss rises faster around a client model on
    the global data than on its own (columns ``rise on global data``, ``rise on local data``)."""
    sharper = int((summary["rise on global data"] > summary["rise on local data"]).sum()) if len(summary) else 0
    return (f"the loss rises faster around the client model on the global data than on its own in {sharper} of "
            f"{len(summary)} cases")


def show_client_landscapes(page, runs, seed: int, panels: Sequence[tuple[str, Sequence[int], str | None]],
                           scale: str) -> str:
    """Figs. 2, 5, 10 and 11 of the FedGloSS paper: for each ``(method, client positions,
    reference method)`` of ``panels``, the loss surfaces around the method's last-round client
    models on the global data (top, the reference's client model of the same position as a net)
    and on the client's own data (bottom), then a table of the surfaces' mean rise
    (:func:`surface_rise`); returns the finding of :func:`client_landscape_finding`."""

    data_name = stand_in_for(scale, PAPER).data_name("CIFAR-100")
    finished = runs[(runs["status"] == "finished") & (runs["seed"] == seed)].set_index("algorithm")["run_dir"]
    paper_class = dict(enumerate(TABLE1_CLIENTS["CIFAR-100"], start=1))
    rows, figures = [], []
    for method, positions, reference in panels:
        if method not in finished:
            continue
        clients = {c["position"]: c for c in last_round_clients(finished[method])}
        surfaces = client_landscapes(finished[method], positions)
        refs = client_landscapes(finished[reference], positions) if reference and reference in finished else {}
        columns = []
        for position in positions:
            title = f"{method}: client {position} ({clients[position]['class']}; paper: {paper_class[position]})"
            columns.append((title, surfaces[position], refs.get(position)))
            row = {"method": method, "client": position, "paper class": paper_class[position],
                   "our class": clients[position]["class"]}
            for which in ("local", "global"):
                row[f"rise on {which} data"] = round(surface_rise(surfaces[position][which]), 4)
            if position in refs:
                row["reference"] = reference
                row["reference's rise on global data"] = round(surface_rise(refs[position]["global"]), 4)
            rows.append(row)
        figures.append((method, reference, local_global_panels(columns)))
    summary = pd.DataFrame(rows)
    finding = client_landscape_finding(summary)
    for method, reference, figure in figures:
        net = f"; {reference}'s client model of the same position as a net on the global loss" if reference else ""
        page.figure(figure, f"{method}'s last-round client models on {data_name}: loss on the global data (top) and "
                            f"on the client's own data (bottom){net}; {finding}.",
                    alt=f"3-D surface plots, one column per client of {method}'s last round on {data_name}: the "
                        f"training loss around the client's model on the pooled data (top) and on its own data "
                        f"(bottom){net}.")
    page.table(summary, f"Mean rise of the loss over each surface (lower: flatter); {finding}.")
    return finding


def probe_summary(curves: pd.DataFrame, probe: str) -> tuple[pd.DataFrame, str]:
    """Figs. 4 and 8: per (dataset, alpha, algorithm) the first recorded value of the probe
    column ``probe`` and its mean over the last 10% of the rounds, and the finding that orders
    the methods by the latter (lowest first)."""
    keys = ["dataset", "alpha", "algorithm"]
    last = curves[curves["round"] > 0.9 * curves["round"].max()] if len(curves) else curves
    summary = (last.groupby(keys, sort=False)[probe].mean().round(4)
               .rename(f"mean {probe} over the last 10% of the rounds").reset_index())
    first = (curves.sort_values("round").groupby(keys, sort=False)[probe].first()
             .round(4).rename(f"first recorded {probe}").reset_index())
    summary = first.merge(summary, on=keys)
    late = summary.columns[-1]
    ordered = summary.sort_values(late)
    finding = ("; ".join(f"{a} {v:.3f}" for a, v in zip(ordered["algorithm"], ordered[late]))
               if len(summary) else "no probe values were recorded")
    return summary, f"over the last 10% of the rounds, lowest first: {finding}"


def show_probe_curves(page, runs, seed: int, probe: str, label: str, scale: str, store=None) -> str:
    """Figs. 4 (``delta_eps``, Eq. 6) and 8 (``param_norm``, ||w^t||_2) of the FedGloSS paper:
    the training-time probe ``probe`` of the recorded runs of ``seed`` against rounds, one panel
    per (dataset, alpha), one line per method, and :func:`probe_summary` as a table; returns
    its finding.  ``label`` names the quantity on the axis and in the captions."""
    import matplotlib.pyplot as plt


    data_name = stand_in_for(scale, PAPER).data_name("CIFAR")
    metrics = run_metrics(runs[runs["seed"] == seed], store=store)
    curves = metrics.dropna(subset=[probe]) if probe in metrics else metrics.iloc[0:0]
    settings = list(dict.fromkeys(zip(curves["dataset"], curves["alpha"])))
    figure, axes = plt.subplots(1, max(1, len(settings)), figsize=(6 * max(1, len(settings)), 3.8), squeeze=False)
    for ax, (dataset, alpha) in zip(axes[0], settings):
        block = curves[(curves["dataset"] == dataset) & (curves["alpha"] == alpha)]
        for algorithm, line in block.groupby("algorithm", sort=False):
            ax.plot(line["round"], line[probe], label=algorithm)
        ax.set_xlabel("round")
        ax.set_ylabel(label)
        on = "" if stand_in_for(scale, PAPER).is_paper else f" (on {data_name.split(' (')[0]})"
        ax.set_title(f"{dataset}, alpha = {alpha:g}{on}")
        ax.legend(fontsize=8)
    figure.tight_layout()
    summary, finding = probe_summary(curves, probe)
    page.figure(figure, f"{label} of the runs on {data_name}; {finding}.",
                alt=f"Line chart of {label} against training rounds, one line per method, on {data_name}; {finding}.")
    page.table(summary, f"{label}: the first recorded value and the mean over the last 10% of the rounds; {finding}.")
    return finding


def flatter_net_finding(summary: pd.DataFrame, net: str, solids: Sequence[str]) -> str:
    """Figs. 1, 6, 12, 13 and 14: in how many (setting, compared method) panels the ``net``
    method's surface rises less over the grid than the compared method's (rows of
    :func:`landscape_summary`)."""
    rise = summary.set_index(["dataset", "alpha", "model", "algorithm"])["mean rise over the grid"] \
        if len(summary) else None
    pairs = wins = 0
    for (dataset, alpha, model), block in (summary.groupby(["dataset", "alpha", "model"], sort=False)
                                           if len(summary) else ()):
        present = set(block["algorithm"])
        for solid in solids:
            if solid in present and net in present:
                pairs += 1
                wins += int(rise[(dataset, alpha, model, net)] < rise[(dataset, alpha, model, solid)])
    return f"{net}'s surface rises less than the other method's in {wins} of {pairs} panels"


def show_net_over_solid(page, runs, net: str, solids: Sequence[str], scale: str) -> str:
    """Figs. 1, 6, 12, 13 and 14 of the FedGloSS paper: the loss landscapes of the final global
    models (first seed, shared directions: :func:`landscape_settings`), ``net`` as a wire net
    over each of ``solids`` as a solid surface, one panel per setting and compared method, and
    :func:`landscape_summary` as a table; returns :func:`flatter_net_finding`."""

    data_name = stand_in_for(scale, PAPER).data_name("CIFAR")
    solids = list(solids)
    panels = landscape_settings(runs, [net, *solids])
    pairs = [(f"{q['dataset']} alpha={q['alpha']:g} ({q['model']}): {s}", q["surfaces"][s], q["surfaces"][net])
             for q in panels for s in solids if s in q["surfaces"] and net in q["surfaces"]]
    summary = landscape_summary(panels)
    finding = flatter_net_finding(summary, net, solids)
    caption = (f"Loss landscapes of the final global models on {data_name}: {net} (net) over {', '.join(solids)} "
               f"(solid); {finding}.")
    alt = (f"Grid of 3-D surface plots of the training loss around the final global model, axes a and b in [-1, 1]: "
           f"{net} as a black wire net over {', '.join(solids)} as a coloured surface, one panel per setting and "
           f"method on {data_name}; {finding}.")
    page.figure(net_over_solid(pairs, net, solids), caption, alt=alt)
    page.table(summary, f"Loss at each final model and mean rise of the loss over the grid; {finding}.")
    return finding


# --------------------------------------------------------------------------- registry

register_artifacts(PAPER, {
    "fedgloss-table-1": table1_runs,
    "fedgloss-table-8": table8_runs,
    "fedgloss-fig-1": _landscape_runs(("FedAvg", "FedSAM"), lambda scale: CNN_SETTINGS[scale]),
    "fedgloss-fig-2": _client_figure_runs(("FedSAM",)),
    "fedgloss-fig-4": fig4_runs,
    "fedgloss-fig-5": _client_figure_runs(("FedGloSS-SAM", "FedSMOO", "FedSAM")),
    "fedgloss-fig-6": fig6_runs,
    "fedgloss-fig-7": table8_runs,
    "fedgloss-fig-8": fig8_runs,
    "fedgloss-fig-9": fig9_runs,
    "fedgloss-fig-10": _client_figure_runs(("FedGloSS-SAM", "FedSAM")),
    "fedgloss-fig-11": _client_figure_runs(("FedSMOO", "FedGloSS-SAM")),
    "fedgloss-fig-12": _landscape_runs(("FedAvg", "FedGloSS-SAM"), lambda scale: CNN_SETTINGS[scale]),
    "fedgloss-fig-13": _landscape_runs(("FedSAM", "FedSMOO", "FedGloSS-SAM"), _mild),
    "fedgloss-fig-14": fig14_runs,
})


def lambda_wide(values: pd.DataFrame, index: Sequence[str],
                order: Sequence[str] = TABLE1_ALGORITHMS) -> pd.DataFrame:
    """Table 1's layout of ``values`` (rows of ``algorithm, eval_data, lambda_1`` and the
    ``index`` columns): one row per ``index``, one column per (algorithm, evaluation data) in
    the order of ``order`` and :data:`EVAL_DATA`, leaving out the pairs ``values`` lacks."""
    table = values.pivot_table(index=list(index), columns=["algorithm", "eval_data"], values="lambda_1", sort=False)
    return table.reindex(columns=[(a, e) for a in order for e in EVAL_DATA if (a, e) in table.columns])
