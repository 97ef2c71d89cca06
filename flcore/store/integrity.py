"""Self-checking run records: find damage, repair it from the checkpoint, or name the fix.

What a record must satisfy (every rule is checked by :func:`check_run`, which never
raises, whatever the files hold):

- the run directory is a real directory under the store's root, and each of its known
  entries (records, log, tensor files, ``.lock``) is a regular file, not a link, a FIFO
  or a device (:mod:`flcore.safe_io`);
- ``config.json``, ``status.json`` and ``summary.json`` are strict JSON of their schema
  (:mod:`flcore.store.run`, :mod:`flcore.store.records`), and ``config.json`` hashes to
  the run id;
- every line of ``metrics.jsonl`` is a row of its schema (an integer ``round`` in
  range, numeric metrics) of this run (its ``run_id`` stamp); rounds strictly increase
  (no duplicate, no reordering);
- every evaluation round the config prescribes (``eval_every``, the last ``eval_last``
  rounds and the final round, see :func:`flcore.record_format.is_evaluation_round`) up to
  the recorded ``rounds_done`` has its row, so a truncated or emptied log is a gap;
- a finished or diverged run has no torn last line, no row after its last round, and a
  ``summary.json`` equal to the summary recomputed from its log (so a hand-edited status
  or summary is caught); a capped run (stopped at its ``max_rounds``) has stopped before
  its last round and has such a summary too (pages show it as a preview);
- with ``deep=True`` (``flcore runs --verify``), every tensor file (checkpoint, final
  model, snapshots) matches the digest ``files.json`` records for it and loads with
  ``weights_only=True``, and the checkpoint carries this run's stamp (a capped run's is
  at its cap round: it continues from there).

:func:`prepare_resume` runs before a run is (re)started: if the log up to the
checkpoint's round is complete once identical duplicates and torn or foreign lines are
dropped, the log is cut back to that round and training resumes from the checkpoint,
recomputing the rest; otherwise :class:`~flcore.store.errors.DamagedRunError` says which file is wrong and what
to do.  Nothing is deleted before the damage has been found repairable.

:func:`live_status` is the status a reader should show: a run recorded ``running`` whose
lock no process holds was stopped without being able to say so (a kill, a power cut) and
is shown as ``interrupted`` (the next ``flcore run`` resumes it).
"""
from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import torch

from flcore.record_format import CAPPED, CHECKPOINT_FORMAT, is_evaluation_round, summarize
from flcore.store.errors import DamagedRunError, StoreError
from flcore.store.lock import LOCK_FILE, RunLock
from flcore.store.metrics_log import rewrite_jsonl
from flcore.store.records import parse_strict_json
from flcore.store.run import (
    CHECKPOINT_FILE,
    CONFIG_FILE,
    DIGESTS_FILE,
    FINAL_MODEL_FILE,
    METRICS_FILE,
    ROW_SCHEMA,
    STATUS_FILE,
    SUMMARY_FILE,
    TERMINAL_STATUSES,
    Run,
    config_digest,
)
from flcore.store.run_content import model_problems, resolved_run_config

_SUMMARY_KEYS = ("final_accuracy", "mean_last_100", "best_accuracy")
#: Entries that must be regular files and that a plain listing does not read (the JSON
#: records and the log report themselves when read).
_UNREAD_FILES = (DIGESTS_FILE, CHECKPOINT_FILE, FINAL_MODEL_FILE, LOCK_FILE)


@dataclass
class LogScan:
    """``metrics.jsonl`` read line by line without raising."""

    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (line number, row)
    bad_lines: list[int] = field(default_factory=list)  # corrupt lines before the last
    torn_tail: bool = False  # the last line is not a complete JSON object
    invalid: list[str] = field(default_factory=list)  # rows outside their schema, the file itself


def scan_metrics(run: Run) -> LogScan:
    """``run``'s ``metrics.jsonl`` read line by line (:class:`LogScan`), without raising."""
    try:
        data = run.metrics_bytes()
    except DamagedRunError as exc:
        return LogScan(invalid=list(exc.problems))
    return scan_metrics_bytes(data)


