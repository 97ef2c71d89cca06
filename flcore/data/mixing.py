"""Mixup and Cutout, the strong augmentations of the FedSAM paper (its Tables 3, 4, 17;
docs/algorithms.md section 5), on tensors.

- Mixup (Zhang et al. 2018): one ``lam ~ Beta(a, a)`` per minibatch, the partner of each
  sample is a random permutation of the batch, ``x~ = lam x + (1 - lam) x[perm]`` and the
  loss is ``lam CE(f(x~), y) + (1 - lam) CE(f(x~), y[perm])``.  That loss equals the
  cross-entropy against the soft target ``lam e_y + (1 - lam) e_y[perm]``, which is how it
  is expressed here, so SAM-type methods use the same mixed batch in both passes.
- Cutout (DeVries & Taylor 2017): one square of zeros per image, its centre uniform over
  the image, clipped at the borders, applied after normalisation (the FedSAM paper's
  code).  On 1-D inputs (MNIST-1D) it zeroes one window of ``size`` positions.

Draws are made on the CPU from explicit generators and applied on the device, like
``flcore.data.augment``.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def draw_mixup(n: int, alpha: float, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``(lam, perm)``: a scalar ``lam ~ Beta(alpha, alpha)`` and a permutation of ``n``."""
    # torch's Beta sampler takes no generator: seed the global one from ours, in a fork.
    seed = int(torch.randint(0, 2**62, (1,), generator=generator))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        lam = torch.distributions.Beta(torch.tensor(float(alpha)), torch.tensor(float(alpha))).sample()
    perm = torch.randperm(n, generator=generator)
    return lam, perm


def mix(x: torch.Tensor, y: torch.Tensor, num_classes: int, lam: torch.Tensor, perm: torch.Tensor):
    """Mixed inputs and soft targets for one batch ``x [n, ...]``, ``y [n]``."""
    lam = lam.to(x.device, x.dtype)
    perm = perm.to(x.device)
    onehot = F.one_hot(y, num_classes).to(x.dtype)
    return lam * x + (1 - lam) * x[perm], lam * onehot + (1 - lam) * onehot[perm]


def draw_cutout(n: int, spatial_shape: tuple[int, ...], generator: torch.Generator) -> torch.Tensor:
    """Centres ``[n, len(spatial_shape)]``, uniform over the positions of the input."""
    return torch.stack([torch.randint(0, size, (n,), generator=generator) for size in spatial_shape], dim=1)


def apply_cutout(x: torch.Tensor, centres: torch.Tensor, size: int) -> torch.Tensor:
    """Zero a ``size``-wide square (or window, for 1-D inputs) around each centre."""
    centres = centres.to(x.device)
    spatial = x.shape[2:] if x.dim() == 4 else x.shape[1:]
    keep = torch.ones((x.shape[0], *spatial), dtype=x.dtype, device=x.device)
    half = size // 2
    masks = []
    for axis, length in enumerate(spatial):
        pos = torch.arange(length, device=x.device)
        low = (centres[:, axis] - half).clamp(min=0)
        high = (centres[:, axis] - half + size).clamp(max=length)
        masks.append((pos[None, :] >= low[:, None]) & (pos[None, :] < high[:, None]))  # [n, length]
    if len(spatial) == 2:
        hole = masks[0][:, :, None] & masks[1][:, None, :]
    else:
        hole = masks[0]
    keep = keep.masked_fill(hole, 0)
    return x * (keep[:, None] if x.dim() == 4 else keep)
