"""FedAvg and FedSAM written the way the official FedSAM code (``debcaldarola/fedsam``)
runs them: the baseline ``round_time.py`` measures flcore against.

What it copies from the official code, cost for cost:

- **model**: the CIFAR CNN in the official layer order (conv -> ReLU -> max-pool, the
  default channels-first layout), one ``nn.Module`` shared by the clients;
- **clients** train one after the other: the global ``state_dict`` is loaded into the
  shared model, the client runs its ``DataLoader`` (built once per client, ``shuffle``,
  ``batch_size=64``, ``num_workers=0``) whose ``Dataset.__getitem__`` applies torchvision
  transforms to one sample at a time (``RandomCrop(32, padding=4)``,
  ``RandomHorizontalFlip()``, ``Normalize``; the official code goes through PIL and
  ``ToTensor``, here the images stay tensors, which only makes the reference faster),
  ``torch.optim.SGD(lr, weight_decay)``, ``loss.item()`` every step, and for FedSAM the
  official two-pass SAM step (backward; global gradient norm; ``e = rho g / (norm +
  1e-16)``; ``p += e``; zero grads; second forward/backward at the perturbed point;
  ``p -= e``; ``optimizer.step()``); the trained ``state_dict`` is deep-copied;
- **server**: the sample-weighted average of the clients' ``state_dict`` s;
- **evaluation** (``print_stats`` of the official ``main.py``, run every ``eval_every``
  rounds and every round of the last 100): the global model is loaded into the shared
  model once per client and evaluated, with ``model.eval()`` and ``torch.no_grad()``, on
  every client's training loader (so with the training transforms, as the official code
  does), then on the test set through a test loader (``batch_size=64``, ``Normalize``
  only), summing ``cross_entropy(reduction="sum").item()`` and ``correct.item()`` per
  batch.  The official test split's assignment to test clients is not part of the
  released data description; here the test set is one test client.

Left out because they are bookkeeping rather than the protocol: the per-round checkpoint
the official code writes with ``torch.save`` and its per-round ``wandb`` logging.
"""
from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torchvision import transforms

BATCH_SIZE = 64


class ClientDataset(torch.utils.data.Dataset):
    """One client's images and labels; ``__getitem__`` transforms one sample at a time, as
    the official ``ClientDataset`` does."""

    def __init__(self, images: torch.Tensor, labels: torch.Tensor, transform: Callable):
        self.images = images
        self.labels = labels.tolist()
        self.transform = transform

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, idx: int):
        return self.transform(self.images[idx]), self.labels[idx]


def train_transform(mean, std) -> Callable:
    """The official CIFAR training transform, on tensor images in [0, 1]."""
    return transforms.Compose([
        transforms.RandomCrop(32, padding=4),
        transforms.RandomHorizontalFlip(),
        transforms.Normalize(mean, std),
    ])


def test_transform(mean, std) -> Callable:
    """The official CIFAR test transform, on tensor images in [0, 1]."""
    return transforms.Normalize(mean, std)


