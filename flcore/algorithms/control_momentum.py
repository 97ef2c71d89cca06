"""Momentum-based stochastic control variates (FedMoSWA; docs/algorithms.md 7.1, C8 and S10).

SCAFFOLD-type control variates (client ``c_i``, server ``c``) whose server variate is a
moving average of the clients' new variates instead of SCAFFOLD's sum of changes:

- each local step adds ``c - c_i`` to the gradient, at the step's lr (with FedSWA's
  in-round decay, :class:`flcore.algorithms.round_lr.LinearInRoundLR`, the whole step is
  scaled, the correction included);
- after ``K`` steps from ``x``: ``c_i+ = c_i - c + (x - y_K) / (K eta_bar)`` with
  ``eta_bar = lr_mean * eta^t`` the mean lr of the round (FedSWA's decay from ``eta`` to
  ``rho eta``: ``lr_mean = (1 + rho) / 2``); the client uploads ``c_i+ - c``;
- server: ``c <- c + gamma (1/|S|) sum_{i in S} (c_i+ - c) = (1 - gamma) c + gamma mean_S c_i+``.

``first_round_mean=True`` is the official code's server: in the first round (no ``c``
yet) ``c = mean_S (c_i+ - c)``, i.e. ``gamma = 1`` once.
"""
from __future__ import annotations

from dataclasses import dataclass

from flcore.algorithms.corrections import received, updated_control_variate
from flcore.algorithms.hyperparameters import Hyperparameter, declares
from flcore.algorithms.part_ids import part_id
from flcore.algorithms.server import SentVector, ServerRound

FEDMOSWA_GAMMA = Hyperparameter("fedmoswa_gamma", "float", 0.1,
                                "FedMoSWA: weight of the clients' new control variates in the server's c",
                                low=0, high=1)
FEDMOSWA_VARIANT = Hyperparameter.option("fedmoswa_variant", ("paper", "code"),
                                         "FedMoSWA: paper, or code (c = the clients' mean in the first round)")


@part_id("C8")
@dataclass(frozen=True)
class MomentumControlVariate:
    """C8, the client side: ``g <- g + (c - c_i)``; ``c_i`` is the client state ``moswa_c``."""

    state_meanings = {"moswa_c": "client control variate c_i+ = c_i - c + (x - y_K)/(K eta_bar) (FedMoSWA)"}

    uploads = ("moswa_dc",)  # model-sized, beside the model (rule R7)

    lr_mean: float = 1.0
    client_state = {"moswa_c": "zeros"}

    def begin(self, ctx, scratch):
        scratch["moswa_term"] = received(ctx, "moswa_c") - ctx.client_state["moswa_c"]

    def __call__(self, W, g, ctx, scratch, batch):
        return g + scratch["moswa_term"]

    def end(self, W, ctx, scratch, out):
        c_new, c, _ = updated_control_variate(W, ctx, out, "moswa_c", self.lr_mean)
        out["moswa_dc"] = c_new - c


@declares(FEDMOSWA_GAMMA, FEDMOSWA_VARIANT)
@part_id("S10")
@dataclass(frozen=True)
class MomentumControlServer(SentVector, kept="c", sent_as="moswa_c"):
    """S10, the server side: keeps ``c`` (zeros), broadcasts it as ``moswa_c`` and after the
    round sets ``c <- c + gamma mean_S (c_i+ - c)``."""

    state_meanings = {"c": "server control variate c <- c + gamma mean_S (c_i+ - c) (FedMoSWA)"}

    gamma: float
    first_round_mean: bool = False
    name: str = "moswa"

    def after(self, rnd: ServerRound, w_new, part_state):
        mean = rnd.uploads["moswa_dc"].mean(0)
        if self.first_round_mean and rnd.round == 0:
            part_state["c"] = mean
        else:
            part_state["c"] = part_state["c"] + self.gamma * mean
        return w_new
