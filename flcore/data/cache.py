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
import warnings
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


# ----------------------------------------------------------------------------- decoded data sets
#
# A data set read from published files (CIFAR's pickles, Fashion-MNIST's IDX files, PACS's
# images) is decoded once into one cache file of plain arrays: a fixed magic, the length of
# a JSON header, the header, then each array's raw little-endian bytes (no pickle anywhere).
# The header names the arrays (dtype, shape, offset), the sha256 of the whole data region
# (checked on every load: a file that does not match is a miss and is rebuilt) and the
# source files the arrays came from, each with its md5 and the size, modification time and
# path it had when the cache was written.  A load trusts the cache only when the sources
# are the ones it was built from: their md5s are the expected ones (the cache key) and
# their stamps are unchanged, or, where a stamp changed (the files were copied or touched),
# their md5s computed anew still match.

#: Version of the decoded-cache file layout; part of every key.
DECODED_FORMAT = 1
_DECODED_MAGIC = b"FLCORE-ARRAYS\x00\x01\x00"
#: Bounds checked before anything of a cache file is trusted.
MAX_DECODED_HEADER_BYTES = 16 << 20
MAX_DECODED_BYTES = 64 << 30
#: The array dtypes a decoded cache may hold (little-endian, no objects).
_DECODED_DTYPES = ("|u1", "<i8", "<f4")
_ALIGN = 64


def decoded_cache_path(dataset: str, params: dict) -> Path:
    """Where the decoded arrays of ``dataset`` for ``params`` (the source md5s and the
    decoding options) are cached."""
    key = cache_key({"format": DECODED_FORMAT, "dataset": dataset, **params})
    return cache_dir() / "decoded" / f"{dataset}-{key[:40]}.arrays"


