"""This machine's speed, measured once and kept in the run store.

The cost model (:mod:`flcore.reproduction.budget`) prices a run from benchmark rows
measured on some machine ("CPU, 2 cores").  Two machines with that name can differ by a
factor of two -- a slower clock, two hyper-threads of one core rather than two cores,
a container's neighbours -- so an estimate from the rows alone can be far off.
:func:`machine_rates` therefore measures a *probe* on this machine: the work the rows
price, in their mix of methods (FedAvg and FedSAM, a third and two thirds of the
gradients), batched and alone as the book trains them, each capped at ``PROBE_ROUNDS``
rounds -- a group of ``PROBE_RUNS`` small-scale FedSAM runs and one of as many FedAvg runs
(15 client rows of the row kernel each), and one FedAvg run alone (a timed run's, or a
run that records probes: 5 rows) --
trained in each of the ``workers`` single-threaded processes the book trains with, all
at once (so that the workers' contention for the cores and their memory is in the
figure), without a store (nothing is written).  The *factor* is the probe's mean seconds
over the same probe's seconds on the machine of the reference rows, measured there when the
rows were (``benchmarks/results/probe_time.jsonl``, the latest row of this probe's version
and worker count; without one, the seconds the rows price it at); this machine's rates are
the reference rows times the factor.  A factor is then this machine against that one, the
same for any code: the rows and the probe move together when the code changes.

The probe also times the evaluations of its model on its data (the test set, and every
client's training data), a few of each after its training, in the same workers at once.
A run's evaluations do not grow with its gradient evaluations, and the probe's 20 rounds
evaluate twice where a small run's 300 evaluate 120 times, so the factor is taken on the
probe's training alone (its own evaluations subtracted) and the evaluations are charged
apart (:class:`flcore.reproduction.budget.EvaluationCost`).  From the factor alone, the
estimate of the small book's training was 18 min 8 s for 21 min 17 s measured (15 %
short): a small run's evaluations are 12-18 % of its time (``benchmarks/README.md``).

``flcore book`` and ``flcore reproduce`` keep the factor in the store,
``.machine-speed.json``, with what it depends on (the processor, the cores this process
may use, the workers, torch and flcore's versions, the probe's version) and a SHA-256
digest of its fields; ``--plan`` writes nothing: it uses the kept factor, or measures one
for itself.  A file that is not a bounded regular file, not of its schema, whose digest
does not match or that was measured under other conditions is ignored and the probe runs
again (a few seconds); deleting the file asks for a new measurement.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import platform
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from flcore.config import resolve_config
from flcore.cpus import available_cpus
from flcore.planning.planner import RunGroup, run_cost, train_group
from flcore.planning.workers import submit, worker_pool
from flcore.reproduction.budget import CostModel, DeviceRates, EvaluationCost, evaluation_key, read_rows
from flcore.reproduction.pricing import cost_rate
from flcore.safe_io import read_regular_bytes
from flcore.sim import Simulation, build_federated_data
from flcore.store.atomic import atomic_write_json
from flcore.version import __version__

#: The file in the store root (hidden: never taken for a run).
SPEED_FILE = ".machine-speed.json"
#: Bump when the probe changes: older measurements are then ignored.
PROBE_VERSION = 4
PROBE_RUNS = 3
PROBE_ROUNDS = 20
#: The probe's run trained alone.
PROBE_ALONE = {"method": "fedavg", "dataset": "mnist1d", "scale": "small", "alpha": 0.5, "device": "cpu"}
#: Evaluations of each kind timed after the probe's training.
EVAL_REPEATS = 4
PROBE_CONFIG = {"method": "fedsam", "dataset": "mnist1d", "scale": "small", "alpha": 0.5, "device": "cpu"}
#: A factor outside these bounds is a broken measurement, not a machine.
FACTOR_BOUNDS = (0.02, 50.0)
_MAX_FILE_BYTES = 4096
#: The machine whose rows are the reference when this machine has none of its own.
REFERENCE_KIND = "CPU, 2 cores"


@dataclass(frozen=True)
class Speed:
    """This machine against the reference rows: ``factor`` (seconds here over seconds
    there), the probe's ``measured`` and ``priced`` seconds, the ``reference`` machine and
    whether the figure was ``cached``; ``evaluation``: the seconds of one evaluation of
    the probe's model on its data (None: not measured)."""

    factor: float
    measured: float
    priced: float
    reference: str
    cached: bool
    evaluation: EvaluationCost | None = None


