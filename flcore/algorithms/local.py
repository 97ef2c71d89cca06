"""The local step of a client, composed from parts (algorithms.md 7.1, composition rules).

One step is: perturbation (P) -> gradient at the perturbed point -> corrections (C) ->
``+ weight_decay * w`` at the unperturbed iterate (rule R4) -> SGD with optional momentum
(rule R8: the momentum buffer is fresh every round).

Everything works on a batch of clients: ``W`` is ``[K, P]``.  The engine supplies
``ctx.grad_fn(W, batch) -> (loss [K], grad [K, P])``, computed one client at a time
(``K = 1``) or for all clients at once with ``torch.func.vmap``; this module does not know
which, so the same algorithm code runs both ways.

``batch.active`` ``[K]`` masks clients that have no batch at this step (clients with fewer
local steps than the longest one in the round): their iterate and momentum are left
unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import torch


@dataclass
class Batch:
    """One minibatch per client: ``x [K, B, ...]``, ``y [K, B]``, ``weight [K, B]``
    (1 for real samples, 0 for padding) and ``active [K]`` (bool)."""

    x: torch.Tensor
    y: torch.Tensor
    weight: torch.Tensor
    active: torch.Tensor


@dataclass
class RoundContext:
    """What a client part may read during a round (one chunk of clients)."""

    round: int
    lr: float
    start: torch.Tensor  # [K, P]: the model the clients start from (w^t)
    client_ids: torch.Tensor  # [K]
    grad_fn: Callable[[torch.Tensor, Batch], tuple[torch.Tensor, torch.Tensor]]
    client_state: dict[str, torch.Tensor] = field(default_factory=dict)  # name -> [K, P]
    broadcast: dict[str, torch.Tensor] = field(default_factory=dict)  # name -> [P]


class Correction(Protocol):
    """A term added to the gradient taken at the perturbed point (parts C1-C7)."""

    def __call__(self, W: torch.Tensor, ctx: RoundContext) -> torch.Tensor: ...


@dataclass(frozen=True)
class LocalUpdate:
    """K local steps of a client optimizer built from parts.

    ``perturbation`` is a P part (``flcore.algorithms.perturbation``); ``corrections`` are
    C parts; ``momentum`` and ``weight_decay`` are the client SGD's (algorithms.md 1.1:
    ``b <- mu b + g + wd w; w <- w - lr b``).
    """

    perturbation: Any
    corrections: tuple = ()
    momentum: float = 0.0
    weight_decay: float = 0.0

    @property
    def grad_evals_per_step(self) -> int:
        return 1 + self.perturbation.extra_grad_evals

    def begin(self, ctx: RoundContext) -> dict[str, Any]:
        """Per-round scratch state of the chunk (fresh momentum buffer, loss sums)."""
        K = ctx.start.shape[0]
        scratch: dict[str, Any] = {
            "loss_sum": torch.zeros(K, dtype=ctx.start.dtype, device=ctx.start.device),
            "steps": torch.zeros(K, dtype=ctx.start.dtype, device=ctx.start.device),
        }
        if self.momentum:
            scratch["buffer"] = torch.zeros_like(ctx.start)
        return scratch

    def step(self, W: torch.Tensor, batch: Batch, ctx: RoundContext, scratch: dict[str, Any]) -> torch.Tensor:
        eps, loss_at_w = self.perturbation(W, batch, ctx)
        loss, g = ctx.grad_fn(W if eps is None else W + eps, batch)
        if loss_at_w is None:
            loss_at_w = loss
        for correction in self.corrections:
            g = g + correction(W, ctx)
        if self.weight_decay:
            g = g + self.weight_decay * W
        active = batch.active.unsqueeze(-1)
        if self.momentum:
            buffer = self.momentum * scratch["buffer"] + g
            scratch["buffer"] = torch.where(active, buffer, scratch["buffer"])
            g = buffer
        mask = batch.active.to(W.dtype)
        scratch["loss_sum"] = scratch["loss_sum"] + torch.where(batch.active, loss_at_w, torch.zeros_like(loss_at_w))
        scratch["steps"] = scratch["steps"] + mask
        return torch.where(active, W - ctx.lr * g, W)

    def end(self, W: torch.Tensor, ctx: RoundContext, scratch: dict[str, Any]) -> dict[str, torch.Tensor]:
        """What each client uploads: its final model and its mean training loss."""
        return {"model": W, "train_loss": scratch["loss_sum"] / scratch["steps"].clamp_min(1)}
