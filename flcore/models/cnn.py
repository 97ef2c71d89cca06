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


class TwoConvCNN(nn.Module):
    """Two unpadded 5x5 convolutions, each followed by ReLU and 2x2 max-pooling, then three
    linear layers with ReLU between them: the LeNet-like shape of the CIFAR CNN below and
    of FedIMA's Fashion-MNIST CNN (:mod:`flcore.models.fmnist_cnn`), which differ only in
    widths.  ``features`` returns the penultimate activations (``hidden[1]`` wide);
    ``forward`` applies the last linear layer ``fc3`` to them.  Any memory format (e.g.
    ``channels_last``) is accepted: flattening goes through ``torch.flatten``, which follows
    the logical ``[C, H, W]`` order rather than the storage order.
    """

    def __init__(self, num_classes: int, in_channels: int, channels: int, flat_features: int,
                 hidden: tuple[int, int]) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, channels, kernel_size=5)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=5)
        self.fc1 = nn.Linear(flat_features, hidden[0])
        self.fc2 = nn.Linear(hidden[0], hidden[1])
        self.fc3 = nn.Linear(hidden[1], num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Penultimate activations, shape ``[N, hidden[1]]``."""
        # max-pool before ReLU: the same numbers as ReLU before max-pool (both are
        # monotone), with the ReLU on a 4x smaller tensor (the official CIFAR-100 file's order)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.relu(self.fc2(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(self.features(x))


class CifarCNN(TwoConvCNN):
    """The papers' 2-conv / 3-FC CIFAR network for ``[N, in_channels, 32, 32]`` input;
    ``features`` is 192-d."""

    def __init__(self, num_classes: int, in_channels: int = 3) -> None:
        super().__init__(num_classes, in_channels, channels=64, flat_features=_FLAT_FEATURES, hidden=(384, 192))
