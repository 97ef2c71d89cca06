"""The FedGloSS paper's artifacts (Caldarola, Cagnasso, Caputo, Ciccone; arXiv:2412.03752).

Registered so far: the configuration tables and figure, which need no training --
Table 2 (the overview of SAM-based methods, from the method registry), Table 11 (data-set
statistics of the splits flcore generates), Tables 12 and 13 (training hyper-parameters
and search grids beside flcore's presets) and Figure 20 (per-client class composition of
the CIFAR splits).  See :mod:`flcore.papers.fedgloss.config_tables` and
:mod:`flcore.reproduction.splits`.
"""
from __future__ import annotations

from flcore.reproduction.artifacts import no_runs, register_artifacts

PAPER = "fedgloss"


register_artifacts(PAPER, {
    "fedgloss-table-2": no_runs,
    "fedgloss-table-11": no_runs,
    "fedgloss-table-12": no_runs,
    "fedgloss-table-13": no_runs,
    "fedgloss-fig-20": no_runs,
})
