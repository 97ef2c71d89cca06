"""``flcore reproduce``, ``flcore book`` and ``flcore claims``: the command line of the book.

``flcore reproduce`` and ``flcore book``: the papermill batch and the book build.

``flcore reproduce ARTIFACT... --scale S`` (or ``--all``) executes each artifact's
notebook (``notebooks/<paper>/<id>.ipynb``) with papermill into the book's source tree
(``book/artifacts/<paper>/<id>.ipynb``), with the parameters ``scale``, ``device``,
``seeds``, ``store`` (and ``workers``, ``data_root``, ``download`` where the notebook
has them).  Before the notebooks run, the union of the runs they need is trained once
(shared runs once, several at a time on a CPU, or as tasks of a Ray cluster with
``--executor ray --address HOST:PORT``: :mod:`flcore.executors`); each notebook then finds
its runs in the store.  A notebook that fails marks its own artifact failed and the others
go on; a summary is printed at the end and the exit status is 1 if anything failed.

``--plan`` prices the batch instead of running it: the runs to train (shared runs once,
finished ones skipped), their groups, the store they add and the estimated hours per
device kind from the benchmark rows (:mod:`flcore.reproduction.pricing`; ``--json`` for
scripts), and this machine's estimate, the figure ``flcore book`` prints before it trains
(:mod:`flcore.reproduction.estimate`; ``this_machine`` in the JSON).  ``--max-rounds N``
caps every run at N rounds: a preview whose pages say so, and
whose runs continue from their checkpoints when the command runs again with a higher cap
or none.  ``--dataset NAME...`` keeps the runs on those data sets only (FedIMA's
Fashion-MNIST rows of Table I: ``--dataset fmnist``): ``--plan`` prices them, otherwise
they are trained into the store and no page is rebuilt (a page needs all its rows' runs);
``flcore claims`` then gives the verdicts they decide.

Each artifact's outcome goes to a small manifest, ``book/_artifacts.json``: status (ok,
failed, skipped), scale, seeds, round cap, duration, the notebook's hash and flcore's fingerprint
(a hash of its source and published-data files).  ``flcore book --scale S`` reproduces
what is stale -- never run, failed, run at another scale or with other seeds, or run
with another notebook or flcore -- then builds the site with ``jupyter-book build . -W
-n --keep-going`` (``_build/html/index.html``).  ``--prefer-scale paper`` builds each page
whose paper-scale runs are all in the store (imported from a results bundle, say) at the
paper scale, and the rest at ``--scale``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from flcore.cli.arguments import add_seeds_option, add_store_option, add_workers_option, count_option
from flcore.cli.claim_commands import check_claim_options, train_claim, usage_error
from flcore.cli.claim_commands import print_plan as print_claims_plan
from flcore.config import MAX_ROUNDS
from flcore.data import DATASET_NAMES
from flcore.executors.ray_executor import ExecutorError
from flcore.report.repository import configured_url
from flcore.reproduction.artifacts import artifact_ids, get_artifact, runs_for
from flcore.reproduction.book_runs import book_specs
from flcore.reproduction.budget import load_device_rates
from flcore.reproduction.claim_plan import DECIDE_SEEDS
from flcore.reproduction.claims import (
    VERDICT_TEXT,
    VERDICTS,
    claim_specs,
    evaluate_claims,
    get_claim,
    headline_counts,
    planned_seed_counts,
    rule_text,
    spread_specs,
)
from flcore.reproduction.coverage import coverage
from flcore.reproduction.paper_registry import paper_ids
from flcore.reproduction.plateau import NOT_SETTLED, is_not_settled
from flcore.reproduction.pricing import plan_text, price_runs
from flcore.reproduction.runner import default_max_rounds, results_frame, training_estimate
from flcore.reproduction.table_check import disagreements
from flcore.site.manifest import flcore_fingerprint, load_manifest, one_line_error, stale_reason
from flcore.site.pages import write_site_pages
from flcore.site.reproduce import (
    build_book,
    machine_rates_or_none,
    make_run_executor,
    on_datasets,
    prefetch_runs,
    print_summary,
    reproduce,
)
from flcore.site.toc import TocError, planned_toc

EXIT_FAILED = 1
EXIT_USAGE = 2


def _check_root(args: argparse.Namespace) -> bool:
    """``--root`` must be a repository root holding ``notebooks/``: checked before any
    run is trained (one line and exit 2 otherwise)."""
    root = Path(args.root).expanduser()
    if not (root / "notebooks").is_dir():
        print(f"flcore: error: --root {str(root)[:200]} holds no notebooks/ folder: give the repository root "
              "(the folder with notebooks/, book/ and _toc.yml)", file=sys.stderr)
        return False
    problem = _config_problem(root)
    if problem:
        print(f"flcore: error: {problem}", file=sys.stderr)
        return False
    return True


def _config_problem(root: Path) -> str | None:
    """Why the book's ``_config.yml`` under ``root`` cannot be built from (not YAML, not a
    mapping, a repository URL that is no GitHub address), or None; checked before any run
    trains or any page is written, since the build reads it last."""
    path = root / "_config.yml"
    if not path.exists():
        return None
    try:
        config = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return f"{path} is not readable YAML ({one_line_error(exc)[:200]})"
    if not isinstance(config, dict):
        return f"{path} must hold a mapping of the book's settings"
    try:
        configured_url(root)
    except (ValueError, AttributeError) as exc:
        return f"{path}: {one_line_error(exc)[:300]}"
    return None


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale", default="small", choices=("smoke", "small", "paper"),
                   help="smoke (seconds), small (CPU default) or paper (the papers' protocol, GPU)")
    add_store_option(p)
    p.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    add_seeds_option(p)
    add_workers_option(p, "runs trained at once on a CPU; default: one per core")
    p.add_argument("--data-root", default="data",
                   help="data folder (paper scale): CIFAR, PACS or Fashion-MNIST, e.g. Debian's "
                        "/usr/share/datasets/fashion-mnist")
    p.add_argument("--download", action="store_true", help="fetch CIFAR through torchvision when missing")
    p.add_argument("--root", default=".", help="repository root holding notebooks/, book/ and _toc.yml")
    p.add_argument("--timeout", type=count_option(1), default=None,
                   help="seconds a notebook cell may run (default: no limit)")
    p.add_argument("--jobs", type=count_option(1), default=None,
                   help="notebooks executed at once, each worker in its own kernel (default: one per core)")
    p.add_argument("--fresh-kernels", action="store_true",
                   help="start a new kernel for every notebook (default: each worker reuses its kernel, "
                        "reset between notebooks)")
    p.add_argument("--executor", default="local", choices=("local", "ray"),
                   help="where missing runs are trained: local (this machine) or ray (a Ray cluster)")
    p.add_argument("--address", default=None, help="Ray cluster: auto | HOST:PORT (default: $RAY_ADDRESS "
                   "or a Ray instance on this machine)")
    p.add_argument("--gpus-per-run", type=float, default=None,
                   help="Ray: GPUs per run (default: 1 on a cluster with GPUs, else 0)")


def _env_cap(args: argparse.Namespace) -> str | None:
    """Without ``--max-rounds``, ``$FLCORE_MAX_ROUNDS`` (read by the one function the notebooks'
    runs read it with, :func:`~flcore.reproduction.runner.default_max_rounds`) caps the runs,
    ``--plan`` included; a value that is no positive integer is the returned one-line error."""
    if args.max_rounds is None:
        try:
            args.max_rounds = default_max_rounds()
        except ValueError as exc:
            return str(exc)
    return None


def _cmd_reproduce(args: argparse.Namespace) -> int:
    problem = _env_cap(args)
    if problem:
        print(f"flcore: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    known = artifact_ids()
    if args.list:
        return _list(args)
    if args.all == bool(args.artifacts):
        print("flcore: error: give artifact ids or --all (known: " + ", ".join(known) + ")", file=sys.stderr)
        return EXIT_USAGE
    unknown = [a for a in args.artifacts if a not in known]
    if unknown:
        print(f"flcore: error: unknown artifact(s) {', '.join(a[:80] for a in unknown[:5])}; known: {', '.join(known)}",
              file=sys.stderr)
        return EXIT_USAGE
    if not _check_root(args):
        return EXIT_USAGE
    chosen = known if args.all else args.artifacts
    if args.plan:
        specs = runs_for(chosen, args.scale, args.seeds)
        # the claims' extra seeds of these artifacts' cells and the reference pairs (claims)
        specs += claim_specs(args.scale, chosen) + spread_specs(args.scale) if specs else []
        what = f"{len(chosen)} artifact(s) at the {args.scale} scale"
        if args.datasets:
            specs = on_datasets(specs, args.datasets)
            what += f", their runs on {', '.join(args.datasets)}"
        return _print_plan(args, specs, what)
    if not _connect_executor(args):
        return EXIT_USAGE
    if args.datasets:
        try:
            return _train_on_datasets(chosen, args)
        finally:
            _disconnect_executor(args)
    results: dict[str, dict] = {}
    try:
        results = reproduce(chosen, args, force=not args.stale_only, results=results)
    finally:
        _disconnect_executor(args)
        print_summary(results)  # also when the batch stopped early (interrupted)
    return EXIT_FAILED if any(e["status"] == "failed" for e in results.values()) else 0


def _train_on_datasets(chosen: list[str], args: argparse.Namespace) -> int:
    """``--dataset``: train the artifacts' runs on ``args.datasets`` (capped at
    ``--max-rounds``), print one line per run's state, rebuild no page."""
    store = str(Path(args.store).expanduser().resolve())
    frame = prefetch_runs([get_artifact(a) for a in chosen], args, store, print)
    if frame is None:
        specs = on_datasets(runs_for(chosen, args.scale, args.seeds), args.datasets)
        if not specs:
            print(f"flcore: error: {', '.join(chosen)} at the {args.scale} scale train(s) nothing on "
                  f"{', '.join(args.datasets)}", file=sys.stderr)
            return EXIT_USAGE
        frame = results_frame(specs, store)
    frame = frame.drop_duplicates("run_id")
    counts = frame["status"].value_counts()
    cap = f" (capped at {args.max_rounds} rounds: a preview, no verdict)" if args.max_rounds else ""
    print(f"{len(frame)} run(s) on {', '.join(args.datasets)} at the {args.scale} scale{cap}: "
          + ", ".join(f"{n} {state}" for state, n in counts.items())
          + f". No page was rebuilt; the claims they decide: flcore claims --scale {args.scale} --store {store}")
    return EXIT_FAILED if (frame["status"] == "failed").any() else 0


