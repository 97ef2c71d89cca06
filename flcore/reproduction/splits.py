"""Statistics of the federated splits flcore generates (FedGloSS Table 11 and Fig. 20,
FedSAM Table 9).

Every number comes from the partition a run at the ``paper`` scale uses:
``flcore.data.partition(cfg.partition, labels, cfg.clients, seed=cfg.seed,
**cfg.partition_args())`` with ``cfg = resolve_config(dataset=..., alpha=..., scale="paper")``.

Labels: the CIFAR training labels when the files are under ``data_root``; otherwise
labels with CIFAR's class counts (:data:`flcore.data.cifar_stats.CIFAR_SIZES`: every class
equally represented).  The Dirichlet partition reads the labels only through the class
of each example and its random draws depend only on the class sizes, so the per-client
class counts are the same either way -- only *which* images a client holds differs (a
test checks this).  Nothing here trains or downloads.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from flcore.config import resolve_config
from flcore.data import partition, read_split_file
from flcore.data.cifar import load_cifar
from flcore.data.cifar_stats import CIFAR_SIZES
from flcore.data.errors import DatasetError
from flcore.reproduction.stand_in import paper_dataset

NOT_IN_FLCORE = "not in flcore"
#: The heterogeneity levels both papers run (Dirichlet alpha; 0 = one class per client).
PAPER_ALPHAS = {"cifar10": (0.0, 0.05, 100.0), "cifar100": (0.0, 0.5, 1000.0)}
DATASET_LABEL = {"cifar10": "CIFAR-10", "cifar100": "CIFAR-100"}


@dataclass(frozen=True)
class Split:
    """One federated split: ``counts[k, c]`` = images of class ``c`` on client ``k``."""

    dataset: str
    alpha: float
    counts: np.ndarray
    test_samples: int
    labels_from: str  # "CIFAR files" | "CIFAR class counts"

    @property
    def clients(self) -> int:
        return int(self.counts.shape[0])

    @property
    def sizes(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    @property
    def classes_per_client(self) -> np.ndarray:
        return (self.counts > 0).sum(axis=1)

    @property
    def mean_classes_per_client(self) -> float:
        return float(self.classes_per_client.mean())


def training_labels(dataset: str, data_root: str | Path | None = None) -> tuple[np.ndarray, int, str]:
    """``(train labels, test-set size, where they came from)`` for a CIFAR dataset."""
    if dataset not in CIFAR_SIZES:
        raise ValueError(f"dataset: expected one of {', '.join(CIFAR_SIZES)}, got {dataset!r}")
    if data_root is not None:

        try:
            data = load_cifar(dataset, data_root, download=False)
            return data.train_y.numpy().astype(np.int64), int(len(data.test_y)), "CIFAR files"
        except DatasetError:
            pass
    sizes = CIFAR_SIZES[dataset]
    labels = np.repeat(np.arange(sizes["classes"], dtype=np.int64), sizes["train"] // sizes["classes"])
    return labels, sizes["test"], "CIFAR class counts"


def generate_split(dataset: str, alpha: float, data_root: str | Path | None = None, seed: int = 0) -> Split:
    """The split a ``paper``-scale run on ``dataset`` at ``alpha`` trains on."""
    cfg = resolve_config(method="fedavg", dataset=dataset, scale="paper", alpha=float(alpha), seed=seed)
    labels, test_samples, source = training_labels(dataset, data_root)
    clients = partition(cfg.partition, labels, cfg.clients, seed=cfg.seed, cache=False, **cfg.partition_args())
    num_classes = int(labels.max()) + 1
    counts = np.stack([np.bincount(labels[idx], minlength=num_classes) for idx in clients])
    return Split(dataset, float(alpha), counts, test_samples, source)


def official_split(path: str | Path, dataset: str, alpha: float) -> Split:
    """The statistics of a published split file (the FedSAM / FedGloSS repositories' LEAF
    JSON, :mod:`flcore.data.split_file`), from the labels it lists: what the data-split
    pages show beside flcore's own split when the file is given.  ``labels_from`` names the
    file; its labels are checked against CIFAR's only when a run reads it."""
    if dataset not in CIFAR_SIZES:
        raise ValueError(f"dataset: expected one of {', '.join(CIFAR_SIZES)}, got {dataset!r}")
    split = read_split_file(path)
    num_classes = CIFAR_SIZES[dataset]["classes"]
    bad = [y for ys in split.labels for y in ys if not 0 <= y < num_classes]
    if bad:
        raise DatasetError(f"split file {path}: label {bad[0]} outside 0..{num_classes - 1} of {dataset}")
    counts = np.stack([np.bincount(np.asarray(ys, dtype=np.int64), minlength=num_classes) for ys in split.labels])
    return Split(dataset, float(alpha), counts, CIFAR_SIZES[dataset]["test"], f"split file {Path(path).name}")


