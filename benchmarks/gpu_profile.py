"""What bounds a batched round on a GPU, and what precision to train in.

Three parts, on the CIFAR-10 paper protocol of ``round_time.py`` (CNN, 100 clients of 500
CIFAR-shaped synthetic images, batch 64, one local epoch, FedSAM rho 0.1):

- ``profile``: ``torch.profiler`` over ``--rounds`` rounds after two warm-up rounds, with the
  local steps replayed from CUDA graphs and without (``FLCORE_CUDA_GRAPHS``): wall seconds
  per round, GPU seconds per round (the union of the kernels', copies' and sets' intervals),
  the GPU's busy fraction (that over wall time), kernel launches and graph launches per round
  (the host's ``cudaLaunchKernel`` and ``cudaGraphLaunch`` calls), and the five kernels
  with the most GPU time.
- ``clients``: seconds per round and peak memory at 5, 20 and 100 clients per round (and
  ``--many`` clients of 50 samples), graphs on and off.
- ``precision``: ``--precision-rounds`` rounds of FedSAM from one seed in each of
  ``fp32``, ``tf32`` and ``bf16`` (the config field ``precision``): seconds per round, test
  accuracy every 50 rounds, and the distance of the final weights from the ``fp32``
  run's, relative to how far the ``fp32`` run moved from ``w^0``.

::

    python benchmarks/gpu_profile.py --json --append benchmarks/results/gpu_profile.jsonl

Rows (one JSON object per line) carry ``part``, ``device``, ``machine``, ``torch_version``
and ``date``.  On a CPU the script runs too (for its test), without graphs.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from round_time import flcore_config, machine_description, make_data, synchronize  # noqa: E402

PARTS = ("profile", "clients", "precision")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--parts", default=",".join(PARTS), help=f"comma list of {', '.join(PARTS)}")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--methods", default="fedavg,fedsam")
    p.add_argument("--rounds", type=int, default=5, help="profiled or timed rounds (default 5)")
    p.add_argument("--clients-per-round", default="5,20,100", help="for the clients part")
    p.add_argument("--many", type=int, default=1000, help="clients of 50 samples, all in one round (0: none)")
    p.add_argument("--precision-rounds", type=int, default=300)
    p.add_argument("--clients", type=int, default=100)
    p.add_argument("--samples-per-client", type=int, default=500)
    p.add_argument("--test-samples", type=int, default=10_000)
    p.add_argument("--json", action="store_true")
    p.add_argument("--append", default=None, metavar="FILE")
    args = p.parse_args(argv)
    args.parts = [x for x in args.parts.split(",") if x]
    for part in args.parts:
        if part not in PARTS:
            p.error(f"--parts: unknown part {part!r}; choose from {', '.join(PARTS)}")
    args.methods = [m for m in args.methods.split(",") if m]
    args.per_round = [int(x) for x in args.clients_per_round.split(",") if x]
    if args.rounds < 1 or args.precision_rounds < 1 or any(k < 1 for k in args.per_round):
        p.error("--rounds, --precision-rounds and --clients-per-round must be >= 1")
    return args


def build(method: str, device: torch.device, clients: int, per_round: int, spc: int, test: int,
          graphs: bool, precision: str = "fp32"):
    from flcore.config import resolve_config
    from flcore.sim.engine import Simulation
    from flcore.sim.federated_data import federated_data_from_split

    os.environ["FLCORE_CUDA_GRAPHS"] = "1" if graphs else "0"
    settings = {"clients": clients, "clients_per_round": per_round, "samples_per_client": spc,
                "test_samples": test, "device": str(device)}
    dataset, parts = make_data(settings)
    cfg = resolve_config(**{**flcore_config(method, settings, "batched").canonical(), "precision": precision})
    return Simulation(cfg, federated_data_from_split(dataset, parts, device), device, run=None)


def timed_rounds(sim, first: int, rounds: int, device) -> float:
    synchronize(device)
    start = time.perf_counter()
    for r in range(first, first + rounds):
        sim.train_one_round(r)
    synchronize(device)
    return (time.perf_counter() - start) / rounds


def graph_state(sim) -> dict:
    g = sim.step_graphs
    return {"cuda_graphs": bool(g is not None and g.replays and g.off_reason is None),
            "cuda_graphs_off_reason": None if g is None else g.off_reason}


def busy_us(events) -> float:
    """Microseconds in which the GPU ran at least one kernel, copy or set: the union of the
    device events' intervals (an operator's device time is its kernels', so summing both
    would count them twice)."""
    from torch.autograd import DeviceType

    spans = sorted((e.time_range.start, e.time_range.end) for e in events if e.device_type == DeviceType.CUDA)
    total, end = 0.0, float("-inf")
    for lo, hi in spans:
        if hi > end:
            total += hi - max(lo, end)
            end = hi
    return total


def profile_part(args, device) -> list[dict]:
    from torch.profiler import ProfilerActivity, profile

    rows = []
    for method in args.methods:
        for graphs in (True, False):
            sim = build(method, device, args.clients, 5, args.samples_per_client, args.test_samples, graphs)
            for r in range(2):
                sim.train_one_round(r)
            synchronize(device)
            activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
            with profile(activities=activities) as prof:
                wall = timed_rounds(sim, 2, args.rounds, device)
            events = prof.key_averages()
            kernel_us = busy_us(prof.events())
            launches = sum(e.count for e in events if e.key in ("cudaLaunchKernel", "cudaLaunchKernelExC",
                                                                  "cuLaunchKernel", "cuLaunchKernelEx"))
            graph_launches = sum(e.count for e in events if e.key in ("cudaGraphLaunch", "cuGraphLaunch"))
            top = sorted((e for e in events if e.self_device_time_total > 0 and not e.key.startswith("aten::")),
                         key=lambda e: -e.self_device_time_total)[:5]
            rows.append({"part": "profile", "method": method, **graph_state(sim), "s_per_round": wall,
                         "gpu_kernel_s_per_round": kernel_us / 1e6 / args.rounds,
                         "gpu_busy_fraction": (kernel_us / 1e6 / args.rounds) / wall if wall else None,
                         "kernel_launches_per_round": launches / args.rounds,
                         "graph_launches_per_round": graph_launches / args.rounds,
                         "top_kernels": [{"name": e.key[:120], "ms_per_round": e.self_device_time_total / 1e3
                                          / args.rounds} for e in top],
                         "rounds": args.rounds, "clients_per_round": 5})
            del sim
            if device.type == "cuda":
                torch.cuda.empty_cache()
    return rows


def clients_part(args, device) -> list[dict]:
    rows = []
    shapes = [(args.clients if k <= args.clients else k, k, args.samples_per_client) for k in args.per_round]
    if args.many:
        shapes.append((args.many, args.many, 50))
    for clients, per_round, spc in shapes:
        for graphs in (True, False):
            if device.type == "cuda":
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats(device)
            sim = build("fedsam", device, clients, per_round, spc, 1000, graphs)
            sim.train_one_round(0)
            s = timed_rounds(sim, 1, args.rounds, device)
            peak = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None
            rows.append({"part": "clients", "method": "fedsam", **graph_state(sim), "clients": clients,
                         "clients_per_round": per_round, "samples_per_client": spc, "s_per_round": s,
                         "peak_memory_mb": peak, "chunk_size": sim.chunk_size, "rounds": args.rounds})
            del sim
    return rows


def precision_part(args, device) -> list[dict]:
    rows, finals = [], {}
    for precision in ("fp32", "tf32", "bf16"):
        sim = build("fedsam", device, args.clients, 5, args.samples_per_client, args.test_samples, True, precision)
        w0 = sim.w.clone()
        curve, seconds = [], 0.0
        for r in range(args.precision_rounds):
            synchronize(device)
            start = time.perf_counter()
            sim.train_one_round(r)
            synchronize(device)
            seconds += time.perf_counter() - start
            if (r + 1) % 50 == 0 or r + 1 == args.precision_rounds:
                with torch.no_grad():
                    acc, loss = sim.evaluate()
                curve.append({"round": r + 1, "test_accuracy": acc, "test_loss": loss})
        finals[precision] = (w0, sim.w.clone())
        rows.append({"part": "precision", "method": "fedsam", "precision": precision, **graph_state(sim),
                     "s_per_round": seconds / args.precision_rounds, "rounds": args.precision_rounds,
                     "curve": curve})
    w0, ref = finals["fp32"]
    moved = float((ref - w0).norm())
    for row in rows:
        w = finals[row["precision"]][1]
        row["final_distance_to_fp32"] = float((w - ref).norm())
        row["relative_distance_to_fp32"] = float((w - ref).norm()) / moved if moved else None
    return rows


def main(argv=None) -> int:
    args = parse_args(argv)
    from flcore.devices import resolve_device

    device = resolve_device(args.device)
    context = {"device": str(device), "machine": machine_description(device), "torch_version": torch.__version__,
               "date": datetime.date.today().isoformat()}
    parts = {"profile": profile_part, "clients": clients_part, "precision": precision_part}
    for part in args.parts:
        for row in parts[part](args, device):
            row = {**row, **context}
            line = json.dumps(row)
            print(line if args.json else {k: v for k, v in row.items() if k not in ("curve", "top_kernels")},
                  flush=True)
            if args.append:
                with open(args.append, "a") as fh:
                    fh.write(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
