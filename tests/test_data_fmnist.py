"""Fashion-MNIST loading, on fake files in torchvision's exact on-disk format."""
import gzip
import hashlib
import urllib.error

import numpy as np
import pytest
import torch
from torchvision.datasets import FashionMNIST

from flcore.data import DatasetError, load_dataset, write_fake_fmnist
from flcore.data.checksums import expected_checksums

RAW = ("FashionMNIST", "raw")


@pytest.fixture
def fake_fmnist(tmp_path):
    root = tmp_path / "data"
    return root, write_fake_fmnist(root, num_train=37, num_test=9, seed=2)


def _folder(root):
    return root.joinpath(*RAW)


def _unpack(path):
    """Parse an IDX file by hand: big-endian int32 magic and dimensions, then the bytes."""
    raw = gzip.decompress(path.read_bytes())
    magic = int.from_bytes(raw[:4], "big")
    dims = magic & 0xFF
    shape = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims)]
    return magic, shape, np.frombuffer(raw[4 + 4 * dims:], dtype=np.uint8)


def test_fake_files_have_torchvisions_names_format_and_the_returned_md5s(fake_fmnist):
    root, md5s = fake_fmnist
    assert sorted(md5s) == sorted(name for name, _ in FashionMNIST.resources)
    for name, md5 in md5s.items():
        assert hashlib.md5((_folder(root) / name).read_bytes()).hexdigest() == md5
    magic, shape, pixels = _unpack(_folder(root) / "train-images-idx3-ubyte.gz")
    assert (magic, shape, pixels.size) == (2051, [37, 28, 28], 37 * 28 * 28)
    magic, shape, labels = _unpack(_folder(root) / "t10k-labels-idx1-ubyte.gz")
    assert (magic, shape) == (2049, [9]) and labels.max() <= 9


def test_torchvision_reads_the_fake_files_as_fashion_mnist(fake_fmnist):
    # torchvision reads the extracted files: extract them as its download would
    root, _ = fake_fmnist
    for name, _ in FashionMNIST.resources:
        path = _folder(root) / name
        path.with_suffix("").write_bytes(gzip.decompress(path.read_bytes()))
    ours = load_dataset("fmnist", root, checksums=fake_fmnist[1])
    theirs = FashionMNIST(str(root), train=True)
    assert torch.equal(ours.train_x[:, 0], theirs.data.float() / 255)
    assert torch.equal(ours.train_y, theirs.targets)


def test_loads_the_written_pixels_and_labels(fake_fmnist):
    root, md5s = fake_fmnist
    data = load_dataset("fmnist", root, checksums=md5s)
    _, _, pixels = _unpack(_folder(root) / "train-images-idx3-ubyte.gz")
    _, _, labels = _unpack(_folder(root) / "train-labels-idx1-ubyte.gz")
    assert data.train_x.shape == (37, 1, 28, 28) and data.train_x.dtype == torch.float32
    assert torch.equal(data.train_x, torch.from_numpy(pixels.copy()).reshape(37, 1, 28, 28).float() / 255)
    assert data.train_y.tolist() == labels.tolist() and data.train_y.dtype == torch.int64
    assert data.test_x.shape == (9, 1, 28, 28)
    # FedIMA: ToTensor only -- identity normalisation, no augmentation
    assert data.name == "fmnist" and data.num_classes == 10 and not data.augment
    assert data.mean == (0.0,) and data.std == (1.0,) and data.input_shape == (1, 28, 28)


def test_num_samples_keeps_the_first_training_images(fake_fmnist):
    root, md5s = fake_fmnist
    full = load_dataset("fmnist", root, checksums=md5s)
    part = load_dataset("fmnist", root, checksums=md5s, num_samples=5)
    assert torch.equal(part.train_x, full.train_x[:5]) and torch.equal(part.test_y, full.test_y)
    with pytest.raises(ValueError, match="num_samples"):
        load_dataset("fmnist", root, checksums=md5s, num_samples=38)


def test_missing_folder_says_how_to_fetch(tmp_path):
    with pytest.raises(DatasetError) as info:
        load_dataset("fmnist", tmp_path / "nowhere")
    message = str(info.value)
    assert "Fashion-MNIST not found" in message and "nowhere" in message
    assert "download=True" in message and "--download" in message and "FashionMNIST" in message


