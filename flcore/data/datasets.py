"""In-memory datasets: :class:`Dataset`, the names :func:`flcore.data.loading.load_dataset` knows."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from flcore.data.validation import check_images, check_labels

#: The data sets :func:`flcore.data.loading.load_dataset` knows.
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

    Data sets of 8-bit images (CIFAR, Fashion-MNIST, PACS) also keep their pixels as read:
    ``train_pixels`` / ``test_pixels`` uint8 ``[N, H, W, C]`` (channels last, as the files
    and PIL hold them), the images of ``train_x`` / ``test_x`` times 255.  Training moves
    these bytes to the device (a quarter of the float32 images) and converts each batch
    there.  Such a data set may be built with ``train_x=None`` / ``test_x=None``: the float
    images are then made from the pixels on first access (``pixels_to_images``), so a run
    that trains from the pixels never pays for the conversion.

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
    train_pixels: torch.Tensor | None = None
    test_pixels: torch.Tensor | None = None

    def __post_init__(self) -> None:
        self._check_domains()
        for split in ("train", "test"):
            x, y = self.__dict__[f"{split}_x"], getattr(self, f"{split}_y")
            pixels = self._check_pixels(split)
            if x is None:
                if pixels is None:
                    raise TypeError(f"{self.name}: {split}_x is None and no {split}_pixels are given")
                object.__delattr__(self, f"{split}_x")  # made from the pixels on first access
                rows = pixels.shape[0]
            else:
                if x.dtype != torch.float32:
                    raise TypeError(f"{self.name}: {split}_x must be float32 and {split}_y int64, "
                                    f"got {x.dtype} and {y.dtype}")
                rows = x.shape[0]
            if y.dtype != torch.int64:
                raise TypeError(f"{self.name}: {split}_x must be float32 and {split}_y int64, "
                                f"got {'uint8 pixels' if x is None else x.dtype} and {y.dtype}")
            if y.dim() != 1 or rows != y.shape[0]:
                raise ValueError(f"{self.name}: {split}_x has {rows} rows but "
                                 f"{split}_y has shape {tuple(y.shape)}")
            check_labels(y, self.num_classes, f"{self.name} {split}_y")
            if x is not None and x.dim() == 4:
                check_images(x, f"{self.name} {split}_x")
        shape = self.input_shape
        test_shape = self._shape_of("test")
        if test_shape != shape:
            raise ValueError(f"{self.name}: train and test inputs differ in shape "
                             f"({shape} vs {test_shape})")
        if (self.mean is None) != (self.std is None):
            raise ValueError(f"{self.name}: mean and std must both be given or both be None")
        if self.mean is not None and not len(self.mean) == len(self.std) == shape[0]:
            raise ValueError(f"{self.name}: mean/std need one value per channel "
                             f"({shape[0]})")

    def _check_pixels(self, split: str) -> torch.Tensor | None:
        pixels = getattr(self, f"{split}_pixels")
        if pixels is None:
            return None
        if pixels.dtype != torch.uint8 or pixels.dim() != 4:
            raise TypeError(f"{self.name}: {split}_pixels must be uint8 [N, H, W, C], got {pixels.dtype} "
                            f"of shape {tuple(pixels.shape)}")
        x = self.__dict__.get(f"{split}_x")
        if x is not None and tuple(x.shape) != (pixels.shape[0], pixels.shape[3], *pixels.shape[1:3]):
            raise ValueError(f"{self.name}: {split}_pixels {tuple(pixels.shape)} do not match "
                             f"{split}_x {tuple(x.shape)}")
        return pixels

    def __getattr__(self, name: str):
        # Only reached when ``train_x`` / ``test_x`` were left to be made from the pixels.
        if name in ("train_x", "test_x"):
            pixels = self.__dict__.get(name.replace("_x", "_pixels"))
            if pixels is not None:
                images = pixels_to_images(pixels)
                object.__setattr__(self, name, images)
                return images
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _shape_of(self, split: str) -> tuple[int, ...]:
        x = self.__dict__.get(f"{split}_x")
        if x is not None:
            return tuple(x.shape[1:])
        pixels = self.__dict__[f"{split}_pixels"]
        return (pixels.shape[3], *pixels.shape[1:3])

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
        return self._shape_of("train")


def pixels_to_images(pixels: torch.Tensor) -> torch.Tensor:
    """uint8 pixels ``[N, H, W, C]`` as float32 images ``[N, C, H, W]`` in [0, 1] (``p / 255``,
    contiguous): the conversion every loader applies, so images made here equal those a
    loader makes from the same bytes bit for bit."""
    return pixels.permute(0, 3, 1, 2).contiguous().to(torch.float32).div_(255.0)
