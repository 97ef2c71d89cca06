"""Per-channel statistics of the CIFAR training sets, used to normalise [0, 1] images.

These are the true statistics of the 50,000 training images (mean of pixels, std over
all pixels of a channel), as commonly quoted for CIFAR-10 and CIFAR-100.
"""
from __future__ import annotations

CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR10_STD = (0.2470, 0.2435, 0.2616)
CIFAR100_MEAN = (0.5071, 0.4865, 0.4409)
CIFAR100_STD = (0.2673, 0.2564, 0.2762)

#: Image counts of the published releases (Krizhevsky 2009): 50,000 training and 10,000
#: test images, every class equally represented (CIFAR-10: 5,000 + 1,000 per class;
#: CIFAR-100: 500 + 100 per class).
CIFAR_SIZES = {
    "cifar10": {"classes": 10, "train": 50_000, "test": 10_000},
    "cifar100": {"classes": 100, "train": 50_000, "test": 10_000},
}
