"""The baseline methods (docs/algorithms.md 3 and 7.2) against their update rules.

Unit checks run the parts on a quadratic: client k's loss is
f_k(w) = 1/2 (w - c_k)^T A (w - c_k) on every minibatch (the batch's ``x`` carries c_k),
so its gradient is A (w - c_k) and every rule can be written out in numpy in the test
itself.  End-to-end checks run the registered methods on the smoke MNIST-1D federation:
the reduction identities of docs/algorithms.md 7.3, batched == sequential, finite metrics.
"""
import numpy as np
import pytest
import torch
from float64_simulation import ATOL, RTOL, simulation_in_float64

import flcore.algorithms.recipes_baselines  # noqa: F401  (registers the methods)
from flcore import resolve_config
from flcore.algorithms import Batch, LocalUpdate, NoPerturbation, RoundContext, SAMPerturbation, get_method
from flcore.algorithms.corrections import (
    AdaBestBias,
    DynDual,
    GlobalMomentum,
    GradientMixing,
    Prox,
    ScaffoldCorrection,
    SpeedProx,
)
from flcore.algorithms.perturbation_smoo import SMOOPerturbation
from flcore.algorithms.server import PseudoGradientStep, Server, ServerRound, ServerSGD
from flcore.algorithms.server_parts import (
    AdaBestStep,
    DynServerCorrection,
    FedNovaStep,
    GMAStep,
    MomentumBroadcast,
    ScaffoldServer,
    SMOOServer,
)
from flcore.config import grad_evals_per_step, traffic_of
from flcore.sim import Simulation, build_federated_data
from flcore.sim.engine import init_client_state

A = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.0], [0.0, 0.0, 1.0]])
TARGETS = np.array([[1.0, -2.0, 0.5], [-1.0, 0.5, 2.0], [0.3, 0.3, -1.0], [2.0, 1.0, 0.0]])


def grad(w, k):
    """Client k's gradient, numpy."""
    return A @ (w - TARGETS[k])


def quadratic_grad_fn(W, batch):
    At = torch.tensor(A, dtype=W.dtype)
    diff = W - batch.x
    return 0.5 * torch.einsum("kp,pq,kq->k", diff, At, diff), diff @ At.T


def t(x):
    return torch.tensor(np.asarray(x), dtype=torch.float64)


def run_clients(update, start, ids, steps, lr, state=None, broadcast=None, round=0):
    """The local procedure of clients ``ids`` from ``start`` [P], client k running
    ``steps[k]`` steps (shorter clients masked, as the engine does)."""
    K = len(ids)
    starts = t(start).unsqueeze(0).repeat(K, 1)
    ctx = RoundContext(round=round, lr=lr, start=starts.clone(), client_ids=torch.tensor(ids),
                       grad_fn=quadratic_grad_fn, client_state=state or {}, broadcast=broadcast or {},
                       global_model=t(start), num_steps=torch.tensor(steps))
    scratch = update.begin(ctx)
    W = starts
    x = t(TARGETS[ids])
    for j in range(max(steps)):
        active = torch.tensor([j < s for s in steps])
        batch = Batch(x=x, y=torch.zeros(K, 1, dtype=torch.long), weight=torch.ones(K, 1), active=active)
        W = update.step(W, batch, ctx, scratch)
    return update.end(W, ctx, scratch)


class Federation:
    """A round loop on the quadratic mirroring ``Simulation.train_one_round``."""

    def __init__(self, update, server, w0, num_clients=4, counts=(1, 1, 1, 1)):
        self.update, self.server = update, server
        self.w = t(w0)
        self.counts = torch.tensor(counts)
        self.server_state = server.init(self.w, num_clients)
        self.tables = init_client_state(update.client_state_spec(), self.w, num_clients)
        self.num_clients = num_clients

    def round(self, r, ids, steps, lr):
        start, sent = self.server.broadcast(self.w, self.server_state, r)
        idx = torch.tensor(ids)
        rows = {name: table[idx] for name, table in self.tables.items()}
        out = run_clients(self.update, start, ids, steps, lr, rows, sent, r)
        for name, new in out["client_state"].items():
            self.tables[name][idx] = new
        self.w = self.server.update(self.w, start, out, self.counts[idx], self.server_state, r, self.num_clients)
        return out


