"""Plan many runs into groups trained as one computation, and train a group.

:func:`plan_groups` takes run requests (:class:`~flcore.planning.spec.RunSpec` s,
config dicts or resolved configs), removes duplicates (two requests with one run id are
one run, whichever artifact or paper asks), sorts the rest by
:func:`flcore.sim.multi_run.group_key` -- runs that may share a batch: same model and
protocol shape, differing in seed, partition or a method's column hyper-parameters -- and
cuts each set into :class:`RunGroup` s that fit the device's memory.  On a CPU with
several worker processes a group that costs well over one worker's share of the whole is
halved (two single-threaded groups on two cores finish sooner than one group on two
threads); the others stay whole, since a batch of runs costs less than its runs alone.

:func:`train_group` trains one group into a run store (each run with its own record,
checkpoints and resume) and is what a worker process, or a cluster task, executes.
"""
from __future__ import annotations

import math
import os
import time
import traceback
from collections.abc import Iterable, Sequence
from concurrent.futures import as_completed
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch

from flcore.algorithms import get_method
from flcore.analysis.recording import recording_callbacks
from flcore.api import decorate_summary
from flcore.config import DATASET_FACTS, ExperimentConfig, grad_evals_per_step, hyperparameters_of, resolve_config
from flcore.cpus import available_cpus
from flcore.devices import resolve_device
from flcore.flat import FlatModel
from flcore.models import build_model
from flcore.planning.workers import submit, worker_pool
from flcore.record_format import stop_round
from flcore.sim.multi_run import group_key, run_group
from flcore.store import StoreError, run_lifecycle
from flcore.store.errors import full_path, is_disk_full

#: Most runs in one group: past this the batch gains nothing on the machines measured
#: (``benchmarks/sweep_time.py``) and a failure costs more runs.
DEFAULT_MAX_RUNS = 32
#: Fraction of the device's memory a group may plan to use (the rest: the data, the
#: allocator's slack, other processes).
MEMORY_FRACTION = 0.5


@dataclass(frozen=True)
class RunGroup:
    """Runs trained together: their config values (as given, device etc. applied at
    training time), run ids and labels (one dict per run; empty for plain configs)."""

    configs: tuple[dict, ...]
    run_ids: tuple[str, ...]
    labels: tuple[dict, ...]

    @property
    def size(self) -> int:
        return len(self.configs)

    @property
    def method(self) -> str:
        return self.configs[0]["method"]

    def describe(self) -> str:
        first = self.configs[0]
        return f"{first['method']}/{first.get('dataset') or 'default'} x{self.size}"


def _request(item: Any) -> tuple[dict, dict]:
    """(config values, labels) of a RunSpec, a config dict or an ExperimentConfig."""
    if isinstance(item, ExperimentConfig):
        return item.to_dict(), {}
    if isinstance(item, dict):
        return dict(item), {}
    return dict(item.config), dict(item.labels)


def _resolve(values: dict, overrides: dict | None) -> ExperimentConfig:
    merged = {**values, **{k: v for k, v in (overrides or {}).items() if v is not None}}
    return resolve_config(merged)


def bytes_per_run(cfg: ExperimentConfig) -> int:
    """Memory one run adds to a group: per client of a round, about a dozen model-sized
    vectors (iterate, start, global model, gradient, perturbation, momentum, the parts'
    state rows and scratch) plus a step's activations, and the run's per-client state
    tables (one row per client of the federation).  The training set is not counted:
    runs of one data set share it (:func:`data_bytes`)."""

    input_shape, _ = _input_shape(cfg)
    params, model_tables = _model_sizes(cfg)
    activations = cfg.batch_size * math.prod(input_shape) * 4 * 64  # forward + backward of a conv net, generous
    state = model_tables * params * 4 * cfg.clients
    return cfg.per_round * (12 * params * 4 + activations) + state


#: The kinds of a method's per-client state tables, by method and its hyper-parameters: a
#: plan of the whole book asks for the same few a thousand times.
_TABLE_KINDS: dict[tuple, tuple[str, ...]] = {}


