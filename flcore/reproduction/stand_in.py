"""The stand-in: what a scale trains in place of the data sets a paper names.

At the ``paper`` scale a paper's data set label is its own data set ("CIFAR-100" is
CIFAR-100).  Below it, every label of a paper maps to one *stand-in* data set, the scale's
(MNIST-1D for ``smoke`` and ``small``: :data:`flcore.config.scales.DEFAULT_DATASET`) unless
the paper registers another (:func:`register_stand_in`, one line in its package), trained
with that data set's default model.  :func:`stand_in_for` gives the :class:`StandIn` of a
scale and paper; the papers' run definitions, their notebooks and the claims ask it which
data set a label trains, how to name it on a page, which of several labels are distinct
runs, and what its model can offer a claim (:mod:`flcore.models.traits`) -- rather than
branching on the scale's name.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flcore.config import DATASET_LABELS, DEFAULT_DATASET, SCALES, scale_defaults
from flcore.models import default_model_for
from flcore.models.traits import TRAITS, model_traits

#: The papers' names of their data sets, and flcore's.
PAPER_DATASETS = {"CIFAR-10": "cifar10", "CIFAR10": "cifar10", "CIFAR-100": "cifar100", "CIFAR100": "cifar100",
                  "FMNIST": "fmnist", "Fashion-MNIST": "fmnist", "PACS": "pacs"}
#: The scale that runs the papers' own data sets.
PAPER_SCALE = "paper"


def paper_dataset(label: str) -> str:
    """flcore's name of the data set a paper's ``label`` names (``"CIFAR-100"`` -> ``"cifar100"``)."""
    try:
        return PAPER_DATASETS[label]
    except KeyError:
        raise ValueError(f"data set label {label!r}: not a data set of the papers ({', '.join(PAPER_DATASETS)})") \
            from None


@dataclass(frozen=True)
class StandIn:
    """What ``scale`` trains for a paper's data set labels: ``dataset`` for every label
    (None at the paper scale: each label is its own data set)."""

    scale: str
    dataset: str | None

    @property
    def is_paper(self) -> bool:
        """Whether the runs train the papers' own data sets (the ``paper`` scale)."""
        return self.dataset is None

    @property
    def name(self) -> str:
        """The stand-in data set as pages name it (``"MNIST-1D"``); ``"the paper's data"``."""
        return "the paper's data" if self.dataset is None else DATASET_LABELS.get(self.dataset, self.dataset)

    @property
    def model(self) -> str | None:
        """The model the stand-in trains (its data set's default); None at the paper scale."""
        return None if self.dataset is None else default_model_for(self.dataset)

    def offers(self) -> frozenset[str]:
        """The traits of the stand-in's model (:mod:`flcore.models.traits`); every trait at the paper scale."""
        return frozenset(TRAITS) if self.model is None else model_traits(self.model)

    def dataset_for(self, label: str) -> str:
        """flcore's data set for the paper's ``label`` at this scale."""
        return paper_dataset(label) if self.dataset is None else self.dataset

    def data_name(self, label: str) -> str:
        """``label`` as a page names the data of its runs: ``"CIFAR-100"`` at the paper scale,
        ``"MNIST-1D (small scale, standing in for CIFAR-100)"`` below it."""
        return label if self.dataset is None else f"{self.name} ({self.scale} scale, standing in for {label})"

    def short_name(self, label: str) -> str:
        """``"CIFAR-100"`` at the paper scale, ``"MNIST-1D (small scale)"`` below it."""
        return label if self.dataset is None else f"{self.name} ({self.scale} scale)"

    def ours(self) -> str:
        """What a table of published numbers adds to its caption about our runs:
        ``""`` at the paper scale, ``" (ours: MNIST-1D at the small scale)"`` below it."""
        return "" if self.dataset is None else f" (ours: {self.name} at the {self.scale} scale)"

    def distinct(self, labels: Sequence[str]) -> list[str]:
        """The labels whose runs differ: all at the paper scale, the first below it (every
        label is the same stand-in data set)."""
        return list(labels) if self.dataset is None else list(labels[:1])


#: (paper, scale) -> the data set a paper's runs use below the paper scale, where it is not
#: the scale's default (:func:`register_stand_in`).
_PAPER_STAND_INS: dict[tuple[str, str], str] = {}


def register_stand_in(paper: str, scale: str, dataset: str) -> None:
    """Make ``dataset`` the stand-in of ``paper`` 's data sets at ``scale`` (below the paper
    scale; the data set needs a preset at that scale)."""
    if scale not in SCALES or scale == PAPER_SCALE:
        raise ValueError(f"scale: a stand-in is for {', '.join(s for s in SCALES if s != PAPER_SCALE)}, "
                         f"got {scale!r}")
    scale_defaults(scale, dataset)  # one ConfigError line when the data set has no preset there
    _PAPER_STAND_INS[(paper, scale)] = dataset


def stand_in_for(scale: str, paper: str | None = None) -> StandIn:
    """The :class:`StandIn` of ``scale`` for ``paper`` (its registered stand-in, else the scale's)."""
    if scale not in SCALES:
        raise ValueError(f"scale: one of {', '.join(SCALES)}, got {scale!r}")
    if scale == PAPER_SCALE:
        return StandIn(scale, None)
    return StandIn(scale, _PAPER_STAND_INS.get((paper, scale), DEFAULT_DATASET[scale]))