def official_splits(split_files: Mapping[str, Mapping[float, str | Path]] | None) -> list[Split]:
    """The published split files a data-split page is given (its ``split_files`` parameter:
    ``{"cifar10": {0.05: PATH}, "cifar100": {0.5: PATH}}``, any subset of
    :data:`PAPER_ALPHAS`' data sets and any alphas), read by :func:`official_split`, in that
    order; ``None`` or empty: none.  A data set flcore does not split, an alpha that is not
    a number or a bad file is a ``ValueError`` / :class:`~flcore.data.DatasetError`
    with one line naming it, before anything is drawn."""
    if not split_files:
        return []
    if not isinstance(split_files, Mapping):
        raise ValueError(f"split_files: expected {{dataset: {{alpha: path}}}}, got {type(split_files).__name__}")
    out = []
    for dataset, files in split_files.items():
        if dataset not in PAPER_ALPHAS:
            raise ValueError(f"split_files: data set {dataset!r} is not one of {', '.join(PAPER_ALPHAS)}")
        if not isinstance(files, Mapping):
            raise ValueError(f"split_files[{dataset!r}]: expected {{alpha: path}}, got {type(files).__name__}")
        for alpha, path in files.items():
            if isinstance(alpha, bool) or not isinstance(alpha, (int, float, str)):
                raise ValueError(f"split_files[{dataset!r}]: alpha {alpha!r} is not a number")
            try:
                value = float(alpha)
            except ValueError:
                raise ValueError(f"split_files[{dataset!r}]: alpha {alpha!r} is not a number") from None
            if not np.isfinite(value) or value < 0:
                raise ValueError(f"split_files[{dataset!r}]: alpha {alpha!r} is not a concentration (>= 0)")
            out.append(official_split(path, dataset, value))
    order = list(PAPER_ALPHAS)
    return sorted(out, key=lambda split: (order.index(split.dataset), split.alpha))


def official_beside_ours(official: Sequence[Split], ours: Sequence[Split]) -> pd.DataFrame:
    """:func:`split_summary` of each published split file followed by flcore's split of the
    same data set and alpha (when ``ours`` has it): the authors' federation beside the one a
    ``paper``-scale run draws."""
    rows = []
    for split in official:
        rows.append(split)
        rows += [s for s in ours if s.dataset == split.dataset and s.alpha == split.alpha]
    return split_summary(rows)


def paper_splits(data_root: str | Path | None = None, seed: int = 0) -> list[Split]:
    """The six splits of both papers: CIFAR-10 at alpha 0, 0.05, 100; CIFAR-100 at 0, 0.5, 1000."""
    return [generate_split(ds, alpha, data_root, seed) for ds, alphas in PAPER_ALPHAS.items() for alpha in alphas]


