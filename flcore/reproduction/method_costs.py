"""What a method costs, read from the method registry: the evidence behind the papers'
cost and overview tables (FedGF Table 3, FedLESAM Tables 1 and 7, in each paper's folder).

Every value is read off the parts the engine runs: the traffic per round
(:func:`flcore.config.traffic_of`, model-sized vectors per participating client and
round), the gradient evaluations per step and the client state
(:func:`flcore.config.client_state_of`) -- so a table that disagrees with a paper shows a
difference in what flcore runs, not in a hand-written copy.
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from flcore.config.method_catalog import client_state_of
from flcore.config.method_parts import parts_of, traffic_of
from flcore.config.method_reads import grad_evals_per_step


def client_memory(name: str) -> int:
    """Model-sized vectors a client holds during its local training, in units of one model.

    The model itself, plus every model-sized table the method keeps per client across
    rounds (``client_state()`` entries of shape ``[N, P]``: SCAFFOLD's c_k, FedDyn's dual,
    FedLESAM's w_i^old ...), plus every vector the client downloads beyond the global model
    and keeps for the round (SCAFFOLD's c, MoFedSAM's momentum, FedSMOO's s).  Flags and
    counters of size ``[N]`` are not model-sized and do not count.
    """
    tables = sum(1 for entry in client_state_of(name) if entry["shape"] == "[N, P]")
    return 1 + tables + (traffic_of(name)[0] - 1)


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
            downloads, uploads = traffic_of(name)
            rows.append({"algorithm": label, "flcore method": name, "parts": " ".join(parts_of(name)),
                         "uploads": uploads, "downloads": downloads,
                         "gradient evaluations / step": grad_evals_per_step(name),
                         "client state [N, P]": ", ".join(e["name"] for e in client_state_of(name)
                                                          if e["shape"] == "[N, P]") or "\u2013"})
    return pd.DataFrame(rows)
