"""Server parts of the baselines: steps other than the pseudo-gradient step (S4, S5, S7)
and auxiliary parts with their own state (docs/algorithms.md section 7.1).

Auxiliary parts plug into :class:`flcore.algorithms.server.Server`:

- ``name``: their state lives in ``state[name]`` (a dict of tensors made by
  ``init(w, num_clients)``, changed in place, checkpointed as is);
- ``broadcast(w, start, sent, part_state, round) -> start``: put what the clients read as
  ``ctx.broadcast`` into ``sent``;
- ``after(w, w_new, start, uploads, counts, part_state, round, num_clients) -> w_new``:
  update the state from the round's uploads and possibly change the new global model.

Steps (``init(w, num_clients)`` / ``update(w, start, uploads, counts, state, round,
num_clients) -> w_new``) replace :class:`flcore.algorithms.server.PseudoGradientStep`.

Models are aggregated with the sample-weighted :func:`aggregate` (rule R2) everywhere,
also where a paper writes a plain mean over the participants (FedDyn, AdaBest, FedSpeed):
with the equal-size clients of the papers' protocols the two are the same.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from flcore.algorithms.hyperparameters import Hyperparameter, declares
from flcore.algorithms.paper_values import adabest_server
from flcore.algorithms.part_ids import part_id
from flcore.algorithms.perturbation import unit
from flcore.algorithms.server import SentVector, ServerRound, aggregate
from flcore.errors import check_choice

FEDGAMMA_VARIANT = Hyperparameter.option(
    "fedgamma_variant", ("paper", "fedgf_code"),
    "FedGAMMA server control variate: paper or fedgf_code (c += mean(dc)/N, the FedGF code)")
MOFEDSAM_SERVER_STEP = Hyperparameter.option(
    "mofedsam_server_step", ("paper", "fedgf_code"),
    "MoFedSAM server step: paper (w - Delta) or fedgf_code (w - m, the FedGF code)")
ADABEST_BETA = Hyperparameter("adabest_beta", "float", 0.9, "AdaBest server extrapolation beta", low=0)
GMA_TAU = Hyperparameter("gma_tau", "float", 0.8, "FedGMA sign-agreement threshold tau", low=0, high=1)
GMA_VARIANT = Hyperparameter.option("gma_variant", ("paper", "fedima_code"), "FedGMA mask: paper or fedima_code")


@declares(FEDGAMMA_VARIANT)
@dataclass(frozen=True)
class ScaffoldServer(SentVector, kept="c", sent_as="scaffold_c"):
    """C2's server side, SCAFFOLD (Karimireddy et al. 2020, Algorithm 1 lines 16-17).

    Keeps ``c`` (zeros at start), broadcasts it as ``scaffold_c`` and after the round sets
    ``c <- c + (1/N) sum_{k in S} dc_k`` with ``dc_k`` the clients' ``scaffold_dc``
    uploads and ``N`` the number of clients.  The model step (``w + eta_g sum_k p_k
    dy_k``) is ``PseudoGradientStep(ServerSGD(lr=eta_g))``.

    ``variant="fedgf_code"`` reproduces the FedGF code's FedGAMMA server,
    ``c <- c + mean_k(dc_k) / N``: ``|S|`` times smaller (docs/algorithms.md 3.13, decision 1).
    """

    state_meanings = {"c": "server control variate c (SCAFFOLD, Alg. 1 line 17)"}

    variant: str = "paper"
    name: str = "scaffold"

    def __post_init__(self):
        check_choice("variant", self.variant, ("paper", "fedgf_code"))

    def after(self, rnd: ServerRound, w_new, part_state):
        dc = rnd.uploads["scaffold_dc"]
        total = dc.mean(0) if self.variant == "fedgf_code" else dc.sum(0)
        part_state["c"] = part_state["c"] + total / rnd.num_clients
        return w_new


@part_id("S6")
@dataclass(frozen=True)
class DynServerCorrection:
    """S6, the FedDyn server correction (Acar et al. 2021, Algorithm 1 lines 11-12).

    After the step has produced ``w_new = w - (start - sum_k p_k w_k)``::

        h <- h - (alpha / N) sum_{k in S} (w_k - start)
        w^{t+1} = w_new - h / alpha

    For FedDyn ``start = w^t`` so ``w_new`` is the clients' average and this is Acar et
    al.'s ``w^{t+1} = mean_k w_k - h/alpha``.  For FedGloSS (``alpha = 1/beta``, start the
    perturbed ``w~^t``) ``h`` is the dual ``sigma`` and the result is
    ``w^t - Delta~^t - beta sigma`` (docs/algorithms.md 2.4, Algorithm 1 steps 3-4).

    ``dual_scale="paper"`` is the written ``alpha/N``; ``"code"`` divides additionally by
    the number of participants ``|S|``, as the FedGloSS official code does.
    """

    state_meanings = {
        "h": "server dual h of the dynamic regulariser (FedDyn, Acar et al. 2021, Alg. 1 line 11; FedGloSS's sigma)"}

    alpha: float
    dual_scale: str = "paper"
    name: str = "dyn"

    def __post_init__(self):
        if not self.alpha > 0:
            raise ValueError(f"the FedDyn coefficient alpha must be positive, got {self.alpha!r}")
        check_choice("dual_scale", self.dual_scale, ("paper", "code"))

    def init(self, w, num_clients):
        return {"h": torch.zeros_like(w)}

    def after(self, rnd: ServerRound, w_new, part_state):
        models = rnd.uploads["model"]
        scale = self.alpha / rnd.num_clients
        if self.dual_scale == "code":
            scale = scale / models.shape[0]
        part_state["h"] = part_state["h"] - scale * (models - rnd.start).sum(0)
        return w_new - part_state["h"] / self.alpha


@declares(MOFEDSAM_SERVER_STEP)
@dataclass(frozen=True)
class MomentumBroadcast(SentVector, kept="m", sent_as="fedcm_m"):
    """C5's server side, FedCM / MoFedSAM (Xu et al. 2021, Algorithm 1).

    Keeps ``m`` (zeros at start) and broadcasts it as ``fedcm_m``.  After the round
    ``m <- sum_k p_k (start - w_k) / (K_k lr)``: the average per-step update of the
    round, from the clients' ``fedcm_steps_lr`` uploads.  With equal step counts this is
    the written ``Delta^t / (K lr)``; with unequal ones each client's update is divided by
    its own step count.  The model step is the plain average (S0).

    ``server_step="fedgf_code"`` reproduces the FedGF code's MoFedSAM server,
    ``w^{t+1} = w^t - m^{t+1}`` (the new momentum, ``1/(K lr)`` times the average update;
    docs/algorithms.md 3.12, decision 2), in place of the step's ``w^t - Delta^t``.
    """

    state_meanings = {"m": "broadcast client momentum m^t, the previous round's mean per-step update (FedCM, MoFedSAM)"}

    server_step: str = "paper"
    name: str = "fedcm"

    def __post_init__(self):
        check_choice("server_step", self.server_step, ("paper", "fedgf_code"))

    def after(self, rnd: ServerRound, w_new, part_state):
        per_step = (rnd.start - rnd.uploads["model"]) / rnd.uploads["fedcm_steps_lr"].unsqueeze(-1)
        part_state["m"] = aggregate(per_step, rnd.counts)
        return rnd.w - part_state["m"] if self.server_step == "fedgf_code" else w_new


@dataclass(frozen=True)
class SMOOServer(SentVector, kept="s", sent_as="smoo_s"):
    """P3's server side, FedSMOO's global perturbation (Sun et al. 2023a, Algorithm 1):
    keeps ``s`` (zeros at start), broadcasts it as ``smoo_s`` and after the round sets
    ``s <- rho unit(sum_{k in S} s~_k)`` from the clients' ``smoo_s`` uploads."""

    state_meanings = {"s": "global perturbation s broadcast to the clients (FedSMOO, Sun et al. 2023a, Alg. 1)"}

    rho: float
    name: str = "smoo"

    def after(self, rnd: ServerRound, w_new, part_state):
        part_state["s"] = self.rho * unit(rnd.uploads["smoo_s"].sum(0))
        return w_new


