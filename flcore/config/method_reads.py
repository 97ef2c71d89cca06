"""What a method's build reads and costs, found by building it (docs/design.md 3).

A method's hyper-parameters decide its run id (``ExperimentConfig.canonical``): they
are not written beside its recipe but recorded here, by building the method's client,
server and schedule on a :class:`RecordingConfig` that notes every field read.  A builder
may read a field on one branch only (FedGloSS-SGD reads the warm-up fields only under the
official code's server-radius schedule), so every choice of every string option the build
reads is built too, until no new option is read.  The gradient evaluations per local
step are those of the built client's parts (one, plus SAM's ascent).

The builds read a plain view of the smoke scale's values (the defaults, the scale's and the
method's presets): the fields a build reads do not depend on validation, so this module sits
below :mod:`flcore.config.experiment` and :mod:`flcore.config.validation`, which ask it.
"""
from __future__ import annotations

import functools
from typing import Any

from flcore.algorithms import get_method
from flcore.algorithms.methods import probe_flat
from flcore.config.fields import ADDED_OPTIONS, DEFAULTS, METHOD_FIELDS, NEUTRAL_DEFAULTS, OPTION_CHOICES
from flcore.config.method_parts import SMOKE_DATASET, smoke_view
from flcore.config.presets import method_defaults

#: The fields a recipe's hyper-parameters are drawn from: the method fields and the added
#: options, less those every method reads (``lr_decay``, ``clip_norm``...).
METHOD_SCOPE = frozenset((METHOD_FIELDS | set(ADDED_OPTIONS)) - set(NEUTRAL_DEFAULTS))


class RecordingConfig:
    """A read-only view of a resolved config that records the name of every field read."""

    def __init__(self, cfg: Any):
        object.__setattr__(self, "_cfg", cfg)
        object.__setattr__(self, "read", set())

    def __getattr__(self, name: str) -> Any:
        self.read.add(name)
        return getattr(self._cfg, name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a config is read-only")


def smoke_values(method: str, options: dict[str, str] | None = None) -> Any:
    """``method``'s values at the smoke scale as attributes of a namespace, unvalidated: every
    field's default, then the scale's presets, the method's, and ``options``."""
    alpha = smoke_view(method, {}).alpha
    return smoke_view(method, {**method_defaults(method, SMOKE_DATASET, alpha, "smoke"), **(options or {})})


def fields_read_by_build(method: str, options: dict[str, str] | None = None) -> set[str]:
    """Every config field ``method``'s client, server and schedule builders read under its
    smoke-scale values with ``options`` set."""
    recipe = get_method(method)
    cfg = RecordingConfig(smoke_values(method, options))
    recipe.build_client(cfg, probe_flat())
    recipe.build_server(cfg)
    recipe.build_schedule(cfg)
    return cfg.read


@functools.cache
def hyperparameters_of(method: str) -> tuple[str, ...]:
    """The method fields ``method``'s build reads, in the order of
    :data:`~flcore.config.fields.DEFAULTS`: under its defaults and under every choice of
    every string option the build reads (the options read on a branch that a choice opens
    are followed in turn)."""
    read = fields_read_by_build(method)
    explored: set[str] = set()
    while pending := sorted((read & set(OPTION_CHOICES)) - explored):
        for option in pending:
            explored.add(option)
            for value in OPTION_CHOICES[option]:
                read |= fields_read_by_build(method, {option: value})
    return tuple(name for name in DEFAULTS if name in read and name in METHOD_SCOPE)


@functools.cache
def grad_evals_per_step(method: str) -> int:
    """Gradient evaluations per local step of ``method`` (the cost model's unit): one plus
    the extra evaluations its built client's parts carry (SAM's ascent: one)."""
    client = get_method(method).build_client(smoke_values(method), probe_flat())
    return client.grad_evals_per_step