def scan_metrics_bytes(data: bytes) -> LogScan:
    """The content of a ``metrics.jsonl`` read line by line (:class:`LogScan`), without
    raising: also a log that is not in a store yet (a results bundle's)."""
    scan = LogScan()
    lines = [(n, line) for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]
    for index, (number, line) in enumerate(lines):
        try:
            row = parse_strict_json(line)
        except ValueError:
            row = None
        if not isinstance(row, dict):
            if index == len(lines) - 1:
                scan.torn_tail = True
            else:
                scan.bad_lines.append(number)
            continue
        problems = ROW_SCHEMA.problems(row)
        if problems:
            scan.invalid.append(f"{METRICS_FILE}:{number}: {problems[0]}")
            continue
        scan.rows.append((number, row))
    return scan


def _config_rounds(config: dict[str, Any]) -> SimpleNamespace | None:
    """The config's ``rounds``, ``eval_every``, ``eval_last`` and ``eval_last_every`` (already range-checked by
    the config's schema), or None if it does not say (a record not written by the engine)."""
    values = [config.get(name) for name in ("rounds", "eval_every", "eval_last")] + [config.get("eval_last_every", 1)]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values) or values[3] < 1:
        return None
    return SimpleNamespace(rounds=values[0], eval_every=values[1], eval_last=values[2], eval_last_every=values[3])


def expected_evaluation_rounds(config: dict[str, Any], upto: int) -> list[int]:
    """Rounds ``1..upto`` whose row must hold a test accuracy, or ``[]`` if the config
    does not say (a record not written by the engine).  Built from ranges, so a record
    claiming a huge round count costs no more than its config's bounded ``rounds``."""
    cfg = _config_rounds(config)
    if cfg is None or cfg.eval_every < 1:
        return []
    last = min(upto, cfg.rounds)
    rounds = set(range(cfg.eval_every, last + 1, cfg.eval_every))
    rounds.update(range(max(1, cfg.rounds - cfg.eval_last + 1), last + 1))
    if last == cfg.rounds and last >= 1:
        rounds.add(last)
    return sorted(r for r in rounds if is_evaluation_round(r, cfg))


def log_problems(scan: LogScan, run_id: str, config: dict[str, Any], upto: int,
                 terminal: bool, diverged_round: int | None = None) -> list[str]:
    """What is wrong with the log of a run that has done ``upto`` rounds."""
    problems = list(scan.invalid)
    problems += [f"{METRICS_FILE}:{n}: corrupt line (not a JSON object)" for n in scan.bad_lines]
    if scan.torn_tail and terminal:
        problems.append(
            f"{METRICS_FILE}: the last line is torn in a {'finished' if diverged_round is None else 'diverged'} run"
        )
    previous = 0
    seen: dict[int, dict] = {}
    for number, row in scan.rows:
        owner = row.get("run_id", run_id)
        if owner != run_id:
            problems.append(f"{METRICS_FILE}:{number}: row of another run ({str(owner)[:64]!r})")
            continue
        r = row["round"]
        if r in seen:
            problems.append(f"{METRICS_FILE}:{number}: round {r} logged twice")
        elif r < previous:
            problems.append(f"{METRICS_FILE}:{number}: round {r} after round {previous}")
        if terminal and r > upto:
            problems.append(f"{METRICS_FILE}:{number}: round {r} after the run's last round {upto}")
        seen.setdefault(r, row)
        previous = max(previous, r)
        if len(problems) > 1000:  # enough to say the log is damaged
            break
    expected = expected_evaluation_rounds(config, upto)
    if diverged_round is not None:
        expected = [r for r in expected if r < diverged_round]
        if diverged_round not in seen:
            problems.append(f"{METRICS_FILE}: no row for the diverged round {diverged_round}")
    missing = [r for r in expected if r not in seen or "test_accuracy" not in seen[r]]
    if missing:
        shown = ", ".join(map(str, missing[:5])) + (", ..." if len(missing) > 5 else "")
        problems.append(f"{METRICS_FILE}: {len(missing)} evaluation round(s) missing ({shown})")
    return problems


