"""Fashion-MNIST (Xiao, Rasul & Vollgraf 2017) from its four IDX files, as one tensor.

The four files (:mod:`flcore.data.fmnist_format`) are found under ``root`` in any of three
layouts, each checked by content:

- torchvision's: the published ``.gz`` files in ``<root>/FashionMNIST/raw/``, where
  ``FashionMNIST(root, download=True)`` puts them, checked by the md5 of each ``.gz`` file
  against torchvision's own list (``FashionMNIST.resources``);
- the uncompressed IDX files (``train-images-idx3-ubyte`` ...), directly in ``<root>`` or in
  ``<root>/FashionMNIST/raw/``, checked against the published md5s of the uncompressed files;
- Debian's: package ``dataset-fashion-mnist`` installs the release re-compressed, the four
  ``.gz`` files directly in ``/usr/share/datasets/fashion-mnist/``: their ``.gz`` md5s differ
  from the release's, so a ``.gz`` file whose md5 is not torchvision's is decompressed and the
  md5 of its content checked against the published uncompressed md5s.

``--data-root /usr/share/datasets/fashion-mnist`` therefore works as is.  The first of the two
folders holding any of the files is read; in it a ``.gz`` file is preferred to its
uncompressed twin (torchvision keeps both).  Fake data written by ``write_fake_fmnist`` have
other md5s: pass them as ``checksums=`` (``{"<name>.gz": md5 of the .gz file}`` and/or
``{"<name>": md5 of the uncompressed content}``) or wrap the call in
``expected_checksums("fmnist", md5s)``.  A missing, corrupt, truncated or malformed file
raises one ``DatasetError`` naming the file and what was expected.

The decoded pixels are cached as plain arrays (:func:`flcore.data.cache.cached_decode`, in
flcore's cache folder, never beside the data) keyed by the expected content: the published
uncompressed md5s, so every layout of the real release names one entry (or the ``.gz`` md5s
where only those are given).  The cache records each source file's md5 as found when it was
verified: for a re-compressed ``.gz``, whose md5 no list gives, that recorded md5 is the
reference afterwards.  A later load trusts the cache while the files keep their size and
modification time, and otherwise hashes only the ``.gz`` files (30 MB, not the 55 MB of
decompressed content) against the recorded md5s: a load served from the cache decompresses
nothing.

Preprocessing is FedIMA's (its official code: ``ToTensor`` only, no normalisation, no
augmentation): images are float32 ``[N, 1, 28, 28]`` in [0, 1], the dataset's
normalisation statistics are the identity (mean 0, std 1) and ``augment`` is False.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch

from flcore.data.cache import cached_decode, decoded_problem
from flcore.data.checksums import check_checksums, checksum_override
from flcore.data.cifar_format import file_md5
from flcore.data.datasets import Dataset
from flcore.data.errors import DatasetError
from flcore.data.fmnist_format import (
    DEBIAN_FMNIST_ROOT,
    FMNIST_CONTENT_MD5S,
    FMNIST_FILES,
    FMNIST_FOLDER,
    FMNIST_PUBLISHED_MD5S,
    IMAGE_SIDE,
    IMAGES_MAGIC,
    LABELS_MAGIC,
    NUM_CLASSES,
)

#: The published ``.gz`` files (the names whose md5s torchvision lists).
FILES = tuple(FMNIST_FILES.values())
#: The uncompressed IDX files (their content), one per ``.gz`` file.
IDX_NAMES = tuple(name.removesuffix(".gz") for name in FILES)
#: Where the files are looked for under the data root, in this order.
FOLDERS = (FMNIST_FOLDER, Path("."))
#: Largest file read (compressed or not): the training images are 47,040,016 bytes.
MAX_FILE_BYTES = 64 << 20
#: Identity normalisation: FedIMA feeds Fashion-MNIST through ``ToTensor`` only.
FMNIST_MEAN = (0.0,)
FMNIST_STD = (1.0,)
DISPLAY_NAME = "Fashion-MNIST"


def torchvision_md5s() -> dict[str, str]:
    """torchvision's md5 of every published ``.gz`` file."""
    return dict(FMNIST_PUBLISHED_MD5S)


def published_md5s() -> dict[str, str]:
    """Every md5 the real files are checked by: torchvision's of the ``.gz`` files and the
    published ones of their uncompressed content."""
    return {**FMNIST_PUBLISHED_MD5S, **FMNIST_CONTENT_MD5S}


