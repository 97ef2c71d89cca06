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
from flcore.algorithms import METHODS
from flcore.algorithms.recipes_since import SINCE_METHODS
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
                                  ("fednsam_variant", "both", "paper"),
                                  ("fedsol_temperature", 0.0, "must be > 0"),
                                  ("fedsol_strength", "paper", "fixed, adaptive"),
                                  ("fedwmsam_alpha", 1.0, "must be in \\(0, 1\\)"),
                                  ("fedwmsam_alpha", 0.0, "must be in \\(0, 1\\)"),
                                  ("fedwmsam_variant", "both", "paper")):
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


# ----------------------------------------------------------------------------- FedSOL

def official_fedsol_client(sim, x, client, lr, steps, rho, adaptive, momentum=0.9, wd=1e-5, temperature=3.0):
    """Lee-Gihun/FedSOL ``fedsol_fixed`` / ``fedsol_adaptive`` ``ClientTrainer.train``,
    restated for the linear model: the first pass's loss ``KLDivLoss(batchmean)(log_softmax(f(w)/3),
    softmax(f(w_g)/3))``, the SAM ascent ``e = rho g_p / (||g_p|| + 1e-12)`` (adaptive: times
    ``F.normalize(|w - w_g|, dim=0)`` per tensor), the cross-entropy gradient at ``w + e`` and
    ``SGD(lr, momentum, weight_decay)`` at ``w`` (a fresh momentum buffer every round).
    One difference, on the Known differences page: at a round's first step ``w = w_g`` and
    the KL's gradient is zero up to rounding, which the code normalises into a step of
    length rho in the rounding's direction; flcore's gradient is exactly zero there, so is
    its perturbation, and so is the restatement's."""
    idx = sim.data.client_indices[client]
    X = sim.data.train_x[idx]

    def logits(w):
        return X @ w[:6].view(2, 3).T + w[6:]

    target = torch.softmax(logits(x) / temperature, dim=1)
    y, buf = x.clone(), torch.zeros_like(x)
    for step in range(steps):
        w = y.clone().requires_grad_(True)
        kl = torch.nn.functional.kl_div(torch.log_softmax(logits(w) / temperature, dim=1), target,
                                        reduction="batchmean")
        (g_p,) = torch.autograd.grad(kl, w)
        e = g_p * rho / (g_p.norm() + 1e-12)
        if step == 0:  # w = w_g: g_p is rounding noise, which the code scales to length rho; flcore's is 0
            assert float(g_p.norm()) < 1e-15
            e = torch.zeros_like(e)
        if adaptive:
            d = (y - x).abs()
            e = e * torch.cat([torch.nn.functional.normalize(d[:6].view(2, 3), dim=0).reshape(-1),
                               torch.nn.functional.normalize(d[6:], dim=0)])
        g = code_grad(sim, y + e, client)
        buf = momentum * buf + g + wd * y
        y = y - lr * buf
    return y


@pytest.mark.parametrize("strength", ["fixed", "adaptive"])
def test_fedsol_equals_the_official_update(strength):
    """Two rounds against the official client (the code's rho = 1, momentum 0.9, weight decay
    1e-5, lr decay 0.99 a round) and its server (``_aggregation``: the sample-weighted average).
    The tolerance is 1e-12, as FedNSAM's: the ascent is a normalised gradient."""
    steps, rho = 3, 1.0
    sim = code_simulation("fedsol", local_steps=steps, rho=rho, fedsol_strength=strength, momentum=0.9,
                          weight_decay=1e-5, lr_decay=0.99)
    for r in range(2):
        result = sim.step()
        x = result.start
        models = [official_fedsol_client(sim, x, client, LR * 0.99 ** r, steps, rho, strength == "adaptive")
                  for client in result.client_ids]
        for k, y in enumerate(models):
            torch.testing.assert_close(result.client_models[k], y, rtol=0, atol=1e-12)
        torch.testing.assert_close(result.global_model, torch.stack(models).mean(0), rtol=0, atol=1e-12)


def test_fedsol_perturbs_along_the_proximal_gradient_not_the_local_one():
    """The ascent follows the KL loss to the received model, not the cross-entropy: FedSOL
    differs from FedSAM at the same rho, equals plain SGD at rho 0, and the adaptive strength
    is zero at the round's first step (w = w^t), so one local step of it is SGD too."""
    def first(method, steps=2, **config):
        return code_simulation(method, local_steps=steps, **config).step().client_models

    sol, sam = first("fedsol", rho=0.5), first("fedsam", rho=0.5)
    assert not torch.allclose(sol, sam)
    torch.testing.assert_close(first("fedsol", rho=0.0), first("fedavg"), rtol=0, atol=1e-15)
    torch.testing.assert_close(first("fedsol", steps=1, rho=0.5, fedsol_strength="adaptive"),
                               first("fedavg", steps=1), rtol=0, atol=1e-15)
    assert not torch.allclose(first("fedsol", rho=0.5, fedsol_strength="adaptive"), first("fedavg"))


# ----------------------------------------------------------------------------- FedWMSAM

