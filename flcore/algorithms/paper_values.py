"""Hyper-parameter values the papers set per data set, for the parts and recipes that
carry them (a part class's ``paper_values``, ``Method.paper_values``).

Each function takes ``(dataset, alpha, scale)`` and returns ``{field: value}``;
:func:`flcore.config.presets.method_defaults` applies the parts' values, then the recipe's
(a method's own paper wins over the papers of its parts).
"""
from __future__ import annotations


def fedsam_table11(dataset: str, alpha: float) -> dict:
    """FedSAM paper Table 11.  CIFAR-10: alpha in {0, 0.05} -> SAM 0.1, ASAM (0.7, 0.2);
    alpha = 100 -> SAM 0.02, ASAM (0.05, 0.2); unlisted alphas below 1 take the
    heterogeneous row, the others the homogeneous row.  CIFAR-100: alpha = 0 -> SAM 0.02,
    otherwise 0.05; ASAM (0.5, 0.2) for every alpha."""
    if dataset == "cifar10":
        heterogeneous = alpha < 1
        return {"sam_rho": 0.1 if heterogeneous else 0.02, "asam_rho": 0.7 if heterogeneous else 0.05, "eta": 0.2}
    if dataset == "cifar100":
        return {"sam_rho": 0.02 if alpha == 0 else 0.05, "asam_rho": 0.5, "eta": 0.2}
    # MNIST-1D, synthetic data and Fashion-MNIST: our choice (FedSAM's Table 11 has no such row).
    return {"sam_rho": 0.05, "asam_rho": 0.5, "eta": 0.2}


def sam_radius(dataset: str, alpha: float, scale: str) -> dict:
    """A SAM step's rho (P1, and both of FedGF's perturbations, P5): FedSAM Table 11."""
    return {"rho": fedsam_table11(dataset, alpha)["sam_rho"]}


def asam_radius(dataset: str, alpha: float, scale: str) -> dict:
    """An ASAM step's rho and eta (P2): FedSAM Table 11."""
    table = fedsam_table11(dataset, alpha)
    return {"rho": table["asam_rho"], "eta": table["eta"]}


def swa_cycle(dataset: str, alpha: float, scale: str) -> dict:
    """SWA's cycle length c (L1): 10 rounds for CIFAR-10 and MNIST-1D, 20 for CIFAR-100
    (FedSAM paper Table 12)."""
    return {"swa_cycle": 20 if dataset == "cifar100" else 10}


def adabest_server(dataset: str, alpha: float, scale: str) -> dict:
    """AdaBest's beta per data set (FedSAM paper App. C.2): 0.8 for CIFAR-100, else 0.9."""
    return {"adabest_beta": 0.8 if dataset == "cifar100" else 0.9}


def adabest_client(dataset: str, alpha: float, scale: str) -> dict:
    """AdaBest's mu (FedSAM paper App. C.2): 0.02."""
    return {"adabest_mu": 0.02}
