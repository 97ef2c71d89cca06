"""Data-set statistics as the papers tabulate them (FedLESAM Table 6), read from flcore's loaders.

:func:`dataset_statistics` loads each data set flcore has with
:func:`flcore.data.load_dataset` and counts what it holds: images (train + test), classes
(``Dataset.num_classes``), domains (flcore's data sets are single-domain: ``-``) and the
image size (``Dataset.input_shape``, written ``3x32x32``).  Nothing is downloaded: when
the CIFAR files are not under ``root`` the cells say so.  Data sets flcore does not have
(OfficeHome, DomainNet) are ``not in flcore``.

**Figure 5's partitions.** Client-by-class sample counts of the partitions flcore generates (FedLESAM Fig. 5).

The FedLESAM paper (Fan et al. 2024, App. C.2, Fig. 5) shows heat-maps of the samples per
class of every client for CIFAR-10/100 split among 100 and 200 clients by a Dirichlet
distribution with coefficients 0.6 and 0.1.  Here the same splits come from
:func:`flcore.data.partition_dirichlet` (and the pathological split of its Table 2 from
:func:`flcore.data.partition.partition_shards`), applied to a label vector with the CIFAR
training sets' class sizes (both are balanced: 5,000 images per class for CIFAR-10, 500
for CIFAR-100), so no data need be downloaded: a partition depends on the labels only.

Coefficient convention: FedLESAM's code draws each client's class prior from
``Dir(a * 1_C)`` (``a`` per class), while flcore's Dirichlet partition takes the total
concentration ``alpha`` (``Dir(alpha * p)``, ``p`` uniform, ``alpha / C`` per class); the
paper's ``a`` is therefore flcore's ``alpha = a * C`` (:func:`flcore_alpha`).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from flcore.data import DatasetError, load_dataset
from flcore.data.partition import partition_dirichlet, partition_shards
from flcore.report import compare_settings
from flcore.reproduction.published import published as published_values
from flcore.reproduction.stand_in import paper_dataset

NOT_IN_FLCORE = "not in flcore"
#: The papers' data set names -> flcore's.
#: The paper's data set labels flcore has (both spellings the paper uses).
DATASETS = ("CIFAR10", "CIFAR-10", "CIFAR100", "CIFAR-100")
COLUMNS = ("total_images", "classes", "domains", "image_size")


MISSING = "CIFAR files not under"


def dataset_statistics(labels: Sequence[str], root: str = "data",
                       checksums: dict[str, dict[str, str]] | None = None) -> pd.DataFrame:
    """One row per data set label: ``dataset, total_images, classes, domains, image_size``
    (``checksums``: flcore data set name -> md5s, for files written by
    :func:`flcore.data.write_fake_cifar`)."""
    rows = []
    for label in labels:
        name = paper_dataset(label) if label in DATASETS else None
        if name is None:
            rows.append({"dataset": label, **{c: NOT_IN_FLCORE for c in COLUMNS}})
            continue
        try:
            data = load_dataset(name, root, checksums=(checksums or {}).get(name))
        except DatasetError:
            missing = f"{MISSING} {str(root)!r}"
            rows.append({"dataset": label, **{c: missing for c in COLUMNS}})
            continue
        rows.append({"dataset": label, "total_images": int(len(data.train_y) + len(data.test_y)),
                     "classes": int(data.num_classes), "domains": "-",
                     "image_size": "x".join(str(d) for d in data.input_shape)})
    return pd.DataFrame(rows)


def compare_statistics(published: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """Published beside flcore (:func:`flcore.report.compare_settings`); a published cell the
    text conversion lost is left out of the row's verdict."""

    table = compare_settings(published, ours, ["dataset"])
    verdicts = []
    for verdict, (_, row), (_, mine) in zip(table["match"], published.iterrows(), ours.iterrows()):
        if str(mine[COLUMNS[0]]).startswith(MISSING):
            verdict = "not checked: the CIFAR files are missing"
        elif str(verdict).startswith("no: "):
            differing = [c.strip() for c in verdict[len("no: "):].split(",") if str(row[c.strip()]) != ""]
            verdict = "no: " + ", ".join(differing) if differing else "yes (lost cells not compared)"
        verdicts.append(verdict)
    table["match"] = verdicts
    return table


def statistics_caption(table: pd.DataFrame, root: str = "data") -> str:
    """The caption of Table 6 beside flcore (:func:`compare_statistics`): how many of the data
    sets flcore loaded agree, how many it could not check (no CIFAR files under ``root``) and
    how many it does not have."""
    agree = table["match"].str.startswith("yes").sum()
    missing = table["match"].str.startswith("not checked").sum()
    absent = (table["match"] == NOT_IN_FLCORE).sum()
    checked = len(table) - missing - absent
    finding = (f"{agree} of the {checked} data sets flcore loaded agree in images, classes and domains"
               if checked else "flcore's CIFAR files were not available to this build, so no row is checked")
    return (f"The data sets' statistics, the paper's beside what flcore's loader holds: {finding}"
            + (f"; {missing} not checked (no CIFAR files under `{root}`)" if checked and missing else "")
            + f"; {absent} of {len(table)} (OfficeHome, DomainNet) are not in flcore.")


