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

import contextlib
import io
import logging
import os
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator

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


#: How much of what a quiet simulation printed is added to its error when it fails.
QUIET_TAIL_CHARS = 4000


def _logger_levels(prefixes: tuple[str, ...]) -> dict[str, int]:
    names = [name for name in logging.root.manager.loggerDict if name.split(".")[0] in prefixes]
    return {name: logging.getLogger(name).level for name in [*prefixes, *names]}


@contextlib.contextmanager
def quiet_output(prefixes: tuple[str, ...] = ("ray", "flwr")) -> Iterator[None]:
    """Nothing of Ray's and Flower's chatter reaches the page: their loggers (``prefixes``,
    and every child logger with a level of its own) at ERROR, Python warnings ignored, and
    the process's standard output and error -- file descriptors 1 and 2, which the Ray
    processes started here inherit and its C++ core writes its ``INFO``/``WARNING`` lines
    to -- sent to a temporary file.  All is restored on exit; when the body raises, the
    tail of what was printed is written to the standard error, then the error goes on."""
    levels = _logger_levels(prefixes)
    for name in levels:
        logging.getLogger(name).setLevel(logging.ERROR)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    python_level = io.StringIO()
    printed = ""
    with tempfile.TemporaryFile() as sink:
        try:
            for fd in saved:
                os.dup2(sink.fileno(), fd)
            with warnings.catch_warnings(), contextlib.redirect_stdout(python_level), \
                    contextlib.redirect_stderr(python_level):
                warnings.simplefilter("ignore")
                yield
        except BaseException:
            sink.seek(0)
            printed = python_level.getvalue() + sink.read().decode(errors="replace")
            raise
        finally:
            for fd, copy in saved.items():
                os.dup2(copy, fd)
                os.close(copy)
            for name, level in levels.items():
                logging.getLogger(name).setLevel(level)
            if printed.strip():
                sys.stderr.write("output of the simulation (last lines):\n" + printed[-QUIET_TAIL_CHARS:] + "\n")


def deprecated_run_simulation():
    """Flower's ``flwr.simulation.run_simulation``, which Flower deprecates for ``flwr run``:
    kept as the in-process route (one call, no SuperLink); when Flower removes it, one
    error names the supported route (:mod:`flcore.flower.launcher`)."""
    try:
        from flwr.simulation import run_simulation as found
    except ImportError:
        found = None
    if not callable(found):
        raise RuntimeError("this Flower no longer has flwr.simulation.run_simulation; run the app with Flower's "
                           "launcher instead: flcore.flower.launcher.local_deployment and flwr_run")
    return found


def run_simulation(federations, rounds: int, *, num_cpus: int | None = None, client_cpus: float = 1,
                   evaluate: bool = False, verbose: bool = False) -> list[FlcoreStrategy]:
    """Run ``rounds`` rounds of each federation (one :class:`Federation` or several, one
    after the other on the same nodes) under Flower's simulation engine: one node per
    client, each a ``ClientApp`` from :func:`~flcore.flower.client_app`, and the
    :class:`~flcore.flower.FlcoreStrategy` of each federation in the ``ServerApp``.

    ``num_cpus``: CPUs of the local Ray (default: all); ``client_cpus``: CPUs per client
    actor (Flower runs ``num_cpus / client_cpus`` clients at a time); ``evaluate``:
    server-side test accuracy after each round; ``verbose``: Flower's and Ray's log, their
    warnings and the workers' output (otherwise nothing is printed: :func:`quiet_output`,
    whose capture a failure carries).  Returns the strategies, holding the final model and
    server state.
    """
    flwr_run_simulation = deprecated_run_simulation()
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
    stop = threading.Event()
    try:
        # quiet: Flower's notices (run_simulation is deprecated in favour of `flwr run`), Ray's INFO and WARNING
        with contextlib.nullcontext() if verbose else quiet_output():
            flwr_run_simulation(server_app(strategies, rounds, evaluate=evaluate, stop=stop),
                                client_app(*federations), num_supernodes=sizes.pop(), backend_config=backend)
    finally:
        stop.set()  # a server still waiting (the engine failed) gives up instead of waiting out its timeout
    unfinished = [s.name for s in strategies if s.rounds_done != rounds]
    if unfinished:
        raise RuntimeError(f"the Flower simulation ended before {rounds} rounds of {unfinished}")
    return strategies
