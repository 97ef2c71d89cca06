"""One run's directory in the run store (docs/design.md section 7).

Files, all written atomically (temporary file in the same directory + ``os.replace``)
except the append-only metrics log:

- ``config.json``: the canonical config, written once by ``RunStore.create``;
- ``status.json``: ``{"status", "rounds_done", "updated", ...extra}``;
- ``metrics.jsonl``: one JSON object per evaluated round, flushed on every append and
  fsync'ed on every append or, when training defers it, before the next checkpoint or
  status record; tolerant of a torn last line (see :mod:`flcore.store.metrics_log`);
- ``checkpoint.pt``: the latest resumable state (only the latest is kept);
- ``final_model.pt``: the final model state;
- ``snapshots/round-<r>.pt``: models of chosen rounds (:mod:`flcore.analysis.recording`);
- ``files.json``: the stamped record of the tensor files -- the run id, the config
  digest and, per tensor file, the SHA-256 and size of its content;
- ``summary.json``: the final summary (a capped preview's too);
- ``provenance.json``: only in a run trained elsewhere and copied in (a results
  bundle): where it was trained (device, date, flcore version and commit).

JSON values go through :func:`flcore.store.jsonable.to_jsonable`: numpy/torch scalars
become Python numbers and NaN/inf become ``null``.

A run is single-writer: one process trains it at a time (``flcore.store.lock``).

**Nothing is trusted because of where it lies.**  Every file is opened as a bounded
regular file reached without links (:mod:`flcore.safe_io`), every JSON record is strict
JSON of its schema (:mod:`flcore.store.records`), and anything else raises a
:class:`~flcore.store.errors.StoreError` naming the file and the fix:

- ``config.json`` must hash to the run id it sits under (for flcore's 16-hex-digit run
  ids: the first 16 digits of :func:`config_digest`), so a config edited to another
  method is caught rather than listed with the other method's numbers;
- a tensor file is read only when its SHA-256 is the one ``files.json`` records for it
  and ``files.json`` carries this run's id and config digest: a flipped bit, a truncated
  file or another run's file copied in is refused (``torch.load`` itself does not check
  the archive's CRC).  The digest is computed once when the file is written (from the
  bytes written) and checked when it is read, on the same open file that is then loaded;
- the checkpoint must also carry its own stamp (``run_id``, ``config_digest``): a
  checkpoint without it is refused, never resumed;
- ``.pt`` files are loaded with ``torch.load(weights_only=True)``: only tensors and plain
  containers, so a file handed over by someone else cannot run code.

Writing a tensor file is crash-safe in three steps: ``files.json`` first records the new
digest beside the old one, then the file is replaced atomically, then ``files.json``
keeps the new digest only.  A crash at any point leaves a file whose digest is recorded.
Nothing is written through a link: writes check that the run directory is a real
directory under the store's root, and the log is appended only to a regular file with
one link.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import zipfile
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import torch

from flcore.config import MAX_COUNT, MAX_ROUNDS
from flcore.config.parsing import one_line
from flcore.safe_io import (
    UnsafePathError,
    check_real_directory,
    open_regular_file,
    read_regular_bytes,
    unique_json_keys,
)
from flcore.store.atomic import TEMP_SUFFIX, atomic_torch_save_digest, atomic_write_json, atomic_write_text
from flcore.store.errors import DamagedLogError, DamagedRunError, InvalidRecordError, StoreError, UnsafeFileError
from flcore.store.jsonable import dumps_json
from flcore.store.metrics_log import MAX_LOG_BYTES, append_jsonl, read_jsonl, rewrite_jsonl, sync_jsonl
from flcore.store.records import Int, JSONValue, ListOf, Nullable, Number, Record, Text, safe_read_json
from flcore.tensor_tree import to_device

#: The canonical config of the run (its id is this file's hash).
CONFIG_FILE = "config.json"
#: Status, round counter, device, timings, error.
STATUS_FILE = "status.json"
#: One JSON object per evaluated or probed round, appended.
METRICS_FILE = "metrics.jsonl"
#: The last checkpoint (stamped with the run id and config digest).
CHECKPOINT_FILE = "checkpoint.pt"
#: The evaluated model after the last round.
FINAL_MODEL_FILE = "final_model.pt"
#: Final, last-100 mean and best accuracy.
SUMMARY_FILE = "summary.json"
#: The run id, config digest and SHA-256 of every tensor file.
DIGESTS_FILE = "files.json"
#: The folder of the snapshot files.
SNAPSHOT_DIR = "snapshots"
#: Where a run's analysis caches are (:meth:`Run.save_analysis`).
ANALYSIS_DIR = "analysis"
#: An analysis cache's name, and the largest one read.
ANALYSIS_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
MAX_ANALYSIS_BYTES = 16 << 20
#: Where an imported run was trained (only in runs copied in from a results bundle).
PROVENANCE_FILE = "provenance.json"

#: Statuses a run can be set to.  ``"diverged"`` is a finished outcome (NaN/inf loss),
#: ``"interrupted"`` a stop that can be resumed from the checkpoint, ``"capped"`` a stop at
#: the ``max_rounds`` cap (a preview: ``rounds_done`` of ``rounds``) that a later call
#: without the cap, or with a higher one, continues from the checkpoint.
RUN_STATUSES = ("running", "finished", "diverged", "failed", "interrupted", "capped")
#: Statuses of a run that will not train further.
TERMINAL_STATUSES = ("finished", "diverged")
#: What ``Run.status()`` reports before any status was written.
NEW_STATUS = "new"
#: Keys the store adds to each checkpoint to tie it to its run (removed again on load).
CHECKPOINT_STAMP = ("run_id", "config_digest")
#: Largest tensor file read: a sanity bound (a paper-scale checkpoint with per-client
#: state tables holds a few GB), so that a sparse file of a terabyte is not hashed for hours.
MAX_TENSOR_BYTES = 64 << 30
#: flcore's run ids: the first 16 hex digits of the config digest.
FLCORE_RUN_ID = re.compile(r"[0-9a-f]{16}")

_SHA256 = Text(64)
_ACCURACY = Nullable(Number(0.0, 1.0))
_METRIC = Nullable(Number())

#: ``config.json``: any keys (the config of some flcore version); the fields the store
#: itself reads are typed.
CONFIG_SCHEMA = Record(optional={"rounds": Int(1, MAX_ROUNDS), "eval_every": Int(1, MAX_ROUNDS),
                                 "eval_last": Int(0, MAX_ROUNDS), "eval_last_every": Int(1, MAX_ROUNDS),
                                 "method": Text(256), "dataset": Text(256),
                                 "alpha": Number()},
                       extra=JSONValue(max_string=4096, max_items=MAX_COUNT), max_keys=1000)


def status_schema() -> Record:
    """``status.json`` (read each time, so a status added to :data:`RUN_STATUSES` counts)."""
    return Record(required={"status": Text(64, RUN_STATUSES), "rounds_done": Int(0, MAX_ROUNDS)},
                  optional={"updated": Text(64), "diverged_round": Nullable(Int(1, MAX_ROUNDS)),
                            "error": Text(1 << 16), "traceback": Nullable(Text(1 << 20)),
                            "wall_time_s": Nullable(Number(0.0))},
                  max_keys=100)


SUMMARY_SCHEMA = Record(optional={"status": Text(64), "rounds_done": Int(0, MAX_ROUNDS),
                                  "final_accuracy": _ACCURACY, "mean_last_100": _ACCURACY,
                                  "best_accuracy": _ACCURACY, "diverged_round": Nullable(Int(1, MAX_ROUNDS)),
                                  "wall_time_s": Nullable(Number(0.0))},
                        max_keys=1000)
#: One row of ``metrics.jsonl``.
ROW_SCHEMA = Record(required={"round": Int(1, MAX_ROUNDS)},
                    optional={"run_id": Text(256), "test_accuracy": _ACCURACY, "test_loss": _METRIC,
                              "train_loss": _METRIC, "lr": _METRIC,
                              "client_accuracy": ListOf(_ACCURACY, MAX_COUNT)},
                    extra=JSONValue(max_string=1 << 16, max_items=MAX_COUNT), max_keys=10_000)
_FILE_ENTRY = Record(required={"sha256": _SHA256, "bytes": Int(0, MAX_TENSOR_BYTES)},
                     optional={"previous": Nullable(Record(required={"sha256": _SHA256,
                                                                     "bytes": Int(0, MAX_TENSOR_BYTES)},
                                                           extra=None))},
                     extra=None)
#: ``provenance.json`` (module docstring).
PROVENANCE_SCHEMA = Record(optional={key: Nullable(Text(4096)) for key in
                                     ("device", "date", "flcore_version", "commit", "bundle")},
                           extra=JSONValue(max_string=4096, max_items=1000), max_keys=100)
DIGESTS_SCHEMA = Record(required={"run_id": Text(256), "config_digest": _SHA256,
                                  "files": Record(extra=_FILE_ENTRY, max_keys=MAX_COUNT)},
                        extra=None)


def config_digest(config: Mapping[str, Any]) -> str:
    """SHA-256 of a stored config's canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def snapshot_file(round: int) -> str:
    """The path of round ``round``'s snapshot inside a run directory."""
    return f"{SNAPSHOT_DIR}/round-{int(round):06d}.pt"


