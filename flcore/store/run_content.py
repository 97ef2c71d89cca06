"""What a run's config says its record holds: a config flcore writes, and a final model of
exactly the config's model.

A finished run's ``final_model`` is the state dict of the config's model
(:func:`flcore.models.build_model` for the data set's input shape and classes): the same
parameter names, shapes and dtypes, and finite values (a non-finite model would have ended
the run as diverged).  :func:`expected_tensors` builds the model on the ``meta`` device,
so knowing the layout costs no memory and no compute, whatever the model's size.

Used where a record arrives from elsewhere (a results bundle, :mod:`flcore.store.bundle`)
and by ``flcore runs --verify`` (:func:`flcore.store.integrity.check_run` with
``deep=True``).
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import torch

from flcore.config import DATASET_FACTS, ExperimentConfig, resolve_stored_config
from flcore.errors import ConfigError
from flcore.models import build_model
from flcore.store.errors import StoreError
from flcore.store.jsonable import to_jsonable
from flcore.store.run import FLCORE_RUN_ID, config_digest


def stored_config_problem(config: Mapping[str, Any], run_id: str) -> str | None:
    """Why ``config`` (a ``config.json``) is not the canonical config of flcore run
    ``run_id``: not valid for flcore, not the canonical form flcore writes, or hashing to
    another run id; None when it is."""
    try:
        cfg = resolve_stored_config(dict(config))
    except ConfigError as exc:
        return f"not a config flcore accepts ({str(exc)[:300]})"
    except (TypeError, ValueError) as exc:
        return f"not a config flcore accepts ({str(exc)[:300]})"
    canonical = to_jsonable(cfg.canonical())
    if config_digest(canonical) != config_digest(dict(config)):
        extra = sorted(set(config) - set(canonical))
        missing = sorted(set(canonical) - set(config))
        differing = sorted(k for k in set(config) & set(canonical) if config[k] != canonical[k])
        detail = "; ".join(part for part in (
            f"keys flcore leaves out: {', '.join(extra[:5])}" if extra else "",
            f"keys missing: {', '.join(missing[:5])}" if missing else "",
            f"values flcore writes otherwise: {', '.join(differing[:5])}" if differing else "") if part)
        return f"not the canonical config flcore writes ({detail or 'different'})"
    digest = config_digest(canonical)
    if not digest.startswith(run_id):
        return f"hashes to run id {digest[:16]}, not to its folder's {run_id}"
    return None


def resolved_run_config(run: Any) -> ExperimentConfig | None:
    """The config of a stored flcore run (16-hex-digit id, a config flcore resolves to
    exactly its record), or None for any other record."""
    if not FLCORE_RUN_ID.fullmatch(run.run_id):
        return None
    try:
        config = run.config()
        if stored_config_problem(config, run.run_id) is not None:
            return None
        return resolve_stored_config(dict(config))
    except (StoreError, OSError, ConfigError, TypeError, ValueError):
        return None


@lru_cache(maxsize=64)
def _layout(model: str, dataset: str) -> tuple[tuple[str, tuple[int, ...], torch.dtype], ...]:
    shape, num_classes, _ = DATASET_FACTS[dataset]
    with torch.device("meta"):
        module = build_model(model, shape, num_classes)
    return tuple((name, tuple(p.shape), p.dtype) for name, p in module.named_parameters())


def expected_tensors(cfg: ExperimentConfig) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
    """Name -> (shape, dtype) of the final model of a run of ``cfg``."""
    return {name: (shape, dtype) for name, shape, dtype in _layout(cfg.model, cfg.dataset)}


def model_problems(cfg: ExperimentConfig, state: Any) -> list[str]:
    """What is wrong with ``state`` as the final model of a run of ``cfg`` (``[]``: it is
    exactly the config's model, every value finite)."""
    if not isinstance(state, Mapping) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                                 for k, v in state.items()):
        return ["not a flat mapping of names to tensors"]
    expected = expected_tensors(cfg)
    problems = []
    unknown = [name for name in state if name not in expected]
    missing = [name for name in expected if name not in state]
    if unknown:
        problems.append(f"tensor {unknown[0][:80]!r} is not a parameter of the config's model {cfg.model!r}"
                        + (f" ({len(unknown)} such)" if len(unknown) > 1 else ""))
    if missing:
        problems.append(f"parameter {missing[0]!r} of the config's model {cfg.model!r} is missing"
                        + (f" ({len(missing)} missing)" if len(missing) > 1 else ""))
    for name, tensor in state.items():
        if name not in expected:
            continue
        shape, dtype = expected[name]
        if tuple(tensor.shape) != shape:
            problems.append(f"tensor {name!r} has shape {list(tensor.shape)}, the config's model has {list(shape)}")
        elif tensor.dtype != dtype:
            problems.append(f"tensor {name!r} is {str(tensor.dtype).removeprefix('torch.')}, the config's model "
                            f"has {str(dtype).removeprefix('torch.')}")
        elif not bool(torch.isfinite(tensor).all()):
            problems.append(f"tensor {name!r} holds NaN or infinite values")
        if len(problems) >= 5:
            break
    return problems


__all__ = ["expected_tensors", "model_problems", "resolved_run_config", "stored_config_problem"]
