"""``flcore reproduce`` and ``flcore book``: the papermill batch and the book build.

``flcore reproduce ARTIFACT... --scale S`` (or ``--all``) executes each artifact's
notebook (``notebooks/<paper>/<id>.ipynb``) with papermill into the book's source tree
(``book/artifacts/<paper>/<id>.ipynb``), with the parameters ``scale``, ``device``,
``seeds``, ``store`` (and ``workers``, ``data_root``, ``download`` where the notebook
has them).  Before the notebooks run, the union of the runs they need is trained once
(shared runs once, several at a time on a CPU, or as tasks of a Ray cluster with
``--executor ray --address HOST:PORT``: :mod:`flcore.executors`); each notebook then finds
its runs in the store.  A notebook that fails marks its own artifact failed and the others
go on; a summary is printed at the end and the exit status is 1 if anything failed.

Each artifact's outcome goes to a small manifest, ``book/_artifacts.json``: status (ok,
failed, skipped), scale, seeds, duration, the notebook's hash and flcore's fingerprint
(a hash of its source and published-data files).  ``flcore book --scale S`` reproduces
what is stale -- never run, failed, run at another scale or with other seeds, or run
with another notebook or flcore -- then builds the site with ``jupyter-book build . -W
-n --keep-going`` (``_build/html/index.html``).

Wire into the CLI with ``handlers.update(register(subparsers))``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

MANIFEST = Path("book") / "_artifacts.json"
EXIT_FAILED = 1
EXIT_USAGE = 2


# --------------------------------------------------------------------------- fingerprints

def _sha256_files(paths) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(path.as_posix()).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def flcore_fingerprint() -> str:
    """Hash of flcore's source and published-data files: a notebook executed with other
    code is stale even when the version string did not change."""
    package = Path(__file__).resolve().parent
    files = [p for p in package.rglob("*") if p.is_file() and p.suffix in (".py", ".csv", ".yaml")
             and "__pycache__" not in p.parts]
    return _sha256_files(files)[:16]


def notebook_hash(path: Path) -> str:
    """Hash of a notebook's cell sources (outputs and metadata do not count)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    text = json.dumps([(c.cell_type, c.source) for c in nb.cells])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- manifest

def load_manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    if not path.is_file():
        return {"artifacts": {}}
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return {"artifacts": {}}
    data.setdefault("artifacts", {})
    return data


def save_manifest(root: Path, manifest: dict[str, Any]) -> None:
    from .store import atomic_write_json

    (root / MANIFEST).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(root / MANIFEST, manifest, sort_keys=True)


def stale_reason(artifact, entry: dict | None, root: Path, scale: str, seeds: list[int],
                 fingerprint: str) -> str | None:
    """Why ``artifact`` must be re-executed, or None when its page is up to date."""
    if entry is None:
        return "never run"
    if not (root / artifact.book_path).is_file():
        return "output missing"
    if entry.get("status") != "ok":
        return f"last run {entry.get('status')}"
    if entry.get("scale") != scale:
        return f"built at scale {entry.get('scale')}"
    if list(entry.get("seeds", [])) != list(seeds):
        return "other seeds"
    try:
        current = notebook_hash(root / artifact.notebook_path)
    except Exception as exc:  # noqa: BLE001 - an unreadable notebook is stale, not fatal
        return f"notebook unreadable ({_short_error(exc)})"
    if entry.get("notebook") != current:
        return "notebook changed"
    if entry.get("flcore") != fingerprint:
        return "flcore changed"
    return None


# --------------------------------------------------------------------------- execution

