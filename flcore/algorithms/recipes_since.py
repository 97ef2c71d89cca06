"""Flat-minima methods published after the five papers, as recipes of parts
(docs/algorithms.md 7.2).

Registered by :mod:`flcore.algorithms.registry` after the papers' own methods and their
wrappers.  Communication counts model-sized vectors per participating client (rule R7).

WIMA (Caldarola, Caputo & Ciccone, ICCV Workshops 2023, arXiv 2310.01366): "WIMA aggregates
global models from different rounds using a window-based approach [...] applied from the
initial stages of training", with "no additional communication or client-side computation
overhead" (abstract); FedGloSS (Sec. 2) describes it as "a window-based average of global
models across rounds", agnostic to the underlying optimizer.  No official code is public and
the paper's full text was not available here, so the update rule is the one those sentences
state, written as parts that already exist:

- the server aggregates as FedAvg, ``w_bar^t = sum_k p_k w_k^t`` (S0);
- the global model sent next round is the uniform mean of the last ``W`` aggregates,
  ``w^{t+1} = (1/min(t+1, W)) sum_{j=0}^{min(t+1, W)-1} w_bar^{t-j}`` (A2 with
  ``t_IMA = 0`` and the partial window averaged: "from the initial stages");
- clients train as in FedAvg (no client-side change; the config's lr schedule, L0).

Decisions (said on the Known differences page): the window average is the model sent to the
clients (the reading of "aggregates global models", as IMA does), not an evaluation-only
average as server-side SWA; the window holds the FedAvg aggregates; its size ``W`` is the
``ima_window`` field (the same quantity as IMA's ``P``).

FedSWA (Liu et al., ICML 2025, arXiv 2507.20016; official code ``junkangLiu0/FedSWA``):
stochastic weight averaging for federated learning with a cyclic client lr and an
exponential-moving-average server (Sec. 3):

- client ``k``, local step ``j = 0..K-1`` of round ``t``:
  ``y <- y - eta_j (g(y) + wd y)``, ``eta_j = eta^t ((1 - j/K) + rho j/K)``: "the learning
  rate decays linearly from eta_l to rho eta_l" within every round and restarts the next
  (part :class:`flcore.algorithms.round_lr.LinearInRoundLR`; ``rho`` = ``fedswa_rho``);
- server: ``x^{t+1} = (1 - eta_g) x^t + eta_g sum_k p_k y_k = x^t - eta_g Delta^t``, the
  moving average of the clients' models with weight ``eta_g`` = ``server_lr`` (S0/S2
  without momentum).  The code's server is this with its global lr ``lg`` (default 1).

Where the official code differs (Known differences page): it doubles the client lr
(``SGD(lr=2 eta_j)``; ``fedswa_variant = "code"``), hard-codes ``rho = 0`` (set
``fedswa_rho = 0``, the default here, the paper's value not being available), clips the
gradient to norm 10 and uses weight decay 1e-3 (``clip_norm``, ``weight_decay``) and averages
the participants uniformly (flcore weights them by sample count, rule R2: equal for equal
client sizes).

FedMoSWA (the same paper): FedSWA with momentum-based stochastic control variates, "designed
to better align local and global models".  The paper's equations were not available here;
flcore implements the rule of the official client ``update_FedMoSWA`` (dispatched as
``FedSWAS`` in the repository's first ``main.py``) with its server:

- client step ``j``: ``y <- y - eta_j (g(y) + wd y + c - c_i)``, FedSWA's ``eta_j``;
- after ``K`` steps: ``c_i+ = c_i - c + (x - y_K) / (K eta_bar)``, ``eta_bar = (1 + rho) eta^t / 2``
  (the mean of the first and last lr, as the code); upload ``y_K`` and ``c_i+ - c``;
- server: ``c <- c + gamma mean_S (c_i+ - c)`` (``gamma`` = ``fedmoswa_gamma``, the code's 0.1),
  ``x^{t+1} = x^t - eta_g Delta^t`` (parts :mod:`flcore.algorithms.control_momentum`).

``fedmoswa_variant = "code"``: the code's first round sets ``c = mean_S (c_i+ - c)``.  The
code also clips the gradient before adding ``c - c_i`` (flcore clips the corrected
gradient; equal without a clip) and averages uniformly.  The repository's current
``main_FedSWA.py`` dispatches ``MoFedSWA`` to a SCAFFOLD variant without the lr decay
(``update_scafplus``, ``gamma`` = 0.4); that is not implemented.

FedNSAM (Liu, Shang, Tian, Liu & Liu 2026, arXiv 2602.23827; official code
``junkangLiu0/FedNSAM``): "introducing global Nesterov momentum into the local update";
"FedNSAM uses the global Nesterov momentum as the direction of local estimation of client
global perturbations and extrapolation" (abstract).  The paper's equations were not
available here; flcore implements the rule its official code runs (``update_NSAM``):

- server broadcast: clients start from the extrapolated ``x^t + gamma m^t``;
- client: SAM local steps (``rho``) from there, ``y <- y - eta (g(y + rho unit(g(y))) + wd y)``;
- server: ``Delta^t = sum_k p_k y_k - (x^t + gamma m^t)``, ``m^{t+1} = gamma m^t + Delta^t``,
  ``x^{t+1} = x^t + m^{t+1}`` (the global Nesterov momentum; part
  :class:`flcore.algorithms.server_nesterov.NesterovExtrapolation`, ``gamma`` =
  ``fednsam_gamma``, the code's 0.85).

``fednsam_variant = "code"``: the official server as written, ``m^{t+1} = (1 + gamma)
Delta^t`` (its loop overwrites the momentum with the new update; ``Delta^0`` in round 0).  The
code also hard-codes ``rho = 0.05``, clips the SAM gradient to norm 10 and uses weight decay
1e-3 (``rho``, ``clip_norm``, ``weight_decay``) and averages uniformly.  The use of the
momentum as the perturbation direction that the abstract mentions is not in the official
client (it perturbs along the local gradient) and is not implemented.
"""
from __future__ import annotations

