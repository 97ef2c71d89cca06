"""Client learning-rate schedules (docs/algorithms.md 6.1; parts L0-L3) and radius schedules
(the rho warm-up of docs/algorithms.md 6.3).

A schedule maps the 0-based round to the constant local learning rate (or radius) of
that round.
"""
from __future__ import annotations

from dataclasses import dataclass

from flcore.algorithms.hyperparameters import MAX_ROUNDS, Hyperparameter, declares
from flcore.algorithms.paper_values import swa_cycle
from flcore.algorithms.part_ids import part_id
from flcore.errors import check_choice

SWA_LR_MIN = Hyperparameter("swa_lr_min", "float", 0.0001, "SWA's lowest client lr gamma_2", low=0)
IMA_GAMMA = Hyperparameter("ima_gamma", "float", 0.99,
                           "IMA client lr decay per round before t_IMA", low=0, low_open=True)
IMA_GAMMA_LATE = Hyperparameter("ima_gamma_late", "float", 0.97,
                                "IMA client lr decay per round from t_IMA", low=0, low_open=True)
IMA_EXPLORATION = Hyperparameter.option("ima_exploration", ("exponential", "constant", "cyclic", "epoch", "none"),
                                        "IMA client exploration from t_IMA", added=True)
IMA_LR_MIN = Hyperparameter("ima_lr_min", "float", 5e-05,
                            "lr of IMA's constant exploration and floor of the cyclic one",
                            low=0, low_open=True, added=True)
IMA_EXPLORATION_PERIOD = Hyperparameter("ima_exploration_period", "int", 20,
                                        "rounds per cycle (cyclic) or per epoch dropped (epoch) of IMA's exploration",
                                        low=1, cap=MAX_ROUNDS, added=True)


@part_id("L0")
@dataclass(frozen=True)
class ConstantLR:
    """L0: ``eta_t = eta_0``."""

    lr: float

    def __call__(self, round: int) -> float:
        return self.lr


@part_id("L2")
@dataclass(frozen=True)
class ExponentialLR:
    """L2: ``eta_t = eta_0 * gamma^t`` (FedLESAM: gamma 0.998; FedIMA baselines: 0.99)."""

    lr: float
    gamma: float

    def __call__(self, round: int) -> float:
        return self.lr * self.gamma ** round


def default_start(start: int | None, rounds: int) -> int:
    """The first round of SWA or IMA: ``start``, or 75% of the rounds when None
    ([SAM22] Alg. 1 line 2; [IMA] t_IMA = 0.75 T)."""
    return int(0.75 * rounds) if start is None else int(start)


@part_id("L1")
@declares(SWA_LR_MIN)
@dataclass(frozen=True)
class SWACyclicLR:
    """L1, the client lr of server-side SWA ([SAM22] App. A.2 Eq. 7; docs/algorithms.md 2.3).

    Before ``start`` the base method's schedule; from ``start`` on (t >= t_s, decision 4)::

        gamma(t) = (1 - s(t)) gamma_1 + s(t) gamma_2
        s(t) = (mod(t - 1, c) + 1) / c      (phase "paper": gamma_2 at t = 0 mod c)
        s(t) = (mod(t, c) + 1) / c          (phase "code": the official fedsam code)

    With ``c = 1`` the lr stays at ``gamma_1`` (the text and the code; decision 3).
    """

    paper_values = staticmethod(swa_cycle)

    base: object
    start: int
    cycle: int
    lr_max: float  # gamma_1
    lr_min: float  # gamma_2
    phase: str = "paper"

    def __post_init__(self):
        check_choice("swa phase", self.phase, ("paper", "code"))

    def __call__(self, round: int) -> float:
        if round < self.start:
            return self.base(round)
        c = self.cycle
        if c == 1:
            return self.lr_max
        s = ((round - 1) % c + 1) / c if self.phase == "paper" else (round % c + 1) / c
        return (1 - s) * self.lr_max + s * self.lr_min


#: The client-exploration schemes inside IMA that [IMA] Table III compares.
IMA_EXPLORATION_SCHEMES = ("exponential", "constant", "cyclic", "epoch", "none")


