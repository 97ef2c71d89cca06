"""Federated algorithms as compositions of parts (docs/design.md section 3)."""
from flcore.algorithms.hyperparameters import Hyperparameter, declare, declares
from flcore.algorithms.local import Batch, LocalUpdate, RoundContext
from flcore.algorithms.methods import Method
from flcore.algorithms.part_ids import part_id
from flcore.algorithms.perturbation import ASAMPerturbation, NoPerturbation, SAMPerturbation, unit
from flcore.algorithms.registry import METHOD_NAMES, METHODS, get_method
from flcore.algorithms.schedules import ConstantLR, ExponentialLR
from flcore.algorithms.server import PseudoGradientStep, Server, ServerAdaptive, ServerSGD, aggregate

__all__ = [
    "ASAMPerturbation",
    "Batch",
    "LocalUpdate",
    "METHODS",
    "METHOD_NAMES",
    "Method",
    "ConstantLR",
    "ExponentialLR",
    "Hyperparameter",
    "NoPerturbation",
    "PseudoGradientStep",
    "RoundContext",
    "Server",
    "SAMPerturbation",
    "ServerAdaptive",
    "ServerSGD",
    "aggregate",
    "declare",
    "declares",
    "get_method",
    "part_id",
    "unit",
]
