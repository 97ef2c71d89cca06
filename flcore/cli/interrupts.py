"""Ctrl-C, SIGTERM and SIGHUP end a command the same way: one line, the run marked
interrupted, exit status 128 + the signal's number (130, 143, 129).

A batch system or a closing terminal stops a process with SIGTERM or SIGHUP, whose
default action kills it on the spot: its worker processes would go on training as
orphans holding the run locks and its runs would stay ``running``.  :func:`handled`
makes both raise :class:`Interrupted` (a ``KeyboardInterrupt``) in the main thread, so
the engine marks the run interrupted, the worker pool stops its workers
(:mod:`flcore.planning.workers`) and the command prints one line.  A second signal
while that cleanup runs is ignored, so it cannot cut the cleanup short with a traceback.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

#: The signals handled as Ctrl-C, besides SIGINT itself.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupted(KeyboardInterrupt):
    """A stop requested by the signal ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def exit_status(exc: BaseException) -> int:
    """128 + the number of the signal that stopped the command (130 for Ctrl-C)."""
    return 128 + int(getattr(exc, "signum", signal.SIGINT))


def _raise(signum: int, frame) -> None:
    for other in (signal.SIGINT, *STOP_SIGNALS):
        signal.signal(other, signal.SIG_IGN)  # the cleanup this starts must not be cut short
    raise Interrupted(signum)


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Interrupted` (main thread only:
    elsewhere signals cannot be handled and the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, *STOP_SIGNALS)}
    for s in STOP_SIGNALS:
        signal.signal(s, _raise)
    if saved[signal.SIGINT] is signal.default_int_handler:  # an ignored Ctrl-C stays ignored
        signal.signal(signal.SIGINT, _raise)
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
