"""The ``flcore`` command line.

``flcore run``   run (or resume, or look up) one experiment; ``--json`` prints its summary.
``flcore sweep`` the same for a grid: every ``run`` flag takes a comma list; runs train in batched groups;
             ``--plan`` prices the grid instead (runs to train, store size, hours per device kind).
``flcore runs``  list the runs of a store with their config, status and summary.
``flcore methods`` list the methods: parts, hyper-parameters, communication, gradient evaluations.
``flcore analyze hessian|landscape|barrier|lpf --run RUN_DIR`` geometry of a stored run.
``flcore reproduce ARTIFACT|--all`` execute artifact notebooks; ``flcore claims`` the claims' verdicts.
``flcore book`` reproduce what is stale and build the site.
``flcore bundle export|import`` share finished runs between stores as a results bundle (no pickles).

Every config field is a flag (``--per-round`` for ``per_round``) and a key of the
``--config`` YAML/JSON file; flags win over the file.  Values are validated before any
compute: a bad value prints the field and the allowed values and exits with status 2.

Exit statuses of ``flcore run`` (the book's Reference, "Run store"): 0 finished or diverged (the
summary's ``status`` says which), 1 an unexpected error during training (the run is
marked ``failed``), 2 bad input (config, data, an option, a store that cannot be written
when training is needed, a full disk before training), 3 a damaged or unsafe run record
that could not be repaired, or a full disk during training (the run is left resumable),
4 the run is being trained by another process (``--no-wait``), 130 interrupted (Ctrl-C;
143 for SIGTERM, 129 for SIGHUP: :mod:`flcore.cli.interrupts`).  ``flcore runs --verify``
exits 3 when a record is damaged.  No command prints a traceback for anything a store
or a config holds.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from flcore.algorithms.registry import EXTERNAL_METHOD_ERRORS
from flcore.api import run_experiment
from flcore.cli.arguments import add_workers_option, count_option, store_path
from flcore.cli.interrupts import exit_status, handled
from flcore.config import (
    FIELD_NAMES,
    FIELD_TYPES,
    MAX_COUNT,
    ExperimentConfig,
    check_method_reads,
    check_partition_reads,
    load_config_file,
    resolve_config,
)
from flcore.config.method_catalog import describe_methods
from flcore.cpus import limit_threads
from flcore.data import DatasetError
from flcore.errors import ConfigError, quote
from flcore.papers import EXTERNAL_PAPER_ERRORS
from flcore.planning.sweep import DEFAULT_MAX_RUNS, count_grid, iter_grid, resolve_grid, run_sweep, split_list
from flcore.reproduction.budget import load_device_rates
from flcore.reproduction.pricing import plan_text, price_runs
from flcore.store import (
    ReadOnlyStoreError,
    RunBusyError,
    RunLock,
    RunStore,
    StoreError,
    StoreFullError,
    check_run,
    live_status,
)
from flcore.store.errors import full_path, is_disk_full

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_DAMAGED = 3
EXIT_BUSY = 4
EXIT_INTERRUPTED = 130
#: Most worker processes ``--workers`` may ask for.
_BOOL_FIELDS = {name for name, kind in FIELD_TYPES.items() if kind == "bool"}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: same exit code, one line
        if len(message) > 400:  # argparse quotes the value given, whatever its length
            message = message[:397] + "..."
        print(f"flcore: error: {message} (`{self.prog} --help` lists the options)", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _add_input_and_output(p: argparse.ArgumentParser, config_help: str, json_help: str) -> None:
    """The options ``run`` and ``sweep`` share: a config file, the store, JSON output and
    no progress bars."""
    p.add_argument("--config", help=config_help)
    p.add_argument("--store", type=store_path, default="runs", help="run store directory (default: runs)")
    p.add_argument("--json", action="store_true", help=json_help)
    p.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")


def _add_run_parser(sub) -> None:
    p = sub.add_parser("run", help="run, resume or look up one experiment")
    _add_input_and_output(p, "YAML or JSON file of config fields", "print the summary as one JSON object on stdout")
    p.add_argument("--chunk-size", type=count_option(1, MAX_COUNT), default=None,
                   help="batched engine: clients trained together (default: all of a round)")
    p.add_argument("--wait", action=argparse.BooleanOptionalAction, default=True,
                   help="if another process is training the same run, wait for it and print its "
                        "record (default); --no-wait refuses at once with exit status 4")
    for name in FIELD_NAMES:
        flag = "--" + name.replace("_", "-")
        if name in _BOOL_FIELDS:
            p.add_argument(flag, dest=name, action="store_const", const=True, default=None,
                           help=f"set {name} to true")
        else:
            p.add_argument(flag, dest=name, default=None, metavar=name.upper(),
                           help=f"config field {name}")


def _add_sweep_parser(sub) -> None:
    p = sub.add_parser("sweep", help="run a grid of experiments (every run flag takes a comma list)")
    _add_input_and_output(p, "YAML or JSON file of config fields (the grid's base)",
                          "print one JSON object per run on stdout")
    add_workers_option(p, "default: the CPU cores on a CPU, 1 on a GPU")
    p.add_argument("--max-runs", type=count_option(1, 10**9), default=DEFAULT_MAX_RUNS,
                   help=f"refuse a grid of more points (counted before it is built; default {DEFAULT_MAX_RUNS})")
    p.add_argument("--plan", action="store_true",
                   help="print the runs to train, their groups, store size and estimated hours per device kind "
                        "(from benchmarks/results under --root); nothing trains")
    p.add_argument("--root", default=".", help="with --plan: the repository root holding benchmarks/results")
    for name in FIELD_NAMES:
        flag = "--" + name.replace("_", "-")
        if name in _BOOL_FIELDS:
            p.add_argument(flag, dest=name, nargs="?", const="true", default=None, metavar="BOOLS",
                           help=f"set {name} (alone: true; or a list such as true,false)")
        else:
            p.add_argument(flag, dest=name, default=None, metavar="VALUES",
                           help=f"config field {name}: a value or a comma list")


def _add_runs_parser(sub) -> None:
    p = sub.add_parser("runs", help="list the runs of a store")
    p.add_argument("--store", type=store_path, default="runs", help="run store directory (default: runs)")
    p.add_argument("--json", action="store_true", help="print a JSON list of runs")
    p.add_argument("--verify", action="store_true",
                   help="re-check every record, checking every tensor file against its digest; exit 3 if any is "
                        "damaged")
    p.add_argument("--adopt", nargs="+", metavar="RUN_ID", default=None,
                   help="record the digests of these runs' tensor files (`all`: every run), for runs written "
                        "before digests were recorded whose files you trust; each must load as plain tensors")


def _add_methods_parser(sub) -> None:
    p = sub.add_parser("methods", help="list the methods with their parts, hyper-parameters and costs")
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per method")
    p.add_argument("--scale", default="small", help="defaults shown for this scale (default: small)")
    p.add_argument("--dataset", default=None, help="defaults shown for this dataset")
    p.add_argument("--alpha", default="0", help="defaults shown for this Dirichlet alpha")


def build_parser() -> argparse.ArgumentParser:
    # the subcommand modules are imported here, not with this module: ``python -m
    # flcore.cli.reproduce`` (the book build) must not find itself imported by its package first
    from flcore.cli import analyze, bundle, reproduce, tune

    parser = _Parser(prog="flcore", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_run_parser(sub)
    _add_sweep_parser(sub)
    _add_runs_parser(sub)
    _add_methods_parser(sub)

    analyze.add_analyze_parser(sub)

    parser.set_defaults(extra_handlers={**reproduce.register(sub), **bundle.register(sub), **tune.register(sub)})
    return parser


def _config_from_args(args: argparse.Namespace) -> ExperimentConfig:
    """The resolved config; fields the user set that the method or partition does not
    read are refused (a resolved config cannot tell them from defaults)."""

    values: dict[str, Any] = load_config_file(args.config) if args.config else {}
    for name in FIELD_NAMES:
        given = getattr(args, name)
        if given is not None:
            values[name] = given
    cfg = resolve_config(values)
    check_given(cfg, {name for name, value in values.items() if value is not None})
    return cfg


def check_given(cfg: ExperimentConfig, given: set[str]) -> None:
    """The checks a resolved config cannot make itself: fields the user set that the
    method or the partition does not read.  ``flcore run`` and every point of
    ``flcore sweep`` make exactly these."""
    check_method_reads(cfg.method, given)
    check_partition_reads(cfg.partition, given)


def check_store_option(store: str) -> None:
    """``--store`` names a directory (or nothing yet): never a file or a device."""
    path = Path(store).expanduser()
    if os.path.lexists(path) and not path.is_dir():
        raise ConfigError("store", f"{quote(str(path))} is not a directory")


def _training_failure(exc: BaseException, resumes_from: str, busy: bool = False) -> int:
    """Say why a run or sweep stopped in one line and return its exit status: a bad value or
    a read-only store is a usage error; a run another process trains is busy (``busy``); a
    full disk while training, or any other store error, is damage; an interrupt resumes
    from ``resumes_from`` when the same command is run again."""
    if isinstance(exc, KeyboardInterrupt):
        print(f"flcore: interrupted; rerun the same command to resume from {resumes_from}", file=sys.stderr)
        return exit_status(exc)
    print(f"flcore: error: {exc}", file=sys.stderr)
    if isinstance(exc, (ConfigError, DatasetError, ReadOnlyStoreError)):
        return EXIT_USAGE
    if busy and isinstance(exc, RunBusyError):
        return EXIT_BUSY
    if isinstance(exc, StoreFullError):
        return EXIT_DAMAGED if exc.training else EXIT_USAGE
    return EXIT_DAMAGED


def _cmd_run(args: argparse.Namespace) -> int:
    try:
        check_store_option(args.store)
        cfg = _config_from_args(args)
        summary = run_experiment(cfg, store=args.store, progress=not args.no_progress,
                                 chunk_size=args.chunk_size, wait=args.wait)
    except (ConfigError, DatasetError, StoreError, KeyboardInterrupt) as exc:
        return _training_failure(exc, "the last checkpoint", busy=True)
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        for key in ("status", "rounds_done", "final_accuracy", "mean_last_100", "best_accuracy", "run_dir"):
            print(f"{key}: {summary.get(key)}")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    try:
        check_store_option(args.store)
        base: dict[str, Any] = load_config_file(args.config) if args.config else {}
        lists = {}
        for name in FIELD_NAMES:
            given = getattr(args, name)
            if given is not None:
                try:
                    lists[name] = split_list(given)
                except ValueError as exc:
                    raise ConfigError(name, str(exc)) from None
        points = count_grid(lists)
        if points > args.max_runs:
            raise ConfigError("max_runs", f"the grid has {points} points, more than --max-runs {args.max_runs}; "
                              "split it, or raise --max-runs if you mean it")
        given = {name for name, value in base.items() if value is not None} | set(lists)
        configs = resolve_grid(iter_grid(base, lists), check=lambda cfg: check_given(cfg, given))
        if args.plan:
            return _print_sweep_plan(args, configs)
        results = run_sweep(configs, args.store, workers=args.workers, progress=not args.no_progress)
    except (ConfigError, DatasetError, StoreError, KeyboardInterrupt) as exc:
        return _training_failure(exc, "the last checkpoints")
    for summary in results:
        if args.json:
            print(json.dumps(summary, sort_keys=True))
        else:
            print(f"{summary['run_id']}  {summary['status']:<9} mean_last_100={summary.get('mean_last_100')}  "
                  f"{summary.get('run_dir') or summary.get('error')}")
    if any(s["status"] == "failed" and str(s.get("error")).startswith("no space left") for s in results):
        return EXIT_DAMAGED  # a full disk: the runs resume from their checkpoints once space is free
    return 1 if any(s["status"] == "failed" for s in results) else 0


def _print_sweep_plan(args: argparse.Namespace, configs: list) -> int:
    """``flcore sweep --plan``: the grid's price (:mod:`flcore.reproduction.pricing`)."""
    rates = load_device_rates(Path(args.root) / "benchmarks" / "results")
    plan = price_runs(configs, args.store, rates, device=configs[0].device if configs else "auto")
    if args.json:
        print(json.dumps(plan, sort_keys=True))
    else:
        print(plan_text(plan, f"a sweep of {len(configs)} configurations"))
    return 0


