"""On-disk cache for generated arrays (MNIST-1D samples, client partitions).

Files are ``.npz`` archives written atomically (temporary file + ``os.replace``), so a
crash or two processes writing the same key never leave a half-written file behind.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np


def cache_dir() -> Path:
    """The cache root: ``$FLCORE_CACHE`` if set, else ``~/.cache/flcore``.  Not created here."""
    override = os.environ.get("FLCORE_CACHE")
    return Path(override) if override else Path.home() / ".cache" / "flcore"


def cache_key(params: dict) -> str:
    """A stable sha256 hex digest of JSON-serialisable ``params`` (key order irrelevant)."""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def save_arrays(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` to the ``.npz`` file ``path`` atomically, creating its folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as tmp_file:
            np.savez(tmp_file, **arrays)
        os.chmod(tmp_name, 0o644)  # mkstemp creates 0600; cache files are not secret
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def load_arrays(path: Path) -> dict[str, np.ndarray] | None:
    """The arrays stored at ``path``, or ``None`` if the file is absent or unreadable.

    An unreadable file is treated as a cache miss: the caller regenerates and overwrites it.
    """
    try:
        with np.load(Path(path), allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):
        return None
