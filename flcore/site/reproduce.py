"""``flcore reproduce`` and ``flcore book``: the papermill batch and the book build.

``flcore reproduce ARTIFACT... --scale S`` (or ``--all``) executes each artifact's
notebook (``notebooks/<paper>/<id>.ipynb``) with papermill into the book's source tree
(``book/artifacts/<paper>/<id>.ipynb``), with the parameters ``scale``, ``device``,
``seeds``, ``store`` (and ``workers``, ``data_root``, ``download``, ``max_rounds`` where the
notebook has them).  ``--max-rounds N`` caps every run at N rounds (a preview whose pages
say so in their first lines; the runs continue from their checkpoints when the cap is
raised or removed).  Before the notebooks run, the union of the runs they need is trained once
(shared runs once, several at a time on a CPU, or as tasks of a Ray cluster with
``--executor ray --address HOST:PORT``: :mod:`flcore.executors`); each notebook then finds
its runs in the store.  On this machine the training starts with its estimated time (the
cost model scaled by this machine's speed, measured once and kept in the store:
:mod:`flcore.reproduction.estimate`) and shows one live line while it goes -- runs done,
groups running, elapsed, time left (:mod:`flcore.reproduction.progress`).  A notebook
that fails marks its own artifact failed and the others
go on; a summary is printed at the end and the exit status is 1 if anything failed.

Each artifact's outcome goes to a small manifest, ``book/_artifacts.json``: status (ok,
failed, skipped), scale, seeds, duration, the notebook's hash and flcore's fingerprint
(a hash of its source and published-data files).

An interruption leaves every page as it was or complete: before the notebooks run, their
manifest entries are marked ``executing`` (stale, whatever happens next), and each
notebook executes into a temporary file beside its page that replaces the page only when
the notebook succeeded (a failed notebook's output becomes the page only where there was
none, so the book shows the error).  Ctrl-C, SIGTERM or SIGHUP stops the notebook workers
(:mod:`flcore.planning.workers`) and leaves at most a stray temporary file.  ``flcore book --scale S`` reproduces
what is stale -- never run, failed, run at another scale or with other seeds, or run
with another notebook or flcore -- then builds the site with ``jupyter-book build . -W
-n --keep-going`` (``_build/html/index.html``).

The command line (:mod:`flcore.cli.reproduce`) calls :func:`reproduce` and :func:`build_book`.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from concurrent.futures import as_completed
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from flcore.cpus import available_cpus, share_threads
from flcore.executors import make_executor
from flcore.planning.workers import submit, worker_pool
from flcore.report.page import CAPPED_BANNER_KEY, scale_banner, verdict_box
from flcore.report.provenance import provenance_markdown
from flcore.report.repository import UNSET_NOTE, build_config
from flcore.reproduction.artifacts import get_artifact, runs_for
from flcore.reproduction.claims import claim_specs, evaluate, evaluate_claims, spread_specs, with_claim_seeds
from flcore.reproduction.estimate import this_machine
from flcore.reproduction.inventory import artifact_class
from flcore.reproduction.runner import MAX_ROUNDS_ENV, ensure_runs, results_frame
from flcore.reproduction.table_check import code_reads_claim_seeds
from flcore.site.kernels import WarmKernel, process_kernel
from flcore.site.manifest import (
    flcore_fingerprint,
    load_manifest,
    notebook_hash,
    one_line_error,
    save_manifest,
    stale_reason,
)
from flcore.site.verdict_files import FOLDER as VERDICT_FOLDER
from flcore.version import __version__


def _parameters(notebook: Path, values: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``values`` the notebook's ``parameters`` cell declares."""
    import papermill

    declared = papermill.inspect_notebook(str(notebook))
    return {k: v for k, v in values.items() if k in declared}