from flcore.algorithms.averaging import add_ima
from flcore.algorithms.control_momentum import MomentumControlServer, MomentumControlVariate
from flcore.algorithms.methods import Method, average_server, average_step, local_update, sam_client, sgd_client
from flcore.algorithms.perturbation import NoPerturbation
from flcore.algorithms.round_lr import LinearInRoundLR
from flcore.algorithms.server import PseudoGradientStep, Server, ServerSGD
from flcore.algorithms.server_nesterov import NesterovExtrapolation

#: The newer methods, in registration order.
RECIPES: list[Method] = []
_add = RECIPES.append


# ----------------------------------------------------------------------------- WIMA

def _wima_server(cfg) -> Server:
    """FedAvg whose next global model is the mean of its last ``W`` aggregates from round 0."""
    return add_ima(average_server(cfg), cfg.ima_window, start=0, partial="average")


_add(Method(
    "wima",
    "WIMA (Caldarola, Caputo & Ciccone 2023, window-based model averaging): FedAvg clients; "
    "w_bar^t = sum_k p_k w_k; from round 0 the global model sent to the clients is "
    "w^{t+1} = mean of the last min(t+1, W) aggregates w_bar (W = ima_window).",
    ("P0", "C0", "S0", "A2", "L0"), sgd_client, _wima_server))


# ----------------------------------------------------------------------------- FedSWA

#: ``fedswa_variant`` -> the factor on the client lr (the official code's ``SGD(lr=lr*2)``).
FEDSWA_LR_SCALE = {"paper": 1.0, "code": 2.0}


def _fedswa_client(cfg, flat):
    """Plain SGD whose lr decays linearly within the round from eta^t to rho eta^t."""
    schedule = LinearInRoundLR(cfg.fedswa_rho, FEDSWA_LR_SCALE[cfg.fedswa_variant])
    return local_update(cfg, NoPerturbation(), (schedule,))


def _fedswa_server(cfg) -> Server:
    """x^{t+1} = x^t - eta_g Delta^t: the moving average (1 - eta_g) x^t + eta_g sum_k p_k y_k."""
    return Server(PseudoGradientStep(ServerSGD(lr=cfg.server_lr)))


_add(Method(
    "fedswa",
    "FedSWA (Liu et al. 2025, Sec. 3): client SGD with the lr decaying linearly within every round, "
    "eta_j = eta^t ((1 - j/K) + rho j/K), restarting each round (rho = fedswa_rho); server moving average "
    "x^{t+1} = (1 - eta_g) x^t + eta_g sum_k p_k y_k (eta_g = server_lr).",
    ("P0", "C0", "S0/S2", "L4"), _fedswa_client, _fedswa_server))


# ----------------------------------------------------------------------------- FedMoSWA

def _fedmoswa_client(cfg, flat):
    """FedSWA's decaying lr (no doubling) around the momentum control-variate correction."""
    rho = cfg.fedswa_rho
    return local_update(cfg, NoPerturbation(), (LinearInRoundLR(rho), MomentumControlVariate((1 + rho) / 2)))


def _fedmoswa_server(cfg) -> Server:
    control = MomentumControlServer(cfg.fedmoswa_gamma, first_round_mean=cfg.fedmoswa_variant == "code")
    return Server(PseudoGradientStep(ServerSGD(lr=cfg.server_lr)), parts=(control,))


_add(Method(
    "fedmoswa",
    "FedMoSWA (Liu et al. 2025, the official client's rule): FedSWA's in-round lr decay with control "
    "variates, y <- y - eta_j (g + c - c_i); c_i+ = c_i - c + (x - y_K)/(K eta_bar), eta_bar = (1 + rho) eta/2; "
    "server c <- c + gamma mean_S (c_i+ - c) (gamma = fedmoswa_gamma), x^{t+1} = x^t - eta_g Delta^t.",
    ("P0", "C8", "S0/S2", "S10", "L4"), _fedmoswa_client, _fedmoswa_server, uploads_per_round=2, downloads_per_round=2))


# ----------------------------------------------------------------------------- FedNSAM

def _fednsam_server(cfg) -> Server:
    """Clients start at x^t + gamma m^t; m^{t+1} = gamma m^t + Delta^t; x^{t+1} = x^t + m^{t+1}."""
    part = NesterovExtrapolation(cfg.fednsam_gamma, accumulate=cfg.fednsam_variant == "paper")
    return Server(average_step(), parts=(part,))


_add(Method(
    "fednsam",
    "FedNSAM (Liu et al. 2026, the official code's rule): clients start from the extrapolated "
    "x^t + gamma m^t and run SAM steps; Delta^t = sum_k p_k y_k - (x^t + gamma m^t); "
    "m^{t+1} = gamma m^t + Delta^t; x^{t+1} = x^t + m^{t+1} (gamma = fednsam_gamma).",
    ("P1", "C0", "S0", "S9", "L0"), sam_client, _fednsam_server))
