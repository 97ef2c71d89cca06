"""CIFAR-10 / CIFAR-100 (Krizhevsky 2009) loaded through torchvision into one tensor.

torchvision reads and md5-verifies the published pickle files; this module turns a
verification failure into a ``DatasetError`` that says which folder was searched, whether
the data are missing or corrupt, and how to fetch them.

The decoded pixels are cached (:func:`flcore.data.cache.cached_decode`: plain arrays, no
pickle, keyed by the files' md5s, the cache's content checked against its digest on every
load), so only the first load unpickles the files; later loads read one file and import
no torchvision.  The data set keeps the uint8 pixels (``train_pixels``) and makes the
float images from them only when asked.

Checksums: by default the files are verified against torchvision's own lists
(``CIFAR10.train_list``, ``test_list``, ``meta``).  Fake data written by
``write_fake_cifar`` have other md5s; pass them as ``checksums=`` or wrap the call in
``expected_checksums(name, md5s)`` (:mod:`flcore.data.checksums`, re-exported here).
Either way the same torchvision code path runs, on a subclass whose lists carry the given
md5s (torchvision's classes are never modified).
"""
from __future__ import annotations

import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from flcore.data.cache import cached_decode, decoded_problem
from flcore.data.checksums import checksum_override, expected_checksums
from flcore.data.cifar_format import PUBLISHED_MD5S, cifar_folder, file_md5
from flcore.data.cifar_stats import CIFAR10_MEAN, CIFAR10_STD, CIFAR100_MEAN, CIFAR100_STD
from flcore.data.datasets import Dataset
from flcore.data.errors import DatasetError

__all__ = ["expected_checksums", "load_cifar", "train_filenames"]


class _Variant(NamedTuple):
    class_name: str  # torchvision's class (imported only to decode the files)
    display_name: str
    num_classes: int
    mean: tuple[float, ...]
    std: tuple[float, ...]


_VARIANTS = {
    "cifar10": _Variant("CIFAR10", "CIFAR-10", 10, CIFAR10_MEAN, CIFAR10_STD),
    "cifar100": _Variant("CIFAR100", "CIFAR-100", 100, CIFAR100_MEAN, CIFAR100_STD),
}


def load_cifar(name: str, root: str | Path = "data", *, download: bool = False,
               num_samples: int | None = None,
               checksums: Mapping[str, str] | None = None) -> Dataset:
    """CIFAR-10 or CIFAR-100 under ``root`` as one float32 tensor ``[N, 3, 32, 32]`` in [0, 1]
    (made on first access from the uint8 ``train_pixels``, see the module docstring).

    ``num_samples`` keeps the first that many training images (the test set is untouched).
    Raises ``DatasetError`` if the files are missing or fail their md5 check.
    """
    if name not in _VARIANTS:
        raise ValueError(f"unknown CIFAR variant {name!r}; expected 'cifar10' or 'cifar100'")
    variant = _VARIANTS[name]
    if checksums is None:
        checksums = checksum_override(name)
    if checksums is not None:
        missing = [f for f in _file_names(name) if f not in checksums]
        if missing:
            raise ValueError(f"checksums for {name} lack an md5 for: {', '.join(missing)}")
    md5s = {f: (checksums or PUBLISHED_MD5S[name])[f] for f in _file_names(name)}
    root = Path(root).expanduser().resolve()
    folder = root / cifar_folder(name)
    arrays = cached_decode(name, {"md5s": md5s}, {f: folder / f for f in md5s}, md5s,
                           lambda: (_decode(name, root, checksums, download), md5s), file_md5,
                           check=lambda a: decoded_problem(a, (32, 32, 3), variant.num_classes))
    total = len(arrays["train_y"])
    if num_samples is not None and not 0 < num_samples <= total:
        raise ValueError(f"num_samples must be in 1..{total} for {name}, "
                         f"got {num_samples}")
    return Dataset(name, None, torch.from_numpy(arrays["train_y"][:num_samples]), None,
                   torch.from_numpy(arrays["test_y"]), variant.num_classes, variant.mean, variant.std,
                   augment=True, train_pixels=torch.from_numpy(arrays["train_x"][:num_samples]),
                   test_pixels=torch.from_numpy(arrays["test_x"]))


