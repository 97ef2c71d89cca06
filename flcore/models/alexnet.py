"""AlexNet with GroupNorm, FedIMA's PACS network (Zhou et al. 2024, Table IV, "PACS (AlexNet)").

The layers are the official code's (``model.py``, ``AlexNet`` with GroupNorm; notes 4.3):
AlexNet's five convolutions (Krizhevsky et al. 2012, with torchvision's widths), each
followed by GroupNorm with 32 groups (every BatchNorm replaced, App. D) and ReLU::

    Conv2d(3, 64, 11, stride 4, padding 2) -> GN(32) -> ReLU -> MaxPool2d(3, 2)
    Conv2d(64, 192, 5, padding 2)          -> GN(32) -> ReLU -> MaxPool2d(3, 2)
    Conv2d(192, 384, 3, padding 1)         -> GN(32) -> ReLU
    Conv2d(384, 256, 3, padding 1)         -> GN(32) -> ReLU
    Conv2d(256, 256, 3, padding 1)         -> GN(32) -> ReLU -> MaxPool2d(3, 2)
    AdaptiveAvgPool2d(6, 6), flatten (256 * 6 * 6 = 9216)
    Linear(9216, 1024) -> ReLU -> Linear(1024, 512) -> ReLU -> Linear(512, C)

The paper's Table IV gives the head as FC(4096,512) and FC(512,10) (10 outputs, though PACS
has 7 classes; the first layers were lost in the text): flcore takes the code's head, the
network behind the published numbers (book, "Known differences").

``features`` returns the 512-d penultimate activations (the code's ``dims_feature`` 512).
No dropout, PyTorch's default initialisation, no buffers (GroupNorm keeps no running
statistics), no in-place operations.  A square input needs a side of at least
``ALEXNET_MIN_SIDE`` (63) for the third max-pool to have an input; 224 at the paper.
12,438,599 parameters for 7 classes.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

#: (out channels, kernel, stride, padding, max-pool after) of the five convolutions.
ALEXNET_CONVS = ((64, 11, 4, 2, True), (192, 5, 1, 2, True), (384, 3, 1, 1, False),
                 (256, 3, 1, 1, False), (256, 3, 1, 1, True))
#: Side of the adaptive average pool's output (flattened: 256 * 6 * 6 = 9216).
POOLED_SIDE = 6
HIDDEN = (1024, 512)
GROUPS = 32
#: Smallest input side the three 3x3 stride-2 max-pools can take.
ALEXNET_MIN_SIDE = 63


class AlexNetGN(nn.Module):
    """AlexNet + GroupNorm(``groups``) for ``[N, in_channels, H, W]`` input (H, W >= 63),
    then FC(9216,1024)-ReLU-FC(1024,512)-ReLU-FC(512, ``num_classes``)."""

    def __init__(self, num_classes: int, in_channels: int = 3, groups: int = GROUPS) -> None:
        super().__init__()
        self.convs = nn.ModuleList()
        self.norms = nn.ModuleList()
        self._pool_after: list[bool] = []
        channels = in_channels
        for width, kernel, stride, padding, pool in ALEXNET_CONVS:
            self.convs.append(nn.Conv2d(channels, width, kernel_size=kernel, stride=stride, padding=padding))
            self.norms.append(nn.GroupNorm(groups, width))
            self._pool_after.append(pool)
            channels = width
        self.fc1 = nn.Linear(channels * POOLED_SIDE * POOLED_SIDE, HIDDEN[0])
        self.fc2 = nn.Linear(HIDDEN[0], HIDDEN[1])
        self.fc3 = nn.Linear(HIDDEN[1], num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Penultimate activations, shape ``[N, 512]``."""
        for conv, norm, pool in zip(self.convs, self.norms, self._pool_after):
            x = F.relu(norm(conv(x)))
            if pool:
                x = F.max_pool2d(x, kernel_size=3, stride=2)
        x = torch.flatten(F.adaptive_avg_pool2d(x, POOLED_SIDE), 1)
        x = F.relu(self.fc1(x))
        return F.relu(self.fc2(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(self.features(x))
