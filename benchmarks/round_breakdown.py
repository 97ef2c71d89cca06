"""Where a CPU round of the paper's CIFAR CNN goes, against the arithmetic floor and the
reference loop: how far ``round_time.py``'s ratio can rise on this machine.

    python benchmarks/round_breakdown.py                  # human table
    python benchmarks/round_breakdown.py --json --append benchmarks/results/round_breakdown.jsonl

Same protocol as ``round_time.py`` (its ``make_data``, flcore's ``Simulation`` with the
engine flcore picks, the reference loop in its own worker process).  Per method, in one
invocation:

- ``flcore_s_per_round`` and ``reference_s_per_round``: the mean of ``--rounds`` timed
  rounds after one warm-up, flcore's and the reference's rounds interleaved;
- one further flcore round under ``torch.profiler``: the self time of each aten operation,
  summed into ``convolution`` (``mkldnn_convolution``, ``convolution_backward``),
  ``linear`` (``mm``, ``addmm``), ``pooling`` (``max_pool2d_with_indices`` and its backward)
  and ``other`` (fills, copies, ReLU, optimiser and augmentation arithmetic), each scaled
  by the unprofiled round over the profiled one (``*_s``);
- ``conv_gflop``: the convolutions' FLOPs per round (``torch.utils.flop_counter`` on one
  batch, times the round's batches and the method's gradient evaluations per step) and
  ``conv_floor_s`` = ``conv_gflop / peak_gflops`` (``round_time.peak_gflops``);
- ``round_for_2x_s`` = ``reference_s_per_round / 2``: the longest round at which flcore is
  twice as fast as the reference, and ``left_for_the_rest_s`` = ``round_for_2x_s -
  convolution_s``: the time the round's other work may take for that; negative means the
  convolutions alone, at the rate this machine's kernels reach, exceed it.

The numbers say whether a ratio of 2 is within reach of anything flcore controls: the
convolution kernels are oneDNN's, the same for both implementations, so where
``left_for_the_rest_s`` is smaller than ``pooling_s + linear_s`` it takes faster
convolution kernels, not less work around them.
"""
from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import round_time  # noqa: E402
from provenance import append_row, emit, git_commit  # noqa: E402

CATEGORIES = {
    "convolution": ("aten::mkldnn_convolution", "aten::convolution_backward",
                    "aten::_convolution_depthwise2d", "aten::slow_conv2d_forward",
                    "aten::_slow_conv2d_backward"),
    "linear": ("aten::mm", "aten::addmm", "aten::bmm"),
    "pooling": ("aten::max_pool2d_with_indices", "aten::max_pool2d_with_indices_backward"),
}
CONV_OPS = ("convolution", "convolution_backward")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--methods", default="fedavg,fedsam", help="comma-separated (fedavg, fedsam)")
    p.add_argument("--rounds", type=int, default=3, help="timed rounds per implementation (default 3)")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    p.add_argument("--json", action="store_true", help="one JSON object per method")
    p.add_argument("--append", default=None, metavar="FILE", help="also append the rows to FILE")
    args = p.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for method in args.methods:
        if method not in round_time.METHODS:
            p.error(f"--methods: unknown method {method!r}; choose from {', '.join(round_time.METHODS)}")
    if args.rounds < 1:
        p.error("--rounds must be >= 1")
    if args.threads is not None and args.threads < 1:
        p.error("--threads must be >= 1")
    return args


def conv_gflop(method: str, settings: dict) -> float:
    """The convolutions' FLOPs in one training round (forward and backward)."""
    import torch.nn.functional as F
    from torch.utils.flop_counter import FlopCounterMode

    from flcore.config import grad_evals_per_step
    from flcore.models import build_model

    cfg = round_time.flcore_config(method, settings, "sequential")
    model = build_model(cfg.model, (3, 32, 32), round_time.NUM_CLASSES)
    x = torch.zeros(cfg.batch_size, 3, 32, 32)
    y = torch.zeros(cfg.batch_size, dtype=torch.long)
    with FlopCounterMode(display=False) as counter:
        F.cross_entropy(model(x), y).backward()
    counts = counter.get_flop_counts().get("Global", {})
    conv = sum(v for op, v in counts.items() if str(op).split(".")[1] in CONV_OPS)
    samples = settings["clients_per_round"] * settings["samples_per_client"] * cfg.local_epochs
    return conv / cfg.batch_size * samples * grad_evals_per_step(method) / 1e9


