"""The local executor: groups of runs trained on this machine (``--executor local``, the default).

Several groups at a time in spawned worker processes on a CPU, one thread each (on a
shared two-core machine two single-threaded runs finish sooner than two two-threaded
runs in a row); one group at a time in this process on a GPU or with one worker.  Ctrl-C,
SIGTERM or SIGHUP stops the workers and marks their runs interrupted
(:mod:`flcore.planning.workers`).
"""
from __future__ import annotations

import traceback
from collections.abc import Iterator, Sequence
from concurrent.futures import as_completed
from typing import Any

from flcore.executors.groups import failed_group, train_specs
from flcore.planning import RunSpec, default_workers
from flcore.planning.workers import submit, worker_pool


class LocalExecutor:
    """Train groups on this machine; see the module docstring."""

    name = "local"

    def __init__(self, workers: int | None = None, device: str = "auto") -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers = workers
        self.device = device

    def _workers(self, groups: int) -> int:
        return self.workers or default_workers(self.device, groups)

    def pool_size(self, groups: int) -> int:
        """Worker processes that train ``groups`` groups (they start in the order given,
        each on the worker free soonest)."""
        return self._workers(groups)

    def planning_workers(self, runs: int) -> int:
        """How many groups at least the planner should make of a batchable set of ``runs``."""
        return self._workers(runs)

    def describe(self, groups: int) -> str:
        return f"{self._workers(groups)} worker(s)"

    def map_groups(self, groups: Sequence[Sequence[RunSpec]], store: str,
                   overrides: dict[str, Any]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
        """Train every group; yields ``(group index, results)`` as groups finish."""
        n_workers = self._workers(len(groups))
        if n_workers == 1:
            for index, group in enumerate(groups):
                yield index, _guarded(group, store, overrides, None)
            return

        def submit_all(pool):
            return {submit(pool, train_specs, group, store, overrides, 1): i for i, group in enumerate(groups)}

        with worker_pool(n_workers, submit_all=submit_all) as (_, futures):
            for future in as_completed(futures):
                index = futures[future]
                try:
                    yield index, future.result()
                except Exception as exc:  # noqa: BLE001 - a dead worker fails its group only
                    yield index, failed_group(groups[index], overrides, f"{type(exc).__name__}: {exc}",
                                              traceback.format_exc())


def _guarded(group, store, overrides, threads) -> list[dict[str, Any]]:
    try:
        return train_specs(group, store, overrides, threads)
    except Exception as exc:  # noqa: BLE001 - reported per run
        return failed_group(group, overrides, f"{type(exc).__name__}: {exc}", traceback.format_exc())
