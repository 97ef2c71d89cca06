"""Named methods as short recipes of parts (docs/algorithms.md 7.2).

A :class:`Method` composes parts; ``build_client``, ``build_server`` and
``build_schedule`` turn a resolved config into the part objects the engine runs.  The
baselines and FedSAM/FedASAM are :data:`RECIPES` below, other families are the
``RECIPES`` of the ``recipes_*.py`` modules; :mod:`flcore.algorithms.registry` registers
them all, in one order.  What a recipe reads and costs is not written beside it: its
hyper-parameters (the config fields its build reads, which name its runs), its gradient
evaluations per local step, its part ids and its traffic per round are found by building
it (:mod:`flcore.config.method_reads`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from flcore.algorithms.local import LocalUpdate
from flcore.algorithms.perturbation import ASAMPerturbation, NoPerturbation, SAMPerturbation
from flcore.algorithms.schedules import ConstantLR, ExponentialLR
from flcore.algorithms.server import PseudoGradientStep, Server, ServerAdaptive, ServerSGD
from flcore.algorithms.state_catalog import declared_meanings, describe_client_state, describe_server_state
from flcore.flat import FlatModel


@dataclass(frozen=True)
class Method:
    """A named method: the recipe that composes its parts.

    ``client(cfg, flat) -> LocalUpdate``, ``server(cfg) -> Server`` and
    ``schedule(cfg) -> lr schedule`` build the runnable parts.  ``defaults`` overrides the
    parts' declared defaults for this method whatever the data set (FedAvgM's server
    momentum 0.9); ``paper_values(dataset, alpha, scale) -> dict`` gives the values its
    own paper sets per data set (FedGloSS's radii), which win over those its parts'
    papers set (a part class's ``paper_values``).  ``pooled``: one client trains on the
    pooled data (the centralized baselines; the config's ``CENTRALIZED_PROTOCOL``).  Its part ids and traffic per
    round are not written here: they are read off the built parts
    (:func:`parts_of_built`, :func:`traffic_of_built`).
    """

    name: str
    summary: str
    client: Callable
    server: Callable
    schedule: Callable = field(default=lambda cfg: default_schedule(cfg))
    defaults: Mapping[str, Any] = field(default_factory=dict)
    paper_values: Callable[[str, float, str], dict] | None = None
    pooled: bool = False

    def build_client(self, cfg, flat) -> LocalUpdate:
        return self.client(cfg, flat)

    def build_server(self, cfg) -> Server:
        return self.server(cfg)

    def build_schedule(self, cfg):
        return self.schedule(cfg)

    def own_paper_values(self, dataset: str, alpha: float, scale: str) -> dict:
        return dict(self.paper_values(dataset, alpha, scale)) if self.paper_values else {}

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


def nested_parts(part) -> Iterator:
    """``part`` and every part inside it: tuple items and dataclass fields, recursively."""
    yield part
    children = part if isinstance(part, tuple) else (
        [getattr(part, f.name) for f in dataclasses.fields(part)]
        if dataclasses.is_dataclass(part) and not isinstance(part, type) else [])
    for child in children:
        if isinstance(child, tuple) or (dataclasses.is_dataclass(child) and not isinstance(child, type)):
            yield from nested_parts(child)


def built_parts(client: LocalUpdate, server: Server, schedule=None) -> list:
    """Every part of a built method, nested ones included, in recipe order: the client's
    perturbation and corrections, the server's step, auxiliary parts and averaging, the
    lr schedule."""
    roots = (*client.parts, server.step, *server.parts, server.averaging, schedule)
    return [part for root in roots if root is not None for part in nested_parts(root)]


#: The part families of docs/algorithms.md 7.1, in the catalog's order.
PART_FAMILIES = ("P", "C", "S", "A", "L")


def parts_of_built(client: LocalUpdate, server: Server, schedule=None) -> tuple[str, ...]:
    """The part ids (docs/algorithms.md 7.1) a built method carries, family by family
    (P, C, S, A, L; recipe order within a family), with ``C0`` when no part corrects the
    gradient."""
    ids = dict.fromkeys(i for part in built_parts(client, server, schedule) for i in getattr(part, "part_ids", ()))
    if not any(i.startswith("C") for i in ids):
        ids["C0"] = None
    return tuple(sorted(ids, key=lambda i: PART_FAMILIES.index(i[0])))


def traffic_of_built(client: LocalUpdate, server: Server) -> tuple[int, int]:
    """``(downloads, uploads)`` per participating client per round, in model-sized vectors
    (rule R7): the model each way, the vectors the parts declare (a server part's
    ``downloads``, a client part's ``uploads``), and one more each way for a probe pass
    (NaiveFedGloSS's first exchange)."""
    parts = built_parts(client, server)
    down = {name for part in parts for name in getattr(part, "downloads", ())}
    up = {name for part in parts for name in getattr(part, "uploads", ())}
    probe = int(server.needs_probe)
    return 1 + len(down) + probe, 1 + len(up) + probe


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

#: FedAvgM: beta = 0.9, server lr 1 (FedSAM paper, CIFAR).
FEDAVGM_DEFAULTS = {"server_lr": 1.0, "server_momentum": 0.9}
#: FedAdam/FedYogi: server lr 0.01, tau 1e-3, betas (0.9, 0.99) (FedIMA paper code);
#: FedAdagrad: beta1 = 0 as in the FedSAM paper's Table 13 setting.
_ADAPTIVE_DEFAULTS = {
    "adam": {"server_lr": 0.01, "server_beta1": 0.9, "server_beta2": 0.99, "server_tau": 1e-3},
    "adagrad": {"server_lr": 0.01, "server_beta1": 0.0, "server_beta2": 0.0, "server_tau": 1e-3},
    "yogi": {"server_lr": 0.01, "server_beta1": 0.9, "server_beta2": 0.99, "server_tau": 1e-3},
}

#: FedAvg, the FedOpt family and FedSAM/FedASAM.
RECIPES: list[Method] = [
    Method("fedavg", "FedAvg (McMahan et al. 2017): local SGD, sample-weighted model average.",
           sgd_client, average_server),
    Method("fedopt", "FedOpt with server SGD (Reddi et al. 2021): server lr and momentum on the pseudo-gradient.",
           sgd_client, sgd_server),
    Method("fedavgm", "FedAvgM (Hsu et al. 2019): server momentum on the pseudo-gradient.",
           sgd_client, sgd_server, defaults=FEDAVGM_DEFAULTS),
    *(Method(f"fed{kind}", f"{cite} (Reddi et al. 2021): adaptive server optimizer on the pseudo-gradient.",
             sgd_client, adaptive_server(kind), defaults=_ADAPTIVE_DEFAULTS[kind])
      for kind, cite in (("adam", "FedAdam"), ("adagrad", "FedAdagrad"), ("yogi", "FedYogi"))),
    Method("fedsam", "FedSAM (Caldarola et al. 2022; Qu et al. 2022): SAM local steps, FedAvg server.",
           sam_client, average_server),
    Method("fedasam", "FedASAM (Caldarola et al. 2022): ASAM local steps, FedAvg server.", asam_client, average_server),
]
