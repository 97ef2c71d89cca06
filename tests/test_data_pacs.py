"""PACS loading, on fake images written in the release's image-folder layout."""

import numpy as np
import pytest
import torch
from PIL import Image

from flcore.data import Dataset, DatasetError, load_dataset, write_fake_pacs
from flcore.data.pacs import IMAGENET_MEAN, IMAGENET_STD, expected_pacs_counts, load_pacs, train_test_sizes
from flcore.data.pacs_format import CLASSES, DOMAINS, PUBLISHED_COUNTS


@pytest.fixture
def fake_pacs(tmp_path):
    root = tmp_path / "data"
    return root, write_fake_pacs(root, per_class=3, side=12, seed=1)


def test_fake_data_use_the_release_layout(fake_pacs):
    root, counts = fake_pacs
    assert counts == {d: 21 for d in DOMAINS}
    assert sorted(p.name for p in (root / "PACS").iterdir()) == ["art_painting", "cartoon", "photo", "sketch"]
    for domain in DOMAINS:
        assert sorted(p.name for p in (root / "PACS" / domain).iterdir()) == list(CLASSES)
    assert len(list((root / "PACS" / "photo" / "dog").glob("*.jpg"))) == 3
    assert len(list((root / "PACS" / "sketch" / "house").glob("*.png"))) == 3


def test_published_counts_and_split_sizes():
    assert sum(PUBLISHED_COUNTS.values()) == 9991
    # ceil(10%) of 2048, 2344, 1670, 3929 = 205 + 235 + 167 + 393
    assert train_test_sizes() == (8991, 1000)


def test_loads_images_labels_domains_and_a_90_10_split_per_domain(fake_pacs):
    root, counts = fake_pacs
    data = load_dataset("pacs", root, counts=counts, image_size=8)
    assert isinstance(data, Dataset) and data.name == "pacs" and data.num_classes == 7
    assert data.train_x.shape == (4 * 18, 3, 8, 8) and data.test_x.shape == (4 * 3, 3, 8, 8)  # ceil(2.1) = 3
    assert data.mean == IMAGENET_MEAN and data.std == IMAGENET_STD and data.augment is False
    assert data.domain_names == DOMAINS and data.num_domains == 4
    assert torch.equal(torch.bincount(data.train_domain), torch.tensor([18] * 4))
    assert torch.equal(torch.bincount(data.test_domain), torch.tensor([3] * 4))
    assert 0.0 <= float(data.train_x.min()) and float(data.train_x.max()) <= 1.0
    assert set(data.train_y.tolist()) <= set(range(7)) and len(set(data.test_y.tolist())) >= 1


def test_pixels_are_the_centre_crop_of_the_written_image(tmp_path):
    # images of the release's side (227) are only centre-cropped at 224 (the code's CenterCrop)
    counts = write_fake_pacs(tmp_path, per_class=1, side=227, seed=3)
    data = load_pacs(tmp_path, counts=counts)
    assert data.train_x.shape[1:] == (3, 224, 224)
    # find the first training example of sketch (png: lossless) and compare with the file
    domain = DOMAINS.index("sketch")
    rows = torch.nonzero(data.train_domain == domain).flatten()
    label = int(data.train_y[rows[0]])
    path = tmp_path / "PACS" / "sketch" / CLASSES[label] / f"{CLASSES[label]}_000.png"
    pixels = np.asarray(Image.open(path).convert("RGB"))
    top = round((227 - 224) / 2)
    expected = torch.from_numpy(pixels[top:top + 224, top:top + 224].copy()).permute(2, 0, 1).float() / 255
    assert torch.equal(data.train_x[rows[0]], expected)


def test_split_is_fixed_and_num_samples_keeps_a_subset(fake_pacs):
    root, counts = fake_pacs
    a = load_pacs(root, counts=counts, image_size=6)
    b = load_pacs(root, counts=counts, image_size=6)
    assert torch.equal(a.test_x, b.test_x) and torch.equal(a.train_y, b.train_y)
    small = load_pacs(root, counts=counts, image_size=6, num_samples=10)
    assert small.train_x.shape[0] == 10 and small.train_domain.shape == (10,)
    assert torch.equal(small.test_x, a.test_x)
    rows = [next(i for i in range(len(a.train_y)) if torch.equal(a.train_x[i], x)) for x in small.train_x]
    assert torch.equal(a.train_domain[rows], small.train_domain)


def test_expected_counts_context(fake_pacs):
    root, counts = fake_pacs
    with expected_pacs_counts(counts):
        assert load_dataset("pacs", root, image_size=4).train_x.shape[0] == 72


def test_missing_data_names_the_folder_and_where_to_get_it(tmp_path):
    with pytest.raises(DatasetError, match=r"no folder .*PACS.*not downloaded.*PACS authors"):
        load_pacs(tmp_path)


def test_missing_class_folder_and_wrong_counts_are_named(fake_pacs):
    root, counts = fake_pacs
    with pytest.raises(DatasetError, match=r"photo has 21 images, expected 1670"):
        load_pacs(root, image_size=4)  # the published counts
    for path in (root / "PACS" / "cartoon" / "horse").iterdir():
        path.unlink()
    (root / "PACS" / "cartoon" / "horse").rmdir()
    with pytest.raises(DatasetError, match=r"missing the folder\(s\) cartoon/horse"):
        load_pacs(root, counts=counts, image_size=4)


def test_bad_counts_and_options_are_refused(fake_pacs):
    root, counts = fake_pacs
    with pytest.raises(ValueError, match="positive image count"):
        load_pacs(root, counts={"photo": 21})
    with pytest.raises(ValueError, match="pacs dataset only"):
        load_dataset("mnist1d", counts=counts)


def test_dataset_checks_domain_fields():
    x, y = torch.zeros(4, 3), torch.zeros(4, dtype=torch.int64)
    with pytest.raises(ValueError, match="all be given"):
        Dataset("d", x, y, x, y, 2, None, None, False, train_domain=y)
    with pytest.raises(DatasetError, match="train_domain"):
        Dataset("d", x, y, x, y, 2, None, None, False, train_domain=y + 2, test_domain=y, domain_names=("a", "b"))
    assert Dataset("d", x, y, x, y, 2, None, None, False).num_domains == 0


def test_config_knows_pacs_before_loading():
    from flcore.config import resolve_config

    cfg = resolve_config(dataset="pacs", scale="paper", method="fedavg")
    assert (cfg.clients, cfg.per_round, cfg.rounds, cfg.local_epochs, cfg.batch_size, cfg.lr, cfg.momentum) == (
        80, 16, 400, 5, 50, 0.01, 0.9)
    assert cfg.lr_decay == 0.99


def test_federated_pacs_gives_each_client_one_domain(fake_pacs):
    from flcore.config import resolve_config
    from flcore.sim.federated_data import build_federated_data

    root, counts = fake_pacs
    cfg = resolve_config(dataset="pacs", scale="smoke", method="fedavg", data_root=str(root))
    assert (cfg.partition, cfg.alpha, cfg.clients, cfg.model) == ("domains", 0.1, 8, "alexnet_gn")
    with expected_pacs_counts(counts):
        data = build_federated_data(cfg, torch.device("cpu"))
        raw = load_pacs(root)
    domains = [set(raw.train_domain[idx].tolist()) for idx in data.client_indices]
    assert all(len(d) == 1 for d in domains)
    assert sorted(d.pop() for d in domains) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert sorted(data.client_sizes) == [9] * 8  # 18 training images per domain, 2 clients each
    assert torch.equal(data.test_domain, raw.test_domain) and data.domain_names == DOMAINS
