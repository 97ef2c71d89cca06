"""Weighted momentum with a momentum-guided perturbation (FedWMSAM; docs/algorithms.md 7.1,
P9, C9 and S11).

FedWMSAM (Li, Huang, Jiang, Liu, Xie, Du, Wang & Wu, NeurIPS 2025, arXiv 2511.22080;
official code ``Huang-Yongzhi/NeurlPS_FedWMSAM``, built on FL-Simulator) builds "a
momentum-guided global perturbation from server-aggregated momentum [...] enabling a
single-backprop SAM approximation" and couples "momentum and SAM via a cosine-similarity
adaptive rule, yielding an early-momentum, late-SAM two-phase training schedule" (abstract).
The paper's equations were not available here; the parts implement the rule its official
client and server state.  With the server momentum ``m`` (zeros at start), the weight
``alpha`` (``fedwmsam_alpha`` at start) and SCAFFOLD's control variates ``c``, ``c_i``:

- client momentum ``m_i = m + alpha/(1 - alpha) (c - c_i)``;
- step ``j = 0..K-1`` from ``x``: the reference point ``x + j m_i`` (the start moved ``j``
  times by the momentum) and ``d_j = x + j m_i - y_j``; the perturbation
  ``eps_j = -rho d_j / (||d_j|| + 1e-7)`` (zero at ``j = 0``), one gradient per step
  (part :class:`MomentumGuidedPerturbation`);
- descent direction ``alpha g(y_j + eps_j) + (1 - alpha) m_i = alpha (g + c - c_i) + (1 - alpha) m``
  (the gradient of ``alpha CE + (1 - alpha) <w, m_i>``; SCAFFOLD's correction then
  :class:`AdaptiveMomentumMix`), clipped, plus weight decay;
- server: ``x^{t+1} = x^t + eta_g mean_k (y_k - x^t)``; SCAFFOLD's ``c_i+ = c_i - c + (x - y_K)/(K lr)``,
  ``c <- c + (1/N) sum_S (c_i+ - c_i)``; the cosine score ``v = mean_S (cos(y_k - x^t, m) + 1)``
  (0 for a client when either vector is zero, as the code's ``cosine_similarity``),
  ``alpha <- 0.99 alpha + 0.01 clip(v, 0.1, 0.9)`` and ``m <- mean_S (x^t - y_k)/(K lr)``
  (part :class:`WeightedMomentumServer`).

``code=True`` reproduces two details of the official code as it runs.  Its perturbation
indexes the flat difference vector by parameter tensor: tensor ``i`` is shifted as a whole
by ``-rho d[i] / (sum_{i'<T} |d[i']| + 1e-7)``, ``d[i]`` the vector's ``i``-th *coordinate*
and ``T`` the number of tensors (``g_update[idx]`` on a vector); and its momentum is
multiplied by the lr decay, ``m <- lr_decay mean_S (x^t - y_k)/(K lr)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from flcore.algorithms.corrections import received, steps_times_lr
from flcore.algorithms.hyperparameters import Hyperparameter, declares
from flcore.algorithms.part_ids import part_id
from flcore.algorithms.server import ServerRound, aggregate

FEDWMSAM_ALPHA = Hyperparameter("fedwmsam_alpha", "float", 0.1,
                                "FedWMSAM: initial weight alpha of the gradient against the momentum",
                                low=0, high=1, low_open=True, high_open=True)
FEDWMSAM_VARIANT = Hyperparameter.option("fedwmsam_variant", ("paper", "code"),
                                         "FedWMSAM: paper, or code (per-tensor perturbation indexing)")

#: The code's smoothing of ``alpha`` and the band its cosine score is clipped to.
ALPHA_KEEP = 0.99
SCORE_BAND = (0.1, 0.9)
#: epsilon of the code's ``rho / (||d|| + 1e-7)``.
PERTURBATION_EPS = 1e-7


def client_momentum(ctx) -> torch.Tensor:
    """``m_i = m + alpha/(1 - alpha) (c - c_i)``, ``[K, P]``."""
    alpha = received(ctx, "wmsam_alpha")
    c_term = received(ctx, "scaffold_c") - ctx.client_state["scaffold_c"]
    return received(ctx, "wmsam_m") + alpha / (1 - alpha) * c_term


@part_id("P9")
@dataclass(frozen=True)
class MomentumGuidedPerturbation:
    """P9: ``eps_j = -rho d_j / (||d_j|| + 1e-7)``, ``d_j = x + j m_i - y_j`` (no extra
    gradient).  ``tensor_sizes`` (the numbers of elements of the model's parameter tensors)
    switches to the official code's indexing (module docstring)."""

    rho: float
    tensor_sizes: tuple[int, ...] | None = None
    extra_grad_evals: int = 0

    def begin(self, ctx, scratch):
        scratch["wmsam_mi"] = client_momentum(ctx)

    def __call__(self, W, batch, ctx, scratch):
        d = ctx.start + scratch["steps"].unsqueeze(-1) * scratch["wmsam_mi"] - W
        if self.tensor_sizes is None:
            return -self.rho * d / (d.norm(dim=-1, keepdim=True) + PERTURBATION_EPS), None
        heads = d[:, :len(self.tensor_sizes)]
        shift = -self.rho * heads / (heads.abs().sum(dim=-1, keepdim=True) + PERTURBATION_EPS)
        # tensor i's slice filled with shift[:, i] (no host-to-device copy: a CUDA graph can replay it)
        return torch.cat([shift[:, i:i + 1].expand(-1, n) for i, n in enumerate(self.tensor_sizes)], dim=-1), None


@part_id("C9")
@dataclass(frozen=True)
class AdaptiveMomentumMix:
    """C9: ``g <- alpha g + (1 - alpha) m`` with the server's current ``alpha`` and ``m``
    (C5 with a broadcast weight); after SCAFFOLD's correction this is ``alpha (g + c - c_i)
    + (1 - alpha) m``.  Uploads ``wmsam_steps_lr = K_k lr`` for the server's momentum."""

    def begin(self, ctx, scratch):
        alpha = received(ctx, "wmsam_alpha")
        scratch["wmsam_alpha"] = alpha
        scratch["wmsam_term"] = (1 - alpha) * received(ctx, "wmsam_m")

    def __call__(self, W, g, ctx, scratch, batch):
        return scratch["wmsam_alpha"] * g + scratch["wmsam_term"]

    def end(self, W, ctx, scratch, out):
        out["wmsam_steps_lr"] = steps_times_lr(out, ctx)


@declares(FEDWMSAM_ALPHA, FEDWMSAM_VARIANT)
@part_id("S11")
@dataclass(frozen=True)
class WeightedMomentumServer:
    """S11: keeps ``m`` and ``alpha``, broadcasts them (``wmsam_m``, ``wmsam_alpha``) and
    after the round updates ``alpha`` from the clients' cosine score against the old ``m``,
    then ``m`` from their per-step updates (module docstring); ``m_scale``: the code's lr
    decay factor (1 for the stated rule)."""

    state_meanings = {
        "m": "server momentum m = mean_S (x - y_k)/(K eta), the clients' mean per-step update (FedWMSAM)",
        "alpha": ("weight of the gradient against the momentum, alpha <- 0.99 alpha + 0.01 clip(mean cosine score, "
                  "0.1, 0.9) (FedWMSAM)"),
    }

    downloads = ("wmsam_m",)  # model-sized, beside the model (rule R7)

    alpha: float
    m_scale: float = 1.0
    name: str = "wmsam"

    def init(self, w, num_clients):
        return {"m": torch.zeros_like(w), "alpha": torch.tensor(self.alpha, dtype=w.dtype, device=w.device)}

    def broadcast(self, w, start, sent, part_state, round):
        sent["wmsam_m"] = part_state["m"]
        sent["wmsam_alpha"] = part_state["alpha"]
        return start

    def after(self, rnd: ServerRound, w_new, part_state):
        updates = rnd.uploads["model"] - rnd.start
        m = part_state["m"]
        norms = updates.norm(dim=-1) * m.norm()
        cosine = (updates @ m) / torch.where(norms > 0, norms, torch.ones_like(norms))
        score = torch.where(norms > 0, cosine + 1, torch.zeros_like(cosine)).mean()
        part_state["alpha"] = ALPHA_KEEP * part_state["alpha"] + (1 - ALPHA_KEEP) * score.clamp(*SCORE_BAND)
        per_step = -updates / rnd.uploads["wmsam_steps_lr"].unsqueeze(-1)
        part_state["m"] = self.m_scale * aggregate(per_step, rnd.counts)
        return w_new
