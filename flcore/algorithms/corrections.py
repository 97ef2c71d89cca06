"""Client gradient corrections (docs/algorithms.md section 7.1, parts C1-C6).

A correction is called inside the local step as ``g = part(W, g, ctx, scratch, batch)``
with ``g`` the gradient taken at the perturbed point; it returns the corrected gradient
(composition rule: mixing C5/C6 first, then C1-C4; weight decay is added after all of
them by :class:`flcore.algorithms.LocalUpdate`).  Everything is batched over the K
clients of a chunk (``W``, ``g``: ``[K, P]``), with no host synchronisation, so the same
code runs one client at a time and all clients at once.

A part may keep per-client state across rounds (``client_state``: name -> initialiser;
the engine hands the chunk's rows in ``ctx.client_state`` and stores the rows written to
``out["client_state"]`` at the end of the round), read what the server broadcast
(``ctx.broadcast``) and upload extra vectors (``out[name]``, ``[K, ...]``) in ``end``.

Per-client scratch keys are prefixed by the part's name so parts never collide.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from flcore.algorithms.hyperparameters import Hyperparameter, declares
from flcore.algorithms.paper_values import adabest_client
from flcore.algorithms.part_ids import part_id
from flcore.errors import check_choice

MU = Hyperparameter("mu", "float", 0.1, "FedProx proximal coefficient mu", low=0, per_row=True)
SCAFFOLD_CORRECTION = Hyperparameter("scaffold_correction", "float", 1.0,
                                     "scale of the control-variate correction (FedLESAM-S code: 0.1)",
                                     low=0, low_open=True)
FEDDYN_ALPHA = Hyperparameter("feddyn_alpha", "float", 0.01,
                              "FedDyn / FedLESAM-D regulariser alpha", low=0, low_open=True)
DYN_CLIP = Hyperparameter.option(
    "dyn_clip", ("paper", "code"),
    "dynamic-regulariser clipping: paper (the whole corrected gradient) or code (g + linear dual term)", added=True)
FEDSPEED_LAMBDA = Hyperparameter("fedspeed_lambda", "float", 100.0,
                                 "FedSpeed lambda: prox coefficient 1/lambda", low=0, low_open=True)
ADABEST_MU = Hyperparameter("adabest_mu", "float", 0.02, "AdaBest client bias coefficient mu", low=0)
FEDCM_ALPHA = Hyperparameter("fedcm_alpha", "float", 0.1,
                             "FedCM / MoFedSAM mixing weight of the local gradient", low=0, high=1)
FEDSPEED_ALPHA = Hyperparameter("fedspeed_alpha", "float", 0.95, "FedSpeed gradient mixing weight alpha", low=0)


def received(ctx, name: str) -> torch.Tensor:
    """What the server sent under ``name``; a clear error when no server part sent it."""
    try:
        return ctx.broadcast[name]
    except KeyError:
        raise KeyError(f"the server did not broadcast {name!r}: pair this client part with its server part") from None


def _local_steps(out, ctx) -> torch.Tensor:
    """The number of local steps each client actually ran, ``[K]``, at least 1."""
    steps = out.get("steps")
    if steps is None:
        steps = ctx.num_steps
    return steps.to(out["model"].dtype).clamp_min(1)


def steps_times_lr(out, ctx) -> torch.Tensor:
    """``[K]``: each client's local steps times its learning rate (``ctx.lr`` is one number,
    or a ``[K, 1]`` column when the runs of a group train with different rates)."""
    lr = ctx.lr.reshape(-1) if isinstance(ctx.lr, torch.Tensor) else ctx.lr
    return _local_steps(out, ctx) * lr


def updated_control_variate(W, ctx, out, name: str, lr_scale: float = 1.0):
    """SCAFFOLD's option II (Karimireddy et al. 2020, Algorithm 1 line 12) for the control
    variates sent and kept as ``name``: ``c_i+ = c_i - c + (w_start - W_K) / (K lr lr_scale)``,
    kept as the client's new state; returns ``(c_i+, c, c_i)``."""
    c, c_i = received(ctx, name), ctx.client_state[name]
    c_new = c_i - c + (ctx.start - W) / (steps_times_lr(out, ctx) * lr_scale).unsqueeze(-1)
    out["client_state"][name] = c_new
    return c_new, c, c_i


@declares(MU)
@part_id("C1")
@dataclass(frozen=True)
class Prox:
    """C1, FedProx (Li et al. 2020, Eq. 2 / Algorithm 2): the gradient of the proximal
    term ``mu/2 ||w - w^t||^2`` is added, ``g <- g + mu (W - w^t)``, with the anchor the
    point the clients started from (``ctx.start``)."""

    mu: float

    def __call__(self, W, g, ctx, scratch, batch):
        return g + self.mu * (W - ctx.start)


