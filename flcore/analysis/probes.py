"""Training-time probes and an engine-agnostic callback that records them every k rounds.

Probe functions take the tensors they need, never the engine:

- :func:`perturbation_cosine` / :func:`perturbation_drift`: the FedLESAM paper's Fig. 2.
  ``delta = rho grad F(w)/|grad F(w)|`` is the true global perturbation (on the global
  data, :func:`global_perturbation`) and ``delta_i`` each client's perturbation
  (FedSAM: ``rho grad F_i/|grad F_i|``; FedLESAM: its Eq. 3 estimate).  The paper's PD
  formula was lost in extraction; decision: ``PD = (1/M) sum_i |delta - delta_i|_2``
  (``squared=True`` for the mean squared distance).  Since ``|delta| = |delta_i| = rho``,
  ``|delta - delta_i|^2 = 2 rho^2 (1 - cos)``, so we log the cosines as well.
- :func:`server_perturbation_error`: the FedGloSS paper's ``delta_eps^t`` (its Eq. 6, Fig.
  4): ``rho |Dt~^{t-1}/|Dt~^{t-1}| - D^t/|D^t||``, the distance between the server
  perturbation built from the previous round's pseudo-gradient and the one built from
  this round's true pseudo-gradient (needs the extra unperturbed client pass).
- :func:`parameter_norm`: ``|w^t|_2`` of the global model (FedGloSS Fig. 8).
- :func:`feature_norms`: the FedSAM paper's Fig. 7, the L2 norm of the global model's
  outputs on each client's data.  The paper says "output features (the classifier
  outputs)" and does not say how samples are aggregated; decision: the mean over the
  client's samples of the per-sample L2 norm of the logits (``kind="features"`` gives
  the penultimate features instead).
- :func:`client_top_eigenvalue`: the FedSAM paper's Figs. 4 and 16, the top Hessian
  eigenvalue of each client's model on its own data (power iteration, 20 iterations).

:class:`ProbeCallback` bundles named probes; the engine calls
``on_round_end(round, sim_state)`` after each round (``round``: rounds completed,
1-based) and records the returned dict (empty except every ``every`` rounds).
``sim_state`` is a plain dict of tensors; the keys the standard probes read are listed
in :data:`STATE_KEYS`.  A probe whose keys are missing raises a ``KeyError`` that names
them.  Returned tensors are converted to Python floats/lists so the dict can go straight
into the metrics log.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from flcore.analysis.evaluation import loss_and_grad, model_outputs
from flcore.analysis.hvp import DatasetHVP
from flcore.analysis.spectrum import power_iteration
from flcore.flat import FlatModel

__all__ = [
    "STATE_KEYS",
    "Probe",
    "ProbeCallback",
    "client_top_eigenvalue",
    "client_eigenvalue_probe",
    "accuracy_by_domain",
    "delta_eps_probe",
    "domain_accuracy_probe",
    "feature_norm_probe",
    "feature_norms",
    "global_perturbation",
    "parameter_norm",
    "parameter_norm_probe",
    "perturbation_cosine",
    "perturbation_drift",
    "perturbation_probe",
    "server_perturbation_error",
]

#: ``sim_state`` keys read by the standard probes.
STATE_KEYS = {
    "w": "global model after the round, [P]",
    "client_models": "the round's client models after local training, [K, P]",
    "client_ids": "ids of the round's clients, [K] (int)",
    "local_perturbations": "each client's perturbation delta_i, [K, P]",
    "global_perturbation": "the true global perturbation delta, [P]",
    "prev_pseudo_grad": "the previous round's (approximate) pseudo-gradient Dt~^{t-1}, [P]",
    "pseudo_grad": "this round's true pseudo-gradient D^t, [P]",
}


# --------------------------------------------------------------------------- functions

def _unit(v: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return v / v.norm(dim=dim, keepdim=True).clamp_min(1e-30)


def perturbation_cosine(local_eps: torch.Tensor, global_eps: torch.Tensor) -> torch.Tensor:
    """Cosine between each client's perturbation ``[K, P]`` and the global one ``[P]``: ``[K]``."""
    if local_eps.dim() == 1:
        local_eps = local_eps[None]
    return (_unit(local_eps.double()) @ _unit(global_eps.double())).cpu()


