"""A validation split held out from a data set's training examples, for tuning.

A hyper-parameter is chosen on data the verdict never reads: the runs that tune it train on
the training examples less a held-out share and are evaluated on that share, never on the
test set (:mod:`flcore.reproduction.tuning`).  The held-out examples are the first
``validation_count(n, share)`` of one permutation of the training set drawn with
:data:`HOLDOUT_SEED`, whatever the run's seed: every tuning run of every seed and grid point
is scored on the same examples, and the partition over the clients deals the rest.
"""
from __future__ import annotations

import dataclasses

import torch

from flcore.data.datasets import Dataset

#: The seed of the permutation that picks the held-out examples (not a run's seed).
HOLDOUT_SEED = 20_221_023
#: The largest share of the training set that may be held out.
MAX_VALIDATION_SHARE = 0.5


def validation_count(n: int, share: float) -> int:
    """How many of ``n`` training examples a ``share`` holds out (rounded to the nearest)."""
    return int(round(n * share))


def hold_out_validation(data: Dataset, share: float) -> Dataset:
    """``data`` with ``share`` of its training examples moved to the evaluation split: the
    kept ones train, the held-out ones replace the test set (module docstring).  ``share``
    0 returns ``data`` itself."""
    if share == 0:
        return data
    if not 0 < share <= MAX_VALIDATION_SHARE:
        raise ValueError(f"validation share must be in (0, {MAX_VALIDATION_SHARE}], got {share}")
    n = data.train_y.shape[0]
    held = validation_count(n, share)
    if not 0 < held < n:
        raise ValueError(f"{data.name}: a validation share of {share} of {n} training examples holds out {held}")
    order = torch.randperm(n, generator=torch.Generator().manual_seed(HOLDOUT_SEED))
    keep, hold = order[held:].sort().values, order[:held].sort().values
    changes = {}
    for part in ("x", "y", "domain", "pixels"):
        train = data.__dict__.get(f"train_{part}")  # train_x may be left to the pixels
        changes[f"train_{part}"] = None if train is None else train[keep]
        changes[f"test_{part}"] = None if train is None else train[hold]
    return dataclasses.replace(data, **changes)
