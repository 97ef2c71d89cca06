"""The FedGloSS paper's artifacts (Caldarola, Cagnasso, Caputo, Ciccone; arXiv:2412.03752).

Registered so far: the configuration tables and figure, which need no training --
Table 2 (the overview of SAM-based methods, from the method registry), Table 11 (data-set
statistics of the splits flcore generates), Tables 12 and 13 (training hyper-parameters
and search grids beside flcore's presets) and Figure 20 (per-client class composition of
the CIFAR splits).  See :mod:`flcore.papers.fedgloss.config_tables` and
:mod:`flcore.reproduction.splits`.

The facts the run groups of :mod:`.results` and :mod:`.analysis` share are defined here
once: the methods of the paper's tables (:data:`GLOSS_ALGORITHMS`), the ResNet-18 settings
and configuration, and how a stored run's configuration is read (:func:`run_config`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flcore.reproduction.artifacts import no_runs, register_artifacts

PAPER = "fedgloss"

#: Table 3's ResNet-18 columns (dataset label, alpha); Figs. 8 and 14 run them too.
RESNET_SETTINGS = (("CIFAR-10", 0.05), ("CIFAR-100", 0.5))
#: FedGloSS paper Table 12, ResNet18-GN row.
RESNET_CONFIG = {"model": "resnet18gn", "per_round": 10, "rounds": 10_000, "lr": 0.01, "momentum": 0.7,
                 "weight_decay": 1e-5}


@dataclass(frozen=True)
class GlossAlgorithm:
    """A row of the FedGloSS tables: registered method, the block (client optimizer) it is
    shown in, the ``sam-main`` row whose runs it shares (FedAvg, FedSAM), config overrides."""

    label: str
    method: str
    block: str  # "SGD" | "SAM"
    fedsam_label: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)


#: Table 3's rows, in the paper's order (SGD block, then SAM block).
GLOSS_ALGORITHMS = (
    GlossAlgorithm("FedAvg", "fedavg", "SGD", "FedAvg E=1"),
    GlossAlgorithm("FedProx", "fedprox", "SGD"),
    GlossAlgorithm("FedDyn", "feddyn", "SGD"),
    GlossAlgorithm("SCAFFOLD", "scaffold", "SGD"),
    GlossAlgorithm("FedGloSS-SGD", "fedgloss-sgd", "SGD"),
    GlossAlgorithm("FedSAM", "fedsam", "SAM", "FedSAM"),
    GlossAlgorithm("FedDyn+SAM", "feddyn+sam", "SAM"),
    GlossAlgorithm("FedSpeed", "fedspeed", "SAM"),
    GlossAlgorithm("FedGAMMA", "fedgamma", "SAM"),
    GlossAlgorithm("FedSMOO", "fedsmoo", "SAM"),
    GlossAlgorithm("FedGloSS-SAM", "fedgloss-sam", "SAM"),
)
#: Rows of the ablations: NaiveFedGloSS (Table 6) and FedGloSS without ADMM (Table 9).
EXTRA_ALGORITHMS = (
    GlossAlgorithm("NaiveFedGloSS", "naivefedgloss", "SAM"),
    GlossAlgorithm("FedGloSS-SGD w/o ADMM", "fedgloss-sgd-noadmm", "SGD"),
    GlossAlgorithm("FedGloSS-SAM w/o ADMM", "fedgloss-sam-noadmm", "SAM"),
)
ALGORITHM = {a.label: a for a in GLOSS_ALGORITHMS + EXTRA_ALGORITHMS}
SGD_ALGORITHMS = tuple(a.label for a in GLOSS_ALGORITHMS if a.block == "SGD")
SAM_ALGORITHMS = tuple(a.label for a in GLOSS_ALGORITHMS if a.block == "SAM")


def run_config(run_dir: str | Path) -> dict:
    """The configuration a stored run was trained with (its ``config.json``)."""
    return json.loads((Path(run_dir) / "config.json").read_text())


register_artifacts(PAPER, {
    "fedgloss-table-2": no_runs,
    "fedgloss-table-11": no_runs,
    "fedgloss-table-12": no_runs,
    "fedgloss-table-13": no_runs,
    "fedgloss-fig-20": no_runs,
})
