"""The decoded-data cache (``flcore.data.cache.cached_decode``) on fake files in the exact
torchvision on-disk formats: a second load reads the cache (no decoding), gives the same
arrays, and a cache whose bytes do not match its digest, or sources that changed, are
decoded again."""
import hashlib
import json

import numpy as np
import pytest
import torch

import flcore.data.cifar as cifar
import flcore.data.fmnist as fmnist
import flcore.data.pacs as pacs
from flcore.data import DatasetError, write_fake_cifar, write_fake_fmnist, write_fake_pacs
from flcore.data.cache import cache_dir, read_decoded


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FLCORE_CACHE", str(tmp_path / "cache"))


def counting(monkeypatch, module):
    """Wrap ``module._decode`` so the test sees how often the source files are decoded."""
    calls = []
    original = module._decode

    def wrapped(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)
    monkeypatch.setattr(module, "_decode", wrapped)
    return calls


def cache_files():
    return sorted((cache_dir() / "decoded").glob("*.arrays"))


def same_dataset(a, b):
    assert torch.equal(a.train_pixels, b.train_pixels) and torch.equal(a.test_pixels, b.test_pixels)
    assert torch.equal(a.train_y, b.train_y) and torch.equal(a.test_y, b.test_y)
    assert torch.equal(a.train_x, b.train_x)


def test_cifar_second_load_reads_the_cache_and_equals_the_first(tmp_path, monkeypatch):
    md5s = write_fake_cifar(tmp_path / "data", "cifar10", num_train=37, num_test=9, seed=5)
    calls = counting(monkeypatch, cifar)
    first = cifar.load_cifar("cifar10", tmp_path / "data", checksums=md5s)
    second = cifar.load_cifar("cifar10", tmp_path / "data", checksums=md5s)
    assert len(calls) == 1
    same_dataset(first, second)
    assert first.train_pixels.dtype == torch.uint8 and first.train_pixels.shape == (37, 32, 32, 3)
    # the float images are the pixels / 255, channels first
    assert torch.equal(second.train_x, second.train_pixels.permute(0, 3, 1, 2).float() / 255)


def test_cache_file_is_plain_arrays_with_a_json_header_not_a_pickle(tmp_path):
    md5s = write_fake_cifar(tmp_path / "data", "cifar10", num_train=20, num_test=5, seed=1)
    cifar.load_cifar("cifar10", tmp_path / "data", checksums=md5s)
    (path,) = cache_files()
    raw = path.read_bytes()
    magic = b"FLCORE-ARRAYS\x00\x01\x00"
    assert raw.startswith(magic)  # not a pickle: raw bytes behind a JSON header
    size = int.from_bytes(raw[len(magic):len(magic) + 8], "little")
    header = json.loads(raw[len(magic) + 8:len(magic) + 8 + size])
    arrays, sources = read_decoded(path)
    assert set(sources) == set(md5s) and all(sources[f]["md5"] == md5s[f] for f in md5s)
    assert arrays["train_x"].dtype == np.uint8 and arrays["train_y"].dtype == np.int64
    assert {a["name"] for a in header["arrays"]} == {"train_x", "train_y", "test_x", "test_y"}
    assert header["format"] and len(header["sha256"]) == 64


def test_a_corrupt_cache_is_rebuilt(tmp_path, monkeypatch):
    md5s = write_fake_cifar(tmp_path / "data", "cifar10", num_train=20, num_test=5, seed=2)
    calls = counting(monkeypatch, cifar)
    first = cifar.load_cifar("cifar10", tmp_path / "data", checksums=md5s)
    (path,) = cache_files()
    raw = bytearray(path.read_bytes())
    raw[-7] ^= 0xFF  # one pixel byte: the header still parses, the digest does not match
    path.write_bytes(bytes(raw))
    assert read_decoded(path) is None
    again = cifar.load_cifar("cifar10", tmp_path / "data", checksums=md5s)
    assert len(calls) == 2
    same_dataset(first, again)
    assert read_decoded(path) is not None  # rewritten
    cifar.load_cifar("cifar10", tmp_path / "data", checksums=md5s)
    assert len(calls) == 2


