"""Rounds per second of flcore's engine against a reference loop written like the official
FedSAM code, for FedAvg and FedSAM, measured in one run on one machine.

What is measured
----------------
The wall-clock time of one federated round (local training of the sampled clients plus
the server's weighted average; no evaluation) on the FedSAM paper's CIFAR CNN (flcore
model ``"cnn"``, 797,962 parameters) with CIFAR-shaped synthetic data
(:func:`flcore.data.make_cifar_like`).  Protocol, the paper's CIFAR-10 setting:

- 5 clients per round (``--clients-per-round``), each holding 500 samples
  (``--samples-per-client``), drawn from a pool of 20 clients (the per-round work does
  not depend on the pool size; a small pool keeps memory small);
- 1 local epoch, batch 64 (8 steps per client, the last a partial batch of 52), client
  SGD with lr 0.01 and weight decay 4e-4, no momentum; FedSAM with rho 0.1;
- training augmentation: random crop with padding 4, horizontal flip, normalisation.

Each implementation runs ``--warmup`` untimed rounds, then ``--rounds`` timed rounds;
the rate is ``rounds / total seconds`` (CUDA is synchronised before the clock is read).
The timed rounds of the two implementations are interleaved (round t of both before
round t + 1, the order alternating), so that drifting clock speeds or other jobs on a
shared machine slow both alike and the ratio stays meaningful.  Both use the same
synthetic tensors, client partition, client count and batch size, and the same
``torch.set_num_threads`` setting (torch's default unless ``--threads``).

The two implementations
-----------------------
1. **flcore**: :class:`flcore.sim.engine.Simulation` and its ``train_one_round``, with the
   engine chosen by ``--engine`` (``auto`` lets flcore pick: one client at a time on a
   CPU, all clients batched with ``vmap`` on a GPU).  The data are a hand-built
   :class:`flcore.sim.federated_data.FederatedData` on the device.
2. **reference**: a sequential loop shaped like the official FedSAM code
   (``debcaldarola/fedsam``): clients train one at a time; each gets a copy of the global
   ``nn.Module`` (``copy.deepcopy``; the official code loads the global ``state_dict``
   into a shared model and deep-copies the trained ``state_dict``, the same copying
   work), a ``torch.utils.data.DataLoader(batch_size=64, shuffle=True, num_workers=0)``
   over a per-client ``Dataset`` whose ``__getitem__`` applies torchvision transforms to
   one sample at a time (``RandomCrop(32, padding=4)``, ``RandomHorizontalFlip()``,
   ``Normalize``; the official code goes through PIL and ``ToTensor``, here the images
   stay tensors), ``torch.optim.SGD(lr, weight_decay)``, ``loss.item()`` every step, and
   for FedSAM the official two-pass SAM step (backward; global gradient norm;
   ``e = rho * g / (norm + 1e-16)``; ``p += e``; zero grads; second forward/backward at
   the perturbed point; ``p -= e``; ``optimizer.step()``).  The server then averages the
   clients' ``state_dict``s weighted by their sample counts into the global model.
   This is the cost a user of the official code pays per round, so the ratio says what
   flcore's design (flat parameters, data on the device, batched augmentation, optional
   ``vmap`` over clients) buys on this machine.

Running it
----------
::

    python benchmarks/round_time.py            # human table
    python benchmarks/round_time.py --json     # one JSON object per method and line
    python benchmarks/round_time.py --methods fedsam --device cuda --rounds 20 --engine batched

JSON fields: ``method``, ``device``, ``engine`` (the engine flcore ran),
``engine_requested``, ``flcore_rounds_per_s``, ``flcore_s_per_round``,
``reference_rounds_per_s``, ``reference_s_per_round``, ``ratio`` (flcore / reference),
``flcore_round_seconds`` and ``reference_round_seconds`` (each timed round, to judge the
noise), ``ratio_best`` (the reference's fastest round over flcore's fastest: the ratio
least disturbed by other jobs), ``rounds_timed``, ``warmup_rounds``, ``clients_per_round``,
``samples_per_client``, ``threads``, ``torch_version``, ``peak_memory_mb`` (CUDA max
allocated memory during flcore's timed rounds, null on CPU) and
``reference_peak_memory_mb`` (the same for the reference), ``load_average_at_start``
(the 1-minute load average before any work; well above 0 means other jobs were running
and the numbers are suspect: on a small machine a busy neighbour oversubscribes torch's
threads and can slow a round many times over).
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torchvision import transforms

from flcore.config import resolve_config
from flcore.data import make_cifar_like, normalize, partition_iid
from flcore.models import build_model
from flcore.sim.engine import Simulation, resolve_device
from flcore.sim.federated_data import FederatedData

#: Clients in the pool the sampled clients are drawn from.
POOL_CLIENTS = 20
NUM_CLASSES = 10
NUM_TEST = 1000
SEED = 0
METHODS = ("fedavg", "fedsam")


# ----------------------------------------------------------------------------- arguments

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--methods", default=",".join(METHODS),
                   help="comma-separated methods to measure (default: fedavg,fedsam)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--engine", default="auto", choices=("auto", "sequential", "batched"),
                   help="flcore engine (auto: flcore picks by device)")
    p.add_argument("--rounds", type=int, default=3, help="timed rounds (default 3)")
    p.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch.set_num_threads for both implementations (default: torch's)")
    p.add_argument("--clients-per-round", type=int, default=5)
    p.add_argument("--samples-per-client", type=int, default=500)
    p.add_argument("--json", action="store_true", help="one JSON object per method per line")
    p.add_argument("--append", default=None, metavar="FILE",
                   help="also append the JSON lines, with the date and machine, to FILE "
                        "(benchmarks/results/round_time.jsonl feeds the book's Performance page)")
    args = p.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for method in args.methods:
        if method not in METHODS:
            p.error(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    if args.rounds < 1 or args.warmup < 0:
        p.error("--rounds must be >= 1 and --warmup >= 0")
    if not 1 <= args.clients_per_round <= POOL_CLIENTS:
        p.error(f"--clients-per-round must be in 1..{POOL_CLIENTS}")
    if args.samples_per_client < 1:
        p.error("--samples-per-client must be >= 1")
    if args.threads is not None and args.threads < 1:
        p.error("--threads must be >= 1")
    return args


# ----------------------------------------------------------------------------- timing

def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work so the clock measures it (no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def warn_if_busy() -> float | None:
    """Warn on stderr when the 1-minute load average shows other jobs on the machine
    (with torch's threads oversubscribed, a round can take many times longer); returns
    the load average, ``None`` where the OS does not report one."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return None
    cpus = os.cpu_count() or 1
    if load > 0.5 * cpus:
        print(f"warning: load average {load:.2f} on {cpus} CPUs before the benchmark starts; "
              "other jobs will distort the timings", file=sys.stderr)
    return load


def reset_peak_memory(device: torch.device) -> None:
    """Start a fresh CUDA peak-memory window (no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def peak_memory_mb(device: torch.device) -> float | None:
    """CUDA max allocated memory since the last reset, in MiB; ``None`` on CPU."""
    if device.type != "cuda":
        return None
    return torch.cuda.max_memory_allocated(device) / 2**20


def time_one_round(run_round: Callable[[int], object], round: int,
                   device: torch.device) -> tuple[float, float | None]:
    """Seconds taken by ``run_round(round)`` and the CUDA peak memory during it."""
    synchronize(device)
    reset_peak_memory(device)
    start = time.perf_counter()
    run_round(round)
    synchronize(device)
    return time.perf_counter() - start, peak_memory_mb(device)


def time_interleaved(runners: dict[str, Callable[[int], object]], warmup: int, rounds: int,
                     device: torch.device) -> dict[str, dict]:
    """Run every runner for ``warmup`` untimed rounds, then time ``rounds`` rounds of each,
    interleaved (round t of every runner before round t + 1 of any, the order reversed
    every other round) so that a machine whose speed drifts, or that other jobs share,
    slows them alike.  Returns, per runner, its per-round seconds and peak memory."""
    for t in range(warmup):
        for run_round in runners.values():
            run_round(t)
    results = {name: {"round_seconds": [], "peak_memory_mb": None} for name in runners}
    names = list(runners)
    for i, t in enumerate(range(warmup, warmup + rounds)):
        for name in (names if i % 2 == 0 else names[::-1]):
            seconds, peak = time_one_round(runners[name], t, device)
            results[name]["round_seconds"].append(seconds)
            if peak is not None:
                results[name]["peak_memory_mb"] = max(peak, results[name]["peak_memory_mb"] or 0.0)
    return results


# ----------------------------------------------------------------------------- data

def make_data(samples_per_client: int):
    """The synthetic CIFAR-shaped dataset and its iid split over ``POOL_CLIENTS`` clients
    (a list of index arrays), shared by both implementations."""
    dataset = make_cifar_like(POOL_CLIENTS * samples_per_client, NUM_TEST, NUM_CLASSES, SEED)
    parts = partition_iid(dataset.train_y.numpy(), POOL_CLIENTS, samples_per_client, seed=SEED)
    return dataset, parts


def build_federated_data(dataset, parts, device: torch.device) -> FederatedData:
    """flcore's view of ``dataset``: unnormalised train images, normalised test images and
    one index tensor per client, all on ``device``."""
    test_x = normalize(dataset.test_x, dataset.mean, dataset.std)
    return FederatedData(
        train_x=dataset.train_x.to(device),
        train_y=dataset.train_y.to(device),
        test_x=test_x.to(device),
        test_y=dataset.test_y.to(device),
        client_indices=[torch.as_tensor(p, dtype=torch.long).to(device) for p in parts],
        num_classes=dataset.num_classes,
        augment=dataset.augment,
        mean=dataset.mean,
        std=dataset.std,
    )


# ----------------------------------------------------------------------------- flcore

def flcore_config(method: str, args: argparse.Namespace, device: torch.device):
    """The paper-scale CIFAR-10 config of ``method`` for this benchmark."""
    return resolve_config(scale="paper", dataset="cifar10", model="cnn", method=method,
                          partition="iid", clients=POOL_CLIENTS,
                          per_round=args.clients_per_round,
                          samples_per_client=args.samples_per_client,
                          device=device.type, engine=args.engine, seed=SEED)


def build_simulation(method: str, args, data: FederatedData, device: torch.device) -> Simulation:
    """flcore's simulation of ``method`` on ``data`` (no run store: nothing is written)."""
    return Simulation(flcore_config(method, args, device), data, device, run=None)


# ----------------------------------------------------------------------------- reference

class ClientDataset(torch.utils.data.Dataset):
    """One client's images and labels; ``__getitem__`` augments one sample at a time, as
    the official code's ``ClientDataset`` does."""

    def __init__(self, images: torch.Tensor, labels: torch.Tensor, transform: Callable):
        self.images = images
        self.labels = labels.tolist()
        self.transform = transform

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, idx: int):
        return self.transform(self.images[idx]), self.labels[idx]