def client_table_kinds(cfg: ExperimentConfig) -> tuple[str, ...]:
    """The kinds of ``cfg``'s method's per-client state tables (``"zeros"`` and ``"model"``
    are model-sized), from the method's client built around a two-tensor probe model:
    which tables exist depends on the method's parts, not on the model."""
    method = get_method(cfg.method)
    key = (cfg.method, tuple(repr(getattr(cfg, name, None)) for name in hyperparameters_of(cfg.method)))
    if key not in _TABLE_KINDS:
        _TABLE_KINDS[key] = tuple(method.build_client(cfg, FlatModel(torch.nn.Linear(3, 2)))
                                  .client_state_spec().values())
    return _TABLE_KINDS[key]


def _model_sizes(cfg: ExperimentConfig) -> tuple[int, int]:
    """(parameters of ``cfg``'s model, counted on the ``meta`` device; model-sized
    per-client state tables of its method)."""
    tables = sum(kind in ("zeros", "model") for kind in client_table_kinds(cfg))
    return model_parameters(cfg.model, cfg.dataset), tables


@lru_cache(maxsize=64)
def model_parameters(model: str, dataset: str) -> int:
    """Parameters of ``model`` built for ``dataset``, counted on the ``meta`` device."""
    input_shape, num_classes = DATASET_FACTS[dataset][:2]
    with torch.device("meta"):
        module = build_model(model, input_shape, num_classes)
    return sum(p.numel() for p in module.parameters())


def data_bytes(cfg: ExperimentConfig) -> int:
    """The training set of a run, held once per group on the device."""
    input_shape, _ = _input_shape(cfg)
    return (cfg.num_samples or 50_000) * math.prod(input_shape) * 4


def _input_shape(cfg: ExperimentConfig) -> tuple[tuple[int, ...], int]:

    shape, classes, _ = DATASET_FACTS[cfg.dataset]
    return shape, classes


def device_memory(device: str) -> int:
    """Bytes of memory of ``device`` (GPU memory, or the machine's RAM for the CPU)."""

    dev = resolve_device(device)
    if dev.type == "cuda":
        return torch.cuda.get_device_properties(dev).total_memory
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def default_workers(device: str, groups: int) -> int:
    """One worker per core on a CPU (at most one per group); one on an accelerator."""
    if resolve_device(device).type != "cpu":
        return 1
    return max(1, min(available_cpus(), groups))


def _split(items: list, parts: int) -> list[list]:
    """``items`` in ``parts`` contiguous slices of sizes differing by at most one."""
    parts = max(1, min(parts, len(items)))
    size, extra = divmod(len(items), parts)
    out, lo = [], 0
    for i in range(parts):
        hi = lo + size + (1 if i < extra else 0)
        out.append(items[lo:hi])
        lo = hi
    return out


def _cost(members: list) -> float:
    return sum(run_cost(cfg) for _, _, _, cfg in members)


#: A group may cost this many workers' shares before it is halved: a batch trains its runs
#: in less time than they take one by one (``benchmarks/sweep_time.py`` on 2 CPU cores:
#: 6 runs batched at 0.43 of their time alone), so a somewhat long batch still finishes
#: with the other workers.
BATCH_SLACK = 1.5


def _balanced(chunks: list[tuple[float, list]], workers: int) -> list[tuple[float, list]]:
    """Halve the costliest group of several runs while it costs more than
    :data:`BATCH_SLACK` workers' shares of the whole, or while there are fewer groups than
    workers: every worker gets work, and runs stay batched as far as the balance allows."""
    if workers <= 1:
        return chunks
    share = BATCH_SLACK * sum(cost for cost, _ in chunks) / workers
    chunks = list(chunks)
    while True:
        splittable = sorted((item for item in chunks if len(item[1]) > 1), key=lambda item: -item[0])
        if not splittable or (splittable[0][0] <= share and len(chunks) >= workers):
            return chunks
        chunks.remove(splittable[0])
        chunks.extend((_cost(half), half) for half in _split(splittable[0][1], 2))