class OfficialCNN(nn.Module):
    """The CIFAR CNN exactly as the official code writes it (conv -> ReLU -> max-pool,
    default channels-first layout), so layout and order choices flcore makes count in
    the ratio and are not given to the reference for free."""

    def __init__(self, num_classes: int):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 5)
        self.conv2 = nn.Conv2d(64, 64, 5)
        self.fc1 = nn.Linear(1600, 384)
        self.fc2 = nn.Linear(384, 192)
        self.fc3 = nn.Linear(192, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def sam_step(model: nn.Module, optimizer: torch.optim.Optimizer, x, y, rho: float) -> torch.Tensor:
    """One SAM step in the official two-pass form; returns the loss at the iterate."""
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    params = [p for p in model.parameters() if p.grad is not None]
    with torch.no_grad():
        grad_norm = torch.norm(torch.stack([torch.norm(p.grad, p=2) for p in params]), p=2)
        scale = rho / (grad_norm + 1e-16)
        perturbations = [p.grad * scale for p in params]
        for p, e in zip(params, perturbations):
            p.add_(e)
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    with torch.no_grad():
        for p, e in zip(params, perturbations):
            p.sub_(e)
    optimizer.step()
    optimizer.zero_grad()
    return loss


def sgd_step(model: nn.Module, optimizer: torch.optim.Optimizer, x, y) -> torch.Tensor:
    """One plain SGD step (FedAvg's client); returns the loss."""
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


class ReferenceFL:
    """FedAvg / FedSAM run the way the official FedSAM code runs a round and evaluates.

    ``initial_state`` is the ``state_dict`` of the starting model (flcore's initial model,
    so both implementations start from the same weights); ``parts`` gives each client's
    sample indices into ``dataset``.
    """

    def __init__(self, method: str, cfg, dataset, parts, device: torch.device,
                 initial_state: dict):
        self.method = method
        self.cfg = cfg
        self.device = device
        train_tf = train_transform(dataset.mean, dataset.std)
        self.train_loaders = [
            torch.utils.data.DataLoader(ClientDataset(dataset.train_x[p], dataset.train_y[p], train_tf),
                                        batch_size=cfg.batch_size, shuffle=True, num_workers=0)
            for p in parts]
        test = ClientDataset(dataset.test_x, dataset.test_y, test_transform(dataset.mean, dataset.std))
        self.test_loader = torch.utils.data.DataLoader(test, batch_size=cfg.batch_size, shuffle=False,
                                                       num_workers=0)
        model = OfficialCNN(dataset.num_classes)
        model.load_state_dict(initial_state)
        self.model = model.to(device)
        self.global_state = copy.deepcopy(self.model.state_dict())

    def select_clients(self, round: int) -> list[int]:
        """``per_round`` distinct clients, seeded by the round as the official code does."""
        rng = np.random.RandomState(round)
        return rng.choice(len(self.train_loaders), self.cfg.per_round, replace=False).tolist()

    def train_client(self, k: int) -> tuple[int, dict]:
        """Local training of client ``k`` from the global model; ``(samples, state_dict)``."""
        self.model.load_state_dict(self.global_state)
        self.model.train()
        optimizer = torch.optim.SGD(self.model.parameters(), lr=self.cfg.lr,
                                    weight_decay=self.cfg.weight_decay)
        running_loss = 0.0
        for _ in range(self.cfg.local_epochs):
            for x, y in self.train_loaders[k]:
                x, y = x.to(self.device), y.to(self.device)
                if self.method == "fedsam":
                    loss = sam_step(self.model, optimizer, x, y, self.cfg.rho)
                else:
                    loss = sgd_step(self.model, optimizer, x, y)
                running_loss += loss.item()
        return len(self.train_loaders[k].dataset), copy.deepcopy(self.model.state_dict())

    def aggregate(self, updates: list[tuple[int, dict]]) -> None:
        """The sample-weighted average of the clients' state_dicts becomes the global model."""
        total = sum(n for n, _ in updates)
        self.global_state = {key: sum(n * state[key] for n, state in updates) / total
                             for key in updates[0][1]}

    def train_one_round(self, round: int) -> None:
        """Sample clients, train them one after the other, average their models."""
        self.aggregate([self.train_client(k) for k in self.select_clients(round)])

    def test(self, loader) -> tuple[float, float]:
        """The official ``Client.test``: accuracy (%) and mean loss of the loaded model."""
        self.model.eval()
        correct, total, loss_sum = 0, 0, 0.0
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            with torch.no_grad():
                outputs = self.model(x)
                loss_sum += F.cross_entropy(outputs, y, reduction="sum").item()
                correct += (outputs.argmax(dim=1) == y).sum().item()
                total += y.numel()
        return 100.0 * correct / max(total, 1), loss_sum / max(total, 1)

    def evaluate(self) -> list[tuple[float, float]]:
        """The official ``print_stats``: every client's training data, then the test set,
        the global model reloaded before each client's pass."""
        results = []
        for loader in self.train_loaders:
            self.model.load_state_dict(self.global_state)
            results.append(self.test(loader))
        self.model.load_state_dict(self.global_state)
        results.append(self.test(self.test_loader))
        return results
