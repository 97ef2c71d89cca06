"""Deterministic synthetic classification data for tests and benchmarks.

Each class has a fixed mean input; an example is its class mean plus Gaussian noise, so
the task is learnable (a nearest-class-mean rule is far above chance) yet not trivial.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import torch

from flcore.data.cifar_stats import CIFAR10_MEAN, CIFAR10_STD
from flcore.data.datasets import Dataset

# Vectors: class means ~ N(0, 0.5^2) per coordinate, noise N(0, 1).
_VECTOR_MEAN_SCALE = 0.5
# Images: class means are a 4x4 grid of colours in [0.2, 0.8] per channel, upsampled to
# H x W, so that they survive random crops and flips; pixel noise N(0, 0.15^2), clipped.
_IMAGE_GRID = 4
_IMAGE_NOISE = 0.15


def make_synthetic(num_train: int, num_test: int, input_shape: tuple[int, ...] = (40,),
                   num_classes: int = 10, seed: int = 0) -> Dataset:
    """A synthetic dataset with balanced classes, the same for the same arguments.

    If ``input_shape`` has 3 dims ``(C, H, W)`` the inputs are images in [0, 1] with
    ``mean``/``std`` set to the per-channel statistics of the generated training images;
    otherwise they are unbounded vectors with ``mean``/``std`` ``None``.  ``augment`` is
    False (see ``make_cifar_like`` for a CIFAR stand-in).
    """
    if num_train <= 0 or num_test <= 0 or num_classes <= 0:
        raise ValueError("num_train, num_test and num_classes must be positive, got "
                         f"{num_train}, {num_test}, {num_classes}")
    input_shape = tuple(int(d) for d in input_shape)
    rng = np.random.default_rng(seed)
    is_image = len(input_shape) == 3
    class_means = (_image_means(rng, input_shape, num_classes) if is_image
                   else rng.normal(0.0, _VECTOR_MEAN_SCALE, (num_classes, *input_shape)))
    class_means = class_means.astype(np.float32)
    noise = _IMAGE_NOISE if is_image else 1.0

    def sample(n: int) -> tuple[torch.Tensor, torch.Tensor]:
        labels = rng.permutation(np.arange(n) % num_classes)
        x = rng.standard_normal((n, *input_shape), dtype=np.float32)
        x *= noise
        x += class_means[labels]
        if is_image:
            np.clip(x, 0.0, 1.0, out=x)
        return torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64))

    train_x, train_y = sample(num_train)
    test_x, test_y = sample(num_test)
    mean = std = None
    if is_image:
        mean = tuple(train_x.mean(dim=(0, 2, 3)).tolist())
        std = tuple(train_x.std(dim=(0, 2, 3)).tolist())
    return Dataset("synthetic", train_x, train_y, test_x, test_y, num_classes, mean, std,
                   augment=False)


def make_cifar_like(num_train: int, num_test: int, num_classes: int = 10,
                    seed: int = 0) -> Dataset:
    """Synthetic images shaped like CIFAR (``[N, 3, 32, 32]``) for benchmarks.

    The images are rounded to 8-bit pixels (``train_pixels``), and CIFAR-10's
    normalisation statistics and ``augment=True`` are used, so the training path is
    exactly the one CIFAR takes.
    """
    data = make_synthetic(num_train, num_test, (3, 32, 32), num_classes, seed)

    def pixels(x: torch.Tensor) -> torch.Tensor:
        return x.mul(255).round_().to(torch.uint8).permute(0, 2, 3, 1).contiguous()

    return dataclasses.replace(data, name="cifar_like", train_x=None, test_x=None, mean=CIFAR10_MEAN,
                               std=CIFAR10_STD, augment=True, train_pixels=pixels(data.train_x),
                               test_pixels=pixels(data.test_x))


def _image_means(rng: np.random.Generator, shape: tuple[int, int, int],
                 num_classes: int) -> np.ndarray:
    channels, height, width = shape
    grid = rng.uniform(0.2, 0.8, (num_classes, channels, _IMAGE_GRID, _IMAGE_GRID))
    rows = np.arange(height) * _IMAGE_GRID // height
    cols = np.arange(width) * _IMAGE_GRID // width
    return grid[:, :, rows[:, None], cols[None, :]]
