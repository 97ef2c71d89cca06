"""The FedIMA paper's artifacts (Zhou, Lin, Zhang & Tsang, IEEE TMC 2024) as data.

Its configuration tables (IV models, V baseline hyper-parameters, VI and VII settings) are
rendered from flcore's model registry and presets (:mod:`flcore.experiments.fedima_settings`)
and need no training run.
"""
from __future__ import annotations

from .artifacts import Artifact, register_artifact
from .fedsam import _no_runs

PAPER = "fedima"

register_artifact(Artifact(
    "fedima-table-4", PAPER, "table", "Table IV: model architectures", _no_runs))
register_artifact(Artifact(
    "fedima-table-5", PAPER, "table", "Table V: baseline hyper-parameters", _no_runs))
register_artifact(Artifact(
    "fedima-table-6", PAPER, "table", "Table VI: settings of the visualization and validation experiments",
    _no_runs))
register_artifact(Artifact(
    "fedima-table-7", PAPER, "table", "Table VII: settings of the test experiments", _no_runs))