def load_fmnist(root: str | Path = "data", *, download: bool = False, num_samples: int | None = None,
                checksums: Mapping[str, str] | None = None) -> Dataset:
    """Fashion-MNIST under ``root`` (any layout of the module docstring) as float32
    ``[N, 1, 28, 28]`` images in [0, 1].

    ``download=True`` fetches the files through torchvision when no layout holds them.
    ``num_samples`` keeps the first that many training images (the test set is untouched).
    Raises ``DatasetError`` if a file is missing, fails its md5 check or is not an IDX file
    of the right shape.
    """
    if checksums is None:
        checksums = checksum_override("fmnist")
    if checksums is None:
        checksums = published_md5s()
    else:
        check_checksums("fmnist", checksums)
    root = Path(root).expanduser().resolve()
    sources = find_sources(root)
    if isinstance(sources, str) and download:
        _download(root)
        sources = find_sources(root)
    if isinstance(sources, str):
        raise DatasetError(sources)
    expected = {idx: checksums.get(idx) for idx in IDX_NAMES}
    expected.update({gz: checksums.get(gz) for gz in FILES})
    key = {idx: expected[idx] or f"gz:{expected[idx + '.gz']}" for idx in IDX_NAMES}
    files = {path.name: path for path in sources.values()}
    # what a cache hit's recorded md5s must be: a .gz file checked by its content may be
    # any compression of it, so its md5 recorded after the verified decode is the reference
    file_md5s = {path.name: (expected[idx] if path.suffix != ".gz" else
                             None if expected[idx] else expected[path.name])
                 for idx, path in sources.items()}
    arrays = cached_decode("fmnist", {"content_md5s": key}, files, file_md5s,
                           lambda: _decode(root, sources, expected), file_md5,
                           check=lambda a: decoded_problem(a, (IMAGE_SIDE, IMAGE_SIDE, 1), NUM_CLASSES))
    total = len(arrays["train_y"])
    if num_samples is not None and not 0 < num_samples <= total:
        raise ValueError(f"num_samples must be in 1..{total} for fmnist, got {num_samples}")
    return Dataset("fmnist", None, torch.from_numpy(arrays["train_y"][:num_samples]), None,
                   torch.from_numpy(arrays["test_y"]), NUM_CLASSES, FMNIST_MEAN, FMNIST_STD, augment=False,
                   train_pixels=torch.from_numpy(arrays["train_x"][:num_samples]),
                   test_pixels=torch.from_numpy(arrays["test_x"]))


def find_sources(root: Path) -> dict[str, Path] | str:
    """``{uncompressed name: the file to read}`` for the four files under ``root``, or why
    they are not there (one line).  The first folder of :data:`FOLDERS` holding any of
    them is read, a ``.gz`` file before its uncompressed twin."""
    how = _how_to_fetch(root)
    for relative in FOLDERS:
        folder = root / relative
        found = {}
        for idx in IDX_NAMES:
            for candidate in (folder / f"{idx}.gz", folder / idx):
                if candidate.is_file():
                    found[idx] = candidate
                    break
        if not found:
            continue
        missing = [f"{idx}.gz" for idx in IDX_NAMES if idx not in found]
        if missing:
            return (f"{DISPLAY_NAME} is incomplete in {folder}: missing {', '.join(missing)} "
                    f"(or its uncompressed file). Fetch it with {how}")
        return found
    return (f"{DISPLAY_NAME} not found in {root} (expected {FMNIST_FOLDER}/*.gz as torchvision downloads "
            f"it, or the four IDX files, .gz or not, directly in it, as Debian's dataset-fashion-mnist "
            f"installs them in {DEBIAN_FMNIST_ROOT}). Fetch it with {how}")


