"""The FedGF paper's analyses of stored runs (Lee & Yoon, ICML 2024): Table 2 (LPF,
lambda_max, flatness discrepancy of the global model), Table 4 (model transmissions to
reach FedAvg's final accuracy), Figs. 1, 2, 5 and 6.

Nothing here trains a run: every function reads a finished run of the store.  Decisions
where the paper is silent (its appendix with the analysis details is missing):

- **Local models** (Delta_F, Figs. 2 and 6).  A run stores its final state (global model,
  server and client state: the last checkpoint).  :func:`extra_round` runs *one further
  round* from it with the run's own method -- the next round's sampled clients, their
  batches and the method's local update (FedGF's blended perturbation, FedSMOO's
  corrected one ...) -- and returns those clients' local models.  They are what "the
  local models of the final global model" are under the method, without storing client
  models during training.
- **Data.** ``F`` is the loss on (a seeded subset of) the whole training set, the union
  of the clients' data (Eq. 1); ``F_i`` the loss on client ``i``'s training data.
- **lambda_max**: power iteration on the Hessian of ``F`` at the final global model
  (:mod:`flcore.analysis.spectrum`); **LPF**: Bisla et al.'s ``sigma = 0.01``
  (:mod:`flcore.analysis.lpf`), on the same data.
- **Delta_F** (:func:`flcore.analysis.flatness.flatness_discrepancy`, one SAM step) with
  the *same* radius for every method of a setting: the FedSAM preset's ``rho`` for that
  data set and alpha (FedAvg has no radius of its own), so the methods are measured in
  the same ball.
- **Transmissions to a target** (Table 4, with :mod:`flcore.reproduction.targets`): the
  first evaluated round at which the test accuracy reaches FedAvg's final accuracy (its
  mean over the last 100 rounds, the number Table 1 reports), times the method's model
  transmissions per round and client (Table 3: upload + download), in hundreds.  A run that never reaches the target is
  counted at its last round plus one (censored: at least that many).

Results of the expensive analyses are cached in the run's folder
(``analysis/fedgf.json``, keyed by the analysis settings), so a page or a claim that
asks again reads them back.
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch

from flcore.analysis.evaluation import DatasetEvaluator
from flcore.analysis.flatness import flatness_discrepancy
from flcore.analysis.hvp import make_hvp
from flcore.analysis.io import RunLoadError, resolved_config, run_handle
from flcore.analysis.landscape import grid_points, landscape_2d, landscapes_on_datasets, random_directions
from flcore.analysis.lpf import lpf, perturbation_curve
from flcore.analysis.spectrum import power_iteration
from flcore.config import resolve_config
from flcore.cpus import one_torch_thread
from flcore.report.analysis_plots import plot_surface_2d
from flcore.report.page import SMOKE_NOTE
from flcore.reproduction.lookup import by_scale
from flcore.reproduction.stand_in import stand_in_for
from flcore.reproduction.targets import accuracy_curve, rounds_to_target, transmissions_per_round
from flcore.seeding import generator
from flcore.sim.engine import Simulation

#: Analysis settings by scale: training samples for F, power iterations, LPF draws, loss-
#: surface grid points per axis, perturbation-curve draws per magnitude.
SETTINGS = {
    "smoke": {"samples": 256, "power_iters": 3, "lpf_draws": 3, "grid": 5, "curve_samples": 2},
    "small": {"samples": 500, "power_iters": 8, "lpf_draws": 8, "grid": 11, "curve_samples": 3},
    "paper": {"samples": 10000, "power_iters": 50, "lpf_draws": 100, "grid": 21, "curve_samples": 10},
}
LPF_SIGMA = 0.01
#: The run's analysis cache this page's numbers are kept in (``analysis/fedgf.json``).
CACHE_NAME = "fedgf"


def settings_for(scale: str) -> dict:
    return by_scale(SETTINGS, scale)


#: The analysis runs on one CPU thread: the book executes notebooks one per core.
one_thread = one_torch_thread


# --------------------------------------------------------------------------- cache

def _cached(run_dir, key: str, compute):
    """``compute()`` (a JSON-able value) cached under ``key`` in the run's analysis cache
    ``fedgf`` (:meth:`flcore.store.Run.save_analysis`: its digest is recorded, so an edited or
    damaged cache is computed again, never read)."""
    run = run_handle(run_dir)
    data = run.load_analysis(CACHE_NAME) or {}
    if key in data:
        return data[key]
    value = compute()
    data[key] = value
    run.save_analysis(CACHE_NAME, data)
    return value


# --------------------------------------------------------------------------- one further round

@dataclass
class LocalModels:
    """A finished run continued by one round: the final global model ``w``, the round's
    clients, their local models ``[K, P]``, their training data (normalised), the pooled
    training data ``F`` is measured on, the model template and the run's config."""

    w: torch.Tensor
    client_ids: list[int]
    client_models: torch.Tensor
    client_data: list[tuple[torch.Tensor, torch.Tensor]]
    global_data: tuple[torch.Tensor, torch.Tensor]
    flat: object
    cfg: object


