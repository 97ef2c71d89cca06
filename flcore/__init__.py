"""flcore: federated learning with flat minima, reproducible.

Algorithms of the FedSAM/FedASAM/SWA, FedGloSS, FedGF, FedLESAM and FedIMA papers and
their baselines, on flat parameter vectors, with a run store and a CLI.
"""
from .api import run_experiment
from .config import ExperimentConfig, resolve_config
from .errors import ConfigError

__version__ = "0.1.0"
__all__ = ["ConfigError", "ExperimentConfig", "resolve_config", "run_experiment", "__version__"]
