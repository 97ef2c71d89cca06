"""``flcore analyze hessian|landscape|barrier|lpf``: the analysis tools on stored runs.

Wiring into the main CLI (``flcore/cli/main.py``)::

    from .analysis.cli import add_analyze_parser, run_analyze
    add_analyze_parser(sub)                 # in build_parser(), next to _add_run_parser(sub)
    handlers = {..., "analyze": run_analyze}  # in main()

Standalone: ``python -m flcore.cli.analyze hessian --run RUN_DIR --json``.

Every tool takes ``--run RUN_DIR`` (a run directory of the store), ``--split train|test``
(default train), ``--samples N`` (a seeded random subset; default all), ``--batch-size``,
``--seed`` (all randomness: subsets, start vectors, probes, directions, noise),
``--device auto|cpu|cuda|cuda:N``, ``--which auto|final|checkpoint`` (which stored
weights), ``--data-root`` (CIFAR folder, if not the stored one) and ``--json`` (one JSON
object on stdout; NaN/inf as null).  Values are checked before any data is loaded or
computed: a bad value prints ``invalid argument '<field>': ...`` and exits with status 2.

Every count is bounded.  The points of a curve or a surface (``--points``, ``--grid``,
``--grid`` squared in 2-D) are capped by the memory their results need
(:data:`BYTES_PER_POINT` each, at most a quarter of this machine's memory) and by the
sanity caps :data:`MAX_CURVE_POINTS` and :data:`MAX_GRID`; the counts of probes,
perturbations and iterations by :data:`MAX_ITERATIONS`; and once the model is known,
``--top-k`` (and Lanczos steps) by its number of parameters and by the memory of
``top_k`` model-sized vectors.

- ``hessian``: ``--top-k K`` eigenvalues (``eigenvalues``, largest first) by
  ``--method power`` (deflated power iteration, ``--iters`` per eigenvalue, ``--tol``) or
  ``lanczos`` (``--iters`` Lanczos steps); ``--trace`` adds ``trace`` and
  ``trace_std_error`` (Hutchinson, ``--trace-samples`` Rademacher probes); ``--density``
  adds the SLQ nodes and weights (``--density-iters`` steps).
- ``landscape``: ``--dim 2`` (default) or ``1``; ``--grid`` points per axis over
  ``[-span, span]`` (``--span``) along filter-normalised random directions
  (``--normalization``); ``--plot PNG`` saves a figure.
- ``barrier``: ``--run-b RUN_DIR``; loss and error along ``(1 - t) w_a + t w_b`` for
  ``--points`` values of ``t`` in ``[--t-min, --t-max]``; ``barrier``, ``barrier_t``,
  ``barrier_error``.
- ``lpf``: ``--sigma`` (0.01) and ``--m`` (100) Gaussian perturbations.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import torch

from flcore.analysis.evaluation import DatasetEvaluator
from flcore.analysis.hvp import DatasetHVP
from flcore.analysis.interpolation import interpolate
from flcore.analysis.io import RunLoadError, load_run
from flcore.analysis.landscape import grid_points, landscape_1d, landscape_2d, random_directions
from flcore.analysis.lpf import lpf
from flcore.analysis.spectrum import hutchinson_trace, slq_density, top_eigenvalues
from flcore.errors import quote
from flcore.report.analysis_plots import plot_curve_1d, plot_surface_2d, save_figure
from flcore.sim.cpu_memory import retain_freed_memory
from flcore.store import StoreError, to_jsonable

EXIT_USAGE = 2
TOOLS = ("hessian", "landscape", "barrier", "lpf")
#: Memory one evaluated point of a curve or surface takes through to the printed result:
#: its coordinate, loss and error as float64 tensors, as Python floats in lists, and as
#: JSON text.
BYTES_PER_POINT = 256
#: Sanity caps: each point is a full pass over the data, so a mistyped count
#: (``--points 1e9``) would otherwise run for months before memory ran out.
MAX_CURVE_POINTS = 100_000
MAX_GRID = 1_001
MAX_ITERATIONS = 1_000_000
_DEVICE_RE = re.compile(r"^(auto|cpu|cuda|cuda:\d+|mps)$")

__all__ = ["EXIT_USAGE", "TOOLS", "AnalyzeArgumentError", "add_analyze_parser", "main", "run_analyze"]


class AnalyzeArgumentError(ValueError):
    """A bad ``flcore analyze`` argument; names the field."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"invalid argument '{field}': {message}")


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    g = common.add_argument_group("run and data")
    g.add_argument("--run", required=True, metavar="RUN_DIR", help="run directory to analyse")
    g.add_argument("--split", default="train", help="data split: train (default) or test")
    g.add_argument("--samples", type=int, default=None, metavar="N",
                   help="analyse a seeded random subset of N examples (default: the whole split)")
    g.add_argument("--batch-size", type=int, default=1000, help="examples per forward pass (default 1000)")
    g.add_argument("--seed", type=int, default=0, help="seed of every random draw (default 0)")
    g.add_argument("--device", default="auto", help="auto (default), cpu, cuda, cuda:N")
    g.add_argument("--which", default="auto", help="stored weights: auto (default), final, checkpoint")
    g.add_argument("--data-root", default=None, help="data folder (CIFAR), if not the run's")
    g.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    return common


