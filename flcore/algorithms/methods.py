"""Named methods as short recipes of parts (docs/algorithms.md 7.2).

A :class:`Method` names its parts and its communication; ``build_client``,
``build_server`` and ``build_schedule`` turn a resolved config into the part objects the
engine runs.  Adding a method is adding a recipe: the
baselines and FedSAM/FedASAM are :data:`RECIPES` below, other families are the
``RECIPES`` of the ``recipes_*.py`` modules; :mod:`flcore.algorithms.registry` registers
them all, in one order.  What a recipe reads and costs is not written beside it: its
hyper-parameters (the config fields its build reads, which name its runs) and its gradient
evaluations per local step are found by building it
(:mod:`flcore.config.method_reads`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from flcore.algorithms.local import LocalUpdate
from flcore.algorithms.perturbation import ASAMPerturbation, NoPerturbation, SAMPerturbation
from flcore.algorithms.schedules import ConstantLR, ExponentialLR
from flcore.algorithms.server import PseudoGradientStep, Server, ServerAdaptive, ServerSGD
from flcore.algorithms.state_catalog import declared_meanings, describe_client_state, describe_server_state
from flcore.flat import FlatModel


@dataclass(frozen=True)
class Method:
    """A named method: its parts and communication per round.

    ``client(cfg, flat) -> LocalUpdate``, ``server(cfg) -> Server`` and
    ``schedule(cfg) -> lr schedule`` build the runnable parts.  ``uploads_per_round`` and
    ``downloads_per_round`` count model-sized vectors per participating client (rule R7).
    """

    name: str
    summary: str
    parts: tuple[str, ...]  # ids of docs/algorithms.md 7.1
    client: Callable
    server: Callable
    schedule: Callable = field(default=lambda cfg: default_schedule(cfg))
    uploads_per_round: int = 1
    downloads_per_round: int = 1

    def build_client(self, cfg, flat) -> LocalUpdate:
        return self.client(cfg, flat)

    def build_server(self, cfg) -> Server:
        return self.server(cfg)

    def build_schedule(self, cfg):
        return self.schedule(cfg)

    def client_state(self, cfg) -> list[dict]:
        """The per-client state this method keeps across rounds under ``cfg`` (a resolved
        config of this method): ``[{name, shape, init, meaning}]`` (tables of one row per
        client; ``P`` parameters, ``N`` clients)."""
        client = self.build_client(cfg, probe_flat())
        return describe_client_state(client.client_state_spec(), declared_meanings(client.parts))

    def server_state(self, cfg) -> list[dict]:
        """The server state this method keeps across rounds under ``cfg``: ``[{name, shape,
        meaning}]``, named by dotted paths as :class:`flcore.RoundResult` names them."""
        return describe_server_state(self.build_server(cfg))


def built_part_ids(client: LocalUpdate, server: Server) -> tuple[str, ...]:
    """The part ids (docs/algorithms.md 7.1) that a method's built parts carry, in recipe
    order: the client's perturbation and corrections, then the server's step, auxiliary
    parts and averaging.  Parts that need no id of their own (the plain pseudo-gradient
    step, the server side of a client part) carry none."""
    parts = (*client.parts, server.step, *server.parts, server.averaging)
    return tuple(dict.fromkeys(part.part_id for part in parts if getattr(part, "part_id", None)))


def probe_flat() -> FlatModel:
    """A two-parameter-tensor linear model, to build a method's parts without data."""
    return FlatModel(torch.nn.Linear(3, 2))


def default_schedule(cfg):
    """L0 constant, or L2 exponential when ``lr_decay`` < 1 (docs/algorithms.md 6.1)."""
    return ExponentialLR(cfg.lr, cfg.lr_decay) if cfg.lr_decay != 1.0 else ConstantLR(cfg.lr)


# ----------------------------------------------------------------------------- builders

def local_update(cfg, perturbation, corrections=()) -> LocalUpdate:
    """The client SGD of a config around the given parts."""
    return LocalUpdate(perturbation=perturbation, corrections=tuple(corrections),
                       momentum=cfg.momentum, weight_decay=cfg.weight_decay,
                       clip_norm=getattr(cfg, "clip_norm", None))


def sgd_client(cfg, flat):
    return local_update(cfg, NoPerturbation())


def sam_client(cfg, flat):
    return local_update(cfg, SAMPerturbation(rho=cfg.rho))


def asam_client(cfg, flat):
    return local_update(cfg, ASAMPerturbation(rho=cfg.rho, eta=cfg.eta, weight_mask=flat.weight_mask))


def average_step() -> PseudoGradientStep:
    """S0 with server lr 1: ``w - (start - sum_k p_k w_k)``, FedAvg's sample-weighted average."""
    return PseudoGradientStep(ServerSGD(lr=1.0, momentum=0.0))


def average_server(cfg) -> Server:
    """S0 with server lr 1: FedAvg's sample-weighted average."""
    return Server(average_step())


def sgd_server(cfg) -> Server:
    return Server(PseudoGradientStep(ServerSGD(lr=cfg.server_lr, momentum=cfg.server_momentum)))


def adaptive_server(kind: str):
    def build(cfg) -> Server:
        return Server(PseudoGradientStep(ServerAdaptive(
            kind=kind, lr=cfg.server_lr, beta1=cfg.server_beta1, beta2=cfg.server_beta2,
            tau=cfg.server_tau, bias_correction=cfg.bias_correction)))
    return build


# ----------------------------------------------------------------------------- recipes

#: FedAvg, the FedOpt family and FedSAM/FedASAM.
RECIPES: list[Method] = []

_SERVER_OPTIMIZERS = [
    ("fedavg", "FedAvg (McMahan et al. 2017): local SGD, sample-weighted model average.",
     ("P0", "C0", "S0"), average_server),
    ("fedopt", "FedOpt with server SGD (Reddi et al. 2021): server lr and momentum on the pseudo-gradient.",
     ("P0", "C0", "S0/S2"), sgd_server),
    ("fedavgm", "FedAvgM (Hsu et al. 2019): server momentum on the pseudo-gradient.", ("P0", "C0", "S2"), sgd_server),
    *((f"fed{kind}", f"{cite} (Reddi et al. 2021): adaptive server optimizer on the pseudo-gradient.",
       ("P0", "C0", "S3"), adaptive_server(kind))
      for kind, cite in (("adam", "FedAdam"), ("adagrad", "FedAdagrad"), ("yogi", "FedYogi"))),
]
_LOCAL_SAM = [
    ("fedsam", "FedSAM (Caldarola et al. 2022; Qu et al. 2022): SAM local steps, FedAvg server.",
     ("P1", "C0", "S0"), sam_client),
    ("fedasam", "FedASAM (Caldarola et al. 2022): ASAM local steps, FedAvg server.", ("P2", "C0", "S0"), asam_client),
]
RECIPES.extend(Method(name, summary, parts, sgd_client, server) for name, summary, parts, server in _SERVER_OPTIMIZERS)
RECIPES.extend(Method(name, summary, parts, client, average_server) for name, summary, parts, client in _LOCAL_SAM)
