"""The price of a set of runs before any of it trains (``--plan`` on ``flcore reproduce``,
``flcore book`` and ``flcore sweep``).

:func:`price_runs` takes the runs a command would train (run requests: artifacts' specs,
a sweep's configs), keeps the distinct ones (a run shared by two artifacts once), looks
each up in the store (finished and diverged runs are skipped, and runs capped at the
requested ``max_rounds`` or beyond; a partly trained run is priced for its remaining
rounds, from its ``rounds_done``; a run whose record fails its checks is priced as
untrained), and prices the rest for every device kind the benchmark
rows know (:func:`flcore.reproduction.budget.device_rates`):

- the runs are planned into groups as :func:`flcore.planning.plan_groups` would on that
  kind (one worker per core of a CPU, the groups of one GPU trained one after the other);
- a group's time is its runs' remaining cost (:func:`flcore.planning.planner.run_cost`),
  plus their evaluations on a released data set (:func:`evaluation_cost`: FedIMA
  evaluates its 10,000 test images every round), times the kind's rate for their model at
  the group's size;
- a model the kind has no rows for is priced from the kind's measured model scaled by
  the ratio of their floating-point operations per training example (counted with
  ``torch.utils.flop_counter``: ``extrapolated_runs`` says how many runs were);
- ``hours``: the wall time on one machine of that kind (the CPU's groups scheduled longest
  first on its cores, as ``ensure_runs`` does); ``None`` and ``calibrated: false`` for a kind
  without rows -- this machine's own kind when it has none, and any GPU when no GPU rows
  exist;
- ``by_model``: per model and data set (``"resnet18gn on cifar100"``), its ``runs``, their
  ``worker_hours`` (summed, unscheduled: on a GPU they add up to ``hours``) and whether
  they were ``priced_from_flops`` -- where the hours go, and which figures a measurement
  of that model would firm up.

``store_bytes`` estimates what the runs to train add to the run store: each run's final
model and checkpoint (model, server state, per-client state tables), its metrics log
(evaluation rows, per-client accuracies) and any snapshots.  Nothing trains, nothing is
written.
"""
from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

import torch

from flcore.algorithms import get_method
from flcore.config import DATASET_FACTS, ExperimentConfig, hyperparameters_of
from flcore.cpus import available_cpus
from flcore.models import build_model
from flcore.planning.planner import DEFAULT_MAX_RUNS, client_table_kinds, model_parameters, plan_groups, run_cost
from flcore.planning.spec import RunSpec
from flcore.record_format import is_evaluation_round, stop_round, trained_enough
from flcore.reproduction.budget import DeviceRates, evaluation_counts
from flcore.reproduction.store_state import resolve_store, stored_state
from flcore.store import RunStore

#: The kind listed for GPUs when no benchmark row was measured on one.
ANY_GPU = "GPU (no benchmark rows)"


def as_specs(requests: Iterable[Any]) -> list[RunSpec]:
    """Run requests (specs, config dicts or resolved configs) as :class:`RunSpec` s."""
    out = []
    for item in requests:
        if isinstance(item, RunSpec):
            out.append(item)
        elif isinstance(item, ExperimentConfig):
            out.append(RunSpec({}, item.to_dict()))
        else:
            out.append(RunSpec({}, dict(item)))
    return out


@lru_cache(maxsize=64)
def flops_per_example(model: str, dataset: str) -> float:
    """Floating-point operations of one training example's forward and backward pass."""
    # imported here: it imports triton, about 0.1 s that `flcore --help` would otherwise pay
    from torch.utils.flop_counter import FlopCounterMode

    shape, classes, _ = DATASET_FACTS[dataset]
    module = build_model(model, shape, classes)
    x = torch.randn(2, *shape)
    with FlopCounterMode(display=False) as counter:
        module(x).sum().backward()
    return counter.get_total_flops() / 2


#: Test examples of the released data sets (PACS: the held-out tenth of its 9,991 images);
#: the generated sets' evaluations are priced by the probe or by their rows.
TEST_EXAMPLES = {"cifar10": 10_000, "cifar100": 10_000, "fmnist": 10_000, "pacs": 1_000}


def evaluation_cost(cfg: ExperimentConfig, rounds_done: int = 0) -> float:
    """A run's remaining evaluations in units of :func:`~flcore.planning.planner.run_cost`
    (one gradient evaluation of a batch): each evaluated example a forward pass, a third of
    a training example's forward and backward -- the test set at every evaluation round,
    every client's training data where ``client_accuracy`` asks (FedIMA evaluates every
    round).  0 for a generated data set (module docstring)."""

    test_n = TEST_EXAMPLES.get(cfg.dataset)
    if test_n is None:
        return 0.0
    test, client = evaluation_counts(cfg, rounds_done)
    train_n = cfg.num_samples or DATASET_FACTS[cfg.dataset][2] or 0
    return (test * test_n + client * train_n) / (3.0 * cfg.batch_size)


_STATE_FLOATS: dict[tuple, tuple[int, int]] = {}


