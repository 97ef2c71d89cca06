"""The FedSAM paper's hyper-parameter tables (its Tables 10, 11, 12) rendered from flcore.

Each ``table*_ours`` function asks :func:`flcore.resolve_config` what a run at
the ``paper`` scale would use -- the same layered presets every run goes through -- and
lays the answer out like the paper's table, so the notebooks can put it beside the
published one (:mod:`flcore.reproduction.published`) and show any difference.  Datasets
flcore does not have (CIFAR-100-PAM, Landmarks, Cityscapes, IDDA: not obtainable offline
or not in torchvision) are marked ``not in flcore``; SWA values are ``pending`` until an
SWA method is registered.  :func:`scale_settings` shows what the smaller scales change.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from flcore.config import resolve_config
from flcore.papers.fedsam.runs import CLIENTS_PER_ROUND, DATASETS, dataset_for
from flcore.planning import registered_methods
from flcore.reproduction.stand_in import paper_dataset

NOT_IN_FLCORE = "not in flcore"
PENDING = "pending"


def _paper_config(method: str, label: str, alpha: float = 0.0, **extra: Any):
    return resolve_config(method=method, dataset=paper_dataset(label), scale="paper", alpha=alpha, **extra)


def _row_of(label: str, columns, value: str) -> dict:
    """A dataset's row with ``value`` (why there is no number) in every column."""
    return {"dataset": label, **dict.fromkeys(columns, value)}


def _dataset_rows(datasets: list[str], columns, row) -> pd.DataFrame:
    """One row per dataset: ``row(label)`` where flcore has the dataset, "not in flcore"
    in every column elsewhere."""
    return pd.DataFrame([row(label) if label in DATASETS else _row_of(label, columns, NOT_IN_FLCORE)
                         for label in datasets])


def table10_ours(datasets: list[str]) -> pd.DataFrame:
    """Table 10 (training parameters) for ``datasets`` as flcore resolves them."""
    def row(label):
        cfg = _paper_config("fedavg", label)
        return {"dataset": label, "client_lr": cfg.lr, "batch_size": cfg.batch_size,
                "weight_decay": cfg.weight_decay, "local_epochs": cfg.local_epochs,
                "client_momentum": cfg.momentum, "rounds": cfg.rounds,
                "clients_per_round": ", ".join(str(k) for k in CLIENTS_PER_ROUND["paper"])}
    return _dataset_rows(datasets, _T10, row)


_T10 = ("client_lr", "batch_size", "weight_decay", "local_epochs", "client_momentum", "rounds",
        "clients_per_round")


def table11_ours(rows: list[tuple[str, Any]]) -> pd.DataFrame:
    """Table 11 (SAM rho; ASAM rho and eta) for ``(dataset, alpha)`` rows."""
    out = []
    for label, alpha in rows:
        if label not in DATASETS or alpha in ("", None):
            out.append({"dataset": label, "alpha": alpha, "sam_rho": NOT_IN_FLCORE,
                        "asam_rho": NOT_IN_FLCORE, "asam_eta": NOT_IN_FLCORE})
            continue
        sam = _paper_config("fedsam", label, float(alpha))
        asam = _paper_config("fedasam", label, float(alpha))
        out.append({"dataset": label, "alpha": alpha, "sam_rho": sam.rho, "asam_rho": asam.rho,
                    "asam_eta": asam.eta})
    return pd.DataFrame(out)


#: Config fields an SWA method may use for Table 12's columns (first one present wins).
SWA_FIELDS = {
    "cycle": ("swa_cycle", "swa_c", "cycle"),
    "lr_max": ("swa_lr_max", "swa_lr1", "lr"),
    "lr_min": ("swa_lr_min", "swa_lr", "swa_lr2", "lr_min"),
    "start_round": ("swa_start", "swa_start_round", "start"),
}
SWA_METHOD = "fedavg+swa"


def swa_available() -> bool:
    return SWA_METHOD in registered_methods()


def table12_ours(datasets: list[str]) -> pd.DataFrame:
    """Table 12 (SWA cycle, learning rates, start round) as flcore resolves them."""
    def row(label):
        if not swa_available():
            return _row_of(label, SWA_FIELDS, PENDING)
        values = _paper_config(SWA_METHOD, label).to_dict()
        out = {"dataset": label}
        for column, names in SWA_FIELDS.items():
            found = next((values[n] for n in names if n in values and values[n] is not None), None)
            if column == "start_round" and isinstance(found, float) and 0 < found < 1:
                found = int(found * values["rounds"])  # a fraction of the round budget
            if column == "start_round" and found is None:
                found = int(0.75 * values["rounds"])  # the paper's default start
            out[column] = found if found is not None else PENDING
        return out
    return _dataset_rows(datasets, SWA_FIELDS, row)


def scale_settings(methods: tuple[str, ...] = ("fedavg", "fedsam", "fedasam")) -> pd.DataFrame:
    """What each scale uses for the CIFAR-10 alpha = 0 setting of Table 2: dataset,
    federation, local training and the methods' rho/eta."""
    rows = []
    for scale in ("smoke", "small", "paper"):
        dataset = dataset_for("CIFAR-10", scale)
        base = resolve_config(method="fedavg", dataset=dataset, scale=scale, alpha=0.0, per_round=5)
        row = {"scale": scale, "dataset": dataset, "model": base.model, "clients": base.clients,
               "clients_per_round": base.per_round,
               "samples": base.num_samples if base.num_samples else f"{base.samples_per_client}/client",
               "rounds": base.rounds, "client_lr": base.lr, "batch_size": base.batch_size,
               "weight_decay": base.weight_decay}
        for method in methods[1:]:
            cfg = resolve_config(method=method, dataset=dataset, scale=scale, alpha=0.0)
            row[f"{method}_rho"] = cfg.rho
        row["fedasam_eta"] = resolve_config(method="fedasam", dataset=dataset, scale=scale, alpha=0.0).eta
        rows.append(row)
    return pd.DataFrame(rows).set_index("scale")
