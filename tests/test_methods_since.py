"""The methods published since the five papers (flcore.algorithms.recipes_since) against
their update rules, on the quadratic federation of :mod:`test_methods_papers`: a round of
the registered recipe (client, server and schedule built from a config) against the rule
written out in numpy."""
import numpy as np
import pytest
import torch
from test_code_options import LR, clip
from test_code_options import grad as code_grad
from test_code_options import simulation as code_simulation
from test_methods_papers import PLAN, W0, Driver, average, close, grad, unit

from flcore import resolve_config
from flcore.config import grad_evals_per_step, hyperparameters_of
from flcore.errors import ConfigError

# ----------------------------------------------------------------------------- WIMA

@pytest.mark.parametrize("window", [1, 2, 3])
def test_wima_sends_the_mean_of_the_last_w_aggregates_from_round_zero(window):
    """w^{t+1} = mean of the last min(t+1, W) FedAvg aggregates, from round 0, and that
    mean is what the clients train from next round and what is evaluated."""
    lr, steps = 0.1, 2
    d = Driver("wima", steps=steps, weight_decay=0.0, ima_window=window)
    w = W0.copy()
    aggregates = []
    for r in range(5):
        clients = PLAN[r % 3]
        models = []
        for k in clients:
            x = w.copy()
            for _ in range(steps):
                x = x - lr * grad(x, k)
            models.append(x)
        d.round(r, clients)
        aggregates = (aggregates + [average(models, clients)])[-window:]
        w = sum(aggregates) / len(aggregates)
        close(d.w.numpy(), w)
        close(d.eval_params(), w)


def test_wima_with_a_window_of_one_is_fedavg():
    wima, fedavg = Driver("wima", ima_window=1), Driver("fedavg")
    for r in range(3):
        wima.round(r, PLAN[r])
        fedavg.round(r, PLAN[r])
    torch.testing.assert_close(wima.w, fedavg.w, rtol=0, atol=0)


def test_wima_differs_from_fedavg_from_the_second_round():
    """Applied "from the initial stages": no start round to wait for."""
    wima, fedavg = Driver("wima", ima_window=2), Driver("fedavg")
    wima.round(0, PLAN[0])
    fedavg.round(0, PLAN[0])
    torch.testing.assert_close(wima.w, fedavg.w, rtol=0, atol=0)  # one aggregate: its own mean
    wima.round(1, PLAN[1])
    fedavg.round(1, PLAN[1])
    assert not torch.allclose(wima.w, fedavg.w)


def test_wima_reads_only_its_window():
    assert hyperparameters_of("wima") == ("ima_window",)
    cfg = resolve_config(scale="smoke", method="wima", ima_window=4)
    assert cfg.ima_window == 4
    with pytest.raises(ConfigError, match="ima_window"):
        resolve_config(scale="smoke", method="wima", ima_window=0)
    assert grad_evals_per_step("wima") == 1


# ----------------------------------------------------------------------------- FedSWA

@pytest.mark.parametrize("rho", [0.0, 0.5])
def test_fedswa_lr_decays_linearly_within_each_round_and_the_server_moves_by_eta_g(rho):
    """Paper rule: step j of K at eta (1 - j/K + rho j/K), restarting every round;
    x^{t+1} = (1 - eta_g) x^t + eta_g sum_k p_k y_k."""
    lr, wd, steps, eta_g = 0.1, 0.01, 3, 0.7
    d = Driver("fedswa", steps=steps, weight_decay=wd, fedswa_rho=rho, server_lr=eta_g)
    x = W0.copy()
    for r in range(3):
        clients = PLAN[r]
        models = []
        for k in clients:
            y = x.copy()
            for j in range(steps):
                y = y - lr * (1 - j / steps + rho * j / steps) * (grad(y, k) + wd * y)
            models.append(y)
        d.round(r, clients)
        x = (1 - eta_g) * x + eta_g * average(models, clients)
        close(d.w.numpy(), x)


