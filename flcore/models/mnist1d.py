"""Small networks for MNIST-1D (Greydanus 2020), the CPU default dataset.

MNIST-1D samples are 40-point signals in 10 classes.  These models are kept to a few
tens of thousands of parameters so that a federated run trains in seconds on two CPU
cores.  Both take ``[N, input_len]`` float input and, like every flcore model, hold
parameters only (no buffers, no normalisation statistics).

- ``MNIST1DMLP``: two hidden ReLU layers (15,210 parameters at the defaults).
- ``MNIST1DCNN``: three strided 1-D convolutions, as in the MNIST-1D reference
  ``ConvBase`` (kernel 5, stride 2, padding 1), then one linear layer (11,786
  parameters at the defaults: the signal shrinks 40 -> 19 -> 9 -> 4).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

MNIST1D_LENGTH = 40
_KERNEL, _STRIDE, _PADDING, _CONV_LAYERS = 5, 2, 1, 3


def mnist1d_cnn_output_length(input_len: int) -> int:
    """Signal length after the CNN's three convolutions (<= 0: input too short)."""
    length = input_len
    for _ in range(_CONV_LAYERS):
        length = (length + 2 * _PADDING - _KERNEL) // _STRIDE + 1
    return length


def _shortest_cnn_input() -> int:
    length = 1
    while mnist1d_cnn_output_length(length) < 1:
        length += 1
    return length


#: Shortest signal the CNN accepts (each convolution needs a non-empty output).
MNIST1D_CNN_MIN_LENGTH = _shortest_cnn_input()


class MNIST1DMLP(nn.Module):
    """``input_len -> hidden -> hidden -> num_classes`` with ReLU; ``features`` is the
    last hidden layer (``[N, hidden]``)."""

    def __init__(self, num_classes: int = 10, input_len: int = MNIST1D_LENGTH, hidden: int = 100) -> None:
        super().__init__()
        self.fc1 = nn.Linear(input_len, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.fc2(F.relu(self.fc1(x))))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(self.features(x))


class MNIST1DCNN(nn.Module):
    """Three ``Conv1d(k=5, stride=2, padding=1)`` + ReLU layers, flatten, linear.

    ``features`` is the flattened output of the last convolution
    (``[N, channels * mnist1d_cnn_output_length(input_len)]``).
    """

    def __init__(self, num_classes: int = 10, input_len: int = MNIST1D_LENGTH, channels: int = 32) -> None:
        super().__init__()
        out_len = mnist1d_cnn_output_length(input_len)
        if out_len < 1:
            raise ValueError(f"MNIST1DCNN needs input_len >= {MNIST1D_CNN_MIN_LENGTH}, got {input_len}")
        conv = dict(kernel_size=_KERNEL, stride=_STRIDE, padding=_PADDING)
        self.conv1 = nn.Conv1d(1, channels, **conv)
        self.conv2 = nn.Conv1d(channels, channels, **conv)
        self.conv3 = nn.Conv1d(channels, channels, **conv)
        self.fc = nn.Linear(channels * out_len, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        x = x.unsqueeze(1)  # [N, L] -> [N, 1, L]
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.relu(self.conv3(x))
        return torch.flatten(x, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))