def probe_configs(seed_base: int = 0) -> list[dict]:
    """The probe's batched group."""
    return [{**PROBE_CONFIG, "seed": seed_base + s} for s in range(PROBE_RUNS)]


def probe_groups(seed_base: int = 0) -> list[list[dict]]:
    """The probe's groups: FedSAM's and FedAvg's batched, and a FedAvg run alone."""
    fedavg = [{**PROBE_ALONE, "seed": seed_base + s} for s in range(PROBE_RUNS)]
    return [probe_configs(seed_base), fedavg, [{**PROBE_ALONE, "seed": seed_base + PROBE_RUNS}]]


def probe_evaluation(test_s: float, client_s: float) -> EvaluationCost:
    """The evaluation cost measured by the probe, for runs of its model and data."""
    return EvaluationCost(evaluation_key(resolve_config(PROBE_CONFIG)), float(test_s), float(client_s))


def probe_evaluation_seconds(evaluation: EvaluationCost) -> float:
    """Seconds of the evaluations the probe's group makes itself (its runs' evaluation rounds
    within its ``PROBE_ROUNDS``), part of its measured seconds."""
    return sum(evaluation.seconds(resolve_config({**values, "max_rounds": PROBE_ROUNDS}))
               for group in probe_groups() for values in group)


def conditions(workers: int) -> dict[str, Any]:
    """What a measurement holds for: the processor, cores, workers, versions, probe."""
    return {"processor": processor_name(), "cpus": available_cpus(), "workers": int(workers),
            "torch": torch.__version__, "flcore": __version__, "probe": PROBE_VERSION}