def test_fedswa_with_rho_one_and_server_lr_one_is_fedavg():
    fedswa, fedavg = Driver("fedswa", fedswa_rho=1.0), Driver("fedavg")
    for r in range(3):
        fedswa.round(r, PLAN[r])
        fedavg.round(r, PLAN[r])
    torch.testing.assert_close(fedswa.w, fedavg.w, rtol=1e-14, atol=1e-15)


def test_the_new_fields_are_validated():
    for field, value, message in (("fedswa_rho", 1.5, "must be in \\[0, 1\\]"),
                                  ("fedswa_variant", "both", "paper"),
                                  ("fednsam_gamma", 1.0, "must be in \\[0, 1\\)"),
                                  ("fedmoswa_gamma", -0.1, "must be in \\[0, 1\\]"),
                                  ("fedmoswa_variant", "both", "paper"),
                                  ("fednsam_variant", "both", "paper")):
        with pytest.raises(ConfigError, match=message):
            resolve_config(scale="smoke", method=field.split("_")[0], **{field: value})


def official_fedswa_client(sim, x, client, lr, steps, clip_norm, wd=1e-3):
    """junkangLiu0/FedSWA ``update_FedSWA``, restated: each step a fresh ``SGD(lr=2 lr_i,
    weight_decay=1e-3)`` after ``clip_grad_norm_(max_norm)``; lr_1 = lr, then
    lr_{i+1} = (1 - i/K) lr + (i/K) rho lr with the code's rho = 0."""
    y, lr_i = x.clone(), lr
    for i in range(1, steps + 1):
        g = clip(code_grad(sim, y, client), clip_norm)
        y = y - 2 * lr_i * (g + wd * y)
        lr_i = (1 - i / steps) * lr + (i / steps) * 0.0
    return y


@pytest.mark.parametrize("clip_norm", [10.0, 0.05])  # the code's 10 (inactive here) and an active clip
def test_fedswa_code_variant_equals_the_official_update(clip_norm):
    """One round of ``fedswa_variant="code"`` against the official client and server
    (``apply_weights_avg``: x + lg * uniform mean of the updates; equal client sizes, so
    flcore's sample weights are uniform too)."""
    steps, lg = 3, 0.5
    sim = code_simulation("fedswa", local_steps=steps, fedswa_variant="code", fedswa_rho=0.0, clip_norm=clip_norm,
                          weight_decay=1e-3, server_lr=lg)
    for _ in range(2):
        result = sim.step()
        x = result.start
        models = [official_fedswa_client(sim, x, client, LR, steps, clip_norm) for client in result.client_ids]
        for k, y in enumerate(models):
            torch.testing.assert_close(result.client_models[k], y, rtol=0, atol=1e-14)
        expected = x + lg * torch.stack([y - x for y in models]).mean(0)
        torch.testing.assert_close(result.global_model, expected, rtol=0, atol=1e-14)


def test_fedswa_paper_and_code_variants_differ():
    """The paper's client lr is the round's; the code's doubles it."""
    paper, code = (code_simulation("fedswa", local_steps=2, fedswa_variant=v).step() for v in ("paper", "code"))
    assert not torch.allclose(paper.client_models, code.client_models)


# ----------------------------------------------------------------------------- FedMoSWA

@pytest.mark.parametrize("variant", ["paper", "code"])
def test_fedmoswa_decaying_lr_with_momentum_control_variates(variant):
    """y <- y - eta_j (g + wd y + c - c_i); c_i+ = c_i - c + (x - y_K)/(K eta_bar),
    eta_bar = (1 + rho) eta / 2; c <- c + gamma mean_S (c_i+ - c) (code: c = the mean in
    round 0); x^{t+1} = x^t + eta_g sum_k p_k (y_k - x^t)."""
    lr, wd, rho, gamma, eta_g, steps = 0.1, 0.01, 0.4, 0.3, 0.8, 3
    d = Driver("fedmoswa", steps=steps, weight_decay=wd, fedswa_rho=rho, fedmoswa_gamma=gamma,
               fedmoswa_variant=variant, server_lr=eta_g)
    x, c, c_i = W0.copy(), np.zeros(3), np.zeros((3, 3))
    for r in range(3):
        clients = PLAN[r]
        models, sent = [], []
        for k in clients:
            y = x.copy()
            for j in range(steps):
                y = y - lr * (1 - j / steps + rho * j / steps) * (grad(y, k) + wd * y + c - c_i[k])
            c_i[k] = c_i[k] - c + (x - y) / (steps * lr * (1 + rho) / 2)
            sent.append(c_i[k] - c)
            models.append(y)
        d.round(r, clients)
        mean = sum(sent) / len(sent)
        c = mean if (variant == "code" and r == 0) else c + gamma * mean
        x = x + eta_g * (average(models, clients) - x)
        close(d.w.numpy(), x)
        close(d.state["moswa"]["c"].numpy(), c)
        close(d.tables["moswa_c"].numpy(), c_i)


