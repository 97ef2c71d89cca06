"""The data-split pages' section on the authors' own split files (FedSAM Table 9,
FedGloSS Table 11 and Fig. 20).

The FedSAM and FedGloSS repositories publish the CIFAR federations they trained on as
LEAF-style JSON (:mod:`flcore.data.split_file`).  Given to a page as its ``split_files``
parameter (``{"cifar10": {0.05: PATH}}``), each file's statistics -- clients, images,
images and classes per client, read from the labels it lists -- are shown beside flcore's
split of the same data set and alpha (:func:`flcore.reproduction.splits.official_beside_ours`).
Without files the section says how to give them.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from flcore.reproduction.splits import DATASET_LABEL, Split, official_beside_ours, official_splits

#: What a data-split page says when no split file is given.
NO_SPLIT_FILES = (
    "No split file was given (notebook parameter `split_files`), so the numbers above are flcore's own splits. "
    "The FedSAM and FedGloSS repositories publish the splits they trained on "
    "(`data/cifar10/data/train/federated_train_alpha_0.05.json` and siblings); give them as "
    "`split_files = {\"cifar10\": {0.05: \"PATH\"}, \"cifar100\": {0.5: \"PATH\"}}` to see their statistics "
    "beside these.")


def official_caption(official: Sequence[Split], ours: Sequence[Split]) -> str:
    """The caption of the authors' splits beside flcore's: the mean classes per client of
    each file against flcore's split at the same alpha (or that flcore has none)."""
    parts = []
    for split in official:
        mine = [s for s in ours if s.dataset == split.dataset and s.alpha == split.alpha]
        text = (f"{DATASET_LABEL[split.dataset]} alpha = {split.alpha:g}: {split.mean_classes_per_client:.2f} "
                f"classes per client in the file ({split.clients} clients, {int(split.sizes.sum()):,} images)")
        text += (f" against {mine[0].mean_classes_per_client:.2f} in flcore's split" if mine
                 else "; flcore draws no split at this alpha")
        parts.append(text)
    return ("The authors' split files, each followed by flcore's split of the same data set and alpha: "
            + "; ".join(parts) + ".")


def show_official_splits(page, split_files: Mapping[str, Mapping[float, str | Path]] | None,
                         ours: Sequence[Split]) -> list[Split]:
    """Show the statistics of ``split_files`` beside flcore's ``ours`` as a table of
    ``page`` (:class:`flcore.report.page.Page`), or :data:`NO_SPLIT_FILES` when none is
    given; returns the files' splits."""
    from IPython.display import Markdown, display

    official = official_splits(split_files)
    if not official:
        display(Markdown(NO_SPLIT_FILES))
        return official
    page.table(official_beside_ours(official, ours), official_caption(official, ours))
    return official
