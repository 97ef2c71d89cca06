"""The small book's throughput: a fixed sample of its runs trained by the reference loop
and by the row kernel's batched path, in one invocation on one machine.

What is measured
----------------
24 runs the small book trains (``flcore.reproduction.book_runs.book_specs``; the script
checks that every one is in the book): FedAvg, FedSAM and FedASAM at Dirichlet alpha
0 and 0.5, FedSAM+SWA at alpha 0 and FedDyn (a control-variate family) at alpha 0, three
seeds each -- MNIST-1D, 100 clients, 5 per round, 300 rounds with their evaluations.
The book's planner cuts them into groups (``plan_groups``, one worker per core), and the
same groups are trained once per engine, each engine in its own process (``spawn``) into
a fresh store, the groups on a pool of single-threaded workers as ``flcore book`` does:

- ``sequential``: the reference path -- every client row's gradient by its own forward
  and backward, one row after the other (:meth:`flcore.flat.FlatModel.grad_fn`);
- ``rows``: the ``auto`` engine on a CPU -- all rows of a round as the row kernel's
  batched matmuls, the evaluations of a group's runs in one pass
  (:mod:`flcore.sim.row_engine`);
- ``batched`` (with ``--engines``): ``vmap`` over the rows, the CPU default before ``rows``.

Each row gives the runs per second, the ratio to the reference path's, and the
arithmetic: ``gflop`` (the runs' training -- forward and both backward matmuls, three
times the forward's multiply-adds x 2 per sample -- and their test-set evaluations) and
``gflops``, its rate over the wall time, against ``matmul_gflops``: this machine's
measured single-thread ``float32`` matmul rate (1024 x 1024, best of five) times the
workers -- what the cores could do if every flop were a large matmul.

Running it
----------
::

    python benchmarks/book_throughput.py --append benchmarks/results/book_throughput.jsonl
    python benchmarks/book_throughput.py --rounds 60          # a shorter check

The rows (``--append``) name the machine, its processor, the workers, the command and
the commit.
"""
from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from provenance import git_commit  # noqa: E402  (benchmarks/, the script's folder)

#: (method, alpha) cells of the sample, three seeds each.
SAMPLE_CELLS = (("fedavg", 0.0), ("fedavg", 0.5), ("fedsam", 0.0), ("fedsam", 0.5), ("fedasam", 0.0),
                ("fedasam", 0.5), ("fedsam+swa", 0.0), ("feddyn", 0.0))
SEEDS = (0, 1, 2)
ENGINES = ("sequential", "rows", "batched")


def sample_runs(rounds: int | None = None) -> list[dict]:
    """The sample's config values (``rounds`` caps them with ``max_rounds``)."""
    cap = {} if rounds is None else {"max_rounds": rounds}
    return [{"method": m, "dataset": "mnist1d", "scale": "small", "alpha": a, "seed": s, "device": "cpu", **cap}
            for m, a in SAMPLE_CELLS for s in SEEDS]


def check_in_book(configs: list[dict]) -> None:
    """Every sample run is a run of the small book (same run id)."""
    from flcore.config import resolve_config
    from flcore.reproduction.book_runs import book_specs

    book = {spec.run_id() for spec in book_specs("small", ROOT)}
    missing = [c for c in configs if resolve_config({k: v for k, v in c.items() if k != "max_rounds"}).run_id()
               not in book]
    if missing:
        raise SystemExit(f"not runs of the small book: {missing[:3]}")


def flops(configs: list[dict]) -> float:
    """Floating-point operations of the runs' training and test evaluations (module docstring)."""
    import torch

    from flcore.config import resolve_config
    from flcore.models import build_model
    from flcore.planning.planner import run_cost
    from flcore.reproduction.budget import evaluation_counts
    from flcore.sim.federated_data import build_federated_data

    total = 0.0
    for values in configs:
        cfg = resolve_config(values)
        data = build_federated_data(cfg, torch.device("cpu"))
        macs = forward_macs(build_model(cfg.model, tuple(data.train_x.shape[1:]), data.num_classes), data)
        test, _ = evaluation_counts(cfg)
        total += 2 * macs * (3 * run_cost(cfg) * cfg.batch_size + test * data.test_x.shape[0])
    return total


