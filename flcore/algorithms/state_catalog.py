"""Names, shapes and meanings of the state each method keeps across rounds.

Per-client state lives in the simulation as tables with one row per client (``[N, ...]``,
``N`` clients), indexed by client id; server state is a nested dict of tensors, named here
(and in :class:`flcore.RoundResult`) by dotted paths such as ``fedgf.c`` or
``step.opt.m``.  Shapes are written with ``P`` (the number of model parameters), ``N`` and
the sizes set by the config (windows).  ``flcore methods --json`` and
:meth:`flcore.algorithms.Method.client_state` / ``server_state`` read this module.
"""
from __future__ import annotations

from typing import Any

import torch

#: client-state name -> meaning (with the equation it implements)
CLIENT_STATE = {
    "moswa_c": "client control variate c_i+ = c_i - c + (x - y_K)/(K eta_bar) (FedMoSWA)",
    "scaffold_c": "client control variate c_k (SCAFFOLD, Karimireddy et al. 2020, Alg. 1 line 12, option II)",
    "adabest_h": "client bias estimate h_k (AdaBest, Varno et al. 2022, Alg. 1)",
    "adabest_round": "round of the client's previous participation, -1 before any (AdaBest's t'_k)",
    "dyn_dual": "dual lambda_k of the dynamic regulariser (FedDyn, Acar et al. 2021, Alg. 1 line 8; "
                "FedLESAM-D; FedSMOO's lambda_k; FedGloSS's sigma_k)",
    "smoo_mu": "perturbation dual mu_k (FedSMOO, Sun et al. 2023a, Alg. 1)",
    "fedspeed_ghat": "prox-correction g^_k (FedSpeed, Sun et al. 2023b, Alg. 1 line 11)",
    "lesam_old": "the global model the client last received, w_i^old (FedLESAM, Fan et al. 2024, Alg. 1)",
    "lesam_seen": "whether the client has participated before (FedLESAM: no perturbation on a first visit)",
    "samtilde_grad": "previous step's gradient g~_{i-1} (SAM~, Caldarola et al. 2025, Table 6)",
}

#: shape of a client table by its initialiser (engine.init_client_state)
CLIENT_SHAPES = {"zeros": "[N, P]", "model": "[N, P]", "flag": "[N] bool", "round": "[N] int64"}

#: server-state path (after the part's name) -> meaning
SERVER_STATE = {
    "step.delta": "the last round's pseudo-gradient Delta^t = start - sum_k p_k w_k (zeros before round 0)",
    "step.opt.velocity": "server momentum buffer v (FedAvgM/FedOpt: v <- beta v + Delta)",
    "step.opt.m": "first moment m of the adaptive server optimizer (Reddi et al. 2021, Alg. 2)",
    "step.opt.v": "second moment v of the adaptive server optimizer (Reddi et al. 2021, Alg. 2)",
    "step.opt.step": "number of server optimizer steps taken (bias correction)",
    "step.prev_mean": "previous round's client average theta^{t-1} (AdaBest, Varno et al. 2022, Alg. 1)",
    "step.window.buffer": "the last P aggregation targets, a ring buffer indexed by round mod P (IMA, Eq. 5)",
    "step.inner.delta": "the last round's pseudo-gradient of the step inside IMA's window",
    "step.inner.opt.velocity": "server momentum buffer of the step inside IMA's window",
    "step.inner.opt.m": "first moment of the adaptive server optimizer inside IMA's window",
    "step.inner.opt.v": "second moment of the adaptive server optimizer inside IMA's window",
    "step.inner.opt.step": "number of server optimizer steps inside IMA's window",
    "scaffold.c": "server control variate c (SCAFFOLD, Alg. 1 line 17)",
    "dyn.h": "server dual h of the dynamic regulariser (FedDyn, Acar et al. 2021, Alg. 1 line 11; "
             "FedGloSS's sigma)",
    "fedcm.m": "broadcast client momentum m^t, the previous round's mean per-step update (FedCM, MoFedSAM)",
    "smoo.s": "global perturbation s broadcast to the clients (FedSMOO, Sun et al. 2023a, Alg. 1)",
    "moswa.c": "server control variate c <- c + gamma mean_S (c_i+ - c) (FedMoSWA)",
    "nesterov.m": "global Nesterov momentum m^{t+1} = gamma m^t + Delta^t; clients start at x^t + gamma m^t (FedNSAM)",
    "wmsam.m": "server momentum m = mean_S (x - y_k)/(K eta), the clients' mean per-step update (FedWMSAM)",
    "wmsam.alpha": ("weight of the gradient against the momentum, alpha <- 0.99 alpha + 0.01 clip(mean cosine "
                    "score, 0.1, 0.9) (FedWMSAM)"),
    "gloss.direction": "previous pseudo-gradient Delta~^{t-1} measured at w~ (FedGloSS, Caldarola et al. 2025, Alg. 1)",
    "gloss_probe.direction": "the probe exchange's pseudo-gradient Delta^t (NaiveFedGloSS, Sec. 5.1.1)",
    "lesam_server.direction": "last global update w^{t-1} - w^t (FedLESAM, official code's estimate)",
    "fedgf.perturbation": "the global perturbation rho unit(w^{r-1} - w^r) (FedGF, Lee & Yoon 2024, Eq. 12)",
    "fedgf.indicators": "the last W divergence indicators 1[D^r > T_D] (FedGF, Eq. 15)",
    "fedgf.c": "blending weight c of the global and local perturbations (FedGF, Eq. 16)",
    "fedgf.distance": "the last divergence D^r = mean_i ||w^r - w_i|| (FedGF, Eq. 14)",
    "fedfa.anchors": "the class feature anchors [C, d] (FedFA, Zhou et al. 2023), set after the first round",
    "averaging.model": "SWA running average theta (Caldarola et al. 2022, Alg. 1, Eq. 8)",
    "averaging.count": "number of models in the SWA average",
    "averaging.active": "whether the SWA average exists yet (from t_s on it is the evaluated model)",
    "averaging.buffer": "the last P server outputs, a ring buffer (IMA around a non-pseudo-gradient step)",
}

