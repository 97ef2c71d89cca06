"""The CIFAR CNN of FedSAM, FedGloSS and FedGF.

Caldarola et al. 2022 (FedSAM/FedASAM, after Hsu et al. 2020), Caldarola et al. 2024
(FedGloSS) and Lee & Yoon 2024 (FedGF) all train the same LeNet-like network on
CIFAR-10/100 (``FedSAMcnn`` in their official code)::

    Conv2d(3, 64, 5) -> ReLU -> MaxPool2d(2)      # 32x32 -> 28x28 -> 14x14
    Conv2d(64, 64, 5) -> ReLU -> MaxPool2d(2)     # 14x14 -> 10x10 -> 5x5
    flatten (64 * 5 * 5 = 1600)
    Linear(1600, 384) -> ReLU -> Linear(384, 192) -> ReLU -> Linear(192, C)

No padding, no normalisation, no dropout: 797,962 parameters for 10 classes and
815,332 for 100.  The network has no buffers, so its whole state is its parameters.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

#: Input side length the flattened size 1600 is computed for.
CIFAR_CNN_IMAGE_SIZE = 32
_FLAT_FEATURES = 64 * 5 * 5


class CifarCNN(nn.Module):
    """The papers' 2-conv / 3-FC CIFAR network for ``[N, in_channels, 32, 32]`` input.

    ``features`` returns the 192-d penultimate activations; ``forward`` applies the
    last linear layer to them.  Any memory format (e.g. ``channels_last``) is accepted:
    flattening goes through ``torch.flatten``, which follows the logical ``[C, H, W]``
    order rather than the storage order.
    """

    def __init__(self, num_classes: int, in_channels: int = 3) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 64, kernel_size=5)
        self.conv2 = nn.Conv2d(64, 64, kernel_size=5)
        self.fc1 = nn.Linear(_FLAT_FEATURES, 384)
        self.fc2 = nn.Linear(384, 192)
        self.fc3 = nn.Linear(192, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Penultimate activations, shape ``[N, 192]``."""
        # max-pool before ReLU: the same numbers as ReLU before max-pool (both are
        # monotone), with the ReLU on a 4x smaller tensor (the official CIFAR-100 file's order)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.relu(self.fc2(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(self.features(x))
