"""Flat-minima methods published after the five papers, as recipes of parts
(docs/algorithms.md 7.2).

Registered by :mod:`flcore.algorithms.registry` after the papers' own methods and their
wrappers.  Communication counts model-sized vectors per participating client (rule R7).

WIMA (Caldarola, Caputo & Ciccone, ICCV Workshops 2023, arXiv 2310.01366): "WIMA aggregates
global models from different rounds using a window-based approach [...] applied from the
initial stages of training", with "no additional communication or client-side computation
overhead" (abstract); FedGloSS (Sec. 2) describes it as "a window-based average of global
models across rounds", agnostic to the underlying optimizer.  No official code is public and
the paper's full text was not available here, so the update rule is the one those sentences
state, written as parts that already exist:

- the server aggregates as FedAvg, ``w_bar^t = sum_k p_k w_k^t`` (S0);
- the global model sent next round is the uniform mean of the last ``W`` aggregates,
  ``w^{t+1} = (1/min(t+1, W)) sum_{j=0}^{min(t+1, W)-1} w_bar^{t-j}`` (A2 with
  ``t_IMA = 0`` and the partial window averaged: "from the initial stages");
- clients train as in FedAvg (no client-side change; the config's lr schedule, L0).

Decisions (said on the Known differences page): the window average is the model sent to the
clients (the reading of "aggregates global models", as IMA does), not an evaluation-only
average as server-side SWA; the window holds the FedAvg aggregates; its size ``W`` is the
``ima_window`` field (the same quantity as IMA's ``P``).
"""
from __future__ import annotations

from flcore.algorithms.averaging import add_ima
from flcore.algorithms.methods import Method, average_server, sgd_client
from flcore.algorithms.server import Server

#: The newer methods, in registration order.
RECIPES: list[Method] = []
_add = RECIPES.append


# ----------------------------------------------------------------------------- WIMA

def _wima_server(cfg) -> Server:
    """FedAvg whose next global model is the mean of its last ``W`` aggregates from round 0."""
    return add_ima(average_server(cfg), cfg.ima_window, start=0, partial="average")


_add(Method(
    "wima",
    "WIMA (Caldarola, Caputo & Ciccone 2023, window-based model averaging): FedAvg clients; "
    "w_bar^t = sum_k p_k w_k; from round 0 the global model sent to the clients is "
    "w^{t+1} = mean of the last min(t+1, W) aggregates w_bar (W = ima_window).",
    ("P0", "C0", "S0", "A2", "L0"), ("ima_window",), sgd_client, _wima_server))