class Run:
    """Handle on one run directory; the directory need not exist yet.

    ``root`` is the store's root (default: the directory's parent): the run directory
    and everything in it must lie under it without links.

    Reading methods work on a missing or partial run (returning ``None``, ``{}`` or
    ``[]``), except ``config()``; a damaged or unsafe file raises a
    :class:`~flcore.store.errors.StoreError`.  Writing methods require the run to have
    been created with ``RunStore.create`` (its ``config.json`` must exist), so that every
    directory in the store can be identified by its config.
    """

    def __init__(self, path: str | Path, run_id: str, root: str | Path | None = None) -> None:
        self.path = Path(path)
        self.run_id = run_id
        self.root = Path(root) if root is not None else self.path.parent
        self._digest: str | None = None
        self._unsynced = False  # rows appended without an fsync since the last one

    def __repr__(self) -> str:
        return f"Run({self.run_id!r}, path={str(self.path)!r})"

    def exists(self) -> bool:
        """Whether the run was created (a ``config.json`` entry exists, whatever it is:
        a damaged one is reported by the readers, not hidden)."""
        return os.path.lexists(self.path / CONFIG_FILE)

    def check_directory(self) -> None:
        """Raise :class:`~flcore.store.errors.UnsafeFileError` unless the run directory is a real directory
        under the root (``FileNotFoundError`` if it does not exist)."""
        try:
            check_real_directory(self.path, self.root)
        except UnsafePathError as exc:
            raise UnsafeFileError(f"{exc}; fix: remove {self.path} (a run directory is never a link, "
                                  "and nothing is written through one)") from None

    # -- JSON records --------------------------------------------------------------------

    def _read_json(self, name: str, schema) -> Any:
        try:
            return safe_read_json(self.path / name, schema, root=self.root)
        except (InvalidRecordError, UnsafeFileError) as exc:
            text = str(exc).removeprefix(f"{self.path / name}: ").removeprefix(f"{self.path / name} ")
            raise DamagedRunError(str(self.path), [f"{name}: {text}"], _fix_json(self.path / name)) from None

    def config(self) -> dict[str, Any]:
        """The stored config; ``FileNotFoundError`` if the run was never created, and
        :class:`~flcore.store.errors.DamagedRunError` if it is unreadable or does not hash to the run id."""
        config = self._read_json(CONFIG_FILE, CONFIG_SCHEMA)
        if config is None:
            raise FileNotFoundError(f"run {self.run_id!r} has no {CONFIG_FILE} in {self.path}")
        if FLCORE_RUN_ID.fullmatch(self.run_id):
            digest = config_digest(config)
            if not digest.startswith(self.run_id):
                raise DamagedRunError(
                    str(self.path),
                    [f"{CONFIG_FILE}: its config hashes to {digest[:16]}, not to the run id {self.run_id} "
                     "(edited, or moved here from another run)"],
                    f"restore {self.path / CONFIG_FILE}; `flcore run` with the run's config rewrites it when the "
                    f"checkpoint proves which config it held; or delete {self.path} and run the config again")
        return config

    def status(self) -> dict[str, Any]:
        """The status record, or ``{"status": "new", "rounds_done": 0}`` if none."""
        status = self._read_json(STATUS_FILE, status_schema())
        return status if status is not None else {"status": NEW_STATUS, "rounds_done": 0}

    def set_status(self, status: str, **extra: Any) -> None:
        """Replace the status record with ``status``, the time and ``extra`` keys.

        ``rounds_done`` is carried over from the previous record unless given.  Other
        extra keys (``error``, ``diverged_round``, ...) are not carried over: a resumed
        run that is set back to ``"running"`` loses its old ``error``.
        """
        if status not in RUN_STATUSES:
            raise ValueError(f"status must be one of {RUN_STATUSES}, got {status!r}")
        if "updated" in extra:
            raise ValueError("'updated' is set by set_status itself")
        self._require_created()
        if "rounds_done" not in extra:
            try:
                extra["rounds_done"] = self.status().get("rounds_done", 0)
            except StoreError:  # an unreadable record is being replaced
                extra["rounds_done"] = 0
        rounds_done = extra.pop("rounds_done")
        self.sync_metrics()  # the rows a status record counts are on disk before it
        record = {
            "status": status,
            "rounds_done": int(rounds_done),
            "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            **extra,
        }
        atomic_write_json(self.path / STATUS_FILE, record)

    def config_digest(self) -> str:
        """:func:`config_digest` of this run's ``config.json`` (read once, then cached)."""
        if self._digest is None:
            self._digest = config_digest(self.config())
        return self._digest

    # -- metrics -------------------------------------------------------------------------

    def append_metrics(self, rows: Mapping[str, Any] | list[Mapping[str, Any]], durable: bool = True) -> None:
        """Append one row or a list of rows to ``metrics.jsonl``, durably unless not
        ``durable``: then the next checkpoint, status record or :meth:`sync_metrics` makes
        them durable first (what a resume keeps is the rows up to its checkpoint).

        Each row is stamped with this run's ``run_id`` (see the module docstring)."""
        self._require_created()
        rows = [rows] if isinstance(rows, Mapping) else rows
        try:
            append_jsonl(self.path / METRICS_FILE, [self._stamp_row(row) for row in rows], root=self.root,
                         durable=durable)
        except UnsafePathError as exc:
            raise UnsafeFileError(f"{exc}; fix: {_fix_json(self.path / METRICS_FILE)}") from None
        self._unsynced = self._unsynced or not durable

    def sync_metrics(self) -> None:
        """Make the rows appended without an fsync durable (nothing when there are none)."""
        if not self._unsynced:
            return
        try:
            sync_jsonl(self.path / METRICS_FILE, root=self.root)
        except UnsafePathError as exc:
            raise UnsafeFileError(f"{exc}; fix: {_fix_json(self.path / METRICS_FILE)}") from None
        self._unsynced = False

    def metrics_bytes(self) -> bytes:
        """The raw content of ``metrics.jsonl`` (``b""`` if there is none), read as a
        bounded regular file."""
        path = self.path / METRICS_FILE
        try:
            with open_regular_file(path, MAX_LOG_BYTES, self.root) as f:
                return f.read(MAX_LOG_BYTES + 1)
        except FileNotFoundError:
            return b""
        except UnsafePathError as exc:
            raise DamagedRunError(str(self.path), [f"{METRICS_FILE}: {_unsafe_detail(exc, path)}"],
                                  _fix_json(path)) from None
        except OSError as exc:
            raise DamagedRunError(str(self.path), [f"{METRICS_FILE}: unreadable ({exc.strerror or exc})"],
                                  _fix_json(path)) from None

    def read_metrics(self) -> list[dict[str, Any]]:
        """All metric rows in write order (a torn last line is ignored).

        The ``run_id`` stamp is removed from rows of this run; a row of another run keeps
        it (``flcore.store.integrity`` reports such rows).  A corrupt line before the last
        or a row outside its schema raises :class:`~flcore.store.errors.DamagedRunError`."""
        try:
            rows = read_jsonl(self.metrics_bytes(), str(self.path / METRICS_FILE))
        except ValueError as exc:
            text = str(exc).removeprefix(f"{self.path / METRICS_FILE}")
            raise DamagedLogError(str(self.path), [f"{METRICS_FILE}{text}"], _fix_json(self.path / METRICS_FILE)) \
                from None
        for number, row in enumerate(rows, 1):
            problems = ROW_SCHEMA.problems(row)
            if problems:
                raise DamagedLogError(str(self.path), [f"{METRICS_FILE}: row {number}: {problems[0]}"],
                                      _fix_json(self.path / METRICS_FILE))
        return [self._unstamp_row(row) for row in rows]

    def _stamp_row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(row, Mapping):
            raise TypeError(f"a log row must be a mapping, got {type(row).__name__}")
        return {"run_id": self.run_id, **row}

    def _unstamp_row(self, row: dict[str, Any]) -> dict[str, Any]:
        if row.get("run_id") == self.run_id:
            row = dict(row)
            del row["run_id"]
        return row

    def truncate_metrics(self, max_round: int) -> None:
        """Keep only rows with ``row["round"] <= max_round``, by an atomic rewrite.

        Used on resume: rows logged after the checkpoint's round are dropped so that
        re-running those rounds does not duplicate them, and so is the extra evaluation a
        capped run recorded at its cap (``"preview": true``), which the protocol does not
        have.  A torn last line is dropped as well.
        """
        if not os.path.lexists(self.path / METRICS_FILE):
            return
        kept = [row for row in self.read_metrics() if row["round"] <= max_round and not row.get("preview")]
        self._require_created()
        rewrite_jsonl(self.path / METRICS_FILE, [self._stamp_row(row) if "run_id" not in row else row
                                                 for row in kept])

    # -- tensor files --------------------------------------------------------------------

    def digests(self) -> dict[str, Any] | None:
        """``files.json`` (module docstring), ``None`` if there is none."""
        return self._read_json(DIGESTS_FILE, DIGESTS_SCHEMA)

    def save_tensor_file(self, name: str, state: Any) -> None:
        """Write ``state`` (tensors and plain containers) to ``name`` (a path inside the
        run directory) atomically, its digest recorded in ``files.json`` (module docstring)."""
        self._require_created()
        path = self.path / name
        if path.parent != self.path:
            path.parent.mkdir(exist_ok=True)
            try:
                check_real_directory(path.parent, self.root)
            except UnsafePathError as exc:
                raise UnsafeFileError(f"{exc}; fix: remove it") from None
        record = self._digests_for_update()
        old = record["files"].get(name)

        def before_replace(digest: str, size: int) -> None:
            entry = {"sha256": digest, "bytes": size}
            if old is not None and old["sha256"] != digest:
                entry["previous"] = {"sha256": old["sha256"], "bytes": old["bytes"]}
            record["files"][name] = entry
            atomic_write_json(self.path / DIGESTS_FILE, record, sort_keys=True)

        # on the host: a run trained on a GPU opens on a machine without one
        digest, size = atomic_torch_save_digest(to_device(state, "cpu"), path, before_replace)
        if record["files"][name].get("previous") is not None:
            record["files"][name] = {"sha256": digest, "bytes": size}
            atomic_write_json(self.path / DIGESTS_FILE, record, sort_keys=True)

    def _digests_for_update(self) -> dict[str, Any]:
        """The current ``files.json`` to add an entry to; a missing, damaged or foreign
        one is started afresh (the files it recorded are then refused until rewritten)."""
        fresh = {"run_id": self.run_id, "config_digest": self.config_digest(), "files": {}}
        try:
            record = self.digests()
        except StoreError:
            return fresh
        if record is None or record["run_id"] != self.run_id or record["config_digest"] != fresh["config_digest"]:
            return fresh
        return record

    def load_tensor_file(self, name: str, map_location: Any = "cpu", check_config: bool = True) -> Any:
        """The content of tensor file ``name``, or ``None`` if it does not exist.

        Refused (:class:`~flcore.store.errors.UnsafeFileError` naming the file and the fix; it is never
        unpickled) unless it is a bounded regular file whose SHA-256 ``files.json``
        records for this run and config, and it loads with ``weights_only=True``."""
        path = self.path / name
        try:
            f = open_regular_file(path, MAX_TENSOR_BYTES, self.root)
        except FileNotFoundError:
            return None
        except UnsafePathError as exc:
            raise UnsafeFileError(f"{_unsafe_detail(exc, path)}; it was not loaded; fix: {_fix_pt(path)}") from None
        with f:
            digest, size = _sha256_of(f)
            problems, legacy = self._digest_problems(name, digest, size, check_config)
            if problems:
                fix = _fix_pt(path)
                if legacy:
                    fix += (f"; or, if you trust the files as they are, `flcore runs --store {self.root} --adopt "
                            f"{self.run_id}` records their digests")
                raise UnsafeFileError(f"{self.path}: {'; '.join(problems)}; {name} was not loaded; fix: {fix}")
            f.seek(0)
            return _torch_load(f, path, map_location)

    def _digest_problems(self, name: str, digest: str, size: int, check_config: bool) -> tuple[list[str], bool]:
        """(what is wrong with ``name``'s proof, whether no proof was ever recorded)."""
        try:
            record = self.digests()
        except DamagedRunError as exc:
            return list(exc.problems), False
        if record is None:
            return [f"{name}: no digest recorded ({DIGESTS_FILE} is missing: written before digests were "
                    "recorded, or deleted)"], True
        if record["run_id"] != self.run_id:
            return [f"{DIGESTS_FILE}: belongs to another run ({record['run_id'][:64]!r}, not {self.run_id!r})"], False
        if check_config and self.exists():
            try:
                if record["config_digest"] != self.config_digest():
                    return [f"{DIGESTS_FILE}: written for another config than {CONFIG_FILE}"], False
            except StoreError as exc:
                return list(getattr(exc, "problems", [str(exc)])), False
        entry = record["files"].get(name)
        if entry is None:
            return [f"{name}: no digest recorded in {DIGESTS_FILE}"], True
        accepted = [entry] + ([entry["previous"]] if entry.get("previous") else [])
        if any(e["sha256"] == digest and e["bytes"] == size for e in accepted):
            return [], False
        if all(size < e["bytes"] for e in accepted):
            return [f"{name}: {size} bytes where {entry['bytes']} were written (truncated)"], False
        return [f"{name}: its content does not match its digest in {DIGESTS_FILE} (changed, damaged, "
                "or copied from another run)"], False

    def save_checkpoint(self, state: dict[str, Any]) -> None:
        """Atomically replace the checkpoint with ``state`` (only the latest is kept).

        ``state`` must hold tensors and plain containers only (it is loaded with
        ``weights_only=True``); the run id and config digest are added to it."""
        self._require_created()
        self.sync_metrics()  # the rows up to the checkpoint's round are on disk before it
        stamped = {**state, "run_id": self.run_id, "config_digest": self.config_digest()}
        self.save_tensor_file(CHECKPOINT_FILE, stamped)

    def load_checkpoint(self, map_location: Any = "cpu") -> dict[str, Any] | None:
        """The last completely written checkpoint (without the store's stamp), or ``None``.

        Raises :class:`~flcore.store.errors.UnsafeFileError` for a file that is not a plain tensor
        file and :class:`~flcore.store.errors.DamagedRunError` for a checkpoint without a valid digest or stamp, or of
        another run or config."""
        state = self._stamped_checkpoint(map_location, check_config=True)
        if state is None:
            return None
        return {k: v for k, v in state.items() if k not in CHECKPOINT_STAMP}

    def _stamped_checkpoint(self, map_location: Any, check_config: bool) -> dict[str, Any] | None:
        path = self.path / CHECKPOINT_FILE
        state = self.load_tensor_file(CHECKPOINT_FILE, map_location, check_config)
        if state is None:
            return None
        if not isinstance(state, dict):
            raise DamagedRunError(str(self.path), [f"{CHECKPOINT_FILE}: holds a {type(state).__name__}, "
                                                   "not a checkpoint dict"], _fix_checkpoint(path))
        problems = []
        if not isinstance(state.get("run_id"), str) or not isinstance(state.get("config_digest"), str):
            problems.append(f"{CHECKPOINT_FILE}: carries no run-id/config stamp (not written by this store)")
        elif state["run_id"] != self.run_id:
            problems.append(f"{CHECKPOINT_FILE}: belongs to another run ({state['run_id'][:64]!r}, "
                            f"not {self.run_id!r})")
        elif check_config and self.exists() and state["config_digest"] != self.config_digest():
            problems.append(f"{CHECKPOINT_FILE}: was written for another config than {CONFIG_FILE}")
        if problems:
            raise DamagedRunError(str(self.path), problems, _fix_checkpoint(path))
        return state

    def checkpoint_config_digest(self) -> str | None:
        """The config digest the checkpoint is stamped with (``None``: no readable,
        proven and stamped checkpoint): the proof of which config a damaged record held."""
        try:
            state = self._stamped_checkpoint("cpu", check_config=False)
        except StoreError:
            return None
        return state["config_digest"] if state is not None else None

    def save_final_model(self, state: dict[str, Any]) -> None:
        """Atomically write the final model state (whatever dict the caller gives)."""
        self.save_tensor_file(FINAL_MODEL_FILE, state)

    def load_final_model(self, map_location: Any = "cpu") -> dict[str, Any] | None:
        """The final model state, or ``None`` if the run has not finished."""
        return self.load_tensor_file(FINAL_MODEL_FILE, map_location)

    def tensor_files(self) -> list[str]:
        """The tensor files present (checkpoint, final model, snapshots), as names
        relative to the run directory; links and other odd entries included, so that
        reading them reports them."""
        names = [name for name in (CHECKPOINT_FILE, FINAL_MODEL_FILE) if os.path.lexists(self.path / name)]
        folder = self.path / SNAPSHOT_DIR
        if os.path.isdir(folder) and not os.path.islink(folder):
            with os.scandir(folder) as entries:
                names += sorted(f"{SNAPSHOT_DIR}/{e.name}" for e in entries
                                if e.name.startswith("round-") and e.name.endswith(".pt"))
        elif os.path.lexists(folder):
            names.append(SNAPSHOT_DIR)
        return names

    def adopt_tensor_files(self) -> list[str]:
        """Record the digests of the tensor files that have none or another one (a run
        written before digests were recorded), after checking that each loads with
        ``weights_only=True`` and that a checkpoint carries this run's stamp.  Returns the
        names adopted.  The caller holds the run's lock and has decided to trust the
        files' content; a file that is unsafe, unreadable or of another run raises and
        stays unrecorded."""
        self._require_created()
        record = self._digests_for_update()
        adopted = []
        for name in self.tensor_files():
            entry = record["files"].get(name)
            try:
                with open_regular_file(self.path / name, MAX_TENSOR_BYTES, self.root) as f:
                    digest, size = _sha256_of(f)
            except (UnsafePathError, IsADirectoryError) as exc:
                raise UnsafeFileError(f"{_unsafe_detail(exc, self.path / name)}; fix: remove it") from None
            if entry is not None and entry["sha256"] == digest and entry["bytes"] == size:
                continue
            record["files"][name] = {"sha256": digest, "bytes": size}
            atomic_write_json(self.path / DIGESTS_FILE, record, sort_keys=True)
            try:
                self.load_checkpoint() if name == CHECKPOINT_FILE else self.load_tensor_file(name)
            except BaseException:
                if entry is None:
                    del record["files"][name]
                else:
                    record["files"][name] = entry
                atomic_write_json(self.path / DIGESTS_FILE, record, sort_keys=True)
                raise
            adopted.append(name)
        return adopted

    # -- summary -------------------------------------------------------------------------

    def write_summary(self, summary: Mapping[str, Any]) -> None:
        """Atomically replace ``summary.json``."""
        self._require_created()
        atomic_write_json(self.path / SUMMARY_FILE, summary)

    def summary(self) -> dict[str, Any]:
        """The final summary, or ``{}`` if none was written."""
        return self._read_json(SUMMARY_FILE, SUMMARY_SCHEMA) or {}

    def provenance(self) -> dict[str, Any]:
        """Where an imported run was trained (``device``, ``date``, ``flcore_version``,
        ``commit``, ``bundle``), or ``{}`` for a run trained into this store."""
        record = self._read_json(PROVENANCE_FILE, PROVENANCE_SCHEMA)
        return record if isinstance(record, dict) else {}

    # -- analysis caches ------------------------------------------------------------------

    def save_analysis(self, name: str, value: Mapping[str, Any]) -> None:
        """Write ``value`` (a JSON object of numbers computed from this run) as
        ``analysis/<name>.json`` atomically, its digest recorded in ``files.json`` beside the
        tensor files', so that :meth:`load_analysis` and ``flcore runs --verify`` can tell an
        edited cache from the one flcore wrote."""
        self._require_created()
        if not ANALYSIS_NAME.fullmatch(name):
            raise ValueError(f"analysis cache name {name[:40]!r}: must match {ANALYSIS_NAME.pattern}")
        data = (dumps_json(dict(value), sort_keys=True) + "\n").encode()
        if len(data) > MAX_ANALYSIS_BYTES:
            raise ValueError(f"analysis cache {name!r}: {len(data)} bytes, more than {MAX_ANALYSIS_BYTES}")
        relative = f"{ANALYSIS_DIR}/{name}.json"
        folder = self.path / ANALYSIS_DIR
        folder.mkdir(exist_ok=True)
        try:
            check_real_directory(folder, self.root)
        except UnsafePathError as exc:
            raise UnsafeFileError(f"{exc}; fix: remove it") from None
        record = self._digests_for_update()
        record["files"][relative] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        atomic_write_json(self.path / DIGESTS_FILE, record, sort_keys=True)  # the proof first: a crash
        atomic_write_text(self.path / relative, data.decode())  # between leaves a cache that is refused

    def load_analysis(self, name: str) -> dict[str, Any] | None:
        """``analysis/<name>.json`` when it is a bounded regular file whose digest ``files.json``
        records for this run and config and which holds a JSON object; None otherwise (none
        written, or one that cannot be trusted: the caller computes it again)."""
        value, problems = self._read_analysis(name)
        return None if problems else value

    def analysis_problems(self, name: str) -> list[str]:
        """Why ``analysis/<name>.json`` cannot be trusted (``[]`` when it can, or is absent)."""
        return self._read_analysis(name)[1]

    def _read_analysis(self, name: str) -> tuple[dict[str, Any] | None, list[str]]:
        """The cache's value (None when absent) and what is wrong with it, from one read."""
        relative = f"{ANALYSIS_DIR}/{name}.json"
        try:
            data = read_regular_bytes(self.path / relative, MAX_ANALYSIS_BYTES, self.root)
        except FileNotFoundError:
            return None, []
        except (UnsafePathError, OSError) as exc:
            return None, [f"{relative}: {one_line(exc)[:200]}"]
        problems, _ = self._digest_problems(relative, hashlib.sha256(data).hexdigest(), len(data), True)
        if problems:
            return None, problems
        try:
            value = json.loads(data, object_pairs_hook=unique_json_keys)
        except ValueError as exc:
            return None, [f"{relative}: not JSON ({one_line(exc)[:120]})"]
        return (value, []) if isinstance(value, dict) else (None, [f"{relative}: not a JSON object"])

    def analysis_names(self) -> list[str]:
        """The analysis caches present (their names, without ``.json``)."""
        folder = self.path / ANALYSIS_DIR
        if not os.path.isdir(folder) or os.path.islink(folder):
            return []
        with os.scandir(folder) as entries:
            return sorted(e.name[:-len(".json")] for e in entries if e.name.endswith(".json"))

    # -- housekeeping -----------------------------------------------------------------------

    def remove_temp_files(self) -> int:
        """Delete temporary files left by writes that crashed; returns how many.

        Only safe while no other process writes to this run (e.g. when resuming it).
        """
        try:
            self.check_directory()
        except (StoreError, FileNotFoundError):
            return 0
        stale = [p for p in self.path.glob(f".*{TEMP_SUFFIX}") if p.is_file() and not p.is_symlink()]
        for path in stale:
            path.unlink(missing_ok=True)
        return len(stale)

    def _require_created(self) -> None:
        if not self.exists():
            raise FileNotFoundError(
                f"run {self.run_id!r} does not exist in {self.path.parent}; "
                "create it with RunStore.create(run_id, config) first"
            )
        self.check_directory()