@declares(SCAFFOLD_CORRECTION)
@part_id("C2")
@dataclass(frozen=True)
class ScaffoldCorrection:
    """C2, SCAFFOLD control variates (Karimireddy et al. 2020, Algorithm 1 lines 10-12).

    Each step ``g <- g + scale (c - c_k)`` with the server control variate ``c``
    (broadcast as ``ctx.broadcast["scaffold_c"]``, paired with
    :class:`flcore.algorithms.server_parts.ScaffoldServer`) and the client's ``c_k``
    (client state ``scaffold_c``, zeros until the first participation).  After the round,
    option II (line 12)::

        c_k+ = c_k - c + (w_start - W_K) / (K lr)

    with ``K`` the client's actual number of local steps and ``lr`` the round's client
    learning rate; the client uploads ``scaffold_dc = c_k+ - c_k`` and keeps ``c_k+``.
    ``scale`` multiplies only the correction term (FedLESAM-S code: 0.1; SCAFFOLD: 1);
    the control-variate update is the standard one whatever the scale.
    """

    state_meanings = {
        "scaffold_c": "client control variate c_k (SCAFFOLD, Karimireddy et al. 2020, Alg. 1 line 12, option II)"}

    uploads = ("scaffold_dc",)  # model-sized, beside the model (rule R7)

    scale: float = 1.0
    client_state = {"scaffold_c": "zeros"}

    def begin(self, ctx, scratch):
        c = received(ctx, "scaffold_c")
        scratch["scaffold_term"] = self.scale * (c - ctx.client_state["scaffold_c"])

    def __call__(self, W, g, ctx, scratch, batch):
        return g + scratch["scaffold_term"]

    def end(self, W, ctx, scratch, out):
        c_new, _, c_k = updated_control_variate(W, ctx, out, "scaffold_c")
        out["scaffold_dc"] = c_new - c_k


@declares(FEDDYN_ALPHA, DYN_CLIP)
@part_id("C3")
@dataclass(frozen=True)
class DynDual:
    """C3, the FedDyn / ADMM dual (Acar et al. 2021, Algorithm 1; docs/algorithms.md 3.6).

    Each step ``g <- g - lambda_k + alpha (W - w_start)``: the gradient of the dynamic
    regulariser ``-<lambda_k, w> + alpha/2 ||w - w_start||^2``.  After the round
    ``lambda_k <- lambda_k - alpha (W_K - w_start)`` (Algorithm 1, line 8).  ``lambda_k``
    is the client state ``state`` (default ``dyn_dual``; zeros before the first
    participation).  The anchor is the point the client started from, ``ctx.start``:
    ``w^t`` for FedDyn, the perturbed ``w~^t`` for FedGloSS (there ``alpha = 1/beta``,
    docs/algorithms.md 2.4).  Pair with
    :class:`flcore.algorithms.server_parts.DynServerCorrection` (same ``alpha``).

    ``clip="paper"`` (default) returns the whole corrected gradient, so a clip
    (``clip_norm``) acts on the gradient of the local objective, as the papers' local
    problem implies.  ``clip="code"`` is the official codes' order (FL-Simulator's FedDyn,
    FedSpeed and FedSMOO, FedLESAM-D): the loss carries the linear term
    ``<w, -lambda_k - alpha w_start>`` and ``alpha w`` is SGD weight decay, so the clip acts
    on ``g - lambda_k - alpha w_start`` and ``+ alpha W`` is added after it
    (:attr:`post_clip_decay`, read by :class:`flcore.algorithms.LocalUpdate`).  Without a
    clip the two agree up to rounding.
    """

    state_meanings = {
        "dyn_dual": ("dual lambda_k of the dynamic regulariser (FedDyn, Acar et al. 2021, Alg. 1 line 8; FedLESAM-D; "
                     "FedSMOO's lambda_k; FedGloSS's sigma_k)"),
        "fedspeed_ghat": "prox-correction g^_k (FedSpeed, Sun et al. 2023b, Alg. 1 line 11)",
    }

    alpha: float
    state: str = "dyn_dual"
    clip: str = "paper"

    def __post_init__(self):
        check_choice("dyn_clip", self.clip, ("paper", "code"))

    @property
    def client_state(self) -> dict[str, str]:
        return {self.state: "zeros"}

    @property
    def post_clip_decay(self) -> float:
        """Coefficient of ``W`` added after the clip (``clip="code"``), else 0."""
        return self.alpha if self.clip == "code" else 0.0

    def __call__(self, W, g, ctx, scratch, batch):
        if self.clip == "code":
            return g - ctx.client_state[self.state] - self.alpha * ctx.start
        return g - ctx.client_state[self.state] + self.alpha * (W - ctx.start)

    def end(self, W, ctx, scratch, out):
        out["client_state"][self.state] = ctx.client_state[self.state] - self.alpha * (W - ctx.start)