def perturbation_drift(local_eps: torch.Tensor, global_eps: torch.Tensor, squared: bool = False) -> float:
    """FedLESAM's PD: ``(1/M) sum_i |delta - delta_i|_2`` (``squared``: of the squares)."""
    if local_eps.dim() == 1:
        local_eps = local_eps[None]
    d = (local_eps.double() - global_eps.double()[None]).norm(dim=1)
    return float((d.pow(2) if squared else d).mean())


def server_perturbation_error(prev_pseudo_grad: torch.Tensor, pseudo_grad: torch.Tensor, rho: float) -> float:
    """FedGloSS's ``delta_eps = rho |a/|a| - b/|b||`` with ``a`` the previous round's and
    ``b`` this round's pseudo-gradient."""
    return float(rho * (_unit(prev_pseudo_grad.double()) - _unit(pseudo_grad.double())).norm())


def parameter_norm(w: torch.Tensor) -> float:
    """``|w|_2``."""
    return float(w.double().norm())


def global_perturbation(flat: FlatModel, w: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                        rho: float, batch_size: int = 1000) -> torch.Tensor:
    """``rho grad F(w)/|grad F(w)|`` with ``F`` the mean loss on ``(x, y)`` (SAM's step)."""
    _, g = loss_and_grad(flat, w, x, y, batch_size)
    return rho * g / g.norm().clamp_min(1e-30)


def feature_norms(flat: FlatModel, w: torch.Tensor, x_by_client: Sequence[torch.Tensor],
                  kind: str = "logits", batch_size: int = 1000) -> torch.Tensor:
    """Mean per-sample L2 norm of the model's outputs on each client's inputs: ``[K]``."""
    out = []
    for x in x_by_client:
        if x.shape[0] == 0:
            out.append(torch.tensor(float("nan"), dtype=torch.float64))
            continue
        out.append(model_outputs(flat, w, x, kind, batch_size).double().norm(dim=1).mean().cpu())
    return torch.stack(out)


def client_top_eigenvalue(flat: FlatModel, client_models, client_data, iters: int = 20,
                          tol: float = 1e-4, batch_size: int = 1000, seed=0) -> torch.Tensor:
    """Top Hessian eigenvalue of each client's model on its own data: ``[K]``.

    ``client_models``: ``[K, P]`` or a list; ``client_data``: ``K`` pairs ``(x_k, y_k)``.
    """
    models = list(client_models.unbind(0)) if isinstance(client_models, torch.Tensor) else list(client_models)
    if len(models) != len(client_data):
        raise ValueError(f"{len(models)} client models but {len(client_data)} datasets")
    values = []
    for w_k, (x_k, y_k) in zip(models, client_data):
        hvp = DatasetHVP(flat, w_k, x_k, y_k, batch_size=batch_size)
        values.append(float(power_iteration(hvp, k=1, iters=iters, tol=tol, seed=seed,
                                            return_vectors=False).eigenvalues[0]))
    return torch.tensor(values, dtype=torch.float64)


# --------------------------------------------------------------------------- callback

@dataclass
class Probe:
    """A named function of ``sim_state`` with the keys it reads.

    ``fn(sim_state) -> value`` returns a number, a tensor, or a dict of them (recorded
    as ``name.key``).
    """

    name: str
    fn: Callable[[Mapping[str, Any]], Any]
    requires: tuple[str, ...] = ()


