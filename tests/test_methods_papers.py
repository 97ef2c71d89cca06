"""The five papers' own methods (FedGloSS, FedGF, FedLESAM, SWA, IMA, SAM~, centralized
baselines) against their update rules.

Hand computations use a quadratic per client, f_k(w) = 1/2 (w - c_k)^T A (w - c_k), whose
gradient A (w - c_k) every test writes out in numpy.  The client centre c_k rides in the
minibatch (``batch.x``), so a round of the real recipes (the registered method's client,
server and schedule) runs through a small round driver that calls the same hooks as
:meth:`flcore.sim.Simulation.train_one_round`.  End-to-end tests on the smoke MNIST-1D
federation check the reduction identities of docs/algorithms.md 7.3 (exactly), batched ==
sequential and checkpoint/resume.
"""
import io

import numpy as np
import pytest
import torch
from float64_simulation import ATOL, RTOL, simulation_in_float64

from flcore import resolve_config
from flcore.algorithms import METHODS, Batch, RoundContext, get_method
from flcore.algorithms.averaging import IMA, SWA, WindowedTargetStep
from flcore.algorithms.schedules import (
    ConstantLR,
    GlossCodeServerRho,
    IMAExplorationLR,
    LinearWarmup,
    SWACyclicLR,
    default_start,
)
from flcore.algorithms.server import PseudoGradientStep, ServerAdaptive, ServerRound
from flcore.config import grad_evals_per_step, hyperparameters_of, parts_of, traffic_of
from flcore.sim import Simulation, build_federated_data
from flcore.sim.engine import init_client_state

#: The file takes more than two minutes on one core (every paper method end to end).
pytestmark = pytest.mark.slow

A = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.0], [0.0, 0.0, 1.0]])
CENTERS = np.array([[1.0, -2.0, 0.5], [-1.0, 0.5, 2.0], [0.3, 1.5, -1.0]])
COUNTS = np.array([2.0, 3.0, 5.0])
W0 = np.array([0.2, -0.3, 0.4])



# ----------------------------------------------------------------------------- numpy side

def grad(w, k):
    return A @ (w - CENTERS[k])


def unit(u):
    return u / (np.linalg.norm(u) + 1e-16)


def average(models, clients):
    p = COUNTS[clients] / COUNTS[clients].sum()
    return sum(pk * m for pk, m in zip(p, models))


# ----------------------------------------------------------------------------- torch side

def quadratic_grad_fn(W, batch):
    At = torch.tensor(A, dtype=W.dtype)
    diff = W - batch.x[:, 0, :]
    loss = 0.5 * torch.einsum("kp,pq,kq->k", diff, At, diff)
    return loss, diff @ At.T


class Driver:
    """One method on the quadratic federation: its client, server and schedule built from
    a config, with the per-client tables and server state of the engine."""

    def __init__(self, method, steps=2, **overrides):
        base = {"scale": "smoke", "method": method, "weight_decay": 0.01, "lr": 0.1, "rounds": 10,
                "lr_decay": 1.0, "clip_norm": "none"}  # the hand computations use neither
        self.cfg = resolve_config(**{**base, **overrides})
        m = get_method(method)
        self.client = m.build_client(self.cfg, None)
        self.server = m.build_server(self.cfg)
        self.schedule = m.build_schedule(self.cfg)
        self.steps = steps
        self.w = torch.tensor(W0)
        self.N = len(CENTERS)
        self.state = self.server.init(self.w, self.N)
        self.tables = init_client_state(self.client.client_state_spec(), self.w, self.N)

    def _train(self, start, clients, round, sent, tables):
        ids = torch.tensor(clients)
        K = len(clients)
        ctx = RoundContext(round=round, lr=self.schedule(round), start=start.unsqueeze(0).expand(K, -1).clone(),
                           client_ids=ids, grad_fn=quadratic_grad_fn,
                           client_state={n: t[ids] for n, t in tables.items()}, broadcast=sent,
                           global_model=self.w, num_steps=torch.full((K,), self.steps))
        scratch = self.client.begin(ctx)
        batch = Batch(x=torch.tensor(CENTERS)[ids].unsqueeze(1), y=torch.zeros(K, 1, dtype=torch.long),
                      weight=torch.ones(K, 1, dtype=torch.float64), active=torch.ones(K, dtype=torch.bool))
        W = ctx.start
        for _ in range(self.steps):
            W = self.client.step(W, batch, ctx, scratch)
        return self.client.end(W, ctx, scratch)

    def round(self, round, clients):
        ids = torch.tensor(clients)
        counts = torch.tensor(COUNTS)[ids]
        if self.server.needs_probe:
            probe = self._train(self.w, clients, round, {}, self.tables)
            self.server.probe(self.w, probe, counts, self.state, round, self.N)
        start, sent = self.server.broadcast(self.w, self.state, round)
        out = self._train(start, clients, round, sent, self.tables)
        for name, rows in out.pop("client_state").items():
            self.tables[name][ids] = rows
        self.w = self.server.update(self.w, start, out, counts, self.state, round, self.N)
        return out

    def eval_params(self):
        return self.server.eval_params(self.w, self.state).numpy()