def simulate(**overrides):
    cfg = resolve_config(scale="smoke", **overrides)
    data = build_federated_data(cfg, torch.device("cpu"))
    sim = Simulation(cfg, data, torch.device("cpu"), None)
    summary = sim.run_rounds()
    return sim, summary


def final_model(**overrides):
    return simulate(**overrides)[0].w


# ============================================================================ C1 FedProx

def test_prox_step_matches_hand_computation():
    w0, lr, mu, wd = np.array([0.3, 0.1, -0.4]), 0.1, 0.5, 0.01
    update = LocalUpdate(NoPerturbation(), (Prox(mu),), weight_decay=wd)
    out = run_clients(update, w0, [0, 1], [2, 2], lr)
    for i, k in enumerate([0, 1]):
        w = w0.copy()
        for _ in range(2):
            w = w - lr * (grad(w, k) + mu * (w - w0) + wd * w)
        np.testing.assert_allclose(out["model"][i].numpy(), w, rtol=1e-12)


# ============================================================================ C2 SCAFFOLD

def test_scaffold_local_step_matches_hand_computation():
    w0, lr, scale = np.array([0.3, 0.1, -0.4]), 0.1, 0.5
    c = np.array([0.2, -0.1, 0.05])
    c_k = np.array([[0.1, 0.4, -0.3], [-0.2, 0.0, 0.6]])
    out = run_clients(LocalUpdate(NoPerturbation(), (ScaffoldCorrection(scale),)), w0, [0, 1], [1, 1], lr,
                      {"scaffold_c": t(c_k)}, {"scaffold_c": t(c)})
    for i in range(2):
        expected = w0 - lr * (grad(w0, i) + scale * (-c_k[i] + c))
        np.testing.assert_allclose(out["model"][i].numpy(), expected, rtol=1e-12)


