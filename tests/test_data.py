"""Datasets: the Dataset container, load_dataset, synthetic data, MNIST-1D, the cache."""
import importlib
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from flcore.data import DATASET_NAMES, Dataset, cache_dir, load_dataset, make_cifar_like, make_synthetic

mnist1d_loader = importlib.import_module("flcore.data.mnist1d_loader")


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FLCORE_CACHE", str(tmp_path / "cache"))


def nearest_class_mean_accuracy(data):
    means = torch.stack([data.train_x[data.train_y == c].mean(0)
                         for c in range(data.num_classes)]).flatten(1)
    distances = torch.cdist(data.test_x.flatten(1), means)
    return (distances.argmin(1) == data.test_y).float().mean().item()


def test_unknown_name_lists_the_allowed_ones():
    assert DATASET_NAMES == ("cifar10", "cifar100", "fmnist", "mnist1d", "pacs", "synthetic")
    with pytest.raises(ValueError, match="cifar10, cifar100, fmnist, mnist1d, pacs, synthetic"):
        load_dataset("mnist")


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    assert cache_dir() == tmp_path / "cache"
    monkeypatch.delenv("FLCORE_CACHE")
    assert cache_dir() == Path.home() / ".cache" / "flcore"


def test_dataset_checks_its_fields():
    x, y = torch.zeros(4, 3), torch.zeros(4, dtype=torch.int64)
    data = Dataset("d", x, y, x[:2], y[:2], 2, None, None, False)
    assert data.input_shape == (3,)
    with pytest.raises(ValueError, match="4 rows"):
        Dataset("d", x, y[:3], x, y, 2, None, None, False)
    with pytest.raises(TypeError, match="float32"):
        Dataset("d", x.double(), y, x, y, 2, None, None, False)
    with pytest.raises(ValueError, match="one value per channel"):
        Dataset("d", x, y, x, y, 2, (0.5,), (0.2,), False)


# --- synthetic -------------------------------------------------------------------------

def test_synthetic_default_through_load_dataset():
    data = load_dataset("synthetic")
    assert data.train_x.shape == (2000, 40) and data.test_x.shape == (500, 40)
    assert data.train_x.dtype == torch.float32 and data.train_y.dtype == torch.int64
    assert torch.bincount(data.train_y).tolist() == [200] * 10  # balanced classes
    assert data.num_classes == 10 and data.mean is None and not data.augment
    assert load_dataset("synthetic", num_samples=300).train_x.shape == (300, 40)


def test_synthetic_is_deterministic_per_seed():
    a, b = make_synthetic(100, 20, (40,), 10, seed=1), make_synthetic(100, 20, (40,), 10, seed=1)
    assert torch.equal(a.train_x, b.train_x) and torch.equal(a.test_y, b.test_y)
    c = load_dataset("synthetic", num_samples=100, seed=2)
    assert not torch.equal(a.train_x, c.train_x)


def test_synthetic_vectors_are_learnable_but_not_trivial():
    accuracy = nearest_class_mean_accuracy(make_synthetic(2000, 500, (40,), 10, seed=0))
    assert 0.7 < accuracy < 0.99  # chance is 0.1


def test_synthetic_images_are_in_unit_range_with_their_own_statistics():
    data = make_synthetic(300, 50, (3, 8, 8), 5, seed=0)
    assert data.train_x.shape == (300, 3, 8, 8)
    assert data.train_x.min() >= 0 and data.train_x.max() <= 1
    assert data.mean == pytest.approx(data.train_x.mean(dim=(0, 2, 3)).tolist())
    assert data.std == pytest.approx(data.train_x.std(dim=(0, 2, 3)).tolist())
    assert nearest_class_mean_accuracy(data) > 0.9


def test_cifar_like():
    data = make_cifar_like(64, 16, num_classes=10, seed=0)
    assert data.train_x.shape == (64, 3, 32, 32) and data.test_x.shape == (16, 3, 32, 32)
    assert data.mean == (0.4914, 0.4822, 0.4465) and data.std == (0.2470, 0.2435, 0.2616)
    assert data.augment and data.name == "cifar_like"
    assert data.train_x.min() >= 0 and data.train_x.max() <= 1


# --- MNIST-1D --------------------------------------------------------------------------

def test_mnist1d_is_the_package_generator_with_seed_42():
    from mnist1d.data import get_dataset_args, make_dataset

    numpy_state, python_state = np.random.get_state(), random.getstate()
    data = load_dataset("mnist1d", num_samples=500, seed=7)
    after = np.random.get_state()
    assert np.array_equal(numpy_state[1], after[1]) and random.getstate() == python_state

    args = get_dataset_args()
    args.num_samples = 500
    assert args.seed == 42
    reference = make_dataset(args)
    assert data.train_x.dtype == torch.float32 and data.train_y.dtype == torch.int64
    assert data.train_x.shape == (400, 40) and data.test_x.shape == (100, 40)
    assert torch.equal(data.train_x, torch.from_numpy(reference["x"]).float())
    assert torch.equal(data.test_y, torch.from_numpy(reference["y_test"]))
    assert data.num_classes == 10 and data.mean is None and not data.augment


def test_mnist1d_is_cached_and_independent_of_the_experiment_seed(monkeypatch):
    first = load_dataset("mnist1d", num_samples=200, seed=0)
    files = list((cache_dir() / "datasets").glob("mnist1d-*.npz"))
    assert len(files) == 1

    def must_not_run(args):
        raise AssertionError("MNIST-1D regenerated instead of read from the cache")

    monkeypatch.setattr(mnist1d_loader, "_generate", must_not_run)
    second = load_dataset("mnist1d", num_samples=200, seed=5)
    assert torch.equal(first.train_x, second.train_x)
    assert torch.equal(first.test_y, second.test_y)
    with pytest.raises(AssertionError, match="regenerated"):  # another size, another key
        load_dataset("mnist1d", num_samples=300)


def test_mnist1d_corrupt_cache_is_regenerated():
    first = load_dataset("mnist1d", num_samples=200)
    (path,) = (cache_dir() / "datasets").glob("mnist1d-*.npz")
    path.write_bytes(path.read_bytes()[:100])  # truncated, as by a crash
    again = load_dataset("mnist1d", num_samples=200)
    assert torch.equal(first.train_x, again.train_x)
    assert not list(path.parent.glob("*.tmp"))