# ----------------------------------------------------------------------------- steps

@declares(ADABEST_BETA)
@part_id("S7")
@dataclass(frozen=True)
class AdaBestStep:
    """S7, AdaBest's server (Varno et al. 2022, Algorithm 1; docs/algorithms.md 3.7)::

        theta^t = sum_k p_k w_k;   w^{t+1} = theta^t - beta (theta^{t-1} - theta^t)

    keeping ``theta^{t-1}``.  Before the first round it is ``w^0``, as in the authors'
    fedsim library (``avg_params`` starts as the initial model), so round one already
    extrapolates along ``theta^0 - w^0``.
    """

    state_meanings = {"prev_mean": "previous round's client average theta^{t-1} (AdaBest, Varno et al. 2022, Alg. 1)"}

    paper_values = staticmethod(adabest_server)

    beta: float

    def init(self, w, num_clients):
        return {"prev_mean": w.detach().clone()}

    def update(self, rnd: ServerRound, state):
        mean = aggregate(rnd.uploads["model"], rnd.counts)
        w_new = mean - self.beta * (state["prev_mean"] - mean)
        state["prev_mean"] = mean
        return w_new


@part_id("S4")
@dataclass(frozen=True)
class FedNovaStep:
    """S4, FedNova's normalized averaging (Wang et al. 2020, Eq. 6; docs/algorithms.md 3.8).

    With client momentum ``rho`` and ``tau_k`` local steps (the ``steps`` upload)::

        a_k = [tau_k - rho (1 - rho^tau_k) / (1 - rho)] / (1 - rho)
        w^{t+1} = w^t - (sum_k p_k a_k) sum_k p_k (w^t - w_k) / a_k

    ``rho = 0`` gives ``a_k = tau_k``; with equal ``tau_k`` this is FedAvg.
    """

    momentum: float = 0.0

    def init(self, w, num_clients):
        return {}

    def update(self, rnd: ServerRound, state):
        rho = self.momentum
        tau = rnd.uploads["steps"].to(rnd.w.dtype).clamp_min(1)
        a = (tau - rho * (1 - rho ** tau) / (1 - rho)) / (1 - rho)
        p = rnd.counts.to(rnd.w.dtype) / rnd.counts.sum()
        d = (rnd.start - rnd.uploads["model"]) / a.unsqueeze(-1)
        return rnd.w - (p @ a) * (p @ d)


