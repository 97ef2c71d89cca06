"""The FedIMA paper's analysis artifacts (Figs. 1-5, 8-10): their runs and what is computed
on the models those runs save.

The runs are FedAvg runs of Table VI (App. E) that save snapshots
(:mod:`flcore.analysis.recording`: the global model and the round's client models):

- ``cross-device`` (run group ``ima-vis-cd``; Figs. 1, 5, 9, 10): 100 clients, 10 per round,
  two class shards per client (Sec. IV), 5 local epochs of batch 50, lr 0.01 with momentum
  0.9 and *no* lr decay, 400 rounds;
- ``cross-silo`` (``ima-vis-cs`` and ``ima-decomp``; Figs. 2-4, 8, 9): 10 clients, all in
  every round, the same local training, 200 rounds for Fig. 8 and 400 with and without the
  x0.99 lr decay for Figs. 2-4.  One run per lr setting serves all of them here (400 rounds).

Below the paper scale the data set is MNIST-1D with its ``small`` learning settings (lr 0.1,
batch 20, one local epoch, no momentum), 5 clients per round of 100 for cross-device; the
cross-silo federation has 10 clients on 2,000 training samples (the MNIST-1D set is
generated at 2,500 samples; at 8,000 each round would cost 20 times a cross-device round),
and the rounds are those of :data:`ROUNDS`.  The paper's stage rounds, which the text lost,
are taken as 1/8, 1/2 and all of training; the three global models are the last three.

The computations -- a loss plane through three models, the line between two global
models, the decomposition factors of one snapshot -- call :mod:`flcore.analysis`
(``loss_plane``, ``interpolate``, ``loss_decomposition``) on test (planes, lines) or
training (decomposition, "the global dataset") data.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import torch

from flcore.analysis.decomposition import loss_decomposition
from flcore.analysis.evaluation import DatasetEvaluator
from flcore.analysis.interpolation import interpolate
from flcore.analysis.io import client_indices, load_run, split_data
from flcore.analysis.landscape import loss_plane
from flcore.analysis.recording import load_snapshot, snapshot_rounds_of
from flcore.report.analysis_plots import plot_surface_2d
from flcore.report.figure_layout import panel_figure
from flcore.reproduction.artifacts import RunSpec
from flcore.reproduction.stand_in import stand_in_for

if TYPE_CHECKING:
    import pandas as pd
    import torch

#: Rounds of the analysis runs by scale (cross-device, cross-silo).
ROUNDS = {"paper": {"cross-device": 400, "cross-silo": 400}, "small": {"cross-device": 100, "cross-silo": 50},
          "smoke": {"cross-device": 4, "cross-silo": 4}}
#: Snapshots of the decomposition (Figs. 2-4) runs: every this many rounds, by scale.
DECOMP_EVERY = {"paper": 10, "small": 5, "smoke": 1}
#: Cross-silo MNIST-1D samples (train + test) below the paper scale.
CROSS_SILO_SAMPLES = {"small": 2500, "smoke": 600}
#: Analysis evaluations: test samples and plane grid by scale.
SAMPLES = {"paper": 2000, "small": 1000, "smoke": 200}
GRID = {"paper": 21, "small": 11, "smoke": 5}
#: Width and height (inches) of one contour panel with its colour bar (:func:`draw_planes`).
PLANE_PANEL = (5.0, 3.8)


def stage_rounds(scale: str, fl: str = "cross-device") -> tuple[int, int, int]:
    """Fig. 1's three training stages (1/8, 1/2 and the end of training; the paper's lost)."""
    rounds = ROUNDS[scale][fl]
    return (max(1, rounds // 8), max(1, rounds // 2), rounds)


def last_rounds(scale: str, fl: str = "cross-device") -> tuple[int, int, int]:
    """The three last rounds (Fig. 1's fourth column: rounds 398-400)."""
    rounds = ROUNDS[scale][fl]
    return tuple(max(1, rounds - k) for k in (2, 1, 0))


def snapshot_plan(scale: str, fl: str, lr_decay: bool) -> tuple[int, ...]:
    """The rounds an analysis run saves: the stages and last rounds (both settings) and,
    cross-silo, every :data:`DECOMP_EVERY` rounds for the decomposition figures."""
    rounds = set(stage_rounds(scale, fl)) | set(last_rounds(scale, fl))
    if fl == "cross-silo":
        every = DECOMP_EVERY[scale]
        rounds |= set(range(every, ROUNDS[scale][fl] + 1, every))
    return tuple(sorted(rounds))


#: The paper's (data set, model) of the analysis runs -> flcore's at the paper scale.
VIS_DATA = {("CIFAR-10", "CNN"): ("cifar10", "cnn"), ("CIFAR-10", "ResNet-18"): ("cifar10", "resnet18gn"),
            ("FMNIST", "CNN"): ("fmnist", "fmnist_cnn")}


def vis_run(scale: str, fl: str = "cross-device", lr_decay: bool = False, partition: str = "shards",
            seed: int = 0, model: str = "CNN", dataset: str = "CIFAR-10") -> RunSpec:
    """An analysis run (module docstring); ``partition``: ``"shards"`` (two classes per
    client) or ``"dirichlet"`` (alpha 0.1, Fig. 10's second label skew); ``dataset`` and
    ``model``: the paper's (CIFAR-10 with its CNN or ResNet-18, FMNIST with its CNN; Fig. 10),
    a key of :data:`VIS_DATA`.  Below the paper scale every pair is the MNIST-1D model."""
    if fl not in ("cross-device", "cross-silo"):
        raise ValueError(f"fl must be cross-device or cross-silo, got {fl!r}")
    if (dataset, model) not in VIS_DATA:
        raise ValueError(f"(dataset, model) must be one of {sorted(VIS_DATA)}, got {(dataset, model)!r}")
    config: dict[str, Any] = {"method": "fedavg", "scale": scale, "seed": int(seed), "rounds": ROUNDS[scale][fl],
                              "snapshot_rounds": list(snapshot_plan(scale, fl, lr_decay))}
    if stand_in_for(scale, "fedima").is_paper:
        flcore_dataset, flcore_model = VIS_DATA[dataset, model]
        config.update(dataset=flcore_dataset, model=flcore_model, local_epochs=5, batch_size=50, lr=0.01, momentum=0.9,
                      weight_decay=1e-3, clients=100 if fl == "cross-device" else 10,
                      per_round=10, eval_every=10, eval_last=10)
    else:
        config.update(dataset=stand_in_for(scale, "fedima").dataset, eval_every=max(1, ROUNDS[scale][fl] // 10),
                      eval_last=1)
        if fl == "cross-silo":
            config.update(clients=10, per_round=10, num_samples=CROSS_SILO_SAMPLES[scale])
    if lr_decay:
        config["lr_decay"] = 0.99
    if partition == "shards":
        config.update(partition="shards", classes_per_client=2)
    else:
        config.update(partition="dirichlet", alpha=0.1)
    labels = {
        "algorithm": "FedAvg",
        "fl": fl,
        "dataset": dataset,
        "model": model,
        "lr_decay": "x0.99 per round" if lr_decay else "none",
        "partition": partition,
        "seed": int(seed),
    }
    return RunSpec(labels, config)


# ----------------------------------------------------------------------------- computations

def _loaded(run_dir: str, device: str = "cpu"):

    return load_run(run_dir, device=device)


def _test_evaluator(run, samples: int | None, device: str = "cpu"):

    x, y = split_data(run.dataset, "test", samples=samples, device=device)
    return DatasetEvaluator(run.flat, x, y)


def _with_points(plane, evaluate, W: torch.Tensor):
    """``plane`` with ``points``: the test loss and error of the three models and of their
    average (the white cross), evaluated exactly (not read off the grid)."""
    loss, error = evaluate(torch.cat([W, W.mean(0, keepdim=True)]))
    plane.points = {"model_loss": [float(v) for v in loss[:3]], "mean_loss": float(loss[3]),
                    "model_error": [float(v) for v in error[:3]], "mean_error": float(error[3])}
    return plane


def plane_values(plane) -> dict:
    """A row for a table: the three models' and their average's test loss, and the lowest
    loss on the plane's grid."""
    p = plane.points
    return {"model losses": ", ".join(f"{v:.3f}" for v in p["model_loss"]), "best model loss": min(p["model_loss"]),
            "mean loss": p["mean_loss"], "lowest on the plane": float(plane.loss.min()),
            "mean error (%)": 100 * p["mean_error"], "best model error (%)": 100 * min(p["model_error"])}


def draw_planes(panels: Sequence[tuple[str, str, Any]], key: str = "setting", gap: bool = True,
                field_prefix: str = ""):
    """Figs. 1, 8, 9 and 10: each plane of ``panels`` (``(label, title, plane)``) drawn as a
    row of test loss beside test error (the paper's columns become rows so the figure keeps
    the book's width: :func:`flcore.report.figure_layout.panel_figure`), and a table with a
    row per plane (``key``: the label, then :func:`plane_values`, and with ``gap`` how far the
    models' average sits above the plane's lowest point); a panel's title is
    ``"<title>: <field_prefix><loss|error>"``. Returns ``(figure, table)``."""
    figure, axes = panel_figure(2 * len(panels), PLANE_PANEL[0], PLANE_PANEL[1])
    rows = []
    for index, (label, title, plane) in enumerate(panels):
        for column, field in enumerate(("loss", "error")):
            plot_surface_2d(plane, ax=axes[2 * index + column], field=field, levels=15,
                            title=f"{title}: {field_prefix}{field}")
        values = plane_values(plane)
        if gap:
            values["cross above the lowest point"] = values["mean loss"] - values["lowest on the plane"]
        rows.append({key: label, **values})
    return figure, pd.DataFrame(rows)


def client_plane(run_dir: str, round: int, grid: int = 11, samples: int | None = 1000, margin: float = 0.3,
                 device: str = "cpu"):
    """Test loss and error on the plane through the first three client models of ``round``
    (Figs. 1, 8, 10; their average is the white cross)."""

    run = _loaded(run_dir, device)
    snap = load_snapshot(run_dir, round)
    W = snap["client_models"].to(device)
    if W.shape[0] < 3:
        raise ValueError(f"round {round} has {W.shape[0]} client models; a plane needs three")
    evaluate = _test_evaluator(run, samples, device)
    return _with_points(loss_plane(evaluate, W[0], W[1], W[2], grid=grid, margin=margin), evaluate, W[:3])


def global_plane(run_dir: str, rounds: Sequence[int], grid: int = 11, samples: int | None = 1000,
                 margin: float = 0.3, device: str = "cpu"):
    """Test loss and error on the plane through the global models of three ``rounds``
    (Fig. 1's fourth column: the cross is their average, an IMA-like model)."""

    if len(rounds) != 3:
        raise ValueError(f"three rounds are needed, got {list(rounds)}")
    run = _loaded(run_dir, device)
    w = [load_snapshot(run_dir, r)["w"].to(device) for r in rounds]
    evaluate = _test_evaluator(run, samples, device)
    return _with_points(loss_plane(evaluate, *w, grid=grid, margin=margin), evaluate, torch.stack(w))


def global_interpolation(run_dir: str, round_a: int, round_b: int, num: int = 11, samples: int | None = 1000,
                         t_min: float = -0.5, t_max: float = 1.5, device: str = "cpu"):
    """Fig. 5(b): test loss and error along ``(1 - t) w^{a} + t w^{b}`` between the global
    models of two rounds (:func:`flcore.analysis.interpolate`)."""

    run = _loaded(run_dir, device)
    w_a = load_snapshot(run_dir, round_a)["w"].to(device)
    w_b = load_snapshot(run_dir, round_b)["w"].to(device)
    return interpolate(_test_evaluator(run, samples, device), w_a, w_b, num=num, t_min=t_min, t_max=t_max)


def decomposition_over_rounds(run_dir: str, rounds: Sequence[int] | None = None, samples: int | None = 2000,
                              device: str = "cpu") -> pd.DataFrame:
    """Figs. 2-4: the FedIMA factors of each snapshot (:func:`flcore.analysis.loss_decomposition`):
    TrainBias and HeterBias of the round's client models on the training set (the union of
    the clients' data, the paper's global dataset), Locality ``max_k |w_k - w_g|`` and the
    mean distance to the round's FMA model, Var by number of averaged clients, the CKA
    covariance on ``samples`` training inputs, and the global model's test loss and error."""

    run = _loaded(run_dir, device)
    x, y = split_data(run.dataset, "train", device=device)
    parts = client_indices(run.config, run.dataset)
    evaluate = _test_evaluator(run, None, device)
    rows = []
    for rnd in rounds or snapshot_rounds_of(run_dir):
        snap = load_snapshot(run_dir, rnd)
        ids = [int(i) for i in snap["client_ids"]]
        W = snap["client_models"].to(device)
        factors = loss_decomposition(run.flat, W, snap["w"].to(device), x, y, [parts[i] for i in ids],
                                     output_samples=samples)
        loss, error = evaluate(snap["w"].to(device)[None])
        rows.append({"round": rnd, **{k: v for k, v in factors.items() if k != "variance_by_m"},
                     "variance_by_m": factors["variance_by_m"], "test_loss": float(loss[0]),
                     "test_error": float(error[0]) if error is not None else float("nan")})
    return pd.DataFrame(rows)



def decomposition_by_decay(runs: pd.DataFrame, samples: int | None = 2000) -> pd.DataFrame:
    """Figs. 2-4: :func:`decomposition_over_rounds` of every run of ``runs`` (a frame with
    ``run_dir`` and ``lr_decay``), stacked with a leading ``lr decay`` column."""
    frames = []
    for row in runs.itertuples():
        frame = decomposition_over_rounds(row.run_dir, samples=samples)
        frame.insert(0, "lr decay", row.lr_decay)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)

def variance_curve(frame: pd.DataFrame) -> pd.DataFrame:
    """Fig. 4(a): Var against the number of averaged clients, one row per (round, M)."""
    rows = [{"round": r, "clients averaged": int(m), "variance": v}
            for r, by_m in zip(frame["round"], frame["variance_by_m"]) for m, v in by_m.items()]
    return pd.DataFrame(rows)



# ----------------------------------------------------------------------------- run lists

def fig1_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Figs. 1 and 5: the cross-device run."""
    return [vis_run(scale, seed=seed) for seed in seeds[:1]]


def decomposition_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Figs. 2-4: the cross-silo runs without and with the x0.99 lr decay."""
    return [vis_run(scale, "cross-silo", decay, seed=seed) for decay in (False, True) for seed in seeds[:1]]


def fig8_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Figs. 8 and 9: cross-device and cross-silo (no lr decay)."""
    return [vis_run(scale, fl, seed=seed) for fl in ("cross-device", "cross-silo") for seed in seeds[:1]]


def fig10_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 10: cross-device runs per data set and model (CIFAR-10 CNN and ResNet-18, FMNIST
    CNN at the paper scale; the one MNIST-1D model below it) and label skew."""
    pairs = tuple(VIS_DATA) if stand_in_for(scale, "fedima").is_paper else (("CIFAR-10", "CNN"),)
    return [vis_run(scale, partition=partition, model=model, dataset=dataset, seed=seed) for dataset, model in pairs
            for partition in ("shards", "dirichlet") for seed in seeds[:1]]


def gain_trend(gains: pd.DataFrame, panel: str) -> str:
    """How IMA's gain moves along one axis of Figure 6: the mean ``gain`` at the smallest and
    at the largest ``x`` of the rows of ``panel`` (``"+1.20 -> -0.30 points ..."``), or that
    it is not measured when the panel has fewer than two points."""
    block = gains[gains["panel"] == panel].sort_values("x")
    if len(block) < 2:
        return "not measured at this scale"
    first, last = block.groupby("x")["gain"].mean().iloc[[0, -1]]
    return f"{first:+.2f} -> {last:+.2f} points from the smallest to the largest value"
