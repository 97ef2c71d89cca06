"""The FedGloSS paper's artifacts (Caldarola, Cagnasso, Caputo, Ciccone; arXiv:2412.03752).

Registered so far: the configuration tables and figure, which need no training --
Table 2 (the overview of SAM-based methods, from the method registry), Table 11 (data-set
statistics of the splits flcore generates), Tables 12 and 13 (training hyper-parameters
and search grids beside flcore's presets) and Figure 20 (per-client class composition of
the CIFAR splits).  See :mod:`flcore.papers.fedgloss.config_tables` and
:mod:`flcore.reproduction.splits`.
"""
from __future__ import annotations

from flcore.reproduction.artifacts import Artifact, no_runs, register_artifact

PAPER = "fedgloss"


register_artifact(Artifact(
    "fedgloss-table-2", PAPER, "table", "Table 2: overview of SAM-based FL methods", no_runs))
register_artifact(Artifact(
    "fedgloss-table-11", PAPER, "table", "Table 11: data-set statistics", no_runs))
register_artifact(Artifact(
    "fedgloss-table-12", PAPER, "table", "Table 12: general training hyper-parameters", no_runs))
register_artifact(Artifact(
    "fedgloss-table-13", PAPER, "table", "Table 13: hyper-parameter search grids", no_runs))
register_artifact(Artifact(
    "fedgloss-fig-20", PAPER, "figure", "Figure 20: class distribution across clients", no_runs))
