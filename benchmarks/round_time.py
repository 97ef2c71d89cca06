"""Rounds per second of flcore's engine against a reference loop written like the official
FedSAM code, for FedAvg and FedSAM, training alone and the whole protocol with its
evaluation schedule, measured in one run on one machine.

What is measured
----------------
The FedSAM paper's CIFAR-10 protocol on its CNN (flcore model ``"cnn"``, 797,962
parameters) with CIFAR-shaped synthetic data (:func:`flcore.data.make_cifar_like`):

- 100 clients of 500 samples (``--clients``, ``--samples-per-client``), 5 per round
  (``--clients-per-round``), 1 local epoch, batch 64 (8 steps per client, the last a
  partial batch of 52), client SGD with lr 0.01 and weight decay 4e-4, no momentum;
  FedSAM with rho 0.1; random crop with padding 4, horizontal flip, normalisation;
- a **training round**: local training of the sampled clients plus the server's weighted
  average, no evaluation;
- an **evaluation** as each implementation runs it: flcore evaluates the test set
  (10,000 images, ``--test-samples``) and, every ``eval_every`` rounds, the per-client
  accuracy on the training set (the paper's Fig. 3); the official code evaluates every
  client's training data and the test set at each evaluation round;
- the **whole protocol** of ``--protocol-rounds`` rounds (10,000 for CIFAR-10) with the
  papers' evaluation schedule (every 100 rounds and every round of the last 100: 199
  evaluations), composed from the measured parts: rounds x seconds per round + the
  evaluations each implementation does x their measured seconds.

How
---
Each implementation runs in its own worker process (``multiprocessing`` ``spawn``), so
each has the process-wide settings a user of it would have: flcore's simulation keeps
freed memory in the heap (``flcore.sim.cpu_memory``), the reference runs with the C
library's defaults.  A third worker, ``reference (retained memory)``, runs the reference
with flcore's memory setting, so the table also shows how much of the ratio that setting
is.  The parent times the workers' rounds interleaved (round t of every worker before
round t + 1 of any, the order reversed every other round; the idle workers wait on a
pipe), so a drifting machine slows all alike.  Every worker builds the same tensors,
client partition and initial model from the seed, and uses ``--threads`` (torch's default
when absent).  ``--warmup`` untimed rounds come first; CUDA is synchronised before each
clock read.

The two implementations
-----------------------
1. **flcore**: :class:`flcore.sim.engine.Simulation` (``train_one_round``, ``evaluate``,
   ``client_accuracy``) with the engine from ``--engine`` (``auto`` lets flcore pick:
   one client at a time on a CPU, all clients batched on a GPU; a comma list times
   several engines against the same reference).
2. **reference**: ``benchmarks/reference_loop.py`` (its docstring lists what it copies
   from the official code).

The arithmetic floor
--------------------
``round_gflop`` is counted with ``torch.utils.flop_counter`` on one forward and backward
pass of a batch through flcore's model, times the samples of a round, times the method's
gradient evaluations per step (2 for SAM).  ``peak_gflops`` is the best rate this
machine reaches on a large float32 matrix product or on a large 3x3 convolution (on CPUs
whose BLAS does not use all of their vector units, such as MKL on AMD processors, the
convolution library runs closer to the hardware's peak).  ``over_floor`` is flcore's
seconds per round over ``round_gflop / peak_gflops``.

Running it
----------
::

    python benchmarks/round_time.py                       # human table
    python benchmarks/round_time.py --json --append benchmarks/results/round_time.jsonl
    python benchmarks/round_time.py --device cuda --rounds 50 --engine batched,sequential
    python benchmarks/round_time.py --device cuda --clients-per-round 1000 --no-reference

JSON fields, one object per method and engine: ``method``, ``device``, ``machine``,
``engine`` (the engine flcore ran), ``engine_requested``, ``flcore_rounds_per_s``,
``flcore_s_per_round``, ``reference_rounds_per_s``, ``reference_s_per_round``, ``ratio``
(flcore / reference rounds per second), ``reference_retained_rounds_per_s`` and
``ratio_vs_retained_reference`` (against the reference with flcore's memory setting),
``flcore_round_seconds`` and ``reference_round_seconds`` (every timed round), ``ratio_best``
(the reference's fastest round over flcore's fastest), ``flcore_test_eval_s``,
``flcore_client_eval_s``, ``reference_eval_s``, ``protocol_rounds``,
``protocol_evaluations``, ``protocol_client_evaluations``, ``flcore_protocol_s``,
``reference_protocol_s``, ``protocol_ratio``, ``round_gflop``, ``peak_gflops``,
``peak_kernel``, ``floor_s_per_round``, ``over_floor``, ``rounds_timed``,
``warmup_rounds``, ``clients``, ``clients_per_round``, ``samples_per_client``,
``test_samples``, ``threads``, ``torch_version``, ``peak_memory_mb`` (flcore's CUDA max
allocated memory over its timed rounds; null on CPU), ``reference_peak_memory_mb``,
``chunk_size`` (clients per batched computation, null when all of a round run together),
``cuda_graphs`` (the local steps replayed from CUDA graphs; ``--engine batched-eager`` turns
them off) and ``cuda_graphs_off_reason``,
``load_average_at_start`` (the 1-minute load average before any work; well above 0
means other jobs were running and the numbers are suspect), ``date``.  With
``--no-reference`` the reference fields are null.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
import traceback
from pathlib import Path

import torch

METHODS = ("fedavg", "fedsam")
#: ``batched-eager``: the batched engine with its CUDA graphs off (``FLCORE_CUDA_GRAPHS=0``)
ENGINES = ("auto", "sequential", "batched", "batched-eager")
NUM_CLASSES = 10
SEED = 0
#: Distinct training images at most; larger pools (scale runs with 1,000 clients per
#: round) let clients share images, which leaves the per-round work unchanged.
MAX_TRAIN_IMAGES = 50_000


# ----------------------------------------------------------------------------- arguments

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--methods", default=",".join(METHODS),
                   help="comma-separated methods to measure (default: fedavg,fedsam)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--engine", default="auto",
                   help="flcore engine(s), comma-separated: auto, sequential, batched")
    p.add_argument("--chunk-size", type=int, default=None,
                   help="batched engine: clients per computation (default: flcore decides)")
    p.add_argument("--rounds", type=int, default=3, help="timed rounds (default 3)")
    p.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    p.add_argument("--eval-repeats", type=int, default=1,
                   help="timed evaluations of each kind (default 1; 0 skips the protocol)")
    p.add_argument("--protocol-rounds", type=int, default=10_000,
                   help="rounds of the composed whole protocol (default 10000, CIFAR-10)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch.set_num_threads in every worker (default: torch's)")
    p.add_argument("--clients", type=int, default=100, help="clients in the pool (default 100)")
    p.add_argument("--clients-per-round", type=int, default=5)
    p.add_argument("--samples-per-client", type=int, default=500)
    p.add_argument("--test-samples", type=int, default=10_000)
    p.add_argument("--no-reference", action="store_true",
                   help="time flcore alone (scale runs where the reference loop is too slow)")
    p.add_argument("--no-retained-reference", action="store_true",
                   help="skip the reference run with flcore's memory setting")
    p.add_argument("--json", action="store_true", help="one JSON object per method and engine per line")
    p.add_argument("--append", default=None, metavar="FILE",
                   help="also append the JSON lines to FILE "
                        "(benchmarks/results/round_time.jsonl feeds the book's Performance page)")
    args = p.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for method in args.methods:
        if method not in METHODS:
            p.error(f"--methods: unknown method {method!r}; choose from {', '.join(METHODS)}")
    args.engines = [e.strip() for e in args.engine.split(",") if e.strip()]
    for engine in args.engines:
        if engine not in ENGINES:
            p.error(f"--engine: unknown engine {engine!r}; choose from {', '.join(ENGINES)}")
    if args.rounds < 1 or args.warmup < 0 or args.eval_repeats < 0:
        p.error("--rounds must be >= 1, --warmup and --eval-repeats >= 0")
    if args.clients < 1 or args.samples_per_client < 1 or args.test_samples < 1:
        p.error("--clients, --samples-per-client and --test-samples must be >= 1")
    if not 1 <= args.clients_per_round:
        p.error("--clients-per-round must be >= 1")
    args.clients = max(args.clients, args.clients_per_round)
    if args.protocol_rounds < 1:
        p.error("--protocol-rounds must be >= 1")
    if args.threads is not None and args.threads < 1:
        p.error("--threads must be >= 1")
    if args.chunk_size is not None and args.chunk_size < 1:
        p.error("--chunk-size must be >= 1")
    return args


# ----------------------------------------------------------------------------- shared setup

def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work so the clock measures it (no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def warn_if_busy() -> float | None:
    """Warn on stderr when the 1-minute load average shows other jobs on the machine;
    returns the load average, ``None`` where the OS does not report one."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return None
    from flcore.cpus import available_cpus
    cpus = available_cpus()
    if load > 0.5 * cpus:
        print(f"warning: load average {load:.2f} on {cpus} CPUs before the benchmark starts; "
              "other jobs will distort the timings", file=sys.stderr)
    return load


