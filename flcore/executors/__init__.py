"""Where the missing runs of ``flcore reproduce`` are trained: executors of groups of runs.

An executor has ``describe(groups) -> str`` and ``map_groups(groups, store, overrides)``,
which trains every group (:mod:`flcore.executors.groups`) and yields ``(group index,
[result dict per run])`` as groups finish.  ``local`` (:mod:`.local`, the default) trains
on this machine; ``ray`` (:mod:`.ray_executor`) hands the groups to a Ray cluster.
"""
from __future__ import annotations

from flcore.executors.groups import group_runs, train_specs
from flcore.executors.local import LocalExecutor
from flcore.executors.ray_executor import RayExecutor

#: The executors :func:`make_executor` makes.
EXECUTORS = ("local", "ray")


def make_executor(name: str = "local", *, workers: int | None = None, device: str = "auto",
                  address: str | None = None, gpus_per_run: float | None = None):
    """The executor called ``name`` (one of :data:`EXECUTORS`)."""
    if name == "local":
        return LocalExecutor(workers=workers, device=device)
    if name == "ray":

        return RayExecutor(address=address, gpus_per_run=gpus_per_run, device=device)
    raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {name!r}")


__all__ = ["EXECUTORS", "LocalExecutor", "group_runs", "make_executor", "train_specs"]
