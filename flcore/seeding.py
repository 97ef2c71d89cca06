"""Derived random generators.

Every random draw in flcore (client sampling, partitions, batch order, augmentation,
initialisation) comes from a generator seeded by ``(seed, purpose, round, client)``
(docs/design.md section 5).  A draw therefore depends only on *what* it is for, never on
the order in which other draws happened, which is what makes batched training equal
sequential training and a resumed run equal an uninterrupted one.
"""
from __future__ import annotations

import hashlib

import torch

_MASK_63 = (1 << 63) - 1


def derive_seed(seed: int, purpose: str, round: int = -1, client: int = -1) -> int:
    """A 63-bit seed that is a stable hash of ``(seed, purpose, round, client)``.

    Python's ``hash`` is salted per process, so a cryptographic digest is used instead:
    the same tuple gives the same seed on every machine and every run.
    """
    key = f"{int(seed)}|{purpose}|{int(round)}|{int(client)}".encode()
    digest = hashlib.blake2b(key, digest_size=8).digest()
    return int.from_bytes(digest, "little") & _MASK_63


def generator(seed: int, purpose: str, round: int = -1, client: int = -1) -> torch.Generator:
    """A CPU ``torch.Generator`` for one purpose.

    Draws are made on the CPU and moved to the device, so CPU and GPU runs see the same
    samples, batches and augmentations.
    """
    gen = torch.Generator(device="cpu")
    gen.manual_seed(derive_seed(seed, purpose, round, client))
    return gen
