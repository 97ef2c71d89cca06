"""Fashion-MNIST (Xiao, Rasul & Vollgraf 2017) in torchvision's on-disk format, as one tensor.

The four published gzipped IDX files (:mod:`flcore.data.fmnist_format`) are read from
``<root>/FashionMNIST/raw/``, where torchvision's ``FashionMNIST(root, download=True)``
puts them, after an md5 check of each ``.gz`` file against torchvision's own list
(``FashionMNIST.resources``).  Fake data written by ``write_fake_fmnist`` have other md5s:
pass them as ``checksums=`` or wrap the call in ``expected_checksums("fmnist", md5s)``.

The ``.gz`` archives are required (they are what the md5s cover; torchvision keeps them
beside the files it extracts).  A missing, corrupt or malformed file raises one
``DatasetError`` naming the file and how to fetch the data.  The decoded pixels are cached
as plain arrays keyed by the files' md5s (:func:`flcore.data.cache.cached_decode`), so
later loads read one checked file instead of the archives.

Preprocessing is FedIMA's (its official code: ``ToTensor`` only, no normalisation, no
augmentation): images are float32 ``[N, 1, 28, 28]`` in [0, 1], the dataset's
normalisation statistics are the identity (mean 0, std 1) and ``augment`` is False.
"""
from __future__ import annotations

import gzip
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch

from flcore.data.cache import cached_decode
from flcore.data.checksums import check_checksums, checksum_override
from flcore.data.cifar_format import file_md5
from flcore.data.datasets import Dataset
from flcore.data.errors import DatasetError
from flcore.data.fmnist_format import (
    FMNIST_FILES,
    FMNIST_FOLDER,
    FMNIST_PUBLISHED_MD5S,
    IMAGE_SIDE,
    IMAGES_MAGIC,
    LABELS_MAGIC,
    NUM_CLASSES,
)

#: The published files (the names whose md5s a ``checksums`` mapping gives).
FILES = tuple(FMNIST_FILES.values())
#: Identity normalisation: FedIMA feeds Fashion-MNIST through ``ToTensor`` only.
FMNIST_MEAN = (0.0,)
FMNIST_STD = (1.0,)
DISPLAY_NAME = "Fashion-MNIST"


def torchvision_md5s() -> dict[str, str]:
    """torchvision's md5 of every published file."""
    return dict(FMNIST_PUBLISHED_MD5S)


def load_fmnist(root: str | Path = "data", *, download: bool = False, num_samples: int | None = None,
                checksums: Mapping[str, str] | None = None) -> Dataset:
    """Fashion-MNIST under ``root`` as float32 ``[N, 1, 28, 28]`` images in [0, 1].

    ``download=True`` fetches missing files through torchvision.  ``num_samples`` keeps the
    first that many training images (the test set is untouched).  Raises ``DatasetError``
    if a file is missing, fails its md5 check or is not an IDX file of the right shape.
    """
    if checksums is None:
        checksums = checksum_override("fmnist")
    if checksums is None:
        checksums = torchvision_md5s()
    else:
        check_checksums("fmnist", checksums)
    root = Path(root).expanduser().resolve()
    folder = root / FMNIST_FOLDER
    md5s = {f: checksums[f] for f in FILES}
    arrays = cached_decode("fmnist", {"md5s": md5s}, {f: folder / f for f in FILES}, md5s,
                           lambda: (_decode(root, md5s, download), md5s), file_md5)
    total = len(arrays["train_y"])
    if num_samples is not None and not 0 < num_samples <= total:
        raise ValueError(f"num_samples must be in 1..{total} for fmnist, got {num_samples}")
    return Dataset("fmnist", None, torch.from_numpy(arrays["train_y"][:num_samples]), None,
                   torch.from_numpy(arrays["test_y"]), NUM_CLASSES, FMNIST_MEAN, FMNIST_STD, augment=False,
                   train_pixels=torch.from_numpy(arrays["train_x"][:num_samples]),
                   test_pixels=torch.from_numpy(arrays["test_x"]))


def _decode(root: Path, md5s: Mapping[str, str], download: bool) -> dict[str, np.ndarray]:
    """Both splits as uint8 pixels ``[N, 28, 28, 1]`` and int64 labels, after the md5 check."""
    if download:
        _download(root)
    problem = _verify(root, md5s)
    if problem is not None:
        raise DatasetError(problem)
    folder = root / FMNIST_FOLDER
    arrays = {}
    for split in ("train", "test"):
        arrays[f"{split}_x"], arrays[f"{split}_y"] = _read_split(folder, split)
    return arrays


def _download(root: Path) -> None:
    from torchvision.datasets import FashionMNIST

    try:
        FashionMNIST(str(root), train=True, download=True)
    except (OSError, RuntimeError) as err:  # a network failure or a bad download
        raise DatasetError(f"downloading {DISPLAY_NAME} into {root / FMNIST_FOLDER} failed: {err}. "
                           f"Fetch it with {_how_to_fetch(root)}") from err


def _verify(root: Path, md5s: Mapping[str, str]) -> str | None:
    """What is wrong with the files under ``root`` (missing, md5 mismatch), or None."""
    folder = root / FMNIST_FOLDER
    how = _how_to_fetch(root)
    if not folder.is_dir():
        return f"{DISPLAY_NAME} not found in {root} (expected {FMNIST_FOLDER}/). Fetch it with {how}"
    missing = [f for f in FILES if not (folder / f).is_file()]
    if missing:
        return (f"{DISPLAY_NAME} is incomplete in {folder}: missing {', '.join(missing)}. "
                f"Fetch it with {how}")
    mismatches = [f"{f} (md5 {actual}, expected {md5s[f]})" for f in FILES
                  if (actual := file_md5(folder / f)) != md5s[f]]
    if mismatches:
        return (f"{DISPLAY_NAME} in {folder} is corrupt: checksum mismatch for {'; '.join(mismatches)}. "
                f"Delete {folder} and fetch it again with {how}")
    return None


def _read_split(folder: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    images_path = folder / FMNIST_FILES[(split, "images")]
    labels_path = folder / FMNIST_FILES[(split, "labels")]
    images = _read_idx(images_path, IMAGES_MAGIC, 3)
    labels = _read_idx(labels_path, LABELS_MAGIC, 1)
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


def _read_idx(path: Path, magic: int, dims: int) -> np.ndarray:
    """The uint8 array of the gzipped IDX file ``path``; ``DatasetError`` naming the file if
    it is not one with ``magic`` and ``dims`` dimensions."""
    try:
        with gzip.open(path, "rb") as handle:
            raw = handle.read()
    except (OSError, EOFError, zlib.error) as err:
        raise DatasetError(f"{path}: not a gzip file ({err}); the expected checksums do not "
                           f"belong to {DISPLAY_NAME} files") from err
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
            f"torchvision.datasets.FashionMNIST({str(root)!r}, download=True)\"")