def _parameters(notebook: Path, values: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``values`` the notebook's ``parameters`` cell declares."""
    import papermill

    declared = papermill.inspect_notebook(str(notebook))
    return {k: v for k, v in values.items() if k in declared}


def execute_artifact(artifact, root: Path, parameters: dict[str, Any], timeout: int | None = None,
                     store: str | None = None) -> dict:
    """Run one artifact's notebook with papermill into the book tree; never raises.

    The run store reaches the kernel as ``$FLCORE_STORE``, not as a parameter, so that no
    path of the building machine is written into the page.
    """
    import papermill

    source = root / artifact.notebook_path
    output = root / artifact.book_path
    output.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    entry: dict[str, Any] = {"output": artifact.book_path}
    saved_store = os.environ.get("FLCORE_STORE")
    try:
        if not source.is_file():
            raise FileNotFoundError(f"notebook {artifact.notebook_path} not found under {root}")
        if store is not None:
            os.environ["FLCORE_STORE"] = store
        papermill.execute_notebook(str(source), str(output), parameters=_parameters(source, parameters),
                                   kernel_name="python3", cwd=str(root), progress_bar=False,
                                   log_output=False, execution_timeout=timeout)
        entry["status"] = "ok"
    except Exception as exc:  # noqa: BLE001 - one failing notebook must not stop the batch
        entry["status"] = "failed"
        entry["error"] = _short_error(exc)
    finally:
        if saved_store is None:
            os.environ.pop("FLCORE_STORE", None)
        else:
            os.environ["FLCORE_STORE"] = saved_store
    if output.is_file():
        finish_page(output, parameters.get("scale", "small"), parameters.get("seeds", [0]), _artifact_class(artifact))
    entry["duration_s"] = round(time.perf_counter() - started, 1)
    return entry


def notebook_jobs(requested: int | None, notebooks: int) -> int:
    """Notebooks executed at once: ``--jobs`` or one per core, never more than there are."""
    jobs = requested if requested is not None else (os.cpu_count() or 1)
    return max(1, min(jobs, notebooks))


def _execute_in_worker(artifact_id: str, root: Path, parameters: dict[str, Any], timeout: int | None,
                       store: str | None, threads: int) -> dict:
    """:func:`execute_artifact` in a worker process whose kernels use ``threads`` threads
    each (unless the user set ``OMP_NUM_THREADS``), so parallel notebooks share the cores
    instead of oversubscribing them."""
    from .experiments.artifacts import get_artifact

    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    os.environ.setdefault("MKL_NUM_THREADS", str(threads))
    return execute_artifact(get_artifact(artifact_id), root, parameters, timeout=timeout, store=store)


def _execute_all(artifacts: list, root: Path, parameters: dict[str, Any], timeout: int | None,
                 store: str | None, jobs: int):
    """Execute the notebooks, ``jobs`` at a time (each in its own kernel); yields
    ``(artifact, manifest entry)`` as they finish.  Notebooks read runs that were all
    trained beforehand (``_prefetch_runs``), so they do not depend on each other."""
    if jobs <= 1:
        for artifact in artifacts:
            yield artifact, execute_artifact(artifact, root, parameters, timeout=timeout, store=store)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    threads = max(1, (os.cpu_count() or 1) // jobs)
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_execute_in_worker, a.id, root, parameters, timeout, store, threads): a
                   for a in artifacts}
        for future in as_completed(futures):
            artifact = futures[future]
            try:
                entry = future.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker fails its notebook, not the batch
                entry = {"output": artifact.book_path, "status": "failed", "error": _short_error(exc),
                         "duration_s": 0.0}
            yield artifact, entry


def _artifact_class(artifact) -> str:
    from .experiments.inventory import entry

    try:
        return entry(artifact.id).cls
    except KeyError:
        return "result"