def _state_floats(cfg: ExperimentConfig) -> tuple[int, int]:
    """(floats of the server state, floats of the per-client state tables) of a run's
    checkpoint, from the method's own state specification: the client's tables
    (:func:`~flcore.planning.planner.client_table_kinds`), the server's state initialised
    on the ``meta`` device for the run's model size (shapes without memory or arithmetic)."""
    method = get_method(cfg.method)
    key = (cfg.method, cfg.model, cfg.dataset, cfg.clients,
           tuple(repr(getattr(cfg, name)) for name in hyperparameters_of(cfg.method)))
    if key not in _STATE_FLOATS:
        params = model_parameters(cfg.model, cfg.dataset)
        per_client = sum(params if kind in ("zeros", "model") else 1 for kind in client_table_kinds(cfg))
        state = method.build_server(cfg).init(torch.zeros(params, device="meta"), cfg.clients)

        def count(tree) -> int:
            if isinstance(tree, dict):
                return sum(count(v) for v in tree.values())
            return tree.numel() if isinstance(tree, torch.Tensor) else 0

        _STATE_FLOATS[key] = (count(state), per_client * cfg.clients)
    return _STATE_FLOATS[key]


@lru_cache(maxsize=256)
def _evaluations(rounds: int, eval_every: int, eval_last: int, eval_last_every: int = 1) -> int:
    """Evaluation rounds of a run's protocol (:func:`flcore.record_format.is_evaluation_round`)."""
    protocol = SimpleNamespace(rounds=rounds, eval_every=eval_every, eval_last=eval_last,
                               eval_last_every=eval_last_every)
    return sum(1 for r in range(1, rounds + 1) if is_evaluation_round(r, protocol))


def run_store_bytes(cfg: ExperimentConfig) -> int:
    """Bytes a finished run of ``cfg`` takes in the store (module docstring; an estimate)."""
    params = model_parameters(cfg.model, cfg.dataset)
    server, clients = _state_floats(cfg)
    model_bytes = 4 * params
    checkpoint = model_bytes + 4 * (server + clients)
    evaluations = _evaluations(cfg.rounds, cfg.eval_every, cfg.eval_last, cfg.eval_last_every)
    with_clients = cfg.rounds // cfg.eval_every + 1
    metrics = 160 * evaluations + 20 * cfg.clients * with_clients
    snapshots = len(cfg.snapshot_rounds) * (1 + cfg.per_round) * model_bytes
    return int(model_bytes + checkpoint + metrics + snapshots + 2048)


def local_kind(device: str = "auto") -> tuple[str, str]:
    """(kind, device type) of this machine as the benchmarks name machines."""
    if device != "cpu" and torch.cuda.is_available():
        return torch.cuda.get_device_name(0), "cuda"
    return f"CPU, {available_cpus()} cores", "cpu"


def cost_rate(rates: DeviceRates, cfg: ExperimentConfig, group_size: int) -> tuple[float, bool]:
    """(worker-seconds per unit of cost, extrapolated?) of ``cfg``'s model on ``rates``."""
    if cfg.model in rates.models:
        return rates.models[cfg.model].rate(group_size), False
    reference = "cnn" if "cnn" in rates.models else sorted(rates.models)[0]
    reference_dataset = "cifar10" if reference == "cnn" else "mnist1d"
    scale = flops_per_example(cfg.model, cfg.dataset) / flops_per_example(reference, reference_dataset)
    return rates.models[reference].rate(group_size) * scale, True


def _price_kind(rates: DeviceRates, todo: dict[str, tuple[ExperimentConfig, int]]) -> dict[str, Any]:
    workers = rates.workers if rates.device == "cpu" else 1
    groups = plan_groups([cfg for cfg, _ in todo.values()], device="cpu", workers=workers,
                         max_runs=None if rates.device == "cpu" else DEFAULT_MAX_RUNS)
    times, extrapolated = [], 0
    by_model: dict[str, dict[str, Any]] = {}
    for group in groups:
        seconds = 0.0
        for rid in group.run_ids:
            cfg, done = todo[rid]
            rate, guessed = cost_rate(rates, cfg, group.size)
            extrapolated += guessed
            run_seconds = (run_cost(cfg, done) + evaluation_cost(cfg, done)) * rate
            seconds += run_seconds
            entry = by_model.setdefault(f"{cfg.model} on {cfg.dataset}",
                                        {"runs": 0, "worker_hours": 0.0, "priced_from_flops": guessed})
            entry["runs"] += 1
            entry["worker_hours"] += run_seconds / 3600
        times.append(seconds)
    for entry in by_model.values():
        entry["worker_hours"] = round(entry["worker_hours"], 2)
    finish = [0.0] * max(1, workers)
    for t in sorted(times, reverse=True):  # longest first, each to the worker free soonest
        finish[finish.index(min(finish))] += t
    return {"kind": rates.kind, "device": rates.device, "workers": workers, "calibrated": True,
            "hours": round(max(finish) / 3600, 2), "groups": len(groups), "priced_runs": len(todo),
            "extrapolated_runs": extrapolated, "sources": list(rates.sources),
            "by_model": dict(sorted(by_model.items(), key=lambda kv: -kv[1]["worker_hours"]))}


