"""``flcore bundle export`` and ``flcore bundle import``: finished runs shared between stores.

``flcore bundle export ARTIFACT... --scale S --store DIR -o FILE`` (or ``--all`` for every
artifact) writes a results bundle (:mod:`flcore.store.bundle`) holding the finished and
diverged runs those artifacts' pages read at that scale and seeds -- the same runs
``flcore reproduce`` trains for them, the claims' extra seeds and reference pairs included
-- so that a store that imports it rebuilds those pages without training.  Runs of the
selection that are not finished in the store are listed and left out; the bundle is
written atomically, and an existing FILE is replaced only with ``--force``.  ``--device-name``
names the accelerator the runs were trained on (default: this machine's).

``flcore bundle import FILE --store DIR`` checks every member of FILE before it writes
anything (one line naming the member and the reason, exit 2, when it refuses), then adds
the runs to the store with their provenance.  A run already finished in the store is
kept; one that is not finished there is replaced by the imported finished run.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path

import torch

from flcore.cli.arguments import add_seeds_option, add_store_option
from flcore.reproduction.artifacts import artifact_ids, runs_for
from flcore.reproduction.claims import claim_specs, spread_specs
from flcore.store import RunStore, StoreError
from flcore.store.bundle import BundleError, export_bundle, exportable, import_bundle

EXIT_USAGE = 2


def selected_run_ids(artifacts: list[str], scale: str, seeds: list[int]) -> list[str]:
    """The run ids ``flcore reproduce ARTIFACT...`` reads at ``scale``: the artifacts' runs,
    then the claims' extra seeds and the reference pairs, each once; pending runs left out."""
    specs = runs_for(artifacts, scale, seeds) + claim_specs(scale, artifacts) + spread_specs(scale)
    ids: dict[str, None] = {}
    for spec in specs:
        if spec.available:
            ids.setdefault(spec.run_id())
    return list(ids)


def this_device() -> str:
    """The accelerator of this machine, as a provenance record names it."""
    if torch.cuda.is_available():
        return torch.cuda.get_device_name(0)
    return f"CPU ({platform.processor() or platform.machine() or 'unknown'})"


def _error(text: str) -> int:
    print(f"flcore: error: {text}", file=sys.stderr)
    return EXIT_USAGE


def _cmd_export(args: argparse.Namespace) -> int:
    known = artifact_ids()
    if args.all == bool(args.artifacts):
        return _error("give artifact ids or --all (known: " + ", ".join(known) + ")")
    unknown = [a for a in args.artifacts if a not in known]
    if unknown:
        return _error(f"unknown artifact(s) {', '.join(a[:80] for a in unknown[:5])}; known: {', '.join(known)}")
    store_root = Path(args.store).expanduser()
    if not store_root.is_dir():
        return _error(f"--store {str(store_root)[:200]} is not a directory")
    store = RunStore(store_root)
    chosen = known if args.all else args.artifacts
    runs, left_out = [], []
    for rid in selected_run_ids(chosen, args.scale, args.seeds):
        run = store.run(rid)
        why = exportable(run)
        if why is None:
            runs.append(run)
        else:
            left_out.append((rid, why))
    if not runs:
        return _error(f"none of the {len(left_out)} runs of {len(chosen)} artifact(s) at the {args.scale} scale is "
                      f"finished in {store_root}; nothing to export (train them with `flcore reproduce`)")
    try:
        manifest = export_bundle(runs, args.output, scale=args.scale, device=args.device_name or this_device(),
                                 force=args.force)
    except (BundleError, StoreError) as exc:
        return _error(str(exc))
    except OSError as exc:
        return _error(f"{args.output} cannot be written ({exc.strerror or exc})")
    for rid, why in left_out:
        print(f"left out {rid}: {why}")
    size = os.path.getsize(Path(args.output).expanduser())
    print(f"exported {len(runs)} run(s) ({len(manifest['members'])} files, {size} bytes) to {args.output}"
          + (f"; {len(left_out)} run(s) of the selection left out (listed above)" if left_out else ""))
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    try:
        result = import_bundle(args.file, args.store)
    except (BundleError, StoreError) as exc:
        return _error(f"bundle {Path(args.file).name}: {exc}; nothing was imported")
    except OSError as exc:  # the store cannot be written (read-only, full): the staging was removed
        where = f" writing {exc.filename}" if exc.filename else ""
        return _error(f"bundle {Path(args.file).name}: the store {args.store} cannot be written "
                      f"({exc.strerror or exc}{where}); nothing was imported")
    for rid in result.skipped:
        print(f"skipped {rid}: already finished in the store")
    for rid in result.busy:
        print(f"skipped {rid}: a process is training it in the store (import again once it stops)")
    for rid in result.replaced:
        print(f"replaced {rid}: it was not finished in the store")
    print(f"imported {len(result.imported) + len(result.replaced)} run(s) into {args.store}; "
          f"{len(result.skipped) + len(result.busy)} skipped")
    return 0


def register(subparsers) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add ``bundle export`` and ``bundle import`` to ``subparsers``; returns the handler."""
    p = subparsers.add_parser("bundle", help="export finished runs to a results bundle, or import one",
                              description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="bundle_command", required=True, parser_class=type(p))
    e = sub.add_parser("export", help="write the finished runs of artifacts to a bundle (no pickles)",
                       description=__doc__.split("\n\n")[1])
    e.add_argument("artifacts", nargs="*", metavar="ARTIFACT", help="artifact ids, e.g. fedsam-table-2")
    e.add_argument("--all", action="store_true", help="every registered artifact")
    e.add_argument("--scale", default="small", choices=("smoke", "small", "paper"), help="the runs' scale")
    add_seeds_option(e)
    add_store_option(e)
    e.add_argument("-o", "--output", required=True, metavar="FILE", help="the bundle to write (a tar archive)")
    e.add_argument("--force", action="store_true", help="replace FILE if it exists")
    e.add_argument("--device-name", default=None,
                   help="the accelerator the runs were trained on (default: this machine's)")
    i = sub.add_parser("import", help="check a bundle in full, then add its runs to a store",
                       description=__doc__.split("\n\n")[2])
    i.add_argument("file", metavar="FILE", help="the bundle (from `flcore bundle export`)")
    add_store_option(i)
    return {"bundle": lambda args: (_cmd_export if args.bundle_command == "export" else _cmd_import)(args)}