def execute_artifact(artifact, root: Path, parameters: dict[str, Any], timeout: int | None = None,
                     store: str | None = None, kernel: WarmKernel | None = None) -> dict:
    """Run one artifact's notebook with papermill into the book tree; never raises.

    ``kernel``: a :class:`~flcore.site.kernels.WarmKernel` to execute in (reset first);
    None starts a kernel for this notebook alone (and stops it after).

    The run store reaches the kernel as ``$FLCORE_STORE``, not as a parameter, so that no
    path of the building machine is written into the page; a round cap
    (``parameters["max_rounds"]``) as the notebook's ``max_rounds`` parameter, which its
    :class:`~flcore.report.page.Page` applies to every ``ensure_runs`` of the notebook, and
    as ``$FLCORE_MAX_ROUNDS`` for a notebook that declares no such parameter.
    """
    import papermill

    source = root / artifact.notebook_path
    output = root / artifact.book_path
    output.parent.mkdir(parents=True, exist_ok=True)
    # the notebook executes into a temporary file beside the page (module docstring)
    partial = output.with_name(f".{output.stem}.{uuid.uuid4().hex}.tmp{output.suffix}")
    started = time.perf_counter()
    entry: dict[str, Any] = {"output": artifact.book_path}
    saved = {name: os.environ.get(name) for name in ("FLCORE_STORE", MAX_ROUNDS_ENV)}
    try:
        try:
            if not source.is_file():
                raise FileNotFoundError(f"notebook {artifact.notebook_path} not found under {root}")
            if store is not None:
                os.environ["FLCORE_STORE"] = store
            os.environ.pop(MAX_ROUNDS_ENV, None)
            if parameters.get("max_rounds") is not None:
                os.environ[MAX_ROUNDS_ENV] = str(int(parameters["max_rounds"]))
            # a kernel of our own even for one notebook: its log stays off the terminal
            kernel_used = kernel if kernel is not None else WarmKernel()
            try:
                papermill.execute_notebook(str(source), str(partial), parameters=_parameters(source, parameters),
                                           kernel_name="python3", cwd=str(root), progress_bar=False,
                                           log_output=False, execution_timeout=timeout,
                                           km=kernel_used.manager(str(root)))
            finally:
                if kernel is None:
                    kernel_used.shutdown()
            entry["status"] = "ok"
        except Exception as exc:  # noqa: BLE001 - one failing notebook must not stop the batch
            entry["status"] = "failed"
            entry["error"] = one_line_error(exc)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        if partial.is_file() and (entry["status"] == "ok" or not output.exists()):
            scale, seeds = parameters.get("scale", "small"), parameters.get("seeds", [0])
            note = verdict = claim_seeds = None
            if store is not None:
                note = provenance_markdown(results_frame(runs_for([artifact.id], scale, seeds), store))
                checked = evaluate_claims(scale, store, seeds, artifact=artifact.id)
                if artifact.questions is not None:  # a page of the book's own: its own questions
                    checked += [evaluate(claim, scale, store, seeds) for claim in artifact.questions()]
                verdict = verdict_box(checked, scale)
                claim_seeds = verdict_seeds(checked)
            finish_page(partial, scale, seeds, artifact_class(artifact.id), page_name=output.name, artifact=artifact,
                        max_rounds=parameters.get("max_rounds"), provenance=note, verdict=verdict,
                        claim_seeds=claim_seeds)
            os.replace(partial, output)
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()
    entry["duration_s"] = round(time.perf_counter() - started, 1)
    return entry


def notebook_jobs(requested: int | None, notebooks: int) -> int:
    """Notebooks executed at once: ``--jobs`` or one per core, never more than there are."""
    jobs = requested if requested is not None else available_cpus()
    return max(1, min(jobs, notebooks))


def _execute_in_worker(artifact_id: str, root: Path, parameters: dict[str, Any], timeout: int | None,
                       store: str | None, threads: int, fresh_kernels: bool = False) -> dict:
    """:func:`execute_artifact` in a worker process whose kernels use ``threads`` threads
    each (unless the user set ``OMP_NUM_THREADS``), so parallel notebooks share the cores
    instead of oversubscribing them; in the worker's warm kernel unless ``fresh_kernels``."""

    share_threads(threads)
    kernel = None if fresh_kernels else process_kernel()
    return execute_artifact(get_artifact(artifact_id), root, parameters, timeout=timeout, store=store,
                            kernel=kernel)


