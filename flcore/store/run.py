"""One run's directory in the run store (design guide, section 7).

Files, all written atomically (temporary file in the same directory + ``os.replace``)
except the append-only metrics log:

- ``config.json``: the canonical config, written once by ``RunStore.create``;
- ``status.json``: ``{"status", "rounds_done", "updated", ...extra}``;
- ``metrics.jsonl``: one JSON object per evaluated round, fsync'ed on every append,
  tolerant of a torn last line (see :mod:`flcore.store.metrics_log`);
- ``checkpoint.pt``: the latest resumable state (only the latest is kept);
- ``final_model.pt``: the final model state;
- ``summary.json``: the final summary.

JSON values go through :func:`flcore.store.jsonable.to_jsonable`: numpy/torch scalars
become Python numbers and NaN/inf become ``null``.

A run is single-writer: one process trains it at a time.  ``.pt`` files are loaded
with ``torch.load(weights_only=False)`` because checkpoints hold non-tensor state
(RNG states, numpy arrays); only open run directories you trust.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from .atomic import TEMP_SUFFIX, atomic_torch_save, atomic_write_json
from .metrics_log import append_jsonl, read_jsonl, rewrite_jsonl

CONFIG_FILE = "config.json"
STATUS_FILE = "status.json"
METRICS_FILE = "metrics.jsonl"
CHECKPOINT_FILE = "checkpoint.pt"
FINAL_MODEL_FILE = "final_model.pt"
SUMMARY_FILE = "summary.json"

#: Statuses a run can be set to.  ``"diverged"`` is a finished outcome (NaN/inf loss),
#: ``"interrupted"`` a stop that can be resumed from the checkpoint.
RUN_STATUSES = ("running", "finished", "diverged", "failed", "interrupted")
#: What ``Run.status()`` reports before any status was written.
NEW_STATUS = "new"


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
        rounds_done = extra.pop("rounds_done", self.status().get("rounds_done", 0))
        record = {
            "status": status,
            "rounds_done": int(rounds_done),
            "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            **extra,
        }
        atomic_write_json(self.path / STATUS_FILE, record)

    # -- metrics -------------------------------------------------------------------------

    def append_metrics(self, rows: Mapping[str, Any] | list[Mapping[str, Any]]) -> None:
        """Append one row or a list of rows to ``metrics.jsonl``, durably."""
        self._require_created()
        append_jsonl(self.path / METRICS_FILE, [rows] if isinstance(rows, Mapping) else rows)

    def read_metrics(self) -> list[dict[str, Any]]:
        """All metric rows in write order (a torn last line is ignored)."""
        return read_jsonl(self.path / METRICS_FILE)

    def truncate_metrics(self, max_round: int) -> None:
        """Keep only rows with ``row["round"] <= max_round``, by an atomic rewrite.

        Used on resume: rows logged after the checkpoint's round are dropped so that
        re-running those rounds does not duplicate them.  Rows without a ``round`` are
        kept.  A torn last line is dropped as well.
        """
        path = self.path / METRICS_FILE
        if not path.exists():
            return
        kept = [
            row for row in read_jsonl(path)
            if row.get("round") is None or row["round"] <= max_round
        ]
        rewrite_jsonl(path, kept)

    # -- checkpoint, final model, summary -------------------------------------------------

    def save_checkpoint(self, state: dict[str, Any]) -> None:
        """Atomically replace the checkpoint with ``state`` (only the latest is kept)."""
        self._require_created()
        atomic_torch_save(state, self.path / CHECKPOINT_FILE)

    def load_checkpoint(self, map_location: Any = "cpu") -> dict[str, Any] | None:
        """The last completely written checkpoint, or ``None``."""
        return _torch_load(self.path / CHECKPOINT_FILE, map_location)

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
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return json.loads(text)


def _torch_load(path: Path, map_location: Any) -> Any:
    if not path.is_file():
        return None
    return torch.load(path, map_location=map_location, weights_only=False)
