"""Scales and paper hyper-parameters as data.

Three scales run the same code path (docs/design.md section 8):

- ``smoke``: seconds, for CI; a tiny MNIST-1D federation and a handful of rounds.
- ``small``: the CPU default, offline; MNIST-1D (10,000 samples generated locally) with
  the papers' protocol shrunk: 100 clients, 5 per round, 300 rounds.
- ``paper``: the FedSAM paper's CIFAR protocol exactly (its Table 10): 100 clients x 500
  images, 5 clients per round, 1 local epoch, batch 64, client lr 0.01, weight decay
  4e-4, 10k rounds (CIFAR-10) or 20k (CIFAR-100), evaluation every 100 rounds and every
  round of the last 100.  Fashion-MNIST, which only FedIMA trains, takes FedIMA's protocol
  (its Table VII and official code): 100 clients x 600 images, 10 per round, 5 local epochs
  of batch 50, lr 0.01 with momentum 0.9, weight decay 1e-3, a x0.99 lr decay a round,
  300 rounds.  PACS, FedIMA's too, takes its Table VII row: 80 clients, 16 per round,
  the same local training and decay, 400 rounds.  The CIFAR federations are Hsu et al.'s
  Dirichlet split with rounded class counts (``partition: dirichlet_rounded``, the closest
  to the published split files: :mod:`flcore.data.partition`); the smaller scales keep
  ``dirichlet``.

Method hyper-parameters follow the FedSAM paper's Table 11 (SAM rho; ASAM rho and eta) at
the ``paper`` scale.  For Dirichlet alphas that Table 11 does not list, the value of the
nearest listed heterogeneity level is used (documented per entry below).
"""
from __future__ import annotations

from flcore.algorithms import METHODS
from flcore.config.tuned import method_study, study_for, tuned_entries
from flcore.errors import ConfigError, quote

#: The data set of each scale when none is given.
DEFAULT_DATASET = {"smoke": "mnist1d", "small": "mnist1d", "paper": "cifar10"}

_COMMON_SMALL = {
    "clients": 100, "per_round": 5, "rounds": 300, "local_epochs": 1,
    # the mean of the last 100 rounds from every fifth: a third of the evaluations
    # (record_format.is_evaluation_round says what it changes)
    "eval_every": 10, "eval_last": 100, "eval_last_every": 5, "checkpoint_every": 50,
    # evaluating the 8,000 training samples every 10 rounds is about a tenth of a small
    # run's time, and only FedSAM's Fig. 3 reads it: its runs ask for it
    "client_accuracy": False,
}
_COMMON_SMOKE = {
    "clients": 10, "per_round": 3, "rounds": 4, "local_epochs": 1,
    "eval_every": 2, "eval_last": 2, "checkpoint_every": 2,
}

#: MNIST-1D learning settings (ours: the papers do not use MNIST-1D).  At the small scale
#: 10,000 samples (8,000 train) give 80 samples per client and batch 20 gives 4 local
#: steps per epoch; lr 0.1 was the best of {0.05, 0.1, 0.2} x batch {10, 20} for both
#: FedAvg and FedSAM at alpha = 0 over 300 rounds.
_MNIST1D = {"batch_size": 20, "lr": 0.1, "weight_decay": 0.0, "momentum": 0.0}
#: FedSAM paper Table 10, CIFAR rows.
_CIFAR = {"batch_size": 64, "lr": 0.01, "weight_decay": 4e-4, "momentum": 0.0}
#: FedIMA's Fashion-MNIST learning settings (Table VII; weight decay from its code).
_FMNIST = {"batch_size": 50, "lr": 0.01, "weight_decay": 1e-3, "momentum": 0.9}
#: FedIMA's PACS learning settings (Table VII; weight decay from its code, as for FMNIST).
#: Its label + feature skew: one domain per client, Dirichlet alpha 0.1 within (the code's default).
_PACS = {**_FMNIST, "partition": "domains", "alpha": 0.1}

