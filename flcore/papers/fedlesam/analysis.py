"""Global loss surfaces of stored runs: the FedLESAM paper's Figures 1 (a)-(c), 3 and 6.

The paper draws the loss of each final global model on the global (pooled) training data
around it, presumably with Li et al.'s (2018) filter-normalised random directions (it
cites them; grid and range are not stated).  :func:`global_surface` evaluates ``L(w + a
d1 + b d2)`` on a ``num x num`` grid of ``[-span, span]^2`` with two filter-normalised
directions drawn from ``seed`` (:mod:`flcore.analysis.landscape`), on at most ``samples``
training images (a fixed subset).

Each model gets its own directions (they are normalised to its filters), drawn from the
same seed, so the surfaces differ by the models only.  :func:`surface_summary` reduces a
surface to numbers that order the methods by flatness, which the paper reads off its
pictures: the loss at the centre, the mean rise of the loss over the grid, and the rise
at the grid's edge (radius ``span``).

**Figure 2's probe**: perturbation drift and global sharpness as a training-time probe.

Registered as the probe ``perturbation`` (:func:`flcore.analysis.recording.register_probe`);
a run with ``probes = ["perturbation"]`` records, at its evaluation rounds:

- ``perturbation.drift``: the perturbation drift (PD) of the paper's Sec. 3.2,
  ``(1/M) sum_i |delta_i - delta|`` (:func:`flcore.analysis.probes.perturbation_drift`),
  between each client's perturbation ``delta_i`` and the true global perturbation
  ``delta = rho grad F(w)/|grad F(w)|`` on the pooled training data;
- ``perturbation.mean_cosine``: the mean cosine between them (``|delta_i - delta|^2 =
  2 rho^2 (1 - cos)``), and ``perturbation.unperturbed``: how many of the M clients have
  no perturbation (FedLESAM before a client's first visit: ``delta_i = 0``);
- ``perturbation.sharpness``: the global sharpness ``F(w + r g/|g|) - F(w)`` of the global
  model on the pooled training data (one ascent step, :func:`flcore.analysis.flatness.sharpness`)
  with the radius :data:`SHARPNESS_RADIUS` for every method.

Decisions (the paper's formula for PD is lost in our copy; book/differences.md):

- *Which perturbation.*  ``delta_i`` is the one client i applies at the first local step of
  the *next* round, from the new global model ``w^{t+1}``: computed by the method's own
  perturbation part (:mod:`flcore.algorithms.perturbation`, ``..._global``, ``..._smoo``)
  with the client's stored state (FedLESAM's ``w_i^old``, FedSMOO's dual ``mu_i``) and the
  server's broadcast (FedSMOO's ``s``), on the client's *whole* local training set instead
  of a minibatch (so the drift measures the method, not minibatch noise).  The M clients
  are those the next round samples.  Methods without a perturbation (FedAvg) record only
  the sharpness.
- *Scale.*  The methods run with different radii (FedSAM's rho is not FedGAMMA's), and PD
  grows with rho; PD is reported per unit radius, ``(1/M) sum_i |u_i - u|`` with ``u_i``,
  ``u`` the unit directions (0: the same direction, sqrt(2): orthogonal, 2: opposite; an
  absent perturbation counts as orthogonal).
- *Data.*  At most :data:`MAX_POOLED` training samples (a fixed subset) for the global
  gradient and the sharpness.
"""
from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pandas as pd
import torch

from flcore.algorithms.local import RoundContext, call_hook
from flcore.analysis.evaluation import DatasetEvaluator, loss_and_grad
from flcore.analysis.flatness import sharpness
from flcore.analysis.io import load_run
from flcore.analysis.landscape import Landscape2D, grid_points, landscape_2d, random_directions
from flcore.analysis.probes import Probe, perturbation_cosine, perturbation_drift
from flcore.report.analysis_plots import plot_surface_2d
from flcore.report.figure_layout import panel_figure
from flcore.reproduction.published import source
from flcore.reproduction.stand_in import stand_in_for
from flcore.sim.sampling import sample_clients