def make_data(settings: dict):
    """The synthetic CIFAR-shaped dataset and one index array per client, the same in
    every worker.  Clients hold disjoint samples while the pool fits in
    ``MAX_TRAIN_IMAGES``; beyond that they take consecutive windows of a shared pool."""
    import numpy as np

    from flcore.data import make_cifar_like

    spc, clients = settings["samples_per_client"], settings["clients"]
    num_train = min(clients * spc, max(MAX_TRAIN_IMAGES, spc))
    dataset = make_cifar_like(num_train, settings["test_samples"], NUM_CLASSES, SEED)
    order = np.random.default_rng(SEED).permutation(num_train)
    parts = [np.sort(order[(k * spc + np.arange(spc)) % num_train]) for k in range(clients)]
    return dataset, parts


def flcore_config(method: str, settings: dict, engine: str):
    """The paper-scale CIFAR-10 config of ``method`` for this benchmark."""
    from flcore.config import resolve_config

    return resolve_config(scale="paper", dataset="cifar10", model="cnn", method=method,
                          partition="iid", clients=settings["clients"],
                          per_round=settings["clients_per_round"],
                          samples_per_client=settings["samples_per_client"],
                          device=settings["device"], engine=engine, seed=SEED)


# ----------------------------------------------------------------------------- workers