def _decode(name: str, root: Path, checksums: Mapping[str, str] | None, download: bool) -> dict[str, np.ndarray]:
    """The uint8 pixels ``[N, 32, 32, 3]`` and int64 labels of both splits, read by
    torchvision (which md5-verifies the files, and downloads them if asked)."""
    variant = _VARIANTS[name]
    dataset_class = _torchvision_class(name, checksums)
    train = _open(name, dataset_class, root, train=True, download=download)
    test = _open(name, dataset_class, root, train=False, download=False)
    for dataset in (train, test):
        labels = torch.as_tensor(dataset.targets)
        if (labels.numel() != len(dataset.data) or dataset.data.dtype.name != "uint8"
                or labels.numel() and (int(labels.min()) < 0 or int(labels.max()) >= variant.num_classes)):
            culprit = _find_malformed_file(name, dataset_class, root)
            raise DatasetError(f"{variant.display_name}: "
                               f"{culprit or 'labels outside 0..' + str(variant.num_classes - 1)}")
    return {"train_x": np.ascontiguousarray(train.data), "train_y": np.asarray(train.targets, dtype=np.int64),
            "test_x": np.ascontiguousarray(test.data), "test_y": np.asarray(test.targets, dtype=np.int64)}


def train_filenames(name: str, root: str | Path = "data", *,
                    checksums: Mapping[str, str] | None = None) -> list[str]:
    """The training images' own names (the pickles' ``filenames``), in torchvision's order:
    what the CIFAR-100 split files of the FedSAM repository name images by.  The files are
    md5-verified by torchvision first, as :func:`load_cifar` does."""
    if name not in _VARIANTS:
        raise ValueError(f"unknown CIFAR variant {name!r}; expected 'cifar10' or 'cifar100'")
    dataset_class = _torchvision_class(name, checksums if checksums is not None else checksum_override(name))
    root = Path(root).expanduser().resolve()
    _open(name, dataset_class, root, train=True, download=False)  # md5 check of every file
    names: list[str] = []
    for file_name, _ in dataset_class.train_list:
        path = root / dataset_class.base_folder / file_name
        with open(path, "rb") as handle:
            entry = pickle.load(handle, encoding="latin1")
        listed = entry.get("filenames") if isinstance(entry, dict) else None
        if not isinstance(listed, list):
            raise DatasetError(f"{path}: no 'filenames' list (not a CIFAR training pickle)")
        names.extend(n.decode("utf-8") if isinstance(n, bytes) else str(n) for n in listed)
    return names


def _torchvision_class(name: str, md5s: Mapping[str, str] | None):
    """torchvision's class for ``name``, or a subclass verifying against ``md5s``."""
    import torchvision.datasets  # about a second to import: only when files are decoded

    if name not in _VARIANTS:
        raise ValueError(f"unknown CIFAR variant {name!r}; expected 'cifar10' or 'cifar100'")
    base = getattr(torchvision.datasets, _VARIANTS[name].class_name)
    if md5s is None:
        return base
    missing = [f for f in _file_names(name) if f not in md5s]
    if missing:
        raise ValueError(f"checksums for {name} lack an md5 for: {', '.join(missing)}")
    return type(base.__name__, (base,), {
        "train_list": [[f, md5s[f]] for f, _ in base.train_list],
        "test_list": [[f, md5s[f]] for f, _ in base.test_list],
        "meta": {**base.meta, "md5": md5s[base.meta["filename"]]},
    })


def _file_names(name: str) -> list[str]:
    """The published files of ``name`` (training batches, test batch, metadata)."""
    return list(PUBLISHED_MD5S[name])


