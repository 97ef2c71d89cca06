"""Which runs may train as one computation, and training such a group.

R runs of K clients train as one ``[R*K, P]`` batch of clients.  Runs that share a model,
a data set and the shape of a local step (batch size, local epochs, augmentation) and
whose clients run the same procedure train together.  Each run keeps everything that
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
resolve to (:func:`flcore.sim.engine.resolve_engine`): the row kernel's batched matmuls
for the MNIST-1D networks on a CPU, one ``vmap`` over the ``R*K`` rows on a GPU, or, for
the image models on a CPU, a loop over them, ten times faster there than ``vmap``.
The rounds are driven by :class:`flcore.sim.round_driver.RoundDriver`, the driver of a
run alone too (the merging of per-run values is :mod:`flcore.sim.run_axis`): the server
step, evaluation, checkpoints and metrics stay per run, so a run trained in a group has
the same record, run id and resume semantics as one trained alone, and a run
interrupted inside a group resumes from its own checkpoint.

Which runs share a computation (:func:`group_key`) is read from the parts, not from
method names: runs whose built client procedures are the same parts with the same
settings -- but for the fields a part declares ``row_columns`` (SAM's and ASAM's
``rho``, ASAM's ``eta``, FedProx's ``mu``) -- and whose servers send the same kinds of
vectors (the server parts with a ``broadcast`` hook, and the probe exchange) train
together, whatever their method's name, server step, averaging or learning-rate
schedule (a per-row ``lr`` column): FedAvg, FedAvg+SWA, FedAdam and FedYogi+IMA runs
are one computation for their clients.  Runs also share a group across rounds, evaluation
schedules and clients per round: a run that has finished leaves the group's later rounds.
Methods with a part that cannot take per-row inputs (it reads the broadcast as one matrix
for the whole chunk, and declares ``trains_alone``) are not :func:`run_batchable`; the
planner gives each of their runs a group of its own.
"""
from __future__ import annotations

import dataclasses
from functools import cache, lru_cache

import torch

from flcore.algorithms import get_method
from flcore.algorithms.methods import nested_parts, probe_flat
from flcore.config import PARTITION_FIELDS, hyperparameters_of, resolve_config
from flcore.sim.engine import Simulation
from flcore.sim.federated_data import build_federated_data
from flcore.sim.round_driver import RoundDriver
from flcore.sim.run_axis import merge_parts, merge_per_run

__all__ = ["FREE_FIELDS", "client_signature", "group_key", "merge_parts", "merge_per_run", "run_batchable", "run_group"]

@cache
def run_batchable(method: str) -> bool:
    """Whether runs of ``method`` may train batched together: none of the parts of its
    client or server (built at the smoke scale) declares ``trains_alone`` (FedFA's anchors,
    one matrix its client parts read for the whole chunk of clients)."""
    cfg = resolve_config(scale="smoke", method=method)
    built = get_method(method)
    parts = (*nested_parts(built.build_client(cfg, probe_flat())), *built.build_server(cfg).parts)
    return not any(getattr(type(part), "trains_alone", False) for part in parts)


#: Config fields runs of one group may differ in, whatever their methods: they change the
#: data and the random draws (seed, partition), the rounds trained and recorded, the
#: clients sampled per round, or the learning rate (a per-row column) -- not the shape of
#: a local step.  A method's hyper-parameters may differ too where its parts allow
#: (:func:`client_signature`).
FREE_FIELDS = frozenset({"seed", "num_samples", "method", "lr", "lr_decay", "rounds", "eval_every", "eval_last",
                         "eval_last_every", "client_accuracy", "per_round", "clients"}
                        | {f for fs in PARTITION_FIELDS.values() for f in fs})


def _signature(part):
    """A part's structure and settings, its declared ``row_columns`` masked."""
    if isinstance(part, tuple):
        return tuple(_signature(p) for p in part)
    if dataclasses.is_dataclass(part) and not isinstance(part, type):
        columns = getattr(type(part), "row_columns", ())
        return (type(part).__qualname__,
                tuple((f.name, "row column" if f.name in columns else _signature(getattr(part, f.name)))
                      for f in dataclasses.fields(part) if f.compare))
    if isinstance(part, torch.Tensor):
        return ("tensor", tuple(part.shape), str(part.dtype))
    return repr(part)


@lru_cache(maxsize=1024)
def _signatures(method: str, settings: tuple) -> tuple:
    cfg = resolve_config(dict(settings))
    built = get_method(method)
    server = built.build_server(cfg)
    sends = tuple(sorted(type(p).__qualname__ for p in server.parts if hasattr(p, "broadcast")))
    return _signature(built.build_client(cfg, probe_flat())), (server.needs_probe, sends)


def client_signature(cfg) -> tuple:
    """(the client procedure's signature, the server's: its probe exchange and the kinds of
    vectors it sends) of ``cfg``'s method, built on a two-tensor probe model."""
    settings = {k: v for k, v in cfg.to_dict().items() if k not in ("seed", "device", "max_rounds")}
    return _signatures(cfg.method, tuple(sorted((k, v if not isinstance(v, list) else tuple(v))
                                               for k, v in settings.items())))


def group_key(cfg) -> tuple:
    """What runs must share to be trained as one batch: the canonical config without the
    :data:`FREE_FIELDS` and the method's hyper-parameters, plus the signatures of the
    client procedure and the server's broadcast (:func:`client_signature`).  A run of a
    method outside :func:`run_batchable`, one that records probes or snapshots
    (:mod:`flcore.analysis.recording`), or a *timed* run (its round times are the
    measurement: a batch would record a share of a shared round) has a key of its own (its
    run id)."""
    if not run_batchable(cfg.method) or cfg.probes or cfg.snapshot_rounds or cfg.timed:  # these train alone
        return ("alone", cfg.run_id())
    free = FREE_FIELDS | set(hyperparameters_of(cfg.method))
    shared = {k: v for k, v in cfg.canonical().items() if k not in free}
    shared["eval_batch_size"] = cfg.eval_batch_size
    return ("shared", tuple(sorted((k, repr(v)) for k, v in shared.items())), client_signature(cfg))


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
