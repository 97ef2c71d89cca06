"""Which runs may train as one computation, and training such a group.

R runs of K clients train as one ``[R*K, P]`` batch of clients.  Runs that share a model
and a protocol shape (data set, model, clients per round, local steps, rounds,
evaluation schedule, method) and differ in their seed, their partition or the values of
some hyper-parameters train together.  Each run keeps everything that
makes it *that* run -- its own :class:`~flcore.Simulation` (global model, server and
client state, lr schedule, run record), its own client sampling and batch plans drawn
from ``(seed, purpose, round, client)`` -- and only the clients' local training, the
bulk of the compute, is one computation over the ``R*K`` clients of a round:

- every row of the batch gets its run's start point, global model, broadcast vectors,
  client-state rows and learning rate (a per-row column where runs differ);
- the training sets of the runs are concatenated and each run's batch indices shifted
  by its offset, so one gather serves every run;
- hyper-parameters that differ between the runs of a group (``rho``, ``eta``, ``mu``;
  ``lr`` through the schedules) become per-row columns of the parts that use them.

Local training of a client is a pure function of these inputs, so each run's numbers
equal what it gives alone, to float tolerance (``tests/test_multi_run.py`` checks every
method family).  The batch's gradients come from the engine the runs' model and device
resolve to (:func:`flcore.sim.engine.resolve_engine`): one ``vmap`` over the ``R*K`` rows,
or, for the image models on a CPU, a loop over them, ten times faster there.
The rounds are driven by :class:`flcore.sim.round_driver.RoundDriver`, the driver of a
run alone too (the merging of per-run values is :mod:`flcore.sim.run_axis`): the server
step, evaluation, checkpoints and metrics stay per run, so a run trained in a group has
the same record, run id and resume semantics as one trained alone, and a run
interrupted inside a group resumes from its own checkpoint.

Methods whose client parts cannot take per-row inputs (they read the global model or
the broadcast as one vector, or keep a non-row-wise scratch) are not in
:func:`run_batchable`; the planner gives each of their runs a group of its own.
"""
from __future__ import annotations

import torch

from flcore.config import PARTITION_FIELDS
from flcore.sim.engine import Simulation
from flcore.sim.federated_data import build_federated_data
from flcore.sim.round_driver import RoundDriver
from flcore.sim.run_axis import merge_parts, merge_per_run

__all__ = ["COLUMN_FIELDS", "RUN_FIELDS", "group_key", "merge_parts", "merge_per_run", "run_batchable",
           "run_group"]

#: Every method's local training takes per-row inputs, so clients of different runs can
#: share one batch (checked against runs alone, per family, in tests/test_multi_run.py) --
#: FedFA is the exception: its server broadcasts class anchors ``[C, d]`` that its client
#: parts read as one matrix for the whole chunk.
NOT_RUN_BATCHABLE = frozenset({"fedfa", "fedfa+ima"})


def run_batchable(method: str) -> bool:
    return method not in NOT_RUN_BATCHABLE
#: Config fields runs of one group may differ in, whatever the method: they change
#: the data and the random draws, not the shape of the computation.
RUN_FIELDS = frozenset({"seed", "num_samples"} | {f for fs in PARTITION_FIELDS.values() for f in fs})
#: Hyper-parameters that may also differ for these methods: they become per-row columns
#: (``lr`` through ``RoundContext.lr``, the others as fields of the perturbation or
#: correction parts); methods whose parts read ``ctx.lr`` beyond the SGD step (SCAFFOLD,
#: FedCM) are not listed.
COLUMN_FIELDS = {
    "fedavg": ("lr",), "fedsam": ("lr", "rho"), "fedasam": ("lr", "rho", "eta"),
    "fedprox": ("lr", "mu"),
}


def group_key(cfg) -> tuple:
    """What runs must share to be trained as one batch: the canonical config without the
    fields that may differ between them (:data:`RUN_FIELDS`, the method's
    :data:`COLUMN_FIELDS`).  A run of a method outside :func:`run_batchable`, one that
    records probes or snapshots (:mod:`flcore.analysis.recording`), or a *timed* run (its
    round times are the measurement: a batch would record a share of a shared round) has a
    key of its own (its run id)."""
    canonical = cfg.canonical()
    if not run_batchable(cfg.method) or cfg.probes or cfg.snapshot_rounds or cfg.timed:  # these train alone
        return ("alone", cfg.run_id())
    free = RUN_FIELDS | set(COLUMN_FIELDS.get(cfg.method, ()))
    shared = {k: v for k, v in canonical.items() if k not in free}
    shared["eval_batch_size"] = cfg.eval_batch_size
    return tuple(sorted((k, repr(v)) for k, v in shared.items()))


def run_group(cfgs: list, device: torch.device, create_run=None, progress: bool = False,
              chunk_size: int | None = None, description: str = "", callbacks_for=None) -> list[dict]:
    """Train the runs of ``cfgs`` (one group, see :func:`group_key`) together; returns
    their summaries in order.  ``create_run(cfg)`` gives each run's record
    (:class:`flcore.store.Run`), called once every run's data is loaded, so missing data
    fails before any record exists; None records nothing.  A group of one run is
    trained by :class:`Simulation` itself, as ``flcore run`` would.  ``callbacks_for(sim)``
    gives each simulation's callbacks (the probes and snapshots its config records,
    :func:`flcore.analysis.recording.recording_callbacks`); None adds none."""
    keys = {group_key(cfg) for cfg in cfgs}
    if len(keys) > 1:
        raise ValueError("these runs differ in more than seed, partition and column hyper-parameters; "
                         "plan them into groups with flcore.planning.plan_groups")
    datas: dict = {}
    for cfg in cfgs:
        if _data_key(cfg) not in datas:
            datas[_data_key(cfg)] = build_federated_data(cfg, device)
    sims = [Simulation(cfg, datas[_data_key(cfg)], device, None if create_run is None else create_run(cfg),
                       chunk_size=chunk_size)
            for cfg in cfgs]
    if callbacks_for is not None:
        for sim in sims:
            sim.add_callbacks(callbacks_for(sim))
    if len(sims) == 1:
        sims[0].progress = progress
        return [sims[0].run_rounds()]
    return RoundDriver(sims, progress=progress, chunk_size=chunk_size, description=description).run_rounds()


def _data_key(cfg) -> tuple:
    """What a run's federated data depends on (its partition draws on the seed)."""
    return (cfg.dataset, cfg.data_root, cfg.num_samples, cfg.seed, cfg.partition,
            tuple(sorted(cfg.partition_args().items())), cfg.clients)
