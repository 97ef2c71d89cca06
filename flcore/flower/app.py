"""flcore's methods as a Flower App, for Flower's own launcher (``flwr run``).

``flwr run <app folder> <SuperLink connection>`` builds the app from the folder's
``pyproject.toml`` (:func:`write_app` writes one) and submits it to a running SuperLink;
its SuperNodes run the :data:`client` app and the SuperLink the :data:`server` app.  Both
build the same :class:`~flcore.flower.Federation` from the run's configuration (the
``[tool.flwr.app.config]`` table, or ``flwr run --run-config``):

- every key that is a field of flcore's configuration is that field (``method``,
  ``scale``, ``rounds``, ``seed``, ``clients``, ``per_round``, ``rho``...): the
  federation is ``Federation.from_config`` of them, on every node, so every node holds
  the same data split and ``w^0``; ``rounds`` is also the number of rounds run;
- ``evaluate`` (bool): server-side test accuracy after each round;
- ``timeout`` (seconds, default 3600): how long the server waits for the nodes and for a
  round's replies;
- ``result-file``: where the server app writes the final model and the history (a
  ``.npz`` read by :func:`read_result`, without pickle); ``""``: nowhere.

Each SuperNode is one client: start it with ``--node-config "partition-id=K"`` for client
``K`` of ``0..clients-1`` (as Flower's simulation numbers its nodes).  The strategy asks
every node which client it is before the first round (:class:`~flcore.flower.FlcoreStrategy`).
A run equals :func:`~flcore.flower.run_simulation` and flcore's own engine on the same
configuration.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
from flwr.app import Context, Message
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp

from flcore.config import FIELD_NAMES, resolve_config

from .client import FlcoreClient
from .federation import Federation

#: The run-config keys that are the app's own, not configuration fields.
APP_KEYS = {"evaluate": False, "result-file": "", "timeout": 3600}
#: Where :func:`write_app` points Flower for the two apps.
COMPONENTS = {"serverapp": "flcore.flower.app:server", "clientapp": "flcore.flower.app:client"}


def config_of(run_config) -> dict:
    """The flcore configuration fields of a run's configuration (unknown keys refused)."""
    values = dict(run_config)
    unknown = sorted(k for k in values if k not in FIELD_NAMES and k not in APP_KEYS)
    if unknown:
        raise ValueError(f"run config: {unknown[0]!r} is neither a field of flcore's configuration nor one of "
                         f"{', '.join(APP_KEYS)}")
    return {k: v for k, v in values.items() if k in FIELD_NAMES}


@lru_cache(maxsize=4)
def _federation(key: str) -> Federation:
    return Federation.from_config(json.loads(key), name="flwr-run")


def federation_of(run_config) -> Federation:
    """The federation of a run's configuration, built once per process."""
    return _federation(json.dumps(config_of(run_config), sort_keys=True))


#: The Flower ``ClientApp`` each SuperNode runs: one client's local training per message.
client = ClientApp()


@client.train()
def _train(message: Message, context: Context) -> Message:
    return FlcoreClient(federation_of(context.run_config)).train(message, context)


@client.query()
def _query(message: Message, context: Context) -> Message:
    return FlcoreClient(federation_of(context.run_config)).query(message, context)


#: The Flower ``ServerApp`` the SuperLink runs: the method's server part over the run's rounds.
server = ServerApp()


@server.main()
def _main(grid: Grid, context: Context) -> None:
    federation = federation_of(context.run_config)
    strategy = federation.strategy(timeout=float(context.run_config.get("timeout", APP_KEYS["timeout"])))
    evaluate = bool(context.run_config.get("evaluate", False))
    strategy.start(grid, initial_arrays=strategy.initial_arrays(), num_rounds=federation.cfg.rounds,
                   timeout=strategy.timeout, evaluate_fn=strategy.evaluate if evaluate else None)
    target = str(context.run_config.get("result-file", ""))
    if target:
        write_result(Path(target), strategy)


def write_result(path: Path, strategy) -> None:
    """The final model, the evaluated model and the history of a run, as ``.npz`` arrays
    (the history as JSON text): readable without pickle (:func:`read_result`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as out:
        np.savez(out, w=strategy.global_model.cpu().numpy(), eval_model=strategy.eval_model.cpu().numpy(),
                 history=np.array(json.dumps(strategy.history)), rounds=np.array(strategy.rounds_done))
    partial.replace(path)


def read_result(path: str | Path) -> dict:
    """``{"w", "eval_model", "history", "rounds"}`` of a run's result file."""
    with np.load(Path(path), allow_pickle=False) as data:
        return {"w": data["w"], "eval_model": data["eval_model"], "history": json.loads(str(data["history"])),
                "rounds": int(data["rounds"])}


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))


def write_app(folder: str | Path, config: dict, *, name: str = "flcore-app") -> Path:
    """A Flower App project in ``folder`` (its ``pyproject.toml``) running ``config`` (flcore
    fields, plus ``evaluate`` and ``result-file``): the folder ``flwr run`` takes.  The
    configuration is resolved first: a wrong field is one :class:`~flcore.errors.ConfigError`
    line here, not a failed run on the SuperLink."""
    resolve_config(config_of(config))
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["[build-system]", 'requires = ["hatchling"]', 'build-backend = "hatchling.build"', "",
             "[project]", f"name = {json.dumps(name)}", 'version = "1.0.0"',
             'description = "An flcore method run by Flower\'s launcher"', 'license = "Apache-2.0"',
             "dependencies = []", "", "[tool.hatch.build.targets.wheel]", 'packages = ["."]', "",
             "[tool.flwr.app]", 'publisher = "flcore"', "", "[tool.flwr.app.components]",
             *(f"{key} = {json.dumps(value)}" for key, value in COMPONENTS.items()), "",
             "[tool.flwr.app.config]", *(f"{json.dumps(key)} = {_toml_value(value)}" for key, value in config.items())]
    (folder / "pyproject.toml").write_text("\n".join(lines) + "\n")
    return folder
