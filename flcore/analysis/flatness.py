"""Sharpness in a rho-ball and FedGF's flatness discrepancy Delta_F.

Sharpness (Foret et al.; the FedLESAM paper's global sharpness, Sec. 2.2):
``S(w) = max_{|delta| <= rho} F(w + delta) - F(w)``.  The inner max is estimated by
``steps`` normalised-gradient ascent steps projected on the ball:
``delta <- Proj_rho(delta + rho g(w + delta)/|g(w + delta)|)`` from ``delta = 0``; one step
(the default) is exactly the SAM perturbation ``rho g/|g|`` that the SAM-family papers use
as their approximation of the max, so ``S`` is ``F(w + rho g/|g|) - F(w)``.  The estimate
is the largest rise seen over the iterates (never below 0, since ``delta = 0`` is
feasible), so more steps can only raise it.

Flatness discrepancy (FedGF, Definition 1, Eq. 7)::

    Delta_F = | [max_{|d|<=rho} F(w + d) - F(w)] - sum_i (m_i/m) [max_{|d_i|<=rho} F_i(w_i + d_i) - F_i(w_i)] |

with ``w`` the global model, ``F`` the global objective, ``w_i`` client ``i``'s local model
and ``F_i`` its local objective.  The paper leaves open how the max is solved, which
``rho``, which clients and which data; decisions:

- the inner maxima use :func:`sharpness` with the same ``rho`` and ``steps`` (default one
  SAM step) for the global and the local terms; ``rho`` has no default (use the run's
  SAM radius);
- the clients are the ones passed (e.g. the participants of the last round, whose local
  models a run stores); ``m_i`` are their sample counts (default: the sizes of the
  client datasets passed) and ``m`` their sum, so the weights sum to 1 over the clients
  given (Eq. 7 sums over all N clients with ``m`` the total; with all clients passed the
  two agree);
- ``F`` is the loss on the global data passed (the union of the clients' training data
  reproduces Eq. 1's ``F``), ``F_i`` the loss on client ``i``'s data.  The bracket in
  Eq. 7 is read as the weighted sum of per-client rises (each ``F_i(w_i)`` inside the sum).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from flcore.analysis.evaluation import loss_and_grad
from flcore.flat import FlatModel

__all__ = [
    "FlatnessDiscrepancy",
    "SharpnessResult",
    "ball_ascent",
    "flatness_discrepancy",
    "flatness_discrepancy_from",
    "sharpness",
]

#: ``w [P] -> (loss (0-d), grad [P])``.
LossGradFn = Callable[[torch.Tensor], "tuple[torch.Tensor, torch.Tensor]"]


@dataclass
class SharpnessResult:
    """``sharpness = perturbed_loss - loss`` (>= 0) and the maximising perturbation."""

    sharpness: float
    loss: float
    perturbed_loss: float
    delta: torch.Tensor

    def to_dict(self) -> dict:
        return {"sharpness": self.sharpness, "loss": self.loss, "perturbed_loss": self.perturbed_loss}


def ball_ascent(loss_grad: LossGradFn, w: torch.Tensor, rho: float, steps: int = 1) -> SharpnessResult:
    """``max_{|delta| <= rho} L(w + delta) - L(w)`` by projected normalised ascent (see
    module docstring) on any ``loss_grad(w) -> (loss, grad)``."""
    if rho < 0:
        raise ValueError(f"rho must be >= 0, got {rho}")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    loss0, g = loss_grad(w)
    loss0 = float(loss0)
    best_loss, best_delta = loss0, torch.zeros_like(w)
    delta = torch.zeros_like(w)
    for _ in range(steps):
        norm = g.norm()
        if float(norm) == 0.0 or rho == 0:
            break
        delta = delta + rho * g / norm
        d_norm = delta.norm()
        if float(d_norm) > rho:
            delta = delta * (rho / d_norm)
        loss, g = loss_grad(w + delta)
        if float(loss) > best_loss:
            best_loss, best_delta = float(loss), delta.clone()
    return SharpnessResult(best_loss - loss0, loss0, best_loss, best_delta)


def sharpness(flat: FlatModel, w: torch.Tensor, x: torch.Tensor, y: torch.Tensor, rho: float,
              steps: int = 1, batch_size: int = 1000) -> SharpnessResult:
    """Sharpness of the mean cross-entropy of ``w`` on ``(x, y)`` in the ``rho``-ball."""
    return ball_ascent(lambda v: loss_and_grad(flat, v, x, y, batch_size), w, rho, steps)


@dataclass
class FlatnessDiscrepancy:
    """FedGF's Delta_F with its parts: the global rise, each client's rise, the weights."""

    delta_f: float
    global_sharpness: float
    local_sharpness: torch.Tensor
    weights: torch.Tensor
    weighted_local_sharpness: float

    def to_dict(self) -> dict:
        return {"delta_f": self.delta_f, "global_sharpness": self.global_sharpness,
                "local_sharpness": self.local_sharpness.tolist(), "weights": self.weights.tolist(),
                "weighted_local_sharpness": self.weighted_local_sharpness}


def _weights(weights, sizes: Sequence[int]) -> torch.Tensor:
    p = torch.as_tensor(sizes if weights is None else weights, dtype=torch.float64).reshape(-1)
    if p.numel() != len(sizes) or (p < 0).any() or float(p.sum()) <= 0:
        raise ValueError("weights must be one non-negative number per client, not all zero")
    return p / p.sum()


def flatness_discrepancy_from(global_sharpness: float, local_sharpness, weights) -> float:
    """``|S_global - sum_i p_i S_i|`` with ``weights`` normalised to sum to 1."""
    s = torch.as_tensor(local_sharpness, dtype=torch.float64).reshape(-1)
    p = _weights(weights, [1] * s.numel())
    return abs(float(global_sharpness) - float((p * s).sum()))


def flatness_discrepancy(flat: FlatModel, w_global: torch.Tensor, global_data, client_models,
                         client_data, rho: float, weights=None, steps: int = 1,
                         batch_size: int = 1000) -> FlatnessDiscrepancy:
    """FedGF's Delta_F (see module docstring).

    ``global_data``: ``(x, y)`` for ``F``; ``client_models``: ``[K, P]`` tensor or list of
    ``K`` flat vectors; ``client_data``: ``K`` pairs ``(x_i, y_i)``; ``weights``: ``m_i``
    (default the client dataset sizes), normalised to sum to 1.
    """
    models = list(client_models) if not isinstance(client_models, torch.Tensor) else list(client_models.unbind(0))
    if len(models) != len(client_data) or not models:
        raise ValueError(f"need one dataset per client model, got {len(models)} models and "
                         f"{len(client_data)} datasets")
    p = _weights(weights, [int(x.shape[0]) for x, _ in client_data])
    xg, yg = global_data
    s_global = sharpness(flat, w_global, xg, yg, rho, steps, batch_size).sharpness
    s_local = torch.tensor([sharpness(flat, wi, xi, yi, rho, steps, batch_size).sharpness
                            for wi, (xi, yi) in zip(models, client_data)], dtype=torch.float64)
    weighted = float((p * s_local).sum())
    return FlatnessDiscrepancy(abs(s_global - weighted), s_global, s_local, p, weighted)
