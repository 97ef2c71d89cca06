"""The FL baselines of the five papers as recipes of parts (algorithms.md 3 and 7.2).

Each method is a choice of a perturbation (P), corrections (C) and a server step (S) with
auxiliary server parts; communication counts model-sized vectors per participating client
(rule R7).  Imported at the end of :mod:`flcore.algorithms.methods`.
"""
from __future__ import annotations

from .corrections import AdaBestBias, DynDual, GlobalMomentum, GradientMixing, Prox, ScaffoldCorrection, SpeedProx
from .methods import SERVER_SGD_FIELDS, Method, local_update, register
from .perturbation import ASAMPerturbation, NoPerturbation, SAMPerturbation
from .perturbation_smoo import SMOOPerturbation
from .server import PseudoGradientStep, Server, ServerSGD
from .server_parts import (AdaBestStep, DynServerCorrection, FedNovaStep, GMAStep, MomentumBroadcast, ScaffoldServer,
                           SMOOServer)

# ----------------------------------------------------------------------------- perturbations


def _sgd(cfg, flat):
    return NoPerturbation()


def _sam(cfg, flat):
    return SAMPerturbation(rho=cfg.rho)


def _asam(cfg, flat):
    return ASAMPerturbation(rho=cfg.rho, eta=cfg.eta, weight_mask=flat.weight_mask)


PERTURBATIONS = {"": (_sgd, "P0", (), 1), "+sam": (_sam, "P1", ("rho",), 2),
                 "+asam": (_asam, "P2", ("rho", "eta"), 2)}


def _client(perturbation, *corrections):
    """A client builder: the config's SGD around ``perturbation(cfg, flat)`` and the
    corrections ``correction(cfg)``."""
    def build(cfg, flat):
        return local_update(cfg, perturbation(cfg, flat), [c(cfg) for c in corrections])
    return build


# ----------------------------------------------------------------------------- servers

def _average(cfg):
    return PseudoGradientStep(ServerSGD(lr=1.0))


def _scaffold_server(cfg):
    return Server(PseudoGradientStep(ServerSGD(lr=cfg.server_lr)), parts=(ScaffoldServer(),))


def _dyn_server(alpha_of):
    def build(cfg):
        return Server(_average(cfg), parts=(DynServerCorrection(alpha_of(cfg)),))
    return build


# ----------------------------------------------------------------------------- recipes

def _prox(cfg):
    return Prox(cfg.mu)


def _scaffold(cfg):
    return ScaffoldCorrection(cfg.scaffold_correction)


def _feddyn_alpha(cfg):
    return cfg.feddyn_alpha


def _dyn(cfg):
    return DynDual(cfg.feddyn_alpha)


def _average_server(cfg):
    return Server(_average(cfg))


for _suffix in ("", "+asam"):
    _pert, _pid, _fields, _evals = PERTURBATIONS[_suffix]
    register(Method(
        f"fedprox{_suffix}",
        "FedProx (Li et al. 2020, Eq. 2): local gradient + mu (w - w^t); FedAvg server."
        + (" ASAM local steps (Caldarola et al. 2022, Table 6)." if _suffix else ""),
        (_pid, "C1", "S0"), (*_fields, "mu"), _client(_pert, _prox), _average_server,
        grad_evals_per_step=_evals))
    register(Method(
        f"scaffold{_suffix}",
        "SCAFFOLD (Karimireddy et al. 2020, Algorithm 1, option II): y <- y - lr (g - c_k + c); "
        "c_k+ = c_k - c + (w^t - y_K)/(K lr); w <- w + eta_g sum p_k dy_k; c <- c + sum dc_k / N."
        + (" ASAM local steps (Caldarola et al. 2022, Table 6)." if _suffix else ""),
        (_pid, "C2", "S0"), (*_fields, "server_lr", "scaffold_correction"), _client(_pert, _scaffold),
        _scaffold_server, uploads_per_round=2, downloads_per_round=2, grad_evals_per_step=_evals))

for _suffix in ("", "+sam", "+asam"):
    _pert, _pid, _fields, _evals = PERTURBATIONS[_suffix]
    register(Method(
        f"feddyn{_suffix}",
        "FedDyn (Acar et al. 2021, Algorithm 1): w <- w - lr (g - lambda_k + alpha (w - w^t)); "
        "lambda_k <- lambda_k - alpha (w_K - w^t); h <- h - alpha/N sum (w_k - w^t); "
        "w^{t+1} = mean w_k - h/alpha."
        + (f" {_suffix[1:].upper()} local steps (Caldarola et al. 2022, Table 6)." if _suffix else ""),
        (_pid, "C3", "S6"), (*_fields, "feddyn_alpha"), _client(_pert, _dyn), _dyn_server(_feddyn_alpha),
        grad_evals_per_step=_evals))

for _suffix in ("", "+asam"):
    _pert, _pid, _fields, _evals = PERTURBATIONS[_suffix]
    register(Method(
        f"adabest{_suffix}",
        "AdaBest (Varno et al. 2022, Algorithm 1): w <- w - lr (g - h_k); "
        "h_k <- h_k/(t - t'_k) + mu (w^t - w_K); theta^t = mean w_k; "
        "w^{t+1} = theta^t - beta (theta^{t-1} - theta^t)."
        + (" ASAM local steps (Caldarola et al. 2022, Table 6)." if _suffix else ""),
        (_pid, "C4", "S7"), (*_fields, "adabest_beta", "adabest_mu"),
        _client(_pert, lambda cfg: AdaBestBias(cfg.adabest_mu)),
        lambda cfg: Server(AdaBestStep(cfg.adabest_beta)), grad_evals_per_step=_evals))