def _run_record(run, deep: bool) -> dict[str, Any]:
    """One run of ``flcore runs``: what can be read of it, and its problems."""
    record: dict[str, Any] = {"run_id": run.run_id, "run_dir": str(run.path), "status": "damaged",
                              "rounds_done": None, "config": None, "summary": None}
    problems = check_run(run, deep=deep)
    if not any(p.startswith(str(run.path)) for p in problems):  # not a link: its files may be read
        for key, read in (("config", run.config), ("summary", run.summary)):
            try:
                record[key] = read()
            except (StoreError, OSError):
                pass  # already among the problems
        try:
            status = run.status()
            record["status"] = live_status(run, status.get("status", "new"))
            record["rounds_done"] = status.get("rounds_done", 0)
        except (StoreError, OSError):
            pass
    record["damaged"] = bool(problems)
    record["problems"] = problems
    return record


def _adopt(store: RunStore, run_ids: list[str]) -> int:
    """``flcore runs --adopt``: record the digests of trusted legacy tensor files."""
    known = store.run_ids()
    chosen = known if run_ids == ["all"] else run_ids
    unknown = [rid for rid in chosen if rid not in known]
    if unknown:
        print(f"flcore: error: no run {quote(unknown[0], 80)} in {store.root}", file=sys.stderr)
        return EXIT_USAGE
    failed = 0
    for rid in chosen:
        run = store.run(rid)
        try:
            with RunLock(run.path) as _:
                adopted = run.adopt_tensor_files()
        except (StoreError, OSError) as exc:
            failed += 1
            print(f"flcore: error: {rid}: {exc}", file=sys.stderr)
            continue
        print(f"{rid}  adopted {', '.join(adopted) if adopted else 'nothing (every file has its digest)'}")
    return EXIT_DAMAGED if failed else 0


