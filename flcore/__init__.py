"""flcore: federated learning with flat minima, reproducible.

Algorithms of the FedSAM/FedASAM/SWA, FedGloSS, FedGF, FedLESAM and FedIMA papers and
their baselines, on flat parameter vectors, with a run store and a CLI.

Entry points: :func:`run_experiment` (a whole run, through the run store) and, below it,
the round-level API -- :meth:`Simulation.from_config` (a named dataset, or your own
:meth:`FederatedData.from_tensors` and ``nn.Module``), :meth:`Simulation.step` returning a
:class:`RoundResult`, :meth:`Simulation.state_dict` / ``load_state_dict``.

The package is layered (``[tool.importlinter]`` in ``pyproject.toml``): each subpackage
imports only the ones below it.  Registries low in the house -- the probes a config may
name, the papers and their artifacts and claims -- are filled from above, so importing
``flcore`` imports ``flcore.papers`` last, which registers the five papers.
"""
from flcore.api import run_experiment
from flcore.config import ExperimentConfig, resolve_config
from flcore.errors import ConfigError
from flcore.sim import FederatedData, RoundResult, Simulation
from flcore.version import __version__

# isort: split
from flcore import papers  # noqa: F401  (last: registers the papers, their probes, artifacts and claims)

__all__ = ["ConfigError", "ExperimentConfig", "FederatedData", "RoundResult", "Simulation", "resolve_config",
           "run_experiment", "__version__"]
