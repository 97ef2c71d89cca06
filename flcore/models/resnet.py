"""ResNet-18 with GroupNorm in place of every BatchNorm.

FedSAM (Caldarola et al. 2022, CIFAR-100-PAM) and FedLESAM (Fan et al. 2024) train a
ResNet-18 (He et al. 2016: BasicBlock, stages [2, 2, 2, 2], widths 64-128-256-512)
whose BatchNorm layers are replaced by GroupNorm (Wu & He 2018) with 2 groups, so the
model has no running statistics and its whole state is its parameters.

Stem decision.  FedSAM does not state the stem.  Inputs are 32x32, so the default is
the CIFAR stem (``stem="cifar"``: one 3x3 convolution, stride 1, no max-pool; He et
al.'s CIFAR practice and the common CIFAR ResNet-18), which keeps a 4x4 map before
pooling instead of 1x1.  FedLESAM's official code instead applies torchvision's
``resnet18`` with the ImageNet stem (7x7 stride-2 convolution, then a 3x3 stride-2
max-pool) to 32x32 images; ``stem="imagenet"`` reproduces that architecture
(11,181,642 parameters for 10 classes, the count the FedLESAM authors report).

Initialisation is PyTorch's default for every layer (torchvision would draw the
convolutions from a Kaiming-normal fan-out distribution instead).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

RESNET18_STAGE_WIDTHS = (64, 128, 256, 512)
RESNET18_BLOCKS_PER_STAGE = (2, 2, 2, 2)
STEMS = ("cifar", "imagenet")


class BasicBlockGN(nn.Module):
    """He et al.'s two-3x3-convolution residual block, normalised with GroupNorm.

    The shortcut is the identity, or a 1x1 strided convolution plus GroupNorm when the
    shape changes (He et al.'s option B).
    """

    def __init__(self, in_planes: int, planes: int, stride: int, groups: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.norm1 = nn.GroupNorm(groups, planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.norm2 = nn.GroupNorm(groups, planes)
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False),
                nn.GroupNorm(groups, planes),
            )
        else:
            self.shortcut = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.norm1(self.conv1(x)))
        out = self.norm2(self.conv2(out))
        # Out-of-place addition: an in-place `+=` breaks under vmap when only one
        # operand carries the client dimension.
        return F.relu(out + self.shortcut(x))


class ResNet18GN(nn.Module):
    """ResNet-18 with ``GroupNorm(groups, C)`` normalisation; see the module docstring.

    ``features`` returns the 512-d globally average-pooled features; ``forward``
    applies the final linear layer ``fc`` to them.
    """

    def __init__(
        self,
        num_classes: int,
        in_channels: int = 3,
        groups: int = 2,
        stem: str = "cifar",
    ) -> None:
        super().__init__()
        if stem not in STEMS:
            raise ValueError(f"ResNet18GN stem must be one of {STEMS}, got {stem!r}")
        self.stem = stem
        width = RESNET18_STAGE_WIDTHS[0]
        if stem == "cifar":
            self.conv1 = nn.Conv2d(in_channels, width, 3, stride=1, padding=1, bias=False)
        else:
            self.conv1 = nn.Conv2d(in_channels, width, 7, stride=2, padding=3, bias=False)
        self.norm1 = nn.GroupNorm(groups, width)

        in_planes = width
        stages = []
        for index, (planes, blocks) in enumerate(
            zip(RESNET18_STAGE_WIDTHS, RESNET18_BLOCKS_PER_STAGE)
        ):
            first_stride = 1 if index == 0 else 2
            stage = []
            for block in range(blocks):
                stride = first_stride if block == 0 else 1
                stage.append(BasicBlockGN(in_planes, planes, stride, groups))
                in_planes = planes
            stages.append(nn.Sequential(*stage))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.fc = nn.Linear(in_planes, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Globally average-pooled features, shape ``[N, 512]``."""
        x = F.relu(self.norm1(self.conv1(x)))
        if self.stem == "imagenet":
            x = F.max_pool2d(x, kernel_size=3, stride=2, padding=1)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))
