"""Federations under Flower's simulation engine (its Ray backend).

Ray's servers listen on every interface even when told 127.0.0.1 (the GCS server, the
raylets and their agents).  :func:`run_simulation` therefore connects to the Ray cluster
named by ``RAY_ADDRESS`` when it is set -- flcore's tests start one in a private network
namespace with only the loopback interface (``flcore.executors.local_cluster``) and run
the simulation inside it -- and otherwise starts a local Ray with its node address on
127.0.0.1 and no dashboard, which Flower stops when the simulation ends, even when it
fails.  A local Ray keeps its session under ``/tmp/ray`` and an authentication token in
``~/.ray``; Flower keeps its configuration in ``~/.flwr``.
"""
from __future__ import annotations

import logging
import os
import threading

from flwr.simulation import run_simulation as flwr_run_simulation

from flcore.cpus import available_cpus

from .client import client_app
from .federation import Federation
from .strategy import FlcoreStrategy, server_app


def ray_init_args(num_cpus: int | None = None) -> dict:
    """``ray.init`` arguments for Flower's Ray backend (see the module docstring)."""
    if os.environ.get("RAY_ADDRESS"):
        return {}  # ray.init reads RAY_ADDRESS and connects to that cluster
    return {"_node_ip_address": "127.0.0.1", "num_cpus": num_cpus or available_cpus(), "num_gpus": 0,
            "include_dashboard": False}


def run_simulation(federations, rounds: int, *, num_cpus: int | None = None, client_cpus: float = 1,
                   evaluate: bool = False, verbose: bool = False) -> list[FlcoreStrategy]:
    """Run ``rounds`` rounds of each federation (one :class:`Federation` or several, one
    after the other on the same nodes) under Flower's simulation engine: one node per
    client, each a ``ClientApp`` from :func:`~flcore.flower.client_app`, and the
    :class:`~flcore.flower.FlcoreStrategy` of each federation in the ``ServerApp``.

    ``num_cpus``: CPUs of the local Ray (default: all); ``client_cpus``: CPUs per client
    actor (Flower runs ``num_cpus / client_cpus`` clients at a time); ``evaluate``:
    server-side test accuracy after each round; ``verbose``: Flower's INFO log and warnings,
    Ray's INFO log and the workers' output (otherwise Flower's errors and Ray's warnings
    only).  Returns the strategies, holding the final model and server state.
    """
    federations = [federations] if isinstance(federations, Federation) else list(federations)
    if not federations:
        raise ValueError("federations: give at least one")
    sizes = {f.num_clients for f in federations}
    if len(sizes) != 1:
        raise ValueError(f"federations: one simulation has one set of nodes; the federations have "
                         f"{sorted(sizes)} clients")
    strategies = [f.strategy() for f in federations]
    init_args = ray_init_args(num_cpus)
    if not verbose:
        init_args["log_to_driver"] = False
    backend = {"client_resources": {"num_cpus": client_cpus, "num_gpus": 0.0}, "init_args": init_args}
    loggers = {name: logging.getLogger(name) for name in ("flwr", "ray")}
    levels = {name: logger.level for name, logger in loggers.items()}
    if not verbose:  # Flower's notices (run_simulation is deprecated in favour of `flwr run`), Ray's INFO
        loggers["flwr"].setLevel(logging.ERROR)
        loggers["ray"].setLevel(logging.WARNING)
    stop = threading.Event()
    try:
        flwr_run_simulation(server_app(strategies, rounds, evaluate=evaluate, stop=stop), client_app(*federations),
                            num_supernodes=sizes.pop(), backend_config=backend)
    finally:
        stop.set()  # a server still waiting (the engine failed) gives up instead of waiting out its timeout
        for name, logger in loggers.items():
            logger.setLevel(levels[name])
    unfinished = [s.name for s in strategies if s.rounds_done != rounds]
    if unfinished:
        raise RuntimeError(f"the Flower simulation ended before {rounds} rounds of {unfinished}")
    return strategies
