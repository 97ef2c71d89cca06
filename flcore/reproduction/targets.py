"""Rounds to reach a target accuracy and the communication they cost.

The FedGloSS paper's Tables 5 and 10 (and the "rounds to reach X %" tables of FedGF,
FedLESAM and FedIMA) measure how fast a method reaches a reference accuracy:

- **rounds** (:func:`rounds_to_target`): the first evaluated round at which a run's
  stored test-accuracy curve reaches the target (``>=``), ``None`` if it never does.
  The reach criterion is the first crossing of the curve, not a comparison of final
  values: FedGloSS Table 5 lists FedProx as reaching FedAvg on CIFAR-10 alpha = 0
  although its final accuracy is 0.1 point lower.
- **speed-up** (:func:`speedup`): ``T / rounds`` with ``T`` the reference run's rounds
  (FedGloSS Table 10, in parentheses).
- **cost** (:func:`communication_cost`): ``rounds x`` the model-sized vectors a client
  exchanges per round (uploads + downloads, :func:`transmissions_per_round`, read from
  the method registry -- the same numbers as FedGF Table 3 and FedLESAM Table 7).
- **bits** (:func:`bits_exchanged`): ``cost x model parameters x 32`` (float32), per
  participating client (times ``clients_per_round`` for the whole federation).
- **relative bits** (:func:`relative_bits`): bits in units of ``B``, the bits FedAvg
  exchanges in ``T`` rounds (FedGloSS Sec. 6.3: "Defined B the number of bits exchanged
  by FedAvg in T training rounds"); model size and clients per round cancel.

Curves are what the run store keeps: rows with ``round`` and ``test_accuracy`` (a
fraction; rounds without an evaluation have ``None``), as a list of dicts, a DataFrame,
or ``(round, accuracy)`` pairs.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from flcore.algorithms import get_method
from flcore.config.method_parts import traffic_of

__all__ = [
    "BITS_PER_PARAMETER",
    "accuracy_curve",
    "bits_exchanged",
    "communication_cost",
    "cost_row",
    "relative_bits",
    "rounds_to_target",
    "speedup",
    "transmissions_per_round",
]

#: Parameters are sent as float32.
BITS_PER_PARAMETER = 32


def accuracy_curve(curve: Any, column: str = "test_accuracy") -> list[tuple[int, float]]:
    """``(round, accuracy)`` pairs of the evaluated rounds of ``curve``, in round order.

    ``curve``: a DataFrame or a list of metric rows (dicts with ``round`` and
    ``column``), or ``(round, accuracy)`` pairs.  Rows without a value (rounds not
    evaluated) and NaNs are dropped.
    """
    if hasattr(curve, "to_dict") and hasattr(curve, "columns"):
        if "round" not in curve.columns or column not in curve.columns:
            raise ValueError(f"curve: a frame with columns 'round' and {column!r} is needed, "
                             f"got {list(curve.columns)}")
        rows: Iterable[Any] = curve[["round", column]].to_dict("records")
    else:
        rows = curve
    pairs = []
    for row in rows:
        if isinstance(row, Mapping):
            rnd, acc = row.get("round"), row.get(column)
        else:
            rnd, acc = row
        if acc is None or rnd is None or (isinstance(acc, float) and math.isnan(acc)):
            continue
        pairs.append((int(rnd), float(acc)))
    return sorted(pairs)


def rounds_to_target(curve: Any, target: float, column: str = "test_accuracy") -> int | None:
    """First round at which the accuracy curve reaches ``target`` (``>=``); ``None`` if never.

    ``target`` is in the curve's unit (the store keeps fractions).  See the module
    docstring for the accepted curve shapes.
    """
    if target is None or (isinstance(target, float) and math.isnan(target)):
        raise ValueError("target: a number is needed, got None/NaN")
    for rnd, acc in accuracy_curve(curve, column):
        if acc >= target:
            return rnd
    return None


def speedup(total_rounds: int, rounds: int | None) -> float | None:
    """``T / rounds`` (FedGloSS Table 10's parenthesis); ``None`` when never reached."""
    if rounds is None:
        return None
    if rounds <= 0:
        raise ValueError(f"rounds: must be positive, got {rounds}")
    return total_rounds / rounds


def transmissions_per_round(method: str) -> int:
    """Model-sized vectors one participating client exchanges per round (uploads +
    downloads) for the registered ``method`` (FedGF Table 3's "total")."""

    get_method(method)  # an unknown name raises, naming the allowed ones
    return sum(traffic_of(method))


def communication_cost(rounds: int | None, method: str) -> int | None:
    """``rounds x`` :func:`transmissions_per_round` (model-sized vectors per client);
    ``None`` when the target was never reached."""
    if rounds is None:
        return None
    return int(rounds) * transmissions_per_round(method)


def bits_exchanged(rounds: int | None, method: str, model_parameters: int,
                   clients_per_round: int = 1) -> int | None:
    """Bits exchanged in ``rounds`` rounds: cost x parameters x 32 (x clients per round)."""
    cost = communication_cost(rounds, method)
    if cost is None:
        return None
    return cost * int(model_parameters) * BITS_PER_PARAMETER * int(clients_per_round)


def relative_bits(rounds: int | None, method: str, total_rounds: int,
                  reference: str = "fedavg") -> float | None:
    """Bits to reach the target in units of ``B`` = the bits ``reference`` exchanges in
    ``total_rounds`` rounds (FedGloSS Tables 5 and 10, "Cost (xB)")."""
    cost = communication_cost(rounds, method)
    if cost is None:
        return None
    return cost / (int(total_rounds) * transmissions_per_round(reference))


def cost_row(curve: Any, target: float, method: str, total_rounds: int,
             reference: str = "fedavg", column: str = "test_accuracy") -> dict[str, Any]:
    """One row of a communication-cost table for a run: ``rounds``, ``speedup``,
    ``cost`` (vectors per client) and ``relative_bits`` (xB); ``None`` where the target
    is never reached."""
    rounds = rounds_to_target(curve, target, column)
    return {"rounds": rounds, "speedup": speedup(total_rounds, rounds),
            "cost": communication_cost(rounds, method),
            "relative_bits": relative_bits(rounds, method, total_rounds, reference)}