def split_summary(splits: Sequence[Split]) -> pd.DataFrame:
    """One row per split: clients, samples, images per client, classes per client."""
    rows = []
    for s in splits:
        k = s.classes_per_client
        rows.append({"dataset": DATASET_LABEL[s.dataset], "alpha": s.alpha, "clients": s.clients,
                     "train_samples": int(s.sizes.sum()), "images_per_client": _range(s.sizes),
                     "mean_classes_per_client": round(s.mean_classes_per_client, 2),
                     "classes_per_client": f"{int(k.min())}\u2013{int(k.max())}",
                     "labels": s.labels_from})
    return pd.DataFrame(rows)


def _range(values: np.ndarray) -> str:
    low, high = int(values.min()), int(values.max())
    return str(low) if low == high else f"{low}\u2013{high}"


def _dataset_stats(splits: Sequence[Split], dataset: str) -> dict:
    """Clients, train/test samples and size imbalance of ``dataset`` over its splits
    (values that differ between the alphas are joined with " / ")."""
    mine = [s for s in splits if s.dataset == dataset]

    def join(values):
        return " / ".join(dict.fromkeys(str(v) for v in values)) if len(set(values)) > 1 else values[0]

    return {"train_clients": join([s.clients for s in mine]),
            "train_samples": join([int(s.sizes.sum()) for s in mine]),
            "test_samples": join([s.test_samples for s in mine]),
            "size_imbalance": join(["yes" if len(set(s.sizes.tolist())) > 1 else "no" for s in mine])}


#: The published data-set names that are flcore's CIFAR data sets.
#: The CIFAR labels whose statistics flcore computes.
CIFAR_LABELS = ("CIFAR-10", "CIFAR-100")


def dataset_stats_ours(datasets: Sequence[str], splits: Sequence[Split],
                       columns: Sequence[str] = ("train_clients", "train_samples", "test_samples"),
                       task: bool = False) -> pd.DataFrame:
    """Dataset-statistics rows (FedGloSS Table 11, FedSAM Table 9) for the published
    ``datasets``, measured on ``splits``; data sets flcore does not have are marked."""
    rows = []
    for label in datasets:
        row = {"dataset": label}
        if label in CIFAR_LABELS:
            stats = _dataset_stats(splits, paper_dataset(label))
            if task:
                row["task"] = "Classification"
            row.update({c: stats[c] for c in columns})
        else:
            if task:
                row["task"] = NOT_IN_FLCORE
            row.update({c: NOT_IN_FLCORE for c in columns})
        rows.append(row)
    return pd.DataFrame(rows)


def plot_class_distribution(splits: Sequence[Split]):
    """Heat-maps of the per-client class composition, one panel per split (rows: data
    sets, columns: alphas).  Each column of a panel is one client, ordered by its most
    frequent class; the colour is the share of the client's images in each class.  The
    panel titles give the mean number of classes per client."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import PowerNorm

    datasets = list(dict.fromkeys(s.dataset for s in splits))
    columns = max(sum(s.dataset == d for s in splits) for d in datasets)
    fig, axes = plt.subplots(len(datasets), columns, figsize=(4.2 * columns, 3.6 * len(datasets)), squeeze=False,
                             constrained_layout=True)
    norm = PowerNorm(gamma=0.4, vmin=0.0, vmax=100.0)
    image = None
    for r, dataset in enumerate(datasets):
        mine = [s for s in splits if s.dataset == dataset]
        for c, split in enumerate(mine):
            ax = axes[r][c]
            share = 100.0 * split.counts / np.maximum(split.sizes[:, None], 1)
            order = np.lexsort((np.arange(split.clients), split.counts.argmax(axis=1)))
            image = ax.imshow(share[order].T, aspect="auto", origin="lower", cmap="viridis", norm=norm,
                              interpolation="nearest")
            ax.set_title(f"{DATASET_LABEL[dataset]}, \u03b1 = {split.alpha:g}\n"
                         f"{split.mean_classes_per_client:.2f} classes per client on average", fontsize=10)
            ax.set_xlabel("client (ordered by its main class)")
            ax.set_ylabel("class")
        for c in range(len(mine), columns):
            axes[r][c].axis("off")
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.8, label="share of the client's images (%)")
    return fig