_SCALE_TABLE = {
    ("smoke", "mnist1d"): {**_COMMON_SMOKE, **_MNIST1D, "num_samples": 1000},
    ("smoke", "synthetic"): {**_COMMON_SMOKE, **_MNIST1D, "num_samples": 600},
    ("smoke", "cifar10"): {**_COMMON_SMOKE, **_CIFAR, "samples_per_client": 20, "batch_size": 8},
    ("smoke", "cifar100"): {**_COMMON_SMOKE, **_CIFAR, "samples_per_client": 20, "batch_size": 8},
    ("smoke", "fmnist"): {**_COMMON_SMOKE, **_FMNIST, "samples_per_client": 20, "batch_size": 8},
    ("smoke", "pacs"): {**_COMMON_SMOKE, **_PACS, "clients": 8, "per_round": 2, "batch_size": 8},
    ("small", "mnist1d"): {**_COMMON_SMALL, **_MNIST1D, "num_samples": 10_000},
    ("small", "synthetic"): {**_COMMON_SMALL, **_MNIST1D, "num_samples": 10_000},
    ("small", "cifar10"): {**_COMMON_SMALL, **_CIFAR, "samples_per_client": 500},
    ("small", "cifar100"): {**_COMMON_SMALL, **_CIFAR, "samples_per_client": 500},
    ("small", "fmnist"): {**_COMMON_SMALL, **_FMNIST, "samples_per_client": 600},
    ("small", "pacs"): {**_COMMON_SMALL, **_PACS, "clients": 80, "per_round": 16},
    ("paper", "cifar10"): {
        **_CIFAR, "partition": "dirichlet_rounded", "clients": 100, "per_round": 5, "samples_per_client": 500,
        "rounds": 10_000, "local_epochs": 1, "eval_every": 100, "eval_last": 100, "checkpoint_every": 500,
    },
    ("paper", "cifar100"): {
        **_CIFAR, "partition": "dirichlet_rounded", "clients": 100, "per_round": 5, "samples_per_client": 500,
        "rounds": 20_000, "local_epochs": 1, "eval_every": 100, "eval_last": 100, "checkpoint_every": 500,
    },
    ("paper", "fmnist"): {
        **_FMNIST, "clients": 100, "per_round": 10, "samples_per_client": 600, "rounds": 300,
        "local_epochs": 5, "lr_decay": 0.99, "eval_every": 10, "eval_last": 10, "checkpoint_every": 50,
    },
    ("paper", "pacs"): {
        **_PACS, "clients": 80, "per_round": 16, "rounds": 400, "local_epochs": 5, "lr_decay": 0.99,
        "eval_every": 10, "eval_last": 10, "checkpoint_every": 50,
    },
}


def scale_defaults(scale: str, dataset: str) -> dict:
    """Protocol defaults for a scale and dataset (see module docstring)."""
    try:
        return dict(_SCALE_TABLE[(scale, dataset)])
    except KeyError:
        allowed = sorted({d for s, d in _SCALE_TABLE if s == scale})
        raise ConfigError(
            "dataset", f"{quote(dataset)} has no preset at scale {quote(scale)}; allowed datasets at this scale: "
            + ", ".join(allowed)) from None


def _fedsam_table11(dataset: str, alpha: float) -> dict:
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


#: Server optimizer defaults.  FedAvgM: beta = 0.9, server lr 1 (FedSAM paper, CIFAR).
#: FedAdam/FedYogi: server lr 0.01, tau 1e-3, betas (0.9, 0.99) (FedIMA paper code);
#: FedAdagrad: beta1 = 0 as in the FedSAM paper's Table 13 setting.
_SERVER_DEFAULTS = {
    "fedavgm": {"server_lr": 1.0, "server_momentum": 0.9},
    "fedadam": {"server_lr": 0.01, "server_beta1": 0.9, "server_beta2": 0.99, "server_tau": 1e-3},
    "fedadagrad": {"server_lr": 0.01, "server_beta1": 0.0, "server_beta2": 0.0, "server_tau": 1e-3},
    "fedyogi": {"server_lr": 0.01, "server_beta1": 0.9, "server_beta2": 0.99, "server_tau": 1e-3},
}
_SERVER_DEFAULTS["fedavgm+asam"] = _SERVER_DEFAULTS["fedavgm"]