def test_scaffold_two_rounds_match_hand_computation():
    """Option-II control variates with unequal step counts, server lr 0.5, N = 4 clients,
    client 1 absent in round 1 and back in round 2 with its own c_k."""
    w0, lr, eta_g, N = np.array([0.3, 0.1, -0.4]), 0.05, 0.5, 4
    counts = [2, 3, 1, 4]
    fed = Federation(LocalUpdate(NoPerturbation(), (ScaffoldCorrection(),)),
                     Server(PseudoGradientStep(ServerSGD(lr=eta_g)), parts=(ScaffoldServer(),)), w0, N, counts)
    plan = [([0, 1], [3, 2]), ([2, 0], [1, 4]), ([1, 3], [2, 2])]
    # numpy reference
    w, c, c_k = w0.copy(), np.zeros(3), np.zeros((N, 3))
    for r, (ids, steps) in enumerate(plan):
        out = fed.round(r, ids, steps, lr)
        ys, dcs = [], []
        for k, K in zip(ids, steps):
            y = w.copy()
            for _ in range(K):
                y = y - lr * (grad(y, k) - c_k[k] + c)
            c_new = c_k[k] - c + (w - y) / (K * lr)
            dcs.append(c_new - c_k[k])
            c_k[k] = c_new
            ys.append(y)
        p = np.array([counts[k] for k in ids], dtype=float)
        p /= p.sum()
        np.testing.assert_allclose(out["scaffold_dc"].numpy(), np.array(dcs), rtol=1e-10, atol=1e-12)
        w = w + eta_g * sum(pk * (y - w) for pk, y in zip(p, ys))
        c = c + sum(dcs) / N
        np.testing.assert_allclose(fed.w.numpy(), w, rtol=1e-10)
        np.testing.assert_allclose(fed.server_state["scaffold"]["c"].numpy(), c, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(fed.tables["scaffold_c"].numpy(), c_k, rtol=1e-10, atol=1e-12)


def test_scaffold_first_round_is_fedavg_exactly():
    """c = c_k = 0 in round one: the correction adds exact zeros and the server step is
    FedAvg's (server lr 1)."""
    fedavg = final_model(method="fedavg", rounds=1)
    scaffold = final_model(method="scaffold", rounds=1)
    torch.testing.assert_close(scaffold, fedavg, rtol=0, atol=0)
    assert not torch.equal(final_model(method="fedavg", rounds=2), final_model(method="scaffold", rounds=2))


# ============================================================================ C3 + S6 FedDyn

def test_dyn_dual_local_step_matches_hand_computation():
    w0, lr, alpha, wd = np.array([0.3, 0.1, -0.4]), 0.1, 0.2, 1e-3
    lam = np.array([[0.1, 0.4, -0.3], [-0.2, 0.0, 0.6]])
    update = LocalUpdate(NoPerturbation(), (DynDual(alpha),), weight_decay=wd)
    out = run_clients(update, w0, [0, 1], [2, 2], lr, {"dyn_dual": t(lam)})
    for i in range(2):
        w = w0.copy()
        for _ in range(2):
            w = w - lr * (grad(w, i) - lam[i] + alpha * (w - w0) + wd * w)
        np.testing.assert_allclose(out["model"][i].numpy(), w, rtol=1e-12)
        np.testing.assert_allclose(out["client_state"]["dyn_dual"][i].numpy(), lam[i] - alpha * (w - w0), rtol=1e-12)


@pytest.mark.parametrize("dual_scale", ["paper", "code"])
def test_feddyn_three_rounds_match_hand_computation(dual_scale):
    """Acar et al. Algorithm 1 with N = 4 clients, two per round, a client returning
    after an absence; dual_scale="code" divides the h update by |S| as well."""
    w0, lr, alpha, N = np.array([0.3, 0.1, -0.4]), 0.05, 0.1, 4
    fed = Federation(LocalUpdate(NoPerturbation(), (DynDual(alpha),)),
                     Server(PseudoGradientStep(ServerSGD(1.0)), parts=(DynServerCorrection(alpha, dual_scale),)), w0, N)
    plan = [([0, 1], [3, 2]), ([2, 3], [2, 2]), ([0, 2], [1, 3])]
    w, h, lam = w0.copy(), np.zeros(3), np.zeros((N, 3))
    for r, (ids, steps) in enumerate(plan):
        fed.round(r, ids, steps, lr)
        models = []
        for k, K in zip(ids, steps):
            v = w.copy()
            for _ in range(K):
                v = v - lr * (grad(v, k) - lam[k] + alpha * (v - w))
            lam[k] = lam[k] - alpha * (v - w)
            models.append(v)
        scale = alpha / N / (len(ids) if dual_scale == "code" else 1)
        h = h - scale * sum(v - w for v in models)
        w = np.mean(models, axis=0) - h / alpha
        np.testing.assert_allclose(fed.w.numpy(), w, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(fed.tables["dyn_dual"].numpy(), lam, rtol=1e-10, atol=1e-12)


def test_dyn_server_correction_with_a_perturbed_start_is_fedgloss_step_4():
    """With the clients started at w~ = w + eps (FedGloSS), the server gives
    w - Delta~ - beta sigma with sigma <- sigma - 1/(beta N) sum (w_k - w~)."""
    beta, N = 10.0, 5
    part = DynServerCorrection(1 / beta)
    server = Server(PseudoGradientStep(ServerSGD(1.0)), parts=(part,))
    w = t([0.3, 0.1, -0.4])
    start = w + t([0.05, -0.02, 0.01])
    models = t([[0.2, 0.0, -0.3], [0.5, 0.3, -0.6]])
    state = server.init(w, N)
    sigma_prev = np.array([0.01, 0.02, -0.03])
    state["dyn"]["h"] = t(sigma_prev)
    got = server.update(w, start, {"model": models}, torch.tensor([1, 1]), state, 3, N)
    sigma = sigma_prev - (models.numpy() - start.numpy()).sum(0) / (beta * N)
    delta_tilde = start.numpy() - models.numpy().mean(0)
    np.testing.assert_allclose(got.numpy(), w.numpy() - delta_tilde - beta * sigma, rtol=1e-12)


# ============================================================================ C4 + S7 AdaBest

def test_adabest_three_rounds_match_hand_computation():
    """Client 0 misses round 1, so its bias is divided by t - t'_k = 2 in round 2; the
    server extrapolates from theta^{-1} = w^0 in round one."""
    w0, lr, mu, beta, N = np.array([0.3, 0.1, -0.4]), 0.05, 0.2, 0.9, 3
    counts = [1, 2, 1]
    fed = Federation(LocalUpdate(NoPerturbation(), (AdaBestBias(mu),)), Server(AdaBestStep(beta)), w0, N, counts)
    plan = [([0, 1], [2, 3]), ([2, 1], [1, 2]), ([0, 2], [3, 2])]
    w, prev, h, last = w0.copy(), w0.copy(), np.zeros((N, 3)), [-1] * N
    for r, (ids, steps) in enumerate(plan):
        fed.round(r, ids, steps, lr)
        models = []
        for k, K in zip(ids, steps):
            v = w.copy()
            for _ in range(K):
                v = v - lr * (grad(v, k) - h[k])
            h[k] = h[k] / (r - last[k]) + mu * (w - v)
            last[k] = r
            models.append(v)
        p = np.array([counts[k] for k in ids], dtype=float)
        mean = (p / p.sum()) @ np.array(models)
        w = mean - beta * (prev - mean)
        prev = mean
        np.testing.assert_allclose(fed.w.numpy(), w, rtol=1e-10)
        np.testing.assert_allclose(fed.tables["adabest_h"].numpy(), h, rtol=1e-10, atol=1e-12)
        assert fed.tables["adabest_round"].tolist() == last


# ============================================================================ C5 FedCM / MoFedSAM

def _unit(u):
    return u / (np.linalg.norm(u) + 1e-16)


@pytest.mark.parametrize("sam", [False, True])
def test_fedcm_and_mofedsam_two_rounds_match_hand_computation(sam):
    """m = 0 in round one; then m = sum_k p_k (w - w_k)/(K_k lr) with unequal K_k and a
    different lr per round.  MoFedSAM multiplies the SAM gradient by alpha."""
    w0, alpha, rho, N = np.array([0.3, 0.1, -0.4]), 0.3, 0.1, 3
    counts = [1, 3, 2]
    perturbation = SAMPerturbation(rho) if sam else NoPerturbation()
    fed = Federation(LocalUpdate(perturbation, (GlobalMomentum(alpha),)),
                     Server(PseudoGradientStep(ServerSGD(1.0)), parts=(MomentumBroadcast(),)), w0, N, counts)
    plan = [([0, 1], [2, 3], 0.1), ([1, 2], [3, 1], 0.05)]
    w, m = w0.copy(), np.zeros(3)
    for r, (ids, steps, lr) in enumerate(plan):
        fed.round(r, ids, steps, lr)
        models = []
        for k, K in zip(ids, steps):
            v = w.copy()
            for _ in range(K):
                g = grad(v + rho * _unit(grad(v, k)), k) if sam else grad(v, k)
                v = v - lr * (alpha * g + (1 - alpha) * m)
            models.append(v)
        p = np.array([counts[k] for k in ids], dtype=float)
        p /= p.sum()
        m = sum(pk * (w - v) / (K * lr) for pk, v, K in zip(p, models, steps))
        w = p @ np.array(models)
        np.testing.assert_allclose(fed.w.numpy(), w, rtol=1e-10)
        np.testing.assert_allclose(fed.server_state["fedcm"]["m"].numpy(), m, rtol=1e-10)


# ============================================================================ P1 + C2 FedGAMMA

def test_fedgamma_local_step_uses_the_uncorrected_ascent():
    w0, lr, rho = np.array([0.3, 0.1, -0.4]), 0.1, 0.2
    c, c_k = np.array([0.2, -0.1, 0.05]), np.array([[0.1, 0.4, -0.3]])
    out = run_clients(LocalUpdate(SAMPerturbation(rho), (ScaffoldCorrection(),)), w0, [2], [1], lr,
                      {"scaffold_c": t(c_k)}, {"scaffold_c": t(c)})
    eps = rho * _unit(grad(w0, 2))
    expected = w0 - lr * (grad(w0 + eps, 2) - c_k[0] + c)
    np.testing.assert_allclose(out["model"][0].numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(out["scaffold_dc"][0].numpy(), -c + (w0 - expected) / lr, rtol=1e-12)


# ============================================================================ P3 FedSMOO

@pytest.mark.parametrize("regularised", [True, False])
def test_fedsmoo_two_rounds_match_hand_computation(regularised):
    """FedSMOO (P3 + C3 + S6) and FedSMOO-noreg (P3 + S0): s = 0 and mu_k = 0 at the
    start, client 1 in both rounds keeps its mu_k and dual."""
    w0, lr, rho, beta, N = np.array([0.3, 0.1, -0.4]), 0.05, 0.1, 5.0, 3
    a = 1 / beta
    corrections = (DynDual(a),) if regularised else ()
    parts = (DynServerCorrection(a), SMOOServer(rho)) if regularised else (SMOOServer(rho),)
    fed = Federation(LocalUpdate(SMOOPerturbation(rho), corrections),
                     Server(PseudoGradientStep(ServerSGD(1.0)), parts=parts), w0, N, [1, 1, 1])
    plan = [([0, 1], [2, 3]), ([1, 2], [2, 1])]
    w, s, h = w0.copy(), np.zeros(3), np.zeros(3)
    mu, lam = np.zeros((N, 3)), np.zeros((N, 3))
    for r, (ids, steps) in enumerate(plan):
        out = fed.round(r, ids, steps, lr)
        models, uploads = [], []
        for k, K in zip(ids, steps):
            v = w.copy()
            for _ in range(K):
                g = grad(v, k)
                eps = rho * _unit(g - mu[k] - s)
                mu[k] = mu[k] + eps - s
                d = grad(v + eps, k)
                if regularised:
                    d = d - lam[k] + a * (v - w)
                v = v - lr * d
            if regularised:
                lam[k] = lam[k] - a * (v - w)
            uploads.append(mu[k] - eps)
            models.append(v)
        np.testing.assert_allclose(out["smoo_s"].numpy(), np.array(uploads), rtol=1e-10)
        s = rho * _unit(np.sum(uploads, axis=0))
        if regularised:
            h = h - a / N * sum(v - w for v in models)
        w = np.mean(models, axis=0) - (h / a if regularised else 0)
        np.testing.assert_allclose(fed.w.numpy(), w, rtol=1e-10)
        np.testing.assert_allclose(fed.server_state["smoo"]["s"].numpy(), s, rtol=1e-10)
        np.testing.assert_allclose(fed.tables["smoo_mu"].numpy(), mu, rtol=1e-10, atol=1e-14)
        if regularised:
            np.testing.assert_allclose(fed.tables["dyn_dual"].numpy(), lam, rtol=1e-10, atol=1e-14)


# ============================================================================ P1 + C6 + C3s FedSpeed

def test_fedspeed_two_rounds_match_hand_computation():
    w0, lr, rho, alpha, lam_ = np.array([0.3, 0.1, -0.4]), 0.05, 0.1, 0.9, 10.0
    N = 3
    fed = Federation(LocalUpdate(SAMPerturbation(rho), (GradientMixing(alpha), SpeedProx(lam_))),
                     Server(PseudoGradientStep(ServerSGD(1.0))), w0, N, [1, 1, 1])
    plan = [([0, 1], [2, 3]), ([1, 2], [2, 2])]
    w, ghat = w0.copy(), np.zeros((N, 3))
    for r, (ids, steps) in enumerate(plan):
        out = fed.round(r, ids, steps, lr)
        uploads = []
        for k, K in zip(ids, steps):
            v = w.copy()
            for _ in range(K):
                g1 = grad(v, k)
                g2 = grad(v + rho * _unit(g1), k)
                v = v - lr * ((1 - alpha) * g1 + alpha * g2 - ghat[k] + (v - w) / lam_)
            ghat[k] = ghat[k] - (v - w) / lam_
            uploads.append(v - lam_ * ghat[k])
        np.testing.assert_allclose(out["model"].numpy(), np.array(uploads), rtol=1e-10)
        w = np.mean(uploads, axis=0)
        np.testing.assert_allclose(fed.w.numpy(), w, rtol=1e-10)
        np.testing.assert_allclose(fed.tables["fedspeed_ghat"].numpy(), ghat, rtol=1e-10, atol=1e-14)


# ============================================================================ S4 FedNova

def test_fednova_round_with_momentum_and_unequal_steps_matches_hand_computation():
    w0, lr, rho_m = np.array([0.3, 0.1, -0.4]), 0.05, 0.5
    counts = [2, 3, 1]
    fed = Federation(LocalUpdate(NoPerturbation(), momentum=rho_m), Server(FedNovaStep(rho_m)), w0, 3, counts)
    ids, steps = [0, 1, 2], [3, 2, 5]
    fed.round(0, ids, steps, lr)
    a, d = [], []
    for k, tau in zip(ids, steps):
        v, b = w0.copy(), np.zeros(3)
        for _ in range(tau):
            b = rho_m * b + grad(v, k)
            v = v - lr * b
        a_k = (tau - rho_m * (1 - rho_m ** tau) / (1 - rho_m)) / (1 - rho_m)
        a.append(a_k)
        d.append((w0 - v) / a_k)
    p = np.array(counts, dtype=float) / sum(counts)
    expected = w0 - (p @ np.array(a)) * (p @ np.array(d))
    np.testing.assert_allclose(fed.w.numpy(), expected, rtol=1e-10)


# ============================================================================ S5 FedGMA

GMA_W = np.array([0.0, 1.0, -1.0, 0.5])
GMA_MODELS = np.array([[0.2, 0.8, -0.9, 0.7],
                       [0.1, 1.3, -0.8, 0.4],
                       [0.3, 0.9, -1.2, 0.6]])
GMA_COUNTS = np.array([1.0, 2.0, 1.0])


def _gma_round() -> ServerRound:
    return ServerRound(w=t(GMA_W), start=t(GMA_W), uploads={"model": t(GMA_MODELS)}, counts=torch.tensor([1, 2, 1]),
                       round=0, num_clients=10)


def test_fedgma_paper_mask_matches_hand_computation():
    lr, tau = 0.5, 0.6
    got = GMAStep(lr, tau).update(_gma_round(), {})
    deltas = GMA_W - GMA_MODELS
    agreement = np.abs(np.sign(deltas).sum(0)) / 3
    passes = agreement >= tau
    assert passes.any() and not passes.all()
    mask = np.where(passes, 1.0, agreement)  # soft: a disagreeing coordinate is scaled by its agreement
    assert (mask[~passes] > 0).all()
    p = GMA_COUNTS / GMA_COUNTS.sum()
    np.testing.assert_allclose(got.numpy(), GMA_W - lr * mask * (p @ deltas), rtol=1e-12)


def test_fedgma_fedima_code_variant_matches_its_loop():
    lr, tau = 0.5, 0.6
    got = GMAStep(lr, tau, "fedima_code").update(_gma_round(), {})
    p = GMA_COUNTS / GMA_COUNTS.sum()
    average = p @ GMA_MODELS
    count = np.sign(GMA_MODELS - GMA_W).sum(0)
    current = GMA_W.copy()
    for k in range(3):
        diff = GMA_MODELS[k] - current
        mask = ((diff > 0) == (count > 0)) & (np.abs(count) > tau * 3)
        current = average - lr * diff * mask / 3
    np.testing.assert_allclose(got.numpy(), current, rtol=1e-12)


# ============================================================================ end to end

#: name -> (downloads, uploads, grad evals per step): docs/algorithms.md 7.2.
BASELINES = {
    "fedprox": (1, 1, 1), "fedprox+asam": (1, 1, 2),
    "scaffold": (2, 2, 1), "scaffold+asam": (2, 2, 2),
    "feddyn": (1, 1, 1), "feddyn+sam": (1, 1, 2), "feddyn+asam": (1, 1, 2),
    "adabest": (1, 1, 1), "adabest+asam": (1, 1, 2),
    "fedcm": (2, 1, 1), "mofedsam": (2, 1, 2), "fedgamma": (2, 2, 2),
    "fedsmoo": (2, 2, 2), "fedsmoo-noreg": (2, 2, 2), "fedspeed": (1, 1, 2),
    "fednova": (1, 1, 1), "fedgma": (1, 1, 1), "fedavgm+asam": (1, 1, 2),
}


def test_registered_methods_declare_the_communication_of_algorithms_md():
    from flcore.flat import FlatModel
    from flcore.models import build_model

    flat = FlatModel(build_model("mnist1d_cnn", (40,), 10))
    for name, (down, up, evals) in BASELINES.items():
        method = get_method(name)
        declared = (*traffic_of(name), grad_evals_per_step(name))
        assert declared == (down, up, evals), name
        client = method.build_client(resolve_config(scale="smoke", method=name), flat)
        assert client.grad_evals_per_step == evals, name


@pytest.mark.parametrize("method,base,extra,base_extra", [
    ("fedprox", "fedavg", {"mu": 0.0}, {}),
    ("fedprox+asam", "fedasam", {"mu": 0.0, "rho": 0.5}, {"rho": 0.5}),
    ("fedcm", "fedavg", {"fedcm_alpha": 1.0}, {}),
    ("mofedsam", "fedsam", {"fedcm_alpha": 1.0, "rho": 0.1}, {"rho": 0.1}),
    ("fedgma", "fedavg", {"gma_tau": 0.0, "server_lr": 1.0}, {}),
    ("fedavgm+asam", "fedavg", {"rho": 0.0, "server_momentum": 0.0, "server_lr": 1.0}, {}),
    ("fedsmoo-noreg", "fedavg", {"rho": 0.0}, {}),
    ("fedsmoo", "feddyn", {"rho": 0.0, "smoo_beta": 4.0}, {"feddyn_alpha": 0.25}),
])
def test_reductions_are_exact(method, base, extra, base_extra):
    """docs/algorithms.md 7.3: FedProx(mu=0) = FedAvg, FedCM(alpha=1) = FedAvg,
    MoFedSAM(alpha=1) = FedSAM, FedGMA(tau=0, eta_g=1) = FedAvg (every mask entry is 1);
    and FedAvgM+ASAM(rho=0, beta=0) = FedAvg, FedSMOO-noreg(rho=0) = FedAvg,
    FedSMOO(rho=0) = FedDyn(alpha=1/beta).  The arithmetic is the same up to additions of
    exact zeros, so the models are bitwise equal."""
    got = final_model(method=method, rounds=3, **extra)
    expected = final_model(method=base, rounds=3, **base_extra)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


def test_scaffold_asam_first_round_is_fedasam_exactly():
    got = final_model(method="scaffold+asam", rounds=1, rho=0.5)
    torch.testing.assert_close(got, final_model(method="fedasam", rounds=1, rho=0.5), rtol=0, atol=0)


def test_fednova_without_momentum_and_equal_steps_is_fedavg():
    """FedNova(rho_m = 0, equal tau) = FedAvg (docs/algorithms.md 7.3).  Not bitwise:
    FedNova computes w - tau * sum_k p_k (w - w_k)/tau, FedAvg w - (w - sum_k p_k w_k),
    so they agree to float32 rounding."""
    got = final_model(method="fednova", rounds=3, local_steps=3)
    expected = final_model(method="fedavg", rounds=3, local_steps=3)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    assert not torch.equal(got, final_model(method="fednova", rounds=3, local_steps=3, momentum=0.5))


#: ASAM runs use the MNIST-1D ASAM radius 0.5 (presets): at rho = 0.05, seed 0, a single
#: activation of one client flips between the two float32 reduction orders in round 2 and
#: moves 22 weights by 4e-5, a discontinuity of the loss, not of the method.
def _asam_rho(name):
    return {"rho": 0.5} if name.endswith("+asam") else {}


@pytest.mark.parametrize("method", sorted(BASELINES))
def test_three_rounds_batched_equals_sequential_with_finite_metrics(method):
    """Three smoke rounds (10 clients, 3 per round: clients return after absences), once
    one client at a time and once batched with vmap, in float64 (:mod:`float64_simulation`)."""
    runs = {}
    for engine in ("sequential", "batched"):
        sim, summary = simulation_in_float64(method=method, engine=engine, rounds=3, alpha=0.5, **_asam_rho(method))
        assert summary["status"] == "finished"
        for row in sim.metrics:
            assert np.isfinite(row["train_loss"])
            if row["test_accuracy"] is not None:
                assert np.isfinite(row["test_loss"]) and 0 <= row["test_accuracy"] <= 1
        runs[engine] = sim
    torch.testing.assert_close(runs["batched"].w, runs["sequential"].w, rtol=RTOL, atol=ATOL)
    for name, table in runs["sequential"].client_state.items():
        torch.testing.assert_close(runs["batched"].client_state[name], table, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("method", ["scaffold", "adabest", "fedcm", "fedsmoo", "fedspeed"])
def test_state_survives_checkpoint_and_resume(method):
    """Client tables and server part state saved after round 2 and loaded into a fresh
    simulation give the same round 4 as an uninterrupted run."""
    import io

    full, _ = simulate(method=method, rounds=4)
    first, _ = simulate(method=method, rounds=2)
    buffer = io.BytesIO()
    torch.save(first.state(), buffer)
    buffer.seek(0)
    cfg = resolve_config(scale="smoke", method=method, rounds=4)
    resumed = Simulation(cfg, build_federated_data(cfg, torch.device("cpu")), torch.device("cpu"), None)
    resumed.load_state(torch.load(buffer))
    resumed.run_rounds()
    torch.testing.assert_close(resumed.w, full.w, rtol=0, atol=0)


def test_fedgf_code_options_of_scaffold_and_momentum_servers():
    """FedGAMMA as the FedGF code runs it: c <- c + mean_k(dc_k)/N; MoFedSAM as the FedGF
    code runs it: w^{t+1} = w^t - m^{t+1} (docs/algorithms.md 3.12-3.13)."""
    w, N = t([0.3, 0.1, -0.4]), 10
    dc = t([[0.2, 0.0, -0.1], [0.4, 0.2, 0.3]])
    state = ScaffoldServer("fedgf_code").init(w, N)
    rnd = ServerRound(w=w, start=w, uploads={"scaffold_dc": dc}, counts=torch.tensor([1, 1]), round=0, num_clients=N)
    ScaffoldServer("fedgf_code").after(rnd, w, state)
    np.testing.assert_allclose(state["c"].numpy(), dc.numpy().mean(0) / N, rtol=1e-12)

    models, steps_lr = t([[0.2, 0.0, -0.3], [0.5, 0.3, -0.6]]), t([0.4, 0.2])
    part = MomentumBroadcast("fedgf_code")
    state = part.init(w, N)
    rnd = ServerRound(w=w, start=w, uploads={"model": models, "fedcm_steps_lr": steps_lr}, counts=torch.tensor([1, 3]),
                      round=0, num_clients=N)
    got = part.after(rnd, None, state)
    m = 0.25 * (w.numpy() - models[0].numpy()) / 0.4 + 0.75 * (w.numpy() - models[1].numpy()) / 0.2
    np.testing.assert_allclose(got.numpy(), w.numpy() - m, rtol=1e-12)
