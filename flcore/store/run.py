"""One run's directory in the run store (design guide, section 7).

Files, all written atomically (temporary file in the same directory + ``os.replace``)
except the append-only metrics log:

- ``config.json``: the canonical config, written once by ``RunStore.create``;
- ``status.json``: ``{"status", "rounds_done", "updated", ...extra}``;
- ``metrics.jsonl``: one JSON object per evaluated round, fsync'ed on every append,
  tolerant of a torn last line (see :mod:`flcore.store.metrics_log`);
- ``checkpoint.pt``: the latest resumable state (only the latest is kept);
- ``final_model.pt``: the final model state;
- ``summary.json``: the final summary;
- ``provenance.json``: only in a run trained elsewhere and copied in (a results
  bundle): where it was trained (device, date, flcore version and commit).

JSON values go through :func:`flcore.store.jsonable.to_jsonable`: numpy/torch scalars
become Python numbers and NaN/inf become ``null``.

A run is single-writer: one process trains it at a time (``flcore.store.lock``).
``.pt`` files are loaded with ``torch.load(weights_only=True)``: only tensors and plain
containers (dict, list, str, numbers) are accepted, so a checkpoint handed over by someone
else (a CI cache, a collaborator's store) cannot run code; anything else raises
:class:`~flcore.store.errors.UnsafeFileError` naming the file.

Records check themselves: every metrics row carries the ``run_id``, and the checkpoint
the ``run_id`` and the ``config_digest`` (SHA-256 of ``config.json``'s canonical JSON), so
that :mod:`flcore.store.integrity` can detect gaps, duplicates, rows or checkpoints of
another run, and a summary that does not match its log.
"""
from __future__ import annotations

import hashlib
import json
import pickle
import zipfile
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from flcore.store.atomic import TEMP_SUFFIX, atomic_torch_save, atomic_write_json
from flcore.store.errors import DamagedRunError, StoreError, UnsafeFileError
from flcore.store.metrics_log import append_jsonl, read_jsonl, rewrite_jsonl

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


