"""Get the runs an artifact needs from the run store, training only the missing ones.

:func:`ensure_runs` takes :class:`~flcore.reproduction.artifacts.RunSpec` s, looks each up
in the store by its run id (the hash of its canonical config), and trains the missing or
interrupted ones.  The missing runs of all the specs at once are planned into groups
(:func:`flcore.planning.planner.plan_groups`: duplicates removed, runs that differ only
in seed, partition or a column hyper-parameter trained as one batch) and the groups handed
to an executor (:mod:`flcore.executors`): by default the local one -- several groups at a
time in worker processes on a CPU (one thread each: on a shared two-core machine two
single-threaded groups finish sooner than two two-threaded groups in a row), one at a time
on a GPU -- or a Ray cluster.  Pending specs (method not implemented yet) are listed with
status ``pending`` and never run.  It returns one row per spec: its labels, run id, status and
summary numbers.  A run that raises is reported as ``failed``; by default the call then
raises, so the notebook that asked for it fails and marks its artifact failed.

``max_rounds`` caps every run at that many rounds (a preview: :mod:`flcore.sim.engine`);
the runs keep their ids, and a later call with a higher cap or none continues them from
their checkpoints.  In the frame such a call returns, a run stopped at its cap counts as
finished for the page that asked for the preview (``capped_at`` says where it stopped, out
of ``rounds``); :func:`results_frame` without ``max_rounds`` -- what the claims engine
reads -- reports it as ``capped``.  Runs imported from a results bundle carry their
``provenance`` (device, date and commit of the machine that trained them).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from flcore.executors import LocalExecutor, group_runs
from flcore.planning.planner import records_more
from flcore.planning.spec import RunSpec
from flcore.record_format import CAPPED, stop_round, trained_enough
from flcore.reproduction.estimate import estimate_line, group_seconds, longest_first, wall_seconds
from flcore.reproduction.estimate_record import RECORD_FILE, append_record, training_record
from flcore.reproduction.progress import TrainingProgress, clock_text
from flcore.reproduction.store_state import resolve_store, stored_state
from flcore.store import RunStore, StoreError

TERMINAL = ("finished", "diverged")


#: The round cap of this process: set by a notebook's ``max_rounds`` parameter
#: (:func:`cap_rounds`, called by :class:`flcore.report.page.Page`) or inherited from
#: ``flcore reproduce --max-rounds N``; :func:`ensure_runs` caps at it when no ``max_rounds``
#: is given, so a notebook's own calls train no further than its parameter says.
MAX_ROUNDS_ENV = "FLCORE_MAX_ROUNDS"


def default_max_rounds() -> int | None:
    """``$FLCORE_MAX_ROUNDS`` as a positive integer, or None when unset or empty."""
    raw = os.environ.get(MAX_ROUNDS_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"${MAX_ROUNDS_ENV}: expected a positive integer (a round cap), got {raw!r}")
    return int(raw)


def cap_rounds(max_rounds: int | None) -> None:
    """Make ``max_rounds`` the round cap of this process (a notebook's kernel): every later
    :func:`ensure_runs` that names no ``max_rounds`` of its own stops its runs at that round,
    through ``$FLCORE_MAX_ROUNDS``.  ``None`` leaves the cap as it is (none, or the one
    ``flcore reproduce --max-rounds`` set); anything but a positive integer is a
    ``ValueError`` with one line."""
    if max_rounds is None:
        return
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1:
        raise ValueError(f"max_rounds: expected a positive integer (a round cap) or None, got {max_rounds!r}")
    os.environ[MAX_ROUNDS_ENV] = str(max_rounds)


def ensure_runs(specs: Sequence[RunSpec], store: str | os.PathLike | None = None, device: str = "auto",
                workers: int | None = None, data_root: str | None = None, download: bool | None = None,
                raise_on_failure: bool = True, log=print, executor=None, progress: bool = False,
                max_rounds: int | None = None, live: bool = False, rates=None) -> pd.DataFrame:
    """Make sure every available spec has a finished (or diverged) run, or one capped at
    ``max_rounds`` (default ``$FLCORE_MAX_ROUNDS``, else none); see module docstring.

    ``executor`` trains the missing runs' groups (:mod:`flcore.executors`; default: the
    local executor with ``workers``); ``progress`` shows one bar over all runs on stderr.
    ``rates`` (:class:`flcore.reproduction.estimate.Rates`): the groups are ordered longest
    first by their estimated seconds and the estimate is logged before training starts;
    ``live``: one live line on stdout (:class:`~flcore.reproduction.progress.TrainingProgress`:
    runs done, groups running, elapsed, time left) instead of a line per finished run.
    Returns one row per spec: its labels, ``method``, ``run_id``, ``status`` (finished,
    diverged, failed or pending), ``mean_last_100`` (fraction), ``final_accuracy``,
    ``rounds_done``, ``rounds``, ``capped_at``, ``diverged_round``, ``run_dir``,
    ``provenance`` and ``error``.
    """
    if max_rounds is None:
        max_rounds = default_max_rounds()
    root = resolve_store(store)
    runs = RunStore(root)
    overrides = {"device": device, "data_root": data_root, "download": download, "max_rounds": max_rounds}
    todo, done = missing_runs(specs, runs, overrides)
    errors: dict[str, str] = {}
    if todo:
        executor = executor or LocalExecutor(workers=workers, device=device)
        groups, seconds = plan_training(todo, done, overrides, device, executor, rates)
        root.mkdir(parents=True, exist_ok=True)  # workers check that they see it
        pool = getattr(executor, "pool_size", lambda n: None)(len(groups))
        if log and rates is not None and pool is not None:

            log(estimate_line(len(todo), len(groups), pool, wall_seconds(seconds, pool), rates.note))
        elif log:
            log(f"training {len(todo)} run(s) missing from the run store in {len(groups)} group(s) with "
                f"{executor.describe(len(groups))}")
        tracker = None
        if live and log and pool is not None:

            # redrawn in place on a terminal, when the lines go to it; plain lines through log otherwise
            on_terminal = log is print and sys.stdout.isatty()
            tracker = TrainingProgress(seconds, [len(g) for g in groups], pool, tty=on_terminal,
                                       log=None if on_terminal else log)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        _collect(executor.map_groups(groups, str(root), overrides), groups, overrides, errors, log, progress,
                 tracker)
        if tracker is not None and rates is not None:
            _record_estimate(root, tracker, groups, seconds, pool, rates, load, log)
    frame = results_frame(specs, root, overrides, errors)
    failed = frame[frame["status"] == "failed"]
    if raise_on_failure and len(failed):
        details = "; ".join(f"{row.run_id}: {row.error}" for row in failed.itertuples())
        raise RuntimeError(f"{len(failed)} run(s) failed: {details}")
    return frame


def _record_estimate(root: Path, tracker, groups, seconds: list[float], workers: int, rates,
                     load: float | None, log) -> None:
    """Say the training's time against its estimate and keep both in the store
    (:mod:`flcore.reproduction.estimate_record`), when every group came back."""

    measured = tracker.group_seconds()
    if any(m is None for m in measured):
        return
    elapsed = tracker.elapsed()
    estimate = wall_seconds(seconds, workers)
    scales = [str(spec.config.get("scale", "")) for group in groups for spec in group]
    line = (f"training took {clock_text(elapsed)} against an estimate of {clock_text(estimate)} "
            f"(measured / estimate {elapsed / estimate:.2f})" if estimate > 0 else "")
    try:
        append_record(root, training_record(seconds, measured, elapsed, [len(g) for g in groups], workers,
                                            rates.note, scales, load, getattr(rates, "correction", 1.0),
                                            getattr(rates, "calibration", "")))
        line += f"; recorded in {root / RECORD_FILE}"
    except OSError as exc:  # a record is never worth a failed build
        line += f"; not recorded: {exc}"
    log(line)


def missing_runs(specs: Sequence[RunSpec], runs: RunStore, overrides: dict) -> tuple[dict[str, RunSpec], dict]:
    """The available specs whose run the store does not hold trained enough, by run id
    (each once), and the rounds each has done (a partly trained run resumes)."""
    todo: dict[str, RunSpec] = {}
    done: dict[str, int] = {}
    for spec in specs:
        if not spec.available:
            continue
        cfg = spec.resolve(**overrides)
        rid = cfg.run_id()
        if rid in todo:
            if records_more(cfg, todo[rid].resolve(**overrides)):
                todo[rid] = spec  # the request that records more is the one trained
            continue
        status = stored_state(runs.run(rid))[1]
        if not trained_enough(status, cfg):
            todo[rid] = spec
            done[rid] = min(int(status.get("rounds_done") or 0), stop_round(cfg))
    return todo, done


def plan_training(todo: dict[str, RunSpec], done: dict[str, int], overrides: dict, device: str, executor,
                  rates=None) -> tuple[list[list[RunSpec]], list[float] | None]:
    """The groups of ``todo`` as ``executor`` will train them and, with ``rates``, their
    estimated seconds, longest first (:mod:`flcore.reproduction.estimate`)."""
    groups = group_runs(todo, device=device, overrides=overrides, workers=executor.planning_workers(len(todo)))
    if rates is None:
        return groups, None

    seconds = [group_seconds(g, overrides, done, rates.rates, rates.evaluation) * getattr(rates, "correction", 1.0)
               for g in groups]
    return longest_first(groups, seconds)


def training_estimate(specs: Sequence[RunSpec], store, device: str, workers: int | None, max_rounds: int | None,
                      rates) -> dict[str, Any]:
    """What :func:`ensure_runs` would print before training ``specs`` with the local
    executor and ``rates`` (nothing trains): ``runs``, ``groups``, ``workers``, ``seconds``
    (None without rates), ``line`` and ``group_list`` (each group in the order it trains:
    its ``runs``, ``methods`` and estimated ``seconds``)."""

    overrides = {"device": device, "data_root": None, "download": None, "max_rounds": max_rounds}
    todo, done = missing_runs(specs, RunStore(resolve_store(store)), overrides)
    executor = LocalExecutor(workers=workers, device=device)
    if not todo:
        return {"runs": 0, "groups": 0, "workers": 0, "seconds": 0.0, "line": "nothing to train", "group_list": []}
    groups, seconds = plan_training(todo, done, overrides, device, executor, rates)
    pool = executor.pool_size(len(groups))
    total = None if seconds is None else wall_seconds(seconds, pool)
    note = rates.note if rates is not None else "this machine is not calibrated"
    listed = [{"runs": len(group), "methods": sorted({spec.method for spec in group}),
               "seconds": None if seconds is None else round(seconds[i], 1)} for i, group in enumerate(groups)]
    return {"runs": len(todo), "groups": len(groups), "workers": pool, "seconds": total,
            "line": estimate_line(len(todo), len(groups), pool, total, note), "group_list": listed}


def _collect(done, groups, overrides: dict, errors: dict, log, progress: bool, tracker=None) -> None:
    """Log each finished run as its group comes back and note the failures by run id;
    with ``tracker`` (a :class:`~flcore.reproduction.progress.TrainingProgress`) the live
    line instead, and the failures above it."""
    if tracker is not None:
        tracker.start()
        try:
            for index, results in done:
                for spec, result in zip(groups[index], results):
                    if result["status"] == "failed":
                        rid = result["run_id"] or spec.run_id(**overrides)
                        errors[rid] = result["error"]
                        tracker.write(f"  {spec.labels} -> failed: {result['error']}")
                tracker.group_done(index)
        finally:
            tracker.close()
        return
    bar = None
    if progress:
        bar = tqdm(total=sum(len(g) for g in groups), unit="run", file=sys.stderr, dynamic_ncols=True)
    try:
        for index, results in done:
            for spec, result in zip(groups[index], results):
                rid = result["run_id"] or spec.run_id(**overrides)
                line = f"  {spec.labels} -> {result['status']} in {result['seconds']:.0f} s"
                if result["status"] == "failed":
                    errors[rid] = result["error"]
                    line += f": {result['error']}"
                if bar is not None:
                    bar.update(1)
                    if result["status"] == "failed":
                        bar.write(line, file=sys.stderr)
                elif log:
                    log(line)
    finally:
        if bar is not None:
            bar.close()


def results_frame(specs: Sequence[RunSpec], store: str | os.PathLike | None = None,
                  overrides: dict | None = None, errors: dict | None = None) -> pd.DataFrame:
    """One row per spec with what the store holds for it (no training).  With a
    ``max_rounds`` in ``overrides``, a run capped there or beyond shows as finished
    (``capped_at``: where it stopped); otherwise as ``capped`` (module docstring)."""

    runs = RunStore(resolve_store(store))
    overrides = overrides or {}
    preview = overrides.get("max_rounds") is not None
    errors = errors or {}
    rows = []
    for spec in specs:
        row: dict[str, Any] = {**spec.labels, "method": spec.method}
        if not spec.available:
            row.update(run_id=None, status="pending", run_dir=None)
            rows.append(row)
            continue
        cfg = spec.resolve(**overrides)
        rid = cfg.run_id()
        run = runs.run(rid)
        state, status, summary, problem = stored_state(run)
        capped_at = status.get("rounds_done") if state == CAPPED else None
        if preview and state == CAPPED and trained_enough(status, cfg):
            state = "finished"
        try:
            provenance = provenance_text(run.provenance())
        except StoreError as exc:
            provenance, problem = None, problem or str(exc)[:500]
        if rid in errors:
            state = "failed"
        row.update(run_id=rid, status=state, run_dir=str(run.path),
                   rounds_done=status.get("rounds_done", 0), rounds=cfg.rounds, capped_at=capped_at,
                   mean_last_100=summary.get("mean_last_100"),
                   final_accuracy=summary.get("final_accuracy"),
                   diverged_round=status.get("diverged_round"),
                   wall_time_s=status.get("wall_time_s"),
                   provenance=provenance,
                   error=errors.get(rid) or problem)
        rows.append(row)
    return pd.DataFrame(rows)


def provenance_text(record: dict) -> str | None:
    """``"NVIDIA H100 80GB HBM3, 2025-06-01, flcore 0.1.0 (commit 1a2b3c4d5e6f)"`` for an
    imported run's provenance record; None for a run trained into this store."""
    if not record:
        return None
    commit = record.get("commit")
    version = f"flcore {record.get('flcore_version', '?')}" + (f" (commit {str(commit)[:12]})" if commit else "")
    return f"{record.get('device', 'unknown device')}, {str(record.get('date', '?'))[:10]}, {version}"