def final_simulation(run_dir, device: str = "cpu"):
    """The run's simulation restored to its final state (its last checkpoint)."""

    run = run_handle(run_dir)
    cfg = resolved_config(run, None).replace(device=str(device))
    state = run.load_checkpoint(map_location="cpu")
    if state is None:
        raise RunLoadError(f"run {str(run.path)!r} has no checkpoint to continue from")
    sim = Simulation.from_config(cfg)
    sim.load_state(state)
    return sim


def pooled_training_data(data, samples: int | None, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The clients' training data pooled (Eq. 1's ``F``), normalised; a seeded subset of
    ``samples`` when there are more."""

    index = torch.cat([torch.as_tensor(i).reshape(-1) for i in data.client_indices]).to(data.train_y.device)
    if samples is not None and samples < index.numel():
        keep = torch.randperm(index.numel(), generator=generator(seed, "analysis/subset"))[:samples]
        index = index[keep.sort().values.to(index.device)]
    return data.eval_train_inputs()[index], data.train_y[index]


def extra_round(run_dir, samples: int | None = None, device: str = "cpu") -> LocalModels:
    """One further round of a finished run from its final state (module docstring)."""
    sim = final_simulation(run_dir, device)
    w = sim.w.detach().clone()
    result = sim.step()
    inputs = sim.data.eval_train_inputs()
    client_data = [(inputs[sim.data.client_indices[k]], sim.data.train_y[sim.data.client_indices[k]])
                   for k in result.client_ids]
    return LocalModels(w, list(result.client_ids), result.client_models, client_data,
                       pooled_training_data(sim.data, samples), sim.flat, sim.cfg)


# --------------------------------------------------------------------------- Table 2

def _scale_of(run_dir) -> str:
    config = json.loads((Path(run_dir) / "config.json").read_text())
    return config.get("scale", "small")


def common_rho(run_dir) -> float:
    """The radius Delta_F uses for a run: the FedSAM preset's ``rho`` for the run's data
    set, alpha and scale (module docstring)."""

    config = json.loads((Path(run_dir) / "config.json").read_text())
    keep = ("dataset", "scale", "alpha", "partition", "per_round", "seed", "clients", "num_samples", "rounds")
    values = {k: config[k] for k in keep if k in config}
    return float(resolve_config({**values, "method": "fedsam"}).rho)


def global_flatness(run_dir, scale: str | None = None, device: str = "cpu") -> dict:
    """``{"lpf", "lambda_max", "flatness_discrepancy", "loss"}`` of a run's final global
    model (Table 2; module docstring), cached in the run's folder."""
    scale = scale or _scale_of(run_dir)
    s = settings_for(scale)
    key = f"flatness/samples={s['samples']}/iters={s['power_iters']}/lpf={LPF_SIGMA}x{s['lpf_draws']}"

    def compute():
        with one_thread():
            return _flatness(run_dir, s, device)

    return _cached(run_dir, key, compute)


