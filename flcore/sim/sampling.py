"""Client sampling and the per-round batch plan of each client.

Both draw from generators derived from ``(seed, purpose, round, client)``
(``flcore.seeding``), so the plan of a client does not depend on which other clients
train with it, on the order they train in, or on whether the run was resumed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from flcore.data import draw_crop_flip
from flcore.data.mixing import draw_cutout, draw_mixup
from flcore.seeding import generator


def sample_clients(seed: int, round: int, num_clients: int, per_round: int) -> torch.Tensor:
    """``per_round`` distinct clients drawn uniformly without replacement (rule R1).

    The draw depends on ``(seed, round)`` only, so every method sees the same client
    sequence under the same seed, as the FedSAM paper's code arranges with
    ``np.random.seed(round)``.
    """
    order = torch.randperm(num_clients, generator=generator(seed, "sampling", round))
    return order[:per_round]


@dataclass
class ClientPlan:
    """The minibatches one client runs in one round.

    ``batches[j]`` holds the *global* sample indices of step j; ``crops[j]`` the matching
    crop/flip draws (``None`` without augmentation).
    """

    client: int
    num_samples: int
    batches: list[torch.Tensor]
    crops: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None]
    mixups: list[tuple[torch.Tensor, torch.Tensor]] | None = None  # (lam, perm) per step
    cutouts: list[torch.Tensor] | None = None  # centres per step
    cutout_size: int = 0

    @property
    def num_steps(self) -> int:
        return len(self.batches)


def plan_client_round(seed: int, round: int, client: int, indices: torch.Tensor, batch_size: int,
                      epochs: int, local_steps: int | None, augment: bool, mixup_alpha: float = 0.0,
                      cutout_size: int = 0, input_shape: tuple[int, ...] | None = None) -> ClientPlan:
    """Shuffle the client's data once per epoch and cut it into batches of
    ``batch_size``, keeping the last partial batch (the official code's DataLoader
    default).  ``local_steps``, when set, replaces epochs: epochs are drawn until that many
    batches exist and the first ``local_steps`` are kept.
    """
    n = int(indices.numel())
    gen = generator(seed, "batches", round, client)
    per_epoch = math.ceil(n / batch_size)
    wanted = local_steps if local_steps is not None else epochs * per_epoch
    positions: list[torch.Tensor] = []
    while len(positions) < wanted:
        perm = torch.randperm(n, generator=gen)
        positions.extend(perm[i:i + batch_size] for i in range(0, n, batch_size))
    positions = positions[:wanted]
    cpu_indices = indices if indices.device.type == "cpu" else indices.cpu()
    batches = [cpu_indices[p] for p in positions]
    crops: list = [None] * len(batches)
    if augment:
        aug_gen = generator(seed, "augment", round, client)
        crops = [draw_crop_flip(int(b.numel()), aug_gen) for b in batches]
    mixups = cutouts = None
    if mixup_alpha > 0:
        mix_gen = generator(seed, "mixup", round, client)
        mixups = [draw_mixup(int(b.numel()), mixup_alpha, mix_gen) for b in batches]
    if cutout_size > 0:
        cut_gen = generator(seed, "cutout", round, client)
        spatial = tuple(input_shape[1:]) if len(input_shape) == 3 else tuple(input_shape)
        cutouts = [draw_cutout(int(b.numel()), spatial, cut_gen) for b in batches]
    return ClientPlan(client=client, num_samples=n, batches=batches, crops=crops, mixups=mixups, cutouts=cutouts,
                      cutout_size=cutout_size)
