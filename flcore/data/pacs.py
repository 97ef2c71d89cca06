"""PACS (Li et al. 2017) from its image-folder layout, as one tensor with domain labels.

FedIMA's label + feature skew data set (Zhou et al. 2024, Sec. VII-A1; notes 4.1): the
images of ``<root>/PACS/<domain>/<class>/`` (:mod:`flcore.data.pacs_format`) are read
with PIL, converted to RGB, their shorter side scaled to ``ceil(image_size * 227 / 224)``
(227: the release's side, so at ``image_size = 224`` nothing is rescaled and the step is
the official code's ``CenterCrop(224)``; a smaller ``image_size`` keeps the same field of
view) and centre-cropped to ``image_size`` x ``image_size``.  Images are float32
``[N, 3, S, S]`` in [0, 1]; the dataset's normalisation statistics are ImageNet's; no
augmentation.

Each domain is split 90/10 into train and test at random with seed 1 (the official code's
seed), the test part ``ceil(n / 10)`` images (1,000 of the 9,991); domains are stacked in
the order of ``DOMAINS`` and each example carries its domain in ``train_domain`` /
``test_domain``.

There is no published checksum list for the folder layout: what is checked is that every
domain and class folder is present and each domain holds the published image count
(``PUBLISHED_COUNTS``); fake data from ``write_fake_pacs`` pass their counts as
``counts=`` or inside ``expected_pacs_counts(counts)``.  The data are not downloaded:
a missing or incomplete folder raises one ``DatasetError`` saying where to get them.

Decoding the 9,991 images takes most of a minute, so the decoded uint8 pixels are cached
(:func:`flcore.data.cache.cached_decode`) with the md5 of every image file they came from:
a later load lists the folders, checks each file's stamp (or, where it changed, its md5)
and reads one checked file of arrays.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import torch

from flcore.data.cache import cached_decode, decoded_problem
from flcore.data.cifar_format import file_md5
from flcore.data.datasets import Dataset
from flcore.data.errors import DatasetError
from flcore.data.pacs_format import CLASSES, DOMAINS, IMAGE_SUFFIXES, PACS_FOLDER, PUBLISHED_COUNTS

#: The paper's input side (224x224 centre crop).
PACS_IMAGE_SIZE = 224
#: The release's image side: ``image_size`` maps to a resize of the shorter side to
#: ``ceil(image_size * RELEASE_SIDE / PACS_IMAGE_SIZE)`` (none at 224).
RELEASE_SIDE = 227
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
#: Seed of the per-domain 90/10 train/test split (the official code's).
SPLIT_SEED = 1
TEST_FRACTION = 0.1
DISPLAY_NAME = "PACS"
WHERE_TO_GET = ("PACS is not downloaded by flcore: get the image-folder release from the PACS authors "
                "(Li et al. 2017, https://domaingeneralization.github.io/ ; mirrored on Kaggle and the "
                "Hugging Face hub) and unpack it so that {folder}/<domain>/<class>/ holds the images")

_counts_override: contextvars.ContextVar[Mapping[str, int] | None] = contextvars.ContextVar(
    "flcore_pacs_counts", default=None)


@contextlib.contextmanager
def expected_pacs_counts(counts: Mapping[str, int]) -> Iterator[None]:
    """Within the block, check PACS's folders against ``counts`` (domain -> images), for code
    that reaches ``load_dataset`` indirectly (an experiment run on ``write_fake_pacs`` data)."""
    _check_counts(counts)
    token = _counts_override.set(dict(counts))
    try:
        yield
    finally:
        _counts_override.reset(token)


def train_test_sizes(counts: Mapping[str, int] = PUBLISHED_COUNTS) -> tuple[int, int]:
    """(train, test) images of the split for the per-domain ``counts``: 8,991 and 1,000."""
    test = sum(math.ceil(TEST_FRACTION * n) for n in counts.values())
    return sum(counts.values()) - test, test


def load_pacs(root: str | Path = "data", *, image_size: int = PACS_IMAGE_SIZE, num_samples: int | None = None,
              counts: Mapping[str, int] | None = None) -> Dataset:
    """PACS under ``root`` (module docstring).  ``num_samples`` keeps that many training
    images, taken evenly at random across the training set (seed 1), so every domain stays;
    the test set is untouched.  Raises ``DatasetError`` for missing folders, wrong image
    counts or unreadable images."""
    if counts is None:
        counts = _counts_override.get()
    if counts is None:
        counts = PUBLISHED_COUNTS
    else:
        _check_counts(counts)
    if isinstance(image_size, bool) or not isinstance(image_size, int) or image_size < 1:
        raise ValueError(f"image_size must be a positive integer, got {image_size!r}")
    folder = Path(root).expanduser().resolve() / PACS_FOLDER
    files = _list_images(folder, counts)
    sources = {str(path.relative_to(folder)): path for domain in DOMAINS for path in files[domain][0]}
    out = cached_decode("pacs", {"image_size": image_size, "counts": dict(counts), "folder": str(folder)},
                        sources, None, lambda: _decode(files, image_size, folder), file_md5,
                        check=lambda a: decoded_problem(a, (image_size, image_size, 3), len(CLASSES),
                                                        {"d": len(DOMAINS)}))
    keep = slice(None)
    if num_samples is not None:
        n = len(out["train_y"])
        if not 0 < num_samples <= n:
            raise ValueError(f"num_samples must be in 1..{n} for pacs, got {num_samples}")
        keep = np.sort(np.random.default_rng(SPLIT_SEED).permutation(n)[:num_samples])
    tensor = {k: torch.from_numpy(np.ascontiguousarray(v[keep]) if k.startswith("train") else v)
              for k, v in out.items()}
    return Dataset("pacs", None, tensor["train_y"], None, tensor["test_y"], len(CLASSES),
                   IMAGENET_MEAN, IMAGENET_STD, augment=False, train_domain=tensor["train_d"],
                   test_domain=tensor["test_d"], domain_names=DOMAINS, train_pixels=tensor["train_x"],
                   test_pixels=tensor["test_x"])


def _decode(files: dict[str, tuple[list[Path], np.ndarray]], image_size: int,
            folder: Path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Every image as uint8 pixels ``[S, S, 3]``, split 90/10 per domain (module docstring),
    and the md5 of every file read."""
    rng = np.random.default_rng(SPLIT_SEED)
    parts: dict[str, list] = {"train_x": [], "train_y": [], "train_d": [], "test_x": [], "test_y": [], "test_d": []}
    md5s = {}
    for d, domain in enumerate(DOMAINS):
        paths, labels = files[domain]
        order = rng.permutation(len(paths))
        num_test = math.ceil(TEST_FRACTION * len(paths))
        for split, chosen in (("test", order[:num_test]), ("train", order[num_test:])):
            chosen = np.sort(chosen)
            parts[f"{split}_x"].append(np.stack([_read_pixels(paths[i], image_size) for i in chosen]))
            parts[f"{split}_y"].append(labels[chosen].astype(np.int64))
            parts[f"{split}_d"].append(np.full(len(chosen), d, dtype=np.int64))
        md5s.update({str(path.relative_to(folder)): file_md5(path) for path in paths})
    return {k: np.concatenate(v) for k, v in parts.items()}, md5s