if TYPE_CHECKING:
    import pandas as pd


def global_surface(run_dir: str | Path, num: int = 11, span: float = 1.0, samples: int | None = 2000,
                   seed: int = 0, device: str = "cpu") -> Landscape2D:
    """The loss surface of the run's final global model on its pooled training data."""
    run = load_run(run_dir, device=device)
    x, y = run.data("train", samples=samples, seed=seed)
    evaluate = DatasetEvaluator(run.flat, x, y, batch_size=run.config.eval_batch_size)
    d1, d2 = random_directions(run.flat, run.w, num=2, seed=seed)
    grid = grid_points(span, num)
    return landscape_2d(evaluate, run.w, d1, d2, grid, grid)


def surface_summary(surface: Landscape2D) -> dict:
    """``centre_loss``, ``mean_rise`` (mean loss over the grid minus the centre's) and
    ``edge_rise`` (mean loss on the grid points at distance >= the grid's half-width from
    the centre, minus the centre's)."""
    xs, ys, loss = surface.xs, surface.ys, surface.loss
    i0, j0 = int(torch.argmin(xs.abs())), int(torch.argmin(ys.abs()))
    centre = float(loss[i0, j0])
    radius = torch.sqrt(xs[:, None] ** 2 + ys[None, :] ** 2)
    edge = radius >= float(xs.abs().max())
    return {"centre_loss": centre, "mean_rise": float(loss.mean()) - centre,
            "edge_rise": float(loss[edge].mean()) - centre}


#: Grid points per axis and training samples of the pages' surfaces (coarse below the paper scale).
PAGE_GRID = {"smoke": 5, "small": 11, "paper": 21}
PAGE_SAMPLES = {"smoke": 500, "small": 2000, "paper": 10000}


def flatness_order(summary, name: str = "algorithm") -> list[str]:
    """The surfaces of :func:`surface_summary` rows from flattest to sharpest (smallest rise
    of the loss at the grid's edge first), by their ``name`` column."""
    return list(summary.sort_values("edge_rise")[name])


def show_global_surfaces(page, runs, scale: str, name: str = "algorithm") -> pd.DataFrame:
    """Figs. 1 (a)-(c), 3 and 6 of the FedLESAM paper: the loss surface of each finished run's
    final global model on its pooled training data (:func:`global_surface`, grid and samples
    of :data:`PAGE_GRID` / :data:`PAGE_SAMPLES`), one contour panel per run named by its
    ``name`` column, then :func:`surface_summary` as a table ordered by flatness; ends with the
    published source.  Returns the summary (one row per panel)."""
    from IPython.display import Markdown, display


    data_name = stand_in_for(scale, "fedlesam").data_name("CIFAR-10")
    finished = runs[runs["status"] == "finished"].drop_duplicates("run_id")
    surfaces = {row[name]: global_surface(row["run_dir"], num=PAGE_GRID[scale], samples=PAGE_SAMPLES[scale],
                                          device="cpu")
                for row in finished.to_dict("records")}
    summary = pd.DataFrame([{name: key, **surface_summary(s)} for key, s in surfaces.items()])
    if len(surfaces):
        fig, axes = panel_figure(len(surfaces), 3.6, 3.2)
        for ax, (key, surface) in zip(axes, surfaces.items()):
            plot_surface_2d(surface, ax=ax, levels=20, colorbar=False, title=key)
        ranked = flatness_order(summary, name)
        page.figure(fig, f"Global loss surfaces on {data_name}: the flattest (smallest loss rise at the grid's edge) "
                         f"is {ranked[0]}.",
                    alt=f"Contour plots of the training loss around each final global model ({', '.join(surfaces)}).")
        page.table(summary, f"The surfaces in numbers: loss at the centre, mean rise over the grid, rise at the edge; "
                            f"from flattest to sharpest: {' > '.join(ranked)}.",
                   show=summary)
    display(Markdown(f"Published values: {source(page.artifact_id)['value']}."))
    return summary


