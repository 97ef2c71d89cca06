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


# ----------------------------------------------------------------------------- the three layouts

def _write_all_layouts(tmp_path, **kwargs):
    """The same random data (one seed) written in each layout, under its own root."""
    return {layout: (tmp_path / layout, write_fake_fmnist(tmp_path / layout, layout=layout, **kwargs))
            for layout in ("torchvision", "idx", "debian")}


def test_the_writer_puts_each_layout_where_its_source_does(tmp_path):
    layouts = _write_all_layouts(tmp_path, num_train=11, num_test=4, seed=6)
    names = sorted(name for name, _ in FashionMNIST.resources)
    (tv_root, tv_md5s), (idx_root, idx_md5s), (deb_root, deb_md5s) = layouts.values()
    assert sorted(p.name for p in _folder(tv_root).iterdir()) == names and sorted(tv_md5s) == names
    plain = sorted(n.removesuffix(".gz") for n in names)
    assert sorted(p.name for p in idx_root.iterdir()) == plain and sorted(idx_md5s) == plain
    assert sorted(p.name for p in deb_root.iterdir()) == names and sorted(deb_md5s) == plain
    for name in names:
        content = gzip.decompress((_folder(tv_root) / name).read_bytes())
        base = name.removesuffix(".gz")
        # one content everywhere, md5 of the uncompressed bytes in both content lists ...
        assert gzip.decompress((deb_root / name).read_bytes()) == content == (idx_root / base).read_bytes()
        assert idx_md5s[base] == deb_md5s[base] == hashlib.md5(content).hexdigest()
        # ... but Debian's archives are re-compressed: their md5 is not the torchvision layout's
        assert hashlib.md5((deb_root / name).read_bytes()).hexdigest() != tv_md5s[name]
        assert (deb_root / name).read_bytes()[:10] == bytes.fromhex("1f8b0800ed0ada5e0003"), \
            "Debian's gzip header: no file name, its mtime (2020-06-05), default level, Unix"


def test_every_layout_loads_the_same_arrays(tmp_path):
    layouts = _write_all_layouts(tmp_path, num_train=13, num_test=5, seed=4)
    loaded = {layout: load_dataset("fmnist", root, checksums=md5s) for layout, (root, md5s) in layouts.items()}
    reference = loaded["torchvision"]
    _, _, pixels = _unpack(_folder(layouts["torchvision"][0]) / "train-images-idx3-ubyte.gz")
    assert torch.equal(reference.train_x, torch.from_numpy(pixels.copy()).reshape(13, 1, 28, 28).float() / 255)
    for data in loaded.values():
        assert torch.equal(data.train_x, reference.train_x) and torch.equal(data.train_y, reference.train_y)
        assert torch.equal(data.test_x, reference.test_x) and torch.equal(data.test_y, reference.test_y)


def test_uncompressed_files_in_torchvisions_folder_load(fake_fmnist):
    """torchvision extracts each archive beside it; without the archives the extracted
    files are read, checked by their own md5s."""
    root, _ = fake_fmnist
    content_md5s = {}
    for name, _ in FashionMNIST.resources:
        archive = _folder(root) / name
        content = gzip.decompress(archive.read_bytes())
        archive.with_suffix("").write_bytes(content)
        archive.unlink()
        content_md5s[archive.with_suffix("").name] = hashlib.md5(content).hexdigest()
    assert load_dataset("fmnist", root, checksums=content_md5s).train_x.shape == (37, 1, 28, 28)


def test_the_published_md5s_are_the_default_for_every_layout(tmp_path):
    from flcore.data.fmnist_format import FMNIST_CONTENT_MD5S

    layouts = _write_all_layouts(tmp_path, num_train=5, num_test=3, seed=1)
    for layout, (root, _) in layouts.items():
        with pytest.raises(DatasetError, match="checksum mismatch for train-images-idx3-ubyte") as info:
            load_dataset("fmnist", root)
        message = str(info.value)
        assert len(message.splitlines()) == 1
        # a .gz file is checked by its content where its md5 is not torchvision's
        assert FMNIST_CONTENT_MD5S["train-images-idx3-ubyte"] in message, layout
        if layout != "idx":
            assert dict(FashionMNIST.resources)["train-images-idx3-ubyte.gz"] in message, layout


def test_a_truncated_archive_is_named_in_one_line(tmp_path):
    root, md5s = tmp_path / "deb", write_fake_fmnist(tmp_path / "deb", 9, 3, seed=3, layout="debian")
    path = root / "train-images-idx3-ubyte.gz"
    path.write_bytes(path.read_bytes()[:-300])  # a download cut short
    with pytest.raises(DatasetError) as info:
        load_dataset("fmnist", root, checksums=md5s)
    message = str(info.value)
    assert message.startswith(f"{path}: not a complete gzip file") and len(message.splitlines()) == 1


def test_a_partial_uncompressed_file_fails_its_md5(tmp_path):
    root, md5s = tmp_path / "idx", write_fake_fmnist(tmp_path / "idx", 9, 3, seed=3, layout="idx")
    path = root / "train-labels-idx1-ubyte"
    path.write_bytes(path.read_bytes()[:-2])
    with pytest.raises(DatasetError, match=f"checksum mismatch for train-labels-idx1-ubyte .*expected "
                                           f"{md5s['train-labels-idx1-ubyte']}"):
        load_dataset("fmnist", root, checksums=md5s)


def test_a_layout_missing_a_file_names_it(tmp_path):
    root, md5s = tmp_path / "deb", write_fake_fmnist(tmp_path / "deb", 9, 3, seed=3, layout="debian")
    (root / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(DatasetError, match="incomplete in .*deb: missing t10k-labels-idx1-ubyte.gz"):
        load_dataset("fmnist", root, checksums=md5s)


def test_a_folder_without_the_files_names_both_layouts_and_debians_path(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError) as info:
        load_dataset("fmnist", tmp_path / "empty")
    message = str(info.value)
    assert "not found" in message and "FashionMNIST/raw" in message
    assert "/usr/share/datasets/fashion-mnist" in message and "dataset-fashion-mnist" in message


def test_checksums_may_give_the_content_md5_instead_of_the_archives(tmp_path):
    root, md5s = tmp_path / "deb", write_fake_fmnist(tmp_path / "deb", 9, 3, seed=3, layout="debian")
    incomplete = dict(md5s)
    del incomplete["t10k-images-idx3-ubyte"]
    with pytest.raises(ValueError, match="t10k-images-idx3-ubyte.gz"):
        load_dataset("fmnist", root, checksums=incomplete)
    with expected_checksums("fmnist", md5s):
        assert load_dataset("fmnist", root).train_x.shape[0] == 9