def close(got, expected):
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-11, atol=1e-13)


PLAN = [[0, 1], [1, 2], [0, 2]]  # client 0 returns in round 2 after missing round 1


# ----------------------------------------------------------------------------- FedLESAM

@pytest.mark.parametrize("variant", ["fedlesam", "fedlesam-s", "fedlesam-d"])
@pytest.mark.parametrize("first_visit", ["none", "w0"])
def test_fedlesam_rounds_match_hand_computation(variant, first_visit):
    rho, lr, wd, steps, alpha, scale, eta_g = 0.3, 0.1, 0.01, 2, 0.2, 0.5, 0.8
    d = Driver(variant, steps=steps, rho=rho, lesam_first_visit=first_visit, feddyn_alpha=alpha,
               scaffold_correction=scale, server_lr=eta_g)
    w = W0.copy()
    old = {k: W0.copy() for k in range(3)} if first_visit == "w0" else {}
    c_k = np.zeros((3, 3))
    c = np.zeros(3)
    lam = np.zeros((3, 3))
    h = np.zeros(3)
    for r, clients in enumerate(PLAN):
        models, dcs = [], []
        for k in clients:
            delta = rho * unit(old[k] - w) if k in old else np.zeros(3)
            x = w.copy()
            for _ in range(steps):
                g = grad(x + delta, k)  # Alg. 1: one gradient, at w + delta_i
                if variant == "fedlesam-s":
                    g = g + scale * (c - c_k[k])
                if variant == "fedlesam-d":
                    g = g - lam[k] + alpha * (x - w)
                x = x - lr * (g + wd * x)
            if variant == "fedlesam-s":
                new = c_k[k] - c + (w - x) / (steps * lr)
                dcs.append(new - c_k[k])
                c_k[k] = new
            if variant == "fedlesam-d":
                lam[k] = lam[k] - alpha * (x - w)
            old[k] = w.copy()
            models.append(x)
        avg = average(models, clients)
        got = d.round(r, clients)
        if variant == "fedlesam-d":
            h = h - alpha / 3 * sum(m - w for m in models)
            w = avg - h / alpha
        else:
            w = w - eta_g * (w - avg)
        if variant == "fedlesam-s":
            c = c + sum(dcs) / 3
        close(got["model"].numpy(), np.array(models))
        close(d.w.numpy(), w)
    if first_visit == "none":
        assert d.tables["lesam_seen"].tolist() == [True, True, True]
    close(d.tables["lesam_old"].numpy()[1], old[1])


def test_fedlesam_first_visit_is_unperturbed_and_rho_zero_is_sgd():
    """A client's first round is plain SGD; from the second visit on the step moves."""
    d = Driver("fedlesam", steps=1, rho=0.5, weight_decay=0.0)
    out = d.round(0, [0, 1])
    lr = 0.1
    close(out["model"].numpy()[0], W0 - lr * grad(W0, 0))
    w1 = d.w.numpy().copy()
    out = d.round(1, [0, 2])
    delta = 0.5 * unit(W0 - w1)
    close(out["model"].numpy()[0], w1 - lr * grad(w1 + delta, 0))
    close(out["model"].numpy()[1], w1 - lr * grad(w1, 2))  # client 2's first visit


