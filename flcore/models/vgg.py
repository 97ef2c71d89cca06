"""VGG-11 with GroupNorm, FedIMA's CIFAR-100 network (Zhou et al. 2024, Table IV, "(VGG11)").

Table IV gives the column as the VGG-11 backbone followed by a projector FC(512,128) and
the classifier FC(128,10) (10 -> the number of classes); the backbone's layers were lost in
the text conversion.  The backbone is Simonyan & Zisserman's configuration A (VGG-11):
3x3 convolutions with padding 1 of widths ``64, M, 128, M, 256, 256, M, 512, 512, M, 512,
512, M`` (``M``: 2x2 max-pool), each followed by GroupNorm with 2 groups (every BatchNorm
replaced, App. D; the group count is the official code's, ``model.py``, ``vgg11_gn``) and
ReLU.  A 32x32 image leaves the five pools as a 512-d vector.

Decisions:

- The projector is linear (no ReLU between FC(512,128) and the classifier): the paper is
  silent on an activation there, calls the ResNet-18 head "a linear projector", and the
  official code applies none.  ``projector_relu=True`` inserts one.
- ``features`` returns the projector's 128-d output (the official code's ``y_feature``).
- PyTorch's default initialisation for every layer.

9,292,938 parameters for 10 classes (9,304,548 for 100).  No buffers: GroupNorm keeps no
running statistics, so the whole state is the parameters.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

#: VGG-11 (configuration A): output widths of the 3x3 convolutions, "M" a 2x2 max-pool.
VGG11_LAYERS = (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M")
#: Input side length the flattened size 512 is computed for (five halvings to 1x1).
VGG_IMAGE_SIZE = 32
PROJECTOR_DIM = 128


class VGG11GN(nn.Module):
    """VGG-11 + GroupNorm(``groups``) for ``[N, in_channels, 32, 32]`` input, then the
    projector FC(512,128) and the classifier FC(128, ``num_classes``)."""

    def __init__(self, num_classes: int, in_channels: int = 3, groups: int = 2,
                 projector_relu: bool = False) -> None:
        super().__init__()
        self.projector_relu = projector_relu
        self.convs = nn.ModuleList()
        self.norms = nn.ModuleList()
        self._pool_after: list[bool] = []
        channels = in_channels
        for width in VGG11_LAYERS:
            if width == "M":
                self._pool_after[-1] = True
                continue
            self.convs.append(nn.Conv2d(channels, width, kernel_size=3, padding=1))
            self.norms.append(nn.GroupNorm(groups, width))
            self._pool_after.append(False)
            channels = width
        self.projector = nn.Linear(channels, PROJECTOR_DIM)
        self.classifier = nn.Linear(PROJECTOR_DIM, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The projector's output, shape ``[N, 128]``."""
        for conv, norm, pool in zip(self.convs, self.norms, self._pool_after):
            x = F.relu(norm(conv(x)))
            if pool:
                x = F.max_pool2d(x, 2)
        x = self.projector(torch.flatten(x, 1))
        return F.relu(x) if self.projector_relu else x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))
