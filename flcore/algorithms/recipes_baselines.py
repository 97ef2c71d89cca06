"""The FL baselines of the five papers as recipes of parts (algorithms.md 3 and 7.2).

Each method is a choice of a perturbation (P), corrections (C) and a server step (S) with
auxiliary server parts; communication counts model-sized vectors per participating client
(rule R7).  Imported at the end of :mod:`flcore.algorithms.methods`.
"""
from __future__ import annotations

from .corrections import DynDual, Prox, ScaffoldCorrection
from .methods import Method, local_update, register
from .perturbation import ASAMPerturbation, NoPerturbation, SAMPerturbation
from .server import PseudoGradientStep, Server, ServerSGD
from .server_parts import DynServerCorrection, ScaffoldServer

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