def _check_counts(counts: Mapping[str, int]) -> None:
    if set(counts) != set(DOMAINS) or any(not isinstance(n, int) or n < 1 for n in counts.values()):
        raise ValueError(f"PACS counts must give a positive image count for each of {', '.join(DOMAINS)}, "
                         f"got {dict(counts)}")


def _list_images(folder: Path, counts: Mapping[str, int]) -> dict[str, tuple[list[Path], np.ndarray]]:
    """Each domain's image paths (sorted by class, then name) and labels; ``DatasetError``
    naming what is missing or miscounted."""
    where = WHERE_TO_GET.format(folder=folder)
    if not folder.is_dir():
        raise DatasetError(f"{DISPLAY_NAME} not found: no folder {folder}. {where}")
    missing = [f"{domain}/{name}" for domain in DOMAINS for name in CLASSES
               if not (folder / domain / name).is_dir()]
    if missing:
        raise DatasetError(f"{DISPLAY_NAME} is incomplete in {folder}: missing the folder(s) "
                           f"{', '.join(missing)}. {where}")
    out, wrong = {}, []
    for domain in DOMAINS:
        paths, labels = [], []
        for label, name in enumerate(CLASSES):
            found = sorted(p for p in (folder / domain / name).iterdir()
                           if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
            paths += found
            labels += [label] * len(found)
        if len(paths) != counts[domain]:
            wrong.append(f"{domain} has {len(paths)} images, expected {counts[domain]}")
        out[domain] = (paths, np.asarray(labels, dtype=np.int64))
    if wrong:
        raise DatasetError(f"{DISPLAY_NAME} in {folder} is incomplete or not the published release: "
                           f"{'; '.join(wrong)}. {where}")
    return out


def _read_pixels(path: Path, image_size: int) -> np.ndarray:
    """``[S, S, 3]`` uint8: RGB, shorter side scaled (module docstring), centre crop."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            image = image.convert("RGB")
    except (OSError, UnidentifiedImageError) as err:
        raise DatasetError(f"{path}: not a readable image ({err})") from err
    side = math.ceil(image_size * RELEASE_SIDE / PACS_IMAGE_SIZE)
    width, height = image.size
    if min(width, height) != side:
        scale = side / min(width, height)
        image = image.resize((max(side, round(width * scale)), max(side, round(height * scale))),
                             Image.Resampling.BILINEAR)
        width, height = image.size
    left, top = round((width - image_size) / 2), round((height - image_size) / 2)  # torchvision's CenterCrop
    image = image.crop((left, top, left + image_size, top + image_size))
    return np.asarray(image, dtype=np.uint8).copy()
