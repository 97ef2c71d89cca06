"""FedGF paper (Lee & Yoon 2024) Table 3, model transmissions per round (upload, download,
total), rendered from the method registry (:mod:`flcore.reproduction.method_costs`)."""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from flcore.algorithms import get_method
from flcore.config import grad_evals_per_step, parts_of, traffic_of
from flcore.report import compare_settings
from flcore.reproduction.published import published

#: FedGF's method names -> flcore's registered methods.  Its Table 3 runs FedSMOO
#: without its dynamic regulariser (its footnote 3), which communicates the same.
FEDGF_METHODS = {"FedAvg": "fedavg", "FedSAM": "fedsam", "MoFedSAM": "mofedsam", "FedGF": "fedgf",
                 "FedSMOO": "fedsmoo-noreg", "FedGAMMA": "fedgamma"}


def transmissions_ours(algorithms: Sequence[str]) -> pd.DataFrame:
    """FedGF Table 3 from the registry: ``algorithm, upload, download, total``."""
    rows = []
    for label in algorithms:
        download, upload = traffic_of(FEDGF_METHODS[label])
        rows.append({"algorithm": label, "upload": upload, "download": download, "total": upload + download})
    return pd.DataFrame(rows)


#: The methods Figure 3's schematic draws -> flcore's (FedSMOO without its regulariser, as
#: in Table 3).
SCHEMATIC_METHODS = {"MoFedSAM": "mofedsam", "FedSMOO": "fedsmoo-noreg", "FedGF": "fedgf"}


def schematic_methods(methods: dict[str, str] | None = None) -> pd.DataFrame:
    """Figure 3's methods (default :data:`SCHEMATIC_METHODS`) as flcore's registry has them:
    ``method, flcore method, parts, gradient evaluations per step, transmissions per round``
    (uploads + downloads) and ``what it does`` (the method's summary)."""
    rows = []
    for label, name in (SCHEMATIC_METHODS if methods is None else methods).items():
        method = get_method(name)
        rows.append({"method": label, "flcore method": name, "parts": " + ".join(parts_of(name)),
                     "gradient evaluations per step": grad_evals_per_step(name),
                     "transmissions per round": sum(traffic_of(name)),
                     "what it does": method.summary})
    return pd.DataFrame(rows)


def show_transmissions(page) -> pd.DataFrame:
    """Table 3 on ``page``: the paper's transmissions per round beside :func:`transmissions_ours`
    (:func:`flcore.report.compare_settings` by algorithm), captioned with how many methods
    agree in all three counts; returns the comparison."""
    paper = published(page.artifact_id)
    ours = transmissions_ours(list(paper["algorithm"]))
    table = compare_settings(paper, ours, ["algorithm"])
    agree = (table["match"] == "yes").sum()
    page.table(table, f"Model transmissions per round and participating client, the paper's beside the counts in "
                      f"flcore's method recipes: {agree} of {len(table)} methods agree in upload, download and total.",
               downloads={"published": paper, "flcore": ours})
    return table