def show_statistics(page, root: str = "data") -> pd.DataFrame:
    """Table 6 on ``page``: the published statistics beside :func:`dataset_statistics` read
    under ``root`` (:func:`compare_statistics`), under :func:`statistics_caption`; returns it."""
    paper = published_values(page.artifact_id)
    ours = dataset_statistics(list(paper["dataset"]), root=root)
    table = compare_statistics(paper, ours)
    page.table(table, statistics_caption(table, root), downloads={"published": paper, "flcore": ours})
    return table


#: What Table 3 (OfficeHome and DomainNet with a pretrained ViT-B/32) needs, and whether
#: this machine has it.
TABLE3_NEEDS = pd.DataFrame([
    {"item": "data", "needs": "OfficeHome (4 domains) and DomainNet (6 domains), leave one domain out",
     "available here": "no: not in torchvision, no download offline"},
    {"item": "model", "needs": "pretrained ViT-B/32 (checkpoint and head not stated)",
     "available here": "no: no pretrained checkpoint offline"},
    {"item": "clients", "needs": "1 client per training domain (100%) or 10 per domain (20%)",
     "available here": "the split of a domain into 10 clients is not stated"},
    {"item": "training", "needs": "SGD lr 0.001, E = 5, B = 32, 400 rounds, rho tuned per method",
     "available here": "yes (flcore's methods and config fields)"},
])


#: CIFAR training sets: classes and images per class (both balanced).
CIFAR_TRAIN = {"CIFAR-10": (10, 5000), "CIFAR-100": (100, 500)}
#: Fig. 5's panels: Dirichlet coefficients (per class, the paper's convention) and client counts.
FIG5_COEFFICIENTS = (0.6, 0.1)
FIG5_CLIENTS = (100, 200)


def cifar_train_labels(dataset: str) -> np.ndarray:
    """A label vector with ``dataset``'s training class sizes (class c repeated)."""
    classes, per_class = CIFAR_TRAIN[dataset]
    return np.repeat(np.arange(classes), per_class)


def flcore_alpha(coefficient: float, num_classes: int) -> float:
    """flcore's total concentration for a per-class Dirichlet coefficient (module docstring)."""
    return float(coefficient) * num_classes


def class_counts(clients: list[np.ndarray], labels: np.ndarray, num_classes: int) -> np.ndarray:
    """``[clients, classes]`` sample counts of a partition (index arrays into ``labels``)."""
    return np.stack([np.bincount(labels[idx], minlength=num_classes) for idx in clients])


def dirichlet_counts(dataset: str, coefficient: float, num_clients: int, seed: int = 0) -> np.ndarray:
    """Counts of the Dirichlet split of Fig. 5 (equal client sizes: 50,000 / clients each,
    as in FedLESAM's code)."""
    labels = cifar_train_labels(dataset)
    classes = CIFAR_TRAIN[dataset][0]
    parts = partition_dirichlet(labels, num_clients, flcore_alpha(coefficient, classes), seed=seed)
    return class_counts(parts, labels, classes)


def pathological_counts(dataset: str, classes_per_client: int, num_clients: int, seed: int = 0) -> np.ndarray:
    """Counts of the pathological split (``classes_per_client`` label shards per client)."""
    labels = cifar_train_labels(dataset)
    parts = partition_shards(labels, num_clients, classes_per_client, seed=seed)
    return class_counts(parts, labels, CIFAR_TRAIN[dataset][0])


def skew_summary(counts: np.ndarray) -> dict:
    """How concentrated the clients' label distributions are: mean number of classes a
    client holds, of classes covering 80% of its samples, and the mean share of its
    largest class."""
    totals = counts.sum(axis=1, keepdims=True)
    shares = np.sort(counts / totals, axis=1)[:, ::-1]
    cover80 = (np.cumsum(shares, axis=1) < 0.8).sum(axis=1) + 1
    return {"clients": counts.shape[0], "samples per client": int(np.median(totals)),
            "classes held (mean)": float((counts > 0).sum(axis=1).mean()),
            "classes for 80% (mean)": float(cover80.mean()),
            "largest class share (mean)": float(shares[:, 0].mean())}


def fig5_panels(seed: int = 0) -> list[dict]:
    """Every panel of Fig. 5: ``{dataset, coefficient, clients, alpha, counts}``."""
    panels = []
    for dataset in CIFAR_TRAIN:
        for coefficient in FIG5_COEFFICIENTS:
            for clients in FIG5_CLIENTS:
                panels.append({"dataset": dataset, "coefficient": coefficient, "clients": clients,
                               "alpha": flcore_alpha(coefficient, CIFAR_TRAIN[dataset][0]),
                               "counts": dirichlet_counts(dataset, coefficient, clients, seed)})
    return panels


def summary_table(panels: list[dict]) -> pd.DataFrame:
    """One row per panel: its data set, split, flcore alpha (Dirichlet) and :func:`skew_summary`."""
    rows = []
    for p in panels:
        split = p["split"] if "split" in p else f"Dirichlet {p['coefficient']}"
        row = {"dataset": p["dataset"], "split": split}
        if "alpha" in p:
            row["flcore alpha"] = p["alpha"]
        rows.append({**row, **skew_summary(p["counts"])})
    return pd.DataFrame(rows)
