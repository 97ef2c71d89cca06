"""The local step of a client, composed from parts (docs/algorithms.md 7.1, composition rules).

One step is: perturbation (P) -> gradient at the perturbed point -> corrections (C, in
order) -> optional clipping -> terms a correction applies after the clip (``post_clip_decay``)
-> ``+ weight_decay * w`` at the unperturbed iterate (rule R4)
-> SGD with optional momentum (rule R8: the momentum buffer is fresh every round).

Everything works on a batch of clients: ``W`` is ``[K, P]``.  The engine supplies
``ctx.grad_fn(W, batch) -> (loss [K], grad [K, P])``, computed one client at a time or
for all clients at once with ``torch.func.vmap``; this module does not know which, so the
same algorithm code runs both ways.

Parts may change the minibatch's loss before the step (``prepare(W, batch, ctx, scratch)
-> batch``), update the iterate again after it (``after_step(W, W_new, batch, ctx,
scratch) -> W_new``), keep per-client state across rounds (``client_state``: name -> initialiser),
read what the server broadcast (``ctx.broadcast``), prepare per-round values in
``begin(ctx, scratch)`` and, after the last step, update their client state and add
uploads in ``end(W, ctx, scratch, out)``.

``batch.active`` ``[K]`` masks clients that have no batch at this step (clients with fewer
local steps than the longest one in the round): their iterate, momentum and step count are
left unchanged.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch


@dataclass
class Batch:
    """One minibatch per client: ``x [K, B, ...]``, ``y [K, B]``, ``weight [K, B]``
    (1 for real samples, 0 for padding) and ``active [K]`` (bool)."""

    x: torch.Tensor
    y: torch.Tensor
    weight: torch.Tensor
    active: torch.Tensor
    #: FedFA's class anchors ``[K, C, d]`` and the weight of its anchor loss (None: plain CE)
    anchors: torch.Tensor | None = None
    anchor_weight: float = 0.0


@dataclass
class RoundContext:
    """What a client part may read during a round (one chunk of K clients)."""

    round: int
    lr: float
    start: torch.Tensor  # [K, P]: the point the clients start from (w^t, or FedGloSS's w~^t)
    client_ids: torch.Tensor  # [K]
    grad_fn: Callable[[torch.Tensor, Batch], tuple[torch.Tensor, torch.Tensor]]
    client_state: dict[str, torch.Tensor] = field(default_factory=dict)  # name -> [K, ...]
    broadcast: dict[str, torch.Tensor] = field(default_factory=dict)  # name -> [P] or scalar
    global_model: torch.Tensor | None = None  # [P]: w^t (equals start unless the server perturbs it)
    num_steps: torch.Tensor | None = None  # [K]: local steps each client runs this round
    weight_mask: torch.Tensor | None = None  # [P]: True on "weight" tensors (ASAM)


class Perturbation(Protocol):
    """A P part: where the step's gradient is taken.  ``(W, batch, ctx, scratch) -> (eps,
    loss_at_w)``: the offset from ``W`` (None: at ``W``) and the loss at ``W`` when the part
    computed it (None: the loss at the perturbed point is recorded).  ``extra_grad_evals``:
    the gradient evaluations it adds per step (SAM's ascent: 1).  The optional hooks of
    :class:`ClientPart` apply."""

    extra_grad_evals: int

    def __call__(self, W: torch.Tensor, batch: Batch, ctx: RoundContext, scratch: dict
                 ) -> tuple[torch.Tensor | None, torch.Tensor | None]: ...


class Correction(Protocol):
    """A C part: ``(W, g, ctx, scratch, batch) -> g``, a change of the descent gradient,
    applied in the order of the recipe.  The optional hooks of :class:`ClientPart` apply."""

    def __call__(self, W: torch.Tensor, g: torch.Tensor, ctx: RoundContext, scratch: dict,
                 batch: Batch) -> torch.Tensor: ...


class ClientPart(Protocol):
    """The optional hooks of a client part, called when present (module docstring):
    ``client_state`` (name -> initialiser), ``begin(ctx, scratch)``,
    ``prepare(W, batch, ctx, scratch) -> batch``, ``after_step(W, W_new, batch, ctx,
    scratch) -> W_new``, ``end(W, ctx, scratch, out)`` and ``post_clip_decay`` (a
    coefficient added as weight decay after the clip)."""


def call_hook(part, hook: str, *args) -> None:
    fn = getattr(part, hook, None)
    if fn is not None:
        fn(*args)


@dataclass(frozen=True)
class LocalUpdate:
    """The local procedure of a method, built from parts.

    ``perturbation`` is a P part (``flcore.algorithms.perturbation``); ``corrections`` are
    C parts (``flcore.algorithms.corrections``) applied in order; ``momentum`` and
    ``weight_decay`` are the client SGD's (docs/algorithms.md 1.1:
    ``b <- mu b + g + wd w; w <- w - lr b``); ``clip_norm`` (None for no clipping) clips
    the per-client descent gradient before weight decay, as the FedLESAM code does.
    """

    perturbation: Perturbation
    corrections: tuple[Correction, ...] = ()
    momentum: float = 0.0
    weight_decay: float = 0.0
    clip_norm: float | None = None

    @property
    def parts(self) -> tuple:
        return (self.perturbation, *self.corrections)

    @property
    def grad_evals_per_step(self) -> int:
        return 1 + sum(getattr(p, "extra_grad_evals", 0) for p in self.parts)

    def client_state_spec(self) -> dict[str, str]:
        """name -> initialiser ("zeros": zeros like the model; "model": a copy of w^0;
        "flag": a boolean per client; "round": an int per client, -1)."""
        spec: dict[str, str] = {}
        for part in self.parts:
            spec.update(getattr(part, "client_state", {}))
        return spec

    def begin(self, ctx: RoundContext) -> dict[str, Any]:
        """Per-round scratch state of the chunk (fresh momentum buffer, loss sums)."""
        K = ctx.start.shape[0]
        scratch: dict[str, Any] = {
            "loss_sum": torch.zeros(K, dtype=ctx.start.dtype, device=ctx.start.device),
            "steps": torch.zeros(K, dtype=ctx.start.dtype, device=ctx.start.device),
        }
        if self.momentum:
            scratch["buffer"] = torch.zeros_like(ctx.start)
        for part in self.parts:
            call_hook(part, "begin", ctx, scratch)
        return scratch

    def step(self, W: torch.Tensor, batch: Batch, ctx: RoundContext, scratch: dict[str, Any]) -> torch.Tensor:
        for part in self.parts:  # parts that change the loss (FedFA's anchor term) or record the batch
            prepare = getattr(part, "prepare", None)
            if prepare is not None:
                batch = prepare(W, batch, ctx, scratch)
        W_new = self._descent(W, batch, ctx, scratch)
        for part in self.parts:  # parts with a second update after the SGD step (FedFA calibration)
            after_step = getattr(part, "after_step", None)
            if after_step is not None:
                W_new = after_step(W, W_new, batch, ctx, scratch)
        return W_new

    def _descent(self, W, batch, ctx, scratch) -> torch.Tensor:
        eps, loss_at_w = self.perturbation(W, batch, ctx, scratch)
        loss, g = ctx.grad_fn(W if eps is None else W + eps, batch)
        if loss_at_w is None:
            loss_at_w = loss
        active = batch.active.unsqueeze(-1)
        for correction in self.corrections:
            g = correction(W, g, ctx, scratch, batch)
        if self.clip_norm is not None:
            norm = g.norm(dim=-1, keepdim=True)
            g = g * torch.clamp(self.clip_norm / (norm + 1e-6), max=1.0)
        for correction in self.corrections:  # regulariser terms applied as weight decay (DynDual clip="code")
            decay = getattr(correction, "post_clip_decay", 0.0)
            if decay:
                g = g + decay * W
        if self.weight_decay:
            g = g + self.weight_decay * W
        if self.momentum:
            buffer = self.momentum * scratch["buffer"] + g
            scratch["buffer"] = torch.where(active, buffer, scratch["buffer"])
            g = buffer
        scratch["loss_sum"] = scratch["loss_sum"] + torch.where(batch.active, loss_at_w, torch.zeros_like(loss_at_w))
        scratch["steps"] = scratch["steps"] + batch.active.to(W.dtype)
        return torch.where(active, W - ctx.lr * g, W)

    def end(self, W: torch.Tensor, ctx: RoundContext, scratch: dict[str, Any]) -> dict[str, Any]:
        """The chunk's uploads (``model``, ``train_loss`` and the parts' extras) and its
        updated client state (``client_state``: name -> ``[K, ...]``)."""
        out: dict[str, Any] = {
            "model": W,
            "train_loss": scratch["loss_sum"] / scratch["steps"].clamp_min(1),
            "steps": scratch["steps"],
            "client_state": {},
        }
        for part in self.parts:
            call_hook(part, "end", W, ctx, scratch, out)
        return out
