"""Write small random datasets in the exact on-disk format of CIFAR-10 / CIFAR-100.

The files mirror the python-pickle release of Krizhevsky (2009) that torchvision's
``CIFAR10``/``CIFAR100`` read: a dict per file with ``data`` (uint8 ``[n, 3072]``, each row
the R, G and B planes of a 32x32 image) and ``labels`` (CIFAR-10) or ``fine_labels`` +
``coarse_labels`` (CIFAR-100), plus a metadata pickle with the class names.  Tests and
benchmarks use them to run the real loader without the 170 MB download; since their md5s
differ from torchvision's list, pass the returned md5s as ``checksums=`` to
``load_dataset``.
"""
from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import numpy as np

# Folder and file names as published (and as torchvision expects them).
_LAYOUT = {
    "cifar10": {"folder": "cifar-10-batches-py",
                "train": [f"data_batch_{i}" for i in range(1, 6)],
                "test": ["test_batch"], "meta": "batches.meta", "classes": 10},
    "cifar100": {"folder": "cifar-100-python", "train": ["train"], "test": ["test"],
                 "meta": "meta", "classes": 100},
}
#: CIFAR-10's class names, by label (its ``batches.meta``).
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
_CIFAR100_COARSE_CLASSES = 20
_IMAGE_BYTES = 3 * 32 * 32

#: The md5 of every published file, as torchvision lists them (``CIFAR10.train_list``,
#: ``test_list`` and ``meta``; a test keeps the two equal), so a load served from the
#: decoded cache needs no torchvision import.
PUBLISHED_MD5S = {
    "cifar10": {"data_batch_1": "c99cafc152244af753f735de768cd75f",
                "data_batch_2": "d4bba439e000b95fd0a9bffe97cbabec",
                "data_batch_3": "54ebc095f3ab1f0389bbae665268c751",
                "data_batch_4": "634d18415352ddfa80567beed471001a",
                "data_batch_5": "482c414d41f54cd18b22e5b47cb7c3cb",
                "test_batch": "40351d587109b95175f43aff81a1287e",
                "batches.meta": "5ff9c542aee3614f3951f8cda6e48888"},
    "cifar100": {"train": "16019d7e3df5f24257cddd939b257f8d",
                 "test": "f0ef6b0ae62326f3e7ffdfab6717acfc",
                 "meta": "7973b15100ade9c7d40fb424638fde48"},
}


def cifar_folder(name: str) -> str:
    """The folder under the data root that holds ``name``'s files (torchvision's ``base_folder``)."""
    return _LAYOUT[name]["folder"]


def write_fake_cifar(root: str | Path, name: str = "cifar10", num_train: int = 100,
                     num_test: int = 20, seed: int = 0) -> dict[str, str]:
    """Write ``num_train`` + ``num_test`` random images under ``root`` in ``name``'s format.

    CIFAR-10's training images are spread over its five batch files as evenly as possible.
    Returns ``{file name: md5 hex digest}`` for every file written.
    """
    if name not in _LAYOUT:
        raise ValueError(f"unknown CIFAR variant {name!r}; expected 'cifar10' or 'cifar100'")
    layout = _LAYOUT[name]
    folder = Path(root) / layout["folder"]
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    num_classes = layout["classes"]

    contents: dict[str, dict] = {}
    for split, total in (("train", num_train), ("test", num_test)):
        files = layout[split]
        for file_name, count in zip(files, _even_split(total, len(files))):
            contents[file_name] = _batch(rng, name, f"{split} batch {file_name}", count,
                                         num_classes)
    contents[layout["meta"]] = _metadata(name)

    md5s = {}
    for file_name, content in contents.items():
        path = folder / file_name
        with open(path, "wb") as handle:
            pickle.dump(content, handle, protocol=2)
        md5s[file_name] = file_md5(path)
    return md5s


def file_md5(path: str | Path) -> str:
    """The md5 hex digest of a file, read in 1 MiB chunks."""
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _even_split(total: int, parts: int) -> list[int]:
    return [total // parts + (i < total % parts) for i in range(parts)]


def _batch(rng: np.random.Generator, name: str, batch_label: str, count: int,
           num_classes: int) -> dict:
    data = rng.integers(0, 256, (count, _IMAGE_BYTES), dtype=np.uint8)
    labels = rng.integers(0, num_classes, count).tolist()
    batch = {"batch_label": batch_label, "data": data,
             "filenames": [f"fake_{i:05d}.png" for i in range(count)]}
    if name == "cifar10":
        batch["labels"] = labels
    else:
        batch["fine_labels"] = labels
        # CIFAR-100 groups its 100 classes into 20 superclasses of 5.
        batch["coarse_labels"] = [label * _CIFAR100_COARSE_CLASSES // num_classes
                                  for label in labels]
    return batch


def _metadata(name: str) -> dict:
    if name == "cifar10":
        return {"label_names": list(CIFAR10_CLASSES), "num_cases_per_batch": 10000,
                "num_vis": _IMAGE_BYTES}
    return {"fine_label_names": [f"class_{i}" for i in range(100)],
            "coarse_label_names": [f"superclass_{i}" for i in range(_CIFAR100_COARSE_CLASSES)]}