def _decode(root: Path, sources: Mapping[str, Path], expected: Mapping[str, str | None]
            ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Both splits as uint8 pixels ``[N, 28, 28, 1]`` and int64 labels, and the md5 of
    every source file, after each file's check (:func:`verified_content`)."""
    contents, md5s = {}, {}
    for idx, path in sources.items():
        try:
            contents[idx], md5s[path.name] = verified_content(path, expected.get(f"{idx}.gz"), expected.get(idx))
        except DatasetError as err:
            raise DatasetError(f"{err}. Replace it with the published file: {_how_to_fetch(root)}") from None
    arrays = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        arrays[f"{split}_x"], arrays[f"{split}_y"] = _read_split(
            contents[f"{prefix}-images-idx3-ubyte"], contents[f"{prefix}-labels-idx1-ubyte"],
            sources[f"{prefix}-images-idx3-ubyte"], sources[f"{prefix}-labels-idx1-ubyte"])
    return arrays, md5s


def verified_content(path: Path, gz_md5: str | None, content_md5: str | None) -> tuple[bytes, str]:
    """The uncompressed IDX bytes of ``path`` and the md5 of the file itself, after checking
    it by content: a ``.gz`` file whose md5 is ``gz_md5`` (torchvision's), else one whose
    decompressed content has md5 ``content_md5``; an uncompressed file whose md5 is
    ``content_md5``.  ``DatasetError`` naming the file and the md5s expected otherwise."""
    data = _read_bounded(path)
    found = hashlib.md5(data).hexdigest()
    if path.suffix != ".gz":
        if found != content_md5:
            raise DatasetError(_mismatch(path, f"md5 {found}, expected {content_md5}"))
        return data, found
    if found == gz_md5:
        return _gunzip(path, data), found
    if content_md5 is None:
        raise DatasetError(_mismatch(path, f"md5 {found}, expected {gz_md5}"))
    content = _gunzip(path, data)
    content_found = hashlib.md5(content).hexdigest()
    if content_found != content_md5:
        gz_part = f", or {gz_md5} for the .gz file itself" if gz_md5 else ""
        raise DatasetError(_mismatch(path, f"md5 of its content {content_found}, expected {content_md5}{gz_part}"))
    return content, found


def _mismatch(path: Path, detail: str) -> str:
    return f"{DISPLAY_NAME} file {path} is corrupt: checksum mismatch for {path.name} ({detail})"


def _read_bounded(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise DatasetError(f"{path}: {size} bytes, larger than any {DISPLAY_NAME} file "
                               f"({MAX_FILE_BYTES} bytes at most)")
        with open(path, "rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise DatasetError(f"{path}: cannot be read ({err.strerror or err})") from err


def _gunzip(path: Path, data: bytes) -> bytes:
    """The decompressed ``data`` of the ``.gz`` file ``path``, at most :data:`MAX_FILE_BYTES`."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except (OSError, EOFError, zlib.error) as err:
        raise DatasetError(f"{path}: not a complete gzip file ({err}): truncated or damaged") from err
    if len(raw) > MAX_FILE_BYTES:
        raise DatasetError(f"{path}: decompresses to more than {MAX_FILE_BYTES} bytes, larger than any "
                           f"{DISPLAY_NAME} file")
    return raw


def _download(root: Path) -> None:
    from torchvision.datasets import FashionMNIST

    try:
        FashionMNIST(str(root), train=True, download=True)
    except (OSError, RuntimeError) as err:  # a network failure or a bad download
        raise DatasetError(f"downloading {DISPLAY_NAME} into {root / FMNIST_FOLDER} failed: {err}. "
                           f"Fetch it with {_how_to_fetch(root)}") from err


def _read_split(images_raw: bytes, labels_raw: bytes, images_path: Path,
                labels_path: Path) -> tuple[np.ndarray, np.ndarray]:
    images = _read_idx(images_raw, images_path, IMAGES_MAGIC, 3)
    labels = _read_idx(labels_raw, labels_path, LABELS_MAGIC, 1)
    if images.shape[1:] != (IMAGE_SIDE, IMAGE_SIDE):
        raise DatasetError(f"{images_path}: images must be {IMAGE_SIDE}x{IMAGE_SIDE}, "
                           f"got {images.shape[1]}x{images.shape[2]}")
    if len(labels) != len(images):
        raise DatasetError(f"{labels_path}: holds {len(labels)} labels for the {len(images)} images "
                           f"of {images_path.name}")
    if len(labels) == 0:
        raise DatasetError(f"{images_path}: holds no images")
    if int(labels.max()) >= NUM_CLASSES:
        raise DatasetError(f"{labels_path}: labels must be in 0..{NUM_CLASSES - 1}, found {int(labels.max())}")
    return images[..., None], labels.astype(np.int64)


def _read_idx(raw: bytes, path: Path, magic: int, dims: int) -> np.ndarray:
    """The uint8 array of the IDX bytes ``raw`` (from ``path``); ``DatasetError`` naming the
    file if they are not an IDX file with ``magic`` and ``dims`` dimensions."""
    header = 4 * (dims + 1)
    if len(raw) < header:
        raise DatasetError(f"{path}: too short for an IDX header ({len(raw)} bytes)")
    found, *shape = (int(v) for v in np.frombuffer(raw[:header], dtype=">i4"))
    if found != magic:
        raise DatasetError(f"{path}: IDX magic number {found}, expected {magic} "
                           f"({'unsigned bytes, ' + str(dims) + ' dimension(s)'})")
    expected = header + int(np.prod(shape))
    if len(raw) != expected:
        raise DatasetError(f"{path}: {len(raw)} bytes, expected {expected} for shape {shape}")
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(shape).copy()  # writable


def _how_to_fetch(root: Path) -> str:
    return (f"load_dataset('fmnist', root={str(root)!r}, download=True) (`--download` on the flcore "
            f"command line) or: python -c \"import torchvision; "
            f"torchvision.datasets.FashionMNIST({str(root)!r}, download=True)\" "
            f"or, on Debian and Ubuntu, apt-get install dataset-fashion-mnist and --data-root {DEBIAN_FMNIST_ROOT}")
