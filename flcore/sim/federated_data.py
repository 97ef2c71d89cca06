"""A dataset split across clients and held on the compute device (design guide section 6).

The whole training set lives in one tensor on the device; a client is a tensor of indices
into it.  Batches are gathered by index and augmented on tensors (random crop with padding
4 and horizontal flip for CIFAR), so there is no DataLoader and no per-client copy.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..data import apply_crop_flip, load_dataset, normalize, partition


@dataclass
class FederatedData:
    train_x: torch.Tensor  # [N, ...] unnormalised, on the device
    train_y: torch.Tensor  # [N]
    test_x: torch.Tensor  # normalised once, on the device
    test_y: torch.Tensor
    client_indices: list[torch.Tensor]  # one index tensor per client, on the device
    num_classes: int
    augment: bool
    mean: tuple[float, ...] | None
    std: tuple[float, ...] | None

    @property
    def num_clients(self) -> int:
        return len(self.client_indices)

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.train_x.shape[1:])

    @property
    def client_sizes(self) -> list[int]:
        return [int(idx.numel()) for idx in self.client_indices]

    def client_of_sample(self) -> torch.Tensor:
        """``[N]``: the client holding each training sample (-1 if none)."""
        owner = torch.full((self.train_x.shape[0],), -1, dtype=torch.long, device=self.train_x.device)
        for k, idx in enumerate(self.client_indices):
            owner[idx] = k
        return owner

    def eval_train_inputs(self) -> torch.Tensor:
        """The whole training set, normalised and not augmented (for per-client accuracy)."""
        x = self.train_x
        return normalize(x, self.mean, self.std) if self.mean is not None else x

    def train_inputs(self, index: torch.Tensor, crop: tuple | None) -> torch.Tensor:
        """Training inputs for global indices ``index`` (any shape), augmented with the
        given crop/flip draws (same shape as ``index``) and normalised."""
        shape = index.shape
        x = self.train_x[index.reshape(-1)]
        if self.augment and crop is not None:
            dy, dx, flip = (t.reshape(-1) for t in crop)
            x = apply_crop_flip(x, dy, dx, flip)
        if self.mean is not None:
            x = normalize(x, self.mean, self.std)
        return x.reshape(*shape, *x.shape[1:])


def _channels_last(x: torch.Tensor) -> torch.Tensor:
    """Images in channels-last memory order: the same numbers, faster convolution and
    max-pool kernels on CPUs (about 13% per step for the CIFAR CNN on two cores)."""
    if x.dim() == 4:
        return x.contiguous(memory_format=torch.channels_last)
    return x


def build_federated_data(cfg, device: torch.device) -> FederatedData:
    """Load ``cfg.dataset``, partition it over ``cfg.clients`` and move it to ``device``."""
    data = load_dataset(cfg.dataset, cfg.data_root, download=cfg.download,
                        num_samples=cfg.num_samples, seed=cfg.seed)
    labels = data.train_y.numpy()
    parts = partition(cfg.partition, labels, cfg.clients, seed=cfg.seed, **cfg.partition_args())
    test_x = data.test_x
    if data.mean is not None:
        test_x = normalize(test_x, data.mean, data.std)
    return FederatedData(
        train_x=data.train_x.to(device),
        train_y=data.train_y.to(device),
        test_x=_channels_last(test_x.to(device)),
        test_y=data.test_y.to(device),
        client_indices=[torch.as_tensor(p, dtype=torch.long).to(device) for p in parts],
        num_classes=data.num_classes,
        augment=data.augment,
        mean=data.mean,
        std=data.std,
    )