def finish_page(path: Path, scale: str, seeds: list[int], cls: str = "result") -> None:
    """Make an executed notebook a book page: the scale and data set in its first lines
    (after the title), every code cell's input collapsed under its output (``hide-input``)
    and code cells without output left out of the page (``remove-cell``)."""
    import nbformat

    from .report.page import scale_banner

    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if "flcore-banner" not in c.metadata.get("tags", [])]
    for cell in cells:
        if cell.cell_type == "code":
            # code that shows something is collapsed under its output; code that shows
            # nothing (installation, parameters, imports) is left to the notebook itself
            tags = cell.metadata.setdefault("tags", [])
            tag = "hide-input" if cell.get("outputs") else "remove-cell"
            if tag not in tags:
                tags.append(tag)
    title = next((i for i, c in enumerate(cells) if c.cell_type == "markdown"), -1)
    day = datetime.now(timezone.utc).date().isoformat()
    banner = nbformat.v4.new_markdown_cell(scale_banner(scale, seeds, day, cls), metadata={"tags": ["flcore-banner"]})
    if title >= 0 and cells[title].source.lstrip().startswith("#"):
        # The title is the cell's first line; the banner goes right below it.
        first, _, rest = cells[title].source.partition("\n")
        cells[title].source = first
        cells.insert(title + 1, banner)
        if rest.strip():
            follow = nbformat.v4.new_markdown_cell(rest.lstrip("\n"))
            cells.insert(title + 2, follow)
    else:
        cells.insert(0, banner)
    nb.cells = cells
    papermill = nb.metadata.get("papermill", {})
    for key in ("input_path", "output_path"):  # no path of the building machine in the page
        if papermill.get(key):
            papermill[key] = Path(papermill[key]).name
    nbformat.validator.normalize(nb)
    nbformat.write(nb, path)


def _short_error(exc: Exception) -> str:
    name = getattr(exc, "ename", None) or type(exc).__name__
    value = getattr(exc, "evalue", None) or str(exc)
    return f"{name}: {value}".strip().splitlines()[0][:300]


def _prefetch_runs(artifacts, args, store: str, log) -> None:
    """Train the union of the runs the artifacts need, once, before their notebooks run."""
    from .experiments.artifacts import runs_for
    from .experiments.claims import spread_specs
    from .experiments.runner import ensure_runs

    specs = runs_for([a.id for a in artifacts], args.scale, args.seeds)
    if not specs:
        return
    specs += spread_specs(args.scale)  # the claims' tie rule needs the measured seed spread
    executor = getattr(args, "run_executor", None)
    try:
        frame = ensure_runs(specs, store=store, device=args.device, workers=args.workers,
                            data_root=args.data_root, download=args.download, raise_on_failure=False, log=log,
                            executor=executor, progress=executor is not None and executor.name != "local")
    except Exception as exc:  # noqa: BLE001 - the notebooks will report their own failures
        log(f"training the shared runs failed ({_short_error(exc)}); each notebook will retry its own")
        return
    for row in frame[frame["status"] == "failed"].drop_duplicates("run_id").itertuples():
        log(f"run {row.run_id} failed: {row.error} (traceback in {row.run_dir}/status.json)")


def make_run_executor(args: argparse.Namespace):
    """The executor ``--executor`` names, connected (Ray) before any compute; ``ValueError``
    or :class:`flcore.executors.ray_executor.ExecutorError` with a one-line reason otherwise."""
    from .executors import make_executor

    name = getattr(args, "executor", "local")
    if name != "ray":
        for flag in ("address", "gpus_per_run"):
            if getattr(args, flag, None) is not None:
                raise ValueError(f"--{flag.replace('_', '-')} needs --executor ray")
    if name == "local":
        return None  # ensure_runs' default: today's local behaviour
    executor = make_executor(name, device=args.device, address=args.address, gpus_per_run=args.gpus_per_run)
    executor.gpus(executor.connect())
    return executor


