"""Runs per second of a sweep trained one run at a time against the same runs batched.

What is measured
----------------
The same set of runs trained two ways, each way in its own process (``spawn``) on the
same machine in one invocation, each into a fresh run store:

- ``one-at-a-time``: the path ``ensure_runs`` took before run batching -- every run by
  :func:`flcore.api.run_experiment` in a pool of worker processes (one per core, one
  thread each; on a GPU one worker);
- ``batched``: :func:`flcore.planning.planner.plan_groups` then ``train_group`` per
  group in the same pool (runs differing in seed and alpha share one ``[R*K, P]`` batch).

The default set is the CPU case: 24 ``small`` runs (MNIST-1D, 100 clients, 5 per round,
300 rounds), FedAvg and FedSAM x alpha {0, 0.5, 1000} x seeds {0, 1, 2, 3}.  ``--gpu``
instead times 32 runs of the CIFAR-10 paper protocol (CNN, 100 rounds; FedSAM x alpha
{0, 0.05, 0.5, 1000} x 8 seeds; the CIFAR-10 files must be under ``--data-root``) and
reports the peak CUDA memory.  The data are generated (or loaded) once before the clocks
start, so neither way pays it.

Rows (``--json``: one JSON object per line): ``engine``, ``device``, ``runs``,
``runs_per_s`` and ``ratio`` (runs/s over the one-at-a-time runs/s of the same
invocation).  ``--append FILE`` also writes each row with its context (rounds, workers,
seconds, the runs' total cost -- :func:`flcore.planning.planner.run_cost` -- and the
largest group, peak memory, machine, date, model) to a JSON-lines file, read by the Performance
page and by the cost model of :mod:`flcore.reproduction.budget`.

The ceiling
-----------
Both ways compute the same gradients; batching only removes per-step overhead and runs
the kernels on larger operands.  So the run-level ratio cannot pass the ratio of the
gradient kernels themselves.  Each row also carries ``gradient_ms_per_client_step``: the
milliseconds of one client's minibatch gradient on the path that way trains with
(the engine ``auto`` picks: on a CPU the row kernel, :mod:`flcore.sim.row_engine`, for a
run's 5 clients for ``one-at-a-time`` and for all clients of the largest group at once for
``batched``; elsewhere :meth:`flcore.flat.FlatModel.grad_fn`), timed in its own
single-threaded process on the runs' model and batch size, and ``gradient_ratio``, the
one-at-a-time kernel time over this row's.  From them (:func:`gradient_fields`):

- ``gradient_share``: the fraction of the way's wall time its gradients take (the runs'
  gradient evaluations, :func:`flcore.planning.planner.run_cost`, times the kernel
  time, over the workers);
- ``ratio_ceiling``: the one-at-a-time wall time over this way's gradient time alone --
  the ratio it would reach if everything but its gradients took no time.  ``ratio`` cannot
  pass it without a faster gradient kernel.

Running it
----------
::

    python benchmarks/sweep_time.py --json --append benchmarks/results/sweep_time.jsonl
    python benchmarks/sweep_time.py --json --rounds 100          # a shorter check
"""
from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def small_runs(rounds: int) -> list[dict]:
    return [{"method": m, "dataset": "mnist1d", "scale": "small", "alpha": a, "clients": 100, "per_round": 5,
             "rounds": rounds, "seed": s}
            for m in ("fedavg", "fedsam") for a in (0.0, 0.5, 1000.0) for s in range(4)]


def gpu_runs(rounds: int, data_root: str) -> list[dict]:
    return [{"method": "fedsam", "dataset": "cifar10", "scale": "paper", "alpha": a, "rounds": rounds, "seed": s,
             "data_root": data_root, "device": "cuda"}
            for a in (0.0, 0.05, 0.5, 1000.0) for s in range(8)]


def _alone(config: dict, store: str) -> str:
    from flcore.api import run_experiment

    return run_experiment(config, store=store)["status"]


def _single_thread() -> None:
    import torch

    torch.set_num_threads(1)


def time_engine(engine: str, configs: list[dict], workers: int, device: str, out) -> None:
    """Child process: train ``configs`` one way into a fresh store, send (seconds, peak MB)."""
    import torch

    from flcore.planning.planner import plan_groups, train_groups

    if device == "cpu" and workers > 1:
        torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as store:
        started = time.perf_counter()
        if engine == "one-at-a-time":
            if workers > 1:
                from concurrent.futures import ProcessPoolExecutor

                with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_single_thread) as pool:
                    statuses = list(pool.map(_alone, configs, [store] * len(configs)))
            else:
                statuses = [_alone(c, store) for c in configs]
        else:
            groups = plan_groups(configs, device=device, workers=workers)
            statuses = [r["status"] for _, results in train_groups(groups, store, workers=workers, progress=False,
                                                                   log=None) for r in results]
        seconds = time.perf_counter() - started
    if set(statuses) - {"finished", "diverged"}:
        raise RuntimeError(f"{engine}: runs ended as {sorted(set(statuses))}")
    peak = torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() and device != "cpu" else None
    out.send((seconds, peak))


