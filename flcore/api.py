"""One function to run an experiment end to end, reusing the run store.

``run_experiment`` resolves and validates the config (before any compute), finds the run
in the store by the hash of its canonical config, returns the stored summary when the run
has already finished or diverged (and its record checks out), resumes it from its last
checkpoint when it was interrupted, and otherwise runs it from the start.  It is built on
the round-level API: a :class:`flcore.Simulation` whose
:meth:`~flcore.Simulation.run_rounds` are :meth:`~flcore.Simulation.step`'s rounds.

One process trains a run at a time: the run directory's lock (``flcore.store.lock``) is
held from the decision to train to the last write.  The lookup, lock, resume checks,
failure record and cleanup are :func:`flcore.store.run_lifecycle`'s, the lifecycle every
writer of runs shares (the planner's groups and the executors too).  A finished run whose record checks
out (its log, summary and final model's digest) is returned without taking the lock, so
a read-only store (a published or CI-cached one) can be queried; only training and
repairs need the lock, and a store that cannot be written then raises
:class:`flcore.store.ReadOnlyStoreError`.  A second process asking for the same run
waits for the lock and then returns the record the first one wrote (``wait=True``, the
default), or raises :class:`flcore.store.RunBusyError` at once (``wait=False``).

A damaged record is repaired from the checkpoint when the log up to the checkpoint's
round is intact (what is repaired is printed on stderr); otherwise
:class:`flcore.store.DamagedRunError` names the file and the fix.  An error during
training marks the run ``failed`` (with the error) before it propagates.  A full disk
(``ENOSPC``) raises :class:`flcore.store.StoreFullError` naming the file: before training
nothing is recorded; during training the run is left interrupted, resumable from its last
checkpoint (every file is replaced atomically, and a torn log line is repaired on resume).
A call that fails before it records anything removes the run folder it created, and
nothing else: never the store's root, where another process may have put a run since.
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from flcore.analysis.recording import recording_callbacks
from flcore.config import ExperimentConfig, resolve_config
from flcore.devices import resolve_device
from flcore.sim import Simulation, build_federated_data
from flcore.store import RunStore, StoreError, StoreFullError, intact_terminal_summary, run_lifecycle
from flcore.store.errors import full_path, is_disk_full


def run_experiment(config: ExperimentConfig | dict[str, Any], store: str | Path | None = "runs",
                   progress: bool = False, chunk_size: int | None = None,
                   callbacks: tuple = (), wait: bool = True) -> dict[str, Any]:
    """Run (or resume, or look up) one experiment; returns its summary.

    The summary has ``status`` (finished | diverged | capped: stopped at the config's
    ``max_rounds``, continued by a later call with a higher cap or none), ``rounds_done``, ``final_accuracy``,
    ``mean_last_100``, ``best_accuracy``, ``run_dir``, ``run_id`` and, for a diverged run,
    ``diverged_round``.  ``store=None`` runs without recording anything.  ``callbacks``
    (e.g. ``flcore.analysis.ProbeCallback``) add training-time probes to the metrics log;
    they do not change the run id, so a run already finished without them is returned as is.
    ``wait``: see the module docstring.
    """
    cfg = config if isinstance(config, ExperimentConfig) else resolve_config(config)
    device = resolve_device(cfg.device)
    if store is None:
        sim = Simulation.from_config(cfg, progress=progress, chunk_size=chunk_size, callbacks=callbacks)
        sim.add_callbacks(recording_callbacks(sim))
        return decorate_summary(sim.run_rounds(), cfg, None)

    store = RunStore(store)
    handle = store.run(cfg.run_id())
    finished = intact_terminal_summary(handle, cfg)  # no lock, no write: a read-only store answers
    if finished is not None:
        return decorate_summary(finished, cfg, handle)
    try:
        data = build_federated_data(cfg, device)  # missing data fails here, before the store is touched
        life = run_lifecycle(store, [cfg.run_id()], wait=wait).acquire()
    except OSError as exc:
        if is_disk_full(exc):
            raise _disk_full(exc, None, None) from None
        raise
    with life:  # leaving it removes the run folder it created when nothing was recorded, then unlocks
        finished = life.finished(cfg)
        if finished is not None:
            return decorate_summary(finished, cfg, handle)
        try:
            run = life.create(cfg)
            sim = Simulation(cfg, data, device, run, progress=progress, chunk_size=chunk_size, callbacks=callbacks)
            sim.add_callbacks(recording_callbacks(sim))
            life.resume_checks(run, num_params=sim.w.numel())
        except OSError as exc:
            if is_disk_full(exc):
                raise _disk_full(exc, None, None) from None
            raise
        try:
            summary = sim.run_rounds()
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            if is_disk_full(exc):
                with contextlib.suppress(OSError, StoreError):  # the disk may not take even this
                    life.record_interrupted(run, sim.rounds_done)
                raise _disk_full(exc, run, sim.rounds_done) from None
            life.record_failure(cfg, f"{type(exc).__name__}: {exc}", with_traceback=False,
                                rounds_done=sim.rounds_done, error_limit=500, run=run)
            raise
        return decorate_summary(summary, cfg, run)


def _disk_full(exc: BaseException, run, rounds_done: int | None) -> StoreFullError:
    """The one-line error of a full disk: the file being written and what to do."""
    path = full_path(exc)
    if run is None:
        return StoreFullError(f"no space left on the device writing {path}; nothing was trained: free space and "
                              "run the same command again", path, training=False)
    return StoreFullError(f"no space left on the device writing {path} after round {rounds_done}; the run is "
                          "interrupted: free space and run the same command again to resume it from its last "
                          "checkpoint", path, training=True)


def lookup_finished(store: str | Path, cfg: ExperimentConfig) -> dict[str, Any] | None:
    """The summary (as :func:`run_experiment` returns it) of ``cfg``'s run when the store
    holds it finished, diverged or capped at ``cfg``'s cap or beyond, with a record that checks out; ``None`` otherwise.
    Takes no lock and writes nothing, so it answers on a read-only store."""
    store = RunStore(store)
    handle = store.run(cfg.run_id())
    try:
        finished = intact_terminal_summary(handle, cfg, quiet=True)
    except (StoreError, OSError):
        return None
    return None if finished is None else decorate_summary(finished, cfg, handle)


def decorate_summary(summary: dict[str, Any], cfg: ExperimentConfig, run) -> dict[str, Any]:
    """A run's summary with the fields of ``flcore run --json``: run id and folder, method,
    dataset and scale."""
    out = dict(summary)
    out.update({
        "run_id": cfg.run_id(),
        "run_dir": str(run.path) if run is not None else None,
        "method": cfg.method,
        "dataset": cfg.dataset,
        "scale": cfg.scale,
    })
    return out