def rows_of_log(scan: LogScan, run_id: str) -> list[dict[str, Any]]:
    """Rows of this run in order, stamp removed, identical duplicates dropped."""
    out: list[dict[str, Any]] = []
    seen: dict[Any, dict] = {}
    for _, row in scan.rows:
        if row.get("run_id", run_id) != run_id:
            continue
        row = {k: v for k, v in row.items() if k != "run_id"}
        key = row.get("round")
        if key in seen and seen[key] == row:
            continue
        seen[key] = row
        out.append(row)
    return out


def summary_problems(run: Run, rows: list[dict[str, Any]], config: dict[str, Any],
                     status: str, rounds_done: int) -> list[str]:
    """A terminal run's ``summary.json`` against the summary recomputed from its log."""
    return summary_record_problems(run.summary(), rows, config, status, rounds_done)


def summary_record_problems(summary: dict[str, Any], rows: list[dict[str, Any]], config: dict[str, Any],
                            status: str, rounds_done: int) -> list[str]:
    """A terminal run's summary record against the summary recomputed from its log rows
    (also a record not in a store yet: a results bundle's)."""
    if not summary:
        return [f"{SUMMARY_FILE}: missing for a {status} run"]
    cfg = _config_rounds(config)
    if cfg is None:
        return []
    expected = summarize(rows, cfg, status, rounds_done)
    problems = []
    for key in _SUMMARY_KEYS:
        got, want = summary.get(key), expected[key]
        same = (got is None and want is None) or (
            isinstance(got, (int, float)) and want is not None and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12))
        if not same:
            problems.append(f"{SUMMARY_FILE}: {key} is {got!r} but the log gives {want!r}")
    if summary.get("status") not in (None, status):
        problems.append(f"{SUMMARY_FILE}: status {str(summary.get('status'))[:64]!r} but {STATUS_FILE} "
                        f"says {status!r}")
    return problems