def profiled_categories(step) -> tuple[dict[str, float], float]:
    """Self seconds per category of one call of ``step`` under the profiler, and its wall time."""
    from torch.profiler import ProfilerActivity, profile

    start = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    wall = time.perf_counter() - start
    totals = dict.fromkeys([*CATEGORIES, "other"], 0.0)
    for event in prof.key_averages():
        category = next((c for c, names in CATEGORIES.items() if event.key in names), "other")
        totals[category] += event.self_cpu_time_total / 1e6
    return totals, wall


def breakdown(method: str, args, settings: dict, peak: tuple[float, str]) -> dict:
    """One method's row (module docstring)."""
    device = torch.device("cpu")
    dataset, parts = round_time.make_data(settings)
    flcore = round_time.FlcoreRunner(method, "auto", settings, dataset, parts, device)
    ctx = multiprocessing.get_context("spawn")
    reference = round_time.Worker(ctx, "reference", "reference", method, "sequential", settings)
    try:
        reference.wait_ready()
        ours, theirs = [], []
        for t in range(args.rounds + 1):
            start = time.perf_counter()
            flcore.ops["round"](t)
            seconds = time.perf_counter() - start
            ref_seconds, _ = reference.time("round", t)
            if t:  # the first is the warm-up
                ours.append(seconds)
                theirs.append(ref_seconds)
    finally:
        reference.close()
    s_round, ref_round = sum(ours) / len(ours), sum(theirs) / len(theirs)
    totals, wall = profiled_categories(lambda: flcore.ops["round"](args.rounds + 1))
    scale = s_round / max(sum(totals.values()), 1e-12)
    parts_s = {f"{c}_s": v * scale for c, v in totals.items()}
    gflop = conv_gflop(method, settings)
    peak_rate, kernel = peak
    target = ref_round / 2
    return {
        "method": method, "device": "cpu", "machine": round_time.machine_description(device),
        "engine": flcore.engine, "flcore_s_per_round": s_round, "reference_s_per_round": ref_round,
        "ratio": ref_round / s_round, **parts_s,
        "conv_gflop": gflop, "conv_floor_s": gflop / peak_rate,
        "conv_gflops_achieved": gflop / parts_s["convolution_s"] if parts_s["convolution_s"] else None,
        "peak_gflops": peak_rate, "peak_kernel": kernel,
        "round_for_2x_s": target, "left_for_the_rest_s": target - parts_s["convolution_s"],
        "profiled_round_s": wall, "rounds_timed": args.rounds,
        "threads": torch.get_num_threads(), "torch_version": torch.__version__,
        "commit": git_commit(), "date": time.strftime("%Y-%m-%d"),
    }


def format_row(r: dict) -> str:
    return (f"{r['method']}: flcore {r['flcore_s_per_round']:.3f} s/round, reference "
            f"{r['reference_s_per_round']:.3f} (ratio {r['ratio']:.2f}x); convolutions "
            f"{r['convolution_s']:.3f} s at {r['conv_gflops_achieved']:.0f} GFLOP/s (floor "
            f"{r['conv_floor_s']:.3f} s at {r['peak_gflops']:.0f}), pooling {r['pooling_s']:.3f}, "
            f"linear {r['linear_s']:.3f}, other {r['other_s']:.3f}; 2x needs a round of "
            f"{r['round_for_2x_s']:.3f} s, leaving {r['left_for_the_rest_s']:.3f} s for all but "
            f"the convolutions")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    round_time.warn_if_busy()
    settings = {"device": "cpu", "threads": args.threads, "clients": 100, "clients_per_round": 5,
                "samples_per_client": 500, "test_samples": 10_000, "chunk_size": None}
    peak = round_time.peak_gflops(torch.device("cpu"))
    for method in args.methods:
        row = breakdown(method, args, settings, peak)
        if args.json:
            emit(row, args.append)
        else:
            print(format_row(row))
            if args.append:
                append_row(row, args.append)
    return 0


if __name__ == "__main__":
    sys.exit(main())
