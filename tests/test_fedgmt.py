"""FedGMT (flcore.algorithms.trajectory) against a restatement of its official update
(harrylee999/FL-SAM, ``clientgmt.py`` and ``servergmt.py``), on the small float64 problem of
the code-option tests: a linear model, 10 samples per client, full-batch local steps."""
from __future__ import annotations

import pytest
import torch
from test_code_options import LR, simulation
from test_code_options import grad as ce_grad

from flcore import resolve_config
from flcore.algorithms.trajectory import TrajectoryDistillation
from flcore.config import check_method_reads, grad_evals_per_step, hyperparameters_of
from flcore.errors import ConfigError


def logits(sim, w, client):
    idx = sim.data.client_indices[client]
    return sim.data.train_x[idx] @ w[:6].view(2, 3).T + w[6:]


def official_fedgmt_client(sim, x, ema, dual, client, lr, steps, gamma, tau, beta, momentum, wd):
    """``clientGMT.train`` restated: the loss ``CE + gamma tau^2 KLDivLoss(batchmean)(log_softmax(f(w)/tau),
    softmax(f(ema)/tau)) - <w, -(1/beta) dual>``, ``SGD(lr, momentum, weight_decay)`` with a fresh
    buffer; returns the final model (its update is added to the dual by the server)."""
    teacher = torch.softmax(logits(sim, ema, client) / tau, dim=1)
    y, buf = x.clone(), torch.zeros_like(x)
    for _ in range(steps):
        w = y.clone().requires_grad_(True)
        kl = torch.nn.functional.kl_div(torch.log_softmax(logits(sim, w, client) / tau, dim=1), teacher,
                                        reduction="batchmean")
        extra = gamma * tau ** 2 * kl - torch.dot(w, -(1.0 / beta) * dual)
        (g_extra,) = torch.autograd.grad(extra, w)
        g = ce_grad(sim, y, client) + g_extra
        buf = momentum * buf + g + wd * y
        y = y - lr * buf
    return y


@pytest.mark.parametrize("per_round", [2, 4])
def test_fedgmt_equals_the_official_update(per_round):
    """Three rounds of two full-batch steps with momentum 0.9 and weight decay 1e-5 (the README's
    protocol), gamma 1, tau 3, beta 10, alpha 0.95 (the code's defaults); with two of four
    clients per round the mean dual counts the clients not sampled (their duals stay as they were)."""
    steps, gamma, tau, beta, alpha = 2, 1.0, 3.0, 10.0, 0.95
    sim = simulation("fedgmt", per_round=per_round, local_steps=steps, momentum=0.9, weight_decay=1e-5)
    num_clients = 4
    ema, duals = None, torch.zeros(num_clients, 8, dtype=torch.float64)
    for _ in range(3):
        result = sim.step()
        x = result.start
        ema = x.clone() if ema is None else ema
        models = {client: official_fedgmt_client(sim, x, ema, duals[client], client, LR, steps, gamma, tau, beta,
                                                 0.9, 1e-5) for client in list(result.client_ids)}
        for k, client in enumerate(list(result.client_ids)):
            torch.testing.assert_close(result.client_models[k], models[client], rtol=0, atol=1e-12)
            duals[client] = duals[client] + (models[client] - x)
        w = torch.stack(list(models.values())).mean(0) + duals.mean(0)
        ema = alpha * ema + (1 - alpha) * w
        torch.testing.assert_close(result.global_model, w, rtol=0, atol=1e-12)
        torch.testing.assert_close(result.server_state["gmt.ema"], ema, rtol=0, atol=1e-12)


def test_the_distillation_gradient_by_hand():
    """One sample, two classes, identity logits z = w: with teacher p and q = softmax(z/T) the
    gradient is gamma T (q - p); it vanishes when the student's tempered prediction is the teacher's."""

    class Identity:
        def forward(self, w, x):
            return w.expand(x.shape[0], -1)

    part = TrajectoryDistillation(Identity(), gamma=2.0, temperature=3.0)
    z = torch.tensor([[1.0, -1.0]], dtype=torch.float64)
    teacher = torch.tensor([[0.0, 0.0]], dtype=torch.float64)  # logits of the moving average: p = (1/2, 1/2)
    batch = type("B", (), {"x": torch.zeros(1, 1, 1, dtype=torch.float64),
                           "weight": torch.ones(1, 1, dtype=torch.float64)})()
    ctx = type("C", (), {"broadcast": {"gmt_ema": teacher[0]}})()
    q = torch.softmax(z / 3.0, dim=-1)
    g = part(z, torch.zeros_like(z), ctx, {}, batch)
    torch.testing.assert_close(g, 2.0 * 3.0 * (q - 0.5), rtol=0, atol=1e-15)
    same = part(teacher, torch.zeros_like(teacher), ctx, {}, batch)
    assert float(same.abs().max()) == 0.0


def test_without_distillation_dual_or_trajectory_it_is_fedavg():
    """gamma = 0 and a huge beta leave local SGD; the first round's model is then FedAvg's
    plus the mean dual of the round (the clients' mean update counted over all four clients)."""
    gmt = simulation("fedgmt", gmt_gamma=0.0, gmt_beta=1e12, per_round=4).step()
    avg = simulation("fedavg", per_round=4).step()
    torch.testing.assert_close(gmt.client_models, avg.client_models, rtol=0, atol=1e-12)
    torch.testing.assert_close(gmt.global_model, avg.global_model + (avg.client_models - avg.start).mean(0),
                               rtol=0, atol=1e-12)


def test_fedgmt_reads_its_declared_fields_and_costs_two_gradients():
    assert hyperparameters_of("fedgmt") == ("gmt_gamma", "gmt_tau", "gmt_beta", "gmt_alpha")
    assert grad_evals_per_step("fedgmt") == 2
    with pytest.raises(ConfigError, match="must be in \\[0, 1\\)"):
        resolve_config(scale="smoke", method="fedgmt", gmt_alpha=1.0)
    with pytest.raises(ConfigError, match="does not read gmt_beta"):
        check_method_reads("fedavg", {"gmt_beta"})
