"""FedGMT's parts: distillation toward the global model trajectory, and its dual (docs/algorithms.md 7.1).

FedGMT (Li et al., "One Arrow, Two Hawks: Sharpness-aware Minimization for Federated
Learning via Global Model Trajectory", ICML 2025) replaces SAM's ascent by a teacher: an
exponential moving average ``e`` of the global models, which the server keeps and sends with
the global model.  Each local step descends::

    CE(f(x; w), y) + gamma T^2 KL(softmax(f(x; e)/T) || softmax(f(x; w)/T)) + (1/beta) <w, h_i>

where ``h_i`` is the sum of client ``i``'s past local updates (a FedDyn-type dual, without
FedDyn's proximal term).  After the round the server averages the models, adds the mean dual
of *all* clients, ``w <- w + (1/N) sum_i h_i``, and moves the teacher,
``e <- alpha e + (1 - alpha) w``.

The paper was not available offline: this is the official code's update
(``harrylee999/FL-SAM``: ``system/flcore/clients/clientgmt.py``, ``servers/servergmt.py``;
defaults ``gama`` 1, ``tau`` 3, ``beta`` 10, ``alpha`` 0.95), restated in
``tests/test_fedgmt.py`` and checked against it to 1e-12.  The KL term's gradient is a
second backward pass here (``extra_grad_evals = 1``), where the official code backpropagates
the summed loss once: the teacher's forward pass is the method's only extra cost there.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch.func import grad, vmap

from flcore.algorithms.corrections import received
from flcore.algorithms.hyperparameters import Hyperparameter, declares
from flcore.algorithms.part_ids import part_id

GMT_GAMMA = Hyperparameter("gmt_gamma", "float", 1.0, "FedGMT: weight gamma of the distillation toward the trajectory",
                           low=0)
GMT_TAU = Hyperparameter("gmt_tau", "float", 3.0, "FedGMT: temperature T of the distillation", low=0, low_open=True)
GMT_BETA = Hyperparameter("gmt_beta", "float", 10.0, "FedGMT: penalty coefficient beta (the dual's weight is 1/beta)",
                          low=0, low_open=True)
GMT_ALPHA = Hyperparameter("gmt_alpha", "float", 0.95, "FedGMT: decay alpha of the global models' moving average",
                           low=0, high=1, high_open=True)


@declares(GMT_GAMMA, GMT_TAU)
@part_id("C10", "distillation toward the global trajectory")
@dataclass(frozen=True)
class TrajectoryDistillation:
    """C10: ``g <- g + grad_w gamma T^2 KL(softmax(f(x; e)/T) || softmax(f(x; w)/T))``, the KL
    averaged over the minibatch's real samples (the official ``KLDivLoss(reduction="batchmean")``),
    ``e`` the moving average the server sends as ``gmt_ema``."""

    flat: object = field(compare=False, repr=False)
    gamma: float
    temperature: float
    extra_grad_evals: int = 1

    def _surrogate(self, w, x, weight, target):
        """A function of ``w`` whose gradient is the KL term's: ``d/dz gamma T^2 KL = gamma T
        (softmax(z/T) - p)`` for the logits ``z``, held fixed as a coefficient of ``z``."""
        z = self.flat.forward(w, x)
        coefficient = (self.gamma * self.temperature * (F.softmax(z / self.temperature, dim=-1) - target)).detach()
        return ((coefficient * z).sum(dim=-1) * weight).sum() / weight.sum().clamp_min(1.0)

    def __call__(self, W, g, ctx, scratch, batch):
        teacher = received(ctx, "gmt_ema")
        # one moving average for the chunk ([P]) is applied to every client's batch as it is;
        # a group of runs sends one per row ([K, P])
        in_dims = (None, 0) if teacher.dim() == 1 else (0, 0)
        with torch.no_grad():
            target = F.softmax(vmap(self.flat.forward, in_dims=in_dims)(teacher, batch.x) / self.temperature, dim=-1)
        return g + vmap(grad(self._surrogate))(W, batch.x, batch.weight, target)


@declares(GMT_BETA)
@part_id("C11", "FedGMT dual")
@dataclass(frozen=True)
class TrajectoryDual:
    """C11: ``g <- g + coefficient h_i`` with ``h_i`` the client state ``gmt_dual``, the sum of
    the client's past local updates: after the round ``h_i <- h_i + (W_K - w_start)``."""

    coefficient: float
    client_state = {"gmt_dual": "zeros"}
    state_meanings = {"gmt_dual": "the sum of the client's past local updates h_i (FedGMT's dual)"}

    def __call__(self, W, g, ctx, scratch, batch):
        return g + self.coefficient * ctx.client_state["gmt_dual"]

    def end(self, W, ctx, scratch, out):
        out["client_state"]["gmt_dual"] = ctx.client_state["gmt_dual"] + (W - ctx.start)


@declares(GMT_ALPHA)
@part_id("S12", "global model trajectory")
@dataclass(frozen=True)
class TrajectoryServer:
    """S12: after the average, ``w <- w + (1/N) sum_i h_i`` over all ``N`` clients (the duals
    of the clients not sampled keep their last value), then ``e <- alpha e + (1 - alpha) w``;
    ``e`` starts at the initial model and is sent as ``gmt_ema``."""

    downloads = ("gmt_ema",)  # model-sized, beside the model (rule R7)

    alpha: float
    name: str = "gmt"
    state_meanings = {"ema": "moving average e of the global models, the clients' teacher (FedGMT)",
                      "dual_mean": "mean dual (1/N) sum_i h_i over all clients (FedGMT)"}

    def init(self, w, num_clients):
        return {"ema": w.clone(), "dual_mean": torch.zeros_like(w)}

    def broadcast(self, w, start, sent, part_state, round):
        sent["gmt_ema"] = part_state["ema"]
        return start

    def after(self, rnd, w_new, part_state):
        part_state["dual_mean"] = part_state["dual_mean"] + (rnd.uploads["model"] - rnd.start).sum(0) / rnd.num_clients
        w = w_new + part_state["dual_mean"]
        part_state["ema"] = self.alpha * part_state["ema"] + (1 - self.alpha) * w
        return w