def plan_groups(requests: Iterable[Any], device: str = "auto", overrides: dict | None = None,
                max_runs: int | None = None, workers: int = 1) -> list[RunGroup]:
    """Deduplicated requests as :class:`RunGroup` s (module docstring), largest cost first.

    ``max_runs`` caps a group (default: what fits in :data:`MEMORY_FRACTION` of the
    device's memory, at most :data:`DEFAULT_MAX_RUNS`); with ``workers`` > 1 a group is halved
    while it costs more than :data:`BATCH_SLACK` workers' shares or there are fewer groups
    than workers.
    """
    overrides = {"device": device, **(overrides or {})}
    chosen: dict[str, tuple[dict, dict, ExperimentConfig]] = {}
    for item in requests:
        values, labels = _request(item)
        cfg = _resolve(values, overrides)
        rid = cfg.run_id()
        if rid not in chosen or records_more(cfg, chosen[rid][2]):
            chosen[rid] = (values, labels, cfg)  # a replaced request keeps the first one's place
    sets: dict[tuple, list[tuple[dict, str, dict, ExperimentConfig]]] = {}
    for rid, (values, labels, cfg) in chosen.items():
        sets.setdefault(group_key(cfg), []).append((values, rid, labels, cfg))
    budget = device_memory(device) * MEMORY_FRACTION
    chunks: list[tuple[float, list]] = []
    for members in sets.values():
        cfg = members[0][3]
        room = budget - data_bytes(cfg)
        cap = max_runs or max(1, min(DEFAULT_MAX_RUNS, int(room // max(1, bytes_per_run(cfg)))))
        chunks.extend((_cost(chunk), chunk) for chunk in _split(members, math.ceil(len(members) / cap)))
    chunks = _balanced(chunks, workers)
    groups: list[tuple[float, RunGroup]] = []
    for cost, chunk in chunks:
        group = RunGroup(configs=tuple(v for v, _, _, _ in chunk), run_ids=tuple(r for _, r, _, _ in chunk),
                         labels=tuple(lab for _, _, lab, _ in chunk))
        groups.append((cost, group))
    groups.sort(key=lambda item: -item[0])
    return [g for _, g in groups]


def records_more(cfg: ExperimentConfig, other: ExperimentConfig) -> bool:
    """Whether ``cfg`` asks its run (the same run id as ``other``'s) to record more than
    ``other`` does: the clients' training accuracy, which is not part of the run id.  Of
    two requests for one run, the one that records more is trained, so that each page
    finds what it reads."""
    return bool(cfg.client_accuracy) and not other.client_accuracy


def run_cost(cfg: ExperimentConfig, rounds_done: int = 0) -> float:
    """Gradient evaluations of a run's clients: rounds x clients x steps x evaluations per
    step, over the rounds still to train (from ``rounds_done`` to the config's cap, or to
    its last round)."""

    steps = cfg.local_steps
    if steps is None:
        samples = cfg.num_samples or DATASET_FACTS.get(cfg.dataset, (None, None, None))[2] or 50_000
        per_client = cfg.samples_per_client or samples / max(1, cfg.clients)
        steps = cfg.local_epochs * math.ceil(per_client / cfg.batch_size)
    rounds = max(0, stop_round(cfg) - rounds_done)
    return float(rounds * cfg.per_round * steps * grad_evals_per_step(cfg.method))


def train_group(group: RunGroup, store: str | os.PathLike | None, overrides: dict | None = None,
                progress: bool = False, chunk_size: int | None = None, *,
                record_failures: bool = False) -> list[dict[str, Any]]:
    """Train the runs of ``group`` that the store does not hold finished, together.

    Returns one dict per run of the group, in order: ``run_id``, ``status`` (finished,
    diverged, capped or failed), ``error`` and ``seconds`` (the group's training time,
    shared by its runs).  A run already finished or diverged in the store, or capped at the
    ``max_rounds`` of ``overrides`` or beyond, is returned as it is (``reused`` true); a
    failure (missing data, a bug) fails the runs of the group, not the caller (``error``
    and ``traceback``).  ``record_failures``: a failed run is also stored with status
    ``failed``, its error and traceback (what the executors ask for), while its lock is held.

    One writer per run: the group trains inside :func:`flcore.store.run_lifecycle` --
    holding the run-directory lock of each of its runs (the lock ``flcore run`` takes too),
    so another process asking for one of them waits and then finds it finished; the run
    folders it created and recorded nothing in are removed before the locks are released.
    """
    started = time.perf_counter()
    try:
        cfgs = [_resolve(values, overrides) for values in group.configs]
    except Exception as exc:  # noqa: BLE001 - a bad config fails its group, not the caller
        return _failed(group, exc, started, {})
    if store is None or not group.run_ids:
        return _train_cfgs(group, cfgs, None, progress, chunk_size, started)
    ids = [*group.run_ids, *(cfg.run_id() for cfg in cfgs)]  # one and the same unless a caller named them
    with run_lifecycle(store, ids) as life:
        results = _train_cfgs(group, cfgs, life, progress, chunk_size, started)
        if record_failures:
            for cfg, result in zip(cfgs, results):
                if result["status"] == "failed":
                    life.record_failure(cfg, result["error"], result.get("traceback"))
        return results


def _failed(group: RunGroup, exc: BaseException, started: float, results: dict) -> list[dict[str, Any]]:
    """The group's result dicts after ``exc``: the runs not done yet failed with its error."""
    error = f"{type(exc).__name__}: {exc}"
    if is_disk_full(exc):  # the runs stay resumable from their last checkpoints
        error = (f"no space left on the device writing {full_path(exc)}; free space and run the same command "
                 "again to resume from the last checkpoints")
    seconds = time.perf_counter() - started
    trace = traceback.format_exc()
    return [results.get(rid, {"run_id": rid, "status": "failed", "error": error, "seconds": seconds,
                              "summary": None, "reused": False, "traceback": trace}) for rid in group.run_ids]


def _finished(life, cfg: ExperimentConfig) -> dict[str, Any] | None:
    """``life.finished(cfg)``, None when the record cannot be read (training repairs or reports it)."""
    try:
        return life.finished(cfg)
    except (StoreError, OSError):
        return None


def _train_cfgs(group: RunGroup, cfgs: list[ExperimentConfig], life, progress: bool,
                chunk_size: int | None, started: float) -> list[dict[str, Any]]:
    """Train ``cfgs`` (``group``'s resolved configs) under ``life`` (None: no store)."""
    results: dict[str, dict[str, Any]] = {}
    try:
        todo_cfgs = []
        for cfg in cfgs:
            rid = cfg.run_id()
            found = _finished(life, cfg) if life is not None else None
            if found is not None:  # finished, diverged or capped at its cap or beyond; its record checks out
                found = decorate_summary(found, cfg, life.store.run(rid))
                results[rid] = {"run_id": rid, "status": found["status"], "error": None, "seconds": 0.0,
                                "summary": found, "reused": True, "traceback": None}
                continue
            if life is not None:  # repairs the log from the checkpoint, or says what is damaged
                life.resume_checks(life.store.run(rid), announce=False)
            todo_cfgs.append(cfg)
        if todo_cfgs:
            device = resolve_device(todo_cfgs[0].device)
            create = None if life is None else life.create
            summaries = run_group(todo_cfgs, device, create, progress=progress, chunk_size=chunk_size,
                                  description=group.describe(), callbacks_for=recording_callbacks)
            seconds = time.perf_counter() - started
            for cfg, summary in zip(todo_cfgs, summaries):
                results[cfg.run_id()] = {"run_id": cfg.run_id(), "status": summary["status"], "error": None,
                                         "seconds": seconds, "summary": summary,
                                         "reused": False, "traceback": None}
    except Exception as exc:  # noqa: BLE001 - reported per run, raised by the caller
        return _failed(group, exc, started, results)
    return [results[rid] for rid in group.run_ids]


def train_groups(groups: Sequence[RunGroup], store, overrides: dict | None = None, workers: int = 1,
                 progress: bool = False, log=print):
    """Train ``groups`` in ``workers`` processes (one thread each when more than one);
    yields ``(group, results)`` as groups finish."""
    if workers <= 1 or len(groups) <= 1:
        for group in groups:
            yield group, train_group(group, store, overrides, progress)
        return
    def submit_all(pool):
        return {submit(pool, train_group, g, str(store) if store is not None else None, overrides, progress): g
                for g in groups}

    with worker_pool(workers, _single_thread, submit_all) as (_, futures):
        for future in as_completed(futures):
            yield futures[future], future.result()


def _single_thread() -> None:
    torch.set_num_threads(1)
