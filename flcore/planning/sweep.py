"""A user's grid of runs (``flcore sweep``): expand comma lists, validate every config,
then train the missing runs in groups (:mod:`flcore.planning.planner`).

``--alpha 0,0.5,1000 --rho 0.01,0.05 --seed 0,1`` is the product of the lists, in the
order the flags are given (the last flag varies fastest).  Every config is validated
before anything is trained, so a bad value in the grid fails the whole command at once.
"""
from __future__ import annotations

import itertools
from typing import Any

from flcore.api import decorate_summary
from flcore.config import ExperimentConfig, resolve_config
from flcore.store import RunStore


def split_list(text: str) -> list[str]:
    """``"0,0.5, 1000"`` -> ``["0", "0.5", "1000"]`` (empty items are an error)."""
    items = [item.strip() for item in str(text).split(",")]
    if any(item == "" for item in items):
        raise ValueError(f"empty item in the list {text!r}")
    return items


def expand_grid(base: dict[str, Any], lists: dict[str, list]) -> list[dict[str, Any]]:
    """One config dict per point of the product of ``lists`` (in their order), on top of ``base``."""
    names = list(lists)
    return [{**base, **dict(zip(names, values))} for values in itertools.product(*(lists[n] for n in names))]


def resolve_grid(points: list[dict[str, Any]]) -> list[ExperimentConfig]:
    """Validate every point (a :class:`flcore.ConfigError` names the first bad one)
    and drop repeats of one run id, keeping the first."""
    configs, seen = [], set()
    for point in points:
        cfg = resolve_config(point)
        rid = cfg.run_id()
        if rid not in seen:
            seen.add(rid)
            configs.append(cfg)
    return configs


def run_sweep(configs: list[ExperimentConfig], store: str, workers: int | None = None,
              progress: bool = True) -> list[dict[str, Any]]:
    """Train what the store lacks and return one summary per config, in order, with the
    fields of ``flcore run --json`` (a failed run: ``status`` failed and ``error``)."""
    from flcore.planning.planner import default_workers, plan_groups, train_groups

    device = configs[0].device if configs else "auto"
    n_workers = workers or default_workers(device, len(configs))
    groups = plan_groups(configs, device=device, workers=n_workers)
    results: dict[str, dict] = {}
    for _, group_results in train_groups(groups, store, workers=min(n_workers, len(groups)), progress=progress):
        for result in group_results:
            results[result["run_id"]] = result
    runs = RunStore(store)
    out = []
    for cfg in configs:
        result = results[cfg.run_id()]
        if result["status"] == "failed":
            out.append({"run_id": cfg.run_id(), "method": cfg.method, "dataset": cfg.dataset, "scale": cfg.scale,
                        "status": "failed", "error": result["error"]})
            continue
        summary = dict(result["summary"] or runs.run(cfg.run_id()).summary())
        out.append(decorate_summary(summary, cfg, runs.run(cfg.run_id())))
    return out
