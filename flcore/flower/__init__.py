"""Every flcore method inside Flower: a strategy and a client app per registry method.

``pip install "flcore[flower]"`` adds Flower (``flwr``) and Flower Datasets.  For any method
of :mod:`flcore.algorithms`:

- :class:`Federation` holds what both sides share -- the resolved config, the data
  (:class:`~flcore.FederatedData`, from a named data set, your tensors or a
  flwr-datasets partitioner: ``partition: flwr``) and the initial model ``w^0`` -- built as
  :meth:`flcore.Simulation.from_config` builds them;
- :class:`FlcoreStrategy` is a Flower ``Strategy`` whose aggregation is the method's server
  part (server optimizer and state, SWA, server-side SAM, IMA, FedGF's and FedGloSS's
  global perturbations, NaiveFedGloSS's probe exchange);
- :func:`client_app` is a Flower ``ClientApp`` whose ``train`` is the method's client part
  (local training with its perturbation and corrections), keeping the per-client state
  (SCAFFOLD controls, FedDyn and FedGloSS duals, FedLESAM's old model) in the node's
  ``Context.state`` across rounds;
- :mod:`flcore.flower.app` is the Flower App of a method (a ``ServerApp`` and a ``ClientApp``
  that build the federation from the run's configuration on every node), for Flower's
  supported launcher, ``flwr run``; :mod:`flcore.flower.launcher` starts a SuperLink and
  one SuperNode per client on 127.0.0.1 and runs it (``local_deployment``, ``flwr_run``);
- :func:`run_simulation` runs them in one call under Flower's simulation engine (its Ray
  backend), through ``flwr.simulation.run_simulation``, which Flower deprecates for
  ``flwr run``: kept while Flower has it.

A run of a few rounds equals :class:`flcore.Simulation`'s run of the same federation to
rounding (``tests/test_flower.py``, every family): both sample the same clients and the
same minibatches, since every draw derives from ``(seed, purpose, round, client)``.  What
Flower's protocol changes is said where it happens: :class:`FlcoreStrategy` (one query
exchange before the first round, the probe exchange, all sampled clients required) and
:class:`FlcoreClient` (state in ``Context.state``, ``w^0`` known to the client).

Importing this module sets ``FLWR_TELEMETRY_ENABLED=0`` unless it is set: flcore runs
offline, and Flower reads the variable when it is first imported.
"""
from __future__ import annotations

import os

os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")

try:
    import flwr  # noqa: F401
except ImportError:
    raise ImportError('flcore.flower needs Flower: pip install "flcore[flower]"') from None

from .client import FlcoreClient, client_app  # noqa: E402
from .federation import Federation  # noqa: E402
from .partitioners import partition_indices  # noqa: E402
from .simulation import ray_init_args, run_simulation  # noqa: E402
from .strategy import FlcoreStrategy, server_app  # noqa: E402

__all__ = ["Federation", "FlcoreClient", "FlcoreStrategy", "client_app", "partition_indices", "ray_init_args",
           "run_simulation", "server_app"]
