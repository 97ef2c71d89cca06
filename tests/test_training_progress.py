"""The live training line and the estimate of the time left: a fake clock replays the
executor's pool (groups started in order, each on the worker free soonest)."""
from __future__ import annotations

import io
import re

import pytest

from flcore.reproduction.progress import TrainingProgress, clock_text, finish_time


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0  # any origin: only differences count

    def __call__(self) -> float:
        return self.now


def replay(durations: list[float], workers: int) -> list[tuple[float, int]]:
    """(finishing time, group index) of groups of ``durations`` started in order on
    ``workers`` workers, each on the worker free soonest -- what the pool does."""
    free = [0.0] * workers
    events = []
    for index, seconds in enumerate(durations):
        soonest = free.index(min(free))
        free[soonest] += seconds
        events.append((free[soonest], index))
    return sorted(events)


def test_clock_text():
    assert clock_text(0) == "0:00" and clock_text(61.4) == "1:01" and clock_text(3723) == "1:02:03"


def test_finish_time_is_the_last_worker_of_the_schedule_by_hand():
    # worker 1: 10, then 2 -> 12; worker 2: 6, then 4 -> 10
    assert finish_time([10, 6, 4, 2], 2) == 12
    assert finish_time([10, 6, 4, 2], 1) == 22
    assert finish_time([3], 4) == 3 and finish_time([], 2) == 0
    assert finish_time([5], 2, free=[4.0, 1.0]) == 6  # on the worker free at 1


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_when_groups_take_their_estimates_elapsed_plus_left_stays_the_first_estimate(workers):
    estimates = [30.0, 22.0, 17.0, 9.0, 8.0, 5.0, 2.0]
    clock = FakeClock()
    line = TrainingProgress(estimates, [3] * len(estimates), workers, stream=io.StringIO(), clock=clock, tty=False)
    first = line.seconds_left()
    assert first == pytest.approx(finish_time(estimates, workers))
    start = clock.now
    for at, index in replay(estimates, workers):
        clock.now = start + at
        line.group_done(index)
        assert at + line.seconds_left() == pytest.approx(first)
    assert line.seconds_left() == 0 and line.runs_done() == 21


def test_groups_twice_as_slow_as_estimated_are_foreseen_from_the_first_finished_group():
    estimates = [12.0, 10.0, 6.0, 6.0, 4.0, 1.0]
    clock = FakeClock()
    line = TrainingProgress(estimates, [1] * 6, 2, stream=io.StringIO(), clock=clock, tty=False)
    assert line.seconds_left() == pytest.approx(finish_time(estimates, 2))  # 20 s
    real = [2 * s for s in estimates]
    start = clock.now
    events = replay(real, 2)
    for at, index in events:
        clock.now = start + at
        line.group_done(index)
        # every group so far took twice its estimate: the rest is foreseen at that pace
        assert at + line.seconds_left() == pytest.approx(2 * finish_time(estimates, 2))
    assert events[-1][0] == pytest.approx(40.0)


def test_a_running_group_past_its_estimate_counts_as_about_to_finish():
    clock = FakeClock()
    line = TrainingProgress([10.0, 10.0], [1, 1], 2, stream=io.StringIO(), clock=clock, tty=False)
    clock.now += 14
    assert line.seconds_left() == 0 and line.running() == [0, 1]


@pytest.fixture(scope="module")
def small_book_plan():
    """The small book's groups as the book plans them on 2 workers: their estimated seconds
    from the reference rows, longest first."""
    from pathlib import Path

    from flcore.executors import LocalExecutor
    from flcore.reproduction.book_runs import book_specs
    from flcore.reproduction.budget import load_device_rates
    from flcore.reproduction.calibration import reference_rates
    from flcore.reproduction.estimate import Rates
    from flcore.reproduction.runner import missing_runs, plan_training
    from flcore.store import RunStore

    root = Path(__file__).resolve().parents[1]
    rates = Rates(reference_rates(load_device_rates(root / "benchmarks" / "results"), "CPU, 2 cores"), "rows")
    overrides = {"device": "cpu", "data_root": None, "download": None, "max_rounds": None}
    todo, done = missing_runs(book_specs("small", root), RunStore(root / "no-such-store"), overrides)
    groups, seconds = plan_training(todo, done, overrides, "cpu", LocalExecutor(workers=2, device="cpu"), rates)
    return [len(g) for g in groups], seconds


