"""What a benchmark row records about the code it measured, and where the row goes."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def git_commit() -> str | None:
    """The checkout's short commit, or None outside a git checkout."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def emit(row: dict, append: str | None) -> None:
    """Print ``row`` as one JSON line and, with ``append``, add it to that JSON-lines file."""
    print(json.dumps(row))
    if append:
        append_row(row, append)


def append_row(row: dict, path: str) -> None:
    """Add ``row`` to the JSON-lines file ``path``."""
    with open(path, "a") as fh:
        fh.write(json.dumps(row) + "\n")