def _execute_all(artifacts: list, root: Path, parameters: dict[str, Any], timeout: int | None,
                 store: str | None, jobs: int, scale_of: dict[str, str] | None = None,
                 fresh_kernels: bool = False):
    """Execute the notebooks, ``jobs`` at a time (each worker in its warm kernel,
    :mod:`flcore.site.kernels`, or each notebook in a new one with ``fresh_kernels``);
    yields ``(artifact, manifest entry)`` as they finish.  Notebooks read runs that were
    all trained beforehand (:func:`prefetch_runs`), so they do not depend on each other.
    ``scale_of``: a notebook's scale where it is not ``parameters["scale"]``."""
    def params(artifact) -> dict[str, Any]:
        return {**parameters, "scale": (scale_of or {}).get(artifact.id, parameters["scale"])}

    if jobs <= 1:
        kernel = None if fresh_kernels else WarmKernel()
        try:
            for artifact in artifacts:
                yield artifact, execute_artifact(artifact, root, params(artifact), timeout=timeout, store=store,
                                                 kernel=kernel)
        finally:
            if kernel is not None:
                kernel.shutdown()
        return

    threads = max(1, available_cpus() // jobs)

    def submit_all(pool):
        return {submit(pool, _execute_in_worker, a.id, root, params(a), timeout, store, threads, fresh_kernels): a
                for a in artifacts}

    with worker_pool(jobs, submit_all=submit_all) as (_, futures):
        for future in as_completed(futures):
            artifact = futures[future]
            try:
                entry = future.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker fails its notebook, not the batch
                entry = {"output": artifact.book_path, "status": "failed", "error": one_line_error(exc),
                         "duration_s": 0.0}
            yield artifact, entry


def verdict_seeds(results) -> list[int]:
    """The seeds the comparisons of ``results`` (:func:`~flcore.reproduction.claims.evaluate`'s) read."""
    return sorted({seed for result in results for comparison in result["comparisons"]
                   for seed in comparison.get("seeds") or []})


def reads_claim_seeds(nb) -> bool:
    """Whether the executed notebook ``nb`` builds its tables from the seeds the verdicts read
    (:func:`flcore.reproduction.table_check.code_reads_claim_seeds`)."""
    return any(cell.cell_type == "code" and code_reads_claim_seeds(cell.source) for cell in nb.cells)


def shown_specs(nb, artifact, scale: str, seeds: list[int]) -> list:
    """The runs the tables and figures of ``artifact``'s executed notebook ``nb`` show: its
    runs at ``scale`` and ``seeds``, with the claims' seeds of its cells where the notebook
    reads them (:func:`reads_claim_seeds`)."""
    specs = artifact.runs(scale, seeds)
    return with_claim_seeds(specs, scale, artifact.id) if reads_claim_seeds(nb) else specs


def finish_page(path: Path, scale: str, seeds: list[int], cls: str = "result", page_name: str | None = None,
                artifact=None, max_rounds: int | None = None, provenance: str | None = None,
                verdict: str | None = None, claim_seeds: list[int] | None = None) -> None:
    """Make an executed notebook a book page: the scale and what its runs are in its first
    lines (after the title; read from the runs its tables show, :func:`shown_specs`, and
    ``claim_seeds``, the seeds its verdicts read (:func:`verdict_seeds`; without them the
    seeds the claims' runs add): :func:`flcore.report.page.scale_banner`; a capped preview,
    built with ``max_rounds``, says so there), the page's ``verdict`` box
    (:func:`flcore.report.page.verdict_box`)
    and the ``provenance`` note of imported runs below them, every code cell's
    input collapsed under its output (``hide-input``) and code cells without output left
    out of the page (``remove-cell``); ``page_name``: the page's file name when the notebook
    was executed into a temporary file."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    specs = shown_specs(nb, artifact, scale, seeds) if artifact is not None else []
    if claim_seeds is None:  # no store to read the verdicts from: the seeds the claims' runs add
        claim_seeds = [int(s.labels.get("seed", 0)) for s in claim_specs(scale, [artifact.id])] if artifact else []
    paper_specs = artifact.runs("paper", seeds) if artifact is not None and scale != "paper" else []
    added_tags = {"flcore-banner", "flcore-verdict", "flcore-provenance"}
    cells = [c for c in nb.cells if not added_tags & set(c.metadata.get("tags", []))]
    for cell in cells:
        if cell.cell_type == "code":
            # the notebook's own capped-preview banner gives way to the one placed below the title
            cell.outputs = [o for o in cell.get("outputs", []) if CAPPED_BANNER_KEY not in o.get("metadata", {})]
            # code that shows something is collapsed under its output; code that shows
            # nothing (installation, parameters, imports) is left to the notebook itself
            tags = cell.metadata.setdefault("tags", [])
            tag = "hide-input" if cell.get("outputs") else "remove-cell"
            if tag not in tags:
                tags.append(tag)
    title = next((i for i, c in enumerate(cells) if c.cell_type == "markdown"), -1)
    day = datetime.now(timezone.utc).date().isoformat()
    banner = nbformat.v4.new_markdown_cell(scale_banner(scale, specs, day, cls, paper_specs, max_rounds=max_rounds,
                                                        claim_seeds=claim_seeds), metadata={"tags": ["flcore-banner"]})
    added = [banner]
    if verdict:
        added.append(nbformat.v4.new_markdown_cell(verdict, metadata={"tags": ["flcore-verdict"]}))
    if provenance:
        added.append(nbformat.v4.new_markdown_cell(provenance, metadata={"tags": ["flcore-provenance"]}))
    if title >= 0 and cells[title].source.lstrip().startswith("#"):
        # The title is the cell's first line; the banner goes right below it.
        first, _, rest = cells[title].source.partition("\n")
        cells[title].source = first
        cells[title + 1:title + 1] = added
        if rest.strip():
            follow = nbformat.v4.new_markdown_cell(rest.lstrip("\n"))
            cells.insert(title + 1 + len(added), follow)
    else:
        cells[0:0] = added
    nb.cells = cells
    papermill = nb.metadata.get("papermill", {})
    for key in ("input_path", "output_path"):  # no path of the building machine in the page
        if papermill.get(key):
            papermill[key] = Path(papermill[key]).name
    if page_name and papermill.get("output_path"):
        papermill["output_path"] = page_name  # executed into a temporary file, published as the page
    nbformat.validator.normalize(nb)
    nbformat.write(nb, path)


def on_datasets(specs: list, datasets) -> list:
    """The available specs of ``specs`` whose runs train on one of ``datasets`` (flcore's
    names); all of ``specs`` when ``datasets`` is empty or None."""
    if not datasets:
        return list(specs)
    return [s for s in specs if s.available and s.resolve().dataset in set(datasets)]


def prefetch_runs(artifacts, args, store: str, log, scale: str | None = None):
    """Train the union of the runs the artifacts need, once, before their notebooks run
    (at ``scale``, default ``args.scale``; capped at ``args.max_rounds`` when given; only
    those on ``args.datasets`` when given).  Returns the runs' frame (None when nothing was
    asked for or the batch could not start)."""

    scale = scale or args.scale
    specs = runs_for([a.id for a in artifacts], scale, args.seeds)
    if not specs:
        return None
    # the claims' cells run their seeds, and the reference pairs measure the spread of a
    # comparison with too few seeds (flcore.reproduction.claims)
    known = {s.run_id() for s in specs}
    for spec in claim_specs(scale, [a.id for a in artifacts]) + spread_specs(scale):
        if spec.run_id() not in known:
            known.add(spec.run_id())
            specs.append(spec)
    specs = on_datasets(specs, getattr(args, "datasets", None))
    if not specs:
        return None
    try:
        return train_runs(specs, args, store, log)
    except Exception as exc:  # noqa: BLE001 - the notebooks will report their own failures
        log(f"training the shared runs failed ({one_line_error(exc)}); each notebook will retry its own")
        return None


def train_runs(specs: list, args, store: str, log):
    """Train the runs of ``specs`` missing from ``store`` as the batch of ``flcore reproduce``
    does: shared runs once, in groups, on ``args.run_executor`` (on this machine: with the
    estimate of its time and one live line), capped at ``args.max_rounds`` when given
    (a capped run continues from its checkpoint when the cap is raised or removed).  A run
    that fails is logged with where its traceback is, not raised.  Returns the runs' frame."""
    executor = getattr(args, "run_executor", None)
    local = executor is None or executor.name == "local"
    rates = machine_rates_or_none(args, store, log) if local else None
    frame = ensure_runs(specs, store=store, device=args.device, workers=args.workers,
                        data_root=args.data_root, download=args.download, raise_on_failure=False, log=log,
                        executor=executor, progress=not local, max_rounds=getattr(args, "max_rounds", None),
                        live=local, rates=rates)
    for row in frame[frame["status"] == "failed"].drop_duplicates("run_id").itertuples():
        log(f"run {row.run_id} failed: {row.error} (traceback in {row.run_dir}/status.json)")
    return frame


