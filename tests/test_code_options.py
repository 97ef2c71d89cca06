"""The official codes' variants as options: each test pins the code's formula on a small
problem (float64, a linear model, one full-batch local step), through the round API."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from flcore import FederatedData, Simulation
from flcore.algorithms import aggregate, unit
from flcore.algorithms.schedules import GlossCodeServerRho, LinearWarmup
from flcore.config import resolve_config

LR = 0.1


def problem(clients=4, n=40):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(n, 3, generator=gen, dtype=torch.float64) * 3
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
    return FederatedData.from_tensors(x, y, x[:8], y[:8], partition="iid", num_clients=clients)


def model():
    torch.manual_seed(1)
    return nn.Linear(3, 2).double()


def simulation(method, per_round=4, **config):
    data = problem()
    base = {"method": method, "per_round": per_round, "rounds": 10, "batch_size": 10, "local_steps": 1,
            "lr": LR, "device": "cpu", "engine": "sequential"}
    return Simulation.from_config({**base, **config}, data=data, model=model())


def grad(sim, w, client):
    """Full-batch gradient of client ``client``'s mean cross-entropy at ``w``."""
    idx = sim.data.client_indices[client]
    w = w.clone().requires_grad_(True)
    logits = sim.data.train_x[idx] @ w[:6].view(2, 3).T + w[6:]
    (g,) = torch.autograd.grad(nn.functional.cross_entropy(logits, sim.data.train_y[idx]), w)
    return g


def clip(v, c):
    return v * min(1.0, c / (float(v.norm()) + 1e-6))


# ----------------------------------------------------------------------------- dyn_clip

@pytest.mark.parametrize("method, alpha_field", [("feddyn", "feddyn_alpha"), ("fedsmoo", "smoo_beta"),
                                                 ("fedspeed", "fedspeed_lambda"), ("fedlesam-d", "feddyn_alpha")])
def test_dyn_clip_code_clips_before_the_regulariser_weight_decay(method, alpha_field):
    sims = {mode: simulation(method, clip_norm=0.05, dyn_clip=mode, fedspeed_alpha=1.0) for mode in ("paper", "code")}
    cfg = sims["code"].cfg
    alpha = cfg.feddyn_alpha if alpha_field == "feddyn_alpha" else 1.0 / getattr(cfg, alpha_field)
    first = {mode: sim.step() for mode, sim in sims.items()}
    second = sims["code"].step()
    assert not torch.allclose(first["paper"].client_models, first["code"].client_models)
    if method != "feddyn":  # the hand formula below is FedDyn's step; the others differ only in the ascent
        return
    dual = first["code"].client_state["dyn_dual"]
    for k, client in enumerate(second.client_ids):
        w = second.start
        v = clip(grad(sims["code"], w, client) - dual[client] - alpha * w, 0.05) + alpha * w
        torch.testing.assert_close(second.client_models[k], w - LR * v, rtol=0, atol=1e-14)
        v_paper = clip(grad(sims["code"], w, client) - dual[client], 0.05)
        assert not torch.allclose(second.client_models[k], w - LR * v_paper)


def test_dyn_clip_makes_no_difference_without_a_clip():
    results = [simulation("feddyn", dyn_clip=mode).step() for mode in ("paper", "code")]
    for _ in range(2):
        torch.testing.assert_close(results[0].client_models, results[1].client_models, rtol=0, atol=1e-15)


# ----------------------------------------------------------------------------- FedGloSS T_s = 1

def test_fedgloss_warmup_of_one_round_is_no_schedule_on_clients_and_server():
    assert LinearWarmup(0.1, 1, 0.001)(0) == 0.1
    assert GlossCodeServerRho(0.2, 0.1, 1, 0.001)(0) == 0.2
    assert LinearWarmup(0.1, 2, 0.001)(0) == 0.001  # T_s > 1 still ramps
    one = simulation("fedgloss-sam", rho=0.3, rho_warmup_rounds=1).step()
    none = simulation("fedgloss-sam", rho=0.3, rho_warmup_rounds=0).step()
    assert torch.equal(one.client_models, none.client_models)
    ramped = simulation("fedgloss-sam", rho=0.3, rho_warmup_rounds=2).step()
    assert not torch.equal(one.client_models, ramped.client_models)


# ----------------------------------------------------------------------------- IMA partial window

@pytest.mark.parametrize("partial", ["average", "wait"])
def test_ima_partial_window(partial):
    sim = simulation("fedavg+ima", ima_window=3, ima_start=0, ima_partial_window=partial, lr_decay=1.0)
    sizes = torch.full((4,), 10.0, dtype=torch.float64)
    targets, globals_ = [], []
    for _ in range(4):
        result = sim.step()
        targets.append(aggregate(result.client_models, sizes))
        globals_.append(result.global_model)
    for t in range(4):
        window = targets[max(0, t - 2):t + 1]
        if partial == "wait" and t < 2:
            expected = targets[t]  # the official code: plain FedAvg until the window is full
        else:
            expected = torch.stack(window).mean(0)
        torch.testing.assert_close(globals_[t], expected, rtol=0, atol=1e-14)


