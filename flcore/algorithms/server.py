"""Server steps on the aggregated pseudo-gradient (docs/algorithms.md 7.1, parts S0, S2, S3).

The server receives the client models ``[K, P]`` and their sample counts, forms the
pseudo-gradient ``delta = w - sum_k p_k w_k`` (p_k normalised over the participants,
rule R2) and applies an optimizer to it.  Each optimizer is a pair of pure functions in
the optax style: ``init(w) -> state`` and ``update(w, delta, state) -> (w, state)``; the
state is a dict of tensors so it can be checkpointed as is.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

import torch

from flcore.algorithms.hyperparameters import Hyperparameter, declares
from flcore.algorithms.part_ids import part_id

SERVER_LR = Hyperparameter("server_lr", "float", 1.0,
                           "server learning rate on the pseudo-gradient", low=0, low_open=True)
SERVER_MOMENTUM = Hyperparameter("server_momentum", "float", 0.0,
                                 "server momentum beta (FedAvgM)", low=0, high=1, high_open=True)
SERVER_BETA1 = Hyperparameter("server_beta1", "float", 0.9,
                              "first-moment decay of the adaptive server optimizer (Reddi et al. 2021)",
                              low=0, high=1, high_open=True)
SERVER_BETA2 = Hyperparameter("server_beta2", "float", 0.99,
                              "second-moment decay of the adaptive server optimizer", low=0, high=1, high_open=True)
SERVER_TAU = Hyperparameter("server_tau", "float", 0.001,
                            "adaptivity tau of the adaptive server optimizer", low=0, low_open=True)
BIAS_CORRECTION = Hyperparameter("bias_correction", "bool", False, "Adam's bias correction of the server moments")


def aggregate(client_models: torch.Tensor, num_samples: torch.Tensor) -> torch.Tensor:
    """Sample-weighted average ``sum_k n_k w_k / sum_k n_k`` (FedAvg, McMahan et al. 2017)."""
    weights = num_samples.to(client_models.dtype)
    weights = weights / weights.sum()
    return weights @ client_models


@declares(SERVER_LR, SERVER_MOMENTUM)
@dataclass(frozen=True)
class ServerSGD:
    """S0/S2: ``v <- beta v + delta; w <- w - lr v`` (FedOpt with server SGD).

    ``lr = 1, beta = 0`` is FedAvg; ``beta > 0`` is FedAvgM (Hsu, Qi & Brown 2019).
    """

    state_meanings = {"velocity": "server momentum buffer v (FedAvgM/FedOpt: v <- beta v + Delta)"}

    lr: float = 1.0
    momentum: float = 0.0

    @property
    def part_ids(self) -> tuple[str, ...]:
        """S2 with momentum; plain S0 (the step's own id) without."""
        return ("S2",) if self.momentum else ()

    def init(self, w: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"velocity": torch.zeros_like(w)} if self.momentum else {}

    def update(self, w, delta, state):
        if self.momentum:
            velocity = self.momentum * state["velocity"] + delta
            return w - self.lr * velocity, {"velocity": velocity}
        return w - self.lr * delta, state


@part_id("S3")
@declares(SERVER_LR, SERVER_BETA1, SERVER_BETA2, SERVER_TAU, BIAS_CORRECTION)
@dataclass(frozen=True)
class ServerAdaptive:
    """S3: FedAdam, FedAdagrad, FedYogi (Reddi et al. 2021, Algorithm 2).

    With ``d = -delta``::

        m <- beta1 m + (1 - beta1) d
        v <- beta2 v + (1 - beta2) d^2                 (Adam)
        v <- v + d^2                                   (Adagrad)
        v <- v - (1 - beta2) d^2 sign(v - d^2)         (Yogi)
        w <- w + lr m / (sqrt(v) + tau)

    element-wise, ``m = v = 0`` at start and no bias correction, as Reddi et al. write it
    (docs/algorithms.md 3.4).  ``bias_correction=True`` divides ``m`` and ``v`` by
    ``1 - beta^t`` as ``torch.optim.Adam`` does, which is what the FedSAM paper's code ran
    (its Table 13).
    """

    state_meanings = {
        "m": "first moment m of the adaptive server optimizer (Reddi et al. 2021, Alg. 2)",
        "v": "second moment v of the adaptive server optimizer (Reddi et al. 2021, Alg. 2)",
        "step": "number of server optimizer steps taken (bias correction)",
    }

    kind: str  # "adam" | "adagrad" | "yogi"
    lr: float
    beta1: float
    beta2: float
    tau: float
    bias_correction: bool = False

    def init(self, w):
        return {"m": torch.zeros_like(w), "v": torch.zeros_like(w), "step": torch.zeros((), dtype=torch.float64)}

    def update(self, w, delta, state):
        d = -delta
        step = state["step"] + 1
        m = self.beta1 * state["m"] + (1 - self.beta1) * d
        d2 = d * d
        if self.kind == "adam":
            v = self.beta2 * state["v"] + (1 - self.beta2) * d2
        elif self.kind == "adagrad":
            v = state["v"] + d2
        elif self.kind == "yogi":
            v = state["v"] - (1 - self.beta2) * d2 * torch.sign(state["v"] - d2)
        else:
            raise ValueError(f"unknown adaptive server optimizer {self.kind!r}")
        m_hat, v_hat = m, v
        if self.bias_correction:
            t = float(step)
            if self.beta1 > 0:
                m_hat = m / (1 - self.beta1 ** t)
            if self.kind != "adagrad" and self.beta2 > 0:
                v_hat = v / (1 - self.beta2 ** t)
        w_new = w + self.lr * m_hat / (v_hat.sqrt() + self.tau)
        return w_new, {"m": m, "v": v, "step": step}


@dataclass(frozen=True)
class ServerRound:
    """One round as the server's parts read it (:meth:`Server.update`, :meth:`Server.probe`).

    ``w``: the global model ``w^t`` ``[P]``; ``start``: the point the clients started from
    (``w^t``, or FedGloSS's ``w~^t``; ``w^t`` in a probe exchange); ``uploads``: what the
    clients sent (``model`` ``[K, P]`` and the parts' extras, ``[K, ...]``); ``counts``:
    their sample counts ``[K]``; ``round``: the 0-based round; ``num_clients``: N, all the
    clients of the federation.
    """

    w: torch.Tensor
    start: torch.Tensor
    uploads: dict
    counts: torch.Tensor
    round: int
    num_clients: int


class ServerStep(Protocol):
    """An S part: the new global model from the round's uploads.  Its state (a dict of
    tensors, checkpointed as is) is ``init``'s, changed in place by ``update``."""

    def init(self, w: torch.Tensor, num_clients: int) -> dict: ...

    def update(self, rnd: ServerRound, state: dict) -> torch.Tensor: ...


class ServerPart(Protocol):
    """An auxiliary server part, its state under ``state[name]``.  Optional hooks, called
    when present: ``broadcast(w, start, sent, part_state, round) -> start`` (before the
    clients train: the start point and the vectors sent into ``sent``),
    ``probe(rnd, part_state)`` (with ``needs_probe = True``: the uploads of a first
    exchange from ``w``) and ``after(rnd, w_new, part_state) -> w_new`` (after the step,
    in the order of the parts)."""

    name: str

    def init(self, w: torch.Tensor, num_clients: int) -> dict: ...


class SentVector:
    """Base of a server part that keeps one model-sized vector ``part_state[kept]`` (zeros
    before the first round) and sends it to the clients as ``sent[sent_as]`` each round:
    ``class Part(SentVector, kept="c", sent_as="scaffold_c")``."""

    kept: ClassVar[str]
    sent_as: ClassVar[str]

    def __init_subclass__(cls, kept: str, sent_as: str, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.kept, cls.sent_as = kept, sent_as
        cls.downloads = (sent_as,)

    def init(self, w, num_clients):
        return {self.kept: torch.zeros_like(w)}

    def broadcast(self, w, start, sent, part_state, round):
        sent[self.sent_as] = part_state[self.kept]
        return start


@dataclass(frozen=True)
class PseudoGradientStep:
    """S0/S2/S3/S8: aggregate the client models, form the pseudo-gradient from the point
    the clients started at (``start - sum_k p_k w_k``) and apply a server optimizer to the
    *global* model ``w``.  For every method but FedGloSS ``start`` is ``w``; FedGloSS
    starts its clients at the perturbed ``w~`` and applies the pseudo-gradient measured
    there to the unperturbed ``w`` (its server-side SAM, docs/algorithms.md part S8)."""

    state_meanings = {
        "delta": "the last round's pseudo-gradient Delta^t = start - sum_k p_k w_k (zeros before round 0)"}

    optimizer: object
    state_children = {"opt": "optimizer"}

    @property
    def part_ids(self) -> tuple[str, ...]:
        """The optimizer's id (S2 momentum, S3 adaptive), S0 for plain server SGD."""
        return getattr(self.optimizer, "part_ids", ()) or ("S0",)

    def init(self, w, num_clients):
        # ``delta`` is the last round's pseudo-gradient (zeros before the first round)
        return {"opt": self.optimizer.init(w), "delta": torch.zeros_like(w)}

    def update(self, rnd: ServerRound, state):
        delta = rnd.start - aggregate(rnd.uploads["model"], rnd.counts)
        state["delta"] = delta
        w_new, state["opt"] = self.optimizer.update(rnd.w, delta, state["opt"])
        return w_new


class Server:
    """The server of a method: a step part (S), auxiliary parts with their own state
    (control variates, duals, broadcast momenta, global perturbations) and an optional
    averaging part (A1 SWA, A2 IMA).

    Per round the engine calls ``broadcast`` (the clients' start point and the vectors
    sent with it), trains the clients, then ``update``.  Parts keep their state in
    ``state[part.name]`` (a dict of tensors, checkpointed as is) and may change it in place.
    """

    def __init__(self, step: ServerStep, parts: tuple[ServerPart, ...] = (), averaging=None):
        self.step = step
        self.parts = tuple(parts)
        self.averaging = averaging

    def init(self, w, num_clients: int) -> dict:
        state = {"step": self.step.init(w, num_clients)}
        for part in self.parts:
            state[part.name] = part.init(w, num_clients)
        if self.averaging is not None:
            state["averaging"] = self.averaging.init(w)
        return state

    @property
    def needs_probe(self) -> bool:
        """True when a part needs a probe pass of the round's clients before broadcasting
        (NaiveFedGloSS's first exchange: docs/algorithms.md 2.4)."""
        return any(getattr(part, "needs_probe", False) for part in self.parts)

    def probe(self, w, uploads, counts, state, round, num_clients) -> None:
        """Give the probe pass's uploads (its clients started from ``w``) to the parts
        that asked for it."""
        rnd = ServerRound(w=w, start=w, uploads=uploads, counts=counts, round=round, num_clients=num_clients)
        for part in self.parts:
            if getattr(part, "needs_probe", False):
                part.probe(rnd, state[part.name])

    def broadcast(self, w, state, round):
        start, sent = w, {}
        for part in self.parts:
            hook = getattr(part, "broadcast", None)
            if hook is not None:
                start = hook(w, start, sent, state[part.name], round)
        return start, sent

    def update(self, w, start, uploads, counts, state, round, num_clients):
        """The new global model after round ``round``: the step, then each part's
        ``after`` hook in order, then the averaging part; every part reads the round as
        one :class:`ServerRound`."""
        rnd = ServerRound(w=w, start=start, uploads=uploads, counts=counts, round=round, num_clients=num_clients)
        w_new = self.step.update(rnd, state["step"])
        for part in self.parts:
            hook = getattr(part, "after", None)
            if hook is not None:
                w_new = hook(rnd, w_new, state[part.name])
        if self.averaging is not None:
            w_new = self.averaging.after(w_new, state["averaging"], round)
        return w_new

    def eval_params(self, w, state):
        """The model to evaluate: SWA's running average once it exists, else ``w``."""
        if self.averaging is not None:
            return self.averaging.eval_params(w, state["averaging"])
        return w
