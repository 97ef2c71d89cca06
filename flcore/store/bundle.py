"""Results bundles: finished runs carried from one run store to another, without pickles.

A bundle is an uncompressed tar archive (``flcore bundle export``) that someone trained on
their GPUs and hands to someone else (``flcore bundle import``), whose book then shows
those runs with where they were trained (:mod:`flcore.report.provenance`).

Format (``format_version`` 1), members in this order:

- ``manifest.json``, first: ``format`` (``"flcore-bundle"``), ``format_version``,
  ``flcore_version`` and ``commit`` (the exporting checkout's git commit, or null),
  ``device`` (the accelerator the runs were trained on, as the exporter names it),
  ``date`` (of the export), ``scale``, and ``members``: for every other member, in archive
  order, its SHA-256 and size;
- per run, under a folder named by its run id (16 hex digits, the hash of its config):
  ``config.json``, ``status.json``, ``summary.json``, ``metrics.jsonl`` and, for a
  finished run, ``final_model.safetensors`` (the final model's tensors; a diverged run has
  no final model).  Only finished and diverged runs travel; checkpoints and snapshots do
  not (an imported run is a result, not something to resume).

Nothing in a bundle is a pickle: the JSON members are strict JSON, the model is
safetensors (a JSON header and raw tensor bytes), parsed by safetensors' own loader.

**Import trusts nothing in the archive.**  :func:`check_bundle` reads it once, writing
nothing, and refuses it (:class:`BundleError`: the member and the reason, on one line) when

- the manifest is not the first member, is larger than :data:`MAX_MANIFEST_BYTES`, is not
  strict JSON (a key given twice included) or not of :data:`MANIFEST_SCHEMA`;
- a member is not a plain regular file (a symbolic or hard link, a device, a FIFO, a
  directory, a sparse file), has an absolute name or a ``..`` component, has an executable
  (or set-id) mode bit, is not one of the known names under a run-id folder (a
  ``final_model.pt`` is a pickle and is refused as such), appears twice, or is not the next
  member the manifest lists;
- a member's size or SHA-256 differs from the manifest's, or it exceeds its bound (JSON
  records :data:`~flcore.store.records.MAX_RECORD_BYTES`, the log
  :data:`~flcore.store.metrics_log.MAX_LOG_BYTES`, a model :data:`MAX_MODEL_BYTES`; all
  members together :data:`MAX_BUNDLE_BYTES`);
- a member's name holds a backslash, a NUL or another control character or a non-ASCII
  character; the archive is truncated anywhere (a member's declared size runs past the
  end of the file, the two end-of-archive zero blocks are missing) or ``tarfile`` cannot
  read it: one line, never a traceback;
- a JSON member fails the store's own schema, the config does not hash to the run id of its
  folder, the status is not finished or diverged, the log fails the store's log checks, or
  a run lacks one of its files;
- the config is not one flcore writes (it must resolve with flcore's own validation,
  :func:`flcore.config.resolve_stored_config`, to exactly itself) or its scale is not the
  manifest's; a finished run did not do its config's rounds, or a diverged run did not stop
  at its diverged round; the summary disagrees with the status or with the summary its log
  gives;
- the safetensors header is longer than :data:`MAX_SAFETENSORS_HEADER` or the file does
  not load with ``safetensors.torch.load``, or the final model is not exactly the config's
  model: the same tensor names, shapes and dtypes, every value finite
  (:mod:`flcore.store.run_content`).

Only then does :func:`import_bundle` write: each run is staged in the store under its own
staging folder (``.staging-bundle-<random>``, :mod:`flcore.store.staging`), in the store's
own format (the final model as ``final_model.pt`` with its digest in ``files.json``, plus
``provenance.json``), checked
again with :func:`flcore.store.integrity.check_run` (``deep``), and only when every staged
run passes are they renamed into place; on any failure the staging folder is removed and
the store is as it was.  Nothing else is ever removed: not the store's root, even when the
import created it (a concurrent import may have put runs there), and a staging folder
left by a killed import is removed by the next one.  Nothing is written outside the store.

Runs already in the store: an intact finished (or diverged) run is kept and the bundle's
copy skipped; a run that is not finished there (new, interrupted, capped, failed,
damaged) is replaced by the imported finished run, unless a process holds its lock (then
it is skipped and said so).
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import stat
import subprocess
import tarfile
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

import safetensors.torch
import torch

from flcore.config import resolve_stored_config
from flcore.safe_io import UnsafePathError, open_regular_file
from flcore.store.atomic import TEMP_SUFFIX, atomic_write_json, atomic_write_text, fsync_directory
from flcore.store.errors import RunBusyError, StoreError
from flcore.store.integrity import (
    check_run,
    log_problems,
    rows_of_log,
    scan_metrics_bytes,
    summary_record_problems,
)
from flcore.store.lock import RunLock
from flcore.store.metrics_log import MAX_LOG_BYTES
from flcore.store.records import (
    MAX_RECORD_BYTES,
    Int,
    Nullable,
    Record,
    Schema,
    Text,
    parse_strict_json,
)
from flcore.store.run import (
    CONFIG_FILE,
    CONFIG_SCHEMA,
    FLCORE_RUN_ID,
    METRICS_FILE,
    PROVENANCE_FILE,
    STATUS_FILE,
    SUMMARY_FILE,
    SUMMARY_SCHEMA,
    TERMINAL_STATUSES,
    Run,
    config_digest,
    status_schema,
)
from flcore.store.run_content import model_problems, stored_config_problem
from flcore.store.run_store import RunStore
from flcore.store.staging import StagingFolder, remove_abandoned
from flcore.version import __version__

__all__ = ["BUNDLE_FORMAT", "FORMAT_VERSION", "MANIFEST_FILE", "MANIFEST_SCHEMA", "MAX_BUNDLE_BYTES",
           "MAX_MANIFEST_BYTES", "MAX_MEMBERS", "MAX_MODEL_BYTES", "MAX_SAFETENSORS_HEADER", "MODEL_FILE", "RUN_FILES",
           "BundleError", "CheckedBundle", "ImportResult", "check_bundle", "export_bundle", "exportable", "git_commit",
           "import_bundle"]

#: The archive's first member.
MANIFEST_FILE = "manifest.json"
#: A finished run's final model inside a bundle.
MODEL_FILE = "final_model.safetensors"
#: ``format`` of the manifest.
BUNDLE_FORMAT = "flcore-bundle"
#: The version of the format this module writes and reads.
FORMAT_VERSION = 1
#: Largest manifest read (about 1 kB per run).
MAX_MANIFEST_BYTES = 16 << 20
#: Largest final model (a paper-scale ResNet-18 is about 45 MB).
MAX_MODEL_BYTES = 4 << 30
#: Largest total of all members.
MAX_BUNDLE_BYTES = 256 << 30
#: Most members in one bundle.
MAX_MEMBERS = 100_000
#: Largest safetensors JSON header (a model's names, shapes and offsets: a few kB).
MAX_SAFETENSORS_HEADER = 16 << 20

#: The files of one run in a bundle, in archive order; the model only for a finished run.
RUN_FILES = (CONFIG_FILE, STATUS_FILE, SUMMARY_FILE, METRICS_FILE, MODEL_FILE)
_SCALES = ("smoke", "small", "paper")
_SHA256 = re.compile(r"[0-9a-f]{64}")

_MEMBER = Record(required={"sha256": Text(64), "bytes": Int(0, MAX_BUNDLE_BYTES)}, extra=None)
#: ``manifest.json`` (module docstring).
MANIFEST_SCHEMA = Record(
    required={"format": Text(64, (BUNDLE_FORMAT,)), "format_version": Int(FORMAT_VERSION, FORMAT_VERSION),
              "flcore_version": Text(64), "commit": Nullable(Text(64)), "device": Nullable(Text(256)),
              "date": Text(64), "scale": Nullable(Text(16, _SCALES)),
              "members": Record(extra=_MEMBER, max_keys=MAX_MEMBERS)},
    extra=None)


class BundleError(StoreError):
    """A bundle refused (or one that cannot be written): the member and the reason."""


@dataclass
class CheckedBundle:
    """What :func:`check_bundle` found: the manifest and the run ids, in archive order."""

    manifest: dict[str, Any]
    run_ids: list[str]
    statuses: dict[str, str] = field(default_factory=dict)


@dataclass
class ImportResult:
    """Run ids by what :func:`import_bundle` did with them."""

    imported: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)  # imported over a run not finished in the store
    skipped: list[str] = field(default_factory=list)  # already finished in the store
    busy: list[str] = field(default_factory=list)  # being trained by another process: left alone


# -- export -------------------------------------------------------------------------------

def git_commit(path: str | Path | None = None) -> str | None:
    """The git commit of the checkout holding ``path`` (default: flcore's source), or None
    when it is not a git checkout or git is missing."""
    where = Path(path) if path is not None else Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", commit) else None


def _json_bytes(value: Any, sort_keys: bool = True) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=sort_keys, allow_nan=False) + "\n").encode("utf-8")


def _model_bytes(run: Run) -> bytes:
    state = run.load_final_model()
    if not isinstance(state, dict) or not state or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise BundleError(f"run {run.run_id}: its final model is not a flat dict of tensors; it cannot be exported")
    return safetensors.torch.save({k: v.detach().cpu().contiguous().clone() for k, v in state.items()})


def _run_members(run: Run) -> list[tuple[str, bytes]]:
    """The bundle members of one intact finished or diverged run."""
    status = run.status()
    members = [(CONFIG_FILE, _json_bytes(run.config())), (STATUS_FILE, _json_bytes(status)),
               (SUMMARY_FILE, _json_bytes(run.summary())), (METRICS_FILE, run.metrics_bytes())]
    if status["status"] == "finished":
        members.append((MODEL_FILE, _model_bytes(run)))
    return [(f"{run.run_id}/{name}", data) for name, data in members]


def exportable(run: Run) -> str | None:
    """Why ``run`` cannot go into a bundle (not in the store, not finished, damaged), or
    None when it can."""
    if not run.exists():
        return "not in the store"
    problems = check_run(run, deep=True)
    if problems:
        return "damaged: " + "; ".join(problems)[:300]
    status = run.status()["status"]
    if status not in TERMINAL_STATUSES:
        return f"{status}, not finished"
    return None


def _tar_info(name: str, size: int, mtime: float) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime, info.type = size, 0o644, int(mtime), tarfile.REGTYPE
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def export_bundle(runs: Sequence[Run], output: str | Path, *, scale: str | None, device: str | None,
                  force: bool = False) -> dict[str, Any]:
    """Write the bundle of ``runs`` (each intact and finished or diverged:
    :func:`exportable`) to ``output`` atomically (a temporary file beside it, then a rename);
    an existing ``output`` is replaced only with ``force``.  Returns the manifest."""
    output = Path(output).expanduser()
    if os.path.lexists(output) and not force:
        raise BundleError(f"{output} exists; give --force to replace it")
    if os.path.lexists(output) and not stat.S_ISREG(os.lstat(output).st_mode):
        raise BundleError(f"{output} is not a regular file; it is not replaced")
    if not output.parent.is_dir():
        raise BundleError(f"{output.parent} is not a directory")
    members: list[tuple[str, bytes]] = []
    for run in runs:
        members += _run_members(run)
    now = datetime.now(timezone.utc)
    manifest = {"format": BUNDLE_FORMAT, "format_version": FORMAT_VERSION, "flcore_version": __version__,
                "commit": git_commit(), "device": device, "date": now.isoformat(timespec="seconds"), "scale": scale,
                "members": {name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
                            for name, data in members}}
    tmp = output.with_name(f".{output.name}.{uuid.uuid4().hex}{TEMP_SUFFIX}")
    try:
        with open(tmp, "xb") as f:
            with tarfile.open(fileobj=f, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for name, data in [(MANIFEST_FILE, _json_bytes(manifest, sort_keys=False))] + members:
                    tar.addfile(_tar_info(name, len(data), now.timestamp()), io.BytesIO(data))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, output)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_directory(output.parent)
    return manifest


# -- checking -------------------------------------------------------------------------------

def _member_kind(member: tarfile.TarInfo) -> str | None:
    """What a member is when it is not a plain regular file."""
    if member.issym():
        return "a symbolic link"
    if member.islnk():
        return "a hard link"
    if member.ischr() or member.isblk():
        return "a device"
    if member.isfifo():
        return "a FIFO"
    if member.isdir():
        return "a directory"
    if member.issparse():
        return "a sparse file"
    if member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE):
        return f"a member of tar type {member.type!r}"
    return None


def _name_problem(name: str) -> str | None:
    """Why a member name is refused, or None for a known name."""
    if "\x00" in name:
        return "a name with a NUL character"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "a name with a control character"
    if "\\" in name:
        return "a name with a backslash (a bundle's names use '/' only)"
    if not name.isascii():
        return "a name with non-ASCII characters (a bundle's names are ASCII)"
    if name.startswith("/") or name.startswith("\\") or re.match(r"[A-Za-z]:", name):
        return "an absolute path"
    parts = re.split(r"[/\\]", name)
    if ".." in parts:
        return "a path with '..' (outside the bundle)"
    if name == MANIFEST_FILE:
        return None
    if len(parts) != 2 or not FLCORE_RUN_ID.fullmatch(parts[0]):
        return "not under a run-id folder (16 hex digits)"
    if parts[1].endswith((".pt", ".pth", ".pkl", ".pickle", ".bin")):
        return "a pickle-based file; a bundle carries models as safetensors only"
    if parts[1] not in RUN_FILES:
        return f"an unknown file name (a run holds {', '.join(RUN_FILES)})"
    return None


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo, bound: int, file_size: int) -> tuple[bytes, str]:
    """A member's bytes and SHA-256; one that the archive cuts short is refused before any
    of it is read (its declared size against what the file holds)."""
    if member.offset_data + member.size > file_size:
        raise BundleError(f"member {member.name!r}: declares {member.size} bytes but the archive ends "
                          f"{member.offset_data + member.size - file_size} bytes before them (truncated)")
    try:
        f = tar.extractfile(member)
        if f is None:
            raise BundleError(f"member {member.name!r}: not a regular file")
        data = f.read(bound + 1)
    except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
        raise BundleError(f"member {member.name!r}: unreadable ({_one_line(exc)})") from None
    if len(data) > bound:
        raise BundleError(f"member {member.name!r}: more than {bound} bytes")
    if len(data) != member.size:
        raise BundleError(f"member {member.name!r}: {len(data)} of its {member.size} bytes in the archive (truncated)")
    return data, hashlib.sha256(data).hexdigest()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text or type(exc).__name__)[:200]


def _bound(name: str) -> int:
    if name.endswith(MODEL_FILE):
        return MAX_MODEL_BYTES
    return MAX_LOG_BYTES if name.endswith(METRICS_FILE) else MAX_RECORD_BYTES


def _parse_json(name: str, data: bytes, schema: Schema) -> Any:
    try:
        value = parse_strict_json(data)
    except ValueError as exc:
        raise BundleError(f"{name}: not valid JSON ({exc})") from None
    problems = schema.problems(value)
    if problems:
        raise BundleError(f"{name}: not a valid {name.rsplit('/', 1)[-1]} ({'; '.join(problems[:2])})")
    return value


def _load_model(name: str, data: bytes) -> dict[str, torch.Tensor]:
    """The tensors of a safetensors member, its header bounded first."""
    if len(data) < 8:
        raise BundleError(f"{name}: not a safetensors file (shorter than its 8-byte header length)")
    header = int.from_bytes(data[:8], "little")
    if header > MAX_SAFETENSORS_HEADER or header > len(data) - 8:
        raise BundleError(f"{name}: a safetensors header of {header} bytes (at most {MAX_SAFETENSORS_HEADER}, "
                          "and within the file)")
    try:
        state = safetensors.torch.load(data)
    except Exception as exc:  # safetensors raises its own error types (SafetensorError, ...)
        raise BundleError(f"{name}: not a valid safetensors file ({_one_line(exc)})") from None
    if not state:
        raise BundleError(f"{name}: holds no tensors")
    return state


@dataclass
class _RunRecord:
    run_id: str
    members: dict[str, bytes] = field(default_factory=dict)


def _check_run_records(record: _RunRecord, manifest: dict[str, Any]
                       ) -> tuple[dict, dict, dict, dict[str, torch.Tensor] | None]:
    """The config, status, summary and model of one run's members, checked together and
    against the manifest: every check a run trained into a store meets, and that its
    config is one flcore writes, of the manifest's scale, with a final model of exactly
    the config's model (:mod:`flcore.store.run_content`)."""
    rid, files = record.run_id, record.members
    for name in RUN_FILES[:4]:
        if name not in files:
            raise BundleError(f"{rid}/{name}: missing")
    config = _parse_json(f"{rid}/{CONFIG_FILE}", files[CONFIG_FILE], CONFIG_SCHEMA)
    digest = config_digest(config)
    if not digest.startswith(rid):
        raise BundleError(f"{rid}/{CONFIG_FILE}: the config hashes to run id {digest[:16]}, not to its folder's {rid}")
    problem = stored_config_problem(config, rid)
    if problem is not None:
        raise BundleError(f"{rid}/{CONFIG_FILE}: {problem}")
    cfg = resolve_stored_config(config)
    if manifest["scale"] is not None and cfg.scale != manifest["scale"]:
        raise BundleError(f"{rid}/{CONFIG_FILE}: scale {cfg.scale!r}, but {MANIFEST_FILE} says the bundle holds "
                          f"{manifest['scale']!r} runs")
    status = _parse_json(f"{rid}/{STATUS_FILE}", files[STATUS_FILE], status_schema())
    if status["status"] not in TERMINAL_STATUSES:
        raise BundleError(f"{rid}/{STATUS_FILE}: status {status['status']!r}; a bundle carries finished or "
                          "diverged runs only")
    rounds_done, diverged_round = status["rounds_done"], status.get("diverged_round")
    if status["status"] == "finished" and rounds_done != cfg.rounds:
        raise BundleError(f"{rid}/{STATUS_FILE}: finished after {rounds_done} rounds, the config has {cfg.rounds}")
    if status["status"] == "finished" and diverged_round is not None:
        raise BundleError(f"{rid}/{STATUS_FILE}: finished, yet diverged at round {diverged_round}")
    if status["status"] == "diverged" and (diverged_round is None or diverged_round != rounds_done
                                           or rounds_done > cfg.rounds):
        raise BundleError(f"{rid}/{STATUS_FILE}: diverged at round {diverged_round!r} after {rounds_done} rounds "
                          f"(a diverged run stops at its diverged round, within the config's {cfg.rounds})")
    summary = _parse_json(f"{rid}/{SUMMARY_FILE}", files[SUMMARY_FILE], SUMMARY_SCHEMA)
    for key, want in (("status", status["status"]), ("rounds_done", rounds_done)):
        if key in summary and summary[key] != want:
            raise BundleError(f"{rid}/{SUMMARY_FILE}: {key} {summary[key]!r}, {STATUS_FILE} says {want!r}")
    scan = scan_metrics_bytes(files[METRICS_FILE])
    problems = log_problems(scan, rid, config, rounds_done, True,
                            diverged_round if status["status"] == "diverged" else None)
    if problems:
        raise BundleError(f"{rid}/{METRICS_FILE}: {problems[0]}")
    problems = summary_record_problems(summary, rows_of_log(scan, rid), config, status["status"], rounds_done)
    if problems:
        raise BundleError(f"{rid}/{SUMMARY_FILE}: disagrees with {METRICS_FILE} ({problems[0]})")
    model = None
    if status["status"] == "finished":
        if MODEL_FILE not in files:
            raise BundleError(f"{rid}/{MODEL_FILE}: missing for a finished run")
        model = _load_model(f"{rid}/{MODEL_FILE}", files[MODEL_FILE])
        problems = model_problems(cfg, model)
        if problems:
            raise BundleError(f"{rid}/{MODEL_FILE}: not the final model of the run's config ({problems[0]})")
    elif MODEL_FILE in files:
        raise BundleError(f"{rid}/{MODEL_FILE}: a diverged run has no final model")
    return config, status, summary, model


def _open_bundle(path: Path) -> BinaryIO:
    try:
        return open_regular_file(path, MAX_BUNDLE_BYTES + MAX_MANIFEST_BYTES, follow_links=True)
    except FileNotFoundError:
        raise BundleError(f"{path}: no such file") from None
    except UnsafePathError as exc:
        raise BundleError(str(exc)) from None
    except OSError as exc:
        raise BundleError(f"{path}: unreadable ({exc.strerror or exc})") from None


def _runs_of(f: BinaryIO, path: Path, found: dict[str, Any]) -> Iterator[_RunRecord]:
    """Read the archive once, checking every member (module docstring); yields each run's
    verified members, one run at a time, and sets ``found["manifest"]`` once it is read."""
    try:
        yield from _read_runs(f, path, found)
    except (tarfile.TarError, OSError, EOFError, ValueError, UnicodeError, OverflowError) as exc:
        # anything tarfile or the file raises on a damaged archive: one line, never a traceback
        raise BundleError(f"{path.name}: a damaged tar archive ({_one_line(exc)})") from None


def _read_runs(f: BinaryIO, path: Path, found: dict[str, Any]) -> Iterator[_RunRecord]:
    file_size = os.fstat(f.fileno()).st_size
    try:
        tar = tarfile.open(fileobj=f, mode="r:")
    except (tarfile.TarError, OSError, ValueError) as exc:
        raise BundleError(f"{path.name}: not an uncompressed tar archive ({_one_line(exc)})") from None
    with tar:
        manifest: dict[str, Any] | None = None
        expected: list[str] = []
        seen: set[str] = set()
        total = 0
        current: _RunRecord | None = None
        index = 0
        while True:
            try:
                member = tar.next()
            except (tarfile.TarError, OSError, ValueError, UnicodeError) as exc:
                raise BundleError(f"{path.name}: a damaged tar archive ({_one_line(exc)})") from None
            if member is None:
                _check_end_blocks(f, tar.offset, path)
                break
            name = member.name
            if len(name) > 300:
                raise BundleError(f"member {name[:60]!r}...: a name of {len(name)} characters")
            kind = _member_kind(member)
            if kind is not None:
                raise BundleError(f"member {name!r}: {kind}; a bundle holds regular files only")
            problem = _name_problem(name)
            if problem is not None:
                raise BundleError(f"member {name!r}: {problem}")
            if member.mode & 0o7111:
                raise BundleError(f"member {name!r}: mode {member.mode:o} has executable or set-id bits")
            if name in seen:
                raise BundleError(f"member {name!r}: appears twice")
            seen.add(name)
            if manifest is None:
                if name != MANIFEST_FILE:
                    raise BundleError(f"{MANIFEST_FILE}: missing (the first member is {name!r})")
                if member.size > MAX_MANIFEST_BYTES:
                    raise BundleError(f"{MANIFEST_FILE}: {member.size} bytes, more than {MAX_MANIFEST_BYTES}")
                data, _ = _read_member(tar, member, MAX_MANIFEST_BYTES, file_size)
                manifest = _parse_json(MANIFEST_FILE, data, MANIFEST_SCHEMA)
                found["manifest"] = manifest
                expected = list(manifest["members"])
                declared = sum(entry["bytes"] for entry in manifest["members"].values())
                if declared > MAX_BUNDLE_BYTES:
                    raise BundleError(f"{MANIFEST_FILE}: members of {declared} bytes in all, more than "
                                      f"{MAX_BUNDLE_BYTES}")
                for listed in expected:
                    problem = _name_problem(listed)
                    if problem is not None or listed == MANIFEST_FILE:
                        raise BundleError(f"{MANIFEST_FILE}: lists member {listed!r}: {problem or 'itself'}")
                    if not _SHA256.fullmatch(manifest["members"][listed]["sha256"]):
                        raise BundleError(f"{MANIFEST_FILE}: member {listed!r}: not a SHA-256 digest")
                continue
            if index >= len(expected) or expected[index] != name:
                want = expected[index] if index < len(expected) else "no further member"
                raise BundleError(f"member {name!r}: not listed in {MANIFEST_FILE} at this place (expected {want})")
            index += 1
            entry = manifest["members"][name]
            bound = _bound(name)
            if member.size > bound:
                raise BundleError(f"member {name!r}: {member.size} bytes, more than the {bound} allowed")
            if member.size != entry["bytes"]:
                raise BundleError(f"member {name!r}: {member.size} bytes, the manifest says {entry['bytes']}")
            total += member.size
            if total > MAX_BUNDLE_BYTES:
                raise BundleError(f"member {name!r}: the members exceed {MAX_BUNDLE_BYTES} bytes in all")
            data, digest = _read_member(tar, member, bound, file_size)
            if len(data) != entry["bytes"] or digest != entry["sha256"]:
                raise BundleError(f"member {name!r}: its SHA-256 does not match the manifest's (changed or damaged)")
            rid, file = name.split("/", 1)
            if current is not None and current.run_id != rid:
                yield current
                current = None
            if current is None:
                current = _RunRecord(rid)
            elif RUN_FILES.index(file) < max(RUN_FILES.index(k) for k in current.members):
                raise BundleError(f"member {name!r}: out of order (a run's files come as {', '.join(RUN_FILES)})")
            current.members[file] = data
        if manifest is None:
            raise BundleError(f"{MANIFEST_FILE}: missing (the archive is empty)")
        if index != len(expected):
            raise BundleError(f"member {expected[index]!r}: listed in {MANIFEST_FILE} but not in the archive")
        if current is not None:
            yield current


def _check_end_blocks(f: BinaryIO, offset: int, path: Path) -> None:
    """A complete tar archive ends with two zero blocks after its last member; without
    them it was cut short (or holds something that is not a member) and is refused."""
    f.seek(offset)
    tail = f.read(2 * tarfile.BLOCKSIZE)
    if tail != bytes(2 * tarfile.BLOCKSIZE):
        what = "ends without" if len(tail.strip(b"\0")) == 0 else "holds data that is no member instead of"
        raise BundleError(f"{path.name}: the archive {what} its two end-of-archive blocks at byte {offset} "
                          "(truncated or damaged)")


def check_bundle(path: str | Path) -> CheckedBundle:
    """Check every member of the bundle at ``path`` (module docstring) without writing
    anything; :class:`BundleError` names the first member refused and why."""
    path = Path(path).expanduser()
    found: dict[str, Any] = {}
    run_ids: list[str] = []
    statuses: dict[str, str] = {}
    with _open_bundle(path) as f:
        for record in _runs_of(f, path, found):
            if record.run_id in statuses:
                raise BundleError(f"{record.run_id}: its files are not together in the archive")
            _, status, _, _ = _check_run_records(record, found["manifest"])
            run_ids.append(record.run_id)
            statuses[record.run_id] = status["status"]
    return CheckedBundle(found["manifest"], run_ids, statuses)


# -- import ---------------------------------------------------------------------------------

def _keeps(run: Run) -> bool:
    """Whether the store's run ``run`` is an intact finished or diverged run (kept)."""
    if not run.exists() or check_run(run):
        return False
    try:
        return run.status()["status"] in TERMINAL_STATUSES
    except StoreError:
        return False


def _provenance(manifest: dict[str, Any], status: dict[str, Any], bundle_name: str) -> dict[str, Any]:
    return {"device": manifest["device"], "date": status.get("updated") or manifest["date"],
            "flcore_version": manifest["flcore_version"], "commit": manifest["commit"], "bundle": bundle_name}


def _stage_run(stage: Path, root: Path, record: _RunRecord, manifest: dict[str, Any], bundle_name: str) -> Run:
    """Write one checked run into ``stage`` in the store's own format and check it there."""
    config, status, summary, model = _check_run_records(record, manifest)
    run = Run(stage / record.run_id, record.run_id, root=root)
    run.path.mkdir()
    atomic_write_json(run.path / CONFIG_FILE, config, sort_keys=True)
    atomic_write_text(run.path / METRICS_FILE, record.members[METRICS_FILE].decode("utf-8"))
    atomic_write_json(run.path / SUMMARY_FILE, summary)
    if model is not None:
        run.save_final_model(model)
    atomic_write_json(run.path / PROVENANCE_FILE, _provenance(manifest, status, bundle_name), sort_keys=True)
    atomic_write_json(run.path / STATUS_FILE, status)
    problems = check_run(run, deep=True)
    if problems:
        raise BundleError(f"{record.run_id}: refused by the store's checks ({problems[0]})")
    return run


def import_bundle(path: str | Path, store_root: str | Path) -> ImportResult:
    """Import the bundle at ``path`` into the run store at ``store_root`` (module docstring):
    checked in full first, then staged, checked again and moved into place; a refusal
    (:class:`BundleError`) leaves the store as it was."""
    path = Path(path).expanduser()
    root = Path(store_root).expanduser()
    if os.path.lexists(root) and not root.is_dir():
        raise BundleError(f"--store {root} is not a directory")
    checked = check_bundle(path)
    result = ImportResult()
    store = RunStore(root)
    wanted = []
    for rid in checked.run_ids:
        if _keeps(store.run(rid)):
            result.skipped.append(rid)
        else:
            wanted.append(rid)
    if not wanted:
        return result
    root.mkdir(parents=True, exist_ok=True)  # kept whatever happens: another process may write there
    remove_abandoned(root)  # the staging folders of killed imports
    with StagingFolder(root, "bundle") as stage:  # removed on the way out, whatever happens
        staged: list[Run] = []
        found: dict[str, Any] = {}
        with _open_bundle(path) as f:
            for record in _runs_of(f, path, found):  # read again: every digest is checked again
                if record.run_id in wanted:
                    staged.append(_stage_run(stage, root, record, found["manifest"], path.name))
        if [run.run_id for run in staged] != wanted:
            raise BundleError(f"{path.name}: changed while it was imported")
        _move_into_place(staged, store, stage, result)
    return result


def _move_into_place(staged: list[Run], store, stage: Path, result: ImportResult) -> None:
    for run in staged:
        target = store.run(run.run_id)
        if not os.path.lexists(target.path):
            os.rename(run.path, target.path)
            result.imported.append(run.run_id)
            continue
        lock = None
        if os.path.isdir(target.path) and not os.path.islink(target.path):
            lock = RunLock(target.path)
            try:
                lock.acquire(wait=False)
            except RunBusyError:
                result.busy.append(run.run_id)
                continue
            except StoreError:  # an unsafe .lock in a damaged run: the run is replaced anyway
                lock = None
        try:
            old = stage / f"old-{run.run_id}"
            os.rename(target.path, old)
            os.rename(run.path, target.path)
        finally:
            if lock is not None:
                lock.release()
        result.replaced.append(run.run_id)
    fsync_directory(store.root)
