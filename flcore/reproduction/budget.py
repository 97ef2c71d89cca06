"""The time budgets the book keeps, estimated from a per-run cost model.

A run's *cost* is :func:`flcore.planning.planner.run_cost`: the gradient evaluations of
its clients (rounds x clients per round x local steps x evaluations per step).  Its time
is ``cost x core-seconds per unit of cost``, a rate measured by
``benchmarks/sweep_time.py`` on the same protocol with its evaluation schedule (so the
rate includes the evaluations): one rate for runs trained one at a time and one for runs
batched ``R`` to a group.  A group of ``r`` runs is charged at the rate interpolated
linearly in ``r`` between the two (the benchmark's groups are the largest the book's
planner makes, so smaller groups are charged closer to the one-at-a-time rate).  The
groups of a plan are scheduled longest first on ``cores`` single-threaded workers, as
``ensure_runs`` does, and the estimate is the last worker's finishing time.

Per device kind (``--plan``, :mod:`flcore.reproduction.pricing`): every benchmark row in
``benchmarks/results/*.jsonl`` names the machine it was measured on (``machine``: "CPU,
2 cores", "NVIDIA H100 80GB HBM3") and the model of its runs (rows that predate the
``model`` field: ``sweep_time.py``'s CPU set is the small scale's MNIST-1D model, its
``--gpu`` set and ``round_time.py`` the CIFAR CNN).  :func:`device_rates` turns them into
one :class:`DeviceRates` per machine: a :class:`CostModel` per model, in worker-seconds
per unit of cost (a worker: one core of a CPU, a whole GPU).  ``sweep_time.py`` rows
give the alone and batched rates; a ``round_time.py`` row (one run, the whole protocol
with its evaluations, ``threads`` cores) gives an alone rate, and a
``paper_round_time.py`` row (a paper-protocol round of a model the CIFAR rows do not cover,
one worker, its evaluations in its cost) another.  A machine without rows is
*uncalibrated*: nothing is estimated for it.
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from flcore.config import grad_evals_per_step, resolve_config
from flcore.planning.planner import plan_groups, run_cost
from flcore.record_format import is_evaluation_round, stop_round

#: ``make main``: every artifact with a notebook at the ``small`` scale, on 2 cores.
MAIN_BUDGET_S = 30 * 60
#: ``make test`` (CI).
TEST_BUDGET_S = 20 * 60


@dataclass(frozen=True)
class CostModel:
    """Core-seconds per unit of run cost, alone and batched ``batched_runs`` to a group."""

    alone: float
    batched: float
    batched_runs: int

    def rate(self, runs: int) -> float:
        if runs <= 1 or self.batched_runs <= 1:
            return self.alone
        share = min(1.0, (runs - 1) / (self.batched_runs - 1))
        return self.alone + share * (self.batched - self.alone)


def calibrate(rows: Sequence[dict]) -> CostModel:
    """A :class:`CostModel` from the latest CPU rows of ``benchmarks/sweep_time.py
    --append`` (fields ``engine``, ``device``, ``seconds``, ``workers``, ``cost``,
    ``group_runs``): core-seconds over the total cost of the runs timed."""
    latest = {}
    for row in rows:
        if row.get("device") == "cpu" and "cost" in row:
            latest[row["engine"]] = row
    if {"one-at-a-time", "batched"} - set(latest):
        raise ValueError("the results need a CPU 'one-at-a-time' and a 'batched' row with their cost")
    rate = {engine: row["seconds"] * row["workers"] / row["cost"] for engine, row in latest.items()}
    return CostModel(alone=rate["one-at-a-time"], batched=rate["batched"],
                     batched_runs=latest["batched"]["group_runs"])


def load_cost_model(path: str | Path) -> CostModel:
    return calibrate(read_rows(path))


def read_rows(path: str | Path) -> list[dict]:
    """The JSON objects of a JSON-lines file (blank lines skipped)."""
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


@dataclass(frozen=True)
class DeviceRates:
    """What the benchmark rows of one machine say: worker-seconds per unit of run cost
    for each model measured (module docstring)."""

    kind: str  # the machine, as the rows name it
    device: str  # "cpu" | "cuda"
    workers: int  # cores of a CPU (runs trained at once, one thread each); 1 for a GPU
    models: dict[str, CostModel]
    sources: tuple[str, ...]  # "<file> <date>" of the rows used


@dataclass(frozen=True)
class EvaluationCost:
    """Seconds of one evaluation of the global model, measured on this machine for the runs
    of one model and data set (``key``: :func:`evaluation_key`): ``test_s`` on the test set,
    ``client_s`` on every client's training data (``client_accuracy``).  A run's
    evaluations do not grow with its gradient evaluations -- FedAvg evaluates as often as
    FedSAM, which computes two gradients a step -- so the estimate charges them apart from
    its cost (:func:`evaluation_counts`)."""

    key: tuple
    test_s: float
    client_s: float

    def seconds(self, cfg, rounds_done: int = 0) -> float:
        """The evaluations ``cfg`` has left after ``rounds_done``, in seconds (0 for a run of
        another model or data set: the rows' rate prices those, evaluations included)."""
        if evaluation_key(cfg) != self.key:
            return 0.0
        test, client = evaluation_counts(cfg, rounds_done)
        return test * self.test_s + client * self.client_s


def evaluation_key(cfg) -> tuple:
    """What an evaluation's time depends on: the model and the data set's size."""
    return (cfg.model, cfg.dataset, cfg.num_samples, cfg.samples_per_client, cfg.clients)


def evaluation_counts(cfg, rounds_done: int = 0) -> tuple[int, int]:
    """(test-set evaluations, client-accuracy evaluations) of rounds ``rounds_done + 1`` to
    the run's stop round, as the round driver makes them (:mod:`flcore.sim.round_driver`):
    the test set at every evaluation round, the clients' data at every ``eval_every``-th
    round and the last when ``client_accuracy`` is on.  The small scale's 300 rounds: 120
    and 30."""
    test = client = 0
    for done in range(rounds_done + 1, stop_round(cfg) + 1):
        if is_evaluation_round(done, cfg):
            test += 1
            client += bool(cfg.client_accuracy and (done % cfg.eval_every == 0 or done == cfg.rounds))
    return test, client


#: The model of a row without a ``model`` field, by benchmark and device (module docstring).
_LEGACY_MODEL = {("sweep_time", "cpu"): "mnist1d_cnn", ("sweep_time", "cuda"): "cnn", ("round_time", "cpu"): "cnn",
                 ("round_time", "cuda"): "cnn"}
#: The batch size of ``round_time.py``'s protocol (the CIFAR preset's: FedSAM Table 10).
_ROUND_TIME_BATCH = 64


def _cores(row: dict) -> int:
    digits = [int(w) for w in str(row.get("machine", "")).replace(",", " ").split() if w.isdigit()]
    return digits[0] if digits else int(row.get("workers") or row.get("threads") or 1)


def device_rates(rows_by_file: dict[str, list[dict]]) -> dict[str, DeviceRates]:
    """:class:`DeviceRates` per machine from the rows of ``benchmarks/results/*.jsonl``
    (``{file stem: rows}``); the latest rows of each (machine, model, engine) win."""

    latest: dict[tuple[str, str, str, str], dict] = {}
    for stem, rows in rows_by_file.items():
        if stem not in ("sweep_time", "round_time", "paper_round_time"):
            continue
        for row in rows:
            device = "cuda" if str(row.get("device", "")).startswith("cuda") else "cpu"
            model = row.get("model") or _LEGACY_MODEL[(stem, device)]
            if stem == "round_time":
                default = "sequential" if device == "cpu" else "batched"  # what engine "auto" picks
                if row.get("engine") != default or "flcore_protocol_s" not in row:
                    continue
                if row.get("engine_requested") == "batched-eager":  # a comparison row: graphs off
                    continue
                engine = "round"
            elif "cost" not in row:
                continue
            else:
                engine = row["engine"]
            key = (row.get("machine") or device, model, stem, engine)
            if key not in latest or str(row.get("date", "")) >= str(latest[key].get("date", "")):
                latest[key] = {**row, "_device": device, "_stem": stem}
    by_machine: dict[str, dict[str, dict[str, float | int]]] = {}
    meta: dict[str, tuple[str, int, set]] = {}
    for (machine, model, stem, engine), row in sorted(latest.items()):
        device = row["_device"]
        workers = 1 if device == "cuda" else _cores(row)
        rates = by_machine.setdefault(machine, {}).setdefault(model, {})
        if engine == "round":
            steps = math.ceil(row["samples_per_client"] / _ROUND_TIME_BATCH)
            cost = (row["protocol_rounds"] * row["clients_per_round"] * steps
                    * grad_evals_per_step(row["method"]))
            threads = 1 if device == "cuda" else int(row.get("threads") or workers)
            rates.setdefault("round", [])
            rates["round"].append(row["flcore_protocol_s"] * threads / cost)
        else:
            rates[engine] = row["seconds"] * (row.get("workers") or 1) / row["cost"]
            if engine == "batched":
                rates["group_runs"] = row.get("group_runs") or 1
        _, _, sources = meta.setdefault(machine, (device, workers, set()))
        sources.add(f"{stem}.jsonl {row.get('date', '?')}")
    out = {}
    for machine, models in by_machine.items():
        device, workers, sources = meta[machine]
        cost_models = {}
        for model, r in models.items():
            alone = r.get("one-at-a-time") or (sum(r["round"]) / len(r["round"]) if r.get("round") else None)
            batched = r.get("batched")
            if alone is None and batched is None:
                continue
            cost_models[model] = CostModel(alone=alone if alone is not None else batched,
                                           batched=batched if batched is not None else alone,
                                           batched_runs=int(r.get("group_runs", 1)) if batched is not None else 1)
        out[machine] = DeviceRates(machine, device, workers, cost_models, tuple(sorted(sources)))
    return out


def load_device_rates(results_dir: str | Path) -> dict[str, DeviceRates]:
    """:func:`device_rates` of the ``*.jsonl`` files in ``results_dir`` (none: no machine
    is calibrated)."""
    folder = Path(results_dir)
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    return device_rates({path.stem: read_rows(path) for path in files})


def estimate_seconds(specs: Sequence, model: CostModel, cores: int = 2, device: str = "cpu") -> float:
    """Estimated wall time to train ``specs`` as ``ensure_runs`` would on ``cores`` workers."""

    groups = plan_groups(specs, device=device, workers=cores)
    times = []
    for group in groups:
        cost = sum(run_cost(resolve_config({**values, "device": device})) for values in group.configs)
        times.append(cost * model.rate(group.size))
    finish = [0.0] * max(1, cores)
    for t in sorted(times, reverse=True):  # longest first, each to the worker free soonest
        finish[finish.index(min(finish))] += t
    return max(finish)