def config_digest(config: Mapping[str, Any]) -> str:
    """SHA-256 of a stored config's canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Run:
    """Handle on one run directory; the directory need not exist yet.

    Reading methods work on a missing or partial run (returning ``None``, ``{}`` or
    ``[]``), except ``config()``.  Writing methods require the run to have been created
    with ``RunStore.create`` (its ``config.json`` must exist), so that every directory
    in the store can be identified by its config.
    """

    def __init__(self, path: str | Path, run_id: str) -> None:
        self.path = Path(path)
        self.run_id = run_id
        self._digest: str | None = None

    def __repr__(self) -> str:
        return f"Run({self.run_id!r}, path={str(self.path)!r})"

    def exists(self) -> bool:
        """Whether the run was created (its ``config.json`` exists)."""
        return (self.path / CONFIG_FILE).is_file()

    # -- config and status ------------------------------------------------------------

    def config(self) -> dict[str, Any]:
        """The stored config; ``FileNotFoundError`` if the run was never created."""
        config = _read_json(self.path / CONFIG_FILE)
        if config is None:
            raise FileNotFoundError(f"run {self.run_id!r} has no {CONFIG_FILE} in {self.path}")
        return config

    def status(self) -> dict[str, Any]:
        """The status record, or ``{"status": "new", "rounds_done": 0}`` if none."""
        status = _read_json(self.path / STATUS_FILE)
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
            except DamagedRunError:  # an unreadable record is being replaced
                extra["rounds_done"] = 0
        rounds_done = extra.pop("rounds_done")
        record = {
            "status": status,
            "rounds_done": int(rounds_done),
            "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            **extra,
        }
        atomic_write_json(self.path / STATUS_FILE, record)

    # -- metrics -------------------------------------------------------------------------

    def config_digest(self) -> str:
        """:func:`config_digest` of this run's ``config.json`` (read once, then cached)."""
        if self._digest is None:
            self._digest = config_digest(self.config())
        return self._digest

    def append_metrics(self, rows: Mapping[str, Any] | list[Mapping[str, Any]]) -> None:
        """Append one row or a list of rows to ``metrics.jsonl``, durably.

        Each row is stamped with this run's ``run_id`` (see the module docstring)."""
        self._require_created()
        rows = [rows] if isinstance(rows, Mapping) else rows
        append_jsonl(self.path / METRICS_FILE, [self._stamp_row(row) for row in rows])

    def read_metrics(self) -> list[dict[str, Any]]:
        """All metric rows in write order (a torn last line is ignored).

        The ``run_id`` stamp is removed from rows of this run; a row of another run keeps
        it (``flcore.store.integrity`` reports such rows)."""
        return [self._unstamp_row(row) for row in read_jsonl(self.path / METRICS_FILE)]

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
        have.  Rows without a ``round`` are kept.  A torn last line is dropped as well.
        """
        path = self.path / METRICS_FILE
        if not path.exists():
            return
        kept = [
            row for row in read_jsonl(path)
            if (not isinstance(row.get("round"), (int, float)) or row["round"] <= max_round)
            and not row.get("preview")
        ]
        rewrite_jsonl(path, kept)

    # -- checkpoint, final model, summary -------------------------------------------------

    def save_checkpoint(self, state: dict[str, Any]) -> None:
        """Atomically replace the checkpoint with ``state`` (only the latest is kept).

        ``state`` must hold tensors and plain containers only (it is loaded with
        ``weights_only=True``); the run id and config digest are added to it."""
        self._require_created()
        stamped = {**state, "run_id": self.run_id, "config_digest": self.config_digest()}
        atomic_torch_save(stamped, self.path / CHECKPOINT_FILE)

    def load_checkpoint(self, map_location: Any = "cpu") -> dict[str, Any] | None:
        """The last completely written checkpoint (without the store's stamp), or ``None``.

        Raises :class:`~flcore.store.errors.UnsafeFileError` for a file that is not a plain tensor file and
        :class:`DamagedRunError` for a checkpoint of another run or another config."""
        path = self.path / CHECKPOINT_FILE
        state = _torch_load(path, map_location)
        if state is None:
            return None
        if not isinstance(state, dict):
            raise DamagedRunError(str(self.path), [f"{CHECKPOINT_FILE}: holds a {type(state).__name__}, "
                                                   "not a checkpoint dict"], _fix_checkpoint(path))
        problems = []
        if "run_id" in state and state["run_id"] != self.run_id:
            problems.append(f"{CHECKPOINT_FILE}: belongs to another run ({state['run_id']!r}, not {self.run_id!r})")
        elif "config_digest" in state and self.exists() and state["config_digest"] != self.config_digest():
            problems.append(f"{CHECKPOINT_FILE}: was written for another config than {CONFIG_FILE}")
        if problems:
            raise DamagedRunError(str(self.path), problems, _fix_checkpoint(path))
        return {k: v for k, v in state.items() if k not in CHECKPOINT_STAMP}

    def checkpoint_config_digest(self) -> str | None:
        """The config digest the checkpoint is stamped with (``None``: no readable,
        stamped checkpoint): the proof of which config a damaged record held."""
        try:
            state = _torch_load(self.path / CHECKPOINT_FILE, "cpu")
        except StoreError:
            return None
        return state.get("config_digest") if isinstance(state, dict) else None

    def save_final_model(self, state: dict[str, Any]) -> None:
        """Atomically write the final model state (whatever dict the caller gives)."""
        self._require_created()
        atomic_torch_save(state, self.path / FINAL_MODEL_FILE)

    def load_final_model(self, map_location: Any = "cpu") -> dict[str, Any] | None:
        """The final model state, or ``None`` if the run has not finished."""
        return _torch_load(self.path / FINAL_MODEL_FILE, map_location)

    def write_summary(self, summary: Mapping[str, Any]) -> None:
        """Atomically replace ``summary.json``."""
        self._require_created()
        atomic_write_json(self.path / SUMMARY_FILE, summary)

    def summary(self) -> dict[str, Any]:
        """The final summary, or ``{}`` if none was written."""
        return _read_json(self.path / SUMMARY_FILE) or {}

    def provenance(self) -> dict[str, Any]:
        """Where an imported run was trained (``device``, ``date``, ``flcore_version``,
        ``commit``, ``bundle``), or ``{}`` for a run trained into this store."""
        record = _read_json(self.path / PROVENANCE_FILE)
        return record if isinstance(record, dict) else {}

    # -- housekeeping -----------------------------------------------------------------------

    def remove_temp_files(self) -> int:
        """Delete temporary files left by writes that crashed; returns how many.

        Only safe while no other process writes to this run (e.g. when resuming it).
        """
        if not self.path.is_dir():
            return 0
        stale = [p for p in self.path.glob(f".*{TEMP_SUFFIX}") if p.is_file()]
        for path in stale:
            path.unlink(missing_ok=True)
        return len(stale)

    def _require_created(self) -> None:
        if not self.exists():
            raise FileNotFoundError(
                f"run {self.run_id!r} does not exist in {self.path.parent}; "
                "create it with RunStore.create(run_id, config) first"
            )


def _read_json(path: Path) -> Any:
    """The JSON value in ``path``, ``None`` if it does not exist; ``DamagedRunError`` if it
    cannot be read or parsed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise DamagedRunError(str(path.parent), [f"{path.name}: unreadable ({exc})"],
                              _fix_json(path)) from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise DamagedRunError(str(path.parent), [f"{path.name}: not valid JSON ({exc})"],
                              _fix_json(path)) from None


def _fix_json(path: Path) -> str:
    if path.name == STATUS_FILE:
        return (f"delete {path}; `flcore run` with the same config then resumes the run "
                "from its checkpoint and rewrites it")
    return f"restore {path} from a copy, or delete {path.parent} and run the config again"


def _fix_checkpoint(path: Path) -> str:
    return (f"delete {path} (the run then restarts from round 0 on the next `flcore run`), "
            f"or delete {path.parent} and run the config again")


def _torch_load(path: Path, map_location: Any) -> Any:
    """``torch.load(weights_only=True)`` with errors that name the file.

    A pickle that asks for anything but tensors and plain containers is refused by
    torch's restricted unpickler before any of it runs."""
    if not path.is_file():
        return None
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:
        first = str(exc).strip().splitlines()
        detail = next((line.strip() for line in first if "Unsupported" in line or "global" in line.lower()),
                      first[0] if first else "")
        raise UnsafeFileError(
            f"{path} holds objects other than tensors and plain containers (it may carry code) "
            f"and was not loaded: {detail[:200]}; fix: {_fix_pt(path)}") from None
    except (RuntimeError, EOFError, OSError, ValueError, zipfile.BadZipFile) as exc:
        message = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise UnsafeFileError(f"{path} is truncated or not a torch file ({message}); "
                              f"fix: {_fix_pt(path)}") from None


def _fix_pt(path: Path) -> str:
    if path.name == CHECKPOINT_FILE:
        return _fix_checkpoint(path)
    return f"delete {path.parent} and run the config again to recompute it"
