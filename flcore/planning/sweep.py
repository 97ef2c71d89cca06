"""A user's grid of runs (``flcore sweep``): expand comma lists, validate every config,
then train the missing runs in groups (:mod:`flcore.planning.planner`).

``--alpha 0,0.5,1000 --rho 0.01,0.05 --seed 0,1`` is the product of the lists, in the
order the flags are given (the last flag varies fastest).  The grid is counted before it
is built (:func:`count_grid`; ``flcore sweep`` refuses more than ``--max-runs`` points,
default :data:`DEFAULT_MAX_RUNS`) and every config is validated, with the checks
``flcore run`` makes, before anything is trained, so a bad value in the grid fails the
whole command at once.  Points the store holds finished are looked up without a lock or a
write (a read-only store answers); only the others are planned and trained.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from flcore.api import decorate_summary, lookup_finished
from flcore.config import ExperimentConfig, resolve_config
from flcore.planning.planner import default_workers, plan_groups, train_groups
from flcore.store import RunStore

#: Default cap of ``flcore sweep``'s grid: far above the grids of the book (a few
#: hundred runs), far below what would exhaust memory or train for months by mistake.
DEFAULT_MAX_RUNS = 5000


def split_list(text: str) -> list[str]:
    """``"0,0.5, 1000"`` -> ``["0", "0.5", "1000"]`` (empty items are an error)."""
    items = [item.strip() for item in str(text).split(",")]
    if any(item == "" for item in items):
        raise ValueError(f"empty item in the list {text!r}")
    return items


def count_grid(lists: dict[str, list]) -> int:
    """The number of points of the product of ``lists``, without building it."""
    return math.prod(len(values) for values in lists.values())


def iter_grid(base: dict[str, Any], lists: dict[str, list]) -> Iterator[dict[str, Any]]:
    """One config dict per point of the product of ``lists`` (in their order), on top of
    ``base``, built one at a time."""
    names = list(lists)
    for values in itertools.product(*(lists[n] for n in names)):
        yield {**base, **dict(zip(names, values))}


def expand_grid(base: dict[str, Any], lists: dict[str, list]) -> list[dict[str, Any]]:
    """:func:`iter_grid` as a list (count it first: :func:`count_grid`)."""
    return list(iter_grid(base, lists))


def resolve_grid(points: Iterable[dict[str, Any]],
                 check: Callable[[ExperimentConfig], None] | None = None) -> list[ExperimentConfig]:
    """Validate every point (a :class:`flcore.ConfigError` names the first bad one),
    with ``check(cfg)`` too, and drop repeats of one run id, keeping the first."""
    configs, seen = [], set()
    for point in points:
        cfg = resolve_config(point)
        if check is not None:
            check(cfg)
        rid = cfg.run_id()
        if rid not in seen:
            seen.add(rid)
            configs.append(cfg)
    return configs


def run_sweep(configs: list[ExperimentConfig], store: str, workers: int | None = None,
              progress: bool = True) -> list[dict[str, Any]]:
    """Train what the store lacks and return one summary per config, in order, with the
    fields of ``flcore run --json`` (a failed run: ``status`` failed and ``error``)."""
    found = {cfg.run_id(): lookup_finished(store, cfg) for cfg in configs}
    todo = [cfg for cfg in configs if found[cfg.run_id()] is None]
    results: dict[str, dict] = {}
    if todo:
        device = todo[0].device
        n_workers = workers or default_workers(device, len(todo))
        groups = plan_groups(todo, device=device, workers=n_workers)
        for _, group_results in train_groups(groups, store, workers=min(n_workers, len(groups)), progress=progress):
            for result in group_results:
                results[result["run_id"]] = result
    runs = RunStore(store)
    out = []
    for cfg in configs:
        if found[cfg.run_id()] is not None:
            out.append(found[cfg.run_id()])
            continue
        result = results[cfg.run_id()]
        if result["status"] == "failed":
            out.append({"run_id": cfg.run_id(), "method": cfg.method, "dataset": cfg.dataset, "scale": cfg.scale,
                        "status": "failed", "error": result["error"]})
            continue
        summary = dict(result["summary"] or runs.run(cfg.run_id()).summary())
        out.append(decorate_summary(summary, cfg, runs.run(cfg.run_id())))
    return out
