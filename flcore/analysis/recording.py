"""What a run records during training for the analysis pages: named probes and snapshots.

Two config fields (:class:`flcore.ExperimentConfig`) turn recording on; both enter
the run id only when set, so a recorded run is a different run from the plain one:

- ``probes`` (names) and ``probe_every`` (rounds; 0 = at the evaluation rounds): after
  every ``probe_every``-th round each named probe is evaluated on the engine's
  ``sim_state`` (:data:`flcore.analysis.probes.STATE_KEYS`, plus ``server_state``,
  ``start``, ``w_prev``) and its value goes into the run's metrics log (a dict value as
  ``name.key``).
- ``snapshot_rounds``: at the end of each of these rounds the run saves the global model
  and the round's client models after local training, ``{"round", "w",
  "client_models", "client_ids"}``, to ``<run>/snapshots/round-<r>.pt`` (tensors only,
  read back with ``weights_only=True``).

A probe is made for one simulation by a *factory*, ``factory(sim) -> Probe`` (``sim``:
the engine's ``Simulation``, read for ``cfg``, ``flat``, ``data``, ``device``), kept in
the registry :mod:`flcore.config.probes` under its name.  The built-in probes are
registered here; a paper's package (``flcore.papers.*``) registers the probes only its
figures use (FedGF's adaptive ``c``, say) with :func:`register_probe`.  ``import flcore``
imports both, so a config naming a paper's probe is valid in any process.

Decision: recorded runs are trained alone, never batched with others
(:func:`flcore.sim.multi_run.group_key`): the probes read one simulation's state.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from flcore.analysis.probes import (
    Probe,
    ProbeCallback,
    client_eigenvalue_probe,
    delta_eps_probe,
    domain_accuracy_probe,
    feature_norm_probe,
    parameter_norm_probe,
)
from flcore.config.probes import PROBES, probe_names, register_probe
from flcore.store.atomic import atomic_torch_save

__all__ = ["PROBES", "SnapshotCallback", "load_snapshot", "probe_names", "recording_callbacks",
           "register_probe", "snapshot_path", "snapshot_rounds_of"]

SNAPSHOT_DIR = "snapshots"


# --------------------------------------------------------------------------- built-in probes

def _client_data(sim) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Each client's training set as evaluation inputs (normalised, not augmented)."""
    x = sim.data.eval_train_inputs()
    return [(x[idx], sim.data.train_y[idx]) for idx in sim.data.client_indices]


def _feature_norms(sim) -> Probe:
    """FedSAM Fig. 7: mean L2 norm of the global model's logits on each client's data."""
    return feature_norm_probe(sim.flat, [x for x, _ in _client_data(sim)], name="feature_norms",
                              batch_size=sim.cfg.eval_batch_size)


def _client_lambda_max(sim) -> Probe:
    """FedSAM Figs. 4 and 16: top Hessian eigenvalue of each of the round's client models
    on its own data (20 power iterations); recorded with the round's client ids."""
    inner = client_eigenvalue_probe(sim.flat, _client_data(sim), name="client_lambda_max",
                                    batch_size=sim.cfg.eval_batch_size, seed=sim.cfg.seed)

    def fn(state):
        ids = torch.as_tensor(state["client_ids"]).reshape(-1).tolist()
        return {"values": inner.fn(state), "clients": [int(i) for i in ids]}
    return Probe("client_lambda_max", fn, inner.requires)


register_probe("param_norm", lambda sim: parameter_norm_probe("param_norm"))
def _delta_eps(sim) -> Probe:
    """FedGloSS Fig. 4: the server perturbation's approximation error; None on the first
    round (there is no previous pseudo-gradient yet)."""
    inner = delta_eps_probe(sim.cfg.gloss_rho_server, "delta_eps")
    return Probe("delta_eps", lambda state: inner.fn(state) if "prev_pseudo_grad" in state else None,
                 ("pseudo_grad",))


def _domain_accuracy(sim) -> Probe:
    """FedIMA Table I (Digit-Five, PACS): the evaluated global model's test accuracy on each
    domain (``domain_accuracy.<domain>``) and their mean (``domain_accuracy.mean``)."""
    data = sim.data
    if data.test_domain is None:
        raise ValueError(f"probe 'domain_accuracy' needs a multi-domain data set; {sim.cfg.dataset} has no domains")
    return domain_accuracy_probe(sim.flat, data.test_x, data.test_y, data.test_domain, data.domain_names,
                                 eval_params=sim.server.eval_params, batch_size=sim.cfg.eval_batch_size)


register_probe("delta_eps", _delta_eps)
register_probe("domain_accuracy", _domain_accuracy)
register_probe("feature_norms", _feature_norms)
register_probe("client_lambda_max", _client_lambda_max)


# --------------------------------------------------------------------------- snapshots

def snapshot_path(run_dir: str | Path, round: int) -> Path:
    return Path(run_dir) / SNAPSHOT_DIR / f"round-{int(round):06d}.pt"


class SnapshotCallback:
    """Saves the global and client models of the rounds in ``rounds`` into ``run``."""

    def __init__(self, run, rounds) -> None:
        self.run = run
        self.rounds = frozenset(int(r) for r in rounds)

    def on_round_end(self, round: int, sim_state) -> dict:
        if round in self.rounds and self.run is not None:
            path = snapshot_path(self.run.path, round)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_torch_save({"round": torch.tensor(round),
                               "w": sim_state["w"].detach().cpu(),
                               "client_models": sim_state["client_models"].detach().cpu(),
                               "client_ids": torch.as_tensor(sim_state["client_ids"]).detach().cpu()}, path)
        return {}


def snapshot_rounds_of(run_dir: str | Path) -> list[int]:
    """The rounds a run saved snapshots of, in order."""
    folder = Path(run_dir) / SNAPSHOT_DIR
    if not folder.is_dir():
        return []
    return sorted(int(p.stem.split("-", 1)[1]) for p in folder.glob("round-*.pt"))


def load_snapshot(run_dir: str | Path, round: int, map_location: Any = "cpu") -> dict[str, Any]:
    """``{"round": int, "w": [P], "client_models": [K, P], "client_ids": [K]}`` of ``round``."""
    path = snapshot_path(run_dir, round)
    if not path.is_file():
        have = snapshot_rounds_of(run_dir)
        raise FileNotFoundError(f"{path}: no snapshot of round {round}; this run has "
                                + (", ".join(map(str, have)) if have else "none") +
                                " (set snapshot_rounds in the run's config)")
    data = torch.load(path, map_location=map_location, weights_only=True)
    data["round"] = int(data["round"])
    return data


# --------------------------------------------------------------------------- the callbacks

def recording_callbacks(sim) -> tuple:
    """The callbacks ``sim.cfg`` asks for (none when it records nothing)."""
    cfg = sim.cfg
    callbacks: list = []
    if cfg.probes:
        probes = []
        for name in cfg.probes:
            if name not in PROBES:
                raise ValueError(f"probes: {name!r} is not registered; registered: {', '.join(probe_names())}")
            probes.append(PROBES[name](sim))
        callbacks.append(ProbeCallback(probes, every=cfg.probe_every or cfg.eval_every))
    if cfg.snapshot_rounds:
        callbacks.append(SnapshotCallback(sim.run, cfg.snapshot_rounds))
    return tuple(callbacks)
