"""A perturbation along the gradient of a proximal objective (FedSOL; docs/algorithms.md 7.1, P8).

FedSOL (Lee, Jeong, Kim, Oh & Yun, CVPR 2024, arXiv 2308.12532) takes the local step's
gradient where the *proximal* objective, not the local one, is sharpest: with the proximal
loss ``L_p`` that ties the local model ``w`` to the global model ``w_g`` it received::

    eps* = rho grad L_p(w; w_g) / ||grad L_p(w; w_g)||,     w <- w - eta grad L_local(w + eps*)

so the local update is "orthogonal" to the directions that change the proximal objective
(the paper's orthogonal learning).  The paper allows any proximal objective; flcore's is the
official code's (``Lee-Gihun/FedSOL``, built on FedNTD's): the KL divergence from the global
model's softened predictions to the local model's at temperature ``T`` (the code's 3),
``L_p = mean_i KL(softmax(f(x_i; w_g)/T) || softmax(f(x_i; w)/T))``.  Padded samples
(weight 0) are left out of the mean.  At a round's first step ``w = w_g`` and ``grad L_p = 0``:
flcore's ``eps`` is zero there, where the official code normalises the gradient's rounding
noise into a step of length rho (Known differences page).

``adaptive=True`` is the official ``fedsol_adaptive`` client's perturbation strength: the
perturbation is scaled coordinate-wise by how far each weight has moved from the global
model, ``eps = rho a * grad L_p / ||grad L_p||`` with ``a = |w - w_g|`` normalised per
parameter tensor along its first dimension (``F.normalize(|w - w_g|, dim=0)``: each column
of a weight matrix, a whole bias vector); ``a = 0`` at the round's first step.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch.func import grad, vmap

from flcore.algorithms.hyperparameters import Hyperparameter, declares
from flcore.algorithms.part_ids import part_id

FEDSOL_TEMPERATURE = Hyperparameter(
    "fedsol_temperature", "float", 3.0,
    "FedSOL: temperature T of the proximal KL loss whose gradient sets the perturbation", low=0, low_open=True)
FEDSOL_STRENGTH = Hyperparameter.option("fedsol_strength", ("fixed", "adaptive"),
                                        "FedSOL: fixed (eps = rho unit(grad L_p)) or adaptive (scaled by |w - w^t|)")

#: epsilon of the official SAM's ``rho / (||g|| + 1e-12)`` (davda54/sam, which FedSOL uses).
SAM_EPS = 1e-12


def first_dim_normalised(u: torch.Tensor, shapes, offsets) -> torch.Tensor:
    """``[K, P]``: every parameter tensor's slice of ``u`` divided by its l2 norm along the
    tensor's first dimension (``F.normalize(t, dim=0)`` per tensor, norms floored at 1e-12)."""
    parts = []
    for shape, start in zip(shapes, offsets):
        n = shape.numel()
        t = u[:, start:start + n].reshape(u.shape[0], shape[0], -1)
        parts.append(F.normalize(t, dim=1).reshape(u.shape[0], n))
    return torch.cat(parts, dim=-1)


@declares(FEDSOL_TEMPERATURE, FEDSOL_STRENGTH)
@part_id("P8")
@dataclass(frozen=True)
class ProximalSAMPerturbation:
    """P8: ``eps = rho (a *) grad L_p(W) / (||grad L_p(W)|| + 1e-12)`` per client, ``L_p``
    the tempered KL divergence to the model the client started from (``ctx.start``)."""

    flat: object = field(compare=False, repr=False)
    rho: float
    temperature: float = 3.0
    adaptive: bool = False
    extra_grad_evals: int = 1

    def _proximal_surrogate(self, w, x, weight, target):
        """A function of ``w`` whose gradient is ``grad L_p``: ``dKL_i/dz_i = (softmax(z_i/T) -
        p_i)/T`` for the logits ``z_i``, held fixed as a coefficient of ``z_i/T``.  Written so
        that the gradient is exactly zero where the local and global logits agree (``w = w^t``,
        a round's first step), where the KL's own backward leaves rounding noise that the
        normalisation would blow up to a step of length rho in a random direction."""
        z = self.flat.forward(w, x) / self.temperature
        coefficient = (F.softmax(z, dim=-1) - target).detach()
        return ((coefficient * z).sum(dim=-1) * weight).sum() / weight.sum().clamp_min(1.0)

    def __call__(self, W, batch, ctx, scratch):
        with torch.no_grad():
            target = F.softmax(vmap(self.flat.forward)(ctx.start, batch.x) / self.temperature, dim=-1)
        g = vmap(grad(self._proximal_surrogate))(W, batch.x, batch.weight, target)
        eps = self.rho * g / (g.norm(dim=-1, keepdim=True) + SAM_EPS)
        if self.adaptive:
            eps = eps * first_dim_normalised((W - ctx.start).abs(), self.flat.shapes, self.flat.offsets)
        return eps, None