def time_gradient(engine: str, config: dict, clients: int, device: str, out, steps: int = 60) -> None:
    """Child process, one thread on a CPU: milliseconds per client-step of the gradient
    ``engine`` trains with, for ``clients`` clients of ``config``'s model and batch size."""
    import torch

    from flcore.algorithms.local import Batch
    from flcore.config import resolve_config
    from flcore.devices import resolve_device
    from flcore.flat import FlatModel
    from flcore.models import build_model
    from flcore.sim import build_federated_data

    if device == "cpu":
        torch.set_num_threads(1)
    cfg = resolve_config(config)
    dev = resolve_device(device)
    data = build_federated_data(cfg, dev)
    flat = FlatModel(build_model(cfg.model, tuple(data.train_x.shape[1:]), data.num_classes).to(dev))
    generator = torch.Generator().manual_seed(0)
    W = (flat.flatten().repeat(clients, 1)
         + 0.01 * torch.randn(clients, flat.num_params, generator=generator).to(dev))
    rows = torch.randint(0, data.train_x.shape[0], (clients, cfg.batch_size), generator=generator).to(dev)
    batch = Batch(x=data.train_x[rows], y=data.train_y[rows], weight=torch.ones(rows.shape, device=dev),
                  active=torch.ones(clients, dtype=torch.bool, device=dev))
    from flcore.sim.engine import resolve_engine
    from flcore.sim.row_engine import kernel_of, row_grad_fn

    if resolve_engine("auto", dev, cfg.model) == "rows":  # the row kernel, alone (K = 5 rows) or batched
        grad = row_grad_fn(flat, kernel_of(flat))
    else:
        grad = flat.grad_fn(batched=engine != "one-at-a-time")
    for _ in range(5):
        grad(W, batch)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(steps):
        grad(W, batch)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    out.send(((time.perf_counter() - started) / steps / clients * 1e3, None))


def gradient_fields(cost: float, gradient_ms: float, seconds: float, workers: int,
                    base_seconds: float) -> dict:
    """``gradient_share`` and ``ratio_ceiling`` (module docstring) of one way that made
    ``cost`` gradient evaluations in ``seconds`` on ``workers`` workers, against the
    one-at-a-time way's ``base_seconds``."""
    gradient_seconds = cost * gradient_ms / 1000 / workers
    return {"gradient_share": round(gradient_seconds / seconds, 3),
            "ratio_ceiling": round(base_seconds / gradient_seconds, 2)}


def _in_process(engine, configs, workers, device, target=None, args=None) -> tuple[float, float | None]:
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=target or time_engine, args=(*(args or (engine, configs, workers, device)), child))
    proc.start()
    result = parent.recv() if parent.poll(None) else None
    proc.join()
    if proc.exitcode != 0 or result is None:
        raise RuntimeError(f"the {engine} worker failed (exit {proc.exitcode})")
    return result


def machine(device: str) -> str:
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name(0)
    from flcore.cpus import available_cpus
    return f"CPU, {available_cpus()} cores"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="one JSON object per row")
    p.add_argument("--rounds", type=int, default=None, help="rounds per run (default: 300; 100 with --gpu)")
    p.add_argument("--gpu", action="store_true", help="the GPU case: 32 CIFAR-10 CNN paper-protocol runs")
    p.add_argument("--data-root", default="data", help="CIFAR-10 files for --gpu")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: cores; 1 on a GPU)")
    p.add_argument("--append", default=None, help="also append the rows with their context to this JSON-lines file")
    args = p.parse_args(argv)
    device = "cuda" if args.gpu else "cpu"
    rounds = args.rounds or (100 if args.gpu else 300)
    configs = gpu_runs(rounds, args.data_root) if args.gpu else small_runs(rounds)
    from flcore.cpus import available_cpus
    workers = args.workers or (1 if args.gpu else available_cpus())
    from flcore.config import resolve_config
    from flcore.devices import resolve_device
    from flcore.planning.planner import plan_groups, run_cost
    from flcore.sim import build_federated_data

    build_federated_data(resolve_config(configs[0]), resolve_device(device))  # generate/cache the data once
    cost = sum(run_cost(resolve_config(c)) for c in configs)
    group_runs = max(g.size for g in plan_groups(configs, device=device, workers=workers))
    per_round = resolve_config(configs[0]).per_round
    rows, base, base_gradient, base_seconds = [], None, None, None
    for engine in ("one-at-a-time", "batched"):
        seconds, peak = _in_process(engine, configs, workers, device)
        clients = per_round * (1 if engine == "one-at-a-time" else group_runs)
        gradient_ms, _ = _in_process(engine, configs, workers, device, target=time_gradient,
                                     args=(engine, configs[0], clients, device))
        runs_per_s = len(configs) / seconds
        base = base or runs_per_s
        base_gradient = base_gradient or gradient_ms
        base_seconds = base_seconds or seconds
        row = {"engine": engine, "device": device, "runs": len(configs), "runs_per_s": round(runs_per_s, 4),
               "ratio": round(runs_per_s / base, 2), "gradient_ms_per_client_step": round(gradient_ms, 4),
               "gradient_ratio": round(base_gradient / gradient_ms, 2),
               **gradient_fields(cost, gradient_ms, seconds, workers, base_seconds)}
        rows.append((row, {"rounds": rounds, "workers": workers, "seconds": round(seconds, 1), "cost": cost,
                           "group_runs": 1 if engine == "one-at-a-time" else group_runs,
                           "peak_memory_mb": None if peak is None else round(peak), "machine": machine(device),
                           "date": datetime.date.today().isoformat(),
                           "methods": sorted({c["method"] for c in configs}),
                           "model": resolve_config(configs[0]).model}))
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"{engine:<14} {device} {len(configs)} runs  {runs_per_s:.3f} runs/s  x{row['ratio']:.2f}  "
                  f"({seconds:.0f} s; gradient {gradient_ms:.3f} ms per client-step, "
                  f"x{row['gradient_ratio']:.2f}, {row['gradient_share']:.0%} of the time; "
                  f"ceiling x{row['ratio_ceiling']:.2f})", flush=True)
    if args.append:
        with open(args.append, "a") as fh:
            for row, context in rows:
                fh.write(json.dumps({**row, **context}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