def test_the_small_book_on_a_machine_slower_than_the_rows_is_foreseen_after_its_first_group(small_book_plan):
    # the machine: FedASAM's group of 22 runs took 320 s where the rows say 195 s
    sizes, estimates = small_book_plan
    assert len(sizes) > 100 and estimates == sorted(estimates, reverse=True)
    slower = 320 / 195
    clock = FakeClock()
    line = TrainingProgress(estimates, sizes, 2, stream=io.StringIO(), clock=clock, tty=False)
    assert line.seconds_left() == pytest.approx(finish_time(estimates, 2))
    start = clock.now
    events = replay([slower * s for s in estimates], 2)
    for at, index in events:
        clock.now = start + at
        line.group_done(index)
        assert at + line.seconds_left() == pytest.approx(events[-1][0])
    assert line.runs_done() == sum(sizes)


def test_the_small_book_with_uneven_groups_is_foreseen_closer_as_groups_finish(small_book_plan):
    sizes, estimates = small_book_plan
    # each group off its estimate by -30 % to +50 %, the machine 1.3 times slower overall
    real = [s * 1.3 * (1 + 0.2 * ((7 * i) % 5 - 2) / 2 + 0.1 * (i % 2)) for i, s in enumerate(estimates)]
    clock = FakeClock()
    line = TrainingProgress(estimates, sizes, 2, stream=io.StringIO(), clock=clock, tty=False)
    events = replay(real, 2)
    end = events[-1][0]
    start = clock.now
    first_error = abs(line.seconds_left() - end) / end
    errors = []
    for at, index in events[:-1]:
        clock.now = start + at
        line.group_done(index)
        errors.append(abs(at + line.seconds_left() - end) / end)
    assert first_error > 0.2  # the rows alone are off by the machine's speed
    half = len(errors) // 2
    assert max(errors[half:]) < 0.05  # from half-way on, within 5 % of the end


def test_the_plain_line_when_the_stream_is_not_a_terminal():
    clock = FakeClock()
    out = io.StringIO()
    line = TrainingProgress([10.0, 6.0, 4.0, 2.0], [5, 3, 1, 1], 2, stream=out, clock=clock, tty=False, interval=30)
    line.refresh()
    assert out.getvalue() == "training: 0/10 runs, 0/4 groups done, 2 running, 0:00 elapsed, about 0:12 left\n"
    clock.now += 6
    line.group_done(1)
    line.refresh()  # within the interval: nothing more
    assert out.getvalue().count("\n") == 1
    clock.now += 24
    line.refresh()
    last = out.getvalue().splitlines()[-1]
    # groups 0 and 2 are past their estimates (counted as ending now); group 3 waits: 2 s
    assert last == "training: 3/10 runs, 1/4 groups done, 2 running, 0:30 elapsed, about 0:02 left"
    line.write("  {'seed': 1} -> failed: boom")
    line.close()
    lines = out.getvalue().splitlines()
    assert lines[-2] == "  {'seed': 1} -> failed: boom"
    assert re.fullmatch(r"training: 3/10 runs, 1/4 groups done, 2 running, 0:30 elapsed, about \d+:\d\d left",
                        lines[-1])
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()


def test_the_bar_is_redrawn_in_place_on_a_terminal():
    clock = FakeClock()
    out = io.StringIO()
    line = TrainingProgress([4.0, 4.0], [2, 2], 1, stream=out, clock=clock, tty=True)
    line.refresh()
    clock.now += 4
    line.group_done(0)
    draws = out.getvalue().split("\r")[1:]
    assert draws[0].startswith("[--------------------] 0/4 runs") and "about 0:08 left" in draws[0]
    assert draws[-1].startswith("[##########----------] 2/4 runs, 1/2 groups done, 1 running, 0:04 elapsed")
    assert "\n" not in out.getvalue()
    line.close()
    assert out.getvalue().endswith("\n")


def test_without_an_estimate_the_line_says_so():
    line = TrainingProgress(None, [1, 2], 2, stream=io.StringIO(), clock=FakeClock(), tty=False)
    assert line.seconds_left() is None
    assert line.line().endswith("0:00 elapsed, no estimate of the time left")
