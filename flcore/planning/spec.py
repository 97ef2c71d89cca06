"""A run request: the labels a table or plot groups a run by and its config values.

Two specs with the same resolved config are the same run (the run store names runs by the
hash of their canonical config), so runs shared between requests are computed once.  A
spec whose method is not registered in :data:`flcore.algorithms.METHOD_NAMES` is
*pending*: it is listed, never run (the check happens at call time).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flcore import algorithms
from flcore.config import ExperimentConfig, resolve_config


def registered_methods() -> tuple[str, ...]:
    """Names of the methods flcore implements now (read at call time)."""
    return tuple(algorithms.METHOD_NAMES)


@dataclass(frozen=True)
class RunSpec:
    """One run an artifact needs: grouping labels + config values (see module docstring)."""

    labels: dict[str, Any]
    config: dict[str, Any]

    @property
    def method(self) -> str:
        return self.config["method"]

    @property
    def available(self) -> bool:
        """Whether flcore implements the method (else the run is pending)."""
        return self.method in registered_methods()

    def resolve(self, **overrides: Any) -> ExperimentConfig:
        """The validated config (``overrides``: device, data_root, download ...)."""
        values = {**self.config, **{k: v for k, v in overrides.items() if v is not None}}
        return resolve_config(values)

    def run_id(self, **overrides: Any) -> str:
        return self.resolve(**overrides).run_id()
