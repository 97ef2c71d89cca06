"""The estimate printed before a training batch against the time it took, kept in the store.

When ``flcore book`` or ``flcore reproduce`` trains with an estimate (the local executor
on a calibrated machine: :mod:`flcore.reproduction.estimate`) and every group came back,
:func:`append_record` adds one line to ``<store>/.training-estimates.jsonl`` and the log
says it in one line (``training took 21:17 against an estimate of 18:08 ...``).  A line is
``{"fields": {...}, "digest": SHA-256 of the fields}``; the fields: ``runs``, ``groups``,
``workers``, ``estimate_s`` (before training), ``measured_s`` (wall time of the training),
``ratio`` (measured over estimate; the book's target is 0.75-1.25), ``group_s`` (each
group's ``[estimate, measured]`` seconds, in the order they started), ``scales`` (of the
runs trained), ``cpus`` (the CPU affinity of the process), ``processor``, ``machine``
(``"CPU, 2 cores"``), ``load`` (the 1-minute load average before training), ``estimate``
(where the rates came from), ``correction`` and ``calibration`` (the book correction the
estimate took, and the rows and probe it holds for), ``flcore`` (version), ``date``.

``python benchmarks/training_estimate.py --from-store runs --append
benchmarks/results/training_estimate.jsonl`` turns the last line into a row of the
benchmark's file.  :func:`read_records` checks the file before trusting it: a bounded
regular file inside the store, each line a JSON object of this schema whose digest
matches; other lines are skipped.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from flcore.cpus import available_cpus
from flcore.reproduction.calibration import processor_name
from flcore.reproduction.estimate import wall_seconds
from flcore.safe_io import read_regular_bytes
from flcore.store.atomic import atomic_write_text
from flcore.version import __version__

#: The file in the store root (hidden: never taken for a run).
RECORD_FILE = ".training-estimates.jsonl"
#: A store keeps at most this many bytes of records (older lines are dropped first).
MAX_RECORD_BYTES = 1 << 20
_NUMBERS = ("runs", "groups", "workers", "estimate_s", "measured_s", "ratio")


def _digest(fields: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _affinity() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return list(range(available_cpus()))


def training_record(estimates: list[float], measured: list[float], elapsed: float, sizes: list[int],
                    workers: int, note: str, scales: list[str], load: float | None, correction: float = 1.0,
                    calibration: str = "") -> dict[str, Any]:
    """The fields of one record (module docstring): ``estimates`` and ``measured`` are
    the groups' seconds in the order they started, ``elapsed`` the batch's wall seconds;
    ``correction`` and ``calibration``: the book correction the estimate took and what it
    holds for (:mod:`flcore.reproduction.estimate`)."""
    estimate = wall_seconds(estimates, workers)
    cpus = _affinity()
    return {"runs": int(sum(sizes)), "groups": len(sizes), "workers": int(workers),
            "estimate_s": round(estimate, 1), "measured_s": round(elapsed, 1),
            "ratio": round(elapsed / estimate, 3) if estimate > 0 else None,
            "group_s": [[round(e, 1), round(m, 1)] for e, m in zip(estimates, measured)],
            "scales": sorted(set(scales)), "cpus": cpus, "processor": processor_name(),
            "machine": f"CPU, {len(cpus)} cores", "load": None if load is None else round(load, 2),
            "estimate": note, "correction": round(float(correction), 4), "calibration": calibration,
            "flcore": __version__,
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def record_line(fields: dict[str, Any]) -> str:
    return json.dumps({"fields": fields, "digest": _digest(fields)}, sort_keys=True)


def append_record(store: str | Path, fields: dict[str, Any]) -> Path:
    """Append one record to the store's file (dropping the oldest lines past
    :data:`MAX_RECORD_BYTES`); returns the file's path."""
    path = Path(store) / RECORD_FILE
    kept = [record_line(f) for f in read_records(store)] + [record_line(fields)]
    while len(kept) > 1 and sum(len(line) + 1 for line in kept) > MAX_RECORD_BYTES:
        kept.pop(0)

    atomic_write_text(path, "".join(line + "\n" for line in kept))
    return path


def _valid(fields: Any) -> bool:
    if not isinstance(fields, dict) or not all(k in fields for k in _NUMBERS + ("group_s", "cpus", "date")):
        return False
    numbers = [fields[k] for k in _NUMBERS]
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0
               for x in numbers):
        return False
    pairs = fields["group_s"]
    return (isinstance(pairs, list) and len(pairs) == fields["groups"]
            and all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, (int, float)) for x in p)
                    for p in pairs)
            and isinstance(fields["cpus"], list) and isinstance(fields["date"], str))


def read_records(store: str | Path) -> list[dict[str, Any]]:
    """The store's records, oldest first (module docstring); [] when there is no file or
    it is not a bounded regular file inside the store."""
    try:
        raw = read_regular_bytes(Path(store) / RECORD_FILE, MAX_RECORD_BYTES + 4096, root=store)
    except (OSError, ValueError):
        return []
    out = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if (isinstance(record, dict) and set(record) == {"fields", "digest"} and _valid(record["fields"])
                and record["digest"] == _digest(record["fields"])):
            out.append(record["fields"])
    return out
