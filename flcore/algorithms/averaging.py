"""Averaging of global models (docs/algorithms.md 7.1, parts A1 and A2) and the builders that
wrap any server with them.

- A1, server-side SWA ([SAM22] App. A.2, Alg. 1): a running average of the global
  models, for evaluation only; the clients keep training from ``w^t``.
- A2, IMA ([IMA] Sec. V): the uniform average of the last P server outputs from
  ``t_IMA`` on, fed back to the clients.

An averaging part has ``init(w) -> state``, ``after(w_new, state, round) -> w_new`` (the
model sent next round) and ``eval_params(w, state)`` (the model evaluated), as
:class:`flcore.algorithms.server.Server` calls them.  IMA over a pseudo-gradient step is
instead a wrapper of the step (:class:`WindowedTargetStep`), so that the window averages
the aggregation targets before a server optimizer acts (docs/algorithms.md 2.9).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from flcore.algorithms.hyperparameters import MAX_ROUNDS, Hyperparameter, declares
from flcore.algorithms.part_ids import part_id
from flcore.algorithms.server import PseudoGradientStep, Server, ServerRound, aggregate
from flcore.errors import check_choice

SWA_START = Hyperparameter("swa_start", "int", None,
                           "first SWA round (none: 75% of the rounds)", low=0, optional=True, at_most_field="rounds")
SWA_CYCLE = Hyperparameter("swa_cycle", "int", 10, "SWA cycle length c in rounds", low=1, cap=MAX_ROUNDS)
SWA_INCLUDE_START = Hyperparameter("swa_include_start", "bool", True,
                                   "whether the model of the start round enters the SWA average")
SWA_PHASE = Hyperparameter.option("swa_phase", ("paper", "code"), "SWA cycle phase: paper or code")
IMA_WINDOW = Hyperparameter("ima_window", "int", 5, "IMA window P of averaged global models", low=1, cap=MAX_ROUNDS)
IMA_START = Hyperparameter("ima_start", "int", None,
                           "t_IMA, the first averaging round (none: 75% of the rounds)",
                           low=0, optional=True, at_most_field="rounds")
IMA_PARTIAL_WINDOW = Hyperparameter.option(
    "ima_partial_window", ("average", "wait"),
    "IMA before a full window: average (the models that exist) or wait (official code)", added=True)


@declares(SWA_START, SWA_CYCLE, SWA_INCLUDE_START, SWA_PHASE)
@part_id("A1")
@dataclass(frozen=True)
class SWA:
    """A1, server-side SWA ([SAM22] Alg. 1 lines 2-3 and 21-23, Eq. 8; docs/algorithms.md 2.3).

    After the base step has produced ``w^{t+1}`` in round ``t``:

    - the average starts as a copy of ``w^{t_s}`` (Alg. 1 line 3; taken at the end of
      round ``t_s - 1``, or from ``w^0`` when ``t_s = 0``), with count ``n = 1``;
    - for ``t > t_s`` at the end of each cycle, ``theta <- (n theta + w^{t+1}) / (n + 1)``,
      ``n <- n + 1`` (Eq. 8).  The end of a cycle is ``mod(t, c) = 0`` with the paper's lr
      phase, ``mod(t - t_s, c) = 0`` with the code's (its collection rule); the two agree
      when ``c`` divides ``t_s``.

    ``include_start=True`` counts the start copy as a model (decision 1: consistent with
    line 3; the paper's ``n = t/c`` is a defect).  ``False`` reproduces the code: ``n``
    starts at 0, so the first collected model replaces the start copy.  From ``t_s`` on
    the evaluated model is ``theta`` (before that ``w``); the clients never see it.
    """

    state_meanings = {
        "model": "SWA running average theta (Caldarola et al. 2022, Alg. 1, Eq. 8)",
        "count": "number of models in the SWA average",
        "active": "whether the SWA average exists yet (from t_s on it is the evaluated model)",
    }

    start: int
    cycle: int
    include_start: bool = True
    phase: str = "paper"

    def __post_init__(self):
        check_choice("swa phase", self.phase, ("paper", "code"))

    def _reset(self, w, state):
        state["model"] = w.detach().clone()
        state["count"] = torch.full_like(state["count"], 1.0 if self.include_start else 0.0)
        state["active"] = torch.ones_like(state["active"])

    def init(self, w):
        state = {"model": torch.zeros_like(w), "count": torch.zeros((), dtype=w.dtype, device=w.device),
                 "active": torch.zeros((), dtype=torch.bool, device=w.device)}
        if self.start == 0:
            self._reset(w, state)
        return state

    def _end_of_cycle(self, round: int) -> bool:
        offset = round if self.phase == "paper" else round - self.start
        return offset % self.cycle == 0

    def after(self, w_new, state, round):
        if round + 1 == self.start:
            self._reset(w_new, state)
        elif round > self.start and self._end_of_cycle(round):
            n = state["count"]
            state["model"] = (n * state["model"] + w_new) / (n + 1)
            state["count"] = n + 1
        return w_new

    def eval_params(self, w, state):
        return torch.where(state["active"], state["model"], w)


@dataclass(frozen=True)
class ModelWindow:
    """The last ``size`` models pushed, one per round (a ring buffer ``[size, P]``
    indexed by the round, so no counter is kept)."""

    size: int

    def init(self, w):
        return {"buffer": torch.zeros(self.size, w.numel(), dtype=w.dtype, device=w.device)}

    def push(self, state, model, round: int) -> None:
        state["buffer"][round % self.size] = model

    def mean(self, state, round: int) -> torch.Tensor:
        filled = min(round + 1, self.size)
        return state["buffer"][:filled].sum(0) / filled

    def full(self, round: int) -> bool:
        """True once ``size`` models have been pushed (rounds ``0..round``)."""
        return round + 1 >= self.size


def ima_averages(round: int, start: int, window: int, partial: str) -> bool:
    """Whether IMA replaces round ``round``'s output by the window mean: from ``t_IMA``
    on; with ``partial="wait"`` (the official code) only once the window is full, with
    ``"average"`` (default) also over the fewer models that exist when ``t_IMA < P - 1``.
    The paper starts IMA late (``t_IMA = 0.75 T``), where the two agree."""
    if round < start:
        return False
    return partial == "average" or ModelWindow(window).full(round)


@declares(IMA_WINDOW, IMA_START, IMA_PARTIAL_WINDOW)
@part_id("A2")
@dataclass(frozen=True)
class IMA:
    """A2, iterative moving averaging of the server outputs ([IMA] Sec. V, Alg. 1;
    docs/algorithms.md 2.9), for steps that are not a pseudo-gradient step (FedNova, FedGMA:
    "X+IMA applies the window to the FedNova output", the code).

    Every round the step's output ``w^_t`` is pushed into a window of the last ``P``; from
    ``t >= t_IMA`` the next global model is their uniform mean (the current round
    included), which is sent to the clients.  Before ``t_IMA``, ``w^{t+1} = w^_t``.
    """

    state_meanings = {"buffer": "the last P server outputs, a ring buffer (IMA around a non-pseudo-gradient step)"}

    window: int
    start: int
    partial: str = "average"  # see ima_averages

    def init(self, w):
        return ModelWindow(self.window).init(w)

    def after(self, w_new, state, round):
        window = ModelWindow(self.window)
        window.push(state, w_new, round)
        return window.mean(state, round) if ima_averages(round, self.start, self.window, self.partial) else w_new

    def eval_params(self, w, state):
        return w


@part_id("A2")
@dataclass(frozen=True)
class WindowedTargetStep:
    """A2 around a pseudo-gradient step (docs/algorithms.md 2.9): every round the aggregation
    target ``sum_k p_k w_k`` (FMA's output) is pushed into a window of the last ``P``;
    from ``t >= t_IMA`` the step is applied to their mean instead,
    ``d = start - mean(window)``, then the server optimizer (FedAdam, FedYogi: "the window
    average of the FMA targets first, then the server optimizer step").  For the plain
    average (lr 1) this is the average of the FMA outputs, the paper's rule.

    Server parts still receive the round's real uploads.
    """

    state_children = {"inner": "step"}
    state_meanings = {
        "window.buffer": "the last P aggregation targets, a ring buffer indexed by round mod P (IMA, Eq. 5)"}

    step: PseudoGradientStep
    window: int
    start: int
    partial: str = "average"  # see ima_averages

    def init(self, w, num_clients):
        return {"inner": self.step.init(w, num_clients), "window": ModelWindow(self.window).init(w)}

    def update(self, rnd: ServerRound, state):
        target = aggregate(rnd.uploads["model"], rnd.counts)
        window = ModelWindow(self.window)
        window.push(state["window"], target, rnd.round)
        if ima_averages(rnd.round, self.start, self.window, self.partial):
            target = window.mean(state["window"], rnd.round)
        single = {**rnd.uploads, "model": target.unsqueeze(0)}
        one = torch.ones(1, dtype=rnd.counts.dtype, device=rnd.counts.device)
        return self.step.update(dataclasses.replace(rnd, uploads=single, counts=one), state["inner"])


def add_swa(server: Server, swa: SWA) -> Server:
    """The same server with SWA as its averaging part."""
    if server.averaging is not None:
        raise ValueError("the server already has an averaging part")
    return Server(server.step, server.parts, averaging=swa)


def add_ima(server: Server, window: int, start: int, partial: str = "average") -> Server:
    """The same server with IMA: around the step when it is a pseudo-gradient step, as an
    averaging part of its outputs otherwise (see :class:`WindowedTargetStep`)."""
    if server.averaging is not None:
        raise ValueError("the server already has an averaging part")
    if type(server.step) is PseudoGradientStep:
        return Server(WindowedTargetStep(server.step, window, start, partial), server.parts)
    return Server(server.step, server.parts, averaging=IMA(window, start, partial))
