"""Global Nesterov momentum with an extrapolated client start (FedNSAM's server; docs/algorithms.md 7.1).

The server keeps the global momentum ``m`` (zeros at start).  Clients start from the
extrapolated point ``x^t + gamma m^t`` and upload their models; with the clients' mean update
``Delta^t = sum_k p_k y_k - (x^t + gamma m^t)``::

    m^{t+1} = gamma m^t + Delta^t,        x^{t+1} = x^t + m^{t+1}

so ``x^{t+1}`` is the clients' average (Nesterov's look-ahead: the gradient, here the local
update, is taken at the extrapolated point).  ``accumulate=False`` is the official FedNSAM
code's server (``junkangLiu0/FedNSAM``, ``apply_weights_avgACG``): its loop reuses the new
mean update where the old momentum belongs, ``m^{t+1} = (1 + gamma) Delta^t`` (``Delta^0`` in
the first round, when no momentum exists yet), and ``x^{t+1} = x^t + m^{t+1}``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from flcore.algorithms.hyperparameters import Hyperparameter, declares
from flcore.algorithms.part_ids import part_id
from flcore.algorithms.server import ServerRound, aggregate

FEDNSAM_GAMMA = Hyperparameter("fednsam_gamma", "float", 0.85,
                               "FedNSAM: the global Nesterov momentum coefficient gamma", low=0, high=1, high_open=True)
FEDNSAM_VARIANT = Hyperparameter.option("fednsam_variant", ("paper", "code"),
                                        "FedNSAM: paper (accumulated momentum) or code (m = (1 + gamma) Delta)")


@declares(FEDNSAM_GAMMA, FEDNSAM_VARIANT)
@part_id("S9")
@dataclass(frozen=True)
class NesterovExtrapolation:
    """A server part; its step must be the plain average (``average_step``): the part
    returns ``x^t + m^{t+1}`` in place of the step's output."""

    state_meanings = {
        "m": "global Nesterov momentum m^{t+1} = gamma m^t + Delta^t; clients start at x^t + gamma m^t (FedNSAM)"}

    gamma: float
    accumulate: bool = True
    name: str = "nesterov"

    def init(self, w, num_clients):
        return {"m": torch.zeros_like(w)}

    def broadcast(self, w, start, sent, part_state, round):
        return start + self.gamma * part_state["m"]

    def after(self, rnd: ServerRound, w_new, part_state):
        delta = aggregate(rnd.uploads["model"], rnd.counts) - rnd.start
        if self.accumulate:
            m = self.gamma * part_state["m"] + delta
        else:
            m = delta if rnd.round == 0 else (1 + self.gamma) * delta
        part_state["m"] = m
        return rnd.w + m