def entry_problems(run: Run) -> list[str]:
    """The run directory is a real directory under the root, and the entries a listing
    does not read (tensor files, ``files.json``, ``.lock``) are regular files."""
    try:
        run.check_directory()
    except FileNotFoundError:
        return [f"{run.path}: missing"]
    except StoreError as exc:
        return [str(exc).split("; fix:")[0]]
    problems = []
    for name in _UNREAD_FILES:
        try:
            mode = os.lstat(run.path / name).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{name}: unreadable ({exc.strerror})")
            continue
        if not stat.S_ISREG(mode):
            kind = ("a symbolic link" if stat.S_ISLNK(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a directory" if stat.S_ISDIR(mode) else "a device or socket")
            problems.append(f"{name}: {kind}, not a regular file")
    return problems


def check_run(run: Run, deep: bool = False) -> list[str]:
    """Every problem of ``run``'s record (module docstring), ``[]`` if it is intact.
    Never raises: whatever a file holds is reported as a problem of that file."""
    problems = entry_problems(run)
    if any(p.startswith(str(run.path)) for p in problems):
        return problems  # a link or no directory: nothing in it is read
    config: dict[str, Any] = {}
    try:
        config = run.config()
    except DamagedRunError as exc:
        problems += exc.problems
    except (StoreError, FileNotFoundError) as exc:
        problems.append(_short(exc, CONFIG_FILE))
    status: dict[str, Any] | None
    try:
        status = run.status()
    except DamagedRunError as exc:
        problems += exc.problems
        status = None
    except StoreError as exc:
        problems.append(_short(exc, STATUS_FILE))
        status = None
    name = status.get("status") if status else None
    upto = int(status.get("rounds_done", 0)) if status else 0
    terminal = name in TERMINAL_STATUSES
    diverged_round = status.get("diverged_round") if name == "diverged" else None
    rounds = config.get("rounds")
    if isinstance(rounds, int) and upto > rounds:
        problems.append(f"{STATUS_FILE}: {upto} rounds done of the config's {rounds}")
        upto = rounds
    if terminal and name == "finished" and isinstance(rounds, int) and upto != rounds:
        problems.append(f"{STATUS_FILE}: finished after {upto} of {rounds} rounds")
    if name == CAPPED and isinstance(rounds, int) and upto >= rounds:
        problems.append(f"{STATUS_FILE}: capped after {upto} of {rounds} rounds (a cap stops a run "
                        "before its last round)")
    scan = scan_metrics(run)
    problems += log_problems(scan, run.run_id, config, upto, terminal, diverged_round)
    if (terminal or name == CAPPED) and not problems:
        try:
            problems += summary_problems(run, rows_of_log(scan, run.run_id), config, name, upto)
        except DamagedRunError as exc:
            problems += exc.problems
        except StoreError as exc:
            problems.append(_short(exc, SUMMARY_FILE))
    else:
        try:
            run.summary()
        except DamagedRunError as exc:
            problems += exc.problems
        except StoreError as exc:
            problems.append(_short(exc, SUMMARY_FILE))
    if deep:
        problems += file_problems(run, name, upto)
    return problems


def file_problems(run: Run, status: str | None, upto: int) -> list[str]:
    """Every tensor file and analysis cache against its digest (and the checkpoint's stamp
    and round)."""
    problems = []
    try:
        checkpoint = run.load_checkpoint()
    except StoreError as exc:
        problems.append(_short(exc, CHECKPOINT_FILE))
        checkpoint = None
    if checkpoint is not None and status in TERMINAL_STATUSES and checkpoint.get("rounds_done") != upto:
        problems.append(f"{CHECKPOINT_FILE}: at round {checkpoint.get('rounds_done')!r}, the run ended at {upto}")
    if status == CAPPED and (checkpoint is None or checkpoint.get("rounds_done") != upto):
        at = "missing" if checkpoint is None else f"at round {checkpoint.get('rounds_done')!r}"
        problems.append(f"{CHECKPOINT_FILE}: {at}, but the capped run continues from round {upto}")
    try:
        final = run.load_final_model()
        if final is None and status == "finished":
            problems.append(f"{FINAL_MODEL_FILE}: missing for a finished run")
        elif final is not None:
            problems += [f"{FINAL_MODEL_FILE}: {p}" for p in final_model_problems(run, final)]
    except StoreError as exc:
        problems.append(_short(exc, FINAL_MODEL_FILE))
    for name in run.analysis_names():  # the caches of numbers a page or a verdict reads
        problems += run.analysis_problems(name)
    for name in run.tensor_files():
        if name in (CHECKPOINT_FILE, FINAL_MODEL_FILE):
            continue
        try:
            run.load_tensor_file(name)
        except StoreError as exc:
            problems.append(_short(exc, name))
        except IsADirectoryError:
            problems.append(f"{name}: a directory, not a tensor file")
    return problems


def final_model_problems(run: Run, state: Any) -> list[str]:
    """``state`` against the model of ``run``'s config (:mod:`flcore.store.run_content`):
    names, shapes, dtypes and finite values.  Only for a config flcore resolves (a record
    written through the Python API with a config of its own is not checked this way)."""
    cfg = resolved_run_config(run)
    return [] if cfg is None else model_problems(cfg, state)


def _short(exc: Exception, file: str) -> str:
    if isinstance(exc, DamagedRunError):
        return "; ".join(exc.problems)
    text = str(exc).split("; fix:")[0]
    return text if text.startswith(file) else f"{file}: {text}"


def live_status(run: Run, status: str | None) -> str | None:
    """``status`` as a reader should show it: ``running`` with no process holding the
    run's lock is ``interrupted`` (module docstring)."""
    if status != "running":
        return status
    try:
        return "running" if RunLock(run.path).held() else "interrupted"
    except (OSError, StoreError):
        return status


def prepare_resume(run: Run, num_params: int | None = None) -> list[str]:
    """Make ``run``'s record consistent with its checkpoint before training continues.

    Returns what was repaired (for a message; ``[]`` when nothing was wrong).  Raises
    ``UnsafeFileError`` / ``DamagedRunError`` (with the fix) when the checkpoint cannot
    be used or the log up to the checkpoint's round is incomplete.
    """
    checkpoint = run.load_checkpoint()  # refuses a poisoned, truncated, unproven or foreign file first
    start = int(checkpoint["rounds_done"]) if checkpoint is not None and "rounds_done" in checkpoint else 0
    if checkpoint is not None:
        _check_checkpoint_content(run, checkpoint, num_params)
    if checkpoint is not None and "w" in checkpoint and not bool(checkpoint["w"].isfinite().all()):
        raise DamagedRunError(str(run.path), [f"{CHECKPOINT_FILE}: holds a diverged model (round {start})"],
                              f"delete {run.path} and run the config again")
    config = run.config()
    scan = scan_metrics(run)
    fix = (f"the log up to the checkpoint's round {start} cannot be rebuilt; delete {run.path} "
           "and run the config again to recompute it")
    if scan.invalid and not all(p.startswith(f"{METRICS_FILE}:") for p in scan.invalid):
        raise DamagedRunError(str(run.path), scan.invalid, fix)  # the file itself cannot be read
    kept_scan = LogScan(rows=[(n, row) for n, row in scan.rows if row["round"] <= start])
    deduped = rows_of_log(kept_scan, run.run_id)
    # A corrupt or invalid line inside the kept part shows up as a missing evaluation round.
    problems = log_problems(LogScan(rows=list(enumerate(deduped, 1))), run.run_id, config, start,
                            terminal=False)
    foreign = [n for n, row in kept_scan.rows if row.get("run_id", run.run_id) != run.run_id]
    if problems:
        raise DamagedRunError(str(run.path), problems, fix)
    repaired = []
    rows_after = sum(1 for _, row in scan.rows if row["round"] > start)
    dropped = len(scan.rows) - len(deduped) - rows_after
    damaged = dropped or foreign or scan.bad_lines or scan.torn_tail or scan.invalid
    if damaged or rows_after:
        rewrite_jsonl(run.path / METRICS_FILE, [{"run_id": run.run_id, **row} for row in deduped])
        if damaged:
            repaired.append(f"{METRICS_FILE}: cut back to round {start} (dropped {dropped + len(scan.invalid)} "
                            f"duplicate, foreign, invalid or torn row(s) and {rows_after} row(s) after the checkpoint)")
    return repaired


def _check_checkpoint_content(run: Run, checkpoint: dict[str, Any], num_params: int | None) -> None:
    """The engine's checkpoint layout: format, round counter and a flat model of the
    expected size."""
    fix = (f"delete {run.path / CHECKPOINT_FILE} (the run then restarts from round 0), "
           f"or delete {run.path} and run the config again")
    problems = []
    if checkpoint.get("format") != CHECKPOINT_FORMAT:
        problems.append(f"{CHECKPOINT_FILE}: format {str(checkpoint.get('format'))[:40]!r}, "
                        f"expected {CHECKPOINT_FORMAT}")
    elif not isinstance(checkpoint.get("rounds_done"), int) or checkpoint["rounds_done"] < 0:
        problems.append(f"{CHECKPOINT_FILE}: no round counter")
    elif not isinstance(checkpoint.get("w"), torch.Tensor) or checkpoint["w"].dim() != 1:
        problems.append(f"{CHECKPOINT_FILE}: no flat model 'w'")
    elif num_params is not None and checkpoint["w"].numel() != num_params:
        problems.append(f"{CHECKPOINT_FILE}: a model of {checkpoint['w'].numel()} parameters, "
                        f"this run's model has {num_params} (a checkpoint of another run)")
    else:
        config_rounds = run.config().get("rounds")
        if isinstance(config_rounds, int) and checkpoint["rounds_done"] > config_rounds:
            problems.append(f"{CHECKPOINT_FILE}: at round {checkpoint['rounds_done']}, "
                            f"beyond the run's {config_rounds} rounds")
    if problems:
        raise DamagedRunError(str(run.path), problems, fix)


__all__ = ["LogScan", "check_run", "config_digest", "entry_problems", "expected_evaluation_rounds",
           "file_problems", "live_status", "log_problems", "prepare_resume", "rows_of_log", "scan_metrics",
           "summary_problems", "summary_record_problems"]
