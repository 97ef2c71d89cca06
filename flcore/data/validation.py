"""Checks of data handed to flcore, so that a wrong tensor fails before training with a
message that names where it came from (a file, or ``from_tensors``'s arguments).

Training would otherwise fail late or not at all: a label outside ``0..C-1`` raises an
``IndexError`` in the middle of a round, and pixels still in 0..255 (a float64 or uint8
array that was never divided by 255) train silently on inputs scaled wrongly.
"""
from __future__ import annotations

import torch

from flcore.data.errors import DatasetError


def check_labels(y: torch.Tensor, num_classes: int, source: str) -> None:
    """``y`` must be a 1-d integer tensor with values in ``0..num_classes-1``."""
    if y.dim() != 1:
        raise DatasetError(f"{source}: labels must be one-dimensional, got shape {tuple(y.shape)}")
    if y.dtype.is_floating_point or y.dtype.is_complex or y.dtype == torch.bool:
        raise DatasetError(f"{source}: labels must be integers, got {y.dtype}")
    if y.numel() == 0:
        raise DatasetError(f"{source}: no examples")
    low, high = int(y.min()), int(y.max())
    if low < 0 or high >= num_classes:
        bad = int(((y < 0) | (y >= num_classes)).sum())
        raise DatasetError(f"{source}: {bad} label(s) outside 0..{num_classes - 1} "
                           f"(found {low}..{high}); labels must be class indices")


def check_images(x: torch.Tensor, source: str, expected_shape: tuple[int, ...] | None = None) -> None:
    """``x`` must be float32 inputs ``[N, ...]``, finite, and, for images, in [0, 1]."""
    if x.dtype != torch.float32:
        hint = (" (pixels in 0..255? convert with x.float() / 255)" if not x.dtype.is_floating_point
                else " (convert with x.float(); pixel values must be in [0, 1])")
        raise DatasetError(f"{source}: inputs must be float32, got {x.dtype}{hint}")
    if x.dim() < 2 or x.shape[0] == 0:
        raise DatasetError(f"{source}: inputs must have shape [N, ...] with N >= 1, got {tuple(x.shape)}")
    if expected_shape is not None and tuple(x.shape[1:]) != tuple(expected_shape):
        raise DatasetError(f"{source}: each input must have shape {list(expected_shape)}, "
                           f"got {list(x.shape[1:])}")
    if not bool(torch.isfinite(x).all()):
        raise DatasetError(f"{source}: inputs hold NaN or infinite values")
    if x.dim() == 4:
        low, high = float(x.min()), float(x.max())
        if low < 0 or high > 1:
            raise DatasetError(f"{source}: image pixels must be in [0, 1] (unnormalised), found "
                               f"{low:g}..{high:g}; divide 0..255 pixels by 255")
