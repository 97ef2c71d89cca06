"""P3, FedSMOO's corrected local perturbation (Sun et al. 2023a, Algorithm 1;
docs/algorithms.md 3.14 and 7.1).

The client perturbs along its gradient corrected by its own perturbation dual ``mu_k``
and the server's global perturbation ``s``, so that the local SAM perturbations agree
with a global one.  The server side is
:class:`flcore.algorithms.server_parts.SMOOServer`.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from flcore.algorithms.corrections import received
from flcore.algorithms.hyperparameters import Hyperparameter, declares
from flcore.algorithms.part_ids import part_id
from flcore.algorithms.perturbation import unit
from flcore.errors import check_choice

SMOO_VARIANT = Hyperparameter.option("smoo_variant", ("paper", "code"),
                                     "FedSMOO: paper, or code (FL-Simulator: s = rho unit(mean mu_k))", added=True)


@declares(SMOO_VARIANT)
@part_id("P3")
@dataclass(frozen=True)
class SMOOPerturbation:
    """P3.  Each step, with ``g = g(W)`` on the step's minibatch::

        s_hat = rho unit(g - mu_k - s)
        mu_k <- mu_k + s_hat - s

    and the descent gradient is taken at ``W + s_hat`` (same minibatch).  After the round
    the client keeps ``mu_k`` (client state ``smoo_mu``, zeros before its first
    participation) and uploads ``smoo_s = mu_k - s_hat_K`` (``s_hat_K`` its last
    perturbation; docs/algorithms.md 3.14, decision 1: the FedGF code's upload).  ``s`` is the
    server's broadcast ``smoo_s`` (zero in the first round, when P3 is SAM with the
    ascent corrected by ``mu_k`` alone).

    ``upload="code"`` uploads ``mu_k`` itself (FL-Simulator's ``local_dynamic_dual``), so
    the server's ``s <- rho unit(sum_k mu_k) = rho unit(mean_k mu_k)`` is the official
    code's simplification "ignoring the s_hat_{i,K} term" (``smoo_variant="code"``).
    """

    state_meanings = {"smoo_mu": "perturbation dual mu_k (FedSMOO, Sun et al. 2023a, Alg. 1)"}

    uploads = ("smoo_s",)  # model-sized, beside the model (rule R7)

    rho: float
    extra_grad_evals: int = 1
    upload: str = "paper"
    client_state = {"smoo_mu": "zeros"}

    def __post_init__(self):
        check_choice("smoo_variant", self.upload, ("paper", "code"))

    def begin(self, ctx, scratch):
        scratch["smoo_mu"] = ctx.client_state["smoo_mu"]
        scratch["smoo_eps"] = torch.zeros_like(ctx.start)

    def __call__(self, W, batch, ctx, scratch):
        loss, g = ctx.grad_fn(W, batch)
        scratch["grad_at_w"] = g
        s = received(ctx, "smoo_s")
        eps = self.rho * unit(g - scratch["smoo_mu"] - s)
        active = batch.active.unsqueeze(-1)
        scratch["smoo_mu"] = torch.where(active, scratch["smoo_mu"] + eps - s, scratch["smoo_mu"])
        scratch["smoo_eps"] = torch.where(active, eps, scratch["smoo_eps"])
        return eps, loss

    def end(self, W, ctx, scratch, out):
        out["client_state"]["smoo_mu"] = scratch["smoo_mu"]
        if self.upload == "code":
            out["smoo_s"] = scratch["smoo_mu"]
        else:
            out["smoo_s"] = scratch["smoo_mu"] - scratch["smoo_eps"]
