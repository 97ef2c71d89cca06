"""The FL baselines of the five papers as recipes of parts (docs/algorithms.md 3, 7.2).

Each method is a perturbation (P), corrections (C) and a server step (S) with auxiliary
server parts; ``uploads_per_round`` / ``downloads_per_round`` count model-sized vectors
per participating client (rule R7).  The X+SAM / X+ASAM combinations of the FedSAM
paper's Table 6 (docs/algorithms.md 3.17) replace the local gradient with the SAM / ASAM one
and add the base method's corrections at the perturbed point.

Registered by :mod:`flcore.algorithms.registry` after those of
:mod:`flcore.algorithms.methods`.  Two options of
docs/algorithms.md are read with ``getattr`` until the config has their fields:
``mofedsam_server_step`` (3.12, decision 2) and ``fedgamma_variant`` (3.13, decision 1),
both ``"paper"`` (default) or ``"fedgf_code"``.
"""
from __future__ import annotations

from flcore.algorithms.corrections import (
    AdaBestBias,
    DynDual,
    GlobalMomentum,
    GradientMixing,
    Prox,
    ScaffoldCorrection,
    SpeedProx,
)
from flcore.algorithms.feature_anchors import FeatureAnchorClient, FeatureAnchorServer
from flcore.algorithms.hyperparameters import Hyperparameter, declare
from flcore.algorithms.methods import FEDAVGM_DEFAULTS, Method, average_server, average_step, local_update, sgd_server
from flcore.algorithms.perturbation import ASAMPerturbation, NoPerturbation, SAMPerturbation
from flcore.algorithms.perturbation_smoo import SMOOPerturbation
from flcore.algorithms.server import PseudoGradientStep, Server, ServerSGD
from flcore.algorithms.server_parts import (
    AdaBestStep,
    DynServerCorrection,
    FedNovaStep,
    GMAStep,
    MomentumBroadcast,
    ScaffoldServer,
    SMOOServer,
)

SMOO_BETA = Hyperparameter("smoo_beta", "float", 10.0,
                           "FedSMOO dynamic regulariser: coefficient 1/beta", low=0, low_open=True)
FEDSPEED_VARIANT = Hyperparameter.option(
    "fedspeed_variant", ("paper", "code"),
    "FedSpeed: paper, or code (FL-Simulator: SAM gradient, no mixing; duals of all clients)", added=True)
declare(SMOO_BETA, FEDSPEED_VARIANT)

#: The baselines' methods, in registration order.
RECIPES: list[Method] = []
_add = RECIPES.append

# ----------------------------------------------------------------------------- clients


def _sgd(cfg, flat):
    return NoPerturbation()


def _sam(cfg, flat):
    return SAMPerturbation(rho=cfg.rho)


def _asam(cfg, flat):
    return ASAMPerturbation(rho=cfg.rho, eta=cfg.eta, weight_mask=flat.weight_mask)


def _smoo(cfg, flat):
    return SMOOPerturbation(rho=cfg.rho, upload=cfg.smoo_variant)


#: name suffix -> perturbation builder
LOCAL = {"": _sgd, "+sam": _sam, "+asam": _asam}
_TABLE6 = " Local steps with {} (Caldarola et al. 2022, Table 6)."


def _client(perturbation, *corrections):
    """Client builder: the config's SGD around ``perturbation(cfg, flat)`` and the
    corrections ``correction(cfg)``, applied in order."""
    def build(cfg, flat):
        return local_update(cfg, perturbation(cfg, flat), [c(cfg) for c in corrections])
    return build


def _from_config(part, *fields, **keyword_fields):
    """Builder ``cfg -> part(cfg.<field>, ..., keyword=cfg.<field>)``: a part whose
    arguments are config fields as they are."""
    def build(cfg):
        return part(*(getattr(cfg, name) for name in fields),
                    **{keyword: getattr(cfg, name) for keyword, name in keyword_fields.items()})
    return build


_prox = _from_config(Prox, "mu")
_scaffold = _from_config(ScaffoldCorrection, "scaffold_correction")
_dyn = _from_config(DynDual, "feddyn_alpha", clip="dyn_clip")
_adabest = _from_config(AdaBestBias, "adabest_mu")
_momentum = _from_config(GlobalMomentum, "fedcm_alpha")
_speed_mixing = _from_config(GradientMixing, "fedspeed_alpha")
_speed_prox = _from_config(SpeedProx, "fedspeed_lambda", clip="dyn_clip")


def _smoo_dyn(cfg):
    return DynDual(1.0 / cfg.smoo_beta, clip=cfg.dyn_clip)


