"""A description of every registered method, for ``flcore methods`` and the book.

Parts and communication are read off the method's built parts
(:mod:`flcore.config.method_parts`): communication is counted per participating client
and round in model-sized vectors (rule R7), as the parts declare what they send, so
communication-cost tables are rendered from the same objects the engine runs.
"""
from __future__ import annotations

from typing import Any

from flcore.algorithms import METHODS
from flcore.config.experiment import resolve_config
from flcore.config.method_parts import parts_of, traffic_of
from flcore.config.method_reads import grad_evals_per_step, hyperparameters_of


def describe_methods(scale: str = "small", dataset: str | None = None, alpha: float = 0.0) -> list[dict[str, Any]]:
    """One dict per method: name, summary, parts, hyper-parameters with their defaults at
    the given scale/dataset/alpha, communication, gradient evaluations per step, and the
    state it keeps across rounds (``client_state``, ``server_state``: lists of
    ``{name, shape, meaning}``, see :mod:`flcore.algorithms.state_catalog`)."""
    out = []
    for name, method in METHODS.items():
        cfg = resolve_config(method=name, scale=scale, dataset=dataset, alpha=alpha)
        downloads, uploads = traffic_of(name)
        out.append({
            "name": name,
            "summary": method.summary,
            "parts": list(parts_of(name)),
            "hyperparameters": {field: getattr(cfg, field) for field in hyperparameters_of(name)},
            "uploads_per_round": uploads,
            "downloads_per_round": downloads,
            "grad_evals_per_step": grad_evals_per_step(name),
            "client_state": method.client_state(cfg),
            "server_state": method.server_state(cfg),
        })
    return out


def client_state_of(method: str, scale: str = "smoke") -> list[dict[str, Any]]:
    """``method``'s per-client state under its config at ``scale`` (its shape does not
    depend on the scale)."""
    return METHODS[method].client_state(resolve_config(method=method, scale=scale))


def server_state_of(method: str, scale: str = "smoke") -> list[dict[str, Any]]:
    """``method``'s server state under its config at ``scale``."""
    return METHODS[method].server_state(resolve_config(method=method, scale=scale))