def test_a_truncated_or_foreign_cache_file_is_not_trusted(tmp_path):
    md5s = write_fake_cifar(tmp_path / "data", "cifar10", num_train=20, num_test=5, seed=2)
    cifar.load_cifar("cifar10", tmp_path / "data", checksums=md5s)
    (path,) = cache_files()
    raw = path.read_bytes()
    path.write_bytes(raw[:-8])
    assert read_decoded(path) is None
    path.write_bytes(b"\x80\x04" + raw[2:])  # a pickle-looking prefix
    assert read_decoded(path) is None


def test_a_changed_source_file_is_decoded_again_and_checked(tmp_path, monkeypatch):
    root = tmp_path / "data"
    md5s = write_fake_cifar(root, "cifar10", num_train=20, num_test=5, seed=4)
    calls = counting(monkeypatch, cifar)
    cifar.load_cifar("cifar10", root, checksums=md5s)
    target = root / "cifar-10-batches-py" / "test_batch"
    raw = bytearray(target.read_bytes())
    raw[-3] ^= 0xFF
    target.write_bytes(bytes(raw))
    with pytest.raises(DatasetError):
        cifar.load_cifar("cifar10", root, checksums=md5s)
    assert len(calls) == 2


def test_a_touched_but_unchanged_source_is_served_from_the_cache(tmp_path, monkeypatch):
    root = tmp_path / "data"
    md5s = write_fake_cifar(root, "cifar10", num_train=20, num_test=5, seed=4)
    calls = counting(monkeypatch, cifar)
    first = cifar.load_cifar("cifar10", root, checksums=md5s)
    target = root / "cifar-10-batches-py" / "test_batch"
    target.write_bytes(target.read_bytes())  # new modification time, same md5
    second = cifar.load_cifar("cifar10", root, checksums=md5s)
    assert len(calls) == 1
    same_dataset(first, second)


def test_other_sources_use_another_cache_entry(tmp_path, monkeypatch):
    a = write_fake_cifar(tmp_path / "a", "cifar10", num_train=20, num_test=5, seed=1)
    b = write_fake_cifar(tmp_path / "b", "cifar10", num_train=20, num_test=5, seed=2)
    calls = counting(monkeypatch, cifar)
    da = cifar.load_cifar("cifar10", tmp_path / "a", checksums=a)
    db = cifar.load_cifar("cifar10", tmp_path / "b", checksums=b)
    assert len(calls) == 2 and len(cache_files()) == 2
    assert not torch.equal(da.train_pixels, db.train_pixels)


def test_fmnist_second_load_reads_the_cache(tmp_path, monkeypatch):
    md5s = write_fake_fmnist(tmp_path / "data", num_train=23, num_test=7, seed=3)
    calls = counting(monkeypatch, fmnist)
    first = fmnist.load_fmnist(tmp_path / "data", checksums=md5s)
    second = fmnist.load_fmnist(tmp_path / "data", checksums=md5s)
    assert len(calls) == 1
    same_dataset(first, second)
    assert first.train_pixels.shape == (23, 28, 28, 1)


def test_pacs_second_load_reads_the_cache(tmp_path, monkeypatch):
    counts = write_fake_pacs(tmp_path / "data", per_class=2, side=10, seed=3)
    calls = counting(monkeypatch, pacs)
    first = pacs.load_pacs(tmp_path / "data", image_size=16, counts=counts)
    second = pacs.load_pacs(tmp_path / "data", image_size=16, counts=counts)
    assert len(calls) == 1
    same_dataset(first, second)


def test_fmnist_debian_layout_is_decompressed_once_then_read_from_the_cache(tmp_path, monkeypatch):
    """Debian's re-compressed archives are checked by their content once; later loads read
    the cache, and a touched archive is hashed again (its md5 recorded at the verified
    decode is the reference), never decompressed."""
    root = tmp_path / "debian"
    md5s = write_fake_fmnist(root, num_train=17, num_test=5, seed=8, layout="debian")
    calls = counting(monkeypatch, fmnist)
    unzipped = []
    original = fmnist._gunzip
    monkeypatch.setattr(fmnist, "_gunzip", lambda *a: unzipped.append(a[0].name) or original(*a))
    first = fmnist.load_fmnist(root, checksums=md5s)
    assert len(calls) == 1 and len(unzipped) == 4
    archive = root / "train-images-idx3-ubyte.gz"
    archive.write_bytes(archive.read_bytes())  # copied or touched: new mtime, same bytes
    second = fmnist.load_fmnist(root, checksums=md5s)
    assert len(calls) == 1 and len(unzipped) == 4, "served from the cache without decompressing"
    same_dataset(first, second)
    (path,) = cache_files()
    _, sources = read_decoded(path)
    assert sources[archive.name]["md5"] == hashlib.md5(archive.read_bytes()).hexdigest()


