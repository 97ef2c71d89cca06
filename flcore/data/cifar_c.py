"""CIFAR-10-C and CIFAR-100-C (Hendrycks & Dietterich, ICLR 2019) read from their published files.

**Layout** (as the Zenodo archives unpack): a folder ``CIFAR-10-C/`` (or ``CIFAR-100-C/``)
under the data root holding one ``<corruption>.npy`` per corruption, a uint8 array
``[5 n, 32, 32, 3]`` (HWC images), and ``labels.npy`` with the ``5 n`` labels.  Rows
``(s - 1) n ... s n - 1`` are the test set, in its order, at severity ``s``; the published
files have ``n = 10000``.

**Checksums.**  Every file read is md5-verified against the published files' digests
(``MD5``; the archives' own digests are in :data:`ARCHIVES`), as
:mod:`flcore.data.cifar` verifies torchvision's CIFAR files.  Files written by
:func:`write_fake_cifar_c` have other digests: pass those as ``checksums=``.  A digest is
computed once per file (path, size and modification time) per process.

Nothing is downloaded here: a missing folder or file raises :class:`DatasetError` naming
the folder and the command that fetches and unpacks the archive (:func:`fetch_command`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from flcore.data.cifar_format import file_md5
from flcore.data.errors import DatasetError

SEVERITIES = (1, 2, 3, 4, 5)
#: The 19 corruptions of the published files (the FedSAM paper's list, App. B, names
#: "elastic blur" where the files have ``defocus_blur``).
CORRUPTIONS = ("brightness", "contrast", "defocus_blur", "elastic_transform", "fog", "frost", "gaussian_blur",
               "gaussian_noise", "glass_blur", "impulse_noise", "jpeg_compression", "motion_blur", "pixelate",
               "saturate", "shot_noise", "snow", "spatter", "speckle_noise", "zoom_blur")
IMAGE_SHAPE = (32, 32, 3)


class _Archive(NamedTuple):
    folder: str
    record: int
    archive: str
    md5: str
    num_classes: int


#: The Zenodo records and the md5 of their tar archives (as listed on Zenodo).
ARCHIVES = {
    "cifar10": _Archive("CIFAR-10-C", 2535967, "CIFAR-10-C.tar", "56bf5dcef84df0e2308c6dcbcbbd8499", 10),
    "cifar100": _Archive("CIFAR-100-C", 3555552, "CIFAR-100-C.tar", "11f0ed0f1191edbf9fa23466ae6021d3", 100),
}

#: md5 of each published file (file name without ``.npy`` -> digest), by dataset: one row
#: per file, CIFAR-10-C's digest then CIFAR-100-C's.
_DIGESTS = {
    "brightness": ("0a81ef75e0b523c3383219c330a85d48", "f22d7195aecd6abb541e27fca230c171"),
    "contrast": ("3c8262171c51307f916c30a3308235a8", "322bb385f1d05154ee197ca16535f71e"),
    "defocus_blur": ("7d1322666342a0702b1957e92f6254bc", "d923e3d9c585a27f0956e2f2ad832564"),
    "elastic_transform": ("9421657c6cd452429cf6ce96cc412b5f", "a0792bd6581f6810878be71acedfc65a"),
    "fog": ("7b397314b5670f825465fbcd1f6e9ccd", "4efc7ebd5e82b028bdbe13048e3ea564"),
    "frost": ("31f6ab3bce1d9934abfb0cc13656f141", "3a39c6823bdfaa0bf8b12fe7004b8117"),
    "gaussian_blur": ("c33370155bc9b055fb4a89113d3c559d", "5204ba0d557839772ef5a4196a052c3e"),
    "gaussian_noise": ("ecaf8b9a2399ffeda7680934c33405fd", "ecc4d366eac432bdf25c024086f5e97d"),
    "glass_blur": ("7361fb4019269e02dbf6925f083e8629", "0bf384f38e5ccbf8dd479d9059b913e1"),
    "impulse_noise": ("2090e01c83519ec51427e65116af6b1a", "3b3c210ddfa0b5cb918ff4537a429fef"),
    "jpeg_compression": ("2b9cc4c864e0193bb64db8d7728f8187", "c851b7f1324e1d2ffddeb76920576d11"),
    "labels": ("c439b113295ed5254878798ffe28fd54", "bb4026e9ce52996b95f439544568cdb2"),
    "motion_blur": ("fffa5f852ff7ad299cfe8a7643f090f4", "732a7e2e54152ff97c742d4c388c5516"),
    "pixelate": ("0f14f7e2db14288304e1de10df16832f", "96c00c60f144539e14cffb02ddbd0640"),
    "saturate": ("1cfae0964219c5102abbb883e538cc56", "c0697e9fdd646916a61e9c312c77bf6b"),
    "shot_noise": ("3a7239bb118894f013d9bf1984be7f11", "b0a1fa6e1e465a747c1b204b1914048a"),
    "snow": ("bb238de8555123da9c282dea23bd6e55", "0237be164583af146b7b144e73b43465"),
    "spatter": ("8a5a3903a7f8f65b59501a6093b4311e", "12ccf41d62564d36e1f6a6ada5022728"),
    "speckle_noise": ("ef00b87611792b00df09c0b0237a1e30", "e3f215b1a0f9fd9fd6f0d1cf94a7ce99"),
    "zoom_blur": ("6ea8e63f1c5cdee1517533840641641b", "0204613400c034a81c4830d5df81cb82"),
}
MD5 = {dataset: {name: pair[i] for name, pair in _DIGESTS.items()} for i, dataset in enumerate(("cifar10", "cifar100"))}

_verified: dict[tuple[str, int, int], str] = {}


def fetch_command(name: str, root: str | Path = "data") -> str:
    """The shell command that downloads the published archive, checks its md5 and unpacks
    it under ``root``."""
    archive = _archive(name)
    root = str(Path(root).expanduser())
    return (f"mkdir -p {root} && curl -L -o {root}/{archive.archive} "
            f"https://zenodo.org/records/{archive.record}/files/{archive.archive} && "
            f"echo '{archive.md5}  {root}/{archive.archive}' | md5sum -c - && "
            f"tar -xf {root}/{archive.archive} -C {root}")


def corruption_folder(name: str, root: str | Path = "data") -> Path:
    return Path(root).expanduser().resolve() / _archive(name).folder


def load_cifar_c(name: str, corruption: str, severity: int, root: str | Path = "data", *,
                 checksums: Mapping[str, str] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The test images of ``name`` (``cifar10`` / ``cifar100``) under ``corruption`` at
    ``severity`` (1-5): float32 ``[n, 3, 32, 32]`` in [0, 1] (not normalised) and int64 labels.

    ``checksums`` (file name without ``.npy`` -> md5) replaces ``MD5``, for files written
    by :func:`write_fake_cifar_c`.  Raises :class:`DatasetError` when the folder or a file is
    missing, fails its checksum, or does not have the published layout.
    """
    archive = _archive(name)
    if corruption not in CORRUPTIONS:
        raise ValueError(f"unknown corruption {corruption!r}; allowed: {', '.join(CORRUPTIONS)}")
    if severity not in SEVERITIES:
        raise ValueError(f"severity must be one of 1, 2, 3, 4, 5, got {severity!r}")
    digests = MD5[name] if checksums is None else checksums
    folder = corruption_folder(name, root)
    display = archive.folder
    how = fetch_command(name, Path(root).expanduser().resolve())
    if not folder.is_dir():
        raise DatasetError(f"{display} not found in {folder.parent} (expected {display}/ with <corruption>.npy "
                           f"and labels.npy). Fetch it with: {how}")
    paths = {key: folder / f"{key}.npy" for key in (corruption, "labels")}
    missing = [p.name for p in paths.values() if not p.is_file()]
    if missing:
        raise DatasetError(f"{display} is incomplete in {folder}: missing {', '.join(missing)}. Fetch it with: {how}")
    for key, path in paths.items():
        if key not in digests:
            raise ValueError(f"checksums for {display} lack an md5 for {key!r}")
        actual = _md5(path)
        if actual != digests[key]:
            raise DatasetError(f"{display} in {folder} is corrupt: checksum mismatch for {path.name} (md5 {actual}, "
                               f"expected {digests[key]}). Delete {folder} and fetch it again with: {how}")
    images = np.load(paths[corruption], mmap_mode="r", allow_pickle=False)
    labels = np.load(paths["labels"], mmap_mode="r", allow_pickle=False)
    if images.dtype != np.uint8 or images.ndim != 4 or tuple(images.shape[1:]) != IMAGE_SHAPE or \
            images.shape[0] % len(SEVERITIES):
        raise DatasetError(f"{paths[corruption]}: expected uint8 [5 n, 32, 32, 3], got {images.dtype} "
                           f"{list(images.shape)}")
    if labels.ndim != 1 or labels.shape[0] != images.shape[0] or not np.issubdtype(labels.dtype, np.integer):
        raise DatasetError(f"{paths['labels']}: expected {images.shape[0]} integer labels, got {labels.dtype} "
                           f"{list(labels.shape)}")
    n = images.shape[0] // len(SEVERITIES)
    rows = slice((severity - 1) * n, severity * n)
    y = torch.from_numpy(np.array(labels[rows], dtype=np.int64))
    if y.numel() and (int(y.min()) < 0 or int(y.max()) >= archive.num_classes):
        raise DatasetError(f"{paths['labels']}: labels must lie in 0..{archive.num_classes - 1}")
    x = torch.from_numpy(np.array(images[rows])).permute(0, 3, 1, 2).contiguous().to(torch.float32).div_(255.0)
    return x, y


