"""Federated algorithms as compositions of parts (design guide section 3)."""
from .local import Batch, LocalUpdate, RoundContext
from .methods import METHOD_NAMES, METHODS, Method, get_method
from .perturbation import ASAMPerturbation, NoPerturbation, SAMPerturbation, unit
from .schedules import ConstantLR, ExponentialLR
from .server import PseudoGradientStep, Server, ServerAdaptive, ServerSGD, aggregate

__all__ = [
    "ASAMPerturbation", "Batch", "LocalUpdate", "METHODS", "METHOD_NAMES", "Method",
    "ConstantLR", "ExponentialLR", "NoPerturbation", "PseudoGradientStep", "RoundContext", "Server", "SAMPerturbation", "ServerAdaptive", "ServerSGD",
    "aggregate", "get_method", "unit",
]