def reproduce(artifact_ids: list[str], args: argparse.Namespace, force: bool = True,
              log: Callable[[str], None] = print, results: dict[str, dict] | None = None) -> dict[str, dict]:
    """Execute the notebooks of ``artifact_ids`` (only the stale ones unless ``force``);
    returns ``{artifact id: manifest entry}`` for every artifact considered.  ``results``
    (a dict) is filled as the batch goes, so a caller still holds what was done if the
    batch is interrupted."""
    from .experiments.artifacts import get_artifact

    root = Path(args.root).resolve()
    store = str(Path(args.store).expanduser().resolve())
    manifest = load_manifest(root)
    fingerprint = flcore_fingerprint()
    artifacts = [get_artifact(a) for a in artifact_ids]
    todo = []
    results = {} if results is None else results
    for artifact in artifacts:
        reason = "forced" if force else stale_reason(artifact, manifest["artifacts"].get(artifact.id), root,
                                                    args.scale, args.seeds, fingerprint)
        if reason is None:
            results[artifact.id] = {**manifest["artifacts"][artifact.id], "status": "skipped",
                                    "reason": "up to date"}
        else:
            todo.append((artifact, reason))
    if todo:
        _prefetch_runs([a for a, _ in todo], args, store, log)
    parameters = {"scale": args.scale, "device": args.device, "seeds": list(args.seeds),
                  "workers": args.workers, "data_root": args.data_root,
                  "download": bool(args.download)}
    for artifact, reason in todo:
        log(f"[{artifact.id}] executing ({reason}) -> {artifact.book_path}")
    for artifact, entry in _execute_all([a for a, _ in todo], root, parameters, args.timeout, store,
                                        notebook_jobs(getattr(args, "jobs", None), len(todo))):
        try:
            hashed = notebook_hash(root / artifact.notebook_path) if (root / artifact.notebook_path).is_file() else None
        except Exception as exc:  # noqa: BLE001 - one unreadable notebook must not stop the batch
            hashed = None
            entry.update(status="failed", error=entry.get("error") or f"unreadable notebook: {_short_error(exc)}")
        finished = datetime.now(timezone.utc).isoformat(timespec="seconds")
        entry.update(scale=args.scale, seeds=list(args.seeds), notebook=hashed,
                     flcore=fingerprint, flcore_version=_version(), finished=finished)
        entry["built"] = _built_scales(manifest["artifacts"].get(artifact.id), entry)
        manifest["artifacts"][artifact.id] = entry
        save_manifest(root, manifest)
        results[artifact.id] = entry
        log(f"[{artifact.id}] {entry['status']} in {entry['duration_s']:.0f} s"
            + (f": {entry['error']}" if entry.get("error") else ""))
    return results


def _built_scales(previous: dict | None, entry: dict) -> dict:
    """``{scale: {"finished", "seeds"}}`` of the scales at which the page was built
    successfully, carried over from the previous manifest entry."""
    built = dict((previous or {}).get("built", {}))
    if entry["status"] == "ok":
        built[entry["scale"]] = {"finished": entry["finished"], "seeds": entry["seeds"]}
    else:
        built.pop(entry["scale"], None)
    return built


def _version() -> str:
    from . import __version__

    return __version__


def print_summary(results: dict[str, dict], out=None) -> None:
    """One line per artifact (status, seconds, error or reason), then the counts."""
    out = out or sys.stdout
    if not results:
        return
    width = max(len(k) for k in results)
    print(f"\n{'artifact':<{width}}  status   seconds  note", file=out)
    for aid, entry in results.items():
        note = entry.get("error") or entry.get("reason") or ""
        seconds = entry.get("duration_s")
        shown = f"{seconds:7.1f}" if isinstance(seconds, (int, float)) and entry["status"] != "skipped" else "      -"
        print(f"{aid:<{width}}  {entry['status']:<7} {shown}  {note}", file=out)
    counts = {s: sum(e["status"] == s for e in results.values()) for s in ("ok", "failed", "skipped")}
    print(f"{counts['ok']} ok, {counts['failed']} failed, {counts['skipped']} skipped", file=out)


# --------------------------------------------------------------------------- book

def build_book(root: Path, path_output: str | None = None, strict: bool = True) -> int:
    """``jupyter-book build <root> -W -n --keep-going``; returns its exit status."""
    command = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", str(root)]
    if strict:
        command += ["-W", "-n", "--keep-going"]
    if path_output:
        command += ["--path-output", path_output]
    print("building the book: jupyter-book " + " ".join(command[3:]), flush=True)
    return subprocess.call(command, cwd=root)


# --------------------------------------------------------------------------- CLI

