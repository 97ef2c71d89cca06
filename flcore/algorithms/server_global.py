"""Server parts that build a global perturbation (docs/algorithms.md 7.1: P6/S8, P6x, P5's
server side, and FedLESAM's server-broadcast estimate option).

They plug into :class:`flcore.algorithms.server.Server` like the parts of
:mod:`flcore.algorithms.server_parts`: a ``name`` (state in ``state[name]``, a dict of
tensors made by ``init(w, num_clients)``, changed in place and checkpointed as is),
``broadcast(w, start, sent, part_state, round) -> start`` and ``after(w, w_new, start,
uploads, counts, part_state, round, num_clients) -> w_new``.  None of them syncs to the
host: the round index is a Python int, every other quantity stays a tensor.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from flcore.algorithms.hyperparameters import MAX_ROUNDS, Hyperparameter, declares
from flcore.algorithms.part_ids import part_id
from flcore.algorithms.perturbation import unit
from flcore.algorithms.server import SentVector, ServerRound, aggregate
from flcore.errors import check_choice

FEDGF_WINDOW = Hyperparameter("fedgf_window", "int", 30,
                              "FedGF window W of client-to-global distances", low=1, cap=MAX_ROUNDS)
FEDGF_THRESHOLD = Hyperparameter("fedgf_threshold", "float", 0.2,
                                 "FedGF threshold T_D of the distance that switches c", low=0)
FEDGF_C_NORM = Hyperparameter.option("fedgf_c_norm", ("paper", "len"),
                                     "FedGF c: paper (divide by W) or len (official code: the current window's length)")
FEDGF_STATIC_C = Hyperparameter("fedgf_static_c", "float", 0.5, "c of FedGF-static-c", low=0, high=1)


def _perturb(start: torch.Tensor, radius: float, direction: torch.Tensor) -> torch.Tensor:
    if radius == 0:
        return start
    return start + radius * unit(direction)


@part_id("P6", also=("S8",))
@dataclass(frozen=True)
class GlobalPerturbation:
    """P6 + S8, FedGloSS's server-side SAM with the previous pseudo-gradient ([GloSS]
    Sec. 5.2 steps 1-4, Alg. 1 lines 4-5 and 23; docs/algorithms.md 2.4).

    Broadcast: the clients start from ``w~^t = w^t + rho_s(t) unit(Delta~^{t-1})``;
    ``Delta~`` is zero before the first round, so round 0 is unperturbed (``unit(0) = 0``;
    the official code skips the ascent while no pseudo-gradient exists).

    After the round: ``Delta~^t = w~^t - sum_k p_k w_k``, the pseudo-gradient measured at
    the perturbed point (without the ADMM term, decision 4), kept for the next round.  The
    descent on the unperturbed ``w^t`` is the step's: ``PseudoGradientStep`` forms the
    same ``start - aggregate`` and applies it to ``w`` (S8); the part recomputes it
    because a part sees only its own state.

    ``rho_schedule`` maps the round to rho_s (constant in the paper; the official code's
    schedule is :class:`flcore.algorithms.schedules.GlossCodeServerRho`).
    """

    state_meanings = {
        "direction": "previous pseudo-gradient Delta~^{t-1} measured at w~ (FedGloSS, Caldarola et al. 2025, Alg. 1)"}

    rho_schedule: object
    name: str = "gloss"

    def init(self, w, num_clients):
        return {"direction": torch.zeros_like(w)}

    def broadcast(self, w, start, sent, part_state, round):
        return _perturb(start, self.rho_schedule(round), part_state["direction"])

    def after(self, rnd: ServerRound, w_new, part_state):
        part_state["direction"] = rnd.start - aggregate(rnd.uploads["model"], rnd.counts)
        return w_new


@part_id("P6x", also=("S8",))
@dataclass(frozen=True)
class ProbePerturbation:
    """P6x, NaiveFedGloSS's exact server perturbation ([GloSS] Sec. 5.1.1; docs/algorithms.md
    2.4).  First exchange (the engine's probe pass, ``needs_probe``): the round's clients
    run the full local procedure from ``w^t``; ``Delta^t = w^t - sum_k p_k w_k``.  Second
    exchange: the same clients start from ``w^t + rho_s unit(Delta^t)``.  The probe pass's
    client-state updates are discarded by the engine, so the duals change in the second
    pass only (decision: the paper is silent)."""

    state_meanings = {"direction": "the probe exchange's pseudo-gradient Delta^t (NaiveFedGloSS, Sec. 5.1.1)"}

    rho_schedule: object
    name: str = "gloss_probe"
    needs_probe: bool = True

    def init(self, w, num_clients):
        return {"direction": torch.zeros_like(w)}

    def probe(self, rnd: ServerRound, part_state):
        part_state["direction"] = rnd.w - aggregate(rnd.uploads["model"], rnd.counts)

    def broadcast(self, w, start, sent, part_state, round):
        return _perturb(start, self.rho_schedule(round), part_state["direction"])


@declares(FEDGF_WINDOW, FEDGF_THRESHOLD, FEDGF_C_NORM, FEDGF_STATIC_C)
@dataclass(frozen=True)
class FedGFServer:
    """P5's server side, FedGF ([GF] Sec. 4, Eqs. 12-16; docs/algorithms.md 2.5).

    Broadcast ``fedgf_perturbed = w~^r = w^r + rho unit(Delta^{r-1})`` and ``fedgf_c``
    (a 0-d tensor).  After the round (the model step is the plain average)::

        D^r = (1/m) sum_i ||w^r - w_{i,K}||          (against the pre-aggregation w^r)
        I^r = 1[D^r > T_D]
        c^{r+1} = (1/W) sum_{j=r-W+1}^{r} I^j        (missing j count as 0; Eq. 16)
        w~^{r+1} = w^{r+1} + rho unit(w^r - w^{r+1})

    ``c_norm="len"`` divides by the number of indicators so far (at most W), as the
    official code does (decision 1).  ``static_c`` set: FedGF-static-c, ``c = static_c``
    from round 1 on.  ``c = 0`` in round 0 either way (no ``w~`` yet: pure FedSAM).
    ``c`` (for the next round) and ``distance`` (``D^r``) are readable from the state.
    """

    state_meanings = {
        "perturbation": "the global perturbation rho unit(w^{r-1} - w^r) (FedGF, Lee & Yoon 2024, Eq. 12)",
        "indicators": "the last W divergence indicators 1[D^r > T_D] (FedGF, Eq. 15)",
        "c": "blending weight c of the global and local perturbations (FedGF, Eq. 16)",
        "distance": "the last divergence D^r = mean_i ||w^r - w_i|| (FedGF, Eq. 14)",
    }

    downloads = ("fedgf_perturbed",)  # model-sized, beside the model (rule R7)

    rho: float
    window: int = 30
    threshold: float = 0.2
    c_norm: str = "paper"
    static_c: float | None = None
    name: str = "fedgf"

    def __post_init__(self):
        check_choice("c_norm", self.c_norm, ("paper", "len"))

    def init(self, w, num_clients):
        return {"perturbation": torch.zeros_like(w),
                "indicators": torch.zeros(self.window, dtype=w.dtype, device=w.device),
                "c": torch.zeros((), dtype=w.dtype, device=w.device),
                "distance": torch.zeros((), dtype=w.dtype, device=w.device)}

    def broadcast(self, w, start, sent, part_state, round):
        sent["fedgf_perturbed"] = w + part_state["perturbation"]
        sent["fedgf_c"] = part_state["c"]
        return start

    def after(self, rnd: ServerRound, w_new, part_state):
        distance = (rnd.w - rnd.uploads["model"]).norm(dim=-1).mean()
        part_state["distance"] = distance
        part_state["indicators"][rnd.round % self.window] = (distance > self.threshold).to(rnd.w.dtype)
        if self.static_c is not None:
            part_state["c"] = torch.full_like(part_state["c"], self.static_c)
        else:
            filled = self.window if self.c_norm == "paper" else min(rnd.round + 1, self.window)
            part_state["c"] = part_state["indicators"].sum() / filled
        part_state["perturbation"] = self.rho * unit(rnd.w - w_new)
        return w_new


@dataclass(frozen=True)
class LastGlobalUpdate(SentVector, kept="direction", sent_as="lesam_direction"):
    """FedLESAM's ``estimate="server_last_round"`` (the official code; docs/algorithms.md 2.6
    decision 1): the server broadcasts ``lesam_direction = w^{t-1} - w^t`` (zero in
    round 0, so no perturbation there) to every client, one more downlink vector; with
    full participation this equals the paper's client-stored estimate."""

    state_meanings = {"direction": "last global update w^{t-1} - w^t (FedLESAM, official code's estimate)"}

    name: str = "lesam_server"

    def after(self, rnd: ServerRound, w_new, part_state):
        part_state["direction"] = rnd.w - w_new
        return w_new