def test_fedlesam_server_estimate_uses_the_last_global_update():
    d = Driver("fedlesam", steps=1, rho=0.5, weight_decay=0.0, lesam_estimate="server_last_round")
    d.round(0, [0, 1])
    w1 = d.w.numpy().copy()
    out = d.round(1, [2, 1])  # client 2 never participated: the server estimate needs no history
    delta = 0.5 * unit(W0 - w1)
    close(out["model"].numpy(), [w1 - 0.1 * grad(w1 + delta, 2), w1 - 0.1 * grad(w1 + delta, 1)])
    assert "lesam_old" not in d.tables


# ----------------------------------------------------------------------------- FedGF

@pytest.mark.parametrize("c_norm", ["paper", "len"])
def test_fedgf_rounds_match_hand_computation(c_norm):
    rho, lr, wd, steps, window = 0.2, 0.1, 0.01, 2, 3
    d = Driver("fedgf", steps=steps, rho=rho, fedgf_window=window, fedgf_threshold=0.0, fedgf_c_norm=c_norm)
    w = W0.copy()
    pert = np.zeros(3)
    c = 0.0
    indicators = np.zeros(window)
    for r, clients in enumerate(PLAN):
        w_tilde = w + pert
        models = []
        for k in clients:
            x = w.copy()
            for _ in range(steps):
                local_point = x + rho * unit(grad(x, k))
                p = c * w_tilde + (1 - c) * local_point  # Eq. 12: blend of perturbed points
                x = x - lr * (grad(p, k) + wd * x)
            models.append(x)
        got = d.round(r, clients)
        w_new = average(models, clients)
        distance = np.mean([np.linalg.norm(w - m) for m in models])
        indicators[r % window] = float(distance > 0.0)
        c = indicators.sum() / (window if c_norm == "paper" else min(r + 1, window))
        pert = rho * unit(w - w_new)
        w = w_new
        close(got["model"].numpy(), np.array(models))
        close(d.w.numpy(), w)
        close(float(d.state["fedgf"]["c"]), c)
        close(float(d.state["fedgf"]["distance"]), distance)


def test_fedgf_round_zero_is_fedsam_and_static_c():
    """Round 0 has no w~ yet: c = 0 and the step is FedSAM's, bit for bit."""
    for name, extra in (("fedgf", {}), ("fedgf-static-c", {"fedgf_static_c": 0.7})):
        d = Driver(name, rho=0.2, **extra)
        sam = Driver("fedsam", rho=0.2)
        torch.testing.assert_close(d.round(0, [0, 1])["model"], sam.round(0, [0, 1])["model"], rtol=0, atol=0)
    assert float(d.state["fedgf"]["c"]) == pytest.approx(0.7)


# ----------------------------------------------------------------------------- FedGloSS

@pytest.mark.parametrize("variant,dual_scale", [
    (v, s) for v in ("fedgloss-sam", "fedgloss-sgd", "fedgloss-sam-noadmm", "naivefedgloss")
    for s in ("paper", "code") if not (v.endswith("noadmm") and s == "code")])
