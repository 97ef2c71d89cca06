"""The FedGF paper's artifacts (Lee & Yoon, ICML 2024) as data.

Only its configuration tables are registered here so far: Table 3 (model transmissions
per round) is rendered from the method registry (:mod:`flcore.experiments.method_costs`)
and needs no training run.
"""
from __future__ import annotations

from .artifacts import Artifact, register_artifact
from .fedsam import _no_runs

PAPER = "fedgf"

register_artifact(Artifact(
    "fedgf-table-3", PAPER, "table", "Table 3: model transmissions per round", _no_runs))
