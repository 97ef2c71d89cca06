"""FedLESAM paper (Fan et al. 2024) Tables 1 and 7, rendered from the method registry
(:mod:`flcore.reproduction.method_costs`).

- :func:`relative_costs_ours`: Table 7, stored memory, communication per round and
  backpropagations per local step relative to FedAvg;
- :func:`summary_ours`: Table 1, base algorithm, minimizing target, local perturbation and
  extra computation of each SAM-based method, read from its parts (docs/algorithms.md 7.1).
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from flcore.config import grad_evals_per_step, parts_of, traffic_of
from flcore.report import compare_settings
from flcore.reproduction.method_costs import client_memory
from flcore.reproduction.published import published

#: FedLESAM's method names -> flcore's registered methods.
FEDLESAM_METHODS = {"FedAvg": "fedavg", "FedSAM": "fedsam", "FedLESAM": "fedlesam", "MoFedSAM": "mofedsam",
                    "FedSMOO": "fedsmoo", "FedLESAM-D": "fedlesam-d", "FedGAMMA": "fedgamma",
                    "FedLESAM-S": "fedlesam-s"}
#: FedLESAM Table 1's rows; the FedLESAM row covers its three variants.
SUMMARY_METHODS = {"FedSAM": ("fedsam",), "MoFedSAM": ("mofedsam",), "FedGAMMA": ("fedgamma",),
                   "FedSMOO": ("fedsmoo",), "FedLESAM": ("fedlesam", "fedlesam-s", "fedlesam-d")}

#: Base federated algorithm named by a method's correction part (docs/algorithms.md 7.1):
#: C0 plain local SGD with FedAvg's server, C5 FedCM's broadcast momentum, C2 SCAFFOLD's
#: control variates, C3 FedDyn's dual.
BASE_ALGORITHM = {"C0": "FedAvg", "C5": "FedAvg with Momentum", "C2": "Scaffold", "C3": "FedDyn"}
#: Sharpness a method's perturbation part minimizes: P1 (SAM) and P3 (FedSMOO) perturb along
#: the client's own gradient, P4 (FedLESAM) along the estimated global update.
TARGET = {"P1": "Local Sharpness", "P3": "Local Sharpness with Correction", "P4": "Global Sharpness"}
#: Perturbation parts that compute the perturbation from a local gradient.
LOCAL_PERTURBATION_PARTS = ("P1", "P2", "P3", "P5")



def relative_costs_ours(algorithms: Sequence[str]) -> pd.DataFrame:
    """FedLESAM Table 7 from the registry, relative to FedAvg: ``algorithm, stored_memory,
    communication, backpropagation`` (communication: uploads + downloads over FedAvg's
    two; backpropagation: gradient evaluations per local step)."""
    base_comm = sum(traffic_of("fedavg"))
    rows = []
    for label in algorithms:
        name = FEDLESAM_METHODS[label]
        rows.append({"algorithm": label, "stored_memory": client_memory(name) / client_memory("fedavg"),
                     "communication": sum(traffic_of(name)) / base_comm,
                     "backpropagation": grad_evals_per_step(name) / grad_evals_per_step("fedavg")})
    frame = pd.DataFrame(rows)
    for column in ("stored_memory", "communication", "backpropagation"):
        if (frame[column] % 1 == 0).all():
            frame[column] = frame[column].astype(int)
    return frame


def _parts(name: str) -> tuple[str, ...]:
    return parts_of(name)


def summary_ours(algorithms: Sequence[str]) -> pd.DataFrame:
    """FedLESAM Table 1 from the methods' parts: ``algorithm, base_algorithm,
    minimizing_target, local_perturbation, extra_computation`` (yes/no)."""
    rows = []
    for label in algorithms:
        names = SUMMARY_METHODS[label]
        bases, targets, local, extra = [], [], [], []
        for name in names:
            parts = _parts(name)
            bases.extend(BASE_ALGORITHM[p] for p in parts if p in BASE_ALGORITHM)
            targets.extend(TARGET[p] for p in parts if p in TARGET)
            local.append(any(p in LOCAL_PERTURBATION_PARTS for p in parts))
            extra.append(grad_evals_per_step(name) > 1)
        rows.append({"algorithm": label, "base_algorithm": ", ".join(dict.fromkeys(bases)),
                     "minimizing_target": ", ".join(dict.fromkeys(targets)),
                     "local_perturbation": "yes" if any(local) else "no",
                     "extra_computation": "yes" if any(extra) else "no"})
    return pd.DataFrame(rows)


#: FedLESAM Table 1's lost check marks as App. A states them in words: (local perturbation,
#: extra computation) per row, with the sentences they are read from (a test finds the
#: quotes in the paper's text).
TABLE1_FROM_APPENDIX_A = {"FedSAM": ("yes", "yes"), "MoFedSAM": ("yes", "yes"), "FedGAMMA": ("yes", "yes"),
                          "FedSMOO": ("yes", "yes"), "FedLESAM": ("no", "no")}
APPENDIX_A_QUOTES = (
    "FedSAM, MoFedSAM and FedGAMMA calculate local perturbations",
    "which still need to calculate the local perturbations",
    "All above algorithms introduce extra computational burden on the local",
    "locally estimates the direction of global perturbation on the client side as the difference between global "
    "models received in the previous active and the current rounds without extra computation",
)


def show_relative_costs(page) -> pd.DataFrame:
    """Table 7 on ``page``: the paper's costs relative to FedAvg beside
    :func:`relative_costs_ours` (:func:`flcore.report.compare_settings` by algorithm), captioned
    with how many methods agree and which communicate less in flcore; returns the comparison."""
    paper = published(page.artifact_id)
    ours = relative_costs_ours(list(paper["algorithm"]))
    table = compare_settings(paper, ours, ["algorithm"])
    agree = (table["match"] == "yes").sum()
    differ = ", ".join(table.loc[table["match"] != "yes", "algorithm"])
    page.table(table, f"Memory, communication and backpropagations relative to FedAvg, the paper's beside flcore's "
                      f"recipes: {agree} of {len(table)} methods agree; {differ} communicate less in flcore. Every "
                      f"FedLESAM variant needs one backpropagation per step where the SAM-based methods need two.",
               downloads={"published": paper, "flcore": ours})
    return table
