"""Batched tensor augmentation: random crop with zero padding + horizontal flip.

This is the CIFAR training augmentation of He et al. 2016 (torchvision
``RandomCrop(32, padding=4)`` followed by ``RandomHorizontalFlip()``), applied to a
whole batch at once on any device.  Random draws are separated from their application:
``draw_crop_flip`` draws on the CPU from an explicit generator and ``apply_crop_flip``
applies given draws, so the augmented images depend only on the generator, not on the
device or on how examples are grouped into batches.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F


def draw_crop_flip(n: int, generator: torch.Generator,
                   padding: int = 4) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Draw crop offsets and flip flags for ``n`` images from a CPU ``generator``.

    Returns ``(dy, dx, flip)``: int64 ``[n]`` offsets uniform in ``0..2*padding`` (row and
    column of the crop's top-left corner in the padded image) and bool ``[n]`` flags, each
    True with probability 0.5.  Drawn in that order: all ``dy``, all ``dx``, all ``flip``.
    """
    dy = torch.randint(0, 2 * padding + 1, (n,), generator=generator, dtype=torch.int64)
    dx = torch.randint(0, 2 * padding + 1, (n,), generator=generator, dtype=torch.int64)
    flip = torch.rand(n, generator=generator) < 0.5
    return dy, dx, flip


def apply_crop_flip(x: torch.Tensor, dy: torch.Tensor, dx: torch.Tensor, flip: torch.Tensor,
                    padding: int = 4) -> torch.Tensor:
    """Crop each image of ``x [n, C, H, W]`` from its zero-padded copy, then maybe flip it.

    Image ``i`` becomes ``pad(x[i])[:, dy[i]:dy[i]+H, dx[i]:dx[i]+W]``, mirrored left-right
    where ``flip[i]``.  Apply it to the unnormalised [0, 1] image, as torchvision does, so
    the padding is black.  The draws are moved to ``x.device`` here.
    """
    n, channels, height, width = x.shape
    device = x.device
    dy, dx, flip = dy.to(device), dx.to(device), flip.to(device)
    padded = F.pad(x, (padding, padding, padding, padding))
    rows = dy[:, None] + torch.arange(height, device=device)        # [n, H]
    cols = dx[:, None] + torch.arange(width, device=device)         # [n, W]
    # Flipping the crop reverses the order in which its columns are read.
    cols = torch.where(flip[:, None], cols.flip(1), cols)
    samples = torch.arange(n, device=device)[:, None, None, None]
    chans = torch.arange(channels, device=device)[None, :, None, None]
    return padded[samples, chans, rows[:, None, :, None], cols[:, None, None, :]]


def normalize(x: torch.Tensor, mean: Sequence[float] | None,
              std: Sequence[float] | None) -> torch.Tensor:
    """``(x - mean) / std`` per channel (dimension 1); ``x`` itself if ``mean`` is None.

    The ``None`` case lets callers pass ``dataset.mean``/``dataset.std`` for any dataset.
    """
    if mean is None or std is None:
        if (mean is None) != (std is None):
            raise ValueError("normalize needs both mean and std, or neither")
        return x
    shape = (1, len(mean)) + (1,) * (x.dim() - 2)
    mean_t = torch.as_tensor(mean, dtype=x.dtype, device=x.device).view(shape)
    std_t = torch.as_tensor(std, dtype=x.dtype, device=x.device).view(shape)
    return (x - mean_t) / std_t