def _fedspeed_client(cfg, flat):
    """``fedspeed_variant="paper"``: Algorithm 1 (mixed gradient, x_hat upload);
    ``"code"``: FL-Simulator's client, the plain SAM gradient with the prox-correction
    (the dual term and 1/lambda weight decay), uploading its model."""
    if cfg.fedspeed_variant == "code":
        return local_update(cfg, _sam(cfg, flat),
                            [DynDual(1.0 / cfg.fedspeed_lambda, "fedspeed_ghat", clip=cfg.dyn_clip)])
    return local_update(cfg, _sam(cfg, flat), [_speed_mixing(cfg), _speed_prox(cfg)])


def _fedspeed_server(cfg):
    """``"paper"``: w^{t+1} = mean_{k in S} x_hat_k (the participants' duals);
    ``"code"``: FL-Simulator's w^{t+1} = mean_{k in S} w_k + mean over *all* N clients of
    h_k (h_k the sum of client k's past updates), i.e. the FedDyn server correction with
    alpha = 1/lambda, whose h is -alpha times the mean of every client's h_k."""
    if cfg.fedspeed_variant == "code":
        return Server(average_step(), parts=(DynServerCorrection(1.0 / cfg.fedspeed_lambda),))
    return Server(average_step())


# ----------------------------------------------------------------------------- servers

def _scaffold_server(cfg):
    return Server(PseudoGradientStep(ServerSGD(lr=cfg.server_lr)), parts=(ScaffoldServer(),))


def _fedgamma_server(cfg):
    variant = cfg.fedgamma_variant
    return Server(PseudoGradientStep(ServerSGD(lr=cfg.server_lr)), parts=(ScaffoldServer(variant),))


def _dyn_server(cfg):
    return Server(average_step(), parts=(DynServerCorrection(cfg.feddyn_alpha),))


def _smoo_server(cfg):
    return Server(average_step(), parts=(DynServerCorrection(1.0 / cfg.smoo_beta), SMOOServer(cfg.rho)))


def _smoo_noreg_server(cfg):
    return Server(average_step(), parts=(SMOOServer(cfg.rho),))


def _adabest_server(cfg):
    return Server(AdaBestStep(cfg.adabest_beta))


def _fedcm_server(cfg):
    return Server(average_step(), parts=(MomentumBroadcast(),))


def _mofedsam_server(cfg):
    return Server(average_step(), parts=(MomentumBroadcast(cfg.mofedsam_server_step),))


def _fednova_server(cfg):
    return Server(FedNovaStep(cfg.momentum))


def _fedgma_server(cfg):
    return Server(GMAStep(cfg.server_lr, cfg.gma_tau, cfg.gma_variant))


# ----------------------------------------------------------------------------- paper values

def _feddyn_clipping(dataset: str, alpha: float, scale: str) -> dict:
    """The FedSAM paper's "heavy gradient clipping" of FedDyn, at the paper scale (the value
    10 is assumed)."""
    return {"clip_norm": 10.0} if scale == "paper" else {}


def _fedgamma_radius(dataset: str, alpha: float, scale: str) -> dict:
    """FedGAMMA's rho: the FedGloSS paper's CNN values, the paper that runs FedGAMMA on it."""
    return {"rho": 0.01 if dataset == "cifar100" else 0.15}


# ----------------------------------------------------------------------------- recipes

for _suffix in ("", "+asam"):
    _local = LOCAL[_suffix]
    _note = _TABLE6.format("ASAM") if _suffix else ""
    _add(Method(
        f"fedprox{_suffix}",
        "FedProx (Li et al. 2020, Eq. 2): w <- w - lr (g + mu (w - w^t)); FedAvg server." + _note,
        _client(_local, _prox), average_server))
    _add(Method(
        f"scaffold{_suffix}",
        "SCAFFOLD (Karimireddy et al. 2020, Algorithm 1, option II): y <- y - lr (g - c_k + c); "
        "c_k+ = c_k - c + (w^t - y_K)/(K lr); w <- w + eta_g sum_k p_k dy_k; c <- c + sum_k dc_k / N." + _note,
        _client(_local, _scaffold), _scaffold_server))
    _add(Method(
        f"adabest{_suffix}",
        "AdaBest (Varno et al. 2022, Algorithm 1): w <- w - lr (g - h_k); h_k <- h_k/(t - t'_k) + mu (w^t - w_K); "
        "theta^t = mean_k w_k; w^{t+1} = theta^t - beta (theta^{t-1} - theta^t)." + _note,
        _client(_local, _adabest), _adabest_server))

for _suffix in ("", "+sam", "+asam"):
    _local = LOCAL[_suffix]
    _add(Method(
        f"feddyn{_suffix}",
        "FedDyn (Acar et al. 2021, Algorithm 1): w <- w - lr (g - lambda_k + alpha (w - w^t)); "
        "lambda_k <- lambda_k - alpha (w_K - w^t); h <- h - alpha/N sum_k (w_k - w^t); "
        "w^{t+1} = mean_k w_k - h/alpha." + (_TABLE6.format(_suffix[1:].upper()) if _suffix else ""),
        _client(_local, _dyn), _dyn_server, paper_values=_feddyn_clipping))