def test_fmnist_layouts_of_one_content_share_one_cache_entry(tmp_path, monkeypatch):
    roots = {layout: (tmp_path / layout, write_fake_fmnist(tmp_path / layout, 9, 4, seed=2, layout=layout))
             for layout in ("idx", "debian")}
    calls = counting(monkeypatch, fmnist)
    loaded = [fmnist.load_fmnist(root, checksums=md5s) for root, md5s in roots.values()]
    same_dataset(*loaded)
    assert len(cache_files()) == 1, "keyed by the content's md5s, not by the files' form or place"
    assert len(calls) == 2, "other source files: verified and decoded again"


def test_fmnist_archive_replaced_after_caching_is_checked_again(tmp_path):
    root = tmp_path / "debian"
    md5s = write_fake_fmnist(root, num_train=9, num_test=4, seed=8, layout="debian")
    fmnist.load_fmnist(root, checksums=md5s)
    write_fake_fmnist(tmp_path / "other", num_train=9, num_test=4, seed=9, layout="debian")
    (root / "t10k-labels-idx1-ubyte.gz").write_bytes((tmp_path / "other" / "t10k-labels-idx1-ubyte.gz").read_bytes())
    with pytest.raises(DatasetError, match="checksum mismatch for t10k-labels-idx1-ubyte.gz"):
        fmnist.load_fmnist(root, checksums=md5s)


def _rewrite_entry(change) -> None:
    """Edit the one cache entry's arrays and write it back whole, its digest recomputed (what
    a careless tool or a hostile user would do): its own digest then vouches for it."""
    from flcore.data.cache import write_decoded

    (path,) = cache_files()
    arrays, sources = read_decoded(path)
    arrays = dict(arrays)
    change(arrays)
    write_decoded(path, arrays, sources)


@pytest.mark.parametrize("case,change", [
    ("a missing train_y", lambda a: a.pop("train_y")),
    ("a label of 200", lambda a: a.__setitem__("train_y", np.where(np.arange(len(a["train_y"])) == 0, 200,
                                                                      a["train_y"]))),
    ("images of another shape", lambda a: a.__setitem__("test_x", a["test_x"][:, :14])),
    ("float images", lambda a: a.__setitem__("train_x", a["train_x"].astype(np.float32))),
    ("labels of another length", lambda a: a.__setitem__("test_y", a["test_y"][:-1])),
])
def test_an_entry_that_is_not_data_is_ignored_and_decoded_again(tmp_path, monkeypatch, case, change):
    md5s = write_fake_fmnist(tmp_path / "data", num_train=23, num_test=7, seed=3)
    first = fmnist.load_fmnist(tmp_path / "data", checksums=md5s)
    _rewrite_entry(change)
    calls = counting(monkeypatch, fmnist)
    with pytest.warns(UserWarning, match="not data"):
        again = fmnist.load_fmnist(tmp_path / "data", checksums=md5s)
    assert len(calls) == 1  # the sources were decoded again
    same_dataset(first, again)
    assert read_decoded(cache_files()[0]) is not None and fmnist.load_fmnist(tmp_path / "data", checksums=md5s)


def test_pacs_domains_out_of_range_are_not_data(tmp_path, monkeypatch):
    counts = write_fake_pacs(tmp_path / "data", per_class=2, side=10, seed=3)
    first = pacs.load_pacs(tmp_path / "data", image_size=8, counts=counts)
    _rewrite_entry(lambda a: a.__setitem__("train_d", a["train_d"] + 9))
    with pytest.warns(UserWarning, match="train_d: values outside 0..3"):
        again = pacs.load_pacs(tmp_path / "data", image_size=8, counts=counts)
    assert torch.equal(first.train_domain, again.train_domain)
