"""Worker processes that stop with their parent: Ctrl-C, SIGTERM or SIGHUP to the parent
stops every worker, each run a worker trains is marked interrupted, and no process prints
a traceback.

Without this, Ctrl-C in a terminal reaches every process of the group (each prints a
``KeyboardInterrupt`` traceback), and SIGTERM to the parent kills it alone: its workers
go on training as orphans, holding the run locks.  :func:`worker_pool` gives a pool
(``ProcessPoolExecutor``, spawned processes) whose workers

- start with SIGINT ignored (an ignored signal stays ignored across ``exec``, so not
  even a Ctrl-C during their start-up reaches them): the parent alone decides;
- handle SIGTERM and SIGHUP: inside a task the signal raises ``KeyboardInterrupt`` (the
  engine marks its runs interrupted and the run locks are released on the way out),
  after which the worker exits at once; between tasks it exits at once.

When the block of :func:`worker_pool` ends by an exception (the parent's Ctrl-C, or a
SIGTERM that ``flcore.cli.interrupts`` turned into one), the pool sends SIGTERM to
every worker, waits for them to record their runs (:data:`STOP_GRACE_S`), kills the
ones still alive and cancels what was not started.  Submit tasks with :func:`submit`
so that workers know when they are inside one.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

#: Seconds the workers get to mark their runs interrupted before they are killed.
STOP_GRACE_S = 60.0
_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))

_in_task = False


def _stop_worker(signum: int, frame) -> None:
    for s in _STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    if _in_task:
        raise KeyboardInterrupt
    os._exit(128 + signum)


def _start_worker(initializer: Callable[[], None] | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for s in _STOP_SIGNALS:
        signal.signal(s, _stop_worker)
    if initializer is not None:
        initializer()


def _run_task(fn: Callable[..., Any], *args: Any) -> Any:
    global _in_task
    _in_task = True
    try:
        return fn(*args)
    except KeyboardInterrupt:
        os._exit(128 + signal.SIGTERM)  # its runs are recorded interrupted; nothing more to say
    finally:
        _in_task = False


def submit(pool: ProcessPoolExecutor, fn: Callable[..., Any], *args: Any) -> Future:
    """``pool.submit(fn, *args)`` as a task the worker can be stopped in (module docstring)."""
    return pool.submit(_run_task, fn, *args)


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def worker_pool(workers: int, initializer: Callable[[], None] | None = None,
                submit_all: Callable[[ProcessPoolExecutor], Any] | None = None) -> Iterator[tuple[Any, ...]]:
    """A pool of ``workers`` spawned processes (module docstring) and what
    ``submit_all(pool)`` returned: the tasks are submitted, and so the workers started,
    while SIGINT is ignored, which the workers inherit."""
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker, initargs=(initializer,))
    try:
        with _sigint_ignored():
            submitted = submit_all(pool) if submit_all is not None else None
        children = [p for p in multiprocessing.active_children() if p not in before]
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    try:
        yield pool, submitted
    except BaseException:
        _stop(pool, children)
        raise
    pool.shutdown(wait=True)


def _stop(pool: ProcessPoolExecutor, children: list) -> None:
    """SIGTERM to every worker, a grace period to record their runs, then SIGKILL."""
    with _sigint_ignored():
        for child in children:
            if child.is_alive():
                with contextlib.suppress(OSError):
                    child.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        for child in children:
            child.join(max(0.0, deadline - time.monotonic()))
            if child.is_alive():
                with contextlib.suppress(OSError):
                    child.kill()
                child.join(5)
        pool.shutdown(wait=False, cancel_futures=True)