def source_record(path: Path, md5: str) -> dict:
    """What a cache records of one source file: its md5 and its stamp (resolved path, size,
    modification time in ns)."""
    stat = Path(path).stat()
    return {"md5": md5, "path": str(Path(path).resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def write_decoded(path: Path, arrays: dict[str, np.ndarray], sources: dict[str, dict]) -> None:
    """Write ``arrays`` and the ``sources`` records (name -> :func:`source_record`) to the
    cache file ``path`` atomically (temporary file + ``os.replace``)."""
    path = Path(path)
    entries, offset = [], 0
    for name, array in arrays.items():
        array = np.ascontiguousarray(array)
        dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
        if dtype.str not in _DECODED_DTYPES:
            raise ValueError(f"decoded cache: array {name!r} has dtype {array.dtype}; allowed: {_DECODED_DTYPES}")
        entries.append({"name": name, "dtype": dtype.str, "shape": list(array.shape), "offset": offset,
                        "nbytes": int(array.nbytes)})
        offset += -(-array.nbytes // _ALIGN) * _ALIGN
    digest = hashlib.sha256()
    blobs = []
    for entry, array in zip(entries, arrays.values()):
        data = np.ascontiguousarray(array, dtype=np.dtype(entry["dtype"])).tobytes()
        padded = data + b"\x00" * (-len(data) % _ALIGN)
        digest.update(padded)
        blobs.append(padded)
    header = json.dumps({"format": DECODED_FORMAT, "arrays": entries, "data_bytes": offset,
                         "sha256": digest.hexdigest(), "sources": sources},
                        sort_keys=True, separators=(",", ":")).encode()
    header += b" " * (-(len(_DECODED_MAGIC) + 8 + len(header)) % _ALIGN)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(_DECODED_MAGIC + len(header).to_bytes(8, "little") + header)
            for blob in blobs:
                out.write(blob)
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def read_decoded(path: Path) -> tuple[dict[str, np.ndarray], dict[str, dict]] | None:
    """The arrays and source records of the cache file ``path``; None when it is absent,
    not a regular file, out of bounds, malformed or its data do not match their digest."""
    path = Path(path)
    try:
        if not path.is_file() or path.is_symlink():
            return None
        size = path.stat().st_size
        if size > MAX_DECODED_BYTES + MAX_DECODED_HEADER_BYTES:
            return None
        with open(path, "rb") as handle:
            prefix = handle.read(len(_DECODED_MAGIC) + 8)
            if len(prefix) != len(_DECODED_MAGIC) + 8 or not prefix.startswith(_DECODED_MAGIC):
                return None
            header_bytes = int.from_bytes(prefix[len(_DECODED_MAGIC):], "little")
            if header_bytes > MAX_DECODED_HEADER_BYTES:
                return None
            header = _decoded_header(handle.read(header_bytes))
            if header is None or size != len(prefix) + header_bytes + header["data_bytes"]:
                return None
            data = bytearray(header["data_bytes"])  # writable, so tensors may share it
            if handle.readinto(data) != len(data):
                return None
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != header["sha256"]:
        return None
    arrays = {}
    for entry in header["arrays"]:
        count = int(np.prod(entry["shape"], dtype=np.int64))
        arrays[entry["name"]] = np.frombuffer(data, dtype=np.dtype(entry["dtype"]), count=count,
                                              offset=entry["offset"]).reshape(entry["shape"])
    return arrays, header["sources"]


def _decoded_header(raw: bytes) -> dict | None:
    """The parsed header when it has the expected schema and consistent bounds, else None."""
    try:
        header = json.loads(raw.decode())
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(header, dict) or header.get("format") != DECODED_FORMAT:
        return None
    arrays, data_bytes, sources = header.get("arrays"), header.get("data_bytes"), header.get("sources")
    if (not isinstance(arrays, list) or not isinstance(data_bytes, int) or not 0 <= data_bytes <= MAX_DECODED_BYTES
            or not isinstance(header.get("sha256"), str) or not isinstance(sources, dict)):
        return None
    for entry in arrays:
        if not isinstance(entry, dict) or entry.get("dtype") not in _DECODED_DTYPES:
            return None
        shape, offset, nbytes = entry.get("shape"), entry.get("offset"), entry.get("nbytes")
        if (not isinstance(entry.get("name"), str) or not isinstance(shape, list)
                or not all(isinstance(n, int) and n >= 0 for n in shape)
                or not isinstance(offset, int) or not isinstance(nbytes, int) or offset < 0
                or nbytes != int(np.prod(shape, dtype=np.int64)) * np.dtype(entry["dtype"]).itemsize
                or offset + nbytes > data_bytes):
            return None
    for record in sources.values():
        if not isinstance(record, dict) or not isinstance(record.get("md5"), str):
            return None
    return header


def sources_unchanged(recorded: dict[str, dict], files: dict[str, Path], md5s: dict[str, str] | None,
                      file_md5) -> bool | None:
    """Whether the source ``files`` (name -> path) are those a cache was built from.

    ``recorded``: the cache's source records; ``md5s``: the expected md5 of each file (None
    when the data set publishes none, as PACS, or None for one file, as a re-compressed
    Fashion-MNIST ``.gz`` checked by its content: the recorded md5s are then the reference);
    ``file_md5(path)`` computes a file's md5.  True: same names, the recorded md5s are the
    expected ones and every file has its recorded stamp; None: the same, except that some
    stamps changed and the md5s computed anew match (the cache holds the right data but
    its stamps should be rewritten); False otherwise (a missing file, another md5).
    """
    if set(recorded) != set(files):
        return False
    if md5s is not None and any(recorded[name]["md5"] != md5s.get(name) for name in files
                                if not (name in md5s and md5s[name] is None)):
        return False
    stale = False
    for name, path in files.items():
        record = recorded[name]
        try:
            stamp = source_record(path, record["md5"])
        except OSError:
            return False
        if all(stamp[k] == record.get(k) for k in ("path", "size", "mtime_ns")):
            continue
        if file_md5(path) != record["md5"]:
            return False
        stale = True
    return None if stale else True


def decoded_problem(arrays: dict[str, np.ndarray], side: tuple[int, ...], num_classes: int,
                    groups: dict[str, int] | None = None) -> str | None:
    """Why ``arrays`` are not what a loader decodes (None: they are): ``train_x`` / ``test_x``
    uint8 pixels ``[N, *side]``, ``train_y`` / ``test_y`` integer labels ``[N]`` in
    ``0..num_classes-1``, and each array of ``groups`` (name -> its number of values, e.g.
    PACS's domains) integers ``[N]`` in range.  A cache entry is used only when this finds
    nothing: its own digest proves only that it was not damaged since it was written, not
    that what was written is data."""
    for split in ("train", "test"):
        x, y = arrays.get(f"{split}_x"), arrays.get(f"{split}_y")
        if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
            return f"{split}_x or {split}_y missing"
        if x.dtype != np.uint8 or x.ndim != 1 + len(side) or tuple(x.shape[1:]) != tuple(side):
            return f"{split}_x: {x.dtype} {tuple(x.shape)}, expected uint8 [N, {', '.join(map(str, side))}]"
        extra = {f"{split}_{name}": count for name, count in (groups or {}).items()}
        for name, count in {f"{split}_y": num_classes, **extra}.items():
            values = arrays.get(name)
            if not isinstance(values, np.ndarray) or values.shape != (x.shape[0],) or values.dtype.kind not in "iu":
                return f"{name}: expected {x.shape[0]} integers"
            if values.size and (int(values.min()) < 0 or int(values.max()) >= count):
                return f"{name}: values outside 0..{count - 1}"
    return None


def cached_decode(dataset: str, params: dict, files: dict[str, Path], md5s: dict[str, str] | None,
                  decode, file_md5, check=None) -> dict[str, np.ndarray]:
    """The arrays ``decode()`` makes from the source ``files``, read from the cache when it
    holds them for these sources (:func:`sources_unchanged`), decoded and cached otherwise.

    ``decode()`` verifies the sources itself (and raises when they are missing or corrupt)
    and returns ``(arrays, md5s)``: the arrays and the md5 of every source file.  A cache
    that cannot be written (a read-only folder, a full disk) is skipped silently: the data
    are decoded again next time.  ``check`` (the loader's own test of its arrays,
    :func:`decoded_problem`) turns away an entry that is not data, with one warning, and the
    sources are decoded again.
    """
    path = decoded_cache_path(dataset, params)
    hit = read_decoded(path)
    problem = check(hit[0]) if hit is not None and check is not None else None
    if problem:
        warnings.warn(f"{path}: a decoded {dataset} entry that is not data ({problem}): ignored, the source files "
                      "are decoded again", stacklevel=2)
        hit = None
    if hit is not None:
        arrays, recorded = hit
        unchanged = sources_unchanged(recorded, files, md5s, file_md5)
        if unchanged is True:
            return arrays
        if unchanged is None:
            _try_write(path, arrays, {name: source_record(files[name], recorded[name]["md5"]) for name in files})
            return arrays
    arrays, found_md5s = decode()
    _try_write(path, arrays, {name: source_record(p, found_md5s[name]) for name, p in files.items()})
    return arrays


def _try_write(path: Path, arrays: dict[str, np.ndarray], sources: dict[str, dict]) -> None:
    try:
        write_decoded(path, arrays, sources)
    except OSError:
        pass
