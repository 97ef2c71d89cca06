"""A client learning rate that changes within the round (docs/algorithms.md 7.1, client parts).

The engine's lr schedules (:mod:`flcore.algorithms.schedules`) give one lr per round,
``ctx.lr``.  FedSWA's clients instead decay their lr linearly over the local steps of every
round and start again at the round's lr the next round (Liu et al. 2025, Sec. 3: "the
learning rate decays linearly from eta_l to rho eta_l" within each round, a cyclic lr of
period one round).  The part scales the finished SGD step: ``W_new = W + s_j (W_sgd - W)``
with ``W_sgd = W - ctx.lr * b`` is ``W - s_j ctx.lr * b`` exactly, whatever the step's
corrections, clip, weight decay and momentum buffer ``b`` (the buffer itself carries no lr,
as in ``torch.optim.SGD``).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from flcore.algorithms.hyperparameters import Hyperparameter, declares
from flcore.algorithms.part_ids import part_id

FEDSWA_RHO = Hyperparameter("fedswa_rho", "float", 0.0,
                            "FedSWA: the client lr decays from eta to fedswa_rho * eta within each round",
                            low=0, high=1)


@declares(FEDSWA_RHO)
@part_id("L4")
@dataclass(frozen=True)
class LinearInRoundLR:
    """Step ``j = 0..K_k-1`` of client ``k`` (``K_k`` its local steps this round) runs at
    ``scale * ctx.lr * ((1 - j/K_k) + rho j/K_k)``: ``scale * ctx.lr`` at the first step,
    decaying linearly towards ``rho * scale * ctx.lr`` (reached after the last step).

    Used as a C part whose gradient change is the identity; the scaling is its
    ``after_step`` hook.
    """

    rho: float
    scale: float = 1.0

    def __call__(self, W, g, ctx, scratch, batch):
        return g

    def factor(self, step: torch.Tensor, num_steps: torch.Tensor) -> torch.Tensor:
        """``scale ((1 - j/K) + rho j/K)`` per client (``step`` = j, ``num_steps`` = K)."""
        frac = step / num_steps.clamp_min(1)
        return self.scale * ((1 - frac) + self.rho * frac)

    def after_step(self, W, W_new, batch, ctx, scratch):
        step = (scratch["steps"] - 1).clamp_min(0)  # the step just taken (LocalUpdate counts it first)
        return W + self.factor(step, ctx.num_steps.to(W.dtype)).unsqueeze(-1) * (W_new - W)