def _open(name: str, dataset_class, root: Path, *, train: bool, download: bool):
    try:
        return dataset_class(str(root), train=train, download=download)
    except RuntimeError as err:  # torchvision's "not found or corrupted"
        raise DatasetError(_describe_problem(name, dataset_class, root)) from err
    except OSError as err:  # a network failure while downloading, or unreadable files
        action = "downloading" if download else "reading"
        raise DatasetError(f"{action} {_VARIANTS[name].display_name} in {root} failed: {err}. "
                           f"Fetch it with {_how_to_fetch(name, root)}") from err
    except (pickle.UnpicklingError, EOFError, KeyError, ValueError, TypeError, AttributeError) as err:
        # md5s matched but the content is not a CIFAR pickle: wrong checksums were given.
        culprit = _find_malformed_file(name, dataset_class, root)
        raise DatasetError(f"{_VARIANTS[name].display_name} files in "
                           f"{root / dataset_class.base_folder} "
                           f"passed their md5 check but could not be read ("
                           f"{culprit or repr(err)}); "
                           "the expected checksums do not belong to CIFAR files.") from err


def _label_key(name: str) -> str:
    return "labels" if name == "cifar10" else "fine_labels"


def _batch_problem(entry, name: str) -> str | None:
    """What is wrong with one unpickled CIFAR batch, or None."""
    if not isinstance(entry, dict):
        return f"holds a {type(entry).__name__}, not a batch dict"
    data, labels = entry.get("data"), entry.get(_label_key(name))
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3072:
        got = f"{data.dtype} {list(data.shape)}" if isinstance(data, np.ndarray) else type(data).__name__
        return f"'data' must be uint8 [n, 3072] (32x32 RGB planes), got {got}"
    if labels is None or len(labels) != data.shape[0]:
        return f"'{_label_key(name)}' must hold {data.shape[0]} labels, got {None if labels is None else len(labels)}"
    y = np.asarray(labels)
    classes = _VARIANTS[name].num_classes
    if not np.issubdtype(y.dtype, np.integer) or (y.size and (y.min() < 0 or y.max() >= classes)):
        return f"'{_label_key(name)}' must be integers in 0..{classes - 1}"
    return None


def _find_malformed_file(name: str, dataset_class, root: Path) -> str | None:
    """``"<file>: <problem>"`` for the first batch file that is not a CIFAR batch (files
    that passed their md5 check only), or None."""
    folder = root / dataset_class.base_folder
    for file_name, _ in dataset_class.train_list + dataset_class.test_list:
        path = folder / file_name
        try:
            with open(path, "rb") as handle:
                entry = pickle.load(handle, encoding="latin1")
        except Exception as exc:  # noqa: BLE001 - any failure is this file's
            return f"{path}: not a CIFAR pickle ({type(exc).__name__})"
        problem = _batch_problem(entry, name)
        if problem is not None:
            return f"{path}: {problem}"
    return None


def _describe_problem(name: str, dataset_class, root: Path) -> str:
    display = _VARIANTS[name].display_name
    folder = root / dataset_class.base_folder
    how = _how_to_fetch(name, root)
    if not folder.is_dir():
        return (f"{display} not found in {root} (expected {dataset_class.base_folder}/). "
                f"Fetch it with {how}")
    expected = dict(dataset_class.train_list + dataset_class.test_list)
    expected[dataset_class.meta["filename"]] = dataset_class.meta["md5"]
    missing = [f for f in expected if not (folder / f).is_file()]
    if missing:
        return (f"{display} is incomplete in {folder}: missing {', '.join(missing)}. "
                f"Fetch it with {how}")
    mismatches = [f"{f} (md5 {actual}, expected {md5})" for f, md5 in expected.items()
                  if (actual := file_md5(folder / f)) != md5]
    if mismatches:
        return (f"{display} in {folder} is corrupt: checksum mismatch for "
                f"{'; '.join(mismatches)}. Delete {folder} and fetch it again with {how}")
    return f"{display} in {folder} could not be loaded by torchvision. Fetch it with {how}"


def _how_to_fetch(name: str, root: Path) -> str:
    class_name = _VARIANTS[name].class_name
    return (f"load_dataset({name!r}, root={str(root)!r}, download=True) (`--download` on "
            f"the flcore command line) or: python -c \"import torchvision; "
            f"torchvision.datasets.{class_name}({str(root)!r}, download=True)\"")