def _print_plan(args: argparse.Namespace, specs: list, what: str) -> int:
    """``--plan``: the price of training ``specs`` (nothing trains)."""
    rates = load_device_rates(Path(args.root) / "benchmarks" / "results")
    store = Path(args.store).expanduser()
    plan = price_runs(specs, store, rates, max_rounds=args.max_rounds, device=args.device)
    # a speed measured for the plan is not kept: --plan writes nothing
    here = machine_rates_or_none(args, str(store.resolve()), lambda line: print(line, file=sys.stderr), keep=False)
    estimate = training_estimate(specs, store, args.device, args.workers, args.max_rounds, here)
    plan = {"scale": args.scale, "seeds": list(args.seeds), **plan, "claim_seeds": planned_seed_counts(args.scale),
            "this_machine": {k: estimate[k] for k in ("runs", "groups", "workers", "seconds", "group_list")}}
    if args.json:
        print(json.dumps(plan, sort_keys=True))
    else:
        text = plan_text(plan, what).rsplit("\n", 1)
        print(text[0] + "\nThis machine, " + estimate["line"] + "\n" + text[1])
    return 0


def _list(args: argparse.Namespace) -> int:
    """``--list``: every table and figure of the five papers with its status; for the
    regenerated ones, whether the page is stale at ``--scale`` (and why)."""

    root = Path(args.root).resolve()
    manifest = load_manifest(root)
    fingerprint = flcore_fingerprint()
    rows = coverage(manifest)
    for row in rows:
        if row["status"] == "regenerated":
            reason = stale_reason(get_artifact(row["id"]), manifest["artifacts"].get(row["id"]), root, args.scale,
                                  args.seeds, fingerprint, args.max_rounds)
            row["stale"] = reason
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    for row in rows:
        if row["status"] == "regenerated":
            state = f"stale: {row['stale']}" if row["stale"] else "up to date"
            built = ", ".join(row["scales_built"]) or "-"
            print(f"{row['id']:<20} regenerated      built: {built:<18} {state}")
        else:
            print(f"{row['id']:<20} {row['status']}")
    counts = {s: sum(r["status"] == s for r in rows) for s in ("regenerated", "pending", "not_regenerable")}
    print(f"{len(rows)} tables and figures: {counts['regenerated']} regenerated, {counts['pending']} pending, "
          f"{counts['not_regenerable']} not regenerable")
    return 0