def machine_rates_or_none(args: argparse.Namespace, store: str, log, keep: bool = True):
    """This machine's calibrated rates for the estimate of the training time
    (:func:`flcore.reproduction.estimate.this_machine`; ``keep``: keep a new measurement
    in the store), or None, said in one line, when they cannot be had: training goes on
    without an estimate."""
    workers = getattr(args, "workers", None) or available_cpus()
    try:
        return this_machine(args.root, store, args.device, workers, log=log, keep=keep)
    except Exception as exc:  # noqa: BLE001 - an estimate is never worth a failed build
        log(f"no estimate of the training time: {one_line_error(exc)}")
        return None


def page_scales(artifacts, args: argparse.Namespace, store: str) -> dict[str, str]:
    """The scale each artifact's page is built at: ``args.scale``, or ``args.prefer_scale``
    (``flcore book --prefer-scale paper``) for a page whose runs at that scale, and the
    claims' reference runs, are all finished in the store -- runs imported from a results
    bundle, say: the page is then built from them and nothing is trained for it."""
    prefer = getattr(args, "prefer_scale", None)
    out = {a.id: args.scale for a in artifacts}
    if not prefer or prefer == args.scale:
        return out
    reference = results_frame(spread_specs(prefer), store)
    if not reference["status"].isin(["finished", "diverged"]).all():
        return out
    for artifact in artifacts:
        specs = [s for s in runs_for([artifact.id], prefer, args.seeds) if s.available]
        if specs and results_frame(specs, store)["status"].isin(["finished", "diverged"]).all():
            out[artifact.id] = prefer
    return out