def official_fedmoswa_client(sim, x, client, lr, steps, rho, c, c_i, wd=1e-3, clip_norm=10.0):
    """junkangLiu0/FedSWA ``update_FedMoSWA`` (``update_FedSWAS`` in the first ``main.py``),
    restated: each step ``SGD(lr_i, weight_decay=1e-3)`` on the clipped gradient, then
    ``y -= (c - c_i) lr_i``; lr_{i+1} = (1 - i/K) lr + (i/K) rho lr; after the loop
    ``lr = (lr + rho lr)/2``, ``c_i = (x - y)/(K lr) + c_i - c``; sends ``c_i - c``."""
    y, lr_i = x.clone(), lr
    for i in range(1, steps + 1):
        y = y - lr_i * (clip(code_grad(sim, y, client), clip_norm) + wd * y)
        y = y - (c - c_i) * lr_i
        lr_i = (1 - i / steps) * lr + (i / steps) * rho * lr
    c_new = (x - y) / (steps * (lr + rho * lr) / 2) + c_i - c
    return y, c_new, c_new - c


def test_fedmoswa_code_variant_equals_the_official_update():
    """Three rounds against the official client and the first ``main.py``'s server
    (``apply_ci``: c = mean of the sent variates in the first round, then c + gamma * mean;
    ``apply_weights_avgSWA``: x + alpha * mean update).  The code's clip (10) is inactive here,
    where flcore's clip of the corrected gradient and the code's clip before the correction
    agree."""
    steps, rho, gamma, alpha = 3, 0.2, 0.1, 0.9
    sim = code_simulation("fedmoswa", local_steps=steps, fedswa_rho=rho, fedmoswa_gamma=gamma,
                          fedmoswa_variant="code", clip_norm=10.0, weight_decay=1e-3, server_lr=alpha)
    x = sim.w.clone()
    c = torch.zeros_like(x)
    c_i = torch.zeros(4, x.numel(), dtype=x.dtype)
    for r in range(3):
        result = sim.step()
        models, sent = [], []
        for client in result.client_ids:
            y, c_i[client], dc = official_fedmoswa_client(sim, x, client, LR, steps, rho, c, c_i[client])
            models.append(y)
            sent.append(dc)
        for k, y in enumerate(models):
            torch.testing.assert_close(result.client_models[k], y, rtol=0, atol=1e-14)
        mean = torch.stack(sent).mean(0)
        c = mean if r == 0 else c + gamma * mean
        x = x + alpha * torch.stack([y - x for y in models]).mean(0)
        torch.testing.assert_close(result.global_model, x, rtol=0, atol=1e-14)
        torch.testing.assert_close(result.server_state["moswa.c"], c, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------- FedNSAM

@pytest.mark.parametrize("variant", ["paper", "code"])
def test_fednsam_extrapolated_start_sam_and_nesterov_momentum(variant):
    """Clients start at x^t + gamma m^t and take SAM steps; Delta^t = sum_k p_k y_k - start;
    paper: m^{t+1} = gamma m^t + Delta^t; code: (1 + gamma) Delta^t (Delta^0 in round 0);
    x^{t+1} = x^t + m^{t+1}."""
    lr, wd, rho, gamma, steps = 0.1, 0.01, 0.3, 0.6, 2
    d = Driver("fednsam", steps=steps, weight_decay=wd, rho=rho, fednsam_gamma=gamma, fednsam_variant=variant)
    x, m = W0.copy(), np.zeros(3)
    for r in range(3):
        clients = PLAN[r]
        start = x + gamma * m
        models = []
        for k in clients:
            y = start.copy()
            for _ in range(steps):
                y = y - lr * (grad(y + rho * unit(grad(y, k)), k) + wd * y)
            models.append(y)
        d.round(r, clients)
        delta = average(models, clients) - start
        if variant == "paper":
            m = gamma * m + delta
        else:
            m = delta if r == 0 else (1 + gamma) * delta
        x = x + m
        close(d.w.numpy(), x)
    if variant == "paper":
        close(d.w.numpy(), average(models, clients))  # x^{t+1} is the clients' average


def test_fednsam_with_gamma_zero_is_fedsam():
    nsam, sam = Driver("fednsam", rho=0.2, fednsam_gamma=0.0), Driver("fedsam", rho=0.2)
    for r in range(3):
        nsam.round(r, PLAN[r])
        sam.round(r, PLAN[r])
    torch.testing.assert_close(nsam.w, sam.w, rtol=1e-14, atol=1e-15)


def official_fednsam_client(sim, start, client, lr, steps, rho, clip_norm, wd=1e-3):
    """junkangLiu0/FedNSAM ``update_NSAM``, restated: from the extrapolated start, the SAM
    optimizer's first step ``e = rho g / (||g|| + 1e-12)``, the gradient at ``y + e`` clipped
    (``clip_grad_norm_``), then ``SGD(lr, weight_decay=1e-3)`` at ``y``."""
    y = start.clone()
    for _ in range(steps):
        g = code_grad(sim, y, client)
        e = rho * g / (g.norm() + 1e-12)
        y = y - lr * (clip(code_grad(sim, y + e, client), clip_norm) + wd * y)
    return y


@pytest.mark.parametrize("clip_norm", [10.0, 0.05])
def test_fednsam_code_variant_equals_the_official_update(clip_norm):
    """Three rounds of ``fednsam_variant="code"`` against the official client and server
    (``apply_weights_avgACG``: m = mean update in the first round, then (1 + gamma) times the
    mean update; x + m).  The tolerance is 1e-12, not 1e-14: the official SAM divides by
    ``||g|| + 1e-12``, flcore by ``||g|| + 1e-16``."""
    steps, rho, gamma = 3, 0.05, 0.85
    sim = code_simulation("fednsam", local_steps=steps, rho=rho, fednsam_gamma=gamma, fednsam_variant="code",
                          clip_norm=clip_norm, weight_decay=1e-3)
    x = sim.w.clone()
    m = torch.zeros_like(x)
    for r in range(3):
        result = sim.step()
        start = x + gamma * m
        torch.testing.assert_close(result.start, start, rtol=0, atol=1e-12)
        models = [official_fednsam_client(sim, start, client, LR, steps, rho, clip_norm)
                  for client in result.client_ids]
        for k, y in enumerate(models):
            torch.testing.assert_close(result.client_models[k], y, rtol=0, atol=1e-12)
        mean_update = torch.stack([y - start for y in models]).mean(0)
        m = mean_update if r == 0 else gamma * mean_update + mean_update
        x = x + m
        torch.testing.assert_close(result.global_model, x, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------- every engine

SINCE = ["wima", "fedswa", "fedmoswa", "fednsam"]


@pytest.mark.parametrize("method", SINCE)
def test_a_run_in_a_group_equals_the_run_alone(method):
    """The multi-run engine: two seeds trained as one group equal each trained alone (the
    sequential, batched and Flower engines: tests/test_all_methods.py, tests/test_flower.py)."""
    from test_multi_run import _alone, _assert_same_runs, _cfg, _together

    from flcore.sim.multi_run import group_key, run_batchable

    extra = {"ima_window": 2, "fedswa_rho": 0.25}
    cfgs = [_cfg(method, seed=0, alpha=0.5, **extra), _cfg(method, seed=1, alpha=1000.0, **extra)]
    assert run_batchable(method) and group_key(cfgs[0]) == group_key(cfgs[1])
    _assert_same_runs([_alone(c) for c in cfgs], _together(cfgs))
