"""Get the runs an artifact needs from the run store, training only the missing ones.

:func:`ensure_runs` takes :class:`~flcore.experiments.artifacts.RunSpec` s, looks each up
in the store by its run id (the hash of its canonical config), and trains the missing or
interrupted ones through :func:`flcore.api.run_experiment` -- several at a time in
worker processes on a CPU (one thread each: on a shared two-core machine two
single-threaded runs finish sooner than two two-threaded runs in a row), one at a time
on a GPU.  Pending specs (method not implemented yet) are listed with status
``pending`` and never run.  It returns one row per spec: its labels, run id, status and
summary numbers.  A run that raises is reported as ``failed``; by default the call then
raises, so the notebook that asked for it fails and marks its artifact failed.
"""
from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .artifacts import RunSpec

TERMINAL = ("finished", "diverged")


def default_store() -> str:
    """``$FLCORE_STORE`` when set, else ``runs`` (relative to the working directory)."""
    return os.environ.get("FLCORE_STORE") or "runs"


def resolve_store(store: str | os.PathLike | None) -> Path:
    return Path(store if store is not None else default_store()).expanduser()


def _train(job: tuple[RunSpec, dict, str, int | None]) -> dict[str, Any]:
    """Worker: train one run (top-level so that spawned processes can import it)."""
    spec, overrides, store, threads = job
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    from ..api import run_experiment

    started = time.perf_counter()
    try:
        cfg = spec.resolve(**overrides)
        summary = run_experiment(cfg, store=store, progress=False)
        return {"run_id": cfg.run_id(), "status": summary["status"], "error": None,
                "seconds": time.perf_counter() - started}
    except Exception as exc:  # noqa: BLE001 - reported per run, raised by the caller
        return {"run_id": None, "status": "failed", "error": f"{type(exc).__name__}: {exc}",
                "seconds": time.perf_counter() - started}


def _cost(spec: RunSpec) -> float:
    """Rough compute of a run: gradient evaluations of all its clients."""
    from ..algorithms import get_method

    cfg = spec.resolve()
    return cfg.rounds * cfg.per_round * cfg.local_epochs * getattr(get_method(cfg.method), "grad_evals_per_step", 1)


def _default_workers(device: str, missing: int) -> int:
    from ..sim import resolve_device

    if resolve_device(device).type != "cpu":
        return 1
    return max(1, min(os.cpu_count() or 1, missing))


def ensure_runs(specs: Sequence[RunSpec], store: str | os.PathLike | None = None, device: str = "auto",
                workers: int | None = None, data_root: str | None = None, download: bool | None = None,
                raise_on_failure: bool = True, log=print) -> pd.DataFrame:
    """Make sure every available spec has a finished (or diverged) run; see module docstring.

    Returns one row per spec: its labels, ``method``, ``run_id``, ``status`` (finished,
    diverged, failed or pending), ``mean_last_100`` (fraction), ``final_accuracy``,
    ``rounds_done``, ``diverged_round``, ``run_dir`` and ``error``.
    """
    from ..store import RunStore

    root = resolve_store(store)
    runs = RunStore(root)
    overrides = {"device": device, "data_root": data_root, "download": download}
    todo: dict[str, RunSpec] = {}
    for spec in specs:
        if not spec.available:
            continue
        rid = spec.run_id(**overrides)
        if rid not in todo and runs.run(rid).status().get("status") not in TERMINAL:
            todo[rid] = spec
    errors: dict[str, str] = {}
    # longest first, so that a long run does not end the batch alone on one core
    todo = dict(sorted(todo.items(), key=lambda item: -_cost(item[1])))
    if todo:
        n_workers = workers or _default_workers(device, len(todo))
        threads = 1 if n_workers > 1 else None
        jobs = [(spec, overrides, str(root), threads) for spec in todo.values()]
        if log:
            log(f"training {len(jobs)} run(s) missing from the run store with {n_workers} worker(s)")
        items = list(todo.items())
        if n_workers == 1:
            done = ((i, _train(job)) for i, job in enumerate(jobs))
            _collect(done, items, errors, log)
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(n_workers, mp_context=multiprocessing.get_context("spawn")) as pool:
                futures = {pool.submit(_train, job): i for i, job in enumerate(jobs)}
                _collect(((futures[f], f.result()) for f in as_completed(futures)), items, errors, log)
    frame = results_frame(specs, root, overrides, errors)
    failed = frame[frame["status"] == "failed"]
    if raise_on_failure and len(failed):
        details = "; ".join(f"{row.run_id}: {row.error}" for row in failed.itertuples())
        raise RuntimeError(f"{len(failed)} run(s) failed: {details}")
    return frame


def _collect(done, items, errors: dict, log) -> None:
    """Log each finished job as it comes and note the failures by run id."""
    for index, result in done:
        rid, spec = items[index]
        if log:
            log(f"  {spec.labels} -> {result['status']} in {result['seconds']:.0f} s")
        if result["status"] == "failed":
            errors[rid] = result["error"]


def results_frame(specs: Sequence[RunSpec], store: str | os.PathLike | None = None,
                  overrides: dict | None = None, errors: dict | None = None) -> pd.DataFrame:
    """One row per spec with what the store holds for it (no training)."""
    from ..store import RunStore

    runs = RunStore(resolve_store(store))
    overrides = overrides or {}
    errors = errors or {}
    rows = []
    for spec in specs:
        row: dict[str, Any] = {**spec.labels, "method": spec.method}
        if not spec.available:
            row.update(run_id=None, status="pending", run_dir=None)
            rows.append(row)
            continue
        rid = spec.run_id(**overrides)
        run = runs.run(rid)
        status = run.status()
        summary = run.summary()
        state = status.get("status", "new")
        if rid in errors:
            state = "failed"
        row.update(run_id=rid, status=state, run_dir=str(run.path),
                   rounds_done=status.get("rounds_done", 0),
                   mean_last_100=summary.get("mean_last_100"),
                   final_accuracy=summary.get("final_accuracy"),
                   diverged_round=status.get("diverged_round"),
                   wall_time_s=status.get("wall_time_s"),
                   error=errors.get(rid))
        rows.append(row)
    return pd.DataFrame(rows)


def run_metrics(frame: pd.DataFrame, store: str | os.PathLike | None = None) -> pd.DataFrame:
    """Per-round metric rows of every run in ``frame`` (from :func:`ensure_runs`), with the
    frame's label columns joined on.  Pending runs contribute nothing."""
    from ..store import RunStore

    runs = RunStore(resolve_store(store))
    label_columns = [c for c in frame.columns if c not in _RESULT_COLUMNS]
    parts, cache = [], {}
    for row in frame[frame["run_id"].notna()].to_dict("records"):
        rid = row["run_id"]
        if rid not in cache:
            cache[rid] = runs.metrics(rid) if runs.run(rid).exists() else None
        if cache[rid] is None:
            continue
        metrics = cache[rid].copy()
        for column in label_columns + ["method"]:
            metrics[column] = row[column]
        parts.append(metrics)
    if not parts:
        return pd.DataFrame(columns=["run_id", "round", "test_accuracy"] + label_columns)
    return pd.concat(parts, ignore_index=True)


_RESULT_COLUMNS = {"method", "run_id", "status", "run_dir", "rounds_done", "mean_last_100", "final_accuracy",
                   "diverged_round", "wall_time_s", "error"}
