"""Client perturbation parts (docs/algorithms.md section 7.1, parts P0-P2).

A perturbation says *where* the descent gradient of a local step is taken, relative to
the local iterate ``W``.  All parts work on a batch of clients: ``W`` is ``[K, P]`` (K
clients, P flat parameters) and every norm is per client (``dim=-1``), the global l2
norm over all trainable parameters of rule R3.

Each part is called as ``part(W, batch, ctx, scratch)`` and returns ``(eps, loss_at_w)``:
the perturbation ``[K, P]`` (``None`` for none) and the minibatch loss at the
unperturbed iterate when the part had to compute it.  A part that computes the gradient at
the unperturbed iterate leaves it in ``scratch["grad_at_w"]`` (FedSpeed mixes it in).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from flcore.algorithms.hyperparameters import Hyperparameter, declares
from flcore.algorithms.paper_values import asam_radius, sam_radius
from flcore.algorithms.part_ids import part_id

RHO = Hyperparameter("rho", "float", 0.05, "SAM radius: the perturbation's l2 norm (FedSAM Eq. 3)", low=0, per_row=True)
ETA = Hyperparameter("eta", "float", 0.2,
                     "ASAM's eta: T = |w| + eta on weight tensors (FedSAM Eq. 5)", low=0, per_row=True)

#: epsilon of unit(u) = u / (||u|| + eps); the value of the fedsam and fedgloss code (R3).
NORM_EPS = 1e-16


def unit(u: torch.Tensor) -> torch.Tensor:
    """Per-client unit vector ``u / (||u||_2 + 1e-16)`` over the last dimension."""
    return u / (u.norm(dim=-1, keepdim=True) + NORM_EPS)


class Ascent:
    """Base of the perturbations that take SAM's ascent gradient ``g`` at ``W`` on the step's
    minibatch: one more gradient per step, kept as ``scratch["grad_at_w"]``, and the radius
    of FedSAM's Table 11 unless the part's paper sets another."""

    extra_grad_evals: ClassVar[int] = 1
    paper_values = staticmethod(sam_radius)

    @staticmethod
    def ascent_gradient(W, batch, ctx, scratch) -> tuple[torch.Tensor, torch.Tensor]:
        """``(loss at W, g at W)``."""
        loss, g = ctx.grad_fn(W, batch)
        scratch["grad_at_w"] = g
        return loss, g


@part_id("P0")
@dataclass(frozen=True)
class NoPerturbation:
    """P0: the gradient is taken at the iterate itself (plain SGD)."""

    extra_grad_evals: ClassVar[int] = 0

    def __call__(self, W, batch, ctx, scratch):
        return None, None


@declares(RHO)
@part_id("P1")
@dataclass(frozen=True)
class SAMPerturbation(Ascent):
    """P1, SAM (Foret et al. 2021; FedSAM paper Eqs. 3-4).

    ``eps = rho * g / ||g||`` with ``g`` the minibatch gradient at ``W`` (no weight decay,
    rule R4).  The descent gradient is then taken at ``W + eps`` on the same minibatch
    (rule R5).
    """

    rho: float

    def __call__(self, W, batch, ctx, scratch):
        loss, g = self.ascent_gradient(W, batch, ctx, scratch)
        return self.rho * unit(g), loss


@declares(RHO, ETA)
@part_id("P2")
@dataclass(frozen=True)
class ASAMPerturbation(Ascent):
    """P2, adaptive SAM (Kwon et al. 2021; FedSAM paper Sec. 3, Eqs. 5-6).

    ``T = |w| + eta`` element-wise on every tensor whose name contains ``weight`` and
    ``T = 1`` on biases, then ``eps = rho * T^2 g / ||T g||``.  The paper does not write
    the closed form; this is Kwon et al.'s element-wise operator restricted to weight
    tensors, exactly as the FedSAM paper's official code applies it (docs/algorithms.md 1.3).
    """

    paper_values = staticmethod(asam_radius)

    rho: float
    eta: float
    weight_mask: torch.Tensor  # bool [P]: True on coordinates of "weight" tensors

    def __call__(self, W, batch, ctx, scratch):
        loss, g = self.ascent_gradient(W, batch, ctx, scratch)
        scale = torch.where(self.weight_mask, W.abs() + self.eta, torch.ones_like(W))
        scaled = scale * g
        eps = self.rho * scale * scaled / (scaled.norm(dim=-1, keepdim=True) + NORM_EPS)
        return eps, loss
