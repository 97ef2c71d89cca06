"""The FedLESAM paper's artifacts (Fan et al., ICML 2024) as data.

Configuration artifacts, none of which trains a model: Table 1 (the SAM-based methods'
base algorithm and target) and Table 7 (memory, communication, backpropagations) are
rendered from the method registry (:mod:`flcore.experiments.method_costs`); Table 6 (data-set
statistics) from flcore's data loader (:mod:`flcore.experiments.dataset_stats`); Figure 5
(the clients' label distributions) from flcore's partition functions
(:mod:`flcore.experiments.partition_maps`).
"""
from __future__ import annotations

from .artifacts import Artifact, register_artifact
from .fedsam import _no_runs

PAPER = "fedlesam"

register_artifact(Artifact(
    "fedlesam-table-1", PAPER, "table", "Table 1: summary of the SAM-based federated methods", _no_runs))
register_artifact(Artifact(
    "fedlesam-table-7", PAPER, "table",
    "Table 7: stored memory, communication and backpropagations relative to FedAvg", _no_runs))
register_artifact(Artifact(
    "fedlesam-fig-5", PAPER, "figure", "Figure 5: the clients' label distributions", _no_runs))
register_artifact(Artifact(
    "fedlesam-table-6", PAPER, "table", "Table 6: data-set statistics", _no_runs))
