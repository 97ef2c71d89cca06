"""The Ray executor: groups of runs as Ray tasks on a cluster (``--executor ray``).

Each group of :func:`flcore.executors.groups.group_runs` becomes one Ray task with the
resources it asks for (``num_cpus`` = ``cpus_per_run``, ``num_gpus`` = ``gpus_per_run``;
the runs of a group are trained together as one batched computation on them).  The driver yields each
group's results as its task ends, so the caller can show one progress bar over all runs.

**The store stays the single truth, on a shared filesystem.**  Workers write their runs
straight into the driver's run store (the same absolute path on every node, e.g. NFS),
through the store's atomic writes, holding each run's lock
(:func:`flcore.store.run_lifecycle`).  Nothing but small result dicts travels back
to the driver.  This is what makes faults cheap: a worker killed mid-run is retried by Ray
(``max_retries``, system failures only) and the retry resumes the run from its last
checkpoint, and since every random draw derives from ``(seed, purpose, round, client)``,
its final record equals an uninterrupted run's.  A task whose node cannot see the store
fails its runs with an error naming the path.  A run that raises is recorded ``failed``
with its traceback by :func:`~flcore.executors.groups.train_specs` and the other tasks go
on; Ray does not retry it (``retry_exceptions=False``): the same code on the same config
would raise again.

Ray is imported only here, and only when this executor runs: ``pip install
"flcore[cluster]"`` installs it, and :func:`import_ray` says so when it is missing.
"""
from __future__ import annotations

import logging
import socket
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from flcore.executors.groups import failed_group, train_specs
from flcore.planning.spec import RunSpec

INSTALL_HINT = 'the Ray executor needs Ray; install it with: pip install "flcore[cluster]"'


class ExecutorError(RuntimeError):
    """The executor cannot start (Ray missing, cluster unreachable or without the resources)."""


def import_ray():
    """``import ray``, or an :class:`ExecutorError` saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ExecutorError(f"{INSTALL_HINT} ({exc})") from None
    return ray


def _train_group_task(specs: list[RunSpec], store: str, overrides: dict[str, Any],
                      threads: int | None) -> list[dict[str, Any]]:
    """Body of the Ray task (module level, so workers import it from flcore)."""
    return train_specs(specs, store, overrides, threads)


class RayExecutor:
    """Train groups as Ray tasks; see the module docstring.

    ``address``: ``"auto"`` (the cluster this machine belongs to), ``"HOST:PORT"`` (the head
    node's GCS address), or ``None`` (``$RAY_ADDRESS``, else a Ray instance started on this
    machine for the call).  ``gpus_per_run``: GPUs per task (fractions share a GPU); ``None``
    means 1 on a cluster that has GPUs when the device is ``auto`` or ``cuda``, else 0.
    """

    name = "ray"

    def __init__(self, address: str | None = None, gpus_per_run: float | None = None,
                 cpus_per_run: float = 1, max_retries: int = 3, device: str = "auto") -> None:
        if gpus_per_run is not None and gpus_per_run < 0:
            raise ValueError(f"gpus_per_run must be >= 0, got {gpus_per_run}")
        if cpus_per_run <= 0:
            raise ValueError(f"cpus_per_run must be > 0, got {cpus_per_run}")
        if device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda with the Ray executor (Ray picks the GPU), "
                             f"got {device!r}")
        if device == "cpu" and gpus_per_run:
            raise ValueError("gpus_per_run must be 0 with device cpu")
        self.address = address
        self.gpus_per_run = gpus_per_run
        self.cpus_per_run = cpus_per_run
        self.max_retries = max_retries
        self.device = device
        self._ray = None
        self._started_here = False

    def planning_workers(self, runs: int) -> int:
        """How many groups at least the planner should make of a batchable set of ``runs``:
        one per task the cluster can run at once (its CPUs over ``cpus_per_run``)."""
        if self._ray is None:
            return 1
        cpus = self._ray.cluster_resources().get("CPU", 1)
        return max(1, min(runs, int(cpus // self.cpus_per_run)))

    def describe(self, groups: int) -> str:
        return f"Ray at {self.address or 'the default address'}"

    def connect(self):
        """Join the cluster (once); returns the ``ray`` module."""
        ray = import_ray()
        if not ray.is_initialized():
            _check_reachable(self.address)
            try:
                ray.init(address=self.address, logging_level=logging.WARNING, log_to_driver=False,
                         include_dashboard=False, configure_logging=True)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorError(f"cannot connect to Ray at {self.address or 'the default address'}: "
                                    f"{str(exc).splitlines()[0]}") from None
            self._started_here = True
        self._ray = ray
        return ray

    def shutdown(self) -> None:
        """Leave the cluster if :meth:`connect` joined it."""
        if self._ray is not None and self._started_here:
            self._ray.shutdown()
            self._started_here = False

    def gpus(self, ray) -> float:
        """GPUs per task, checked against what the cluster has."""
        available = ray.cluster_resources().get("GPU", 0)
        gpus = self.gpus_per_run
        if gpus is None:
            gpus = 1 if available and self.device != "cpu" else 0
        if gpus > available:
            raise ExecutorError(f"gpus_per_run={gpus:g} but the Ray cluster has {available:g} GPU(s)")
        if self.device == "cuda" and not gpus:
            raise ExecutorError("device cuda needs gpus_per_run > 0 with the Ray executor")
        return gpus

    def map_groups(self, groups: Sequence[Sequence[RunSpec]], store: str,
                   overrides: dict[str, Any]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
        """Submit every group as a task; yields ``(group index, results)`` as tasks end."""
        ray = self._ray or self.connect()
        gpus = self.gpus(ray)
        store = str(Path(store).expanduser().resolve())
        Path(store).mkdir(parents=True, exist_ok=True)
        overrides = dict(overrides)
        if overrides.get("data_root"):  # workers do not share the driver's working directory
            overrides["data_root"] = str(Path(overrides["data_root"]).expanduser().resolve())
        threads = None if gpus else max(1, int(self.cpus_per_run))
        task = ray.remote(_train_group_task).options(
            num_cpus=self.cpus_per_run, num_gpus=gpus, max_retries=self.max_retries, retry_exceptions=False)
        pending = {task.remote(list(group), store, overrides, threads): i for i, group in enumerate(groups)}
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    index = pending.pop(ref)
                    try:
                        results = ray.get(ref)
                    except Exception as exc:  # noqa: BLE001 - a failed task fails its group only
                        results = failed_group(groups[index], overrides, _task_error(exc), traceback.format_exc())
                    yield index, results
        finally:
            for ref in pending:  # the driver stopped early: do not leave tasks running
                ray.cancel(ref, force=True)


def _check_reachable(address: str | None, timeout: float = 10) -> None:
    """Fail fast on a ``HOST:PORT`` nobody answers at (Ray itself retries for minutes)."""
    if not address or address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ExecutorError(f"address must be auto or HOST:PORT, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ExecutorError(f"cannot reach a Ray cluster at {address}: {exc.strerror or exc}") from None


def _task_error(exc: Exception) -> str:
    cause = getattr(exc, "cause", None)
    shown = cause if isinstance(cause, BaseException) else exc
    text = str(shown).strip().splitlines()
    return f"{type(shown).__name__}: {text[-1] if text else ''}"[:500]
