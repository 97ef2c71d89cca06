"""Named methods as short recipes of parts (algorithms.md 7.2).

A :class:`Method` names its parts and the config fields (hyper-parameters) it reads;
``build_client`` and ``build_server`` turn a resolved config into the part objects the
engine runs.  Adding a method is adding a recipe here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .local import LocalUpdate
from .perturbation import ASAMPerturbation, NoPerturbation, SAMPerturbation
from .server import ServerAdaptive, ServerSGD


@dataclass(frozen=True)
class Method:
    name: str
    summary: str
    parts: tuple[str, ...]  # ids of algorithms.md 7.1
    hyperparameters: tuple[str, ...]  # config fields the method reads beyond the common ones
    perturbation: Callable  # (cfg, flat) -> perturbation part
    server: Callable  # cfg -> server optimizer
    uploads_per_round: int = 1
    downloads_per_round: int = 1

    def build_client(self, cfg, flat) -> LocalUpdate:
        return LocalUpdate(
            perturbation=self.perturbation(cfg, flat),
            momentum=cfg.momentum,
            weight_decay=cfg.weight_decay,
        )

    def build_server(self, cfg):
        return self.server(cfg)

    @property
    def grad_evals_per_step(self) -> int:
        return 2 if ("P1" in self.parts or "P2" in self.parts) else 1


def _no_perturbation(cfg, flat):
    return NoPerturbation()


def _sam(cfg, flat):
    return SAMPerturbation(rho=cfg.rho)


def _asam(cfg, flat):
    return ASAMPerturbation(rho=cfg.rho, eta=cfg.eta, weight_mask=flat.weight_mask)


def _server_sgd(cfg):
    return ServerSGD(lr=cfg.server_lr, momentum=cfg.server_momentum)


def _server_average(cfg):
    return ServerSGD(lr=1.0, momentum=0.0)


def _adaptive(kind):
    def build(cfg):
        return ServerAdaptive(kind=kind, lr=cfg.server_lr, beta1=cfg.server_beta1,
                              beta2=cfg.server_beta2, tau=cfg.server_tau,
                              bias_correction=cfg.bias_correction)
    return build


_SERVER_SGD_FIELDS = ("server_lr", "server_momentum")
_ADAPTIVE_FIELDS = ("server_lr", "server_beta1", "server_beta2", "server_tau", "bias_correction")

METHODS: dict[str, Method] = {}


def register(method: Method) -> Method:
    METHODS[method.name] = method
    return method


register(Method(
    "fedavg", "FedAvg (McMahan et al. 2017): local SGD, sample-weighted model average.",
    ("P0", "C0", "S0"), (), _no_perturbation, _server_average))
register(Method(
    "fedopt", "FedOpt with server SGD (Reddi et al. 2021): server lr and momentum on the pseudo-gradient.",
    ("P0", "C0", "S0/S2"), _SERVER_SGD_FIELDS, _no_perturbation, _server_sgd))
register(Method(
    "fedavgm", "FedAvgM (Hsu et al. 2019): server momentum on the pseudo-gradient.",
    ("P0", "C0", "S2"), _SERVER_SGD_FIELDS, _no_perturbation, _server_sgd))
for _kind, _cite in (("adam", "FedAdam"), ("adagrad", "FedAdagrad"), ("yogi", "FedYogi")):
    register(Method(
        f"fed{_kind}", f"{_cite} (Reddi et al. 2021): adaptive server optimizer on the pseudo-gradient.",
        ("P0", "C0", "S3"), _ADAPTIVE_FIELDS, _no_perturbation, _adaptive(_kind)))
register(Method(
    "fedsam", "FedSAM (Caldarola et al. 2022; Qu et al. 2022): SAM local steps, FedAvg server.",
    ("P1", "C0", "S0"), ("rho",), _sam, _server_average))
register(Method(
    "fedasam", "FedASAM (Caldarola et al. 2022): ASAM local steps, FedAvg server.",
    ("P2", "C0", "S0"), ("rho", "eta"), _asam, _server_average))

METHOD_NAMES = tuple(METHODS)


def get_method(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; allowed: {', '.join(METHOD_NAMES)}") from None