@part_id("L3")
@declares(IMA_GAMMA, IMA_GAMMA_LATE, IMA_EXPLORATION, IMA_LR_MIN, IMA_EXPLORATION_PERIOD)
@dataclass(frozen=True)
class IMAExplorationLR:
    """L3, "mild client exploration" of IMA ([IMA] Sec. V; docs/algorithms.md 2.9)::

        eta_t = eta_0 gamma^t                                   t < t_IMA
        eta_t = eta_0 gamma^{t_IMA} gamma_IMA^{t - t_IMA}       t >= t_IMA  ("exponential")

    With ``gamma_IMA = gamma`` (exploration off) the value is computed as
    ``eta_0 gamma^t``, bit for bit the :class:`ExponentialLR` of the base method.

    ``scheme`` picks the alternatives of [IMA] Table III (Sec. VII-C2) for ``t >= t_IMA``:

    - ``"constant"``: a small constant lr, ``eta_t = lr_min`` (the paper's value was lost
      in the text; the official code's ``lr_ima`` is 5e-5);
    - ``"cyclic"`` (cyclic lr of SWA [20]): "decaying lr from eta_0 gamma^{t_IMA} to lr_min
      every ``period`` rounds", linearly within each cycle: with ``u = (t - t_IMA) mod c``,
      ``eta_t = eta_max + (lr_min - eta_max) u / (c - 1)`` (``eta_max`` at a cycle's first
      round, ``lr_min`` at its last; ``c = 1``: ``eta_max``).  The official code's
      triangular formula rises above ``eta_max`` in the second half-cycle; not copied;
    - ``"epoch"`` (epoch decay [70]): the lr keeps ``eta_0 gamma^t`` and the clients train
      one local epoch fewer every ``period`` rounds (:func:`ima_local_epochs`);
    - ``"none"`` (NA, no additional decay): ``eta_0 gamma^t`` throughout.
    """

    lr: float
    gamma: float
    gamma_late: float
    start: int
    scheme: str = "exponential"
    lr_min: float = 5e-5
    period: int = 20

    def __post_init__(self):
        if self.scheme not in IMA_EXPLORATION_SCHEMES:
            raise ValueError(f"ima_exploration must be one of {', '.join(IMA_EXPLORATION_SCHEMES)}, "
                             f"got {self.scheme!r}")

    def __call__(self, round: int) -> float:
        late = round >= self.start
        if not late or self.scheme in ("none", "epoch") or (self.scheme == "exponential"
                                                            and self.gamma_late == self.gamma):
            return self.lr * self.gamma ** round
        if self.scheme == "constant":
            return self.lr_min
        lr_max = self.lr * self.gamma ** self.start
        if self.scheme == "cyclic":
            if self.period == 1:
                return lr_max
            u = (round - self.start) % self.period
            return lr_max + (self.lr_min - lr_max) * u / (self.period - 1)
        return lr_max * self.gamma_late ** (round - self.start)


def ima_local_epochs(epochs: int, start: int, period: int, round: int) -> int:
    """Local epochs of round ``round`` under IMA's epoch-decay scheme ([IMA] Table III,
    "epoch decay" [70]): ``E`` before t_IMA, then one fewer every ``period`` rounds, at
    least one: ``max(1, E - floor((t - t_IMA) / period))``."""
    if round < start:
        return epochs
    return max(1, epochs - (round - start) // period)


def local_epochs_at(cfg, round: int) -> int:
    """The local epochs of round ``round`` for ``cfg``: ``cfg.local_epochs``, except for an
    ``X+ima`` run with ``ima_exploration="epoch"`` (:func:`ima_local_epochs`)."""
    if getattr(cfg, "ima_exploration", "exponential") != "epoch" or not cfg.method.endswith("+ima"):
        return cfg.local_epochs
    return ima_local_epochs(cfg.local_epochs, default_start(cfg.ima_start, cfg.rounds),
                            cfg.ima_exploration_period, round)


@dataclass(frozen=True)
class LinearWarmup:
    """The rho warm-up of [GloSS] App. C.2 (docs/algorithms.md 6.3), a schedule of a radius::

        rho(t) = rho_0 + (rho - rho_0) t / T_s    for t <= T_s,  rho afterwards

    with 0-based rounds (the official code's list index).  ``rounds <= 1``: constant rho,
    as in the official code (which warms up only when ``T_s > 1``) and as the server
    schedule :class:`GlossCodeServerRho` treats ``T_s <= 1``.
    """

    target: float
    rounds: int
    initial: float = 0.001

    def __call__(self, round: int) -> float:
        if self.rounds <= 1 or round >= self.rounds:
            return self.target
        return self.initial + (self.target - self.initial) * round / self.rounds


@dataclass(frozen=True)
class GlossCodeServerRho:
    """The server radius of the official FedGloSS code (``FedGloSSServer.__init__``), an
    explicit option (``gloss_server_rho_schedule="code"``; docs/algorithms.md 2.4 decision 5).

    The code builds the server list from the *client* list's last element, so during
    the warm-up the server radius is the constant ``rho_l + (rho_s - rho_0)/T_s``::

        rho_s(0) = rho_0;  rho_s(t) = rho_l + (rho_s - rho_0)/T_s  for 1 <= t <= T_s;
        rho_s(t) = rho_s   afterwards

    (about 0.2 instead of 0.01 for rounds 1-15000 with the CIFAR-100 script).  As in the
    code, ``T_s <= 1`` means no schedule.  The paper keeps rho_s constant.
    """

    rho_server: float
    rho_local: float
    rounds: int
    initial: float = 0.001

    def __call__(self, round: int) -> float:
        if self.rounds <= 1 or round > self.rounds:
            return self.rho_server
        if round == 0:
            return self.initial
        return self.rho_local + (self.rho_server - self.initial) / self.rounds