def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"got {value}; must be >= 1")
    return value


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale", default="small", choices=("smoke", "small", "paper"),
                   help="smoke (seconds), small (CPU default) or paper (the papers' protocol, GPU)")
    p.add_argument("--store", default=os.environ.get("FLCORE_STORE") or "runs",
                   help="run store directory (default: $FLCORE_STORE or runs)")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    p.add_argument("--seeds", type=int, nargs="+", default=[0], help="seeds of every configuration (default: 0)")
    p.add_argument("--workers", type=int, default=None, help="runs trained at once on a CPU (default: one per core)")
    p.add_argument("--data-root", default="data", help="CIFAR folder (paper scale)")
    p.add_argument("--download", action="store_true", help="fetch CIFAR through torchvision when missing")
    p.add_argument("--root", default=".", help="repository root holding notebooks/, book/ and _toc.yml")
    p.add_argument("--timeout", type=int, default=None, help="seconds a notebook cell may run (default: no limit)")
    p.add_argument("--jobs", type=_positive_int, default=None,
                   help="notebooks executed at once, each in its own kernel (default: one per core)")
    p.add_argument("--executor", default="local", choices=("local", "ray"),
                   help="where missing runs are trained: local (this machine) or ray (a Ray cluster)")
    p.add_argument("--address", default=None, help="Ray cluster: auto | HOST:PORT (default: $RAY_ADDRESS "
                   "or a Ray instance on this machine)")
    p.add_argument("--gpus-per-run", type=float, default=None,
                   help="Ray: GPUs per run (default: 1 on a cluster with GPUs, else 0)")


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .experiments.artifacts import artifact_ids, get_artifact

    known = artifact_ids()
    if args.list:
        return _list(args)
    if args.all == bool(args.artifacts):
        print("flcore: error: give artifact ids or --all (known: " + ", ".join(known) + ")", file=sys.stderr)
        return EXIT_USAGE
    unknown = [a for a in args.artifacts if a not in known]
    if unknown:
        print(f"flcore: error: unknown artifact(s) {', '.join(unknown)}; known: {', '.join(known)}",
              file=sys.stderr)
        return EXIT_USAGE
    if not _connect_executor(args):
        return EXIT_USAGE
    results: dict[str, dict] = {}
    try:
        results = reproduce(known if args.all else args.artifacts, args, force=not args.stale_only,
                            results=results)
    finally:
        _disconnect_executor(args)
        print_summary(results)  # also when the batch stopped early (interrupted)
    return EXIT_FAILED if any(e["status"] == "failed" for e in results.values()) else 0


def _list(args: argparse.Namespace) -> int:
    """``--list``: every table and figure of the five papers with its status; for the
    reproduced ones, whether the page is stale at ``--scale`` (and why)."""
    from .experiments.artifacts import get_artifact
    from .experiments.inventory import coverage

    root = Path(args.root).resolve()
    manifest = load_manifest(root)
    fingerprint = flcore_fingerprint()
    rows = coverage(manifest)
    for row in rows:
        if row["status"] == "reproduced":
            reason = stale_reason(get_artifact(row["id"]), manifest["artifacts"].get(row["id"]), root, args.scale,
                                  args.seeds, fingerprint)
            row["stale"] = reason
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    for row in rows:
        if row["status"] == "reproduced":
            state = f"stale: {row['stale']}" if row["stale"] else "up to date"
            built = ", ".join(row["scales_built"]) or "-"
            print(f"{row['id']:<20} reproduced       built: {built:<18} {state}")
        else:
            print(f"{row['id']:<20} {row['status']}")
    counts = {s: sum(r["status"] == s for r in rows) for s in ("reproduced", "pending", "not_regenerable")}
    print(f"{len(rows)} tables and figures: {counts['reproduced']} reproduced, {counts['pending']} pending, "
          f"{counts['not_regenerable']} not regenerable")
    return 0