#: Radius of the global sharpness, the same for every method.
SHARPNESS_RADIUS = 0.05
#: Most pooled training samples the probe evaluates.
MAX_POOLED = 10_000


def _unit_rows(v: torch.Tensor) -> torch.Tensor:
    norm = v.norm(dim=-1, keepdim=True)
    return torch.where(norm > 0, v / norm.clamp_min(1e-30), torch.zeros_like(v))


def client_perturbations(sim, w: torch.Tensor, clients: list[int]) -> torch.Tensor | None:
    """``[M, P]``: the perturbation each of ``clients`` applies at its first step from
    ``w`` (module docstring), by the method's perturbation part; None for a method
    without one."""
    part = sim.client_update.perturbation
    if type(part).__name__ == "NoPerturbation":
        return None
    ids = torch.as_tensor(clients, device=w.device)
    start, broadcast = sim.server.broadcast(w, sim.server_state, sim.rounds_done)
    K = len(clients)
    x_all, y_all = sim.data.eval_train_inputs(), sim.data.train_y
    batch_size = sim.cfg.eval_batch_size

    def grad_fn(W, batch):
        losses, grads = [], []
        for row, k in enumerate(clients):
            idx = sim.data.client_indices[k]
            loss, g = loss_and_grad(sim.flat, W[row], x_all[idx], y_all[idx], batch_size)
            losses.append(loss.to(W.dtype))
            grads.append(g)
        return torch.stack(losses), torch.stack(grads)

    ctx = RoundContext(round=sim.rounds_done, lr=sim.client_lr(sim.rounds_done),
                       start=start.expand(K, -1).clone() if start.dim() == 1 else start,
                       client_ids=ids, grad_fn=grad_fn,
                       client_state={name: table[ids] for name, table in sim.client_state.items()},
                       broadcast=broadcast, global_model=w, weight_mask=sim.flat.weight_mask)
    scratch: dict = {}
    call_hook(part, "begin", ctx, scratch)
    batch = SimpleNamespace(active=torch.ones(K, dtype=torch.bool, device=w.device))
    eps, _ = part(ctx.start, batch, ctx, scratch)
    return eps


def pooled_data(sim) -> tuple[torch.Tensor, torch.Tensor]:
    """The pooled training set (a fixed subset of :data:`MAX_POOLED` samples at most)."""
    x, y = sim.data.eval_train_inputs(), sim.data.train_y
    if x.shape[0] > MAX_POOLED:
        keep = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(0))[:MAX_POOLED]
        keep = keep.to(x.device)
        x, y = x[keep], y[keep]
    return x, y


def perturbation_state(sim, w: torch.Tensor) -> dict:
    """PD, cosine and global sharpness of ``w`` (module docstring)."""

    x, y = pooled_data(sim)
    batch_size = sim.cfg.eval_batch_size
    out = {"sharpness": sharpness(sim.flat, w, x, y, SHARPNESS_RADIUS, batch_size=batch_size).sharpness}
    clients = sample_clients(sim.cfg.seed, sim.rounds_done, sim.data.num_clients, sim.cfg.per_round).tolist()
    local = client_perturbations(sim, w, clients)
    if local is None:
        return out
    _, g = loss_and_grad(sim.flat, w, x, y, batch_size)
    u, u_i = _unit_rows(g[None])[0], _unit_rows(local)
    cos = perturbation_cosine(u_i, u)
    out.update(drift=perturbation_drift(u_i, u), mean_cosine=float(cos.mean()),
               unperturbed=int((local.norm(dim=-1) == 0).sum()))
    if not math.isfinite(out["drift"]):
        out["drift"] = None
    return out


def perturbation_probe_factory(sim) -> Probe:
    """``factory(sim)`` of the ``perturbation`` probe."""
    return Probe("perturbation", lambda state: perturbation_state(sim, state["w"]), ("w",))
