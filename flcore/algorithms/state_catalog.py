"""Names, shapes and meanings of the state each method keeps across rounds, read off its
parts.

Per-client state lives in the simulation as tables with one row per client (``[N, ...]``,
``N`` clients), indexed by client id; server state is a nested dict of tensors, named here
(and in :class:`flcore.RoundResult`) by dotted paths such as ``fedgf.c`` or
``step.opt.m``.  Shapes are written with ``P`` (the number of model parameters), ``N`` and
the sizes set by the config (windows).

Each part says what its state means where it is written: ``state_meanings`` maps a client
table's name (a client part) or a key of the part's own state (a server part, the step,
its optimizer, the averaging) to a meaning with the equation it implements.  A part whose
state holds another part's names it in ``state_children`` (the pseudo-gradient step's
``opt`` is its optimizer's), and state a part creates only after the first round is
listed with its shape in ``lazy_state``.  ``flcore methods --json`` and
:meth:`flcore.algorithms.Method.client_state` / ``server_state`` read this module.
"""
from __future__ import annotations

from typing import Any

import torch

#: shape of a client table by its initialiser (engine.init_client_state)
CLIENT_SHAPES = {"zeros": "[N, P]", "model": "[N, P]", "flag": "[N] bool", "round": "[N] int64"}


def _shape_text(shape: tuple, dtype, num_params: int, num_clients: int) -> str:
    dims = []
    for size in shape:
        dims.append("P" if size == num_params else "N" if size == num_clients else str(size))
    text = f"[{', '.join(dims)}]"
    kind = str(dtype).replace("torch.", "")
    return text if kind.startswith("float") else f"{text} {kind}"


def declared_meanings(parts) -> dict[str, str]:
    """The state meanings ``parts`` declare (a part's ``state_meanings``: state name -> meaning)."""
    meanings: dict[str, str] = {}
    for part in parts:
        meanings.update(getattr(part, "state_meanings", {}))
    return meanings


def describe_client_state(spec: dict[str, str], meanings: dict[str, str]) -> list[dict[str, Any]]:
    """``[{name, shape, init, meaning}]`` for a client's ``client_state_spec()``, with the
    ``meanings`` its parts declare (:func:`declared_meanings`); a table no part explains raises."""
    return [{"name": name, "shape": CLIENT_SHAPES[init], "init": init, "meaning": meanings[name]}
            for name, init in spec.items()]


def describe_server_state(server, num_params: int = 7, num_clients: int = 11) -> list[dict[str, Any]]:
    """``[{name, shape, meaning}]`` for a built :class:`~flcore.algorithms.Server`, from
    its initial state on a probe vector of ``num_params`` parameters, each entry explained
    by the part that keeps it."""
    rows = []

    def walk(owner, tree: dict, prefix: str, relative: str) -> None:
        for key, value in tree.items():
            child = getattr(owner, "state_children", {}).get(relative + key)
            if child is not None:
                walk(getattr(owner, child), value, f"{prefix}{key}.", "")
            elif isinstance(value, dict):
                walk(owner, value, f"{prefix}{key}.", f"{relative}{key}.")
            else:
                rows.append({"name": f"{prefix}{key}",
                             "shape": _shape_text(tuple(value.shape), value.dtype, num_params, num_clients),
                             "meaning": owner.state_meanings[relative + key]})

    owners = {"step": server.step, "averaging": server.averaging, **{part.name: part for part in server.parts}}
    for key, tree in server.init(torch.zeros(num_params), num_clients).items():
        walk(owners[key], tree, f"{key}.", "")
    for part in server.parts:
        for key, shape in getattr(part, "lazy_state", {}).items():
            rows.append({"name": f"{part.name}.{key}", "shape": shape, "meaning": part.state_meanings[key]})
    return rows
