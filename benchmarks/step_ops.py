"""Operations dispatched per local step, host reads per round and seconds per round:
this tree against an earlier commit, in one invocation.

    python benchmarks/step_ops.py --compare 62325e6 --device cpu --json \\
        --append benchmarks/results/step_ops.jsonl

Each implementation runs in its own process (``PYTHONPATH`` = its source tree; the earlier
commit is unpacked with ``git archive`` into a temporary folder) on the paper-scale CIFAR-10
protocol of ``round_time.py`` (synthetic CIFAR-shaped data, the CNN, 5 of 100 clients per
round, 500 samples each, batch 64; ``--clients`` and ``--samples-per-client`` shrink the
pool and the rounds, not a step).  Per method and engine it reports:

- ``ops_per_step``: aten operations dispatched during one local step (a
  ``TorchDispatchMode`` counter; on a GPU each is at least one kernel launch), the second
  step of a round;
- ``host_reads_per_round``: calls of ``Tensor.item/tolist/cpu/numpy/__bool__/__float__/
  __int__/nonzero`` during one round, of which ``host_reads_in_steps`` inside local steps
  (on the CPU these include reads of host tensors, such as the round's draws);
- ``s_per_round``: the best of ``--repeats`` passes of ``--rounds`` timed rounds each, the
  passes of the two implementations interleaved so a busy machine slows both alike.

``--device cuda`` runs the same on a GPU.  The rows land in ``step_ops.jsonl``, shown on the
Performance page.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST_READS = ("item", "tolist", "cpu", "numpy", "__bool__", "__float__", "__int__", "nonzero")


# ----------------------------------------------------------------------------- worker
def worker(args) -> dict:
    """Build one simulation from the tree on ``PYTHONPATH`` and measure it."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from round_time import flcore_config, make_data

    from flcore.sim.engine import Simulation
    from flcore.sim.federated_data import federated_data_from_split

    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    settings = {"clients": args.clients, "clients_per_round": 5, "samples_per_client": args.samples_per_client,
                "test_samples": 100, "device": args.device}
    dataset, parts = make_data(settings)
    data = federated_data_from_split(dataset, parts, device)
    sim = Simulation(flcore_config(args.method, settings, args.engine), data, device, run=None)

    class Ops(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.count += 1
            return func(*args, **(kwargs or {}))

    state = {"inside": False, "reads": 0, "in_steps": 0, "ops": []}

    class Steps:
        def __init__(self, inner, counting):
            self.inner, self.counting = inner, counting

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def step(self, *a, **k):
            state["inside"] = True
            try:
                if self.counting:
                    with Ops() as ops:
                        out = self.inner.step(*a, **k)
                    state["ops"].append(ops.count)
                    return out
                return self.inner.step(*a, **k)
            finally:
                state["inside"] = False

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    sim.train_one_round(0)  # warm-up
    originals = {name: getattr(torch.Tensor, name) for name in HOST_READS}

    def counted(name):
        def read(tensor, *a, **k):
            state["reads"] += 1
            state["in_steps"] += state["inside"]
            return originals[name](tensor, *a, **k)
        return read
    inner = sim.client_update
    sim.client_update = Steps(inner, counting=True)
    for name in HOST_READS:
        setattr(torch.Tensor, name, counted(name))
    try:
        sim.train_one_round(1)
    finally:
        for name, fn in originals.items():
            setattr(torch.Tensor, name, fn)
        sim.client_update = inner
    sync()
    seconds = []
    for r in range(args.rounds):
        start = time.perf_counter()
        sim.train_one_round(2 + r)
        sync()
        seconds.append(time.perf_counter() - start)
    return {"ops_per_step": state["ops"][1], "host_reads_per_round": state["reads"],
            "host_reads_in_steps": state["in_steps"], "round_seconds": seconds, "engine": sim.engine}


# ----------------------------------------------------------------------------- parent
def unpack(rev: str, into: Path) -> Path:
    """The ``flcore`` package of commit ``rev`` under ``into``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "flcore"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_worker(source: Path, method: str, engine: str, args) -> dict:
    env = {**os.environ, "PYTHONPATH": str(source)}
    cmd = [sys.executable, __file__, "--worker", "--method", method, "--engine", engine, "--device", args.device,
           "--rounds", str(args.rounds), "--threads", str(args.threads), "--clients", str(args.clients),
           "--samples-per-client", str(args.samples_per_client)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def describe_device(device: str) -> str:
    import torch

    if device == "cuda":
        return torch.cuda.get_device_name(0)
    from flcore.cpus import available_cpus
    return f"CPU, {available_cpus()} cores"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--compare", default=None, metavar="REV", help="an earlier commit to measure beside this tree")
    p.add_argument("--methods", default="fedavg,fedsam")
    p.add_argument("--engine", default="sequential,batched")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--rounds", type=int, default=2, help="timed rounds per pass (default 2)")
    p.add_argument("--repeats", type=int, default=2, help="interleaved passes per implementation (default 2)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--clients", type=int, default=100, help="clients in the pool (default 100)")
    p.add_argument("--samples-per-client", type=int, default=500,
                   help="default 500 (the papers'); fewer make shorter rounds, the same ops per step")
    p.add_argument("--json", action="store_true")
    p.add_argument("--append", default=None, metavar="FILE")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--method", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args)))
        return 0

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "flcore"], capture_output=True,
                                text=True).stdout.strip())
    rows = []
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None  # a busy machine slows every pass
    with contextlib.ExitStack() as stack:
        sources = {"this tree": ROOT}
        if args.compare:
            sources[args.compare] = unpack(args.compare, Path(stack.enter_context(tempfile.TemporaryDirectory())))
        for method in args.methods.split(","):
            for engine in args.engine.split(","):
                results: dict[str, list[dict]] = {name: [] for name in sources}
                for _ in range(args.repeats):
                    for name, source in sources.items():
                        results[name].append(run_worker(source, method, engine, args))
                best = {name: min(min(r["round_seconds"]) for r in res) for name, res in results.items()}
                for name, res in results.items():
                    row = {"method": method, "engine": res[0]["engine"], "device": args.device,
                           "machine": describe_device(args.device),
                           "implementation": (f"{commit}{'+' if dirty else ''}" if name == "this tree" else name),
                           "ops_per_step": res[0]["ops_per_step"],
                           "host_reads_per_round": res[0]["host_reads_per_round"],
                           "host_reads_in_steps": res[0]["host_reads_in_steps"],
                           "s_per_round": best[name],
                           "round_seconds": [s for r in res for s in r["round_seconds"]],
                           "threads": args.threads, "load_average_at_start": load, "clients": args.clients,
                           "samples_per_client": args.samples_per_client, "date": datetime.date.today().isoformat()}
                    if args.compare and name == "this tree":
                        row["baseline"] = args.compare
                        row["speedup_vs_baseline"] = best[args.compare] / best[name]
                        row["ops_ratio_vs_baseline"] = results[args.compare][0]["ops_per_step"] / row["ops_per_step"]
                    rows.append(row)
                    if args.json:
                        print(json.dumps(row), flush=True)
                    else:
                        print(f"{method:8s} {row['engine']:10s} {row['implementation']:12s} "
                              f"ops/step {row['ops_per_step']:6d}  host reads/round {row['host_reads_per_round']:4d} "
                              f"(in steps {row['host_reads_in_steps']})  {row['s_per_round']:.3f} s/round", flush=True)
    if args.append:
        with open(args.append, "a") as out:
            for row in rows:
                out.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
