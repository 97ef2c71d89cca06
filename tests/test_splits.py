"""Statistics of the splits flcore generates (FedGloSS Table 11 and Fig. 20, FedSAM Table 9)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from flcore.data import partition
from flcore.reproduction import splits as splits_module
from flcore.reproduction.splits import (
    dataset_stats_ours,
    generate_split,
    paper_splits,
    plot_class_distribution,
    split_summary,
    training_labels,
)


def test_class_counts_per_client_depend_only_on_the_class_sizes():
    """The module's premise: labels with CIFAR's class counts give the same per-client
    class counts as any reordering of them (the real labels), only other images."""
    labels, _, source = training_labels("cifar100")
    assert source == "CIFAR class counts" and len(labels) == 50_000
    shuffled = np.random.default_rng(7).permutation(labels)
    for alpha in (0.0, 0.5, 1000.0):
        a = partition("dirichlet", labels, 100, alpha=alpha, samples_per_client=500, seed=3, cache=False)
        b = partition("dirichlet", shuffled, 100, alpha=alpha, samples_per_client=500, seed=3, cache=False)
        counts_a = np.stack([np.bincount(labels[i], minlength=100) for i in a])
        counts_b = np.stack([np.bincount(shuffled[i], minlength=100) for i in b])
        assert (counts_a == counts_b).all()
        assert any(not np.array_equal(x, y) for x, y in zip(a, b))  # other images, same counts


def test_alpha_zero_deals_one_class_per_client_evenly():
    split = generate_split("cifar10", 0.0)
    assert split.counts.shape == (100, 10)
    assert (split.sizes == 500).all() and split.sizes.sum() == 50_000
    assert (split.classes_per_client == 1).all()
    # 5,000 images per class and 500 per client: every class on exactly 10 clients
    assert ((split.counts > 0).sum(axis=0) == 10).all()
    assert split.test_samples == 10_000


def test_split_is_the_one_a_paper_run_uses():
    """Same partition call as the engine: resolve_config at the paper scale, its seed."""
    split = generate_split("cifar100", 0.5, seed=1)
    labels, _, _ = training_labels("cifar100")
    parts = partition("dirichlet_rounded", labels, 100, alpha=0.5, samples_per_client=500, seed=1, cache=False)
    assert (split.counts == np.stack([np.bincount(labels[i], minlength=100) for i in parts])).all()
    assert not (split.counts == generate_split("cifar100", 0.5, seed=0).counts).all()


def test_summary_and_dataset_statistics():
    splits = paper_splits()
    summary = split_summary(splits)
    assert list(summary["alpha"]) == [0.0, 0.05, 100.0, 0.0, 0.5, 1000.0]
    assert (summary["train_samples"] == 50_000).all() and (summary["images_per_client"] == "500").all()
    means = summary.set_index(["dataset", "alpha"])["mean_classes_per_client"]
    assert means[("CIFAR-10", 0.0)] == 1.0 and means[("CIFAR-100", 0.0)] == 1.0
    assert means[("CIFAR-10", 0.0)] < means[("CIFAR-10", 0.05)] < means[("CIFAR-10", 100.0)] <= 10
    stats = dataset_stats_ours(["CIFAR-10", "Landmarks-User-160k"], splits,
                               columns=("train_clients", "size_imbalance", "train_samples"), task=True)
    assert stats.iloc[0].to_dict() == {"dataset": "CIFAR-10", "task": "Classification", "train_clients": 100,
                                       "size_imbalance": "no", "train_samples": 50_000}
    assert set(stats.iloc[1].drop("dataset")) == {"not in flcore"}


def test_size_imbalance_is_measured_not_assumed():
    split = generate_split("cifar10", 0.05)
    uneven = splits_module.Split("cifar10", 0.05, np.vstack([split.counts[:-1], split.counts[-1:] // 2]),
                                 10_000, "test")
    stats = dataset_stats_ours(["CIFAR-10"], [uneven], columns=("size_imbalance", "train_samples"))
    assert stats.loc[0, "size_imbalance"] == "yes" and stats.loc[0, "train_samples"] < 50_000


def test_unknown_dataset_is_refused():
    with pytest.raises(ValueError, match="dataset"):
        training_labels("mnist")


def test_class_distribution_figure_has_one_heat_map_per_split():
    import matplotlib.pyplot as plt

    splits = paper_splits()
    fig = plot_class_distribution(splits)
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 6
    assert f"{splits[2].mean_classes_per_client:.2f} classes per client" in panels[2].get_title()
    shares = panels[0].images[0].get_array()
    assert shares.shape == (10, 100) and np.allclose(shares.sum(axis=0), 100.0)
    plt.close(fig)