class FlcoreRunner:
    """flcore's simulation: the operations the parent times."""

    def __init__(self, method: str, engine: str, settings: dict, dataset, parts, device):
        from flcore.sim.engine import Simulation
        from flcore.sim.federated_data import federated_data_from_split

        if engine == "batched-eager":
            os.environ["FLCORE_CUDA_GRAPHS"] = "0"
            engine = "batched"
        data = federated_data_from_split(dataset, parts, device)
        cfg = flcore_config(method, settings, engine)
        self.sim = Simulation(cfg, data, device, run=None, chunk_size=settings.get("chunk_size"))
        self.engine = self.sim.engine
        self.ops = {"round": self.sim.train_one_round,
                    "test_eval": lambda _: self.sim.evaluate(),
                    "client_eval": lambda _: self.sim.client_accuracy()}

    def info(self) -> dict:
        graphs = self.sim.step_graphs
        return {"engine": self.engine, "chunk_size": self.sim.chunk_size,
                "cuda_graphs": bool(graphs is not None and graphs.replays and graphs.off_reason is None),
                "cuda_graphs_off_reason": None if graphs is None else graphs.off_reason}


class ReferenceRunner:
    """The official-style loop (``reference_loop.py``), from flcore's initial model."""

    def __init__(self, method: str, settings: dict, dataset, parts, device, retained: bool):
        from reference_loop import ReferenceFL

        from flcore.sim.engine import build_initial_model

        if retained:
            from flcore.sim.cpu_memory import retain_freed_memory

            retain_freed_memory()
        cfg = flcore_config(method, settings, "sequential")
        flat, w = build_initial_model(cfg, dataset.input_shape, dataset.num_classes, torch.device("cpu"))
        self.ref = ReferenceFL(method, cfg, dataset, parts, device, flat.state_dict(w))
        self.ops = {"round": self.ref.train_one_round, "eval": lambda _: self.ref.evaluate()}

    def info(self) -> dict:
        return {}


