"""Seconds for the analysis toolkit's two heaviest jobs on the papers' CIFAR CNN.

What is measured
----------------
On the FedSAM/FedGloSS/FedGF CIFAR CNN (flcore model ``"cnn"``, 797,962 parameters,
default initialisation with seed 0) and ``--samples`` CIFAR-shaped synthetic images
(:func:`flcore.data.make_cifar_like`, normalised; default 10,000):

1. **hessian**: the top-``--k`` (5) Hessian eigenvalues of the mean cross-entropy over all
   samples by power iteration with deflation, ``--iters`` (20) iterations per eigenvalue
   and no early stop (``tol=0``), i.e. exactly ``k * iters`` = 100 Hessian-vector
   products, each a pass over the data in batches of ``--batch-size`` (1000) by double
   backward (:class:`flcore.analysis.DatasetHVP`, :func:`flcore.analysis.power_iteration`).
2. **landscape**: a ``--grid`` x ``--grid`` (21 x 21 = 441 points) loss/error surface on
   filter-normalised random directions over ``[-1, 1]^2``
   (:func:`flcore.analysis.landscape_2d`), each point a pass over the data.

``--estimate`` times only ``--estimate-hvps`` products and ``--estimate-points`` grid
points at the requested size, after one untimed warm-up of each, and extrapolates
linearly (the work is a fixed number of identical passes); the JSON then says ``"estimated": true``
and gives the measured part.  Use it where the full job would take too long (the full
size on a 2-core CPU).

Running it
----------
::

    python benchmarks/analysis_speed.py                       # full size, table
    python benchmarks/analysis_speed.py --json --samples 500  # reduced size
    python benchmarks/analysis_speed.py --estimate --json     # full size, extrapolated
    python benchmarks/analysis_speed.py --device cuda --json

JSON fields: ``device``, ``samples``, ``num_params``, ``threads``, ``torch_version``,
``batch_size``, ``estimated``, ``hessian_seconds``, ``hessian_hvps``,
``seconds_per_hvp``, ``eigenvalues`` (null when estimated), ``landscape_seconds``,
``landscape_points``, ``seconds_per_point``, ``center_loss``, and for estimates the
measured ``hessian_measured_hvps`` / ``landscape_measured_points``.  CUDA is
synchronised before each clock read.  Timings on a machine shared with other jobs vary.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import torch


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def build(samples: int, device: torch.device):
    from flcore.data import make_cifar_like, normalize
    from flcore.flat import FlatModel
    from flcore.models import build_model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        module = build_model("cnn", (3, 32, 32), 10)
    flat = FlatModel(module.to(device))
    data = make_cifar_like(samples, 10, num_classes=10, seed=0)
    x = normalize(data.train_x, data.mean, data.std).to(device)
    y = data.train_y.to(device)
    return flat, flat.flatten(), x, y


def bench_hessian(flat, w, x, y, args, device) -> dict:
    from flcore.analysis import DatasetHVP, power_iteration

    hvp = DatasetHVP(flat, w, x, y, batch_size=args.batch_size, cache_graph=False)
    total = args.k * args.iters
    if args.estimate:
        n = min(args.estimate_hvps, total)
        v = torch.randn(w.numel(), generator=torch.Generator().manual_seed(0)).to(device)
        v = hvp(v / v.norm())  # untimed warm-up (kernel selection, allocator)
        v = v / v.norm()
        _sync(device)
        start = time.perf_counter()
        for _ in range(n):
            v = hvp(v)
            v = v / v.norm()
        _sync(device)
        measured = time.perf_counter() - start
        return {"hessian_seconds": measured / n * total, "hessian_hvps": total,
                "seconds_per_hvp": measured / n, "hessian_measured_hvps": n,
                "hessian_measured_seconds": measured, "eigenvalues": None}
    _sync(device)
    start = time.perf_counter()
    result = power_iteration(hvp, k=args.k, iters=args.iters, tol=0.0, seed=0, return_vectors=False)
    _sync(device)
    seconds = time.perf_counter() - start
    return {"hessian_seconds": seconds, "hessian_hvps": result.num_hvps,
            "seconds_per_hvp": seconds / result.num_hvps, "eigenvalues": result.eigenvalues.tolist()}


def bench_landscape(flat, w, x, y, args, device) -> dict:
    from flcore.analysis import DatasetEvaluator, grid_points, landscape_2d, random_directions

    evaluator = DatasetEvaluator(flat, x, y, batch_size=args.batch_size)
    d1, d2 = random_directions(flat, w, num=2, seed=0)
    coords = grid_points(1.0, args.grid)
    total = args.grid * args.grid
    if args.estimate:
        n = min(args.estimate_points, total)
        pts = torch.cartesian_prod(coords, coords)[:n].to(device=device, dtype=w.dtype)
        W = w[None] + pts[:, :1] * d1[None] + pts[:, 1:] * d2[None]
        evaluator(W[:1])  # untimed warm-up
        _sync(device)
        start = time.perf_counter()
        evaluator(W)
        _sync(device)
        measured = time.perf_counter() - start
        return {"landscape_seconds": measured / n * total, "landscape_points": total,
                "seconds_per_point": measured / n, "landscape_measured_points": n,
                "landscape_measured_seconds": measured, "center_loss": None}
    _sync(device)
    start = time.perf_counter()
    surface = landscape_2d(evaluator, w, d1, d2, coords, coords)
    _sync(device)
    seconds = time.perf_counter() - start
    mid = args.grid // 2
    return {"landscape_seconds": seconds, "landscape_points": total, "seconds_per_point": seconds / total,
            "center_loss": float(surface.loss[mid, mid])}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=10_000, help="CIFAR-shaped samples (default 10000)")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, auto")
    p.add_argument("--k", type=int, default=5, help="eigenvalues (default 5)")
    p.add_argument("--iters", type=int, default=20, help="power iterations per eigenvalue (default 20)")
    p.add_argument("--grid", type=int, default=21, help="landscape points per axis (default 21)")
    p.add_argument("--batch-size", type=int, default=1000, help="samples per pass (default 1000)")
    p.add_argument("--parts", default="hessian,landscape", help="comma list of hessian, landscape")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    p.add_argument("--estimate", action="store_true", help="time a few passes and extrapolate")
    p.add_argument("--estimate-hvps", type=int, default=3, help="products timed with --estimate (default 3)")
    p.add_argument("--estimate-points", type=int, default=5, help="grid points timed with --estimate (default 5)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          ("cpu" if args.device == "auto" else args.device))
    parts = [s.strip() for s in args.parts.split(",") if s.strip()]
    if any(s not in ("hessian", "landscape") for s in parts):
        p.error(f"--parts must be a comma list of hessian, landscape; got {args.parts!r}")
    flat, w, x, y = build(args.samples, device)
    out = {"device": str(device), "samples": args.samples, "num_params": int(w.numel()),
           "threads": torch.get_num_threads(), "torch_version": torch.__version__,
           "batch_size": args.batch_size, "k": args.k, "iters": args.iters, "grid": args.grid,
           "estimated": bool(args.estimate)}
    if device.type == "cuda":
        out["gpu"] = torch.cuda.get_device_name(device)
    if "hessian" in parts:
        out.update(bench_hessian(flat, w, x, y, args, device))
        print(f"hessian done: {out['hessian_seconds']:.1f} s", file=sys.stderr)
    if "landscape" in parts:
        out.update(bench_landscape(flat, w, x, y, args, device))
    if args.json:
        print(json.dumps(out, sort_keys=True))
    else:
        tag = " (estimated)" if args.estimate else ""
        print(f"CIFAR CNN ({out['num_params']:,} params), {args.samples} samples, {device}, "
              f"{out['threads']} threads, batch {args.batch_size}")
        if "hessian_seconds" in out:
            print(f"top-{args.k} eigenvalues, {args.iters} power iterations each: "
                  f"{out['hessian_seconds']:.1f} s{tag} ({out['seconds_per_hvp']:.2f} s per HVP)")
        if "landscape_seconds" in out:
            print(f"{args.grid}x{args.grid} landscape: {out['landscape_seconds']:.1f} s{tag} "
                  f"({out['seconds_per_point']:.3f} s per point)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