def _flatness(run_dir, s: dict, device: str) -> dict:

    local = extra_round(run_dir, s["samples"], device)
    x, y = local.global_data
    flat = local.flat
    evaluator = DatasetEvaluator(flat, x, y)
    loss = float(evaluator.evaluate(local.w)[0])
    lpf_value = lpf(evaluator, local.w, sigma=LPF_SIGMA, m=s["lpf_draws"], seed=0).value
    eig = power_iteration(make_hvp(flat, local.w, x, y), k=1, iters=s["power_iters"], seed=0, return_vectors=False)
    rho = common_rho(run_dir)
    discrepancy = flatness_discrepancy(flat, local.w, (x, y), local.client_models, local.client_data, rho)
    return {"lpf": lpf_value, "lambda_max": float(eig.eigenvalues[0]),
            "flatness_discrepancy": discrepancy.delta_f, "global_sharpness": discrepancy.global_sharpness,
            "local_sharpness": discrepancy.weighted_local_sharpness, "rho": rho, "loss": loss}


# --------------------------------------------------------------------------- Table 4

def transmissions_to_target(metrics: pd.DataFrame, method: str, target: float) -> dict:
    """Table 4's cell: ``rounds`` (:func:`flcore.reproduction.targets.rounds_to_target`; a
    run that never reaches ``target`` is counted at its last evaluated round + 1, censored),
    ``reached``, ``per_round`` (Table 3's transmissions) and ``transmissions`` (rounds x
    per-round transmissions / 100, the paper's unit x10^2)."""

    rounds = rounds_to_target(metrics, target)
    reached = rounds is not None
    if not reached:
        curve = accuracy_curve(metrics)
        rounds = (curve[-1][0] if curve else 0) + 1
    per_round = transmissions_per_round(method)
    return {"rounds": int(rounds), "reached": reached, "per_round": per_round,
            "transmissions": rounds * per_round / 100.0}


# --------------------------------------------------------------------------- Figures 2, 5, 6

def loss_surfaces(run_dir, client: int = 0, scale: str | None = None, span: float = 1.0,
                  device: str = "cpu") -> dict:
    """Figs. 2 and 6: the surfaces (filter-normalised random directions, Li et al. 2018)
    around client ``client``'s local model (of one further round) on its own data
    (``local_on_local``, ``F_i``) and on the pooled data (``local_on_global``, ``F``), and
    around the final global model on the pooled data (``global_on_global``).  Values:
    :class:`~flcore.analysis.landscape.Landscape2D`."""
    with one_thread():
        return _surfaces(run_dir, client, settings_for(scale or _scale_of(run_dir)), span, device)


def _surfaces(run_dir, client: int, s: dict, span: float, device: str) -> dict:

    local = extra_round(run_dir, s["samples"], device)
    if not 0 <= client < len(local.client_ids):
        raise ValueError(f"client must be in 0..{len(local.client_ids) - 1}, got {client}")
    xs = grid_points(span, s["grid"])
    w_i = local.client_models[client]
    x_i, y_i = local.client_data[client]
    on_local = DatasetEvaluator(local.flat, x_i, y_i)
    on_global = DatasetEvaluator(local.flat, *local.global_data)
    d_local = random_directions(local.flat, w_i, 2, seed=0)
    surfaces = landscapes_on_datasets({"local_on_local": on_local, "local_on_global": on_global},
                                      w_i, d_local[0], d_local[1], xs, xs)
    d_global = random_directions(local.flat, local.w, 2, seed=0)
    surfaces["global_on_global"] = landscape_2d(on_global, local.w, d_global[0], d_global[1], xs, xs)
    surfaces["client_id"] = local.client_ids[client]
    return surfaces


#: Figs. 2 and 6's panels: the surfaces of :func:`loss_surfaces` and what each shows.
SURFACE_PANELS = {"local_on_local": "local model on its own data (F_i)",
                  "local_on_global": "local model on the global data (F)",
                  "global_on_global": "global model on the global data (F)"}