def _cmd_claims(args: argparse.Namespace) -> int:
    """``flcore claims``: the verdict of every claim at ``--scale`` from the run store."""
    papers = paper_ids()
    unknown = [p for p in args.paper or [] if p not in papers]
    if unknown:
        print(f"flcore: error: --paper {', '.join(unknown)}: allowed values: {', '.join(papers)}", file=sys.stderr)
        return EXIT_USAGE
    problem = check_claim_options(args) or ((args.plan or args.decide is not None) and _env_cap(args))
    if problem:
        return usage_error(problem)
    if args.plan:
        return print_claims_plan(args)
    status = 0
    if args.decide is not None:
        if not _connect_executor(args):
            return EXIT_USAGE
        try:
            status = train_claim(args)
        finally:
            _disconnect_executor(args)
        args.paper, args.seeds = [get_claim(args.decide).paper], args.seeds or list(DECIDE_SEEDS)
    results = evaluate_claims(args.scale, Path(args.store).expanduser(), args.seeds or [0], papers=args.paper)
    if args.decide is not None:
        results = [r for r in results if r["id"] == args.decide]
    if args.json:
        for result in results:
            print(json.dumps(result))
        return 0
    width = max((len(r["id"]) for r in results), default=10)
    for result in results:
        gaps = ", ".join(_comparison_text(c) for c in result["comparisons"])
        print(f"{result['id']:<{width}}  {VERDICT_TEXT[result['verdict']]:<24}  {result['summary']}"
              + (f"  ({result['reason']})" if result["reason"] else ""))
        print(f"{'':<{width}}  {'':<24}  {result['units'] or ''}: {gaps}")
    for name, counts in headline_counts(results).items():
        n = sum(counts["uncorrected"].values())
        if not n:
            continue
        what = {"papers": "the papers' own claims", "later": "later claims by other sources",
                "book": "the book's own questions"}[name]
        line = f"{n} {what} at the {args.scale} scale: " + ", ".join(
            f"{counts['uncorrected'][v]} {VERDICT_TEXT[v]}" for v in VERDICTS if counts["uncorrected"][v])
        if any("verdict_corrected" in r for r in results):
            line += ("; after the book's correction (Benjamini-Hochberg over the claims, q = 0.05): "
                     + ", ".join(f"{counts['corrected'][v]} {VERDICT_TEXT[v]}" for v in VERDICTS
                                 if counts["corrected"][v]))
        print(line)
    return status


