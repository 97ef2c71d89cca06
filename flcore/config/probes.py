"""The registry of training-time probes a config may name in ``probes``.

A probe is built for one simulation by a *factory*, ``factory(sim) -> Probe`` (see
:mod:`flcore.analysis.recording`, which registers the built-in ones and turns a config's
names into callbacks).  The registry lives here, below the simulation and the analysis
tools, so that validating a config (:mod:`flcore.config.validation`) needs nothing above
it: the layers that define probes fill it when they are imported (``import flcore``
imports them all, the papers' probes included).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: probe name -> factory(sim) -> Probe
PROBES: dict[str, Callable[[Any], Any]] = {}


def register_probe(name: str, factory: Callable[[Any], Any]) -> None:
    """Make ``name`` usable in a config's ``probes`` (``factory(sim)`` builds the probe)."""
    if not name or "," in name or "." in name:
        raise ValueError(f"probe name {name!r}: must be non-empty, without ',' or '.'")
    PROBES[name] = factory


def probe_names() -> tuple[str, ...]:
    """Every registered probe name."""
    return tuple(sorted(PROBES))