@declares(FEDSPEED_LAMBDA)
@part_id("C3s")
@dataclass(frozen=True)
class SpeedProx:
    """C3s, FedSpeed's prox-correction (Sun et al. 2023b, Algorithm 1 lines 8-12).

    Each step ``g <- g - ghat_k + (1/lam) (W - w^t)``; after the round
    ``ghat_k <- ghat_k - (1/lam) (W_K - w^t)`` and the client uploads
    ``x_hat_k = W_K - lam ghat_k`` (with the updated ``ghat_k``) in place of its model, so
    that the server's plain average of the uploads is FedSpeed's
    ``w^{t+1} = mean_k x_hat_k``.  Algebraically this is :class:`DynDual` with
    ``alpha = 1/lam`` and the FedDyn server correction folded into the upload.
    """

    state_meanings = {"fedspeed_ghat": DynDual.state_meanings["fedspeed_ghat"]}

    lam: float
    state: str = "fedspeed_ghat"
    clip: str = "paper"  # see DynDual

    @property
    def dual(self) -> DynDual:
        return DynDual(1.0 / self.lam, self.state, self.clip)

    @property
    def client_state(self) -> dict[str, str]:
        return self.dual.client_state

    @property
    def post_clip_decay(self) -> float:
        return self.dual.post_clip_decay

    def __call__(self, W, g, ctx, scratch, batch):
        return self.dual(W, g, ctx, scratch, batch)

    def end(self, W, ctx, scratch, out):
        self.dual.end(W, ctx, scratch, out)
        out["model"] = W - self.lam * out["client_state"][self.state]


@declares(ADABEST_MU)
@part_id("C4")
@dataclass(frozen=True)
class AdaBestBias:
    """C4, AdaBest's client bias (Varno et al. 2022; docs/algorithms.md 3.7).

    Each step ``g <- g - h_k``.  After the round (round ``t``, the client's previous
    participation ``t'_k``, client state ``adabest_round``, -1 before any)::

        h_k <- h_k / (t - t'_k) + mu (w^t - W_K);   t'_k <- t

    so the estimate of an absent client decays with the rounds it missed.  A first
    participation has ``h_k = 0`` (client state ``adabest_h``, zeros), so no bias is
    applied in its first round.  Pair with
    :class:`flcore.algorithms.server_parts.AdaBestStep`.
    """

    state_meanings = {
        "adabest_h": "client bias estimate h_k (AdaBest, Varno et al. 2022, Alg. 1)",
        "adabest_round": "round of the client's previous participation, -1 before any (AdaBest's t'_k)",
    }

    paper_values = staticmethod(adabest_client)

    mu: float
    client_state = {"adabest_h": "zeros", "adabest_round": "round"}

    def __call__(self, W, g, ctx, scratch, batch):
        return g - ctx.client_state["adabest_h"]

    def end(self, W, ctx, scratch, out):
        last = ctx.client_state["adabest_round"]
        gap = (ctx.round - last).clamp_min(1).to(W.dtype).unsqueeze(-1)
        out["client_state"]["adabest_h"] = ctx.client_state["adabest_h"] / gap + self.mu * (ctx.start - W)
        out["client_state"]["adabest_round"] = torch.full_like(last, ctx.round)


@declares(FEDCM_ALPHA)
@part_id("C5")
@dataclass(frozen=True)
class GlobalMomentum:
    """C5, client-level momentum (FedCM, Xu et al. 2021, Algorithm 1; MoFedSAM, Qu et al.
    2022, Algorithm 1): ``g <- alpha g + (1 - alpha) m`` with ``m`` the server's
    broadcast ``fedcm_m``, the previous round's average per-step update (zero in the
    first round).  With a SAM perturbation ``g`` is the SAM gradient, multiplied by
    ``alpha`` as the written rule and FL-Simulator do (docs/algorithms.md 3.12, decision 1).

    The client also uploads the scalar ``fedcm_steps_lr = K_k lr`` (its number of
    steps times the round's learning rate) so the server can form the next ``m``
    (:class:`flcore.algorithms.server_parts.MomentumBroadcast`).
    """

    alpha: float

    def begin(self, ctx, scratch):
        scratch["fedcm_term"] = (1 - self.alpha) * received(ctx, "fedcm_m")

    def __call__(self, W, g, ctx, scratch, batch):
        return self.alpha * g + scratch["fedcm_term"]

    def end(self, W, ctx, scratch, out):
        out["fedcm_steps_lr"] = steps_times_lr(out, ctx)


@declares(FEDSPEED_ALPHA)
@part_id("C6")
@dataclass(frozen=True)
class GradientMixing:
    """C6, FedSpeed's gradient mixing (Sun et al. 2023b, Algorithm 1 line 7):
    ``g <- (1 - alpha) g(W) + alpha g(W + eps)``.  Needs a perturbation that leaves the
    unperturbed gradient in ``scratch["grad_at_w"]`` (P1, P2)."""

    alpha: float

    def __call__(self, W, g, ctx, scratch, batch):
        try:
            g_at_w = scratch["grad_at_w"]
        except KeyError:
            raise KeyError("GradientMixing needs a perturbation that computes the gradient at w (P1, P2)") from None
        return (1 - self.alpha) * g_at_w + self.alpha * g