def train_transform(mean, std) -> Callable:
    """The CIFAR training transform of the official code, on tensor images in [0, 1]."""
    return transforms.Compose([
        transforms.RandomCrop(32, padding=4),
        transforms.RandomHorizontalFlip(),
        transforms.Normalize(mean, std),
    ])


def sam_step(model: nn.Module, optimizer: torch.optim.Optimizer, x, y, rho: float) -> torch.Tensor:
    """One SAM step in the official two-pass form; returns the loss at the iterate."""
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    params = [p for p in model.parameters() if p.grad is not None]
    with torch.no_grad():
        grad_norm = torch.norm(torch.stack([torch.norm(p.grad, p=2) for p in params]), p=2)
        scale = rho / (grad_norm + 1e-16)
        perturbations = [p.grad * scale for p in params]
        for p, e in zip(params, perturbations):
            p.add_(e)
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    with torch.no_grad():
        for p, e in zip(params, perturbations):
            p.sub_(e)
    optimizer.step()
    optimizer.zero_grad()
    return loss


def sgd_step(model: nn.Module, optimizer: torch.optim.Optimizer, x, y) -> torch.Tensor:
    """One plain SGD step (FedAvg's client); returns the loss."""
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


class OfficialCNN(torch.nn.Module):
    """The CIFAR CNN exactly as the official code writes it (conv -> ReLU -> max-pool,
    default channels-first layout), so layout and order choices flcore makes count in
    the ratio and are not given to the reference for free."""

    def __init__(self, num_classes: int):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 64, 5)
        self.conv2 = torch.nn.Conv2d(64, 64, 5)
        self.fc1 = torch.nn.Linear(1600, 384)
        self.fc2 = torch.nn.Linear(384, 192)
        self.fc3 = torch.nn.Linear(192, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class ReferenceFL:
    """FedAvg / FedSAM written the way the official FedSAM code runs a round."""

    def __init__(self, method: str, cfg, dataset, parts, device: torch.device):
        self.method = method
        self.cfg = cfg
        self.device = device
        transform = train_transform(dataset.mean, dataset.std)
        self.clients = [ClientDataset(dataset.train_x[p], dataset.train_y[p], transform)
                        for p in parts]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(SEED)
            model = OfficialCNN(dataset.num_classes)
            model.load_state_dict(build_model(cfg.model, dataset.input_shape, dataset.num_classes).state_dict())
        self.model = model.to(device)

    def select_clients(self, round: int) -> list[int]:
        """``per_round`` distinct clients, seeded by the round as the official code does."""
        rng = np.random.RandomState(round)
        return rng.choice(len(self.clients), self.cfg.per_round, replace=False).tolist()

    def train_client(self, client: ClientDataset) -> tuple[int, dict]:
        """Local training of one client from the global model; ``(samples, state_dict)``."""
        model = copy.deepcopy(self.model)
        model.train()
        loader = torch.utils.data.DataLoader(client, batch_size=self.cfg.batch_size,
                                             shuffle=True, num_workers=0)
        optimizer = torch.optim.SGD(model.parameters(), lr=self.cfg.lr,
                                    weight_decay=self.cfg.weight_decay)
        running_loss = 0.0
        for _ in range(self.cfg.local_epochs):
            for x, y in loader:
                x, y = x.to(self.device), y.to(self.device)
                if self.method == "fedsam":
                    loss = sam_step(model, optimizer, x, y, self.cfg.rho)
                else:
                    loss = sgd_step(model, optimizer, x, y)
                running_loss += loss.item()
        return len(client), model.state_dict()

    def aggregate(self, updates: list[tuple[int, dict]]) -> None:
        """Load the sample-weighted average of the clients' state_dicts into the model."""
        total = sum(n for n, _ in updates)
        averaged = {key: sum(n * state[key] for n, state in updates) / total
                    for key in updates[0][1]}
        self.model.load_state_dict(averaged)

    def train_one_round(self, round: int) -> None:
        """Sample clients, train them one after the other, average their models."""
        updates = [self.train_client(self.clients[k]) for k in self.select_clients(round)]
        self.aggregate(updates)


def benchmark_method(method: str, args, dataset, parts, data: FederatedData,
                     device: torch.device) -> dict:
    """Time both implementations of ``method``, interleaved; one result row."""
    sim = build_simulation(method, args, data, device)
    ref = ReferenceFL(method, flcore_config(method, args, device), dataset, parts, device)
    timed = time_interleaved({"flcore": sim.train_one_round, "reference": ref.train_one_round},
                             args.warmup, args.rounds, device)
    ours, theirs = timed["flcore"], timed["reference"]
    flcore_s = sum(ours["round_seconds"])
    reference_s = sum(theirs["round_seconds"])
    flcore_rate = args.rounds / flcore_s
    reference_rate = args.rounds / reference_s
    return {
        "method": method,
        "device": str(device),
        "engine": sim.engine,
        "engine_requested": args.engine,
        "flcore_rounds_per_s": flcore_rate,
        "flcore_s_per_round": flcore_s / args.rounds,
        "reference_rounds_per_s": reference_rate,
        "reference_s_per_round": reference_s / args.rounds,
        "ratio": flcore_rate / reference_rate,
        "flcore_round_seconds": ours["round_seconds"],
        "reference_round_seconds": theirs["round_seconds"],
        "ratio_best": min(theirs["round_seconds"]) / min(ours["round_seconds"]),
        "rounds_timed": args.rounds,
        "warmup_rounds": args.warmup,
        "clients_per_round": args.clients_per_round,
        "samples_per_client": args.samples_per_client,
        "threads": torch.get_num_threads(),
        "torch_version": torch.__version__,
        "peak_memory_mb": ours["peak_memory_mb"],
        "reference_peak_memory_mb": theirs["peak_memory_mb"],
    }


def format_table(rows: list[dict]) -> str:
    """The human-readable table of result rows."""
    header = ("method", "device", "engine", "flcore r/s", "reference r/s", "ratio",
              "flcore s/round")
    lines = [header]
    for r in rows:
        lines.append((r["method"], r["device"], r["engine"],
                      f"{r['flcore_rounds_per_s']:.3f}", f"{r['reference_rounds_per_s']:.3f}",
                      f"{r['ratio']:.2f}x", f"{r['flcore_s_per_round']:.3f}"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    first = rows[0] if rows else {}
    out.append(f"({first.get('rounds_timed')} timed rounds after {first.get('warmup_rounds')} "
               f"warm-up, {first.get('threads')} threads, torch {torch.__version__})")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    load = warn_if_busy()
    dataset, parts = make_data(args.samples_per_client)
    data = build_federated_data(dataset, parts, device)
    rows = []
    for method in args.methods:
        row = benchmark_method(method, args, dataset, parts, data, device)
        row["load_average_at_start"] = load
        row["date"] = time.strftime("%Y-%m-%d")
        row["machine"] = machine_description(device)
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


def machine_description(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU, {os.cpu_count()} cores"


if __name__ == "__main__":
    sys.exit(main())