def run_metrics(frame: pd.DataFrame, store: str | os.PathLike | None = None) -> pd.DataFrame:
    """Per-round metric rows of every run in ``frame`` (from :func:`ensure_runs`), with the
    frame's label columns joined on.  Pending runs contribute nothing."""

    runs = RunStore(resolve_store(store))
    label_columns = [c for c in frame.columns if c not in _RESULT_COLUMNS]
    parts, cache = [], {}
    for row in frame[frame["run_id"].notna()].to_dict("records"):
        rid = row["run_id"]
        if rid not in cache:
            try:
                cache[rid] = runs.metrics(rid) if runs.run(rid).exists() else None
            except StoreError:  # a damaged run: results_frame marked it, its rows are not used
                cache[rid] = None
        if cache[rid] is None:
            continue
        metrics = cache[rid].copy()
        for column in label_columns + ["method"]:
            metrics[column] = row[column]
        parts.append(metrics)
    if not parts:
        return pd.DataFrame(columns=["run_id", "round", "test_accuracy"] + label_columns)
    return pd.concat(parts, ignore_index=True)


_RESULT_COLUMNS = {"method", "run_id", "status", "run_dir", "rounds_done", "rounds", "capped_at", "mean_last_100",
                   "final_accuracy", "diverged_round", "wall_time_s", "provenance", "error"}
