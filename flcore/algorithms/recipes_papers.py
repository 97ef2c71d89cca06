"""The five papers' own methods as recipes of parts (docs/algorithms.md 2, 4 and 7.2):
FedGloSS and its variants, FedGF, FedLESAM (-S, -D), server-side SWA (X+SWA), IMA
(X+IMA), SAM~ and the centralized baselines.

Registered by :mod:`flcore.algorithms.registry` after the baselines; the ``X+swa``,
``X+swalr`` and ``X+ima`` wrappers of :func:`wrapped_recipes` come last, built on the
registered base methods (a base that is not registered is an error).  Communication counts
model-sized vectors per participating client (rule R7).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import torch

from flcore.algorithms.averaging import SWA, add_ima, add_swa
from flcore.algorithms.corrections import DynDual, ScaffoldCorrection
from flcore.algorithms.hyperparameters import Hyperparameter, declare
from flcore.algorithms.methods import (
    Method,
    asam_client,
    average_server,
    average_step,
    local_update,
    sam_client,
    sgd_client,
)
from flcore.algorithms.perturbation import NoPerturbation, SAMPerturbation
from flcore.algorithms.perturbation_global import (
    BlendedPerturbation,
    LocallyEstimatedGlobal,
    WarmupSAMPerturbation,
    samtilde_parts,
)
from flcore.algorithms.schedules import (
    ConstantLR,
    GlossCodeServerRho,
    IMAExplorationLR,
    LinearWarmup,
    SWACyclicLR,
    default_start,
)
from flcore.algorithms.server import PseudoGradientStep, Server, ServerSGD
from flcore.algorithms.server_global import FedGFServer, GlobalPerturbation, LastGlobalUpdate, ProbePerturbation
from flcore.algorithms.server_parts import DynServerCorrection, ScaffoldServer

GLOSS_RHO_SERVER = Hyperparameter("gloss_rho_server", "float", 0.15, "FedGloSS server radius rho_s", low=0)
GLOSS_BETA = Hyperparameter("gloss_beta", "float", 10.0,
                            "FedGloSS ADMM parameter beta (1/beta is the prox coefficient)", low=0, low_open=True)
GLOSS_DUAL_SCALE = Hyperparameter.option("gloss_dual_scale", ("paper", "code"),
                                         "FedGloSS server dual step: paper (1/(beta N)) or code (1/(beta N |S|))")
GLOSS_SERVER_RHO_SCHEDULE = Hyperparameter.option(
    "gloss_server_rho_schedule", ("paper", "code"),
    "FedGloSS rho_s per round: paper (constant) or code (the official script's schedule)")
declare(GLOSS_RHO_SERVER, GLOSS_BETA, GLOSS_DUAL_SCALE, GLOSS_SERVER_RHO_SCHEDULE)

#: The papers' own methods, in registration order (their wrappers: :func:`wrapped_recipes`).
RECIPES: list[Method] = []
_add = RECIPES.append


# ----------------------------------------------------------------------------- FedGloSS


def _gloss_sam(cfg):
    """The client SAM of FedGloSS-SAM, with the linear rho_l warm-up when T_s > 1 (the
    official code's condition; ``T_s <= 1`` is no schedule, as for the server radius)."""
    if cfg.rho_warmup_rounds > 1:
        return WarmupSAMPerturbation(LinearWarmup(cfg.rho, cfg.rho_warmup_rounds, cfg.rho_warmup_start))
    return SAMPerturbation(rho=cfg.rho)


def _gloss_sgd(cfg):
    return NoPerturbation()


def _server_rho(local_rho):
    """rho_s per round: constant (paper) or the official code's schedule (option)."""
    def build(cfg):
        if cfg.gloss_server_rho_schedule == "code":
            return GlossCodeServerRho(cfg.gloss_rho_server, local_rho(cfg), cfg.rho_warmup_rounds,
                                      cfg.rho_warmup_start)
        return ConstantLR(cfg.gloss_rho_server)
    return build


_RHO_L = {"sgd": lambda cfg: 0.0, "sam": lambda cfg: cfg.rho}  # the code's SGD client is rho_l = 0
_CLIENT_OPT = {"sgd": _gloss_sgd, "sam": _gloss_sam}


def _gloss_client(opt: str, admm: bool):
    def build(cfg, flat):
        corrections = [DynDual(1.0 / cfg.gloss_beta)] if admm else []
        return local_update(cfg, _CLIENT_OPT[opt](cfg), corrections)
    return build


def _gloss_server(opt: str, admm: bool, probe: bool = False):
    def build(cfg):
        rho_s = _server_rho(_RHO_L[opt])(cfg)
        perturbation = ProbePerturbation(rho_s) if probe else GlobalPerturbation(rho_s)
        parts = [perturbation]
        if admm:
            parts.append(DynServerCorrection(1.0 / cfg.gloss_beta, dual_scale=cfg.gloss_dual_scale))
        return Server(average_step(), parts=tuple(parts))
    return build


_GLOSS_RULE = (
    "server: w~^t = w^t + rho_s unit(Delta~^{t-1}) (0 in round 0); clients start from w~^t; "
    "Delta~^t = w~^t - sum p_k w_k")
_ADMM_RULE = (
    "; client step g - sigma_k + (w - w~^t)/beta, sigma_k <- sigma_k - (w_K - w~^t)/beta; "
    "sigma <- sigma - 1/(beta N) sum (w_k - w~^t); w^{t+1} = w^t - Delta~^t - beta sigma")

#: FedGloSS CNN values from its repository (docs/algorithms.md 2.4): CIFAR-10 rho_l 0.15,
#: rho_s 0.15, beta 10, T_s 2000; CIFAR-100 rho_l 0.2, rho_s 0.01, beta 100, T_s 15000.
_GLOSS_VALUES = {
    "cifar10": {"rho": 0.15, "gloss_rho_server": 0.15, "gloss_beta": 10.0, "rho_warmup_rounds": 2000},
    "cifar100": {"rho": 0.2, "gloss_rho_server": 0.01, "gloss_beta": 100.0, "rho_warmup_rounds": 15000},
}


def _gloss_values(client_sam: bool):
    """FedGloSS's values for a data set (CIFAR-10's for the others).  Below the paper scale
    the warm-up is off (its length is tied to the 10k/20k budgets); FedGloSS-SGD has no
    client radius."""
    def values(dataset: str, alpha: float, scale: str) -> dict:
        out = dict(_GLOSS_VALUES.get(dataset, _GLOSS_VALUES["cifar10"]))
        if scale != "paper":
            out["rho_warmup_rounds"] = 0
        if not client_sam:
            out.pop("rho")
        return out
    return values


for _opt in ("sgd", "sam"):
    _add(Method(
        f"fedgloss-{_opt}",
        f"FedGloSS-{_opt.upper()} (Caldarola et al. 2025, Alg. 1 as corrected in the official repo): "
        + _GLOSS_RULE + _ADMM_RULE + ".",
        _gloss_client(_opt, True), _gloss_server(_opt, True), paper_values=_gloss_values(_opt == "sam")))
    _add(Method(
        f"fedgloss-{_opt}-noadmm",
        f"FedGloSS-{_opt.upper()} without ADMM (Caldarola et al. 2025, Sec. 5.2 steps 1-4; Table 9): "
        + _GLOSS_RULE + "; w^{t+1} = w^t - Delta~^t.",
        _gloss_client(_opt, False), _gloss_server(_opt, False), paper_values=_gloss_values(_opt == "sam")))

_add(Method(
    "naivefedgloss",
    "NaiveFedGloSS (Caldarola et al. 2025, Sec. 5.1.1): a probe exchange from w^t gives "
    "Delta^t; the same clients then train from w^t + rho_s unit(Delta^t) with SAM and ADMM"
    + _ADMM_RULE.replace("Delta~^t", "Delta~^t (measured in the second exchange)")
    + ". Two exchanges: 2/2 communication, twice the client compute.",
    _gloss_client("sam", True), _gloss_server("sam", True, probe=True), paper_values=_gloss_values(True)))


# ----------------------------------------------------------------------------- FedGF

def _fedgf_client(cfg, flat):
    return local_update(cfg, BlendedPerturbation(cfg.rho))


def _fedgf_server(static: bool):
    """A fixed c reads neither the window, the threshold nor the normalisation of the
    adaptive c (their defaults only size the indicator record)."""
    def build(cfg):
        if static:
            part = FedGFServer(cfg.rho, static_c=cfg.fedgf_static_c)
        else:
            part = FedGFServer(cfg.rho, window=cfg.fedgf_window, threshold=cfg.fedgf_threshold,
                               c_norm=cfg.fedgf_c_norm)
        return Server(average_step(), parts=(part,))
    return build


#: FedGF's window 30 and T_D 0.2 (the first of its code's grid {0.2, 0.3}; assumed).
_FEDGF_DEFAULTS = {"fedgf_window": 30, "fedgf_threshold": 0.2}
_FEDGF_RULE = (
    "each step h = grad at c w~^r + (1 - c)(w + rho unit(g)), w <- w - lr h; server: FedAvg, "
    "w~^{r+1} = w^{r+1} + rho unit(w^r - w^{r+1}); round 0 is FedSAM")
_add(Method(
    "fedgf",
    "FedGF (Lee & Yoon 2024, Eqs. 12-16): " + _FEDGF_RULE + "; c = (1/W) sum of the last W "
    "indicators 1[D^r > T_D], D^r = mean_i ||w^r - w_i||.",
    _fedgf_client, _fedgf_server(False), defaults=_FEDGF_DEFAULTS))
_add(Method(
    "fedgf-static-c",
    "FedGF with a fixed c (Lee & Yoon 2024, Sec. 5 ablation): " + _FEDGF_RULE + "; c = fedgf_static_c.",
    _fedgf_client, _fedgf_server(True), defaults=_FEDGF_DEFAULTS))


# ----------------------------------------------------------------------------- FedLESAM


def _lesam(cfg, flat):
    tensor_of = None
    if cfg.lesam_perturbation == "code":
        tensor_of = torch.cat([torch.full((shape.numel(),), i, dtype=torch.long)
                               for i, shape in enumerate(flat.shapes)]).to(flat.weight_mask.device)
    return LocallyEstimatedGlobal(cfg.rho, first_visit=cfg.lesam_first_visit, estimate=cfg.lesam_estimate,
                                  tensor_of=tensor_of)


def _lesam_client(*corrections):
    def build(cfg, flat):
        return local_update(cfg, _lesam(cfg, flat), [c(cfg) for c in corrections])
    return build


def _lesam_server(step, *parts):
    def build(cfg):
        server_parts = [part(cfg) for part in parts]
        if cfg.lesam_estimate == "server_last_round":
            server_parts.append(LastGlobalUpdate())  # last: it must see the final w^{t+1}
        return Server(step(cfg), parts=tuple(server_parts))
    return build


def _server_lr_step(cfg):
    return PseudoGradientStep(ServerSGD(lr=cfg.server_lr))


#: FedLESAM's lr decay (0.998; 0.9995 for FedLESAM-D), gradient clipping at 10 (its code) and
#: rho 0.01 (assumed, issue #1 of its repository); FedDyn alpha 0.1 for FedLESAM-D (its code).
_LESAM_DEFAULTS = {"lr_decay": 0.998, "clip_norm": 10.0, "rho": 0.01}
_LESAM_RULE = ("delta_i = rho unit(w_i^old - w^t), fixed for the round (0 before the client's first "
               "visit); each step g = grad at w + delta_i; w_i^old <- w^t")
_add(Method(
    "fedlesam",
    "FedLESAM (Fan et al. 2024, Alg. 1): " + _LESAM_RULE + "; w^{t+1} = w^t + eta_g mean(w_i - w^t).",
    _lesam_client(), _lesam_server(_server_lr_step), defaults=_LESAM_DEFAULTS))
_add(Method(
    "fedlesam-s",
    "FedLESAM-S (Fan et al. 2024, App. D.2, Alg. 3): SCAFFOLD with the FedLESAM gradient, "
    + _LESAM_RULE + "; y <- y - lr(g - c_i + c), option-II control variates, SCAFFOLD server.",
    _lesam_client(lambda cfg: ScaffoldCorrection(cfg.scaffold_correction)),
    _lesam_server(_server_lr_step, lambda cfg: ScaffoldServer()), defaults=_LESAM_DEFAULTS))
_add(Method(
    "fedlesam-d",
    "FedLESAM-D (Fan et al. 2024, App. D.3, Alg. 4): FedDyn with the FedLESAM gradient, "
    + _LESAM_RULE + "; w <- w - lr(g - lambda_i + alpha(w - w^t)); FedDyn duals and server.",
    _lesam_client(lambda cfg: DynDual(cfg.feddyn_alpha, clip=cfg.dyn_clip)),
    _lesam_server(lambda cfg: average_step(), lambda cfg: DynServerCorrection(cfg.feddyn_alpha)),
    defaults={**_LESAM_DEFAULTS, "lr_decay": 0.9995, "feddyn_alpha": 0.1}))


# ----------------------------------------------------------------------------- SWA and IMA

def _swa_cyclic_schedule(method: Method):
    """L1 ([SAM22] Eq. 7): ``method``'s client lr schedule until t_s, then SWA's cycle from
    gamma_1 to gamma_2 every c rounds."""
    def schedule(cfg):
        return SWACyclicLR(method.build_schedule(cfg), default_start(cfg.swa_start, cfg.rounds), cfg.swa_cycle,
                           cfg.lr, cfg.swa_lr_min, cfg.swa_phase)
    return schedule


def with_swa(method: Method, name: str | None = None) -> Method:
    """X+SWA ([SAM22] Alg. 1; docs/algorithms.md 2.3): X's client and server, plus A1 (the SWA
    average, evaluated from t_s on) and L1 (the cyclical client lr from t_s on)."""
    def server(cfg):
        swa = SWA(default_start(cfg.swa_start, cfg.rounds), cfg.swa_cycle, cfg.swa_include_start, cfg.swa_phase)
        return add_swa(method.build_server(cfg), swa)

    return dataclasses.replace(
        method, name=name or f"{method.name}+swa",
        summary=f"{method.summary} With server-side SWA (Caldarola et al. 2022, Alg. 1, Eqs. 7-8): from t_s "
        "the client lr cycles gamma_1 -> gamma_2 every c rounds and the server averages w^{t+1} at the end "
        "of each cycle; the average is evaluated, never sent.",
        server=server, schedule=_swa_cyclic_schedule(method))


def with_swa_lr(method: Method, name: str | None = None) -> Method:
    """X+swalr: SWA's cyclical client lr (L1, [SAM22] Eq. 7) from t_s on, without the server
    average -- the "no weights averaging, c > 1" rows of the SWA ablation ([SAM22] App. E.3,
    Table 14); the evaluated model is X's global model."""
    return dataclasses.replace(
        method, name=name or f"{method.name}+swalr",
        summary=f"{method.summary} With SWA's cyclical client lr only (Caldarola et al. 2022, App. E.3): from "
        "t_s the client lr cycles gamma_1 -> gamma_2 every c rounds; no server average (the ablation of "
        "Table 14).",
        schedule=_swa_cyclic_schedule(method))


def with_ima(method: Method, name: str | None = None) -> Method:
    """X+IMA ([IMA] Sec. V; docs/algorithms.md 2.9): X's client and server, plus A2 (the mean
    of the last P aggregation outputs from t_IMA on, sent to the clients) and L3 (lr decay
    gamma, then gamma_IMA from t_IMA on)."""
    def server(cfg):
        return add_ima(method.build_server(cfg), cfg.ima_window, default_start(cfg.ima_start, cfg.rounds),
                       cfg.ima_partial_window)

    def schedule(cfg):
        return IMAExplorationLR(cfg.lr, cfg.ima_gamma, cfg.ima_gamma_late, default_start(cfg.ima_start, cfg.rounds),
                                cfg.ima_exploration, cfg.ima_lr_min, cfg.ima_exploration_period)

    return dataclasses.replace(
        method, name=name or f"{method.name}+ima",
        summary=f"{method.summary} With IMA (Zhou et al. 2024, Sec. V): from t_IMA the global model is the "
        "mean of the last P aggregation outputs (fed back to the clients) and the client lr decays by "
        "gamma_IMA per round instead of gamma.",
        server=server, schedule=schedule)


#: Bases of X+SWA in [SAM22] (Tables 2, 6) and of X+IMA in [IMA] (Tables I, II); the
#: wrappers are built by :func:`wrapped_recipes`.
SWA_BASES = ("fedavg", "fedsam", "fedasam", "fedavgm", "fedprox", "scaffold", "feddyn", "adabest",
             "fedavgm+asam", "fedprox+asam", "scaffold+asam", "feddyn+sam", "feddyn+asam", "adabest+asam")
#: Bases of X+swalr: the SWA ablation of [SAM22] Table 14.
SWA_LR_BASES = ("fedavg", "fedsam", "fedasam")
IMA_BASES = ("fedavg", "fedprox", "fedasam", "fednova", "fedgma", "fedfa", "fedadam", "fedyogi")


# ----------------------------------------------------------------------------- centralized

def _samtilde_client(cfg, flat):
    perturbation, corrections = samtilde_parts(cfg.rho)
    return local_update(cfg, perturbation, corrections)


_CENTRAL = ("Centralized baseline (docs/algorithms.md 4): one client holding the pooled training set, one "
            "round = one epoch, plain average server (the identity for one client); ")


def _epochs(dataset: str, alpha: float, scale: str) -> dict:
    """A centralized run's rounds are epochs, each evaluated (200 at the paper scale is an
    assumption of ours, the papers give none)."""
    epochs = {"smoke": 2, "small": 20, "paper": 200}[scale]
    return {"rounds": epochs, "eval_every": 1, "eval_last": epochs, "checkpoint_every": max(1, epochs // 10)}


_add(Method("centralized-sgd", _CENTRAL + "SGD.", sgd_client, average_server, paper_values=_epochs, pooled=True))
_add(Method("centralized-sam", _CENTRAL + "SAM (Foret et al. 2021).", sam_client, average_server,
            paper_values=_epochs, pooled=True))
_add(Method("centralized-asam", _CENTRAL + "ASAM (Kwon et al. 2021).", asam_client, average_server,
            paper_values=_epochs, pooled=True))
_add(Method(
    "centralized-samtilde",
    _CENTRAL + "SAM~ (Caldarola et al. 2025, Table 6; DP-SAT, Park et al. 2023): eps_i = rho "
    "unit(g~_{i-1}), g~_i = grad at w_i + eps_i, one gradient per step.",
    _samtilde_client, average_server, paper_values=_epochs, pooled=True))



def wrapped_recipes(methods: Mapping[str, Method]) -> list[Method]:
    """The SWA, SWA-lr and IMA wrappers of the registered ``methods``, in registration
    order; a base that is not among ``methods`` raises (a wrapper is never skipped)."""
    def base(name: str) -> Method:
        if name not in methods:
            raise ValueError(f"the base method {name!r} of a +swa/+swalr/+ima wrapper is not registered")
        return methods[name]

    return [with_swa(base("centralized-sgd"), name="centralized-swa"),
            *(with_swa(base(name)) for name in ("centralized-sam", "centralized-asam", *SWA_BASES)),
            *(with_swa_lr(base(name)) for name in SWA_LR_BASES),
            *(with_ima(base(name)) for name in IMA_BASES)]