@declares(GMA_TAU, GMA_VARIANT)
@part_id("S5")
@dataclass(frozen=True)
class GMAStep:
    """S5, FedGMA's gradient-masked averaging (Tenison et al. 2023, Algorithm 1;
    docs/algorithms.md 3.9).

    ``variant="paper"``: per coordinate the sign agreement
    ``A_j = |sum_k sign(Delta_{k,j})| / m`` gives the soft mask ``M_j = 1`` where
    ``A_j >= tau`` and ``M_j = A_j`` below it, and ``w^{t+1} = w^t - lr M * Delta^t``
    (``Delta^t = sum_k p_k Delta_k``).  Tenison et al. scale the coordinates the clients
    disagree on by their agreement rather than zeroing them (the AND-mask of Parascandolo
    et al. zeroes them; with a few heterogeneous clients per round that mask removes almost
    every coordinate and the model stays at chance).  With ``tau = 0`` every coordinate
    passes and ``lr = 1`` is FedAvg.

    ``variant="fedima_code"`` reproduces the FedIMA code behind the [IMA] tables: the
    sign count uses ``w_k - w^t``, the threshold is strict (``|count| > tau m``) and,
    for each participant in turn, the model is reset to the FedAvg average and moved by
    ``-lr M_k * (w_k - w_cur) / m`` with ``w_cur`` the model after the previous
    participant and ``M_k`` also requiring ``w_k - w_cur`` to have the majority sign;
    with the code's ``lr = 1e-4`` the result is about FedAvg.
    """

    lr: float = 1.0
    tau: float = 0.8
    variant: str = "paper"

    def __post_init__(self):
        check_choice("variant", self.variant, ("paper", "fedima_code"))

    def init(self, w, num_clients):
        return {}

    def update(self, rnd: ServerRound, state):
        models = rnd.uploads["model"]
        m = models.shape[0]
        average = aggregate(models, rnd.counts)
        if self.variant == "paper":
            delta = rnd.start - average
            agreement = torch.sign(rnd.start - models).sum(0).abs() / m
            mask = torch.where(agreement >= self.tau, torch.ones_like(agreement), agreement)
            return rnd.w - self.lr * mask * delta
        count = torch.sign(models - rnd.start).sum(0)
        strong = count.abs() > self.tau * m
        current = rnd.w
        for k in range(m):  # sequential by construction: each step reads the previous one
            diff = models[k] - current
            mask = ((diff > 0) == (count > 0)) & strong
            current = average - self.lr * torch.where(mask, diff, torch.zeros_like(diff)) / m
        return current
