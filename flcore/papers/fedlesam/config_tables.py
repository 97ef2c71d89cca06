"""Data-set statistics as the papers tabulate them (FedLESAM Table 6), read from flcore's loaders.

:func:`dataset_statistics` loads each data set flcore has with
:func:`flcore.data.load_dataset` and counts what it holds: images (train + test), classes
(``Dataset.num_classes``), domains (flcore's data sets are single-domain: ``-``) and the
image size (``Dataset.input_shape``, written ``3x32x32``).  Nothing is downloaded: when
the CIFAR files are not under ``root`` the cells say so.  Data sets flcore does not have
(OfficeHome, DomainNet) are ``not in flcore``.
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from flcore.data import DatasetError, load_dataset
from flcore.report import compare_settings
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