def surface_summary(surfaces: dict) -> pd.DataFrame:
    """Figs. 2 and 6's table: per surface of :func:`loss_surfaces` (in :data:`SURFACE_PANELS`'
    order, those present), the loss at the grid's centre and how much the loss rises above it
    over the grid."""
    rows = []
    for key, text in SURFACE_PANELS.items():
        if (surface := surfaces.get(key)) is not None:
            centre = surface.loss[len(surface.xs) // 2, len(surface.ys) // 2]
            rows.append({"surface": text, "loss at the centre": float(centre),
                         "largest rise on the grid": float(surface.loss.max() - centre)})
    return pd.DataFrame(rows)


def show_loss_surfaces(page, runs: pd.DataFrame, scale: str, method: str) -> dict[str, float]:
    """Figs. 2 (FedSAM) and 6 (FedGF): the three surfaces of :func:`loss_surfaces` around the
    first client's local model of one further round and the final global model of the
    figure's run (alpha = 0), the table of :func:`surface_summary` and the three contour
    panels; returns the largest rise per surface key (those drawn)."""
    import matplotlib.pyplot as plt


    row = runs.iloc[0]
    surfaces = loss_surfaces(row["run_dir"], client=0, scale=scale) if row["status"] == "finished" else {}
    summary = surface_summary(surfaces)
    page.table(summary, f"{method} at alpha = 0, {scale} scale: the loss at each surface's centre and how much it "
                        f"rises over the grid (client {surfaces.get('client_id', '-')} of one further round).")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for ax, (key, text) in zip(axes, SURFACE_PANELS.items()):
        if key in surfaces:
            plot_surface_2d(surfaces[key], ax=ax, title=text)
    rises = dict(zip(summary["surface"], summary["largest rise on the grid"])) if len(summary) else {}
    by_key = {key: rises[text] for key, text in SURFACE_PANELS.items() if text in rises}
    stand_in = stand_in_for(scale, "fedgf")
    data = "CIFAR-100" if stand_in.is_paper else f"{stand_in.name}, {scale} scale"
    page.figure(fig, f"{method}'s loss surfaces at alpha = 0 ({data}): the local model's surface on its own data "
                     f"rises {'less' if local_flatter(by_key) else 'no less'} than the global model's on the global "
                     "data over the same grid.",
                alt="Three contour plots of training loss over two random filter-normalised directions: "
                    + "; ".join(f"{k} rises by {v:.3f}" for k, v in rises.items()) + ".")
    return by_key


def local_flatter(rises: dict[str, float]) -> bool:
    """Whether the local model's surface on its own data rises less over the grid than the
    global model's on the global data (Figs. 2 and 6; False when either is missing)."""
    return rises.get("local_on_local", float("nan")) < rises.get("global_on_global", float("nan"))


def surface_findings(rises: dict[str, float], scale: str, method: str) -> list[str]:
    """The "What we found" sentences of Figs. 2 (``method="FedSAM"``: flat locally, sharp
    globally) and 6 (FedGF: the global model's rise, to set beside Fig. 2's) from
    :func:`show_loss_surfaces`'s rises."""

    flatter = "flatter" if local_flatter(rises) else "not flatter"
    if method == "FedSAM":
        lines = [f"At the **{scale}** scale the local model's surface on its own data is {flatter} than the global "
                 "model's on the global data (the paper: flat locally, sharp globally). The paper gives surfaces "
                 "only."]
    else:
        lines = [f"At the **{scale}** scale {method}'s global model rises by "
                 f"{rises.get('global_on_global', float('nan')):.3f} over the grid on the global data (the paper: "
                 f"flatter than FedSAM's global model; Figure 2's page gives FedSAM's rise over the same grid), and "
                 f"its local model's surface on its own data is {flatter} than that. The paper gives surfaces only."]
    if scale == "smoke":
        lines.append(SMOKE_NOTE)
    return lines


def perturbation_losses(run_dir, magnitudes: Sequence[float], scale: str | None = None,
                        device: str = "cpu") -> pd.DataFrame:
    """Fig. 5: the training loss of the final global model at ``w + r eps``,
    ``eps ~ N(0, I)``, against ``r`` (:func:`flcore.analysis.lpf.perturbation_curve`)."""

    s = settings_for(scale or _scale_of(run_dir))
    with one_thread():
        sim = final_simulation(run_dir, device)
        x, y = pooled_training_data(sim.data, s["samples"])
        curve = perturbation_curve(DatasetEvaluator(sim.flat, x, y), sim.w, list(magnitudes),
                                   samples=s["curve_samples"], seed=0)
    return pd.DataFrame({"magnitude": curve.magnitudes.numpy(), "loss": curve.loss.numpy(),
                         "loss_std": curve.loss_std.numpy()})


def finite(value) -> float | None:
    value = None if value is None else float(value)
    return value if value is not None and math.isfinite(value) else None


def transmissions_table(runs: pd.DataFrame, metrics: pd.DataFrame, target_algorithm: str = "FedAvg",
                        keys: Sequence[str] = ("dataset", "alpha", "seed")) -> pd.DataFrame:
    """Table 4 from runs (:func:`~flcore.reproduction.runner.ensure_runs`'s frame) and their
    per-round metrics (:func:`~flcore.reproduction.runner.run_metrics`): for every finished
    run but the target algorithm's, the target (the final accuracy -- mean of the last 100
    rounds -- of the ``target_algorithm`` run with the same ``keys``, %), the rounds to it,
    whether it was reached, the transmissions per round and the transmissions (x10^2)."""
    keys = list(keys)
    finished = runs[runs["status"] == "finished"]
    targets = finished[finished["algorithm"] == target_algorithm].set_index(keys)["mean_last_100"]
    rows = []
    for row in finished[finished["algorithm"] != target_algorithm].to_dict("records"):
        key = tuple(row[k] for k in keys)
        if key not in targets.index:
            continue
        target = float(targets.loc[key])
        curve = metrics[metrics["run_id"] == row["run_id"]]
        cell = transmissions_to_target(curve, row["method"], target)
        rows.append({**{k: row[k] for k in keys}, "algorithm": row["algorithm"], "target": 100.0 * target, **cell,
                     "run_id": row["run_id"]})
    return pd.DataFrame(rows, columns=keys + ["algorithm", "target", "rounds", "reached", "per_round",
                                              "transmissions", "run_id"])


#: Outcomes of :func:`first_to_target`.
FIRST, SECOND, SAME, NEITHER = "first", "second", "same", "neither reached"


def first_to_target(table: pd.DataFrame, first: str = "FedGF", second: str = "FedSMOO",
                    keys: Sequence[str] = ("dataset", "alpha", "seed")) -> pd.DataFrame:
    """Which of two methods reaches the target of :func:`transmissions_table` with fewer
    transmissions, once per *distinct pair of runs*: two settings that are the same runs
    (both CIFAR labels at alpha = 0 below the paper scale) are one comparison, listed with
    both settings.  ``outcome``: :data:`FIRST` (``first`` reached it with fewer, or only it
    reached it), :data:`SECOND`, :data:`SAME` (both reached it with as many) or
    :data:`NEITHER` (neither reached it: a run that never reaches the target is counted at
    its last round + 1, so its transmissions compare nothing)."""
    keys = list(keys)
    by_setting = {}
    for key, block in table.groupby(keys, sort=False):
        cells = block.set_index("algorithm")
        if first in cells.index and second in cells.index:
            by_setting[key] = (cells.loc[first], cells.loc[second])
    pairs: dict[tuple[str, str], dict] = {}
    for key, (a, b) in by_setting.items():
        pair = (a["run_id"], b["run_id"])
        setting = ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{v}" for k, v in zip(keys, key)
                            if k != "seed")
        if pair in pairs:
            pairs[pair]["settings"] += f"; {setting}"
            continue
        if not a["reached"] and not b["reached"]:
            outcome = NEITHER
        elif a["reached"] and (not b["reached"] or a["transmissions"] < b["transmissions"]):
            outcome = FIRST
        elif b["reached"] and (not a["reached"] or b["transmissions"] < a["transmissions"]):
            outcome = SECOND
        else:
            outcome = SAME
        pairs[pair] = {"settings": setting, **({"seed": key[keys.index("seed")]} if "seed" in keys else {}),
                       f"{first} reached": bool(a["reached"]),
                       f"{second} reached": bool(b["reached"]), f"{first} (x10^2)": a["transmissions"],
                       f"{second} (x10^2)": b["transmissions"], "outcome": outcome}
    return pd.DataFrame(list(pairs.values()),
                        columns=["settings", *(["seed"] if "seed" in keys else []), f"{first} reached",
                                 f"{second} reached", f"{first} (x10^2)",
                                 f"{second} (x10^2)", "outcome"])