#: Per-method values from the papers (docs/algorithms.md): FedLESAM's lr decay (0.998; 0.9995
#: for FedLESAM-D), gradient clipping at 10 (its code) and rho 0.01 (assumed, issue #1 of
#: its repository); FedDyn alpha 0.1 for FedLESAM-D (its code); FedGF's window 30 and T_D
#: 0.2 (the first of its code's grid {0.2, 0.3}; assumed).
_METHOD_VALUES = {
    "fedlesam": {"lr_decay": 0.998, "clip_norm": 10.0, "rho": 0.01},
    "fedlesam-s": {"lr_decay": 0.998, "clip_norm": 10.0, "rho": 0.01},
    "fedlesam-d": {"lr_decay": 0.9995, "clip_norm": 10.0, "rho": 0.01, "feddyn_alpha": 0.1},
    "fedsmoo": {"rho": 0.1, "smoo_beta": 10.0},
    "fedgf": {"fedgf_window": 30, "fedgf_threshold": 0.2},
    "fedgf-static-c": {"fedgf_window": 30, "fedgf_threshold": 0.2},
}

#: FedGloSS CNN values from its repository (docs/algorithms.md 2.4): CIFAR-10 rho_l 0.15,
#: rho_s 0.15, beta 10, T_s 2000; CIFAR-100 rho_l 0.2, rho_s 0.01, beta 100, T_s 15000.
#: Below the paper scale the warm-up is off (its length is tied to the 10k/20k budgets).
_GLOSS = {
    "cifar10": {"rho": 0.15, "gloss_rho_server": 0.15, "gloss_beta": 10.0, "rho_warmup_rounds": 2000},
    "cifar100": {"rho": 0.2, "gloss_rho_server": 0.01, "gloss_beta": 100.0, "rho_warmup_rounds": 15000},
}


def base_method(method: str) -> str:
    """The method an ``X+swa`` / ``X+ima`` wrapper is built on (``X`` itself otherwise)."""
    for suffix in ("+swa", "+swalr", "+ima"):
        if method.endswith(suffix):
            return method[: -len(suffix)]
    return method