#: server state created after the first round, by part name
_LAZY_SERVER_STATE = {"fedfa": {"fedfa.anchors": "[C, d]"}}


def _shape_text(shape: tuple, dtype, num_params: int, num_clients: int) -> str:
    dims = []
    for size in shape:
        dims.append("P" if size == num_params else "N" if size == num_clients else str(size))
    text = f"[{', '.join(dims)}]"
    kind = str(dtype).replace("torch.", "")
    return text if kind.startswith("float") else f"{text} {kind}"


def declared_meanings(parts) -> dict[str, str]:
    """The state meanings ``parts`` declare themselves (a part's ``state_meanings``: state name
    -> meaning), so that a part added later names its state where it is written."""
    meanings: dict[str, str] = {}
    for part in parts:
        meanings.update(getattr(part, "state_meanings", {}))
    return meanings


def describe_client_state(spec: dict[str, str], meanings: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """``[{name, shape, init, meaning}]`` for a client's ``client_state_spec()``; ``meanings``:
    those its parts declare (:func:`declared_meanings`), else this module's."""
    meanings = {**CLIENT_STATE, **(meanings or {})}
    return [{"name": name, "shape": CLIENT_SHAPES[init], "init": init, "meaning": meanings[name]}
            for name, init in spec.items()]


def describe_server_state(server, num_params: int = 7, num_clients: int = 11) -> list[dict[str, Any]]:
    """``[{name, shape, meaning}]`` for a built :class:`~flcore.algorithms.Server`, from
    its initial state on a probe vector of ``num_params`` parameters."""
    w = torch.zeros(num_params)
    rows = []
    meanings = {**SERVER_STATE, **declared_meanings(server.parts)}

    def walk(tree, prefix):
        for key, value in tree.items():
            name = f"{prefix}{key}"
            if isinstance(value, dict):
                walk(value, f"{name}.")
            else:
                rows.append({"name": name, "shape": _shape_text(tuple(value.shape), value.dtype, num_params,
                                                                 num_clients),
                             "meaning": meanings[name]})

    walk(server.init(w, num_clients), "")
    for part in server.parts:
        for name, shape in _LAZY_SERVER_STATE.get(getattr(part, "name", ""), {}).items():
            rows.append({"name": name, "shape": shape, "meaning": SERVER_STATE[name]})
    return rows