def _comparison_text(comparison: dict) -> str:
    """``"+1.20 +- 0.80 (holds)"``: one distinct comparison's gap, threshold and verdict
    (``MDE`` beside an inconclusive one, the margin beside an absent one)."""
    if comparison["gap"] is None:
        return f"- ({VERDICT_TEXT[comparison['verdict']]})"
    text = f"{comparison['gap']:+.2f}"
    if comparison["threshold"] is not None:
        text += f" +- {comparison['threshold']:.2f}"
    verdict = (f"counted in {comparison['counted_in']}" if comparison.get("counted_in")
               else NOT_SETTLED if is_not_settled(comparison)
               else VERDICT_TEXT[comparison["verdict"]])
    text += f" ({verdict}"
    if comparison["verdict"] == "inconclusive" and comparison["mde"] is not None:
        text += f", MDE {comparison['mde']:.2f}"
    if comparison["verdict"] == "absent":
        text += f", 90 % interval inside +-{comparison['margin']:.2f}"
    if comparison.get("note"):
        text += f"; {comparison['note']}"
    return text + ")"


def _connect_executor(args: argparse.Namespace) -> bool:
    """Set ``args.run_executor``; print the one-line reason and return False when it cannot start."""

    try:
        args.run_executor = make_run_executor(args)
    except (ValueError, ExecutorError) as exc:
        print(f"flcore: error: {exc}", file=sys.stderr)
        return False
    return True