def method_defaults(method: str, dataset: str, alpha: float, scale: str) -> dict:
    """Paper hyper-parameters of ``method`` for a dataset and heterogeneity level.

    Where ``flcore tune`` has a record for ``scale`` and ``dataset`` (:mod:`flcore.config.tuned`),
    its choices replace the FedSAM paper's CIFAR values for the methods each study covers;
    a value a method's own paper sets (FedLESAM's rho, FedGloSS's) still wins.

    SAM-type radii follow the FedSAM paper's Table 11 for every method whose client uses a
    SAM (P1) or ASAM (P2) step, unless the method's own paper sets them; ``X+swa`` and
    ``X+ima`` take ``X``'s values plus their own (SWA cycle c = 10 for CIFAR-10 and MNIST-1D,
    20 for CIFAR-100: FedSAM paper Table 12)."""
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise ConfigError("alpha", f"expected a number, got {quote(alpha)}") from None
    base = base_method(method)
    table = _fedsam_table11(dataset, alpha)
    out: dict = {}
    parts = METHODS[base].parts if base in METHODS else ()
    if any("P1" in p for p in parts):
        out["rho"] = table["sam_rho"]
    if any("P2" in p for p in parts):
        out.update(rho=table["asam_rho"], eta=table["eta"])
    if any("P5" in p for p in parts):  # FedGF: SAM radius of Table 11 for both perturbations
        out["rho"] = table["sam_rho"]
    out.update(_SERVER_DEFAULTS.get(base, {}))
    tuned = [e for e in tuned_entries(scale, dataset, alpha) if study_for(e["study"], parts, base)]
    for entry in tuned:  # a study of the method's parts, tuned on this data set's validation split
        if not method_study(entry["study"]):
            out.update(entry["choice"])
    out.update(_METHOD_VALUES.get(base, {}))
    if base.startswith("fedgloss") or base == "naivefedgloss":
        gloss = dict(_GLOSS.get(dataset, _GLOSS["cifar10"]))
        if scale != "paper":
            gloss["rho_warmup_rounds"] = 0
        if "sgd" in base:
            gloss.pop("rho")
        out.update(gloss)
    if base.startswith("adabest"):  # FedSAM paper, App. C.2: (beta, mu) per dataset
        out.update(adabest_beta=0.8 if dataset == "cifar100" else 0.9, adabest_mu=0.02)
    if base == "fedgamma":  # FedGloSS paper's CNN values (the paper that runs FedGAMMA on it)
        out["rho"] = 0.01 if dataset == "cifar100" else 0.15
    if base.startswith("feddyn") and scale == "paper":
        out["clip_norm"] = 10.0  # FedSAM paper: "heavy gradient clipping", value assumed
    if base.startswith("centralized-"):
        # one client holding the pooled data: a round is an epoch (docs/algorithms.md section 4;
        # 200 epochs at the paper scale is an assumption of ours, the papers give none)
        epochs = {"smoke": 2, "small": 20, "paper": 200}[scale]
        out.update(rounds=epochs, eval_every=1, eval_last=epochs, checkpoint_every=max(1, epochs // 10))
    if method.endswith(("+swa", "+swalr")) or base.endswith("-swa"):
        out["swa_cycle"] = 20 if dataset == "cifar100" else 10
    for entry in tuned:  # a study of the method itself wins over the values above
        if method_study(entry["study"]):
            out.update(entry["choice"])
    return out


def tuning_of(cfg) -> list[dict]:
    """What a resolved run took from a tuning record (:mod:`flcore.config.tuned`): one
    ``{"method", "field", "value", "grid", "source"}`` per field a study covers for its
    method and that its run reads (a field of the run id: a study shared by a method's
    variants may cover a field one of them never reads), ``source`` saying whether the value
    is the record's choice (``tuned: <file>, row <row> (alpha <a>), seeds <s>``), a value the
    method's own paper sets instead, or one the run set itself."""
    base = base_method(cfg.method)
    parts = METHODS[base].parts if base in METHODS else ()
    defaults = None
    reads = cfg.canonical()
    out = []
    entries = [e for e in tuned_entries(cfg.scale, cfg.dataset, cfg.alpha) if study_for(e["study"], parts, base)]
    own = {field for e in entries if method_study(e["study"]) for field in e["fields"]}
    for entry in entries:
        if not method_study(entry["study"]) and own & set(entry["fields"]):
            continue  # the method's own study sets these fields
        if defaults is None:
            defaults = method_defaults(cfg.method, cfg.dataset, cfg.alpha, cfg.scale)
        for field in (f for f in entry["fields"] if f in reads):
            value = getattr(cfg, field)
            if defaults.get(field) != entry["choice"][field]:
                source = "the method's own paper sets it (not tuned here)"
            elif value == entry["choice"][field]:
                seeds = ", ".join(str(s) for s in entry["seeds"])
                source = (f"tuned: {entry['path']}, row {entry['row']} (alpha {entry['alpha']:g}), "
                          f"validation accuracy on seeds {seeds}")
            else:
                source = "set by the run (not the tuned value)"
            out.append({"method": cfg.method, "field": field, "value": value, "grid": entry["grid"][field],
                        "source": source})
    return out
