"""Linear interpolation between two models and the loss barrier.

``w(t) = (1 - t) w_a + t w_b``: ``t = 0`` is ``w_a``, ``t = 1`` is ``w_b``, and ``t`` may
leave ``[0, 1]`` (the FedGloSS paper's Fig. 9 uses ``gamma in [-1, 2]`` with
``w(gamma) = gamma w_FedGloSS + (1 - gamma) w_NaiveFedGloSS``: pass ``w_a`` = NaiveFedGloSS,
``w_b`` = FedGloSS; FedIMA Figs. 5b/7c use ``(1 - lambda) w^{t1} + lambda w^{t2}``).

Barrier (Frankle et al. 2020; Entezari et al. 2022):
``B = max_{t in [0, 1]} [L(t) - ((1 - t) L(0) + t L(1))]``, the largest rise of the loss
above the chord between the endpoints.  It is 0 for a convex loss (the chord lies above
the curve and ``t = 0`` attains 0) and positive when a hill separates the models.
Decision (papers silent): the max is over the evaluated ``t`` in ``[0, 1]`` only; points
outside ``[0, 1]`` are reported but do not enter the barrier, and ``t = 0`` and ``t = 1``
are always evaluated (added to the grid when missing), so ``B >= 0``.  The same formula
on the error curve gives ``barrier_error``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from flcore.analysis.evaluation import Evaluator, evaluate_points

__all__ = ["Interpolation", "interpolate", "loss_barrier"]


@dataclass
class Interpolation:
    """Loss/error along ``(1 - t) w_a + t w_b`` (float64, CPU) and the barriers."""

    ts: torch.Tensor
    loss: torch.Tensor
    error: torch.Tensor | None
    barrier: float
    barrier_t: float
    barrier_error: float | None

    def to_dict(self) -> dict:
        return {"ts": self.ts.tolist(), "loss": self.loss.tolist(),
                "error": None if self.error is None else self.error.tolist(),
                "barrier": self.barrier, "barrier_t": self.barrier_t,
                "barrier_error": self.barrier_error}


def loss_barrier(ts, values) -> tuple[float, float]:
    """``(B, t*)``: the barrier of the curve ``values`` over ``ts`` (see module docstring)
    and where it is attained.  ``ts`` must contain 0 and 1."""
    ts = torch.as_tensor(ts, dtype=torch.float64).reshape(-1)
    values = torch.as_tensor(values, dtype=torch.float64).reshape(-1)
    if ts.shape != values.shape:
        raise ValueError(f"ts and values differ in length ({ts.numel()} vs {values.numel()})")
    at0, at1 = torch.nonzero(ts == 0), torch.nonzero(ts == 1)
    if at0.numel() == 0 or at1.numel() == 0:
        raise ValueError("ts must contain 0 and 1 to define the chord")
    l0, l1 = values[at0[0, 0]], values[at1[0, 0]]
    inside = (ts >= 0) & (ts <= 1)
    rise = values[inside] - ((1 - ts[inside]) * l0 + ts[inside] * l1)
    best = int(torch.argmax(rise))
    return float(rise[best]), float(ts[inside][best])


def interpolate(evaluate: Evaluator, w_a: torch.Tensor, w_b: torch.Tensor, ts=None,
                num: int = 21, t_min: float = 0.0, t_max: float = 1.0, chunk: int = 16) -> Interpolation:
    """Evaluate ``(1 - t) w_a + t w_b`` for ``ts`` (default ``num`` points in
    ``[t_min, t_max]``, plus 0 and 1 if missing) and compute the barriers."""
    if w_a.shape != w_b.shape:
        raise ValueError(f"the two models differ in size ({w_a.numel()} vs {w_b.numel()} parameters)")
    if ts is None:
        if num < 2:
            raise ValueError(f"num must be >= 2, got {num}")
        if not t_max > t_min:
            raise ValueError(f"t_max ({t_max}) must exceed t_min ({t_min})")
        ts = torch.linspace(t_min, t_max, num, dtype=torch.float64)
    ts = torch.as_tensor(ts, dtype=torch.float64).reshape(-1)
    ts = torch.unique(torch.cat([ts, torch.tensor([0.0, 1.0], dtype=torch.float64)]))  # sorted
    losses, errors = [], []
    direction = w_b - w_a
    for start in range(0, ts.numel(), chunk):
        t = ts[start:start + chunk].to(device=w_a.device, dtype=w_a.dtype)
        W = w_a[None] + t[:, None] * direction[None]
        loss, error = evaluate_points(evaluate, W)
        losses.append(loss.cpu())
        errors.append(None if error is None else error.cpu())
    loss = torch.cat(losses)
    error = None if any(e is None for e in errors) else torch.cat(errors)
    barrier, barrier_t = loss_barrier(ts, loss)
    barrier_error = None if error is None else loss_barrier(ts, error)[0]
    return Interpolation(ts, loss, error, barrier, barrier_t, barrier_error)