def _jsonable(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        return value.item() if value.dim() == 0 else value.tolist()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


@dataclass
class ProbeCallback:
    """Runs ``probes`` every ``every`` rounds and returns their values as a flat dict."""

    probes: Sequence[Probe] = field(default_factory=list)
    every: int = 1

    def __post_init__(self):
        if self.every < 1:
            raise ValueError(f"every must be >= 1, got {self.every}")
        names = [p.name for p in self.probes]
        if len(set(names)) != len(names):
            raise ValueError(f"probe names must be unique, got {names}")

    @property
    def requires(self) -> set[str]:
        """Every ``sim_state`` key some probe reads (what the engine must provide)."""
        return {key for p in self.probes for key in p.requires}

    def should_run(self, round: int) -> bool:
        return round % self.every == 0

    def on_round_end(self, round: int, sim_state: Mapping[str, Any]) -> dict[str, Any]:
        if not self.should_run(round):
            return {}
        out: dict[str, Any] = {}
        for probe in self.probes:
            missing = [k for k in probe.requires if k not in sim_state]
            if missing:
                raise KeyError(f"probe {probe.name!r} needs sim_state keys {missing}")
            value = _jsonable(probe.fn(sim_state))
            if isinstance(value, dict):
                out.update({f"{probe.name}.{k}": v for k, v in value.items()})
            else:
                out[probe.name] = value
        return out


def parameter_norm_probe(name: str = "param_norm") -> Probe:
    return Probe(name, lambda s: parameter_norm(s["w"]), ("w",))


def perturbation_probe(name: str = "perturbation", squared: bool = False) -> Probe:
    """Records ``drift`` (PD), ``cosine`` (per client) and ``mean_cosine``."""
    def fn(s):
        cos = perturbation_cosine(s["local_perturbations"], s["global_perturbation"])
        return {"drift": perturbation_drift(s["local_perturbations"], s["global_perturbation"], squared),
                "cosine": cos, "mean_cosine": cos.mean()}
    return Probe(name, fn, ("local_perturbations", "global_perturbation"))


def delta_eps_probe(rho: float, name: str = "delta_eps") -> Probe:
    return Probe(name, lambda s: server_perturbation_error(s["prev_pseudo_grad"], s["pseudo_grad"], rho),
                 ("prev_pseudo_grad", "pseudo_grad"))


def accuracy_by_domain(correct: torch.Tensor, domain: torch.Tensor, names: Sequence[str]) -> dict[str, float]:
    """Top-1 accuracy on each domain's examples (``correct``: bool ``[N]``, ``domain``: int
    ``[N]`` indexing ``names``) and ``mean``, their unweighted mean over the domains that have
    examples: FedIMA's reported number on Digit-Five and PACS (Table I, "mean top-1 accuracy
    of all domains"), which does not weigh a domain by its size."""
    correct, domain = correct.reshape(-1).double(), domain.reshape(-1).long()
    counts = torch.bincount(domain, minlength=len(names)).double()
    hits = torch.zeros(len(names), dtype=torch.float64, device=correct.device).index_add_(0, domain, correct)
    out = {name: float(hits[d] / counts[d]) for d, name in enumerate(names) if counts[d] > 0}
    out["mean"] = sum(out.values()) / len(out)
    return out


def domain_accuracy_probe(flat: FlatModel, x: torch.Tensor, y: torch.Tensor, domain: torch.Tensor,
                          names: Sequence[str], eval_params: Callable | None = None,
                          name: str = "domain_accuracy", batch_size: int = 1000) -> Probe:
    """:func:`accuracy_by_domain` of the evaluated global model on ``(x, y)``.

    ``eval_params(w, server_state)`` gives the model a run evaluates (IMA's or SWA's average
    once it exists); without it the probe reads ``w``."""
    def fn(s):
        w = s["w"] if eval_params is None else eval_params(s["w"], s["server_state"])
        return accuracy_by_domain(flat.correct(w, x, y, batch_size), domain, names)
    return Probe(name, fn, ("w",) if eval_params is None else ("w", "server_state"))


def feature_norm_probe(flat: FlatModel, x_by_client: Sequence[torch.Tensor], kind: str = "logits",
                       name: str = "feature_norm", batch_size: int = 1000) -> Probe:
    """Feature norms of the global model ``w`` on fixed per-client inputs (all clients)."""
    return Probe(name, lambda s: feature_norms(flat, s["w"], x_by_client, kind, batch_size), ("w",))


def client_eigenvalue_probe(flat: FlatModel, data_by_client: Mapping[int, tuple] | Sequence[tuple],
                            iters: int = 20, name: str = "client_lambda_max",
                            batch_size: int = 1000, seed=0) -> Probe:
    """Top eigenvalue of each of the round's client models on its own data
    (``data_by_client[client_id] = (x, y)``)."""
    def fn(s):
        ids = [int(i) for i in torch.as_tensor(s["client_ids"]).reshape(-1).tolist()]
        data = [data_by_client[i] for i in ids]
        return client_top_eigenvalue(flat, s["client_models"], data, iters=iters,
                                     batch_size=batch_size, seed=seed)
    return Probe(name, fn, ("client_models", "client_ids"))