def worker_main(conn, role: str, method: str, engine: str, settings: dict) -> None:
    """A worker process: build one implementation, then time the operations the parent
    asks for (``(op, arg)`` -> ``(seconds, cuda_peak_mb)``) until ``stop``."""
    try:
        if settings["threads"] is not None:
            torch.set_num_threads(settings["threads"])
        from flcore.devices import resolve_device

        device = resolve_device(settings["device"])
        dataset, parts = make_data(settings)
        if role == "flcore":
            runner = FlcoreRunner(method, engine, settings, dataset, parts, device)
        else:
            runner = ReferenceRunner(method, settings, dataset, parts, device,
                                     retained=role == "reference-retained")
        conn.send(("ready", runner.info()))
        while True:
            op, arg = conn.recv()
            if op == "stop":
                break
            if op == "info":
                conn.send(("done", runner.info()))
                continue
            synchronize(device)
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
            start = time.perf_counter()
            runner.ops[op](arg)
            synchronize(device)
            seconds = time.perf_counter() - start
            peak = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None
            conn.send(("done", (seconds, peak)))
    except Exception:  # reported to the parent, which raises it
        conn.send(("error", traceback.format_exc()))


class Worker:
    """The parent's handle on a worker process."""

    def __init__(self, ctx, name: str, role: str, method: str, engine: str, settings: dict):
        self.name = name
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=worker_main, args=(child, role, method, engine, settings),
                                   daemon=True)
        self.process.start()
        self.info: dict = {}

    def _reply(self):
        kind, value = self.conn.recv()
        if kind == "error":
            raise RuntimeError(f"benchmark worker {self.name!r} failed:\n{value}")
        return value

    def wait_ready(self) -> None:
        self.info = self._reply()

    def time(self, op: str, arg=None) -> tuple[float, float | None]:
        self.conn.send((op, arg))
        return self._reply()

    def refresh_info(self) -> None:
        """What the worker knows after its rounds (whether its CUDA graphs replayed)."""
        self.conn.send(("info", None))
        self.info = self._reply()

    def close(self) -> None:
        try:
            self.conn.send(("stop", None))
        except (BrokenPipeError, OSError):
            pass
        self.process.join(timeout=30)
        if self.process.is_alive():
            self.process.kill()


def interleaved(workers: list[Worker], op: str, args: list) -> dict[str, dict]:
    """Time ``op`` on every worker for each argument in turn, the worker order reversed
    every other time; returns per worker its seconds and highest CUDA peak."""
    out = {w.name: {"seconds": [], "peak_memory_mb": None} for w in workers}
    for i, arg in enumerate(args):
        for worker in (workers if i % 2 == 0 else workers[::-1]):
            seconds, peak = worker.time(op, arg)
            out[worker.name]["seconds"].append(seconds)
            if peak is not None:
                out[worker.name]["peak_memory_mb"] = max(peak, out[worker.name]["peak_memory_mb"] or 0.0)
    return out


# ----------------------------------------------------------------------------- the floor

def round_gflop(method: str, settings: dict) -> float:
    """FLOPs of one training round, counted on one batch through flcore's model."""
    import torch.nn.functional as F
    from torch.utils.flop_counter import FlopCounterMode

    from flcore.config import grad_evals_per_step
    from flcore.models import build_model

    cfg = flcore_config(method, settings, "sequential")
    model = build_model(cfg.model, (3, 32, 32), NUM_CLASSES)
    x = torch.zeros(cfg.batch_size, 3, 32, 32)
    y = torch.zeros(cfg.batch_size, dtype=torch.long)
    with FlopCounterMode(display=False) as counter:
        F.cross_entropy(model(x), y).backward()
    per_sample = counter.get_total_flops() / cfg.batch_size
    samples = settings["clients_per_round"] * settings["samples_per_client"] * cfg.local_epochs
    return per_sample * samples * grad_evals_per_step(method) / 1e9


def peak_gflops(device: torch.device) -> tuple[float, str]:
    """The best float32 rate of a large matrix product and of a large 3x3 convolution on
    ``device`` (GFLOP/s) and which kernel gave it."""
    import torch.nn.functional as F

    def rate(fn, flop: float, repeats: int) -> float:
        fn()
        synchronize(device)
        start = time.perf_counter()
        for _ in range(repeats):
            fn()
        synchronize(device)
        return flop * repeats / (time.perf_counter() - start) / 1e9

    # On a CPU, 2048 x 2048 products already run at the BLAS's peak; larger ones only take longer.
    n = 2048 if device.type == "cpu" else 8192
    a = torch.randn(n, n, device=device)
    x = torch.randn(64 if device.type == "cpu" else 1024, 256, 14, 14, device=device)
    x = x.contiguous(memory_format=torch.channels_last)
    w = torch.randn(256, 256, 3, 3, device=device)
    conv_flop = 2 * x.shape[0] * 256 * 256 * 9 * 14 * 14
    repeats = 3 if device.type == "cpu" else 20
    with torch.no_grad():
        rates = {"matmul": rate(lambda: a @ a, 2 * n ** 3, repeats),
                 "conv3x3": rate(lambda: F.conv2d(x, w, padding=1), conv_flop, repeats)}
    best = max(rates, key=rates.get)
    return rates[best], best