def price_runs(requests: Iterable[Any], store, rates: dict[str, DeviceRates], max_rounds: int | None = None,
               device: str = "auto") -> dict[str, Any]:
    """The plan of ``requests`` (module docstring) as a JSON-ready dict: ``runs``
    (requested, distinct, pending, finished, to_train, partly_trained), ``store_bytes``,
    ``max_rounds`` and ``devices`` (one entry per kind: ``kind``, ``device``,
    ``calibrated``, ``hours``, ``groups``, ``priced_runs``, ``extrapolated_runs``,
    ``sources``)."""
    specs = as_specs(requests)
    runs = RunStore(resolve_store(store))
    distinct: dict[str, ExperimentConfig] = {}
    pending = 0
    for spec in specs:
        if not spec.available:
            pending += 1
            continue
        cfg = spec.resolve(max_rounds=max_rounds, device="cpu")
        distinct.setdefault(cfg.run_id(), cfg)
    todo: dict[str, tuple[ExperimentConfig, int]] = {}
    finished, partial, store_bytes = 0, 0, 0
    for rid, cfg in distinct.items():
        run = runs.run(rid)
        status = stored_state(run)[1]  # a damaged record ({}) is priced as untrained
        if trained_enough(status, cfg):
            finished += 1
            continue
        done = int(status.get("rounds_done") or 0)
        done = min(done, stop_round(cfg))
        partial += done > 0
        if not run.exists():
            store_bytes += run_store_bytes(cfg)
        todo[rid] = (cfg, done)
    kinds = [_price_kind(r, todo) if todo and r.models else
             {"kind": r.kind, "device": r.device, "workers": r.workers, "calibrated": False, "hours": 0.0 if not todo
              else None, "groups": 0, "priced_runs": 0, "extrapolated_runs": 0, "sources": list(r.sources)}
             for r in rates.values()]
    here, here_device = local_kind(device)
    if here not in rates:
        kinds.append(_uncalibrated(here, here_device, "this machine: no benchmark rows were measured on it"))
    if not any(k["device"] == "cuda" for k in kinds):
        kinds.append(_uncalibrated(ANY_GPU, "cuda", "no benchmark rows were measured on a GPU: run "
                                   "`python benchmarks/sweep_time.py --gpu --append "
                                   "benchmarks/results/sweep_time.jsonl` on one"))
    return {"runs": {"requested": len(specs), "distinct": len(distinct), "pending": pending, "finished": finished,
                     "to_train": len(todo), "partly_trained": partial},
            "max_rounds": max_rounds, "store_bytes": store_bytes, "devices": kinds}


def _uncalibrated(kind: str, device: str, note: str) -> dict[str, Any]:
    return {"kind": kind, "device": device, "workers": None, "calibrated": False, "hours": None, "groups": None,
            "priced_runs": 0, "extrapolated_runs": 0, "sources": [], "note": f"uncalibrated: {note}", "by_model": {}}


def plan_text(plan: dict[str, Any], what: str) -> str:
    """The plan as a few lines for the terminal."""
    runs = plan["runs"]
    cap = f", capped at {plan['max_rounds']} rounds" if plan["max_rounds"] is not None else ""
    lines = [f"{what}{cap}: {runs['requested']} runs requested, {runs['distinct']} distinct, {runs['finished']} "
             f"already in the store (skipped), {runs['to_train']} to train ({runs['partly_trained']} partly trained, "
             f"priced for their remaining rounds)"
             + (f", {runs['pending']} pending (method not implemented)" if runs["pending"] else "")
             + f"; the store grows by about {_size(plan['store_bytes'])}.",
             f"{'device kind':<34} {'hours':>10} {'groups':>7} {'runs':>6}  note"]
    for k in plan["devices"]:
        hours = "-" if k["hours"] is None else f"{k['hours']:,.1f}"
        groups = "-" if k["groups"] is None else str(k["groups"])
        note = k.get("note") or ("rows: " + ", ".join(k["sources"])
                                 + (f"; {k['extrapolated_runs']} runs priced from another model's rows by their "
                                    "FLOPs" if k["extrapolated_runs"] else ""))
        lines.append(f"{k['kind'][:34]:<34} {hours:>10} {groups:>7} {k['priced_runs']:>6}  {note}")
    for k in plan["devices"]:
        if k.get("by_model"):
            parts = [f"{name} {m['worker_hours']:,.1f} h ({m['runs']} runs"
                     + (", priced from FLOPs)" if m["priced_from_flops"] else ")")
                     for name, m in k["by_model"].items()]
            lines.append(f"  {k['kind']}, by model: " + "; ".join(parts))
    lines.append("Nothing was trained.")
    return "\n".join(lines)


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n} TB"


def hours_total(plan: dict[str, Any]) -> dict[str, float | None]:
    """``{kind: hours}`` of a plan."""
    return {k["kind"]: k["hours"] for k in plan["devices"]}