def _unsafe_detail(exc: OSError, path: Path) -> str:
    text = str(exc)
    return text if text.startswith(str(path)) else f"{path}: {text}"


def _fix_json(path: Path) -> str:
    if path.name == STATUS_FILE:
        return (f"delete {path}; `flcore run` with the same config then resumes the run "
                "from its checkpoint and rewrites it")
    return f"restore {path} from a copy, or delete {path.parent} and run the config again"


def _fix_checkpoint(path: Path) -> str:
    return (f"delete {path} (the run then restarts from round 0 on the next `flcore run`), "
            f"or delete {path.parent} and run the config again")


def _sha256_of(f: IO[bytes]) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    while True:
        chunk = f.read(1 << 20)
        if not chunk:
            return digest.hexdigest(), size
        digest.update(chunk)
        size += len(chunk)


def _torch_load(f: IO[bytes], path: Path, map_location: Any) -> Any:
    """``torch.load(weights_only=True)`` of an open file, with errors that name the file.

    A pickle that asks for anything but tensors and plain containers is refused by
    torch's restricted unpickler before any of it runs."""
    try:
        return torch.load(f, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:
        first = str(exc).strip().splitlines()
        detail = next((line.strip() for line in first if "Unsupported" in line or "global" in line.lower()),
                      first[0] if first else "")
        raise UnsafeFileError(
            f"{path} holds objects other than tensors and plain containers (it may carry code) "
            f"and was not loaded: {detail[:200]}; fix: {_fix_pt(path)}") from None
    except (RuntimeError, EOFError, OSError, ValueError, zipfile.BadZipFile, RecursionError, MemoryError,
            KeyError, TypeError, AttributeError, IndexError) as exc:
        message = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise UnsafeFileError(f"{path} is truncated or not a torch file ({message}) and was not loaded; "
                              f"fix: {_fix_pt(path)}") from None


def _fix_pt(path: Path) -> str:
    if path.name == CHECKPOINT_FILE:
        return _fix_checkpoint(path)
    run_dir = path.parent.parent if path.parent.name == SNAPSHOT_DIR else path.parent
    return f"delete {run_dir} and run the config again to recompute it"
