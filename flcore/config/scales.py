"""The three scales' protocol presets, per data set.

Three scales run the same code path (docs/design.md section 8):

- ``smoke``: seconds, for CI; a tiny MNIST-1D federation and a handful of rounds.
- ``small``: the CPU default, offline; MNIST-1D (10,000 samples generated locally) with
  the papers' protocol shrunk: 100 clients, 5 per round, 300 rounds.
- ``paper``: the FedSAM paper's CIFAR protocol exactly (its Table 10): 100 clients x 500
  images, 5 clients per round, 1 local epoch, batch 64, client lr 0.01, weight decay
  4e-4, 10k rounds (CIFAR-10) or 20k (CIFAR-100), evaluation every 100 rounds and every
  round of the last 100.  Fashion-MNIST, which only FedIMA trains, takes FedIMA's protocol
  (its Table VII and official code): 100 clients x 600 images, 10 per round, 5 local epochs
  of batch 50, lr 0.01 with momentum 0.9, weight decay 1e-3, a x0.99 lr decay a round,
  300 rounds.  PACS, FedIMA's too, takes its Table VII row: 80 clients, 16 per round,
  the same local training and decay, 400 rounds.  The CIFAR federations are Hsu et al.'s
  Dirichlet split with rounded class counts (``partition: dirichlet_rounded``, the closest
  to the published split files: :mod:`flcore.data.partition`); the smaller scales keep
  ``dirichlet``.
"""
from __future__ import annotations

from flcore.errors import ConfigError, quote

#: The data set of each scale when none is given.
DEFAULT_DATASET = {"smoke": "mnist1d", "small": "mnist1d", "paper": "cifar10"}

_COMMON_SMALL = {
    "clients": 100, "per_round": 5, "rounds": 300, "local_epochs": 1,
    # the mean of the last 100 rounds from every fifth: a third of the evaluations
    # (record_format.is_evaluation_round says what it changes)
    "eval_every": 10, "eval_last": 100, "eval_last_every": 5, "checkpoint_every": 50,
    # evaluating the 8,000 training samples every 10 rounds is about a tenth of a small
    # run's time, and only FedSAM's Fig. 3 reads it: its runs ask for it
    "client_accuracy": False,
}
_COMMON_SMOKE = {
    "clients": 10, "per_round": 3, "rounds": 4, "local_epochs": 1,
    "eval_every": 2, "eval_last": 2, "checkpoint_every": 2,
}

#: MNIST-1D learning settings (ours: the papers do not use MNIST-1D).  At the small scale
#: 10,000 samples (8,000 train) give 80 samples per client and batch 20 gives 4 local
#: steps per epoch; lr 0.1 was the best of {0.05, 0.1, 0.2} x batch {10, 20} for both
#: FedAvg and FedSAM at alpha = 0 over 300 rounds.
_MNIST1D = {"batch_size": 20, "lr": 0.1, "weight_decay": 0.0, "momentum": 0.0}
#: FedSAM paper Table 10, CIFAR rows.
_CIFAR = {"batch_size": 64, "lr": 0.01, "weight_decay": 4e-4, "momentum": 0.0}
#: FedIMA's Fashion-MNIST learning settings (Table VII; weight decay from its code).
_FMNIST = {"batch_size": 50, "lr": 0.01, "weight_decay": 1e-3, "momentum": 0.9}
#: FedIMA's PACS learning settings (Table VII; weight decay from its code, as for FMNIST).
#: Its label + feature skew: one domain per client, Dirichlet alpha 0.1 within (the code's default).
_PACS = {**_FMNIST, "partition": "domains", "alpha": 0.1}

_SCALE_TABLE = {
    ("smoke", "mnist1d"): {**_COMMON_SMOKE, **_MNIST1D, "num_samples": 1000},
    ("smoke", "synthetic"): {**_COMMON_SMOKE, **_MNIST1D, "num_samples": 600},
    ("smoke", "cifar10"): {**_COMMON_SMOKE, **_CIFAR, "samples_per_client": 20, "batch_size": 8},
    ("smoke", "cifar100"): {**_COMMON_SMOKE, **_CIFAR, "samples_per_client": 20, "batch_size": 8},
    ("smoke", "fmnist"): {**_COMMON_SMOKE, **_FMNIST, "samples_per_client": 20, "batch_size": 8},
    ("smoke", "pacs"): {**_COMMON_SMOKE, **_PACS, "clients": 8, "per_round": 2, "batch_size": 8},
    ("small", "mnist1d"): {**_COMMON_SMALL, **_MNIST1D, "num_samples": 10_000},
    ("small", "synthetic"): {**_COMMON_SMALL, **_MNIST1D, "num_samples": 10_000},
    ("small", "cifar10"): {**_COMMON_SMALL, **_CIFAR, "samples_per_client": 500},
    ("small", "cifar100"): {**_COMMON_SMALL, **_CIFAR, "samples_per_client": 500},
    ("small", "fmnist"): {**_COMMON_SMALL, **_FMNIST, "samples_per_client": 600},
    ("small", "pacs"): {**_COMMON_SMALL, **_PACS, "clients": 80, "per_round": 16},
    ("paper", "cifar10"): {
        **_CIFAR, "partition": "dirichlet_rounded", "clients": 100, "per_round": 5, "samples_per_client": 500,
        "rounds": 10_000, "local_epochs": 1, "eval_every": 100, "eval_last": 100, "checkpoint_every": 500,
    },
    ("paper", "cifar100"): {
        **_CIFAR, "partition": "dirichlet_rounded", "clients": 100, "per_round": 5, "samples_per_client": 500,
        "rounds": 20_000, "local_epochs": 1, "eval_every": 100, "eval_last": 100, "checkpoint_every": 500,
    },
    ("paper", "fmnist"): {
        **_FMNIST, "clients": 100, "per_round": 10, "samples_per_client": 600, "rounds": 300,
        "local_epochs": 5, "lr_decay": 0.99, "eval_every": 10, "eval_last": 10, "checkpoint_every": 50,
    },
    ("paper", "pacs"): {
        **_PACS, "clients": 80, "per_round": 16, "rounds": 400, "local_epochs": 5, "lr_decay": 0.99,
        "eval_every": 10, "eval_last": 10, "checkpoint_every": 50,
    },
}


def scale_defaults(scale: str, dataset: str) -> dict:
    """Protocol defaults for a scale and dataset (see module docstring)."""
    try:
        return dict(_SCALE_TABLE[(scale, dataset)])
    except KeyError:
        allowed = sorted({d for s, d in _SCALE_TABLE if s == scale})
        raise ConfigError(
            "dataset", f"{quote(dataset)} has no preset at scale {quote(scale)}; allowed datasets at this scale: "
            + ", ".join(allowed)) from None