def official_fedwmsam_client(sim, x, client, lr, steps, rho, m_i, alpha, as_coded, clip_norm, wd=1e-3):
    """Huang-Yongzhi/NeurlPS_FedWMSAM ``fedwmsam.train`` with ``WMSAM.step``, restated for the
    linear model (two tensors: the 2x3 weight, the bias): ``differ = target - y`` with
    ``target`` the start moved by ``m_i`` after every step; the perturbation (as coded: tensor
    ``idx`` shifted by ``-rho differ[idx] / (sum_idx |differ[idx]| + 1e-7)``; as stated:
    ``-rho differ / (||differ|| + 1e-7)``); the gradient of ``alpha CE + (1 - alpha) <w, m_i>``
    at the perturbed point, ``clip_grad_norm_`` and ``SGD(lr, weight_decay=1e-3)``."""
    y, target = x.clone(), x.clone()
    for _ in range(steps):
        differ = target - y
        if as_coded:
            scale = rho / (differ[0].abs() + differ[1].abs() + 1e-7)
            e = torch.cat([(-differ[0] * scale).expand(6), (-differ[1] * scale).expand(2)])
        else:
            e = -rho * differ / (differ.norm() + 1e-7)
        g = clip(alpha * code_grad(sim, y + e, client) + (1 - alpha) * m_i, clip_norm)
        y = y - lr * (g + wd * y)
        target = target + m_i
    return y


def official_cosine_score(update, m):
    """The code's ``cosine_similarity``: 0.0 when a norm is zero, else cos + 1."""
    denom = update.norm() * m.norm()
    return 0.0 if float(denom) == 0 else float(update @ m / denom) + 1.0


@pytest.mark.parametrize("variant, lr_decay, clip_norm", [("code", 0.998, 10.0), ("code", 0.998, 0.05),
                                                          ("paper", 1.0, 10.0)])
def test_fedwmsam_equals_the_official_update(variant, lr_decay, clip_norm):
    """Three rounds against the official client and server (``process_for_communication``:
    ``m_i = m + (c - c_i) alpha/(1 - alpha)``; ``postprocess``: the cosine score against the
    old ``m`` and ``c_i+ = c_i - c - Delta_i/(K lr)``; ``global_update``: ``alpha <- 0.99 alpha
    + 0.01 clip(mean score, 0.1, 0.9)``, ``c += sum(c_i+ - c_i)/N``, ``m = -mean Delta/(K lr) *
    lr_decay``, ``x + lg mean Delta``).  ``"code"`` is the code as it runs; ``"paper"`` the rule
    it states (the whole-vector perturbation, no lr-decay factor on ``m``)."""
    steps, rho, alpha, lg = 3, 0.1, 0.5, 0.9  # alpha away from the band floor, so that it moves
    sim = code_simulation("fedwmsam", local_steps=steps, rho=rho, fedwmsam_alpha=alpha, fedwmsam_variant=variant,
                          clip_norm=clip_norm, weight_decay=1e-3, lr_decay=lr_decay, server_lr=lg)
    x = sim.w.clone()
    m, c = torch.zeros_like(x), torch.zeros_like(x)
    c_i = torch.zeros(4, x.numel(), dtype=x.dtype)
    for r in range(3):
        lr = LR * lr_decay ** r
        result = sim.step()
        models, scores, delta_c = [], [], torch.zeros_like(x)
        for client in result.client_ids:
            m_i = m + (c - c_i[client]) * alpha / (1 - alpha)
            y = official_fedwmsam_client(sim, x, client, lr, steps, rho, m_i, alpha, variant == "code", clip_norm)
            models.append(y)
            scores.append(official_cosine_score(y - x, m))
            new_c_i = c_i[client] - c - (y - x) / steps / lr
            delta_c += new_c_i - c_i[client]
            c_i[client] = new_c_i
        for k, y in enumerate(models):
            torch.testing.assert_close(result.client_models[k], y, rtol=0, atol=1e-12)
        mean_update = torch.stack([y - x for y in models]).mean(0)
        alpha = 0.99 * alpha + 0.01 * max(0.1, min(sum(scores) / len(scores), 0.9))
        c = c + delta_c / 4
        m = -mean_update / steps / lr * (lr_decay if variant == "code" else 1.0)
        x = x + lg * mean_update
        torch.testing.assert_close(result.global_model, x, rtol=0, atol=1e-12)
        torch.testing.assert_close(result.server_state["wmsam.m"], m, rtol=0, atol=1e-10)
        assert float(result.server_state["wmsam.alpha"]) == pytest.approx(alpha, abs=1e-14)
        torch.testing.assert_close(result.server_state["scaffold.c"], c, rtol=0, atol=1e-10)


def test_fedwmsam_variants_differ_and_alpha_moves_towards_the_band():
    """The code's per-tensor perturbation is not the stated one; in round 0 (m = 0) every
    score is 0, so alpha moves towards the band's floor, 0.99 alpha + 0.001."""
    paper, code = (code_simulation("fedwmsam", local_steps=3, rho=0.5, fedwmsam_alpha=0.5, fedwmsam_variant=v)
                   for v in ("paper", "code"))
    first = paper.step()
    assert float(first.server_state["wmsam.alpha"]) == pytest.approx(0.99 * 0.5 + 0.01 * 0.1, abs=1e-15)
    code.step()
    second_paper, second_code = paper.step(), code.step()
    assert not torch.allclose(second_paper.client_models, second_code.client_models)


# ----------------------------------------------------------------------------- every engine

def test_the_since_group_lists_the_newer_methods_in_registration_order():
    assert SINCE_METHODS[:4] == ("wima", "fedswa", "fedmoswa", "fednsam")
    assert list(METHODS)[-len(SINCE_METHODS):] == list(SINCE_METHODS)

SINCE = list(SINCE_METHODS)


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
