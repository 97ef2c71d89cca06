"""Start-up of a paper-scale CIFAR-10 run: seconds from ``import flcore`` to the first
round's start, with a cold and a warm decoded-data cache.

    python benchmarks/startup.py --json                       # 50,000 + 10,000 fake images
    python benchmarks/startup.py --num-train 5000 --device cuda

Writes synthetic CIFAR-10 in torchvision's on-disk format (``write_fake_cifar``) to a
temporary folder, then runs fresh processes that import flcore, resolve the paper-scale
FedSAM config, load and partition the data (``build_federated_data``), build the
simulation and time its first round: the first with an empty cache (``cold``: the files
are unpickled and cached), the next ``--warm`` with the cache filled.  Reported per
process: ``import_s``, ``data_s`` (load + partition + device), ``simulation_s``,
``to_first_round_s`` (their sum: import to the first round's start) and
``first_round_s``, and ``after_import_s`` (data + simulation: how long after the import
training starts).  The target: training starts within 3 s of the import on a warm cache
(``after_import_s``); ``to_first_round_s`` adds the import itself, about 2 s of which is
torch's.  ``--append FILE`` adds the rows, with the machine and the date, to a JSON-lines
file the Performance page shows (``benchmarks/results/startup.jsonl``).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(args) -> dict:
    t0 = time.perf_counter()
    import torch

    import flcore
    from flcore.data.cifar import expected_checksums
    from flcore.sim import Simulation, build_federated_data
    t1 = time.perf_counter()
    cfg = flcore.resolve_config(scale="paper", dataset="cifar10", method="fedsam", data_root=args.root,
                                device=args.device, rounds=1)
    device = torch.device(args.device)
    with expected_checksums("cifar10", json.loads(args.md5s)):
        data = build_federated_data(cfg, device)
    t2 = time.perf_counter()
    sim = Simulation(cfg, data, device, None)
    t3 = time.perf_counter()
    sim.train_one_round(0)
    if device.type == "cuda":
        torch.cuda.synchronize()
    t4 = time.perf_counter()
    return {"import_s": t1 - t0, "data_s": t2 - t1, "simulation_s": t3 - t2, "to_first_round_s": t3 - t0,
            "first_round_s": t4 - t3}


def describe_machine(device: str) -> str:
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name(0)
    from flcore.cpus import available_cpus
    return f"CPU, {available_cpus()} cores"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--num-train", type=int, default=50_000)
    p.add_argument("--num-test", type=int, default=10_000)
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--warm", type=int, default=2, help="warm-cache processes (default 2)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--append", default=None, metavar="FILE", help="append the rows to this JSON-lines file")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--root", help=argparse.SUPPRESS)
    p.add_argument("--md5s", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0
    sys.path.insert(0, str(ROOT))
    from flcore.data import write_fake_cifar

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "data"
        md5s = write_fake_cifar(root, "cifar10", num_train=args.num_train, num_test=args.num_test, seed=0)
        env = {**os.environ, "FLCORE_CACHE": str(Path(tmp) / "cache"),
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        for kind in ["cold"] + ["warm"] * args.warm:
            out = subprocess.run([sys.executable, __file__, "--child", "--root", str(root), "--md5s", json.dumps(md5s),
                                  "--device", args.device], env=env, check=True, capture_output=True, text=True)
            row = {"cache": kind, "device": args.device, "machine": describe_machine(args.device),
                   "num_train": args.num_train, **json.loads(out.stdout.strip().splitlines()[-1])}
            row["after_import_s"] = row["data_s"] + row["simulation_s"]
            row["date"] = datetime.date.today().isoformat()
            if args.append:
                with open(args.append, "a") as f:
                    f.write(json.dumps(row) + "\n")
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{kind:4s} import {row['import_s']:.2f} s, data {row['data_s']:.2f} s, simulation "
                      f"{row['simulation_s']:.2f} s: first round starts at {row['to_first_round_s']:.2f} s "
                      f"(round {row['first_round_s']:.2f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