def test_fedgloss_rounds_match_hand_computation(variant, dual_scale):
    rho_l, rho_s, beta, lr, wd, steps, warmup = 0.15, 0.4, 5.0, 0.1, 0.01, 2, 2
    d = Driver(variant, steps=steps, rho=rho_l, gloss_rho_server=rho_s, gloss_beta=beta,
               gloss_dual_scale=dual_scale, rho_warmup_rounds=warmup, rho_warmup_start=0.001)
    sam = variant != "fedgloss-sgd"
    admm = not variant.endswith("noadmm")
    naive = variant == "naivefedgloss"
    w = W0.copy()
    direction = np.zeros(3)
    sigma = np.zeros(3)
    sig_k = np.zeros((3, 3))

    def local(start, k, round, duals):
        radius = 0.001 + (rho_l - 0.001) * min(round, warmup) / warmup  # App. C.2 warm-up of rho_l
        x = start.copy()
        for _ in range(steps):
            g = grad(x, k)
            if sam:
                g = grad(x + radius * unit(g), k)
            if admm:
                g = g - duals[k] + (x - start) / beta  # Alg. 1 line 15
            x = x - lr * (g + wd * x)
        return x

    for r, clients in enumerate(PLAN):
        if naive:  # first exchange from w^t, duals untouched
            probe = [local(w, k, r, sig_k) for k in clients]
            direction = w - average(probe, clients)
        w_tilde = w + rho_s * unit(direction)  # zero direction in round 0: w~ = w
        models = []
        for k in clients:
            x = local(w_tilde, k, r, sig_k)
            if admm:
                sig_k[k] = sig_k[k] - (x - w_tilde) / beta  # line 19
            models.append(x)
        got = d.round(r, clients)
        delta_tilde = w_tilde - average(models, clients)
        if admm:
            scale = 1 / (beta * 3) / (len(clients) if dual_scale == "code" else 1)
            sigma = sigma - scale * sum(m - w_tilde for m in models)
            w = w - delta_tilde - beta * sigma  # line 24
        else:
            w = w - delta_tilde
        if not naive:
            direction = delta_tilde
        close(got["model"].numpy(), np.array(models))
        close(d.w.numpy(), w)


def test_fedgloss_round_zero_is_unperturbed_and_warmup_and_code_schedule():
    d = Driver("fedgloss-sam", rho=0.2, gloss_rho_server=0.5)
    start, _ = d.server.broadcast(d.w, d.state, 0)
    assert torch.equal(start, d.w)
    warm = LinearWarmup(0.2, 4, 0.001)
    assert [warm(t) for t in (0, 2, 4, 9)] == pytest.approx([0.001, 0.1005, 0.2, 0.2])
    assert LinearWarmup(0.2, 0)(0) == 0.2
    # official code (FedGloSSServer.__init__): rho0, then rho_l + (rho_s - rho0)/T_s up to T_s, then rho_s
    code = GlossCodeServerRho(rho_server=0.01, rho_local=0.2, rounds=100, initial=0.001)
    assert [code(t) for t in (0, 1, 100, 101)] == pytest.approx([0.001, 0.2 + 0.009 / 100, 0.2 + 0.009 / 100, 0.01])
    assert GlossCodeServerRho(0.01, 0.2, 1)(0) == 0.01
    cfg = resolve_config(scale="smoke", method="fedgloss-sgd", gloss_server_rho_schedule="code",
                         rho_warmup_rounds=10, gloss_rho_server=0.3)
    schedule = get_method("fedgloss-sgd").build_server(cfg).parts[0].rho_schedule
    assert schedule(5) == pytest.approx(0.0 + (0.3 - 0.001) / 10)  # SGD clients: rho_l = 0 in the code


# ----------------------------------------------------------------------------- SAM~

def test_samtilde_uses_the_previous_perturbed_gradient_across_rounds():
    rho, lr, wd, steps = 0.3, 0.1, 0.01, 3
    d = Driver("centralized-samtilde", steps=steps, rho=rho)
    x = W0.copy()
    prev = np.zeros(3)
    for r in range(2):
        for _ in range(steps):
            g = grad(x + rho * unit(prev), 0)  # eps_0 = 0
            prev = g
            x = x - lr * (g + wd * x)
        d.round(r, [0])
        close(d.w.numpy(), x)
    close(d.tables["samtilde_grad"].numpy()[0], prev)


# ----------------------------------------------------------------------------- SWA

def test_swa_cyclical_lr_values():
    base = ConstantLR(0.5)
    paper = SWACyclicLR(base, start=4, cycle=4, lr_max=1e-2, lr_min=1e-4)
    # gamma(t) = (1 - s) g1 + s g2, s = (mod(t - 1, c) + 1)/c: gamma_2 at t = 0 mod c
    assert [paper(t) for t in (3, 4, 5, 7, 8)] == pytest.approx(
        [0.5, 1e-4, 0.75e-2 + 0.25e-4, 0.25e-2 + 0.75e-4, 1e-4])
    code = SWACyclicLR(base, start=4, cycle=4, lr_max=1e-2, lr_min=1e-4, phase="code")
    assert [code(t) for t in (4, 7)] == pytest.approx([0.75e-2 + 0.25e-4, 1e-4])
    assert SWACyclicLR(base, 4, 1, 1e-2, 1e-4)(6) == 1e-2  # c = 1: gamma_1 (decision 3)
    assert default_start(None, 300) == 225 and default_start(7, 300) == 7


