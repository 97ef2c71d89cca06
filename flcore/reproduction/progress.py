"""The live line of a training batch: runs done, groups running, elapsed, time left.

``flcore reproduce`` and ``flcore book`` train the runs their pages need before any
notebook runs (:func:`flcore.reproduction.runner.ensure_runs`).  While they do,
:class:`TrainingProgress` shows one line::

    [########------------] 128/404 runs, 61/175 groups done, 2 running, 7:41 elapsed, about 14:05 left

redrawn in place where the stream is a terminal, printed as plain lines every
``interval`` seconds (and once at the end) otherwise, e.g. in a CI log.

The time left comes from the cost model (:mod:`flcore.reproduction.estimate`): each
group's estimated seconds, replayed on the ``workers`` of the local executor's pool.
The pool starts its groups in the order given, each on the worker free soonest, so the
start of every group is known from the finishing times seen so far: the first
``workers`` groups start at once, group ``workers + k`` when the ``k``-th group finishes.
A running group is charged what its estimate leaves after the seconds it has run, the
waiting ones their estimates, all scaled by what the finished groups took over their
estimates (the correction is learnt as groups finish); the time left is the last
worker's finishing time minus the time now.
"""
from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TextIO

#: Seconds between two plain lines when the stream is not a terminal.
PLAIN_INTERVAL_S = 30.0
#: Seconds between two redraws of the bar on a terminal.
TERMINAL_INTERVAL_S = 1.0
_BAR = 20


def clock_text(seconds: float) -> str:
    """``"7:41"``, ``"1:02:03"``: minutes and seconds, with hours past the hour."""
    total = max(0, int(round(seconds)))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def finish_time(seconds: Sequence[float], workers: int, free: Sequence[float] | None = None) -> float:
    """When the last of ``workers`` workers finishes ``seconds`` (in the order given, each
    to the worker free soonest), the workers being free at ``free`` (default all at 0)."""
    slots = sorted(free) if free is not None else [0.0] * max(1, workers)
    slots = (list(slots) + [0.0] * max(0, workers - len(slots)))[:max(1, workers)]
    for t in seconds:
        soonest = slots.index(min(slots))
        slots[soonest] += t
    return max(slots) if slots else 0.0


class TrainingProgress:
    """Runs done out of the total, groups running, elapsed and the estimated time left of
    groups trained in ``workers`` processes in the order given (module docstring).

    ``estimates``: each group's estimated seconds (None: no estimate, the line says so);
    ``sizes``: each group's runs.  ``tty`` defaults to whether ``stream`` is a terminal;
    ``log``: where the plain lines go when it is not (default: printed to ``stream``);
    ``clock`` (monotonic seconds) is there for tests.
    """

    def __init__(self, estimates: Sequence[float] | None, sizes: Sequence[int], workers: int,
                 stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic,
                 tty: bool | None = None, interval: float | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.estimates = None if estimates is None else [float(s) for s in estimates]
        self.sizes = list(sizes)
        self.workers = max(1, int(workers))
        self.stream = stream if stream is not None else sys.stdout
        self.clock = clock
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self.interval = interval if interval is not None else (TERMINAL_INTERVAL_S if self.tty else PLAIN_INTERVAL_S)
        self.log = log if log is not None else (lambda text: print(text, file=self.stream, flush=True))
        self.started = clock()
        self.finished: dict[int, float] = {}  # group index -> finishing time (since start)
        self._order: list[float] = []  # finishing times in the order they came
        self._last_plain: float | None = None
        self._drawn = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    # ------------------------------------------------------------------ state
    @property
    def total_runs(self) -> int:
        return sum(self.sizes)

    def runs_done(self) -> int:
        return sum(self.sizes[i] for i in self.finished)

    def _start_of(self, index: int) -> float | None:
        """When group ``index`` started (since the start), None if it has not."""
        if index < self.workers:
            return 0.0
        k = index - self.workers  # it took the worker freed by the (k+1)-th finish
        return self._order[k] if k < len(self._order) else None

    def group_seconds(self) -> list[float | None]:
        """Each group's measured seconds, from its start to its finish (None: not finished)."""
        return [self.finished[i] - self._start_of(i) if i in self.finished else None
                for i in range(len(self.sizes))]

    def elapsed(self) -> float:
        return self.clock() - self.started

    def running(self) -> list[int]:
        return [i for i in range(len(self.sizes)) if i not in self.finished and self._start_of(i) is not None]

    def correction(self) -> float:
        """What the finished groups took over their estimates (1 before any finished)."""
        if self.estimates is None or not self.finished:
            return 1.0
        took = sum(at - self._start_of(i) for i, at in self.finished.items())
        planned = sum(self.estimates[i] for i in self.finished)
        return took / planned if planned > 0 and took > 0 else 1.0

    def seconds_left(self, now: float | None = None) -> float | None:
        """The estimated seconds until the last group finishes (module docstring)."""
        if self.estimates is None:
            return None
        now = (self.clock() if now is None else now) - self.started
        scale = self.correction()
        free, waiting = [], []
        for i, estimate in enumerate(self.estimates):
            if i in self.finished:
                continue
            start = self._start_of(i)
            if start is None:
                waiting.append(estimate * scale)
            else:
                free.append(max(now, start + estimate * scale))
        free += [now] * (self.workers - len(free))
        return max(0.0, finish_time(waiting, self.workers, free) - now)

    # ------------------------------------------------------------------ events
    def group_done(self, index: int) -> None:
        with self._lock:
            if index in self.finished:
                return
            at = self.clock() - self.started
            self.finished[index] = at
            self._order.append(at)
            if self.tty:
                self._draw()

    def line(self) -> str:
        """The progress line (module docstring), without a bar."""
        now = self.clock()
        left = self.seconds_left(now)
        groups = len(self.sizes)
        text = (f"{self.runs_done()}/{self.total_runs} runs, {len(self.finished)}/{groups} groups done, "
                f"{len(self.running())} running, {clock_text(now - self.started)} elapsed, ")
        return text + ("no estimate of the time left" if left is None else f"about {clock_text(left)} left")

    def _bar(self) -> str:
        filled = int(_BAR * self.runs_done() / self.total_runs) if self.total_runs else _BAR
        return "[" + "#" * filled + "-" * (_BAR - filled) + "] "

    def _draw(self) -> None:
        self.stream.write("\r" + self._bar() + self.line() + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    def refresh(self) -> None:
        """Redraw the bar (terminal), or print a plain line when ``interval`` has passed."""
        with self._lock:
            if self.tty:
                self._draw()
                return
            now = self.clock()
            if self._last_plain is None or now - self._last_plain >= self.interval:
                self._last_plain = now
                self.log("training: " + self.line())

    def write(self, message: str) -> None:
        """``message`` on a line of its own, above the bar."""
        with self._lock:
            if not self.tty:
                self.log(message)
                return
            if self._drawn:
                self.stream.write("\r\x1b[K")
            print(message, file=self.stream, flush=True)
            self._draw()

    # ------------------------------------------------------------------ lifetime
    def start(self) -> TrainingProgress:
        """Show the line, and keep it fresh from a background thread every ``interval``."""
        self.refresh()

        def tick() -> None:
            while not self._stop.wait(self.interval):
                self.refresh()

        self._ticker = threading.Thread(target=tick, name="flcore-progress", daemon=True)
        self._ticker.start()
        return self

    def close(self) -> None:
        """Stop the thread and leave the last line (a plain line, or the bar and a newline)."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            if self.tty:
                self._draw()
                self.stream.write("\n")
                self.stream.flush()
            else:
                self.log("training: " + self.line())