def add_analyze_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``analyze`` with its tools to an argparse ``subparsers`` object; returns it.

    The tool name is stored in ``args.analyze_tool``.
    """
    common = _common_options()
    p = subparsers.add_parser("analyze", help="geometry of stored runs: hessian, landscape, barrier, lpf",
                              description="Analysis tools on stored runs (flcore.analysis).")
    tools = p.add_subparsers(dest="analyze_tool", required=True, metavar="TOOL")

    h = tools.add_parser("hessian", parents=[common], help="top-k Hessian eigenvalues, trace, density")
    h.add_argument("--top-k", type=int, default=5, help="number of eigenvalues (default 5)")
    h.add_argument("--iters", type=int, default=20,
                   help="power: iterations per eigenvalue; lanczos: steps (default 20)")
    h.add_argument("--tol", type=float, default=1e-4,
                   help="power iteration: relative change that stops early (default 1e-4; 0: never)")
    h.add_argument("--method", default="power", help="power (default) or lanczos")
    h.add_argument("--trace", action="store_true", help="also estimate the trace (Hutchinson)")
    h.add_argument("--trace-samples", type=int, default=100, help="Hutchinson probes (default 100)")
    h.add_argument("--density", action="store_true", help="also compute the SLQ eigenvalue density")
    h.add_argument("--density-iters", type=int, default=90, help="SLQ Lanczos steps (default 90)")

    s = tools.add_parser("landscape", parents=[common], help="1D/2D loss surface along random directions")
    s.add_argument("--grid", type=int, default=21, help="points per axis (default 21)")
    s.add_argument("--span", type=float, default=1.0, help="axis range [-span, span] (default 1)")
    s.add_argument("--dim", type=int, default=2, help="1 or 2 directions (default 2)")
    s.add_argument("--normalization", default="filter", help="filter (default), layer, model, none")
    s.add_argument("--plot", default=None, metavar="PNG", help="save a figure to this path")

    b = tools.add_parser("barrier", parents=[common], help="linear interpolation and loss barrier")
    b.add_argument("--run-b", required=True, metavar="RUN_DIR", help="the second run (t = 1)")
    b.add_argument("--points", type=int, default=21, help="values of t (default 21)")
    b.add_argument("--t-min", type=float, default=0.0, help="smallest t (default 0)")
    b.add_argument("--t-max", type=float, default=1.0, help="largest t (default 1)")
    b.add_argument("--plot", default=None, metavar="PNG", help="save a figure to this path")

    lp = tools.add_parser("lpf", parents=[common], help="low-pass-filter sharpness (Bisla et al.)")
    lp.add_argument("--sigma", type=float, default=0.01, help="noise std (default 0.01)")
    lp.add_argument("--m", type=int, default=100, help="number of perturbations (default 100)")
    return p


# --------------------------------------------------------------------------- validation

def _choice(field, value, allowed):
    if value not in allowed:
        raise AnalyzeArgumentError(field, f"got {quote(value)}; allowed values: {', '.join(allowed)}")


def _at_least(field, value, low):
    if value is None or not (isinstance(value, (int, float)) and math.isfinite(value)) or value < low:
        raise AnalyzeArgumentError(field, f"got {quote(value)}; must be >= {low}")


def _at_most(field, value, high, why):
    if value > high:
        raise AnalyzeArgumentError(field, f"got {quote(value)}; must be <= {high} ({why})")


def machine_memory() -> int:
    """Bytes of memory of this machine (8 GiB where the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def _points_cap(field: str, points: int, sanity: int) -> None:
    """``points`` results must fit in a quarter of the machine's memory, and under ``sanity``."""
    memory = machine_memory()
    fits = memory // 4 // BYTES_PER_POINT
    if points > fits:
        raise AnalyzeArgumentError(field, f"got {points} points; their results need {points * BYTES_PER_POINT} "
                                   f"bytes, more than a quarter of this machine's {memory} bytes: at most {fits}")
    _at_most(field, points, sanity, "each point is a full pass over the data")


def check_model_bounds(args: argparse.Namespace, num_params: int) -> None:
    """The bounds that need the model: ``--top-k`` and Lanczos steps at most its number of
    parameters, and ``top_k`` model-sized vectors in a quarter of the memory."""
    if getattr(args, "analyze_tool", None) != "hessian":
        return
    _at_most("top_k", args.top_k, num_params, f"the model has {num_params} parameters")
    vectors = machine_memory() // 4 // (8 * max(1, num_params))
    _at_most("top_k", args.top_k, vectors, f"{args.top_k} vectors of {num_params} parameters must fit in memory")
    if args.method == "lanczos":
        _at_most("iters", args.iters, num_params, f"Lanczos on {num_params} parameters has at most that many steps")
    if args.density:
        _at_most("density_iters", args.density_iters, num_params,
                 f"Lanczos on {num_params} parameters has at most that many steps")


def _run_dir(field, value):
    path = Path(value).expanduser()
    if not path.is_dir():
        raise AnalyzeArgumentError(field, f"run directory {quote(str(path))} does not exist")
    if not (path / "config.json").is_file():
        raise AnalyzeArgumentError(field, f"{quote(str(path))} is not a run directory (no config.json)")
    if not ((path / "final_model.pt").is_file() or (path / "checkpoint.pt").is_file()):
        raise AnalyzeArgumentError(field, f"run {quote(str(path))} has no final_model.pt or checkpoint.pt")


def validate_args(args: argparse.Namespace) -> None:
    """Check every value before compute; raises :class:`AnalyzeArgumentError`."""
    tool = getattr(args, "analyze_tool", None)
    _choice("tool", tool, TOOLS)
    _run_dir("run", args.run)
    _choice("split", args.split, ("train", "test"))
    if args.samples is not None:
        _at_least("samples", args.samples, 1)
    _at_least("batch_size", args.batch_size, 1)
    _at_least("seed", args.seed, 0)
    if not _DEVICE_RE.match(str(args.device)):
        raise AnalyzeArgumentError("device", f"got {quote(args.device)}; allowed values: auto, cpu, cuda, cuda:N, mps")
    if str(args.device).startswith("cuda"):
        if not torch.cuda.is_available():
            raise AnalyzeArgumentError("device", f"got {quote(args.device)} but CUDA is not available here")
    _choice("which", args.which, ("auto", "final", "checkpoint"))
    if args.samples is not None:
        _at_most("samples", args.samples, 10**9, "the documented sanity cap")
    _at_most("batch_size", args.batch_size, MAX_ITERATIONS, "the documented sanity cap")
    if tool == "hessian":
        _at_least("top_k", args.top_k, 1)
        _at_least("iters", args.iters, 1)
        for name in ("top_k", "iters", "trace_samples", "density_iters"):
            _at_most(name, getattr(args, name), MAX_ITERATIONS, "the documented sanity cap")
        _at_least("tol", args.tol, 0)
        _choice("method", args.method, ("power", "lanczos"))
        if args.method == "lanczos" and args.iters < args.top_k:
            raise AnalyzeArgumentError("iters", f"got {args.iters}; Lanczos needs iters >= top_k ({args.top_k})")
        _at_least("trace_samples", args.trace_samples, 1)
        _at_least("density_iters", args.density_iters, 1)
    elif tool == "landscape":
        _at_least("grid", args.grid, 2)
        _at_most("grid", args.grid, MAX_GRID, "the documented sanity cap")
        _points_cap("grid", args.grid ** args.dim if args.dim in (1, 2) else args.grid, MAX_GRID ** 2)
        if not (math.isfinite(args.span) and args.span > 0):
            raise AnalyzeArgumentError("span", f"got {quote(args.span)}; must be > 0")
        _choice("dim", args.dim, (1, 2))
        _choice("normalization", args.normalization, ("filter", "layer", "model", "none"))
    elif tool == "barrier":
        _run_dir("run_b", args.run_b)
        _at_least("points", args.points, 2)
        _points_cap("points", args.points, MAX_CURVE_POINTS)
        for name in ("t_min", "t_max"):
            if not math.isfinite(getattr(args, name)):
                raise AnalyzeArgumentError(name, f"got {quote(getattr(args, name))}; must be finite")
        if not args.t_max > args.t_min:
            raise AnalyzeArgumentError("t_max", f"got {quote(args.t_max)}; must be > t_min ({quote(args.t_min)})")
    elif tool == "lpf":
        _at_least("sigma", args.sigma, 0)
        if not math.isfinite(args.sigma):
            raise AnalyzeArgumentError("sigma", f"got {quote(args.sigma)}; must be finite")
        _at_least("m", args.m, 1)
        _at_most("m", args.m, MAX_ITERATIONS, "the documented sanity cap")


# --------------------------------------------------------------------------- tools

def _hessian(args, loaded, x, y) -> dict:

    hvp = DatasetHVP(loaded.flat, loaded.w, x, y, batch_size=args.batch_size)
    result = top_eigenvalues(hvp, k=args.top_k, method=args.method, iters=args.iters, tol=args.tol,
                             seed=args.seed, return_vectors=False)
    out: dict[str, Any] = {"method": args.method, **result.to_dict()}
    if args.trace:
        out.update(hutchinson_trace(hvp, samples=args.trace_samples, seed=args.seed).to_dict())
    if args.density:
        density = slq_density(hvp, runs=1, iters=args.density_iters, seed=args.seed)
        out["density_nodes"] = density.nodes[0].tolist()
        out["density_weights"] = density.weights[0].tolist()
    out["num_hvps"] = hvp.num_calls
    return out


def _landscape(args, loaded, x, y) -> dict:

    evaluator = DatasetEvaluator(loaded.flat, x, y, batch_size=args.batch_size)
    dirs = random_directions(loaded.flat, loaded.w, num=args.dim, seed=args.seed,
                             normalization=args.normalization)
    coords = grid_points(args.span, args.grid)
    if args.dim == 1:
        surface = landscape_1d(evaluator, loaded.w, dirs[0], coords)
    else:
        surface = landscape_2d(evaluator, loaded.w, dirs[0], dirs[1], coords, coords)
    center_loss, center_error = evaluator.evaluate(loaded.w)
    out = {"dim": args.dim, "normalization": args.normalization, **surface.to_dict(),
           "center_loss": float(center_loss), "center_error": float(center_error)}
    if args.plot:

        if args.dim == 1:
            ax = plot_curve_1d(surface.alphas, surface.loss, xlabel="alpha")
        else:
            ax = plot_surface_2d(surface, title=f"{loaded.path.name} ({args.split})")
        save_figure(ax, args.plot)
        out["plot"] = str(args.plot)
    return out


def _barrier(args, loaded, x, y) -> dict:

    other = load_run(args.run_b, device=loaded.w.device, which=args.which, data_root=args.data_root,
                     dataset=loaded.dataset)
    if other.config.dataset != loaded.config.dataset or other.config.model != loaded.config.model \
            or other.w.shape != loaded.w.shape:
        raise RunLoadError(f"runs {quote(str(loaded.path))} and {quote(str(other.path))} differ in model or dataset "
                           f"({loaded.config.model}/{loaded.config.dataset} vs "
                           f"{other.config.model}/{other.config.dataset})")
    evaluator = DatasetEvaluator(loaded.flat, x, y, batch_size=args.batch_size)
    result = interpolate(evaluator, loaded.w, other.w, num=args.points, t_min=args.t_min, t_max=args.t_max)
    out = {"run_b": str(other.path), "source_b": other.source, **result.to_dict()}
    if args.plot:

        ax = plot_curve_1d(result.ts, result.loss, xlabel="t", ylabel="loss", mark_endpoints=True)
        save_figure(ax, args.plot)
        out["plot"] = str(args.plot)
    return out


def _lpf(args, loaded, x, y) -> dict:

    evaluator = DatasetEvaluator(loaded.flat, x, y, batch_size=args.batch_size)
    result = lpf(evaluator, loaded.w, sigma=args.sigma, m=args.m, seed=args.seed)
    loss, error = evaluator.evaluate(loaded.w)
    return {**result.to_dict(), "loss": float(loss), "error": float(error)}


_HANDLERS = {"hessian": _hessian, "landscape": _landscape, "barrier": _barrier, "lpf": _lpf}


def run_analyze(args: argparse.Namespace) -> int:
    """Run the tool named by ``args.analyze_tool``; prints the result; returns the exit code
    (0, or 2 for a bad argument or an unusable run, reported on stderr)."""

    try:
        validate_args(args)
        started = time.perf_counter()
        loaded = load_run(args.run, device=args.device, which=args.which, data_root=args.data_root)
        check_model_bounds(args, int(loaded.w.numel()))
        if loaded.w.device.type == "cpu":
            retain_freed_memory()
        x, y = loaded.data(args.split, args.samples, args.seed)
        result = _HANDLERS[args.analyze_tool](args, loaded, x, y)
    except (AnalyzeArgumentError, RunLoadError, StoreError) as exc:
        print(f"flcore analyze: error: {exc}", file=sys.stderr)
        return EXIT_USAGE

    record = {
        "tool": args.analyze_tool,
        "run_dir": str(loaded.path),
        "source": loaded.source,
        "model": loaded.config.model,
        "dataset": loaded.config.dataset,
        "split": args.split,
        "samples": int(x.shape[0]),
        "num_params": int(loaded.w.numel()),
        "device": str(loaded.w.device),
        "seed": args.seed,
        **result,
        "seconds": time.perf_counter() - started,
    }
    record = to_jsonable(record)
    if args.json:
        print(json.dumps(record, sort_keys=True))
    else:
        for key, value in record.items():
            if isinstance(value, list) and len(value) > 8:
                value = f"[{len(value)} values]"
            print(f"{key}: {value}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """A standalone ``flcore``-like parser with only ``analyze`` (for ``main``)."""
    parser = argparse.ArgumentParser(prog="flcore")
    sub = parser.add_subparsers(dest="command", required=True)
    add_analyze_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m flcore.cli.analyze TOOL ...`` (the ``analyze`` word is optional)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "analyze":
        argv = ["analyze", *argv]
    return run_analyze(build_parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