@pytest.mark.parametrize("include_start,phase", [(True, "paper"), (False, "code"), (True, "code")])
def test_swa_round_trajectory_matches_hand_computation(include_start, phase):
    start, cycle, lr1, lr2, steps = 3, 2, 0.1, 0.01, 2
    d = Driver("fedavg+swa", steps=steps, weight_decay=0.0, lr=lr1, swa_start=start, swa_cycle=cycle,
               swa_lr_min=lr2, swa_include_start=include_start, swa_phase=phase, rounds=8)
    w = W0.copy()
    theta = None
    n = 0
    for r in range(8):
        clients = PLAN[r % 3]
        if r >= start:
            s = ((r - 1) % cycle + 1) / cycle if phase == "paper" else (r % cycle + 1) / cycle
            lr = (1 - s) * lr1 + s * lr2
        else:
            lr = lr1
        models = []
        for k in clients:
            x = w.copy()
            for _ in range(steps):
                x = x - lr * grad(x, k)
            models.append(x)
        d.round(r, clients)
        w = average(models, clients)
        if r + 1 == start:
            theta, n = w.copy(), (1 if include_start else 0)  # theta <- w^{t_s}
        elif r > start and (r if phase == "paper" else r - start) % cycle == 0:
            theta, n = (n * theta + w) / (n + 1), n + 1  # Eq. 8
        close(d.w.numpy(), w)  # the clients always train from w, never from theta
        close(d.eval_params(), w if theta is None else theta)


def test_swa_from_round_zero_starts_with_w0():
    swa = SWA(start=0, cycle=1)
    w0 = torch.tensor([1.0, 2.0], dtype=torch.float64)
    state = swa.init(w0)
    assert torch.equal(swa.eval_params(torch.zeros(2, dtype=torch.float64), state), w0)
    swa.after(torch.tensor([3.0, 4.0], dtype=torch.float64), state, 0)  # t = t_s: no collection yet
    assert torch.equal(state["model"], w0)
    swa.after(torch.tensor([5.0, 8.0], dtype=torch.float64), state, 1)
    close(state["model"].numpy(), [3.0, 5.0])


# ----------------------------------------------------------------------------- IMA

def test_ima_exploration_lr_values():
    sched = IMAExplorationLR(0.01, 0.99, 0.97, start=5)
    assert sched(4) == pytest.approx(0.01 * 0.99 ** 4)
    assert sched(8) == pytest.approx(0.01 * 0.99 ** 5 * 0.97 ** 3)
    off = IMAExplorationLR(0.01, 0.99, 0.99, start=5)
    assert off(8) == 0.01 * 0.99 ** 8  # bit for bit the exponential schedule


@pytest.mark.parametrize("method", ["fedavg+ima", "fedadam+ima"])
def test_ima_window_of_aggregation_targets(method):
    P, start, lr, steps, gamma, gamma_late = 2, 1, 0.1, 2, 0.9, 0.5
    slr, b1, b2, tau = 0.5, 0.9, 0.99, 1e-3
    d = Driver(method, steps=steps, weight_decay=0.0, ima_window=P, ima_start=start, ima_gamma=gamma,
               ima_gamma_late=gamma_late, server_lr=slr, server_beta1=b1, server_beta2=b2, server_tau=tau)
    w = W0.copy()
    window = []
    m = np.zeros(3)
    v = np.zeros(3)
    for r in range(4):
        clients = PLAN[r % 3]
        eta = lr * gamma ** r if r < start else lr * gamma ** start * gamma_late ** (r - start)
        models = []
        for k in clients:
            x = w.copy()
            for _ in range(steps):
                x = x - eta * grad(x, k)
            models.append(x)
        d.round(r, clients)
        target = average(models, clients)
        window = (window + [target])[-P:]
        if r >= start:
            target = sum(window) / len(window)  # average of the FMA targets first
        if method == "fedavg+ima":
            w = target
        else:  # then the server optimizer on d = target - w
            g = target - w
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            w = w + slr * m / (np.sqrt(v) + tau)
        close(d.w.numpy(), w)
        close(d.eval_params(), w)  # the average is fed back and evaluated


