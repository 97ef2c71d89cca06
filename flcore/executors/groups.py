"""The unit of work an executor hands out: a *group* of runs trained by one call.

:func:`group_runs` turns the missing runs into groups with the planner
(:func:`flcore.planning.planner.plan_groups`: duplicates removed, runs that may share a
batch -- same model and protocol shape, differing in seed, partition or a column
hyper-parameter -- grouped to fit the device's memory), and :func:`train_specs` trains
one group as one batched computation (:func:`flcore.planning.planner.train_group`),
returning one result dict per run.  The executors (:mod:`flcore.executors.local`,
:mod:`flcore.executors.ray_executor`) see groups only.

Two guarantees live here so that every executor gets them:

- **one writer per run**: a group trains while holding the run-directory lock of each of
  its runs (:func:`flcore.store.run_lifecycle`, the lock ``flcore run`` takes too, held by
  :func:`flcore.planning.planner.train_group`), taken in run-id order so that two
  groups sharing runs cannot deadlock.  A second driver (another
  ``flcore reproduce``, another Ray task, a ``flcore run``) asking for the same run waits,
  then finds it finished and reuses it -- the run is never trained twice.  The lock dies
  with its process, so a worker killed mid-run never leaves the run locked; its retry
  resumes from the last checkpoint.
- **failures are recorded**: a run that raises is stored with status ``failed``, its
  one-line ``error`` and its ``traceback`` in ``status.json``, while its lock is still held
  (:func:`flcore.store.run_lifecycle`, through ``train_group(..., record_failures=True)``);
  the other groups go on.  :func:`record_failure` records one after the fact only when no
  other process holds the run's lock.

Result dict keys: ``run_id``, ``status`` (finished | diverged | failed), ``error``,
``traceback``, ``seconds``, ``reused`` (the run was already finished when its lock was
taken: another driver trained it).
"""
from __future__ import annotations

import os
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from flcore.planning.planner import RunGroup, plan_groups, train_group
from flcore.planning.spec import RunSpec
from flcore.store import record_failure_if_free


def group_runs(todo: dict[str, RunSpec], device: str = "auto", overrides: dict[str, Any] | None = None,
               workers: int = 1) -> list[list[RunSpec]]:
    """The planner's groups of the missing runs ``todo`` (run id -> spec), largest cost first;
    ``workers`` > 1 cuts each batchable set so that every worker gets a share."""

    groups = plan_groups(todo.values(), device=device, overrides=overrides, workers=workers)
    by_id = {spec.run_id(**(overrides or {})): spec for spec in todo.values()}
    return interleave_timed([[by_id[rid] for rid in group.run_ids] for group in groups])


def _seed(spec: RunSpec) -> int:
    return int(spec.config.get("seed", spec.labels.get("seed", 0)))


def interleave_timed(groups: list[list[RunSpec]]) -> list[list[RunSpec]]:
    """The *timed* runs (config ``timed``: each trained alone, its group of one) in the slots
    they hold, reordered seed by seed -- every method's seed 0, then every method's seed 1,
    ... -- so that the runs one timing comparison reads are trained side by side, under the
    same load of the machine, not in one window per method (largest cost first put all of
    one method's seeds before the next method's)."""
    slots = [i for i, group in enumerate(groups) if len(group) == 1 and group[0].config.get("timed")]
    if len(slots) < 2:
        return groups
    first_seen: dict[str, int] = {}
    for i in slots:
        first_seen.setdefault(groups[i][0].method, len(first_seen))
    ordered = sorted((groups[i] for i in slots), key=lambda g: (_seed(g[0]), first_seen[g[0].method]))
    out = list(groups)
    for slot, group in zip(slots, ordered):
        out[slot] = group
    return out


def train_specs(specs: Sequence[RunSpec], store: str, overrides: dict[str, Any],
                threads: int | None = None) -> list[dict[str, Any]]:
    """Train the runs of a group into ``store`` as one computation; one result dict per
    spec (module docstring)."""

    if threads is not None:
        torch.set_num_threads(threads)
    if not Path(store).is_dir():
        raise FileNotFoundError(
            f"run store {store} is not visible here ({os.uname().nodename}): every worker must "
            "see the driver's store at the same path (a shared filesystem)")
    try:
        run_ids = [spec.run_id(**overrides) for spec in specs]
    except Exception as exc:  # noqa: BLE001 - a bad config fails its group, not the caller
        return failed_group(specs, overrides, f"{type(exc).__name__}: {exc}", traceback.format_exc())
    group = RunGroup(configs=tuple(spec.config for spec in specs), run_ids=tuple(run_ids),
                     labels=tuple(spec.labels for spec in specs))
    # holds the runs' locks; a failed run is recorded before its lock is released
    results = train_group(group, store, overrides, record_failures=True)
    return [{key: value for key, value in result.items() if key != "summary"} for result in results]


def record_failure(runs, spec: RunSpec, overrides: dict[str, Any], result: dict[str, Any]) -> bool:
    """Store status ``failed`` with the error and traceback of ``result`` for ``spec``'s run,
    after the fact: under the run's lock taken without waiting
    (:func:`flcore.store.record_failure_if_free`); when another process holds it (it may be
    training the run now) nothing is written, a line on stderr says so, and False is returned."""
    cfg = spec.resolve(**overrides)
    return record_failure_if_free(runs, cfg, result["error"], result.get("traceback"))


def failed_group(specs: Sequence[RunSpec], overrides: dict[str, Any], error: str,
                 trace: str | None = None) -> list[dict[str, Any]]:
    """Result dicts for a group whose whole call failed (its worker died, its task raised)."""
    results = []
    for spec in specs:
        try:
            run_id = spec.run_id(**overrides)
        except Exception:  # noqa: BLE001 - the id is only a label here
            run_id = None
        results.append({"run_id": run_id, "status": "failed", "error": error, "traceback": trace,
                        "seconds": 0.0, "reused": False})
    return results
