"""The run store: one directory per run under a root, and DataFrame queries over them.

Design guide, section 7.  A run's directory is named by its run id, the hash of its
canonical config, which the caller computes and passes in; the store only checks that
the id is a plain directory name.  ``create`` is idempotent for the same config, which
is what lets ``flcore run`` on an existing config resume or return the finished record.

Table conventions (``runs()``):

- one row per created run, ordered by run id;
- columns ``run_id``, ``run_dir``, then the status record (``status``,
  ``rounds_done``, ``updated`` and extras such as ``diverged_round``), then the
  ``summary.json`` keys, then one column per config key;
- nested dicts are flattened to dotted names (``{"optim": {"lr": 0.1}}`` ->
  ``optim.lr``), lists become tuples so columns can be grouped on;
- on a name clash the earlier group wins and the later column is prefixed with its
  group (``summary.<key>`` or ``config.<key>``), so a config key named ``status`` shows
  as ``config.status``.

A run whose ``status.json``, ``summary.json`` or ``config.json`` cannot be read (not a
regular file, not strict JSON, not of its schema) or whose directory is a link is listed
with status ``"damaged"`` and a ``problems`` column instead of breaking the table; a run
whose record fails its checks (:mod:`flcore.store.integrity`) keeps its status and gets
its ``problems`` too (the column exists only when some run is damaged).  A run recorded
``running`` that no process holds is listed ``interrupted``
(:func:`flcore.store.integrity.live_status`).

JSON NaN/inf were stored as ``null`` (see :mod:`flcore.store.jsonable`) and show as
NaN in numeric columns.
"""
from __future__ import annotations

import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from flcore.store.atomic import atomic_write_json
from flcore.store.errors import DamagedRunError, StoreError
from flcore.store.integrity import check_run, live_status
from flcore.store.jsonable import to_jsonable
from flcore.store.run import CONFIG_FILE, Run
from flcore.store.tables import flatten_dict, merge_sections

__all__ = ["Run", "RunStore"]

# A single, visible path component: no separators, no "."/".." and no leading dot
# (hidden names are the store's temporary files).
_RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,254}")

#: ``status`` of a run whose status, summary or config file cannot be read (``runs()``).
DAMAGED_STATUS = "damaged"

_RUNS_BASE_COLUMNS = ["run_id", "run_dir", "status", "rounds_done"]
_METRICS_BASE_COLUMNS = ["run_id", "round"]


class RunStore:
    """A directory of runs.  The root is created lazily by the first ``create``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser()

    def __repr__(self) -> str:
        return f"RunStore({str(self.root)!r})"

    def run(self, run_id: str) -> Run:
        """A handle on run ``run_id`` (its directory may not exist yet)."""
        if not isinstance(run_id, str) or not _RUN_ID_PATTERN.fullmatch(run_id):
            raise ValueError(
                f"invalid run id {run_id!r}: use letters, digits, '.', '_' or '-', "
                "not starting with '.' or '-', at most 255 characters"
            )
        return Run(self.root / run_id, run_id, root=self.root)

    def create(self, run_id: str, config: Mapping[str, Any]) -> Run:
        """Create run ``run_id`` with ``config``, or reopen it if it exists.

        ``config.json`` is written once (sorted keys, atomically).  Reopening with an
        equal config (compared after JSON conversion, so a tuple equals a list) returns
        the run; a different config raises ``ValueError`` naming the differing keys,
        since one id must never hold two experiments.
        """
        if not isinstance(config, Mapping):
            raise TypeError(f"config must be a mapping, got {type(config).__name__}")
        run = self.run(run_id)
        canonical = to_jsonable(config)
        if run.exists():
            stored = run.config()
            if stored != canonical:
                differing = sorted(
                    key for key in set(stored) | set(canonical)
                    if stored.get(key, _MISSING) != canonical.get(key, _MISSING)
                )
                raise ValueError(
                    f"run {run_id!r} in {self.root} already holds a different config "
                    f"(differing keys: {', '.join(differing)})"
                )
            return run
        run.path.mkdir(parents=True, exist_ok=True)
        run.check_directory()
        atomic_write_json(run.path / CONFIG_FILE, canonical, sort_keys=True)
        return run

    def run_ids(self) -> list[str]:
        """Ids of the created runs (directories holding a ``config.json`` entry), sorted;
        a link named like a run is listed too, so that it is reported, never followed."""
        try:
            entries = list(os.scandir(self.root))
        except (FileNotFoundError, NotADirectoryError):
            return []
        ids = []
        for entry in entries:
            if not _RUN_ID_PATTERN.fullmatch(entry.name):
                continue
            if entry.is_symlink() or (entry.is_dir(follow_symlinks=False)
                                      and os.path.lexists(os.path.join(entry.path, CONFIG_FILE))):
                ids.append(entry.name)
        return sorted(ids)

    def runs(self) -> pd.DataFrame:
        """One row per run: ids, status, summary and flattened config (module docstring)."""
        rows = []
        for run_id in self.run_ids():
            run = self.run(run_id)
            problems = check_run(run)
            try:
                run.check_directory()
                status = dict(run.status())
                status["status"] = live_status(run, status.get("status"))
                row = merge_sections([
                    ("run", {"run_id": run_id, "run_dir": str(run.path)}),
                    ("status", status),
                    ("summary", flatten_dict(run.summary())),
                    ("config", flatten_dict(run.config())),
                ])
                if problems:  # readable, but its numbers are not to be trusted
                    row["problems"] = "; ".join(problems)
                rows.append(row)
            except (StoreError, OSError) as exc:  # list the others; mark this one
                rows.append({"run_id": run_id, "run_dir": str(run.path), "status": DAMAGED_STATUS,
                             "problems": "; ".join(problems) or str(exc)})
        if not rows:
            return pd.DataFrame(columns=_RUNS_BASE_COLUMNS)
        return pd.DataFrame(rows)

    def metrics(self, run_id: str | None = None) -> pd.DataFrame:
        """Metric rows of one run, or of all runs, with a leading ``run_id`` column.

        Rows keep their write order within a run; runs are ordered by id.  An unknown
        ``run_id`` raises ``FileNotFoundError``.  A damaged log (gaps, duplicates, rows of
        another run, see :mod:`flcore.store.integrity`) raises ``DamagedRunError`` for one
        run; for all runs the damaged ones are left out with a warning.
        """
        if run_id is None:
            run_ids = self.run_ids()
        else:
            if not self.run(run_id).exists():
                raise FileNotFoundError(f"no run {run_id!r} in {self.root}")
            run_ids = [run_id]
        records = []
        for rid in run_ids:
            problems = check_run(self.run(rid))
            rows: list[dict[str, Any]] = []
            if not problems:
                try:
                    rows = self.run(rid).read_metrics()
                except StoreError as exc:
                    problems = [str(exc)]
            if problems:
                damaged = DamagedRunError(str(self.run(rid).path), problems,
                                          "run `flcore runs --verify` for the details; `flcore run` with "
                                          "the run's config repairs it from its checkpoint where possible")
                if run_id is not None:
                    raise damaged
                warnings.warn(f"left out: {damaged}", stacklevel=2)
                continue
            for row in rows:
                row.pop("run_id", None)
                records.append({"run_id": rid, **row})
        if not records:
            return pd.DataFrame(columns=_METRICS_BASE_COLUMNS)
        return pd.DataFrame(records)


_MISSING = object()
