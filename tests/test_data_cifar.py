"""CIFAR loading through torchvision, on fake files in the real on-disk format."""
import hashlib
import pickle
import urllib.error

import numpy as np
import pytest
import torch
from torchvision.datasets import CIFAR10, CIFAR100

from flcore.data import DatasetError, load_dataset, write_fake_cifar
from flcore.data.cifar import expected_checksums


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FLCORE_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def fake_cifar10(tmp_path):
    root = tmp_path / "data"
    return root, write_fake_cifar(root, "cifar10", num_train=53, num_test=11, seed=3)


def read_pickle(path):
    with open(path, "rb") as handle:
        return pickle.load(handle, encoding="latin1")


def test_fake_files_have_torchvisions_names_and_the_returned_md5s(fake_cifar10):
    root, md5s = fake_cifar10
    names = [f for f, _ in CIFAR10.train_list + CIFAR10.test_list] + [CIFAR10.meta["filename"]]
    assert sorted(md5s) == sorted(names)
    for name, md5 in md5s.items():
        path = root / CIFAR10.base_folder / name
        assert hashlib.md5(path.read_bytes()).hexdigest() == md5


def test_loads_the_written_pixels_and_labels(fake_cifar10):
    root, md5s = fake_cifar10
    data = load_dataset("cifar10", root, checksums=md5s)
    folder = root / CIFAR10.base_folder
    batches = [read_pickle(folder / f"data_batch_{i}") for i in range(1, 6)]
    assert [len(b["labels"]) for b in batches] == [11, 11, 11, 10, 10]  # 53 spread evenly
    raw = np.concatenate([b["data"] for b in batches])
    expected_x = torch.from_numpy(raw).reshape(-1, 3, 32, 32).float() / 255
    assert data.train_x.shape == (53, 3, 32, 32) and data.train_x.is_contiguous()
    assert torch.equal(data.train_x, expected_x)
    assert data.train_y.tolist() == sum((b["labels"] for b in batches), [])
    test = read_pickle(folder / "test_batch")
    assert torch.equal(data.test_x[4], torch.from_numpy(test["data"][4]).reshape(3, 32, 32) / 255)
    assert data.test_y.tolist() == test["labels"]
    assert data.name == "cifar10" and data.num_classes == 10 and data.augment
    assert data.mean == (0.4914, 0.4822, 0.4465) and data.std == (0.2470, 0.2435, 0.2616)
    assert data.input_shape == (3, 32, 32)


def test_num_samples_keeps_the_first_training_images(fake_cifar10):
    root, md5s = fake_cifar10
    full = load_dataset("cifar10", root, checksums=md5s)
    part = load_dataset("cifar10", root, checksums=md5s, num_samples=20)
    assert torch.equal(part.train_x, full.train_x[:20])
    assert torch.equal(part.train_y, full.train_y[:20])
    assert torch.equal(part.test_x, full.test_x)
    with pytest.raises(ValueError, match="num_samples"):
        load_dataset("cifar10", root, checksums=md5s, num_samples=54)


def test_cifar100(tmp_path):
    md5s = write_fake_cifar(tmp_path, "cifar100", num_train=30, num_test=7, seed=1)
    assert sorted(md5s) == ["meta", "test", "train"]
    data = load_dataset("cifar100", tmp_path, checksums=md5s)
    train = read_pickle(tmp_path / CIFAR100.base_folder / "train")
    assert data.train_y.tolist() == train["fine_labels"]
    assert train["coarse_labels"] == [label // 5 for label in train["fine_labels"]]
    assert data.train_x.shape == (30, 3, 32, 32) and data.test_x.shape == (7, 3, 32, 32)
    assert data.num_classes == 100
    assert data.mean == (0.5071, 0.4865, 0.4409) and data.std == (0.2673, 0.2564, 0.2762)


def test_torchvisions_own_checksums_are_the_default(fake_cifar10):
    root, _ = fake_cifar10
    with pytest.raises(DatasetError, match="checksum mismatch") as info:
        load_dataset("cifar10", root)
    assert str(root / "cifar-10-batches-py") in str(info.value)
    assert CIFAR10.train_list[0][1] == "c99cafc152244af753f735de768cd75f"  # not modified


def test_flipped_byte_is_reported_as_corrupt(fake_cifar10):
    root, md5s = fake_cifar10
    path = root / "cifar-10-batches-py" / "data_batch_3"
    content = bytearray(path.read_bytes())
    content[len(content) // 2] ^= 0xFF
    path.write_bytes(bytes(content))
    with pytest.raises(DatasetError) as info:
        load_dataset("cifar10", root, checksums=md5s)
    message = str(info.value)
    assert "corrupt" in message and str(root / "cifar-10-batches-py") in message
    assert "data_batch_3" in message and "data_batch_2" not in message
    assert "download=True" in message


def test_empty_folder_says_how_to_download(tmp_path):
    with pytest.raises(DatasetError) as info:
        load_dataset("cifar10", tmp_path)
    message = str(info.value)
    assert f"CIFAR-10 not found in {tmp_path}" in message
    assert "cifar-10-batches-py" in message
    assert "download=True" in message and "--download" in message


def test_missing_file_is_named(fake_cifar10):
    root, md5s = fake_cifar10
    (root / "cifar-10-batches-py" / "test_batch").unlink()
    with pytest.raises(DatasetError, match="incomplete .* missing test_batch"):
        load_dataset("cifar10", root, checksums=md5s)


def test_expected_checksums_context_manager(fake_cifar10):
    root, md5s = fake_cifar10
    with expected_checksums("cifar10", md5s):
        data = load_dataset("cifar10", root)
    assert data.train_x.shape[0] == 53
    with pytest.raises(DatasetError):  # the override ends with the block
        load_dataset("cifar10", root)


def test_checksums_must_cover_every_file(fake_cifar10):
    root, md5s = fake_cifar10
    del md5s["batches.meta"]
    with pytest.raises(ValueError, match="batches.meta"):
        load_dataset("cifar10", root, checksums=md5s)
    with pytest.raises(ValueError, match="CIFAR"):
        load_dataset("mnist1d", checksums=md5s)


def test_download_failure_becomes_a_dataset_error(tmp_path, monkeypatch):
    def offline(self):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(CIFAR10, "download", offline)
    with pytest.raises(DatasetError, match="downloading CIFAR-10 .* failed"):
        load_dataset("cifar10", tmp_path, download=True)