_add(Method(
    "fedavgm+asam",
    "FedAvgM (Hsu et al. 2019): v <- beta v + Delta^t; w <- w - eta_g v." + _TABLE6.format("ASAM"),
    _client(_asam), sgd_server, defaults=FEDAVGM_DEFAULTS))
_add(Method(
    "fedcm",
    "FedCM (Xu et al. 2021, Algorithm 1): w <- w - lr (alpha g + (1 - alpha) m^t) with the broadcast "
    "m^t = Delta^{t-1}/(K lr) (zero in round one); w^{t+1} = w^t - Delta^t.",
    _client(_sgd, _momentum), _fedcm_server))
_add(Method(
    "mofedsam",
    "MoFedSAM (Qu et al. 2022, Algorithm 1): FedCM with the SAM gradient, "
    "w <- w - lr (alpha g_SAM + (1 - alpha) m^t); w^{t+1} = w^t - Delta^t.",
    _client(_sam, _momentum), _mofedsam_server))
#: SCAFFOLD with SAM steps, and FedSMOO with and without its regulariser: (name, summary, client,
#: server, values).  FedSMOO: rho 0.1 and beta 10 (docs/algorithms.md 3.6).
_CONTROLLED_SAM = [
    ("fedgamma",
     "FedGAMMA (Dai et al. 2023, Algorithm 1): SCAFFOLD with SAM steps along the uncorrected local "
     "ascent, y <- y - lr (grad f_k(y + rho unit(g(y))) - c_k + c); SCAFFOLD server.",
     _client(_sam, _scaffold), _fedgamma_server, {"paper_values": _fedgamma_radius}),
    ("fedsmoo",
     "FedSMOO (Sun et al. 2023a, Algorithm 1): s_hat = rho unit(g - mu_k - s), mu_k <- mu_k + s_hat - s, "
     "descent at w + s_hat with the FedDyn regulariser of coefficient 1/beta; upload mu_k - s_hat_K; "
     "server s <- rho unit(sum_k (mu_k - s_hat_K)) and the FedDyn step.",
     _client(_smoo, _smoo_dyn), _smoo_server, {"defaults": {"rho": 0.1, "smoo_beta": 10.0}}),
    ("fedsmoo-noreg",
     "FedSMOO without the dynamic regulariser (as Lee & Yoon 2024 run it, footnote 3): "
     "P3 perturbation and global perturbation s, FedAvg server.",
     _client(_smoo), _smoo_noreg_server, {}),
]
RECIPES.extend(Method(name, summary, client, server, **values)
               for name, summary, client, server, values in _CONTROLLED_SAM)
_add(Method(
    "fedspeed",
    "FedSpeed (Sun et al. 2023b, Algorithm 1): g = (1 - alpha) g(w) + alpha g(w + rho unit(g(w))); "
    "w <- w - lr (g - ghat_k + (w - w^t)/lambda); ghat_k <- ghat_k - (w_K - w^t)/lambda; "
    "upload x_k = w_K - lambda ghat_k; w^{t+1} = mean_k x_k.",
    _fedspeed_client, _fedspeed_server))
_add(Method(
    "fednova",
    "FedNova (Wang et al. 2020, Eq. 6): tau_k SGD steps with client momentum rho; "
    "a_k = [tau_k - rho (1 - rho^tau_k)/(1 - rho)]/(1 - rho); "
    "w^{t+1} = w^t - (sum_k p_k a_k) sum_k p_k (w^t - w_k)/a_k.",
    _client(_sgd), _fednova_server))
_add(
    Method(
        "fedgma",
        "FedGMA (Tenison et al. 2023, Algorithm 1): A_j = |sum_k sign(Delta_kj)|/m, "
        "soft mask M_j = 1 if A_j >= tau else A_j; "
        "w^{t+1} = w^t - eta_g M * Delta^t.",
        _client(_sgd),
        _fedgma_server,
    )
)


def _fedfa_client(cfg, flat):
    epochs = 1 if cfg.local_steps is not None else cfg.local_epochs
    return local_update(cfg, NoPerturbation(), (FeatureAnchorClient(
        flat, cfg.fa_lambda, cfg.fa_momentum, epochs, calibrate_after=cfg.rounds // 4),))


def _fedfa_server(cfg):
    return Server(average_step(), parts=(FeatureAnchorServer(cfg.seed),))


_add(Method(
    "fedfa", "FedFA (Zhou, Zhang & Tsang 2023; the FedIMA paper's code): local CE plus "
    "lam (1/C) sum_c ||phi(x) - A_c||^2 / n_c toward the server's class anchors (from round 1), "
    "a classifier-calibration Adam step on the anchors after every step once t > T/4, EMA local "
    "anchors uploaded with the model; the server averages models (FMA) and anchors per class.",
    _fedfa_client, _fedfa_server))