def test_ima_output_window_for_other_steps():
    ima = IMA(window=3, start=2)
    w0 = torch.zeros(2, dtype=torch.float64)
    state = ima.init(w0)
    outs = [torch.tensor([float(i), 2.0 * i], dtype=torch.float64) for i in range(5)]
    got = [ima.after(o, state, r) for r, o in enumerate(outs)]
    close(got[1].numpy(), [1.0, 2.0])  # before t_IMA: the step's output
    close(got[2].numpy(), [1.0, 2.0])  # mean of outputs 0, 1, 2
    close(got[4].numpy(), [3.0, 6.0])  # mean of outputs 2, 3, 4
    fednova = get_method("fednova+ima").build_server(resolve_config(scale="smoke", method="fednova+ima"))
    assert isinstance(fednova.averaging, IMA)
    fedadam = get_method("fedadam+ima").build_server(resolve_config(scale="smoke", method="fedadam+ima"))
    assert isinstance(fedadam.step, WindowedTargetStep) and fedadam.averaging is None


def test_windowed_target_step_with_one_model_window_is_the_step():
    step = PseudoGradientStep(ServerAdaptive("yogi", 0.1, 0.9, 0.99, 1e-3))
    wrapped = WindowedTargetStep(step, window=1, start=0)
    w = torch.tensor([0.5, -0.5, 1.0])
    s1, s2 = step.init(w, 3), wrapped.init(w, 3)
    for r in range(3):
        uploads = {"model": torch.randn(2, 3)}
        counts = torch.tensor([3, 5])
        rnd = ServerRound(w=w, start=w, uploads=uploads, counts=counts, round=r, num_clients=3)
        a = step.update(rnd, s1)
        b = wrapped.update(rnd, s2)
        torch.testing.assert_close(a, b, rtol=0, atol=0)
        w = a


# ----------------------------------------------------------------------------- end to end

def _run(**overrides):
    cfg = resolve_config(scale="smoke", **overrides)
    data = build_federated_data(cfg, torch.device("cpu"))
    sim = Simulation(cfg, data, torch.device("cpu"), None)
    summary = sim.run_rounds()
    return sim, summary


def _final(**overrides):
    return _run(**overrides)[0].w


REDUCTIONS = [
    # FedLESAM's presets add lr decay and clipping; the base gets the same schedule
    ("fedlesam", {"rho": 0.0}, "fedavg", {"lr_decay": 0.998, "clip_norm": 10.0}),
    ("fedlesam-s", {"rho": 0.0}, "scaffold", {"lr_decay": 0.998, "clip_norm": 10.0}),
    ("fedlesam-d", {"rho": 0.0, "feddyn_alpha": 0.1}, "feddyn",
     {"feddyn_alpha": 0.1, "lr_decay": 0.9995, "clip_norm": 10.0}),
    ("fedgf", {"rho": 0.1, "fedgf_threshold": 1e9}, "fedsam", {"rho": 0.1}),
    ("fedgf-static-c", {"rho": 0.1, "fedgf_static_c": 0.0}, "fedsam", {"rho": 0.1}),
    ("fedgloss-sgd", {"gloss_rho_server": 0.0, "gloss_beta": 10.0}, "feddyn", {"feddyn_alpha": 0.1}),
    ("fedgloss-sam", {"gloss_rho_server": 0.0, "gloss_beta": 10.0, "rho": 0.1}, "feddyn+sam",
     {"feddyn_alpha": 0.1, "rho": 0.1}),
    ("naivefedgloss", {"gloss_rho_server": 0.0, "gloss_beta": 10.0, "rho": 0.1}, "feddyn+sam",
     {"feddyn_alpha": 0.1, "rho": 0.1}),
    ("fedgloss-sgd-noadmm", {"gloss_rho_server": 0.0}, "fedavg", {}),
    ("fedgloss-sam-noadmm", {"gloss_rho_server": 0.0, "rho": 0.1}, "fedsam", {"rho": 0.1}),
    ("fedavg+ima", {"ima_window": 1, "ima_gamma": 0.9, "ima_gamma_late": 0.9}, "fedavg", {"lr_decay": 0.9}),
    ("fedadam+ima", {"ima_window": 1, "ima_gamma": 0.9, "ima_gamma_late": 0.9, "server_lr": 0.1}, "fedadam",
     {"lr_decay": 0.9, "server_lr": 0.1}),
    ("fednova+ima", {"ima_window": 1, "ima_gamma": 0.9, "ima_gamma_late": 0.9}, "fednova", {"lr_decay": 0.9}),
    ("fedavg+swa", {"swa_start": 3}, "fedavg", {}),
    ("feddyn+sam+swa", {"swa_start": 3, "rho": 0.1}, "feddyn+sam", {"rho": 0.1}),
    ("centralized-samtilde", {"rho": 0.0}, "centralized-sgd", {}),
]


