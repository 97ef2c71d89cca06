"""Where the run store is, and what it holds of one run: the lowest module of the training
machinery, read by the runner that trains and the pricing that plans.
"""
from __future__ import annotations

import os
from pathlib import Path

from flcore.store import StoreError, check_run, live_status


def default_store() -> str:
    """``$FLCORE_STORE`` when set, else ``runs`` (relative to the working directory)."""
    return os.environ.get("FLCORE_STORE") or "runs"


def resolve_store(store: str | os.PathLike | None) -> Path:
    return Path(store if store is not None else default_store()).expanduser()


def stored_state(run) -> tuple[str, dict, dict, str | None]:
    """(status, status record, summary, problem) of a run as the store holds it.  A record
    that fails its checks (:func:`flcore.store.check_run`) is ``damaged``, with no numbers
    and its problems: its numbers are never read as a result.  A run recorded ``running``
    that no process holds is ``interrupted``."""
    if not run.exists():
        return "new", {}, {}, None
    problems = check_run(run)
    if problems:
        return "damaged", {}, {}, "; ".join(problems)[:500]
    try:
        status, summary = run.status(), run.summary()
    except StoreError as exc:
        return "damaged", {}, {}, str(exc)[:500]
    return live_status(run, status.get("status", "new")), status, summary, None
