"""Per-channel statistics of the CIFAR training sets, used to normalise [0, 1] images.

These are the true statistics of the 50,000 training images (mean of pixels, std over
all pixels of a channel), as commonly quoted for CIFAR-10 and CIFAR-100.
"""
from __future__ import annotations

CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR10_STD = (0.2470, 0.2435, 0.2616)
CIFAR100_MEAN = (0.5071, 0.4865, 0.4409)
CIFAR100_STD = (0.2673, 0.2564, 0.2762)
