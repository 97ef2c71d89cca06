"""FedGF paper (Lee & Yoon 2024) Table 3, model transmissions per round (upload, download,
total), rendered from the method registry (:mod:`flcore.reproduction.method_costs`)."""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from flcore.algorithms import get_method

#: FedGF's method names -> flcore's registered methods.  Its Table 3 runs FedSMOO
#: without its dynamic regulariser (its footnote 3), which communicates the same.
FEDGF_METHODS = {"FedAvg": "fedavg", "FedSAM": "fedsam", "MoFedSAM": "mofedsam", "FedGF": "fedgf",
                 "FedSMOO": "fedsmoo-noreg", "FedGAMMA": "fedgamma"}


def transmissions_ours(algorithms: Sequence[str]) -> pd.DataFrame:
    """FedGF Table 3 from the registry: ``algorithm, upload, download, total``."""
    rows = []
    for label in algorithms:
        method = get_method(FEDGF_METHODS[label])
        rows.append({"algorithm": label, "upload": method.uploads_per_round,
                     "download": method.downloads_per_round,
                     "total": method.uploads_per_round + method.downloads_per_round})
    return pd.DataFrame(rows)