def write_fake_cifar_c(root: str | Path, name: str = "cifar10", corruptions: Sequence[str] = ("gaussian_noise",),
                       per_severity: int = 4, seed: int = 0, labels: Sequence[int] | None = None) -> dict[str, str]:
    """Write random files in the published layout (``per_severity`` images per severity
    instead of 10,000) and return their md5s for ``checksums=``.  ``labels``: the test
    labels repeated for every severity (default random)."""
    archive = _archive(name)
    folder = Path(root) / archive.folder
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    test_labels = (np.asarray(labels, dtype=np.int64) if labels is not None
                   else rng.integers(0, archive.num_classes, per_severity))
    if test_labels.shape != (per_severity,):
        raise ValueError(f"labels must hold {per_severity} values")
    np.save(folder / "labels.npy", np.tile(test_labels, len(SEVERITIES)))
    for corruption in corruptions:
        np.save(folder / f"{corruption}.npy",
                rng.integers(0, 256, (len(SEVERITIES) * per_severity, *IMAGE_SHAPE), dtype=np.uint8))
    return {p.stem: file_md5(p) for p in sorted(folder.glob("*.npy"))}


def _archive(name: str) -> _Archive:
    if name not in ARCHIVES:
        raise ValueError(f"unknown CIFAR-C variant {name!r}; expected 'cifar10' or 'cifar100'")
    return ARCHIVES[name]


def _md5(path: Path) -> str:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _verified:
        _verified[key] = file_md5(path)
    return _verified[key]
