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

FedSOL (Lee, Jeong, Kim, Oh & Yun, CVPR 2024, arXiv 2308.12532; official code
``Lee-Gihun/FedSOL``): "FedSOL targets parameter regions where learning on the local
objective is minimally influenced by proximal weight perturbations" (abstract).  Each local
step perturbs the iterate along the gradient of the proximal objective ``L_p`` (the model's
tie to the received global model ``w^t``) and descends the local loss there:

- ``eps* = rho grad L_p(w; w^t) / ||grad L_p(w; w^t)||``, ``w <- w - eta (grad L_local(w + eps*)
  + wd w)`` (part :class:`flcore.algorithms.perturbation_proximal.ProximalSAMPerturbation`);
- ``L_p`` the official code's KL divergence from the global model's predictions to the local
  model's at temperature ``T`` (``fedsol_temperature``, the code's 3); the paper leaves
  ``L_p`` open ("robust to different proximal objectives");
- server: FedAvg (S0).

``fedsol_strength = "adaptive"``: the official ``fedsol_adaptive`` client, ``eps`` scaled
coordinate-wise by ``|w - w^t|`` normalised per parameter tensor along its first dimension.
The official SAM divides by ``||g|| + 1e-12`` (flcore's part: the same constant); at a
round's first step (``w = w^t``, ``grad L_p = 0``) it normalises rounding noise into a step of
length rho, where flcore's ``eps`` is zero (Known differences page).  Its configurations use
``rho = 1`` with SGD momentum 0.9 and weight decay 1e-5 (``rho``, ``momentum``,
``weight_decay``).

FedWMSAM (Li, Huang et al., NeurIPS 2025, arXiv 2511.22080; official code
``Huang-Yongzhi/NeurlPS_FedWMSAM``): a momentum-guided perturbation (one gradient per step)
and a cosine-similarity weight between the gradient and the server momentum.  The paper's
equations were not available here; flcore implements the rule the official client and
server state (parts :mod:`flcore.algorithms.momentum_sam` with SCAFFOLD's C2):

- client: ``m_i = m + alpha/(1 - alpha)(c - c_i)``; step ``j``: ``d_j = x + j m_i - y_j``,
  ``eps_j = -rho d_j/(||d_j|| + 1e-7)``, ``y <- y - eta (clip(alpha g(y + eps_j) + (1 - alpha) m_i) + wd y)``;
- server: ``x^{t+1} = x^t + eta_g mean_k (y_k - x^t)``; SCAFFOLD's ``c``, ``c_i``;
  ``alpha <- 0.99 alpha + 0.01 clip(mean_S (cos(y_k - x^t, m) + 1), 0.1, 0.9)``;
  ``m <- mean_S (x^t - y_k)/(K eta)``; ``alpha`` starts at ``fedwmsam_alpha`` (the code's 0.1).

``fedwmsam_variant = "code"``: the perturbation as the code computes it (each parameter tensor
shifted by one coordinate of ``d``, normalised by the sum of those coordinates' magnitudes)
and ``m`` multiplied by ``lr_decay``.  The code also clips to norm 10, uses weight decay 1e-3
and averages uniformly (``clip_norm``, ``weight_decay``; flcore weights by sample count).
Communication is counted as the code's: the model and ``m_i`` down, the model up (its server
keeps every ``c_i``; flcore's clients keep their own, the same numbers).
"""
from __future__ import annotations

from flcore.algorithms.averaging import add_ima
from flcore.algorithms.control_momentum import MomentumControlServer, MomentumControlVariate
from flcore.algorithms.corrections import ScaffoldCorrection
from flcore.algorithms.hyperparameters import Hyperparameter, declare
from flcore.algorithms.methods import Method, average_server, average_step, local_update, sam_client, sgd_client
from flcore.algorithms.momentum_sam import AdaptiveMomentumMix, MomentumGuidedPerturbation, WeightedMomentumServer
from flcore.algorithms.perturbation import NoPerturbation
from flcore.algorithms.perturbation_proximal import ProximalSAMPerturbation
from flcore.algorithms.round_lr import LinearInRoundLR
from flcore.algorithms.server import PseudoGradientStep, Server, ServerSGD
from flcore.algorithms.server_nesterov import NesterovExtrapolation
from flcore.algorithms.server_parts import ScaffoldServer
from flcore.algorithms.trajectory import TrajectoryDistillation, TrajectoryDual, TrajectoryServer

FEDSWA_VARIANT = Hyperparameter.option("fedswa_variant", ("paper", "code"),
                                       "FedSWA: paper, or code (junkangLiu0/FedSWA: the client lr doubled)")
declare(FEDSWA_VARIANT)

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
    sgd_client, _wima_server))


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
    _fedswa_client, _fedswa_server))


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
    _fedmoswa_client, _fedmoswa_server))


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
    sam_client, _fednsam_server))


# ----------------------------------------------------------------------------- FedSOL

def _fedsol_client(cfg, flat):
    """SAM whose ascent follows the proximal KL loss's gradient; descent on the local loss."""
    perturbation = ProximalSAMPerturbation(flat, cfg.rho, cfg.fedsol_temperature,
                                           adaptive=cfg.fedsol_strength == "adaptive")
    return local_update(cfg, perturbation)


_add(Method(
    "fedsol",
    "FedSOL (Lee et al. 2024): eps* = rho grad L_p(w; w^t)/||grad L_p(w; w^t)|| with L_p the KL divergence "
    "from the global model's predictions to the local model's at temperature T (fedsol_temperature); "
    "w <- w - eta grad L_local(w + eps*); FedAvg server (fedsol_strength = adaptive: eps scaled by |w - w^t|).",
    _fedsol_client, average_server))


# ----------------------------------------------------------------------------- FedWMSAM

def _fedwmsam_client(cfg, flat):
    """The momentum-guided perturbation; SCAFFOLD's correction, then the alpha-weighted momentum."""
    sizes = tuple(shape.numel() for shape in flat.shapes) if cfg.fedwmsam_variant == "code" else None
    return local_update(cfg, MomentumGuidedPerturbation(cfg.rho, sizes), (ScaffoldCorrection(), AdaptiveMomentumMix()))


def _fedwmsam_server(cfg) -> Server:
    """x + eta_g mean update; SCAFFOLD's c; the cosine-weighted alpha and the momentum m."""
    m_scale = cfg.lr_decay if cfg.fedwmsam_variant == "code" else 1.0
    return Server(PseudoGradientStep(ServerSGD(lr=cfg.server_lr)),
                  parts=(ScaffoldServer(), WeightedMomentumServer(cfg.fedwmsam_alpha, m_scale)))


_add(Method(
    "fedwmsam",
    "FedWMSAM (Li, Huang et al. 2025, the official code's rule): m_i = m + alpha/(1 - alpha)(c - c_i); "
    "eps_j = -rho unit(x + j m_i - y_j); y <- y - eta (alpha g(y + eps_j) + (1 - alpha) m_i); "
    "alpha <- 0.99 alpha + 0.01 clip(mean (cos(y_k - x, m) + 1), 0.1, 0.9); m <- mean (x - y_k)/(K eta); "
    "SCAFFOLD's c, c_i; alpha starts at fedwmsam_alpha.",
    _fedwmsam_client, _fedwmsam_server))


# ----------------------------------------------------------------------------- FedGMT

def _fedgmt_client(cfg, flat):
    """Local SGD on CE plus the distillation toward the trajectory and the dual (1/beta) h_i."""
    return local_update(cfg, NoPerturbation(), (TrajectoryDistillation(flat, cfg.gmt_gamma, cfg.gmt_tau),
                                                TrajectoryDual(1.0 / cfg.gmt_beta)))


def _fedgmt_server(cfg) -> Server:
    """The average, plus the mean dual of all clients; the trajectory e <- alpha e + (1 - alpha) w."""
    return Server(average_step(), parts=(TrajectoryServer(cfg.gmt_alpha),))


_add(Method(
    "fedgmt",
    "FedGMT (Li et al., ICML 2025; the official code's rule, module flcore.algorithms.trajectory): "
    "local SGD on CE + gamma T^2 KL(softmax(f(x; e)/T) || softmax(f(x; w)/T)) + (1/beta) <w, h_i> with e the "
    "moving average of the global models and h_i the client's summed updates; w <- mean_k w_k + mean_N h_i, "
    "e <- alpha e + (1 - alpha) w.",
    _fedgmt_client, _fedgmt_server))


#: The names of the methods published since the five papers, in registration order: the
#: "since these papers" group that the book's page and the contested claims read.
SINCE_METHODS: tuple[str, ...] = tuple(method.name for method in RECIPES)