def processor_name() -> str:
    """The CPU model as /proc/cpuinfo names it (else what platform reports, else "unknown")."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()[:200]
    return (platform.processor() or platform.machine() or "unknown")[:200]


def _digest(fields: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def read_speed(store: str | Path, workers: int) -> dict[str, Any] | None:
    """The stored measurement for this machine and ``workers``, or None (absent, not a
    bounded regular file, not of its schema, digest or conditions not matching)."""
    path = Path(store) / SPEED_FILE
    try:
        record = json.loads(read_regular_bytes(path, _MAX_FILE_BYTES, root=store))
    except (OSError, ValueError):  # absent, unsafe or not JSON
        return None
    if not isinstance(record, dict) or set(record) != {"fields", "digest"} or not isinstance(record["fields"], dict):
        return None
    fields = record["fields"]
    if record["digest"] != _digest(fields) or fields.get("conditions") != conditions(workers):
        return None
    numbers = [fields.get(k) for k in ("factor", "measured", "priced")]
    if not all(_positive(x) for x in numbers) or not isinstance(fields.get("reference"), str):
        return None
    timed = [fields.get("test_eval_s"), fields.get("client_eval_s")]
    if timed != [None, None] and not all(_positive(x) for x in timed):
        return None
    if not FACTOR_BOUNDS[0] <= fields["factor"] <= FACTOR_BOUNDS[1]:
        return None
    return fields


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def write_speed(store: str | Path, workers: int, speed: Speed) -> None:
    evaluation = speed.evaluation
    fields = {"conditions": conditions(workers), "factor": speed.factor, "measured": speed.measured,
              "priced": speed.priced, "reference": speed.reference,
              "test_eval_s": None if evaluation is None else evaluation.test_s,
              "client_eval_s": None if evaluation is None else evaluation.client_s,
              "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    Path(store).mkdir(parents=True, exist_ok=True)
    atomic_write_json(Path(store) / SPEED_FILE, {"fields": fields, "digest": _digest(fields)})


def reference_rates(rates: dict[str, DeviceRates], kind: str) -> DeviceRates | None:
    """The rows this machine's estimate starts from: its own kind's, else
    :data:`REFERENCE_KIND`'s, else any CPU machine's (None: no CPU rows at all)."""
    cpu = {k: r for k, r in rates.items() if r.device == "cpu" and r.models}
    for name in (kind, REFERENCE_KIND):
        if name in cpu:
            return cpu[name]
    return cpu[sorted(cpu)[0]] if cpu else None


def priced_probe(reference: DeviceRates) -> float:
    """Seconds the reference rows price the probe at (its groups, each at its size's rate)."""
    total = 0.0
    for group in probe_groups():
        for values in group:
            cfg = resolve_config({**values, "max_rounds": PROBE_ROUNDS})
            total += run_cost(cfg) * cost_rate(reference, cfg, len(group))[0]
    return total


def _probe_once(start_at: float | None) -> tuple[float, float, float]:
    """Train the probe's groups, unrecorded (after short warm-up groups, and waiting for
    ``start_at``, a wall-clock time, so that every worker's clock runs together); returns
    its seconds, then the seconds of one evaluation on the test set and of one on every
    client's data (:func:`_time_evaluations`)."""
    overrides = {"max_rounds": PROBE_ROUNDS, "device": "cpu"}

    def group(configs: list[dict], cap: int) -> RunGroup:
        ids = tuple(resolve_config({**c, "max_rounds": cap}).run_id() for c in configs)
        return RunGroup(configs=tuple(configs), run_ids=ids, labels=tuple({} for _ in configs))

    for configs in probe_groups(1000):
        train_group(group(configs, 2), None, {**overrides, "max_rounds": 2})
    if start_at is not None:
        time.sleep(max(0.0, start_at - time.time()))
    started = time.perf_counter()
    results = [r for configs in probe_groups(0) for r in train_group(group(configs, PROBE_ROUNDS), None, overrides)]
    seconds = time.perf_counter() - started
    failed = [r["error"] for r in results if r["status"] not in ("capped", "finished")]
    if failed:
        raise RuntimeError(f"the speed probe failed: {failed[0]}")
    return (seconds, *_time_evaluations())


def _time_evaluations() -> tuple[float, float]:
    """Mean seconds of one evaluation of a probe run's model on the test set and of one on
    every client's training data (after one of each unmeasured)."""
    cfg = resolve_config({**PROBE_CONFIG, "max_rounds": PROBE_ROUNDS})
    device = torch.device("cpu")
    sim = Simulation(cfg, build_federated_data(cfg, device), device, None)
    out = []
    for evaluate in (sim.evaluate, sim.client_accuracy):
        evaluate()
        started = time.perf_counter()
        for _ in range(EVAL_REPEATS):
            evaluate()
        out.append((time.perf_counter() - started) / EVAL_REPEATS)
    return out[0], out[1]


def _single_thread() -> None:
    torch.set_num_threads(1)


def measure_probe(workers: int) -> tuple[float, float, float]:
    """Mean seconds of the probe trained in ``workers`` single-threaded processes at once,
    and of its evaluations (``_probe_once``)."""
    if workers <= 1:
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return _probe_once(None)
        finally:
            torch.set_num_threads(before)
    start_at = time.time() + 5.0  # the workers started and warmed up by then, on an idle machine

    def submit_all(pool):
        return [submit(pool, _probe_once, start_at) for _ in range(workers)]

    with worker_pool(workers, _single_thread, submit_all) as (_, futures):
        times = [f.result() for f in futures]
    return tuple(sum(t[i] for t in times) / len(times) for i in range(3))


#: The reference machine's probe times, beside the benchmark rows.
PROBE_TIME_FILE = "probe_time.jsonl"


def reference_probe(results_dir: str | Path, workers: int) -> float | None:
    """The probe's training seconds (evaluations out) on the reference rows' machine with
    ``workers`` workers: the latest row of :data:`PROBE_TIME_FILE` of this probe's version;
    None without one."""

    path = Path(results_dir) / PROBE_TIME_FILE
    rows = [r for r in (read_rows(path) if path.is_file() else [])
            if r.get("probe") == PROBE_VERSION and r.get("workers") == workers and _positive(r.get("training_s"))]
    return float(rows[-1]["training_s"]) if rows else None


def machine_speed(store: str | Path, rates: dict[str, DeviceRates], kind: str, workers: int,
                  measure=measure_probe, log=None, keep: bool = True,
                  reference_s: float | None = None) -> Speed | None:
    """This machine's :class:`Speed` (module docstring): the stored one, or measured now
    (and stored, with ``keep``); None when no CPU rows exist to compare with.  ``measure``
    returns the probe's seconds, or them and its evaluations' (:func:`measure_probe`);
    ``reference_s``: the probe's training seconds on the rows' machine (None: priced by
    the rows)."""
    reference = reference_rates(rates, kind)
    if reference is None:
        return None
    priced = reference_s if reference_s is not None else priced_probe(reference)
    stored = read_speed(store, workers)
    if stored is not None and stored["reference"] == reference.kind and math.isclose(stored["priced"], priced):
        evaluation = (None if stored.get("test_eval_s") is None
                      else probe_evaluation(stored["test_eval_s"], stored["client_eval_s"]))
        return Speed(stored["factor"], stored["measured"], stored["priced"], stored["reference"], cached=True,
                     evaluation=evaluation)
    if log:
        log(f"measuring this machine's speed (FedSAM's and FedAvg's small runs, {PROBE_RUNS} batched and one alone, "
            f"{PROBE_ROUNDS} rounds, in each of {workers} worker(s){'; kept in the store' if keep else ''})")
    found = measure(workers)
    measured, evaluation = (float(found), None) if isinstance(found, (int, float)) else (
        float(found[0]), probe_evaluation(found[1], found[2]))
    if evaluation is not None and not (_positive(evaluation.test_s) and _positive(evaluation.client_s)):
        raise RuntimeError(f"the speed probe timed evaluations of {evaluation.test_s} s and "
                           f"{evaluation.client_s} s: not a measurement")
    # the factor prices training alone: the probe's own evaluations are charged apart
    training = measured - (0.0 if evaluation is None else probe_evaluation_seconds(evaluation))
    factor = training / priced
    if not (math.isfinite(factor) and FACTOR_BOUNDS[0] <= factor <= FACTOR_BOUNDS[1]):
        raise RuntimeError(f"the speed probe took {measured:.1f} s against {priced:.1f} s priced: not a measurement")
    speed = Speed(factor, measured, priced, reference.kind, cached=False, evaluation=evaluation)
    if keep:
        write_speed(store, workers, speed)
    return speed


def scaled(reference: DeviceRates, kind: str, workers: int, factor: float) -> DeviceRates:
    """``reference``'s rates times ``factor``, named ``kind`` with ``workers`` workers."""
    models = {name: CostModel(m.alone * factor, m.batched * factor, m.batched_runs)
              for name, m in reference.models.items()}
    return replace(reference, kind=kind, workers=workers, models=models,
                   sources=(*reference.sources, f"{SPEED_FILE} (x{factor:.2f})"))


def machine_rates(store: str | Path, rates: dict[str, DeviceRates], kind: str, workers: int,
                  measure=measure_probe, log=None, keep: bool = True,
                  reference_s: float | None = None) -> tuple[DeviceRates, Speed] | None:
    """This machine's rates (the reference rows times its measured speed) and the speed;
    None when there are no CPU rows to start from."""
    speed = machine_speed(store, rates, kind, workers, measure=measure, log=log, keep=keep, reference_s=reference_s)
    if speed is None:
        return None
    reference = reference_rates(rates, kind)
    return scaled(reference, kind, workers, speed.factor), speed