def _disconnect_executor(args: argparse.Namespace) -> None:
    executor = getattr(args, "run_executor", None)
    if executor is not None:
        executor.shutdown()


def _cmd_book(args: argparse.Namespace) -> int:
    if not _check_root(args):
        return EXIT_USAGE
    try:
        planned_toc(Path(args.root).resolve())  # before any run trains or any page is written
    except TocError as exc:
        print(f"flcore: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.plan:
        return _print_plan(args, book_specs(args.scale, args.root, args.seeds), f"the book at the {args.scale} scale")
    started = time.perf_counter()
    results = {}
    if not args.no_reproduce:
        if not _connect_executor(args):
            return EXIT_USAGE
        try:
            results = reproduce(artifact_ids(), args, force=args.force)
        finally:
            _disconnect_executor(args)
        print_summary(results)

    try:
        write_site_pages(Path(args.root).resolve(), args.scale, Path(args.store).expanduser(), args.seeds)
    except TocError as exc:  # _toc.yml changed since the check above
        print(f"flcore: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.no_build:
        print(f"generated pages and _toc.yml written under {Path(args.root).resolve()}; no site built (--no-build)")
        return EXIT_FAILED if any(e["status"] == "failed" for e in results.values()) else 0
    status = build_book(Path(args.root).resolve(), args.path_output, strict=not args.lax)
    if not tables_agree_with_verdicts(args):
        status = status or 1
    index = Path(args.path_output or args.root).resolve() / "_build" / "html" / "index.html"
    print(f"book {'built' if status == 0 else 'build FAILED'} in {time.perf_counter() - started:.0f} s: {index}")
    failed = any(e["status"] == "failed" for e in results.values())
    return EXIT_FAILED if failed or status != 0 else 0


def tables_agree_with_verdicts(args: argparse.Namespace) -> bool:
    """Whether every claim's gap is the difference of its two cells as their page's table
    prints them (:func:`flcore.reproduction.table_check.disagreements`); each disagreement
    is printed, and the book build fails on one."""
    store = Path(args.store).expanduser()
    results = evaluate_claims(args.scale, store, args.seeds)
    check = disagreements(results, args.scale, store, args.seeds, Path(args.root).resolve())
    for line in check.failures:
        print(f"flcore: error: a table and its verdict read different runs: {line}", file=sys.stderr)
    return not check.failures


def _plan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plan", action="store_true",
                   help="print the runs to train, their groups, store size and estimated hours per device kind "
                        "(from benchmarks/results); nothing trains")
    p.add_argument("--max-rounds", type=count_option(1, MAX_ROUNDS), default=None, metavar="N",
                   help="cap every run at N rounds (a preview; the pages say so, the claims are not checked); "
                        "rerun with a higher cap or none to continue the runs from their checkpoints")


def register(subparsers) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``reproduce`` and ``book`` to ``subparsers``; returns their handlers by name."""
    p = subparsers.add_parser("reproduce", help="execute artifact notebooks into the book (papermill)",
                              description=__doc__.split("\n\n")[1])
    p.add_argument("artifacts", nargs="*", metavar="ARTIFACT", help="artifact ids, e.g. fedsam-table-2")
    p.add_argument("--all", action="store_true", help="every registered artifact")
    p.add_argument("--stale-only", action="store_true", help="skip artifacts whose page is up to date")
    p.add_argument("--list", action="store_true",
                   help="list every registered paper's tables and figures: status, scales built, claims, staleness")
    p.add_argument("--json", action="store_true", help="with --list: one JSON object per table or figure; "
                   "with --plan: the plan as one JSON object")
    p.add_argument("--dataset", dest="datasets", nargs="+", default=None, metavar="NAME",
                   choices=DATASET_NAMES,
                   help="only the runs on these data sets (e.g. fmnist: FedIMA's Fashion-MNIST rows): priced with "
                        "--plan, else trained into the store without rebuilding any page")
    _plan_options(p)
    _common(p)
    b = subparsers.add_parser("book", help="reproduce the stale artifacts, then build the site",
                              description=__doc__.split("\n\n")[2])
    b.add_argument("--force", action="store_true", help="re-execute every notebook, stale or not")
    b.add_argument("--no-reproduce", action="store_true", help="only build the site from the executed notebooks")
    b.add_argument("--no-build", action="store_true",
                   help="write the generated pages and the table of contents (_toc.yml) but build no site")
    b.add_argument("--path-output", default=None, help="build into PATH/_build instead of ./_build")
    b.add_argument("--lax", action="store_true", help="do not turn warnings into errors (-W -n off)")
    b.add_argument("--prefer-scale", default=None, choices=("smoke", "small", "paper"),
                   help="build each page whose runs at this scale (and the claims' reference runs) are all in the "
                        "store at this scale, e.g. paper runs imported from a results bundle; the others at --scale")
    b.add_argument("--json", action="store_true", help="with --plan: the plan as one JSON object")
    _plan_options(b)
    _common(b)
    c = subparsers.add_parser("claims", help="the verdict of every claim of the papers at a scale, from the run store",
                              description="The verdict of every claim of the papers at a scale, from the run store. "
                                          + rule_text())
    c.add_argument("--json", action="store_true", help="one JSON object per claim")
    c.add_argument("--paper", nargs="+", default=None, metavar="PAPER",
                   help=f"only these papers (the registered ones: {' '.join(paper_ids())})")
    c.add_argument("--plan", action="store_true",
                   help="price every claim at --scale instead: per claim the distinct runs it needs (its cells x "
                        "--seeds, default 0,1,2), how many it shares with other claims, the store growth and the "
                        "hours per device kind; then each paper's total and the book's, a shared run counted once; "
                        "nothing trains. With --json one object: scale, seeds, max_rounds, claims (per claim: id, "
                        "paper, text, decide, distinct_runs, shared_runs, shared_with, run_ids, unpriced, to_train, "
                        "store_bytes, hours, price), papers and book (claims, distinct_runs, to_train, store_bytes, "
                        "hours, price)")
    c.add_argument("--decide", default=None, metavar="CLAIM_ID",
                   help="train the runs that decide this claim at --scale and --seeds (default 0,1,2), batched and "
                        "resumable as flcore reproduce trains them, then print its verdict")
    c.add_argument("--max-rounds", type=count_option(1, MAX_ROUNDS), default=None, metavar="N",
                   help="with --plan or --decide: cap every run at N rounds (a preview: its verdict reads not "
                        "checked); run again with a higher cap or none to continue the runs from their checkpoints")
    _common(c)
    c.set_defaults(seeds=None)  # --plan and --decide: 0,1,2 unless given; the verdicts: 0
    return {"reproduce": _cmd_reproduce, "book": _cmd_book, "claims": _cmd_claims}


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (``python -m flcore.site.reproduce``) until the CLI wires these in."""
    parser = argparse.ArgumentParser(prog="flcore")
    sub = parser.add_subparsers(dest="command", required=True)
    handlers = register(sub)
    args = parser.parse_args(argv)
    return handlers[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
