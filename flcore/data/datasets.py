"""In-memory datasets and the ``load_dataset`` entry point."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from flcore.data.validation import check_images, check_labels

#: The data sets :func:`load_dataset` knows.
DATASET_NAMES = ("cifar10", "cifar100", "fmnist", "mnist1d", "pacs", "synthetic")


@dataclass(frozen=True, eq=False)
class Dataset:
    """A whole dataset held in memory as CPU tensors.

    ``train_x``/``test_x`` are float32: images ``[N, C, H, W]`` in [0, 1] and *not*
    normalised (augmentation pads with zeros on the raw image; normalisation happens after,
    see ``flcore.data.augment``); MNIST-1D and synthetic vectors ``[N, D]``.
    ``train_y``/``test_y`` are int64 ``[N]``.  ``mean``/``std`` are per-channel
    normalisation statistics for images and ``None`` for vector data.  ``augment`` asks
    training to apply random crop (padding 4) + horizontal flip.

Multi-domain data sets (PACS) also give each example's domain: ``train_domain`` /
``test_domain`` int64 ``[N]`` in ``0..len(domain_names)-1``; ``None`` (all three) for
every other data set.

    ``eq=False``: equality is identity, since comparing tensors elementwise has no single
    truth value.
    """

    name: str
    train_x: torch.Tensor
    train_y: torch.Tensor
    test_x: torch.Tensor
    test_y: torch.Tensor
    num_classes: int
    mean: tuple[float, ...] | None
    std: tuple[float, ...] | None
    augment: bool
    train_domain: torch.Tensor | None = None
    test_domain: torch.Tensor | None = None
    domain_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        self._check_domains()
        for split in ("train", "test"):
            x, y = getattr(self, f"{split}_x"), getattr(self, f"{split}_y")
            if x.dtype != torch.float32 or y.dtype != torch.int64:
                raise TypeError(f"{self.name}: {split}_x must be float32 and {split}_y int64, "
                                f"got {x.dtype} and {y.dtype}")
            if y.dim() != 1 or x.shape[0] != y.shape[0]:
                raise ValueError(f"{self.name}: {split}_x has {x.shape[0]} rows but "
                                 f"{split}_y has shape {tuple(y.shape)}")
            check_labels(y, self.num_classes, f"{self.name} {split}_y")
        if self.train_x.dim() == 4:
            check_images(self.train_x, f"{self.name} train_x")
            check_images(self.test_x, f"{self.name} test_x")
        if self.test_x.shape[1:] != self.train_x.shape[1:]:
            raise ValueError(f"{self.name}: train and test inputs differ in shape "
                             f"({tuple(self.train_x.shape[1:])} vs {tuple(self.test_x.shape[1:])})")
        if (self.mean is None) != (self.std is None):
            raise ValueError(f"{self.name}: mean and std must both be given or both be None")
        if self.mean is not None and not len(self.mean) == len(self.std) == self.train_x.shape[1]:
            raise ValueError(f"{self.name}: mean/std need one value per channel "
                             f"({self.train_x.shape[1]})")

    def _check_domains(self) -> None:
        given = [self.train_domain is not None, self.test_domain is not None, self.domain_names is not None]
        if any(given) and not all(given):
            raise ValueError(f"{self.name}: train_domain, test_domain and domain_names must all be given or all "
                             "be None")
        if not any(given):
            return
        if len(self.domain_names) < 1 or len(set(self.domain_names)) != len(self.domain_names):
            raise ValueError(f"{self.name}: domain_names must be distinct names, got {self.domain_names!r}")
        for split in ("train", "test"):
            domain, y = getattr(self, f"{split}_domain"), getattr(self, f"{split}_y")
            if domain.dtype != torch.int64 or domain.shape != y.shape:
                raise ValueError(f"{self.name}: {split}_domain must be int64 of shape {tuple(y.shape)}, got "
                                 f"{domain.dtype} of shape {tuple(domain.shape)}")
            check_labels(domain, len(self.domain_names), f"{self.name} {split}_domain")

    @property
    def num_domains(self) -> int:
        """The number of domains (0 for a single-domain data set)."""
        return 0 if self.domain_names is None else len(self.domain_names)

    @property
    def input_shape(self) -> tuple[int, ...]:
        """Shape of one example, e.g. ``(3, 32, 32)`` or ``(40,)``."""
        return tuple(self.train_x.shape[1:])


def load_dataset(name: str, root: str | Path = "data", *, download: bool = False,
                 num_samples: int | None = None, seed: int = 0,
                 checksums: dict[str, str] | None = None, counts: dict[str, int] | None = None,
                 image_size: int | None = None) -> Dataset:
    """Load a dataset by name into memory.

    - ``cifar10`` / ``cifar100``: torchvision's files under ``root`` (md5-verified;
      ``download=True`` fetches them).  ``num_samples`` keeps the first that many training
      images; the test set is untouched.  ``checksums`` (filename -> md5) replaces
      torchvision's md5 list, for fake data written by ``write_fake_cifar``.
    - ``fmnist``: Fashion-MNIST, torchvision's gzipped IDX files under
      ``root/FashionMNIST/raw`` (md5-verified; ``download=True`` fetches them), images
      ``[N, 1, 28, 28]`` with identity normalisation and no augmentation (FedIMA's
      ``ToTensor`` only).  ``num_samples`` and ``checksums`` as for CIFAR
      (``write_fake_fmnist`` writes fake files).
    - ``mnist1d``: generated by the ``mnist1d`` package with ``num_samples`` examples in
      total (default 5000, split 80/20 by the package) and its canonical seed 42, so the
      data are the same for every experiment ``seed``.  Cached on disk (``cache_dir()``).
    - ``pacs``: PACS's image folders ``root/PACS/<domain>/<class>/`` (4 domains, 7
      classes; not downloaded), centre-cropped to ``image_size`` (default 224, FedIMA's),
      ImageNet normalisation statistics, no augmentation, a 90/10 train/test split per
      domain (seed 1) and each example's domain in ``train_domain``/``test_domain``.
      ``counts`` (domain -> images) replaces the published image counts the folders are
      checked against, for fake data written by ``write_fake_pacs``.
    - ``synthetic``: ``make_synthetic`` with 10 classes, inputs of shape ``(40,)``,
      ``num_samples`` training examples (default 2000), 500 test examples and generator
      seed ``seed`` (the only dataset whose content ``seed`` changes).

    ``root`` is used by CIFAR, Fashion-MNIST and PACS, ``download`` by CIFAR and
    Fashion-MNIST only.
    """
    if name not in DATASET_NAMES:
        raise ValueError(f"unknown dataset {name!r}; expected one of {', '.join(DATASET_NAMES)}")
    if num_samples is not None and num_samples <= 0:
        raise ValueError(f"num_samples must be positive, got {num_samples}")
    if checksums is not None and name not in ("cifar10", "cifar100", "fmnist"):
        raise ValueError(f"checksums apply to the CIFAR and Fashion-MNIST datasets only, not {name!r}")
    if (counts is not None or image_size is not None) and name != "pacs":
        raise ValueError(f"counts and image_size apply to the pacs dataset only, not {name!r}")
    if name == "pacs":
        from flcore.data.pacs import PACS_IMAGE_SIZE, load_pacs
        return load_pacs(root, image_size=image_size or PACS_IMAGE_SIZE, num_samples=num_samples,
                         counts=counts)
    # Loaders are imported on demand: torchvision and mnist1d each take about a second to
    # import and most runs need only one of them.
    if name in ("cifar10", "cifar100"):
        from flcore.data.cifar import load_cifar
        return load_cifar(name, root, download=download, num_samples=num_samples,
                          checksums=checksums)
    if name == "fmnist":
        from flcore.data.fmnist import load_fmnist
        return load_fmnist(root, download=download, num_samples=num_samples, checksums=checksums)
    if name == "mnist1d":
        from flcore.data.mnist1d_loader import load_mnist1d
        return load_mnist1d(num_samples=num_samples or 5000)
    from flcore.data.synthetic import make_synthetic
    return make_synthetic(num_samples or 2000, 500, (40,), 10, seed)