@pytest.mark.parametrize("method,extra,base,base_extra", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reduction_identities_are_exact(method, extra, base, base_extra):
    """docs/algorithms.md 7.3: each method at its reducing value is its base, bit for bit."""
    if method.endswith("+swa"):
        sim, _ = _run(method=method, rounds=3, **extra)
        assert extra["swa_start"] >= 3
        torch.testing.assert_close(sim.server.eval_params(sim.w, sim.server_state), sim.w, rtol=0, atol=0)
        got = sim.w
    else:
        got = _final(method=method, rounds=3, **extra)
    torch.testing.assert_close(got, _final(method=base, rounds=3, **base_extra), rtol=0, atol=0)


@pytest.mark.parametrize("method,extra", [("fedgloss-sam", {"rho": 0.1}), ("fedgf", {"fedgf_threshold": 0.0}),
                                          ("fedlesam", {"rho": 0.1}), ("fedavg+ima", {"ima_start": 1})])
def test_methods_differ_from_their_base_when_switched_on(method, extra):
    base = {"fedgloss-sam": "feddyn+sam", "fedgf": "fedsam", "fedlesam": "fedavg", "fedavg+ima": "fedavg"}[method]
    assert not torch.equal(_final(method=method, rounds=3, **extra), _final(method=base, rounds=3, **extra))


PAPER_METHODS = [name for name in METHODS
                 if name.startswith(("fedgloss", "naivefedgloss", "fedgf", "fedlesam", "centralized"))
                 or name.endswith(("+swa", "+ima"))]
#: What a centralized run forces (one client with all the data, a round is an epoch).
CENTRALIZED = {"clients": 1, "per_round": 1, "partition": "iid", "samples_per_client": None,
               "local_epochs": 1, "local_steps": None}


@pytest.mark.parametrize("method", PAPER_METHODS)
def test_batched_equals_sequential_and_metrics_are_finite(method):
    extra = {"swa_start": 1, "swa_cycle": 2, "ima_start": 1, "ima_window": 2, "rounds": 3, "alpha": 0.5,
             "server_lr": 0.1, "eval_every": 3, "eval_last": 0}
    if method.startswith("centralized"):
        extra.update(CENTRALIZED)
    # in float64: the engines' float32 rounding can flip a ReLU under ASAM (float64_simulation)
    seq, summary = simulation_in_float64(method=method, engine="sequential", **extra)
    bat, _ = simulation_in_float64(method=method, engine="batched", **extra)
    assert summary["status"] == "finished" and np.isfinite(summary["final_accuracy"])
    assert all(np.isfinite(m["train_loss"]) for m in seq.metrics)
    torch.testing.assert_close(bat.w, seq.w, rtol=RTOL, atol=ATOL)
    torch.testing.assert_close(bat.server.eval_params(bat.w, bat.server_state),
                               seq.server.eval_params(seq.w, seq.server_state), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("method", ["fedlesam", "fedgloss-sam", "fedgf", "fedavg+swa", "fedadam+ima",
                                    "fedlesam-s", "centralized-samtilde"])
def test_checkpoint_resume_equals_uninterrupted(method):
    extra = {"method": method, "rounds": 4, "swa_start": 1, "swa_cycle": 1, "ima_start": 1, "ima_window": 2,
             "fedgf_threshold": 0.0, "server_lr": 0.1}
    straight, _ = _run(**extra)
    cfg = resolve_config(scale="smoke", **{**extra, "rounds": 2})
    data = build_federated_data(cfg, torch.device("cpu"))
    first = Simulation(cfg, data, torch.device("cpu"), None)
    first.run_rounds()
    buffer = io.BytesIO()
    torch.save(first.state(), buffer)
    buffer.seek(0)
    resumed = Simulation(cfg.replace(rounds=4), data, torch.device("cpu"), None)
    resumed.load_state(torch.load(buffer))
    for r in range(2, 4):
        resumed.train_one_round(r)
    torch.testing.assert_close(resumed.w, straight.w, rtol=0, atol=0)
    torch.testing.assert_close(resumed.server.eval_params(resumed.w, resumed.server_state),
                               straight.server.eval_params(straight.w, straight.server_state), rtol=0, atol=0)


def test_fedgf_server_state_is_loggable():
    sim, _ = _run(method="fedgf", rounds=2, fedgf_threshold=0.0, fedgf_window=4)
    state = sim.server_state["fedgf"]
    assert float(state["c"]) == pytest.approx(0.5) and float(state["distance"]) > 0


def test_wrappers_are_registered_for_every_base():
    from flcore.algorithms.recipes_papers import IMA_BASES, SWA_BASES

    for base in SWA_BASES:
        assert f"{base}+swa" in METHODS
    for base in IMA_BASES:
        assert f"{base}+ima" in METHODS
    assert parts_of("scaffold+asam+swa") == ("P2", "C2", "S0", "A1", "L1", "L0")
    assert {"swa_cycle", "rho"} <= set(hyperparameters_of("scaffold+asam+swa"))


def test_communication_and_grad_evals_of_the_recipes():
    expect = {"fedgloss-sgd": (1, 1, 1), "fedgloss-sam": (1, 1, 2), "naivefedgloss": (2, 2, 2),
              "fedgf": (2, 1, 2), "fedlesam": (1, 1, 1), "fedlesam-s": (2, 2, 1), "fedlesam-d": (1, 1, 1),
              "centralized-samtilde": (1, 1, 1), "scaffold+asam+swa": (2, 2, 2), "fedavg+ima": (1, 1, 1)}
    for name, (down, up, evals) in expect.items():
        m = get_method(name)
        assert (*traffic_of(name), grad_evals_per_step(name)) == (down, up, evals), name
        if name in ("fedgloss-sgd", "fedlesam", "centralized-samtilde", "fedgf"):
            assert m.build_client(resolve_config(scale="smoke", method=name), None).grad_evals_per_step == evals


def test_fedlesam_code_perturbation_reproduces_the_official_indexing():
    """lesam_perturbation="code": tensor j is shifted by rho d[j] / (sum_{i<T} |d[i]| + 1e-7)
    (the official code's indexing of the flat update by the tensor index; FedLESAM issue #1)."""
    from flcore.algorithms.perturbation_global import LocallyEstimatedGlobal

    tensor_of = torch.tensor([0, 0, 0, 1, 1, 2])  # three tensors of sizes 3, 2, 1
    part = LocallyEstimatedGlobal(0.5, first_visit="w0", tensor_of=tensor_of)
    w_t = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=torch.float64)
    old = torch.tensor([[1.5, 1.0, 3.0, 4.0, 5.0, 7.0]], dtype=torch.float64)
    ctx = RoundContext(round=3, lr=0.1, start=w_t[None].clone(), client_ids=torch.tensor([0]), grad_fn=None,
                       client_state={"lesam_old": old, "lesam_seen": torch.tensor([True])}, global_model=w_t)
    scratch = {}
    part.begin(ctx, scratch)
    d = (old - w_t)[0].numpy()  # [0.5, -1, 0, 0, 0, 1]
    scale = 0.5 / (abs(d[0]) + abs(d[1]) + abs(d[2]) + 1e-7)
    expected = np.array([d[0]] * 3 + [d[1]] * 2 + [d[2]]) * scale
    np.testing.assert_allclose(scratch["lesam_delta"][0].numpy(), expected, rtol=1e-12)