# ----------------------------------------------------------------------------- protocol

def protocol_counts(settings: dict, rounds: int) -> tuple[int, int]:
    """Evaluations and per-client-accuracy evaluations flcore does in ``rounds`` rounds
    of the paper's schedule (the reference evaluates at the same rounds)."""
    from dataclasses import replace

    from flcore.record_format import is_evaluation_round

    cfg = replace(flcore_config("fedavg", settings, "sequential"), rounds=rounds)
    evaluations = sum(is_evaluation_round(t, cfg) for t in range(1, rounds + 1))
    client_evaluations = sum(t % cfg.eval_every == 0 or t == rounds for t in range(1, rounds + 1))
    return evaluations, client_evaluations


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


# ----------------------------------------------------------------------------- one method

def benchmark_method(method: str, args, settings: dict, device: torch.device) -> list[dict]:
    """Time every engine of ``method`` against the reference; one row per engine."""
    ctx = multiprocessing.get_context("spawn")
    workers = [Worker(ctx, f"flcore/{e}", "flcore", method, e, settings) for e in args.engines]
    if not args.no_reference:
        workers.append(Worker(ctx, "reference", "reference", method, "sequential", settings))
        if not args.no_retained_reference:
            workers.append(Worker(ctx, "reference-retained", "reference-retained", method,
                                  "sequential", settings))
    try:
        for worker in workers:
            worker.wait_ready()
        interleaved(workers, "round", list(range(args.warmup)))
        rounds = interleaved(workers, "round", list(range(args.warmup, args.warmup + args.rounds)))
        evals: dict[str, dict] = {}
        if args.eval_repeats:
            ours = [w for w in workers if w.name.startswith("flcore/")]
            theirs = [w for w in workers if not w.name.startswith("flcore/")]
            evals["test_eval"] = interleaved(ours, "test_eval", [None] * (args.eval_repeats + 1))
            evals["client_eval"] = interleaved(ours, "client_eval", [None] * args.eval_repeats)
            if theirs:
                evals["eval"] = interleaved(theirs, "eval", [None] * args.eval_repeats)
        for worker in workers:
            worker.refresh_info()
    finally:
        for worker in workers:
            worker.close()

    def rate(name: str) -> float | None:
        return args.rounds / sum(rounds[name]["seconds"]) if name in rounds else None

    def eval_seconds(kind: str, name: str, skip_first: bool = False) -> float | None:
        if kind not in evals or name not in evals[kind]:
            return None
        seconds = evals[kind][name]["seconds"]
        return mean(seconds[1:] if skip_first else seconds)

    gflop = round_gflop(method, settings)
    peak, kernel = args.peak
    n_eval, n_client_eval = protocol_counts(settings, args.protocol_rounds)
    ref_rate, retained_rate = rate("reference"), rate("reference-retained")
    ref_eval = eval_seconds("eval", "reference")
    rows = []
    for worker in workers:
        if not worker.name.startswith("flcore/"):
            continue
        name = worker.name
        flcore_rate = rate(name)
        test_eval = eval_seconds("test_eval", name, skip_first=True)
        client_eval = eval_seconds("client_eval", name)
        flcore_protocol = reference_protocol = None
        if test_eval is not None:
            flcore_protocol = (args.protocol_rounds / flcore_rate + n_eval * test_eval
                               + n_client_eval * client_eval)
        if ref_rate is not None and ref_eval is not None:
            reference_protocol = args.protocol_rounds / ref_rate + n_eval * ref_eval
        floor_s = gflop / peak
        rows.append({
            "method": method,
            "device": str(device),
            "machine": machine_description(device),
            "engine": worker.info["engine"],
            "engine_requested": name.split("/", 1)[1],
            "chunk_size": worker.info.get("chunk_size"),
            "cuda_graphs": worker.info.get("cuda_graphs", False),
            "cuda_graphs_off_reason": worker.info.get("cuda_graphs_off_reason"),
            "flcore_rounds_per_s": flcore_rate,
            "flcore_s_per_round": 1 / flcore_rate,
            "reference_rounds_per_s": ref_rate,
            "reference_s_per_round": None if ref_rate is None else 1 / ref_rate,
            "ratio": None if ref_rate is None else flcore_rate / ref_rate,
            "reference_retained_rounds_per_s": retained_rate,
            "ratio_vs_retained_reference": None if retained_rate is None else flcore_rate / retained_rate,
            "flcore_round_seconds": rounds[name]["seconds"],
            "reference_round_seconds": rounds.get("reference", {}).get("seconds"),
            "ratio_best": (min(rounds["reference"]["seconds"]) / min(rounds[name]["seconds"])
                           if "reference" in rounds else None),
            "flcore_test_eval_s": test_eval,
            "flcore_client_eval_s": client_eval,
            "reference_eval_s": ref_eval,
            "protocol_rounds": args.protocol_rounds,
            "protocol_evaluations": n_eval,
            "protocol_client_evaluations": n_client_eval,
            "flcore_protocol_s": flcore_protocol,
            "reference_protocol_s": reference_protocol,
            "protocol_ratio": (reference_protocol / flcore_protocol
                               if flcore_protocol and reference_protocol else None),
            "round_gflop": gflop,
            "peak_gflops": peak,
            "peak_kernel": kernel,
            "floor_s_per_round": floor_s,
            "over_floor": (1 / flcore_rate) / floor_s,
            "rounds_timed": args.rounds,
            "warmup_rounds": args.warmup,
            "clients": settings["clients"],
            "clients_per_round": settings["clients_per_round"],
            "samples_per_client": settings["samples_per_client"],
            "test_samples": settings["test_samples"],
            "threads": settings["threads"] or torch.get_num_threads(),
            "torch_version": torch.__version__,
            "peak_memory_mb": rounds[name]["peak_memory_mb"],
            "reference_peak_memory_mb": rounds.get("reference", {}).get("peak_memory_mb"),
        })
    return rows


