"""The unit of work an executor hands out: a *group* of runs trained by one call.

:func:`group_runs` turns the missing runs into groups and :func:`train_group` trains one
group, returning one result dict per run.  Today a group holds one run and
:func:`train_group` trains its runs one after the other with the run-store path of
:func:`flcore.experiments.runner._train`; a planner that batches several runs into one
training call only has to replace these two functions -- the executors
(:mod:`flcore.executors.local`, :mod:`flcore.executors.ray_executor`) see groups only.

Two guarantees live here so that every executor gets them:

- **one writer per run**: each run is trained while holding an exclusive ``flock`` on
  ``<store>/.<run id>.lock``.  A second driver (another ``flcore reproduce``, another Ray
  task) asking for the same run waits, then finds it finished and reuses it -- the run is
  never trained twice.  The lock dies with its process, so a worker killed mid-run never
  leaves the run locked; its retry resumes from the last checkpoint.
- **failures are recorded**: a run that raises is stored with status ``failed``, its
  one-line ``error`` and its full ``traceback`` in ``status.json``; the other runs go on.

Result dict keys: ``run_id``, ``status`` (finished | diverged | failed), ``error``,
``traceback``, ``seconds``, ``reused`` (the run was already finished when its lock was
taken: another driver trained it).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..experiments.artifacts import RunSpec

TERMINAL = ("finished", "diverged")


def group_runs(todo: dict[str, RunSpec]) -> list[list[RunSpec]]:
    """The groups an executor trains, in the order given (one run per group today)."""
    return [[spec] for spec in todo.values()]


@contextlib.contextmanager
def run_lock(store: str | os.PathLike, run_id: str) -> Iterator[None]:
    """Hold the exclusive lock of run ``run_id`` in ``store`` (blocks until it is free)."""
    root = Path(store)
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / f".{run_id}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def train_group(specs: Sequence[RunSpec], store: str, overrides: dict[str, Any],
                threads: int | None = None) -> list[dict[str, Any]]:
    """Train every run of a group into ``store``; one result dict per spec (module docstring)."""
    from ..experiments.runner import _train
    from ..store import RunStore

    if not Path(store).is_dir():
        raise FileNotFoundError(
            f"run store {store} is not visible here ({os.uname().nodename}): every worker must "
            "see the driver's store at the same path (a shared filesystem)")
    runs = RunStore(store)
    results = []
    for spec in specs:
        try:
            run_id = spec.run_id(**overrides)
        except Exception:  # noqa: BLE001 - _train reports the config error
            results.append({**_train((spec, overrides, store, threads)), "reused": False})
            continue
        with run_lock(store, run_id):
            reused = runs.run(run_id).status().get("status") in TERMINAL
            result = {**_train((spec, overrides, store, threads)), "reused": reused}
            if result["status"] == "failed":
                record_failure(runs, spec, overrides, result)
        results.append(result)
    return results


def record_failure(runs, spec: RunSpec, overrides: dict[str, Any], result: dict[str, Any]) -> None:
    """Store status ``failed`` with the error and traceback of ``result`` for ``spec``'s run."""
    cfg = spec.resolve(**overrides)
    run = runs.create(cfg.run_id(), cfg.canonical())
    run.set_status("failed", error=result["error"], traceback=result.get("traceback"))


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
