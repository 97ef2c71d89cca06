"""Client perturbations that use more than the current minibatch (docs/algorithms.md 7.1:
P4, P5, P7, and the client radius warm-up of FedGloSS-SAM).

Same protocol as :mod:`flcore.algorithms.perturbation`: ``part(W, batch, ctx, scratch)
-> (eps, loss_at_w)`` on a ``[K, P]`` batch of clients, norms per client.  These parts
read what the server broadcast (``ctx.broadcast``) or their per-client state
(``ctx.client_state``), so they are paired with a server part
(:mod:`flcore.algorithms.server_global`) or keep a row per client across rounds.

Parts that take no gradient at the unperturbed iterate (P4, P7) return ``loss_at_w =
None``: the training loss they report is the minibatch loss at the perturbed point.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from flcore.algorithms.hyperparameters import MAX_ROUNDS, Hyperparameter, declares
from flcore.algorithms.part_ids import part_id
from flcore.algorithms.perturbation import Ascent, unit

LESAM_ESTIMATE = Hyperparameter.option(
    "lesam_estimate", ("client", "server_last_round"),
    "FedLESAM's global-perturbation estimate: client (paper) or server_last_round (official code)")
LESAM_FIRST_VISIT = Hyperparameter.option("lesam_first_visit", ("none", "w0"),
                                          "FedLESAM on a client's first visit: none (no perturbation) or w0")
LESAM_PERTURBATION = Hyperparameter.option(
    "lesam_perturbation", ("paper", "code"),
    "FedLESAM perturbation: paper (global l2 unit) or code (the official per-tensor indexing)")
RHO_WARMUP_ROUNDS = Hyperparameter("rho_warmup_rounds", "int", 0,
                                   "T_s of the linear client-rho warm-up (0: none)", low=0, cap=MAX_ROUNDS)
RHO_WARMUP_START = Hyperparameter("rho_warmup_start", "float", 0.001,
                                  "rho_0, the client rho the warm-up starts from", low=0)


def _broadcast(ctx, name: str) -> torch.Tensor:
    try:
        return ctx.broadcast[name]
    except KeyError:
        raise KeyError(f"the server did not broadcast {name!r}: pair this client part with its server part") from None


@declares(LESAM_ESTIMATE, LESAM_FIRST_VISIT, LESAM_PERTURBATION)
@part_id("P4")
@dataclass(frozen=True)
class LocallyEstimatedGlobal:
    """P4, FedLESAM's locally estimated global perturbation ([LESAM] Sec. 4, Alg. 1;
    docs/algorithms.md 2.6).

    At the start of the round ``delta_i = rho unit(w_i^old - w^t)``, with ``w_i^old`` the
    global model client i received in its previous active round; ``delta_i`` is fixed for
    the round and every step takes its single gradient at ``w + delta_i``.  At the end
    ``w_i^old <- w^t``.

    - ``first_visit="none"`` (default; the code does not perturb in round 0): ``delta_i =
      0`` until the client has a ``w_i^old``.  ``"w0"``: ``w_i^old = w^0`` before the
      first visit.
    - ``estimate="client"`` (paper: clients store ``w_i^old``; client state ``lesam_old``
      and the flag ``lesam_seen``).  ``"server_last_round"`` (official code): the server
      broadcasts ``w^{t-1} - w^t`` as ``lesam_direction``
      (:class:`flcore.algorithms.server_global.LastGlobalUpdate`; one more downlink vector).
    - ``||w_i^old - w^t|| = 0`` gives ``delta_i = 0`` (``unit(0) = 0``).
    - ``tensor_of`` set (``lesam_perturbation="code"``): the official code's normalisation,
      kept to reproduce its published numbers (docs/algorithms.md 2.6 decision 2, FedLESAM
      issue #1).  It indexes the flat direction ``d`` with the parameter-tensor index
      ``j``: every coordinate of tensor ``j`` is shifted by the same scalar
      ``rho d[j] / (sum_{i < T} |d[i]| + 1e-7)``, T the number of tensors.  ``tensor_of``
      ``[P]`` gives each coordinate's tensor index.  Pair it with
      ``lesam_estimate="server_last_round"`` for the full official behaviour.
    """

    state_meanings = {
        "lesam_old": "the global model the client last received, w_i^old (FedLESAM, Fan et al. 2024, Alg. 1)",
        "lesam_seen": "whether the client has participated before (FedLESAM: no perturbation on a first visit)",
    }

    rho: float
    first_visit: str = "none"
    estimate: str = "client"
    tensor_of: torch.Tensor | None = None
    extra_grad_evals: int = 0

    def __post_init__(self):
        if self.first_visit not in ("none", "w0"):
            raise ValueError(f"first_visit must be 'none' or 'w0', got {self.first_visit!r}")
        if self.estimate not in ("client", "server_last_round"):
            raise ValueError(f"estimate must be 'client' or 'server_last_round', got {self.estimate!r}")
        # the tensor count and a copy of the index per device, made once (no per-round
        # host-to-device copy or host sync)
        object.__setattr__(self, "_num_tensors", None if self.tensor_of is None else int(self.tensor_of[-1]) + 1)
        object.__setattr__(self, "_tensor_of_on", {})

    @property
    def client_state(self) -> dict[str, str]:
        if self.estimate == "client":
            return {"lesam_old": "model", "lesam_seen": "flag"}
        return {}

    def begin(self, ctx, scratch):
        if self.estimate == "client":
            d = ctx.client_state["lesam_old"] - ctx.global_model
            if self.first_visit == "none":
                d = torch.where(ctx.client_state["lesam_seen"].unsqueeze(-1), d, torch.zeros_like(d))
        else:
            d = _broadcast(ctx, "lesam_direction").expand_as(ctx.start)
        if self.tensor_of is None:
            scratch["lesam_delta"] = self.rho * unit(d)
        else:
            index = self._tensor_of_on.get(d.device)
            if index is None:
                index = self._tensor_of_on[d.device] = self.tensor_of.to(d.device)
            head = d[:, :self._num_tensors]
            scalars = self.rho * head / (head.abs().sum(dim=-1, keepdim=True) + 1e-7)
            scratch["lesam_delta"] = scalars[:, index]

    def __call__(self, W, batch, ctx, scratch):
        return scratch["lesam_delta"], None

    def end(self, W, ctx, scratch, out):
        if self.estimate == "client":
            K = W.shape[0]
            out["client_state"]["lesam_old"] = ctx.global_model.expand_as(ctx.start).clone()  # [P] or per-row [K, P]
            out["client_state"]["lesam_seen"] = torch.ones(K, dtype=torch.bool, device=W.device)


@part_id("P5")
@dataclass(frozen=True)
class BlendedPerturbation(Ascent):
    """P5, FedGF's blend of perturbed points ([GF] Eq. 12; docs/algorithms.md 2.5).

    Each step, with ``g`` the minibatch gradient at ``W`` and the broadcast global
    perturbed model ``w~^r`` and weight ``c`` (from
    :class:`flcore.algorithms.server_global.FedGFServer`)::

        p = c w~^r + (1 - c) (W + rho unit(g))
        eps = p - W = c (w~^r - W) + (1 - c) rho unit(g)

    and the descent gradient is taken at ``p`` on the same minibatch.  The second form is
    the one computed, so that ``c = 0`` gives FedSAM's perturbation bit for bit (round 0,
    where the server sends ``c = 0``, is pure FedSAM).  The ascent gradient is computed
    even when ``c = 1`` (2 gradient evaluations per step, as in the paper's count).
    """

    rho: float

    def __call__(self, W, batch, ctx, scratch):
        loss, g = self.ascent_gradient(W, batch, ctx, scratch)
        c = _broadcast(ctx, "fedgf_c")
        global_point = _broadcast(ctx, "fedgf_perturbed")
        eps = c * (global_point - W) + (1 - c) * (self.rho * unit(g))
        return eps, loss


@part_id("P7")
@dataclass(frozen=True)
class PreviousGradientSAM:
    """P7, SAM~: SAM with the previous step's gradient (DP-SAT, Park et al. 2023;
    [GloSS] Table 6; docs/algorithms.md 1.4).

    ``eps_i = rho unit(g~_{i-1})`` with ``g~_{i-1}`` the descent gradient of the previous
    step (taken at the previous *perturbed* point, DP-SAT's choice) and ``eps_0 = 0``
    (the stored gradient starts at zero and ``unit(0) = 0``): one gradient evaluation per
    step.  The gradient is recorded by :class:`RecordGradient`, which must be the first
    correction of the same local update (:func:`samtilde_parts` builds the pair).  It is
    kept per client across rounds (client state ``samtilde_grad``), so in centralized
    training the direction carries over from one epoch to the next.
    """

    rho: float
    extra_grad_evals: int = 0
    client_state = {"samtilde_grad": "zeros"}
    state_meanings = {"samtilde_grad": "previous step's gradient g~_{i-1} (SAM~, Caldarola et al. 2025, Table 6)"}

    def begin(self, ctx, scratch):
        scratch["samtilde_grad"] = ctx.client_state["samtilde_grad"]

    def __call__(self, W, batch, ctx, scratch):
        return self.rho * unit(scratch["samtilde_grad"]), None

    def end(self, W, ctx, scratch, out):
        out["client_state"]["samtilde_grad"] = scratch["samtilde_grad"]


@dataclass(frozen=True)
class RecordGradient:
    """P7's helper, placed as a correction: stores the raw descent gradient of the step
    (at the perturbed point, before any other correction, clipping or weight decay) for
    the next step's perturbation; clients without a batch at this step keep theirs."""

    def __call__(self, W, g, ctx, scratch, batch):
        scratch["samtilde_grad"] = torch.where(batch.active.unsqueeze(-1), g, scratch["samtilde_grad"])
        return g


def samtilde_parts(rho: float) -> tuple[PreviousGradientSAM, tuple[RecordGradient]]:
    """(perturbation, corrections) of a SAM~ local update."""
    return PreviousGradientSAM(rho), (RecordGradient(),)


@declares(RHO_WARMUP_ROUNDS, RHO_WARMUP_START)
@part_id("P1")
@dataclass(frozen=True)
class WarmupSAMPerturbation(Ascent):
    """P1 with a radius that depends on the round: FedGloSS-SAM's linear warm-up of the
    client radius rho_l ([GloSS] App. C.2; docs/algorithms.md 6.3).  ``rho_schedule`` maps the
    round to the radius (:class:`flcore.algorithms.schedules.LinearWarmup`); the step is
    SAM's (``eps = rho(t) unit(g)``, same minibatch)."""

    rho_schedule: object

    def __call__(self, W, batch, ctx, scratch):
        loss, g = self.ascent_gradient(W, batch, ctx, scratch)
        return self.rho_schedule(ctx.round) * unit(g), loss
