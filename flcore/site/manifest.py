"""The book manifest (``book/_artifacts.json``) and what makes a page stale.

Each artifact's outcome goes to a small manifest: status (ok, failed, skipped), scale,
seeds, round cap (``max_rounds``, a preview), duration, the notebook's hash and flcore's
fingerprint (a hash of its source and data files).  A page is stale when it was never
run, failed, was run at another scale, with other seeds or another round cap, or was run
with another notebook or another flcore.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import nbformat

from flcore.store import atomic_write_json

MANIFEST = Path("book") / "_artifacts.json"


def _sha256_files(paths) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(path.as_posix()).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def flcore_fingerprint() -> str:
    """Hash of flcore's source and published-data files: a notebook executed with other
    code is stale even when the version string did not change."""
    package = Path(__file__).resolve().parents[1]
    files = [p for p in package.rglob("*") if p.is_file() and p.suffix in (".py", ".csv", ".yaml")
             and "__pycache__" not in p.parts]
    return _sha256_files(files)[:16]


def notebook_hash(path: Path) -> str:
    """Hash of a notebook's cell sources (outputs and metadata do not count)."""
    nb = nbformat.read(path, as_version=4)
    text = json.dumps([(c.cell_type, c.source) for c in nb.cells])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


#: The largest manifest read (one small entry per page).
MAX_MANIFEST_BYTES = 16_000_000
#: The manifest entry's fields that have a type, and that type.
ENTRY_TYPES = {"status": str, "scale": str, "seeds": list, "built": dict, "notebook": str, "flcore": str}


def _entry_problem(artifact_id, entry) -> str | None:
    if not isinstance(artifact_id, str) or not isinstance(entry, dict):
        return f"entry {str(artifact_id)[:60]!r} is not a mapping"
    for key, kind in ENTRY_TYPES.items():
        if entry.get(key) is not None and not isinstance(entry[key], kind):  # None: not recorded
            return f"{artifact_id}: {key} is not a {kind.__name__}"
    return None


def load_manifest(root: Path) -> dict[str, Any]:
    """The manifest, checked before it is trusted: a regular file of at most
    :data:`MAX_MANIFEST_BYTES`, JSON, a mapping whose ``artifacts`` map ids to entries of
    the right types.  What fails is left out with one warning on the standard error: its
    pages count as never built, so the next build runs them again (the manifest is the
    build's own record; nothing else is lost)."""
    path = root / MANIFEST
    if not path.exists() and not path.is_symlink():
        return {"artifacts": {}}
    problem, data = None, None
    if path.is_symlink() or not path.is_file():
        problem = "not a regular file"
    elif path.stat().st_size > MAX_MANIFEST_BYTES:
        problem = f"over {MAX_MANIFEST_BYTES:,} bytes"
    else:
        try:
            data = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError) as exc:
            problem = f"not JSON ({str(exc)[:100]})"
    if problem is None and not (isinstance(data, dict) and isinstance(data.get("artifacts", {}), dict)):
        problem, data = "not a mapping with a mapping of artifacts", None
    if data is None:
        print(f"flcore: warning: {MANIFEST} is {problem}: every page counts as never built", file=sys.stderr)
        return {"artifacts": {}}
    entries = data.setdefault("artifacts", {})
    for artifact_id in list(entries):
        problem = _entry_problem(artifact_id, entries[artifact_id])
        if problem:
            print(f"flcore: warning: {MANIFEST}: {problem}: that page counts as never built", file=sys.stderr)
            del entries[artifact_id]
    return data


def save_manifest(root: Path, manifest: dict[str, Any]) -> None:
    (root / MANIFEST).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(root / MANIFEST, manifest, sort_keys=True)


def stale_reason(artifact, entry: dict | None, root: Path, scale: str, seeds: list[int],
                 fingerprint: str, max_rounds: int | None = None) -> str | None:
    """Why ``artifact`` must be re-executed, or None when its page is up to date (built at
    ``scale`` with ``seeds`` and the same round cap, ``max_rounds``, or none)."""
    if entry is None:
        return "never run"
    if not (root / artifact.book_path).is_file():
        return "output missing"
    if entry.get("status") != "ok":
        return f"last run {entry.get('status')}"
    if entry.get("scale") != scale:
        return f"built at scale {entry.get('scale')}"
    if list(entry.get("seeds", [])) != list(seeds):
        return "other seeds"
    if entry.get("max_rounds") != max_rounds:
        built = entry.get("max_rounds")
        return "built uncapped" if built is None else f"built capped at {built} rounds"
    try:
        current = notebook_hash(root / artifact.notebook_path)
    except Exception as exc:  # noqa: BLE001 - an unreadable notebook is stale, not fatal
        return f"notebook unreadable ({one_line_error(exc)})"
    if entry.get("notebook") != current:
        return "notebook changed"
    if entry.get("flcore") != fingerprint:
        return "flcore changed"
    return None




def one_line_error(exc: Exception) -> str:
    """An exception (a notebook cell's included: ``ename``/``evalue``) on one line."""
    name = getattr(exc, "ename", None) or type(exc).__name__
    value = getattr(exc, "evalue", None) or str(exc)
    return f"{name}: {value}".strip().splitlines()[0][:300]
