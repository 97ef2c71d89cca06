"""One lifecycle for every writer of runs into a store: finished-run lookup, lock, resume
checks, failure record, cleanup.

``with run_lifecycle(store, run_ids) as life:`` holds the run-directory lock
(:class:`~flcore.store.lock.RunLock`) of each run, taken in run-id order so that two
holders of overlapping sets cannot deadlock (waiting for a busy one with a message on
stderr, or raising :class:`~flcore.store.errors.RunBusyError` at once with
``wait=False``).  Inside the block:

- :meth:`RunLifecycle.finished` is a run's stored summary when it needs no more training
  (:func:`intact_terminal_summary`, asked again now that the lock is held: another process
  may have finished the run while this one waited);
- :meth:`RunLifecycle.create` creates (or reopens) a run, rewriting an unreadable
  ``config.json`` its checkpoint proves it held;
- :meth:`RunLifecycle.resume_checks` repairs a resumed run's log from its checkpoint, or
  says what is damaged (:func:`~flcore.store.integrity.prepare_resume`);
- :meth:`RunLifecycle.record_failure` stores status ``failed`` with the error (and its
  traceback) -- only while that run's lock is held: a failure is never written over a run
  another process is training.

Leaving the block, however it is left, removes the run folders the lifecycle found absent
and in which nothing was recorded (the lock file, then the folder if that left it empty:
:func:`~flcore.store.lock.remove_unrecorded`), then releases the locks.

:func:`record_failure_if_free` records a failure after the fact (a worker that died, a task
that raised): it takes the run's lock without waiting and, when another process holds it,
writes nothing and says so on stderr.

Callers: :func:`flcore.api.run_experiment` (one run), :func:`flcore.planning.planner.train_group`
(a group of runs trained together; with ``record_failures=True`` -- the executors, through
:func:`flcore.executors.groups.train_specs` -- its failed runs are recorded here, under
their locks) and :func:`flcore.executors.groups.record_failure`.  Flower's federation
(:mod:`flcore.flower`) trains in memory and writes no run store.
"""
from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable
from typing import Any

from flcore.record_format import CAPPED, trained_enough
from flcore.store.atomic import atomic_write_json
from flcore.store.errors import DamagedRunError, RunBusyError, StoreError
from flcore.store.integrity import check_run, prepare_resume
from flcore.store.jsonable import to_jsonable
from flcore.store.lock import RunLock, remove_unrecorded
from flcore.store.run import CONFIG_FILE, Run, config_digest
from flcore.store.run_store import RunStore

#: Characters of a failure's one-line ``error`` kept in ``status.json`` (a group's run).
ERROR_LIMIT = 2000
#: Characters of a failure's ``traceback`` kept in ``status.json`` (its end).
TRACEBACK_LIMIT = 100_000


def intact_terminal_summary(run: Run, cfg, quiet: bool = False) -> dict[str, Any] | None:
    """The stored summary of a run that needs no more training for ``cfg`` (finished,
    diverged, or capped at ``cfg``'s cap or beyond) whose record checks out, else None (the
    run is then (re)started or continued, which repairs or reports the damage).  Takes no
    lock and writes nothing.  A run directory that is a link raises: nothing is read or
    written through it."""
    if not os.path.lexists(run.path):
        return None
    run.check_directory()
    if not run.exists():
        return None
    try:
        record = run.status()
    except StoreError:
        return None
    status = record.get("status")
    if not trained_enough(record, cfg):
        return None
    problems = check_run(run)
    if status in ("finished", CAPPED) and not problems:
        try:  # the final model is the run's result too; the checkpoint is only for resuming
            run.load_final_model()
        except StoreError as exc:
            problems.append(str(exc))
    if problems:
        if not quiet:
            print(f"flcore: the record of {run.path} is damaged ({'; '.join(problems)}); "
                  "repairing it from its checkpoint", file=sys.stderr)
        return None
    try:
        return run.summary()
    except StoreError:
        return None


def acquire_lock(lock: RunLock, wait: bool = True) -> None:
    """Take ``lock``; when another process holds it, wait for it saying so on stderr, or
    (``wait=False``) raise :class:`~flcore.store.errors.RunBusyError`."""
    try:
        lock.acquire(wait=False)
    except RunBusyError as exc:
        if not wait:
            raise
        print(f"flcore: {getattr(exc, 'holder', exc)}; waiting for it", file=sys.stderr)
        lock.acquire(wait=True)


