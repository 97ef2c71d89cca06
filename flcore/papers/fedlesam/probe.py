"""The FedLESAM paper's Figure 2 as a training-time probe: perturbation drift and global sharpness.

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
from types import SimpleNamespace

import torch

from flcore.algorithms.local import RoundContext, call_hook
from flcore.analysis.evaluation import loss_and_grad
from flcore.analysis.flatness import sharpness
from flcore.analysis.probes import Probe, perturbation_cosine, perturbation_drift
from flcore.sim.sampling import sample_clients

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