# ----------------------------------------------------------------------------- output

def format_table(rows: list[dict]) -> str:
    """The human-readable table of result rows."""
    def num(value, fmt):
        return "-" if value is None else format(value, fmt)

    header = ("method", "device", "engine", "flcore r/s", "reference r/s", "ratio",
              "vs retained", "protocol ratio", "s/round", "over floor")
    lines = [header]
    for r in rows:
        lines.append((r["method"], r["device"], r["engine"], num(r["flcore_rounds_per_s"], ".3f"),
                      num(r["reference_rounds_per_s"], ".3f"), num(r["ratio"], ".2f"),
                      num(r["ratio_vs_retained_reference"], ".2f"), num(r["protocol_ratio"], ".2f"),
                      num(r["flcore_s_per_round"], ".3f"), num(r["over_floor"], ".2f")))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    first = rows[0] if rows else {}
    out.append(f"({first.get('rounds_timed')} timed rounds after {first.get('warmup_rounds')} "
               f"warm-up, {first.get('threads')} threads, torch {torch.__version__}; floor at "
               f"{first.get('peak_gflops', 0):.0f} GFLOP/s ({first.get('peak_kernel')}); protocol "
               f"{first.get('protocol_rounds')} rounds with {first.get('protocol_evaluations')} evaluations)")
    return "\n".join(out)


def machine_description(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    from flcore.cpus import available_cpus
    return f"CPU, {available_cpus()} cores"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # reference_loop, in workers too
    from flcore.devices import resolve_device

    device = resolve_device(args.device)
    load = warn_if_busy()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    settings = {"device": device.type, "threads": args.threads, "clients": args.clients,
                "clients_per_round": args.clients_per_round,
                "samples_per_client": args.samples_per_client, "test_samples": args.test_samples,
                "chunk_size": args.chunk_size}
    args.peak = peak_gflops(device)
    rows = []
    for method in args.methods:
        for row in benchmark_method(method, args, settings, device):
            row["load_average_at_start"] = load
            row["date"] = time.strftime("%Y-%m-%d")
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
    if not args.json:
        print(format_table(rows))
    if args.append:
        Path(args.append).parent.mkdir(parents=True, exist_ok=True)
        with open(args.append, "a") as out:
            for row in rows:
                out.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