class RunLifecycle:
    """The runs ``run_ids`` of ``store`` while one process writes them (module docstring).

    Use :func:`run_lifecycle` (a ``with`` block); :meth:`acquire` takes the locks before
    the block when the caller must tell the errors of taking them from the block's."""

    def __init__(self, store: RunStore | str | os.PathLike, run_ids: Iterable[str], wait: bool = True) -> None:
        self.store = store if isinstance(store, RunStore) else RunStore(store)
        self.run_ids = tuple(dict.fromkeys(run_ids))
        self.wait = wait
        self._locks = {rid: RunLock(self.store.run(rid).path) for rid in sorted(self.run_ids)}
        self._fresh: tuple[str, ...] = ()
        self._held = False

    # -- locks -----------------------------------------------------------------------------

    def acquire(self) -> RunLifecycle:
        """Take every run's lock, in run-id order (once; a second call does nothing)."""
        if self._held:
            return self
        self._fresh = tuple(rid for rid in self._locks if not os.path.lexists(self.store.run(rid).path))
        taken: list[str] = []
        try:
            for rid, lock in self._locks.items():
                acquire_lock(lock, self.wait)
                taken.append(rid)
        except BaseException:
            self._close(taken)
            raise
        self._held = True
        return self

    def holds(self, run_id: str) -> bool:
        """Whether this lifecycle holds ``run_id``'s lock now."""
        lock = self._locks.get(run_id)
        return self._held and lock is not None and lock.held()

    def release(self) -> None:
        """Remove the run folders found absent that hold no record, then release the locks."""
        if not self._held:
            return
        self._held = False
        self._close(list(self._locks))

    def _close(self, run_ids: list[str]) -> None:
        try:
            for rid in (r for r in self._fresh if r in run_ids):
                run = self.store.run(rid)
                if not run.exists():
                    remove_unrecorded(run.path)  # nothing was recorded: leave no run folder
        finally:
            for rid in reversed(run_ids):
                self._locks[rid].release()

    def __enter__(self) -> RunLifecycle:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    def _require_lock(self, run_id: str) -> None:
        if not self.holds(run_id):
            raise RuntimeError(f"run {run_id} is written only while its lock is held (flcore.store.lifecycle)")

    # -- the steps -------------------------------------------------------------------------

    def finished(self, cfg) -> dict[str, Any] | None:
        """``cfg``'s stored summary when its run needs no more training and its record
        checks out (:func:`intact_terminal_summary`, quiet), else None."""
        self._require_lock(cfg.run_id())
        return intact_terminal_summary(self.store.run(cfg.run_id()), cfg, quiet=True)

    def create(self, cfg) -> Run:
        """``store.create`` for ``cfg``'s run, rewriting an unreadable ``config.json`` when
        the checkpoint proves it held this config (its ``config_digest``)."""
        self._require_lock(cfg.run_id())
        store = self.store
        try:
            return store.create(cfg.run_id(), cfg.canonical())
        except DamagedRunError:
            run = store.run(cfg.run_id())
            canonical = to_jsonable(cfg.canonical())
            if run.checkpoint_config_digest() != config_digest(canonical):
                raise
            target = run.path / CONFIG_FILE
            if os.path.lexists(target) and not stat.S_ISREG(os.lstat(target).st_mode):
                # never replace a folder, link or special file: it may hold what a user put there
                raise DamagedRunError(str(run.path), [f"{CONFIG_FILE}: not a regular file"],
                                      f"move {target} away; the next run rewrites it from the checkpoint") from None
            atomic_write_json(target, canonical, sort_keys=True)
            print(f"flcore: rewrote the unreadable {target} from the config "
                  "its checkpoint was written for", file=sys.stderr)
            return store.create(cfg.run_id(), cfg.canonical())

    def resume_checks(self, run: Run, num_params: int | None = None, announce: bool = True) -> list[str]:
        """Repair a resumed run's log from its checkpoint, or raise naming the damage
        (:func:`~flcore.store.integrity.prepare_resume`); returns the repairs, printed on
        stderr when ``announce``.  A run not created yet needs none."""
        self._require_lock(run.path.name)
        if not run.exists():
            return []
        notes = prepare_resume(run) if num_params is None else prepare_resume(run, num_params=num_params)
        if announce:
            for note in notes:
                print(f"flcore: repaired {run.path}: {note}", file=sys.stderr)
        return notes

    def record_failure(self, cfg, error: str, traceback: str | None = None, *, with_traceback: bool = True,
                       rounds_done: int | None = None, error_limit: int = ERROR_LIMIT, run: Run | None = None) -> Run:
        """Store status ``failed`` for ``cfg``'s run (created if need be, or ``run``):
        ``error`` (its first ``error_limit`` characters), ``traceback`` (its last
        :data:`TRACEBACK_LIMIT`; the key is left out with ``with_traceback=False``) and
        ``rounds_done`` (carried over when None).  Only under the run's lock."""
        self._require_lock(cfg.run_id())
        if run is None:
            run = self.store.create(cfg.run_id(), cfg.canonical())
        extra: dict[str, Any] = {} if rounds_done is None else {"rounds_done": rounds_done}
        extra["error"] = str(error)[:error_limit]
        if with_traceback:
            extra["traceback"] = traceback[-TRACEBACK_LIMIT:] if traceback else traceback
        run.set_status("failed", **extra)
        return run

    def record_interrupted(self, run: Run, rounds_done: int) -> None:
        """Mark ``run`` interrupted (resumable from its last checkpoint), under its lock."""
        self._require_lock(run.path.name)
        run.set_status("interrupted", rounds_done=rounds_done)


def run_lifecycle(store: RunStore | str | os.PathLike, run_ids: Iterable[str], wait: bool = True) -> RunLifecycle:
    """``with run_lifecycle(store, run_ids) as life:`` (module docstring)."""
    return RunLifecycle(store, run_ids, wait=wait)


def record_failure_if_free(store: RunStore | str | os.PathLike, cfg, error: str,
                           traceback: str | None = None) -> bool:
    """Record ``cfg``'s run failed after the fact, under its lock taken without waiting;
    when another process holds the lock (it may be training the run now) write nothing,
    say so on stderr and return False."""
    try:
        with run_lifecycle(store, [cfg.run_id()], wait=False) as life:
            life.record_failure(cfg, error, traceback)
    except RunBusyError as exc:
        print(f"flcore: not recording the failure of run {cfg.run_id()} ({error!s:.200}): "
              f"{getattr(exc, 'holder', exc)}, which records the run itself", file=sys.stderr)
        return False
    return True


__all__ = ["ERROR_LIMIT", "TRACEBACK_LIMIT", "RunLifecycle", "acquire_lock", "intact_terminal_summary",
           "record_failure_if_free", "run_lifecycle"]
