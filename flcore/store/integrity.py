"""Self-checking run records: find damage, repair it from the checkpoint, or name the fix.

What a record must satisfy (every rule is checked by :func:`check_run`):

- ``config.json`` and ``status.json`` parse, and the status is one of ``RUN_STATUSES``;
- every line of ``metrics.jsonl`` is a JSON object of this run (its ``run_id`` stamp)
  with an integer ``round``; rounds strictly increase (no duplicate, no reordering);
- every evaluation round the config prescribes (``eval_every``, the last ``eval_last``
  rounds and the final round, see :func:`flcore.record_format.is_evaluation_round`) up to
  the recorded ``rounds_done`` has its row, so a truncated or emptied log is a gap;
- a finished or diverged run has no torn last line, no row after its last round, and a
  ``summary.json`` equal to the summary recomputed from its log (so a hand-edited status
  or summary is caught); a capped run (stopped at its ``max_rounds``) has stopped before
  its last round and has such a summary too (pages show it as a preview);
- with ``deep=True`` (``flcore runs --verify``), ``checkpoint.pt`` and ``final_model.pt``
  load with ``weights_only=True`` and the checkpoint belongs to this run and config (a
  capped run's is at its cap round: it continues from there).

:func:`prepare_resume` runs before a run is (re)started: if the log up to the
checkpoint's round is complete once identical duplicates and torn or foreign lines are
dropped, the log is cut back to that round and training resumes from the checkpoint,
recomputing the rest; otherwise :class:`DamagedRunError` says which file is wrong and what
to do.  Nothing is deleted before the damage has been found repairable.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from flcore.record_format import CAPPED, CHECKPOINT_FORMAT, is_evaluation_round, summarize
from flcore.store.errors import DamagedRunError, StoreError
from flcore.store.metrics_log import rewrite_jsonl
from flcore.store.run import (
    CHECKPOINT_FILE,
    CONFIG_FILE,
    FINAL_MODEL_FILE,
    METRICS_FILE,
    RUN_STATUSES,
    STATUS_FILE,
    SUMMARY_FILE,
    TERMINAL_STATUSES,
    Run,
)

_SUMMARY_KEYS = ("final_accuracy", "mean_last_100", "best_accuracy")


@dataclass
class LogScan:
    """``metrics.jsonl`` read line by line without raising."""

    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (line number, row)
    bad_lines: list[int] = field(default_factory=list)  # corrupt lines before the last
    torn_tail: bool = False  # the last line is not a complete JSON object


def scan_metrics(run: Run) -> LogScan:
    scan = LogScan()
    try:
        data = (run.path / METRICS_FILE).read_bytes()
    except FileNotFoundError:
        return scan
    lines = [(n, line) for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]
    for index, (number, line) in enumerate(lines):
        try:
            row = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            row = None
        if not isinstance(row, dict):
            if index == len(lines) - 1:
                scan.torn_tail = True
            else:
                scan.bad_lines.append(number)
            continue
        scan.rows.append((number, row))
    return scan


def expected_evaluation_rounds(config: dict[str, Any], upto: int) -> list[int]:
    """Rounds ``1..upto`` whose row must hold a test accuracy, or ``[]`` if the config
    does not say (a record not written by the engine)."""
    try:
        cfg = SimpleNamespace(rounds=int(config["rounds"]), eval_every=int(config["eval_every"]),
                              eval_last=int(config["eval_last"]))
    except (KeyError, TypeError, ValueError):
        return []
    return [r for r in range(1, min(upto, cfg.rounds) + 1) if is_evaluation_round(r, cfg)]


def log_problems(scan: LogScan, run_id: str, config: dict[str, Any], upto: int,
                 terminal: bool, diverged_round: int | None = None) -> list[str]:
    """What is wrong with the log of a run that has done ``upto`` rounds."""
    problems = [f"{METRICS_FILE}:{n}: corrupt line (not a JSON object)" for n in scan.bad_lines]
    if scan.torn_tail and terminal:
        problems.append(
            f"{METRICS_FILE}: the last line is torn in a {'finished' if diverged_round is None else 'diverged'} run"
        )
    previous = 0
    seen: dict[int, dict] = {}
    for number, row in scan.rows:
        owner = row.get("run_id", run_id)
        if owner != run_id:
            problems.append(f"{METRICS_FILE}:{number}: row of another run ({owner!r})")
            continue
        r = row.get("round")
        if isinstance(r, bool) or not isinstance(r, int):
            problems.append(f"{METRICS_FILE}:{number}: no integer 'round'")
            continue
        if r in seen:
            problems.append(f"{METRICS_FILE}:{number}: round {r} logged twice")
        elif r < previous:
            problems.append(f"{METRICS_FILE}:{number}: round {r} after round {previous}")
        if terminal and r > upto:
            problems.append(f"{METRICS_FILE}:{number}: round {r} after the run's last round {upto}")
        seen.setdefault(r, row)
        previous = max(previous, r)
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


def _rows_of(scan: LogScan, run_id: str) -> list[dict[str, Any]]:
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
    summary = run.summary()
    if not summary:
        return [f"{SUMMARY_FILE}: missing for a {status} run"]
    try:
        cfg = SimpleNamespace(rounds=int(config["rounds"]))
    except (KeyError, TypeError, ValueError):
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
        problems.append(f"{SUMMARY_FILE}: status {summary.get('status')!r} but {STATUS_FILE} says {status!r}")
    return problems


def check_run(run: Run, deep: bool = False) -> list[str]:
    """Every problem of ``run``'s record (module docstring), ``[]`` if it is intact."""
    problems: list[str] = []
    try:
        config = run.config()
        if not isinstance(config, dict):
            problems.append(f"{CONFIG_FILE}: not a JSON object")
            config = {}
    except (StoreError, FileNotFoundError) as exc:
        problems.append(_short(exc, CONFIG_FILE))
        config = {}
    try:
        status = run.status()
    except StoreError as exc:
        problems.append(_short(exc, STATUS_FILE))
        status = None
    if status is not None and (not isinstance(status, dict) or status.get("status") not in (*RUN_STATUSES, "new")
                               or not isinstance(status.get("rounds_done", 0), int)):
        problems.append(f"{STATUS_FILE}: not a status record ({json.dumps(status)[:80]})")
        status = None
    name = status.get("status") if status else None
    upto = int(status.get("rounds_done", 0)) if status else 0
    terminal = name in TERMINAL_STATUSES
    diverged_round = status.get("diverged_round") if name == "diverged" else None
    if terminal and name == "finished" and "rounds" in config and upto != config["rounds"]:
        problems.append(f"{STATUS_FILE}: finished after {upto} of {config['rounds']} rounds")
    if name == CAPPED and isinstance(config.get("rounds"), int) and upto >= config["rounds"]:
        problems.append(f"{STATUS_FILE}: capped after {upto} of {config['rounds']} rounds (a cap stops a run "
                        "before its last round)")
    scan = scan_metrics(run)
    problems += log_problems(scan, run.run_id, config, upto, terminal, diverged_round)
    if (terminal or name == CAPPED) and not problems:
        try:
            problems += summary_problems(run, _rows_of(scan, run.run_id), config, name, upto)
        except StoreError as exc:
            problems.append(_short(exc, SUMMARY_FILE))
    if deep:
        problems += _file_problems(run, name, upto)
    return problems


