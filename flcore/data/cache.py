"""On-disk cache for generated arrays (MNIST-1D samples, client partitions).

Files are ``.npz`` archives written atomically (temporary file + ``os.replace``), so a
crash or two processes writing the same key never leave a half-written file behind.

Each archive carries a digest of its content (:data:`DIGEST_KEY`: SHA-256 over every
array's name, dtype, shape and bytes), checked on every load: a cache file replaced by
other arrays, damaged, or written before digests were kept is a miss, and the caller
rebuilds it (the key names the parameters, the digest the content; a run id that names a
data set therefore always gets that data set).  The file is read only as a bounded
regular file (:func:`flcore.safe_io.open_regular_file`; the cache folder is the user's
own, ``$FLCORE_CACHE``, so links the user made there are followed).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from flcore.safe_io import open_regular_file

#: The archive entry holding the content digest (:func:`arrays_digest`).
DIGEST_KEY = "__content_sha256__"
#: Largest cache file read: a decoded CIFAR training set is 150 MB.
MAX_CACHE_BYTES = 16 << 30


def cache_dir() -> Path:
    """The cache root: ``$FLCORE_CACHE`` if set, else ``~/.cache/flcore``.  Not created here."""
    override = os.environ.get("FLCORE_CACHE")
    return Path(override) if override else Path.home() / ".cache" / "flcore"


def cache_key(params: dict) -> str:
    """A stable sha256 hex digest of JSON-serialisable ``params`` (key order irrelevant)."""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def arrays_digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over the arrays' names, dtypes, shapes and bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        if name == DIGEST_KEY:
            continue
        array = np.ascontiguousarray(arrays[name])
        digest.update(json.dumps([name, array.dtype.str, list(array.shape)]).encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def save_arrays(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` and their digest to the ``.npz`` file ``path`` atomically,
    creating its folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {name: np.asarray(value) for name, value in arrays.items()}
    if DIGEST_KEY in arrays:
        raise ValueError(f"{DIGEST_KEY} is the cache's own entry")
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as tmp_file:
            np.savez(tmp_file, **arrays, **{DIGEST_KEY: np.array(arrays_digest(arrays))})
        os.chmod(tmp_name, 0o644)  # mkstemp creates 0600; cache files are not secret
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def load_arrays(path: Path) -> dict[str, np.ndarray] | None:
    """The arrays stored at ``path``, or ``None`` if the file is absent, unreadable, not
    a regular file, or its content does not match its digest.

    ``None`` is a cache miss: the caller regenerates the arrays and overwrites the file.
    """
    try:
        with (open_regular_file(Path(path), MAX_CACHE_BYTES, follow_links=True) as f,
              np.load(f, allow_pickle=False) as archive):
            arrays = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):
        return None
    recorded = arrays.pop(DIGEST_KEY, None)
    if recorded is None or recorded.shape != () or str(recorded) != arrays_digest(arrays):
        return None
    return arrays