def test_missing_file_is_named(fake_fmnist):
    root, md5s = fake_fmnist
    (_folder(root) / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(DatasetError, match="incomplete .* missing t10k-labels-idx1-ubyte.gz"):
        load_dataset("fmnist", root, checksums=md5s)


def test_torchvisions_md5s_are_the_default(fake_fmnist):
    root, _ = fake_fmnist
    with pytest.raises(DatasetError, match="checksum mismatch") as info:
        load_dataset("fmnist", root)
    assert dict(FashionMNIST.resources)["train-images-idx3-ubyte.gz"] in str(info.value)


def test_corrupt_file_is_named(fake_fmnist):
    root, md5s = fake_fmnist
    path = _folder(root) / "train-labels-idx1-ubyte.gz"
    raw = bytearray(path.read_bytes())
    raw[-10] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(DatasetError, match="corrupt: checksum mismatch for train-labels-idx1-ubyte.gz"):
        load_dataset("fmnist", root, checksums=md5s)


@pytest.mark.parametrize("problem, match", [
    ("magic", "IDX magic number 2049, expected 2051"),
    ("short", "bytes, expected"),
    ("labels", "labels must be in 0..9"),
    ("count", "holds 36 labels for the 37 images"),
])
def test_malformed_file_with_matching_md5_names_the_file(fake_fmnist, problem, match):
    root, md5s = fake_fmnist
    folder = _folder(root)
    images, labels = folder / "train-images-idx3-ubyte.gz", folder / "train-labels-idx1-ubyte.gz"
    _, _, y = _unpack(labels)
    if problem == "magic":  # a labels file where the images belong
        images.write_bytes(labels.read_bytes())
    elif problem == "short":
        images.write_bytes(gzip.compress(gzip.decompress(images.read_bytes())[:-1]))
    elif problem == "labels":
        labels.write_bytes(gzip.compress((2049).to_bytes(4, "big") + len(y).to_bytes(4, "big")
                                         + bytes([10] * len(y))))
    else:
        labels.write_bytes(gzip.compress((2049).to_bytes(4, "big") + (36).to_bytes(4, "big") + y[:36].tobytes()))
    md5s = {**md5s, images.name: hashlib.md5(images.read_bytes()).hexdigest(),
            labels.name: hashlib.md5(labels.read_bytes()).hexdigest()}
    with pytest.raises(DatasetError, match=match) as info:
        load_dataset("fmnist", root, checksums=md5s)
    assert "train-" in str(info.value)


def test_expected_checksums_context_manager(fake_fmnist):
    root, md5s = fake_fmnist
    with expected_checksums("fmnist", md5s):
        assert load_dataset("fmnist", root).train_x.shape[0] == 37
    with pytest.raises(DatasetError):  # the override ends with the block
        load_dataset("fmnist", root)


def test_checksums_must_cover_every_file(fake_fmnist):
    root, md5s = fake_fmnist
    del md5s["t10k-images-idx3-ubyte.gz"]
    with pytest.raises(ValueError, match="t10k-images-idx3-ubyte.gz"):
        load_dataset("fmnist", root, checksums=md5s)
    with pytest.raises(ValueError, match="t10k-images-idx3-ubyte.gz"):
        with expected_checksums("fmnist", md5s):
            pass


def test_download_goes_through_torchvision_and_its_failure_is_a_dataset_error(tmp_path, monkeypatch):
    calls = []

    def offline(self):
        calls.append(self.root)
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(FashionMNIST, "download", offline)
    with pytest.raises(DatasetError, match="downloading Fashion-MNIST .* failed: .*no network.*Fetch it"):
        load_dataset("fmnist", tmp_path / "data", download=True)
    assert calls == [str((tmp_path / "data").resolve())]


def test_fake_writer_is_deterministic(tmp_path):
    assert write_fake_fmnist(tmp_path / "a", 10, 5, seed=1) == write_fake_fmnist(tmp_path / "b", 10, 5, seed=1)
    assert write_fake_fmnist(tmp_path / "c", 10, 5, seed=2) != write_fake_fmnist(tmp_path / "a", 10, 5, seed=1)