def _file_problems(run: Run, status: str | None, upto: int) -> list[str]:
    problems = []
    try:
        checkpoint = run.load_checkpoint()
    except StoreError as exc:
        problems.append(_short(exc, CHECKPOINT_FILE))
        checkpoint = None
    if checkpoint is not None and status in TERMINAL_STATUSES and checkpoint.get("rounds_done") != upto:
        problems.append(f"{CHECKPOINT_FILE}: at round {checkpoint.get('rounds_done')}, the run ended at {upto}")
    if status == CAPPED and (checkpoint is None or checkpoint.get("rounds_done") != upto):
        at = "missing" if checkpoint is None else f"at round {checkpoint.get('rounds_done')}"
        problems.append(f"{CHECKPOINT_FILE}: {at}, but the capped run continues from round {upto}")
    try:
        if run.load_final_model() is None and status == "finished":
            problems.append(f"{FINAL_MODEL_FILE}: missing for a finished run")
    except StoreError as exc:
        problems.append(_short(exc, FINAL_MODEL_FILE))
    return problems


def _short(exc: Exception, file: str) -> str:
    if isinstance(exc, DamagedRunError):
        return "; ".join(exc.problems)
    text = str(exc)
    return text if text.startswith(file) else f"{file}: {text}"


def prepare_resume(run: Run, num_params: int | None = None) -> list[str]:
    """Make ``run``'s record consistent with its checkpoint before training continues.

    Returns what was repaired (for a message; ``[]`` when nothing was wrong).  Raises
    ``UnsafeFileError`` / ``DamagedRunError`` (with the fix) when the checkpoint cannot
    be used or the log up to the checkpoint's round is incomplete.
    """
    checkpoint = run.load_checkpoint()  # refuses a poisoned, truncated or foreign file first
    start = int(checkpoint["rounds_done"]) if checkpoint is not None and "rounds_done" in checkpoint else 0
    if checkpoint is not None:
        _check_checkpoint_content(run, checkpoint, num_params)
    if checkpoint is not None and "w" in checkpoint and not bool(checkpoint["w"].isfinite().all()):
        raise DamagedRunError(str(run.path), [f"{CHECKPOINT_FILE}: holds a diverged model (round {start})"],
                              f"delete {run.path} and run the config again")
    config = run.config()
    scan = scan_metrics(run)
    kept_scan = LogScan(rows=[(n, row) for n, row in scan.rows
                              if not isinstance(row.get("round"), int) or row["round"] <= start])
    deduped = _rows_of(kept_scan, run.run_id)
    # A corrupt line inside the kept part shows up as a missing evaluation round.
    problems = log_problems(LogScan(rows=list(enumerate(deduped, 1))), run.run_id, config, start,
                            terminal=False)
    foreign = [n for n, row in kept_scan.rows if row.get("run_id", run.run_id) != run.run_id]
    if problems:
        raise DamagedRunError(
            str(run.path), problems,
            f"the log up to the checkpoint's round {start} cannot be rebuilt; delete {run.path} "
            "and run the config again to recompute it")
    repaired = []
    rows_after = sum(1 for _, row in scan.rows if isinstance(row.get("round"), int) and row["round"] > start)
    dropped = len(scan.rows) - len(deduped) - rows_after
    if dropped or foreign or scan.bad_lines or scan.torn_tail or rows_after:
        rewrite_jsonl(run.path / METRICS_FILE, [{"run_id": run.run_id, **row} for row in deduped])
        if dropped or foreign or scan.bad_lines or scan.torn_tail:
            repaired.append(f"{METRICS_FILE}: cut back to round {start} (dropped {dropped} duplicate, "
                            f"foreign or torn row(s) and {rows_after} row(s) after the checkpoint)")
    return repaired


def _check_checkpoint_content(run: Run, checkpoint: dict[str, Any], num_params: int | None) -> None:
    """The engine's checkpoint layout: format, round counter and a flat model of the
    expected size."""
    import torch

    fix = (f"delete {run.path / CHECKPOINT_FILE} (the run then restarts from round 0), "
           f"or delete {run.path} and run the config again")
    problems = []
    if checkpoint.get("format") != CHECKPOINT_FORMAT:
        problems.append(f"{CHECKPOINT_FILE}: format {checkpoint.get('format')!r}, expected {CHECKPOINT_FORMAT}")
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