def make_run_executor(args: argparse.Namespace):
    """The executor ``--executor`` names, connected (Ray) before any compute; ``ValueError``
    or :class:`flcore.executors.ray_executor.ExecutorError` with a one-line reason otherwise."""

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

    root = Path(args.root).resolve()
    store = str(Path(args.store).expanduser().resolve())
    manifest = load_manifest(root)
    fingerprint = flcore_fingerprint()
    artifacts = [get_artifact(a) for a in artifact_ids]
    max_rounds = getattr(args, "max_rounds", None)
    scale_of = page_scales(artifacts, args, store)
    todo = []
    results = {} if results is None else results
    for artifact in artifacts:
        reason = "forced" if force else stale_reason(artifact, manifest["artifacts"].get(artifact.id), root,
                                                    scale_of[artifact.id], args.seeds, fingerprint, max_rounds)
        if reason is None:
            results[artifact.id] = {**manifest["artifacts"][artifact.id], "status": "skipped",
                                    "reason": "up to date"}
        else:
            todo.append((artifact, reason))
    for scale in dict.fromkeys(scale_of[a.id] for a, _ in todo):
        prefetch_runs([a for a, _ in todo if scale_of[a.id] == scale], args, store, log, scale=scale)
    parameters = {"scale": args.scale, "device": args.device, "seeds": list(args.seeds),
                  "workers": args.workers, "data_root": args.data_root,
                  "download": bool(args.download), "max_rounds": max_rounds}
    for artifact, reason in todo:
        at = "" if scale_of[artifact.id] == args.scale else f" at the {scale_of[artifact.id]} scale, its runs stored"
        log(f"[{artifact.id}] executing ({reason}){at} -> {artifact.book_path}")
        # stale from now on, whatever stops the batch: the page is replaced only on success
        previous = manifest["artifacts"].get(artifact.id) or {}
        manifest["artifacts"][artifact.id] = {**previous, "status": "executing"}
    if todo:
        save_manifest(root, manifest)
    for artifact, entry in _execute_all([a for a, _ in todo], root, parameters, args.timeout, store,
                                        notebook_jobs(getattr(args, "jobs", None), len(todo)), scale_of,
                                        fresh_kernels=getattr(args, "fresh_kernels", False)):
        try:
            hashed = notebook_hash(root / artifact.notebook_path) if (root / artifact.notebook_path).is_file() else None
        except Exception as exc:  # noqa: BLE001 - one unreadable notebook must not stop the batch
            hashed = None
            entry.update(status="failed", error=entry.get("error") or f"unreadable notebook: {one_line_error(exc)}")
        finished = datetime.now(timezone.utc).isoformat(timespec="seconds")
        entry.update(scale=scale_of[artifact.id], seeds=list(args.seeds), max_rounds=max_rounds, notebook=hashed,
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

#: The configuration a build writes beside ``_config.yml`` when the repository URL is not set
#: there (:func:`flcore.report.repository.build_config`), removed when the build ends.
RESOLVED_CONFIG = ".flcore-book-config.yml"


def build_book(root: Path, path_output: str | None = None, strict: bool = True) -> int:
    """``jupyter-book build <root> -W -n --keep-going``; returns its exit status.  The
    repository URL is taken now: ``_config.yml`` 's, else the git remote's, else none (the
    Colab buttons and install cells hidden, every page saying how to set it)."""
    command = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", str(root)]
    if strict:
        command += ["-W", "-n", "--keep-going"]
    if path_output:
        command += ["--path-output", path_output]
    config = build_config(Path(root))
    # the config copies the verdict files from there (html_extra_path): a book built before
    # any verdict was written, or a book of one's own on this config, still builds strictly
    (Path(root) / VERDICT_FOLDER).mkdir(parents=True, exist_ok=True)
    resolved = Path(root) / RESOLVED_CONFIG
    if config is not None:
        resolved.write_text(yaml.safe_dump(config, sort_keys=False))
        command += ["--config", str(resolved)]
        url = (config.get("repository") or {}).get("url")
        print(f"repository URL from the git remote: {url}" if url else UNSET_NOTE, flush=True)
    print("building the book: jupyter-book " + " ".join(command[3:]), flush=True)
    try:
        return subprocess.call(command, cwd=root)
    finally:
        resolved.unlink(missing_ok=True)