def forward_macs(module, data) -> float:
    """Multiply-adds of one sample's forward pass (convolutions and linear layers)."""
    import torch

    macs = 0.0

    def count(layer, inputs, output):
        nonlocal macs
        if isinstance(layer, torch.nn.Conv1d):
            macs += output.shape[-1] * layer.out_channels * layer.in_channels * layer.kernel_size[0]
        elif isinstance(layer, torch.nn.Linear):
            macs += layer.in_features * layer.out_features

    hooks = [m.register_forward_hook(count) for m in module.modules() if isinstance(m, (torch.nn.Conv1d,
                                                                                          torch.nn.Linear))]
    with torch.no_grad():
        module(data.train_x[:1])
    for hook in hooks:
        hook.remove()
    return macs


def matmul_rate(out) -> None:
    """Child process: this machine's single-thread float32 matmul GFLOP/s (best of five)."""
    import torch

    torch.set_num_threads(1)
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    a @ b
    best = 0.0
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(10):
            a @ b
        best = max(best, 10 * 2 * 1024 ** 3 / (time.perf_counter() - started) / 1e9)
    out.send(best)


def time_engine(engine: str, groups, workers: int, out) -> None:
    """Child process: train the groups under ``engine`` into a fresh store; sends the seconds."""
    import torch

    from flcore.planning.planner import train_groups

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as store:
        started = time.perf_counter()
        statuses = [r["status"] for _, results in train_groups(groups, store, {"engine": engine},
                                                               workers=workers, progress=False, log=None)
                    for r in results]
        seconds = time.perf_counter() - started
    if set(statuses) - {"finished", "diverged", "capped"}:
        raise RuntimeError(f"{engine}: runs ended as {sorted(set(statuses))}")
    out.send(seconds)


def _in_process(target, args):
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=target, args=(*args, child))
    proc.start()
    result = parent.recv() if parent.poll(None) else None
    proc.join()
    if proc.exitcode != 0 or result is None:
        raise RuntimeError(f"{target.__name__} failed (exit {proc.exitcode})")
    return result


def _processor() -> str:
    info = Path("/proc/cpuinfo")
    for line in info.read_text(errors="replace").splitlines() if info.exists() else []:
        if line.lower().startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=None, help="cap every run at N rounds (default: the full 300)")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    p.add_argument("--engines", default="sequential,rows",
                   help=f"engines to time, the first the reference (from {', '.join(ENGINES)})")
    p.add_argument("--append", default=None, help="append the rows to this JSON-lines file")
    args = p.parse_args(argv)
    engines = [e for e in args.engines.split(",") if e]
    if not engines or set(engines) - set(ENGINES):
        p.error(f"--engines: allowed values {', '.join(ENGINES)}")

    import torch

    from flcore.config import resolve_config
    from flcore.cpus import available_cpus
    from flcore.planning.planner import plan_groups
    from flcore.sim import build_federated_data

    workers = args.workers or available_cpus()
    configs = sample_runs(args.rounds)
    check_in_book(configs)
    build_federated_data(resolve_config(configs[0]), torch.device("cpu"))  # generate/cache the data once
    groups = plan_groups(configs, device="cpu", workers=workers)
    gflop = flops(configs) / 1e9
    matmul = _in_process(matmul_rate, ()) * workers
    command = "python benchmarks/book_throughput.py " + " ".join(argv if argv is not None else sys.argv[1:])
    base = None
    rows = []
    for engine in engines:
        seconds = _in_process(time_engine, (engine, groups, workers))
        runs_per_s = len(configs) / seconds
        base = base or runs_per_s
        row = {"engine": engine, "reference": engines[0], "runs": len(configs), "groups": len(groups),
               "largest_group": max(g.size for g in groups), "rounds": args.rounds or 300, "workers": workers,
               "seconds": round(seconds, 1), "runs_per_s": round(runs_per_s, 4),
               "ratio": round(runs_per_s / base, 2), "gflop": round(gflop, 1),
               "gflops": round(gflop / seconds, 2), "matmul_gflops": round(matmul, 1),
               "share_of_matmul": round(gflop / seconds / matmul, 4),
               "machine": f"CPU, {workers} cores", "processor": _processor(), "torch": torch.__version__,
               "date": datetime.date.today().isoformat(), "commit": git_commit(), "command": command.strip()}
        rows.append(row)
        print(f"{engine:<11} {len(configs)} runs in {len(groups)} groups: {seconds:6.1f} s, {runs_per_s:.3f} runs/s,"
              f" x{row['ratio']:.2f}; {row['gflops']:.1f} GFLOP/s = {row['share_of_matmul']:.1%} of"
              f" {matmul:.0f} GFLOP/s matmul", flush=True)
    if args.append:
        with open(args.append, "a") as fh:
            for row in rows:
                fh.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