def test_new_options_keep_stored_run_ids():
    base = resolve_config(method="fedavg+ima", scale="smoke")
    assert base.replace(ima_partial_window="average").run_id() == base.run_id()
    assert base.replace(ima_partial_window="wait").run_id() != base.run_id()
    fedavg = resolve_config(method="fedavg", scale="smoke")
    assert fedavg.replace(dyn_clip="code").run_id() == fedavg.run_id()  # fedavg does not read it
    assert "dyn_clip" not in resolve_config(method="feddyn", scale="smoke").canonical()


# ----------------------------------------------------------------------------- FedSpeed (code)

def test_fedspeed_code_plain_sam_and_duals_of_all_clients():
    rho, lam = 0.2, 5.0
    sim = simulation("fedspeed", per_round=2, fedspeed_variant="code", rho=rho, fedspeed_lambda=lam,
                     fedspeed_alpha=0.5)
    h = torch.zeros(4, 8, dtype=torch.float64)  # FL-Simulator's h_k: the sum of client k's updates
    for _ in range(3):
        ghat = sim.client_state["fedspeed_ghat"].clone()
        result = sim.step()
        w = result.start
        for k, client in enumerate(result.client_ids):
            g = grad(sim, w, client)
            g_sam = grad(sim, w + rho * unit(g), client)  # no (1 - alpha) g + alpha g_sam mixing
            torch.testing.assert_close(result.client_models[k], w - LR * (g_sam - ghat[client]), rtol=0, atol=1e-14)
            h[client] += result.client_models[k] - w
        expected = result.client_models.mean(0) + h.mean(0)  # mean over all 4 clients, not the 2 that trained
        torch.testing.assert_close(result.global_model, expected, rtol=0, atol=1e-13)


def test_fedspeed_paper_mixes_the_gradients():
    rho, alpha = 0.2, 0.5
    result = simulation("fedspeed", fedspeed_alpha=alpha, rho=rho).step()
    sim = simulation("fedspeed")
    w = result.start
    g = grad(sim, w, result.client_ids[0])
    g_sam = grad(sim, w + rho * unit(g), result.client_ids[0])
    step = w - LR * ((1 - alpha) * g + alpha * g_sam)
    lam = sim.cfg.fedspeed_lambda
    x_hat = step - lam * (-(step - w) / lam)  # upload x_k = w_K - lambda ghat_k, ghat_k = -(w_K - w)/lambda
    torch.testing.assert_close(result.uploads["model"][0], x_hat, rtol=0, atol=1e-13)


# ----------------------------------------------------------------------------- FedSMOO (code)

@pytest.mark.parametrize("variant", ["paper", "code"])
def test_fedsmoo_global_perturbation(variant):
    rho = 0.3
    sim = simulation("fedsmoo", per_round=2, smoo_variant=variant, rho=rho)
    for _ in range(3):
        s = sim.server_state["smoo"]["s"].clone()
        mu = sim.client_state["smoo_mu"].clone()
        result = sim.step()
        ids = result.client_ids
        mu_new = result.client_state["smoo_mu"][ids]
        for k, client in enumerate(ids):  # one step: s_hat = rho unit(g - mu_k - s), mu_k <- mu_k + s_hat - s
            s_hat = rho * unit(grad(sim, result.start, client) - mu[client] - s)
            torch.testing.assert_close(mu_new[k], mu[client] + s_hat - s, rtol=0, atol=1e-14)
        if variant == "code":
            expected = rho * unit(mu_new.mean(0))  # FL-Simulator: s = rho mean(mu_k) / ||mean(mu_k)||
        else:
            s_hats = mu_new - mu[ids] + s
            expected = rho * unit((mu_new - s_hats).sum(0))  # the paper: rho unit(sum (mu_k - s_hat_k,K))
        torch.testing.assert_close(result.server_state["smoo.s"], expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize("method, options", [
    ("feddyn", {"clip_norm": 0.05, "dyn_clip": "code"}),
    ("fedspeed", {"fedspeed_variant": "code", "clip_norm": 0.05, "dyn_clip": "code"}),
    ("fedsmoo", {"smoo_variant": "code"}),
])
def test_code_options_batched_equal_sequential(method, options):
    runs = {}
    for engine in ("sequential", "batched"):
        sim = simulation(method, per_round=2, engine=engine, local_steps=2, batch_size=4, **options)
        runs[engine] = [sim.step().global_model for _ in range(2)]
    for a, b in zip(runs["sequential"], runs["batched"]):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-13)
