"""flcore: federated learning with flat minima, reproducible.

Algorithms of the FedSAM/FedASAM/SWA, FedGloSS, FedGF, FedLESAM and FedIMA papers and
their baselines, on flat parameter vectors, with a run store and a CLI.

Entry points: :func:`run_experiment` (a whole run, through the run store) and, below it,
the round-level API -- :meth:`Simulation.from_config` (a named dataset, or your own
:meth:`FederatedData.from_tensors` and ``nn.Module``), :meth:`Simulation.step` returning a
:class:`RoundResult`, :meth:`Simulation.state_dict` / ``load_state_dict``.
"""
from .api import run_experiment
from .config import ExperimentConfig, resolve_config
from .errors import ConfigError
from .sim import FederatedData, RoundResult, Simulation

__version__ = "0.1.0"
__all__ = ["ConfigError", "ExperimentConfig", "FederatedData", "RoundResult", "Simulation", "resolve_config",
           "run_experiment", "__version__"]