def _cmd_runs(args: argparse.Namespace) -> int:
    store = RunStore(args.store)
    if args.adopt:
        return _adopt(store, args.adopt)
    records = [_run_record(store.run(run_id), args.verify) for run_id in store.run_ids()]
    damaged = [r for r in records if r["damaged"]]
    if args.json:
        print(json.dumps(records, sort_keys=True, default=str))
    elif not records:
        print(f"no runs in {args.store}")
    else:
        for r in records:
            c, s = r["config"] or {}, r["summary"] or {}
            mark = "  DAMAGED: " + "; ".join(r["problems"]) if r["damaged"] else ""
            print(f"{r['run_id']}  {r['status']:<11} {r['rounds_done'] if r['rounds_done'] is not None else '?':>6} "
                  f"rounds  {str(c.get('method'))[:40]}/{str(c.get('dataset'))[:40]} alpha={str(c.get('alpha'))[:40]}"
                  f"  mean_last_100={s.get('mean_last_100')}{mark}")
    if damaged:
        print(f"flcore: {len(damaged)} of {len(records)} run records damaged; `flcore run` with a run's "
              "config repairs it from its checkpoint where possible, or says what to delete", file=sys.stderr)
    return EXIT_DAMAGED if args.verify and damaged else 0


def _cmd_methods(args: argparse.Namespace) -> int:

    try:
        rows = describe_methods(scale=args.scale, dataset=args.dataset, alpha=args.alpha)
    except ConfigError as exc:
        print(f"flcore: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(rows, sort_keys=True))
        return 0
    for r in rows:
        hp = ", ".join(f"{k}={v}" for k, v in r["hyperparameters"].items()) or "-"
        print(f"{r['name']:<22} {'+'.join(r['parts']):<16} comm {r['downloads_per_round']}/"
              f"{r['uploads_per_round']}  grad evals/step {r['grad_evals_per_step']}  {hp}")
    return 0


#: The exit status of a command whose standard output was closed: 128 + SIGPIPE, as a shell reports it.
EXIT_CLOSED_STDOUT = 141


def closed_stdout() -> int:
    """Point stdout at the null device, so that the interpreter's last flush cannot raise a
    second ``BrokenPipeError`` with a traceback, and return :data:`EXIT_CLOSED_STDOUT`."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)
    return EXIT_CLOSED_STDOUT


def main(argv: list[str] | None = None) -> int:
    from flcore.cli.analyze import run_analyze  # as in build_parser: not with this module

    args = build_parser().parse_args(argv)

    if EXTERNAL_METHOD_ERRORS or EXTERNAL_PAPER_ERRORS:  # before anything runs: a registry lacks what was asked
        print(f"flcore: error: {(EXTERNAL_METHOD_ERRORS + EXTERNAL_PAPER_ERRORS)[0]}", file=sys.stderr)
        return EXIT_USAGE
    limit_threads()  # a taskset or container limit sizes torch's threads and the workers

    handlers = {"run": _cmd_run, "sweep": _cmd_sweep, "runs": _cmd_runs, "methods": _cmd_methods,
                "analyze": run_analyze,
                **args.extra_handlers}
    try:
        with handled():
            return handlers[args.command](args)
    except BrokenPipeError:  # the reader of stdout went away (``| head -1``): stop as a pipeline would
        return closed_stdout()
    except KeyboardInterrupt as exc:  # the commands without their own message
        print("flcore: interrupted", file=sys.stderr)
        return exit_status(exc)
    except OSError as exc:  # a full disk in a command without its own message: one line too
        if not is_disk_full(exc):
            raise
        print(f"flcore: error: no space left on the device writing {full_path(exc)}; free space and run the same "
              "command again (runs resume from their last checkpoints)", file=sys.stderr)
        return EXIT_DAMAGED


if __name__ == "__main__":
    raise SystemExit(main())
