"""MNIST-1D (Greydanus 2020, "Scaling down deep learning"), generated locally and cached.

The data are produced by the ``mnist1d`` package's own generator (``make_dataset``) with
its default arguments, only ``num_samples`` changed.  Its seed stays at the package
default (42) whatever the experiment seed, so every run sees the same data and only the
partition and training vary.  The package's download path is never used.
"""
from __future__ import annotations

import random
from importlib.metadata import version

import numpy as np
import torch

from flcore.data.cache import cache_dir, cache_key, load_arrays, save_arrays
from flcore.data.datasets import Dataset

NUM_CLASSES = 10


def load_mnist1d(num_samples: int = 5000) -> Dataset:
    """MNIST-1D with ``num_samples`` examples in total, 80% train / 20% test.

    The package generates ``num_samples // 10`` examples per class, so a ``num_samples``
    that is not a multiple of 10 is rounded down.
    """
    args = _generation_args(num_samples)
    # The package version is part of the key: a new generator may produce other data.
    key = cache_key({**args, "mnist1d_version": version("mnist1d")})
    path = cache_dir() / "datasets" / f"mnist1d-{key[:32]}.npz"
    arrays = load_arrays(path)
    if arrays is None:
        arrays = _generate(args)
        save_arrays(path, arrays)
    return Dataset(
        name="mnist1d",
        train_x=torch.from_numpy(arrays["x"]).float(),
        train_y=torch.from_numpy(arrays["y"]).long(),
        test_x=torch.from_numpy(arrays["x_test"]).float(),
        test_y=torch.from_numpy(arrays["y_test"]).long(),
        num_classes=NUM_CLASSES,
        mean=None,
        std=None,
        augment=False,
    )


def _generation_args(num_samples: int) -> dict:
    from mnist1d.data import get_dataset_args

    args = get_dataset_args(as_dict=True)
    args.pop("url")  # the download location does not affect generated data
    args["num_samples"] = int(num_samples)
    return args


def _generate(args: dict) -> dict[str, np.ndarray]:
    from mnist1d.data import make_dataset
    from mnist1d.utils import ObjectView

    # make_dataset reseeds Python's and NumPy's global generators; restore them afterwards
    # so that loading data never changes anyone else's random stream.
    python_state, numpy_state = random.getstate(), np.random.get_state()
    try:
        data = make_dataset(ObjectView(dict(args)))
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)
    return {
        "x": data["x"].astype(np.float32),
        "y": data["y"].astype(np.int64),
        "x_test": data["x_test"].astype(np.float32),
        "y_test": data["y_test"].astype(np.int64),
    }