def _cmd_claims(args: argparse.Namespace) -> int:
    """``flcore claims``: the verdict of every claim at ``--scale`` from the run store."""
    from .experiments.claims import evaluate_claims
    from .experiments.inventory import PAPERS

    unknown = [p for p in args.paper or [] if p not in PAPERS]
    if unknown:
        print(f"flcore: error: --paper {', '.join(unknown)}: allowed values: {', '.join(PAPERS)}", file=sys.stderr)
        return EXIT_USAGE
    results = evaluate_claims(args.scale, Path(args.store).expanduser(), args.seeds, papers=args.paper)
    if args.json:
        for result in results:
            print(json.dumps(result))
        return 0
    width = max((len(r["id"]) for r in results), default=10)
    for result in results:
        gaps = ", ".join("-" if o is None else f"{o['gap']:+.2f}" for o in result["ours"])
        print(f"{result['id']:<{width}}  {result['verdict']:<11}  ours: {gaps}"
              + (f"  ({result['reason']})" if result["verdict"] == "not_checked" and result["reason"] else ""))
    counts = {v: sum(r["verdict"] == v for r in results) for v in ("holds", "tie", "fails", "not_checked")}
    print(f"{len(results)} claims at the {args.scale} scale: {counts['holds']} hold, {counts['tie']} tie, "
          f"{counts['fails']} fail, {counts['not_checked']} not checked")
    return 0


def _connect_executor(args: argparse.Namespace) -> bool:
    """Set ``args.run_executor``; print the one-line reason and return False when it cannot start."""
    from .executors.ray_executor import ExecutorError

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
    from .experiments.artifacts import artifact_ids

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
    from .report.site import write_site_pages

    write_site_pages(Path(args.root).resolve(), args.scale, Path(args.store).expanduser(), args.seeds)
    status = build_book(Path(args.root).resolve(), args.path_output, strict=not args.lax)
    index = Path(args.path_output or args.root).resolve() / "_build" / "html" / "index.html"
    print(f"book {'built' if status == 0 else 'build FAILED'} in {time.perf_counter() - started:.0f} s: {index}")
    failed = any(e["status"] == "failed" for e in results.values())
    return EXIT_FAILED if failed or status != 0 else 0


def register(subparsers) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``reproduce`` and ``book`` to ``subparsers``; returns their handlers by name."""
    p = subparsers.add_parser("reproduce", help="execute artifact notebooks into the book (papermill)",
                              description=__doc__.split("\n\n")[1])
    p.add_argument("artifacts", nargs="*", metavar="ARTIFACT", help="artifact ids, e.g. fedsam-table-2")
    p.add_argument("--all", action="store_true", help="every registered artifact")
    p.add_argument("--stale-only", action="store_true", help="skip artifacts whose page is up to date")
    p.add_argument("--list", action="store_true",
                   help="list the 110 tables and figures: status, scales built, claims, staleness")
    p.add_argument("--json", action="store_true", help="with --list: one JSON object per table or figure")
    _common(p)
    b = subparsers.add_parser("book", help="reproduce the stale artifacts, then build the site",
                              description=__doc__.split("\n\n")[2])
    b.add_argument("--force", action="store_true", help="re-execute every notebook, stale or not")
    b.add_argument("--no-reproduce", action="store_true", help="only build the site from the executed notebooks")
    b.add_argument("--path-output", default=None, help="build into PATH/_build instead of ./_build")
    b.add_argument("--lax", action="store_true", help="do not turn warnings into errors (-W -n off)")
    _common(b)
    c = subparsers.add_parser("claims", help="the verdict of every claim of the papers at a scale, from the run store")
    c.add_argument("--json", action="store_true", help="one JSON object per claim")
    c.add_argument("--paper", nargs="+", default=None, help="only these papers (fedsam fedgloss fedgf fedlesam fedima)")
    _common(c)
    return {"reproduce": _cmd_reproduce, "book": _cmd_book, "claims": _cmd_claims}


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (``python -m flcore.reproduce``) until the CLI wires these in."""
    parser = argparse.ArgumentParser(prog="flcore")
    sub = parser.add_subparsers(dest="command", required=True)
    handlers = register(sub)
    args = parser.parse_args(argv)
    return handlers[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
