"""Client learning-rate schedules (algorithms.md 6.1; parts L0-L3).

A schedule maps the 0-based round to the constant local learning rate of that round.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConstantLR:
    """L0: ``eta_t = eta_0``."""

    lr: float

    def __call__(self, round: int) -> float:
        return self.lr


@dataclass(frozen=True)
class ExponentialLR:
    """L2: ``eta_t = eta_0 * gamma^t`` (FedLESAM: gamma 0.998; FedIMA baselines: 0.99)."""

    lr: float
    gamma: float

    def __call__(self, round: int) -> float:
        return self.lr * self.gamma ** round
