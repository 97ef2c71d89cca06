"""What a method costs, read from the method registry: the evidence behind the papers'
cost and overview tables (FedGF Table 3, FedLESAM Tables 1 and 7, in each paper's folder).

Every value comes from :func:`flcore.algorithms.get_method` -- the recipe the engine runs:
``uploads_per_round`` / ``downloads_per_round`` (model-sized vectors per participating
client and round), ``grad_evals_per_step`` and the client state
(:func:`flcore.config.client_state_of`) -- so a table that disagrees with a paper shows a
difference in what flcore runs, not in a hand-written copy.
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from flcore.algorithms import get_method
from flcore.config.method_catalog import client_state_of
from flcore.config.method_reads import grad_evals_per_step


def client_memory(name: str) -> int:
    """Model-sized vectors a client holds during its local training, in units of one model.

    The model itself, plus every model-sized table the method keeps per client across
    rounds (``client_state()`` entries of shape ``[N, P]``: SCAFFOLD's c_k, FedDyn's dual,
    FedLESAM's w_i^old ...), plus every vector the client downloads beyond the global model
    and keeps for the round (SCAFFOLD's c, MoFedSAM's momentum, FedSMOO's s).  Flags and
    counters of size ``[N]`` are not model-sized and do not count.
    """
    method = get_method(name)
    tables = sum(1 for entry in client_state_of(method.name) if entry["shape"] == "[N, P]")
    return 1 + tables + (method.downloads_per_round - 1)


def methods_behind(algorithms: Sequence[str], mapping: dict) -> pd.DataFrame:
    """The flcore methods behind each row of a rendered table (``mapping``: one of
    a paper's table of its method names, e.g.
    ``flcore.papers.fedlesam.method_costs.FEDLESAM_METHODS``), with their
    parts, communication, gradient evaluations and model-sized client state: the evidence
    for the rendered values."""
    rows = []
    for label in algorithms:
        names = mapping[label]
        for name in (names,) if isinstance(names, str) else names:
            method = get_method(name)
            rows.append({"algorithm": label, "flcore method": name, "parts": " ".join(method.parts),
                         "uploads": method.uploads_per_round, "downloads": method.downloads_per_round,
                         "gradient evaluations / step": grad_evals_per_step(name),
                         "client state [N, P]": ", ".join(e["name"] for e in client_state_of(method.name)
                                                          if e["shape"] == "[N, P]") or "\u2013"})
    return pd.DataFrame(rows)