def _fedcm_server(cfg):
    return Server(_average(cfg), parts=(MomentumBroadcast(),))


def _momentum(cfg):
    return GlobalMomentum(cfg.fedcm_alpha)


register(Method(
    "fedcm",
    "FedCM (Xu et al. 2021, Algorithm 1): w <- w - lr (alpha g + (1 - alpha) m^t), "
    "m^t = Delta^{t-1}/(K lr) broadcast by the server (0 in round one); FedAvg server.",
    ("P0", "C5", "S0"), ("fedcm_alpha",), _client(_sgd, _momentum), _fedcm_server, downloads_per_round=2))
register(Method(
    "mofedsam",
    "MoFedSAM (Qu et al. 2022, Algorithm 1): FedCM with the SAM gradient, "
    "w <- w - lr (alpha g_SAM + (1 - alpha) m^t); server w^{t+1} = w^t - Delta^t.",
    ("P1", "C5", "S0"), ("rho", "fedcm_alpha"), _client(_sam, _momentum), _fedcm_server,
    downloads_per_round=2, grad_evals_per_step=2))
register(Method(
    "fedgamma",
    "FedGAMMA (Dai et al. 2023, Algorithm 1): SCAFFOLD with SAM local steps, the ascent along "
    "the uncorrected local gradient: y <- y - lr (grad f_k(y + rho unit(g)) - c_k + c).",
    ("P1", "C2", "S0"), ("rho", "server_lr", "scaffold_correction"), _client(_sam, _scaffold),
    _scaffold_server, uploads_per_round=2, downloads_per_round=2, grad_evals_per_step=2))


def _smoo(cfg, flat):
    return SMOOPerturbation(cfg.rho)


def _smoo_alpha(cfg):
    return 1.0 / cfg.smoo_beta


register(Method(
    "fedsmoo",
    "FedSMOO (Sun et al. 2023a, Algorithm 1): perturbation s_hat = rho unit(g - mu_k - s), "
    "mu_k <- mu_k + s_hat - s; FedDyn regulariser with coefficient 1/beta; server "
    "s <- rho unit(sum_k (mu_k - s_hat_K)) and the FedDyn step.",
    ("P3", "C3", "S6"), ("rho", "smoo_beta"), _client(_smoo, lambda cfg: DynDual(_smoo_alpha(cfg))),
    lambda cfg: Server(_average(cfg), parts=(DynServerCorrection(_smoo_alpha(cfg)), SMOOServer(cfg.rho))),
    uploads_per_round=2, downloads_per_round=2, grad_evals_per_step=2))
register(Method(
    "fedsmoo-noreg",
    "FedSMOO without the dynamic regulariser (Lee & Yoon 2024, footnote 3): P3 perturbation, "
    "global perturbation s, FedAvg server.",
    ("P3", "C0", "S0"), ("rho",), _client(_smoo),
    lambda cfg: Server(_average(cfg), parts=(SMOOServer(cfg.rho),)),
    uploads_per_round=2, downloads_per_round=2, grad_evals_per_step=2))
register(Method(
    "fedspeed",
    "FedSpeed (Sun et al. 2023b, Algorithm 1): g = (1 - alpha) g(w) + alpha g(w + rho unit(g(w))); "
    "w <- w - lr (g - ghat_k + (w - w^t)/lambda); ghat_k <- ghat_k - (w_K - w^t)/lambda; "
    "upload x_k = w_K - lambda ghat_k; w^{t+1} = mean x_k.",
    ("P1", "C6", "C3s", "S0"), ("rho", "fedspeed_alpha", "fedspeed_lambda"),
    _client(_sam, lambda cfg: GradientMixing(cfg.fedspeed_alpha), lambda cfg: SpeedProx(cfg.fedspeed_lambda)),
    _average_server, grad_evals_per_step=2))
register(Method(
    "fednova",
    "FedNova (Wang et al. 2020, Eq. 6): tau_k local steps with client momentum rho; "
    "a_k = [tau_k - rho (1 - rho^tau_k)/(1 - rho)]/(1 - rho); "
    "w^{t+1} = w^t - (sum p_k a_k) sum p_k (w^t - w_k)/a_k.",
    ("P0", "C0", "S4"), (), _client(_sgd), lambda cfg: Server(FedNovaStep(cfg.momentum))))
register(Method(
    "fedgma",
    "FedGMA (Tenison et al. 2023, Algorithm 1): mask M_j = 1[|sum_k sign(Delta_kj)|/m >= tau]; "
    "w^{t+1} = w^t - eta_g M * Delta^t.",
    ("P0", "C0", "S5"), ("server_lr", "gma_tau", "gma_variant"), _client(_sgd),
    lambda cfg: Server(GMAStep(cfg.server_lr, cfg.gma_tau, cfg.gma_variant))))
register(Method(
    "fedavgm+asam",
    "FedAvgM with ASAM local steps (Caldarola et al. 2022, Table 6): server momentum "
    "v <- beta v + Delta^t, w <- w - eta_g v.",
    ("P2", "C0", "S2"), ("rho", "eta", *SERVER_SGD_FIELDS), _client(_asam),
    lambda cfg: Server(PseudoGradientStep(ServerSGD(lr=cfg.server_lr, momentum=cfg.server_momentum))),
    grad_evals_per_step=2))
