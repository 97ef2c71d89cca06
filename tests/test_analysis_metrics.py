"""Interpolation barriers, CKA, LPF, sharpness / Delta_F, the FedIMA factors and probes."""
import math

import pytest
import torch
from torch import nn

from flcore.analysis import (
    DatasetEvaluator,
    DatasetHVP,
    Probe,
    ProbeCallback,
    ball_ascent,
    bias_terms,
    cka_covariance,
    client_global_distance,
    client_top_eigenvalue,
    delta_eps_probe,
    ensemble_variance,
    feature_norms,
    flatness_discrepancy,
    flatness_discrepancy_from,
    global_perturbation,
    interpolate,
    linear_cka,
    loss_barrier,
    loss_decomposition,
    lpf,
    pairwise_cka,
    parameter_norm,
    parameter_norm_probe,
    per_sample_losses,
    perturbation_cosine,
    perturbation_curve,
    perturbation_drift,
    perturbation_probe,
    power_iteration,
    server_perturbation_error,
    sharpness,
)
from flcore.flat import FlatModel
from flcore.models import build_model


def _softmax_regression(seed=0, n=60, d=6, c=4):
    torch.manual_seed(seed)
    flat = FlatModel(nn.Linear(d, c).double())
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(n, d, generator=gen, dtype=torch.float64)
    y = torch.randint(0, c, (n,), generator=gen)
    return flat, x, y


# --------------------------------------------------------------------------- interpolation

def test_barrier_of_convex_losses_is_zero():
    # linear softmax regression: cross-entropy is convex in the parameters
    flat, x, y = _softmax_regression()
    gen = torch.Generator().manual_seed(3)
    w_a = torch.randn(flat.num_params, generator=gen, dtype=torch.float64)
    w_b = torch.randn(flat.num_params, generator=gen, dtype=torch.float64)
    result = interpolate(DatasetEvaluator(flat, x, y, batch_size=25), w_a, w_b, num=41)
    assert 0.0 <= result.barrier <= 1e-6
    # a quadratic, with t outside [0, 1] too (reported but not in the barrier)
    def quad(W):
        return ((W - 0.3) ** 2).sum(1)
    q = interpolate(quad, torch.zeros(5, dtype=torch.float64), torch.ones(5, dtype=torch.float64),
                    num=31, t_min=-1.0, t_max=2.0)
    assert 0.0 <= q.barrier <= 1e-12
    assert float(q.ts.min()) == -1.0 and float(q.ts.max()) == 2.0 and q.error is None


def test_barrier_of_a_double_well_is_the_hand_value():
    def well(W):
        return (W[:, 0] ** 2 - 1) ** 2 + W[:, 1] ** 2  # minima at (+-1, 0), hill 1 at 0
    w_a = torch.tensor([-1.0, 0.0], dtype=torch.float64)
    w_b = torch.tensor([1.0, 0.0], dtype=torch.float64)
    result = interpolate(well, w_a, w_b, num=21)
    assert result.barrier == pytest.approx(1.0, abs=1e-12)
    assert result.barrier_t == pytest.approx(0.5)
    # chord between unequal endpoints: L(t) - ((1-t) L0 + t L1), by hand on a grid
    ts = torch.tensor([0.0, 0.25, 0.5, 1.0], dtype=torch.float64)
    values = torch.tensor([1.0, 3.0, 2.0, 2.0], dtype=torch.float64)
    barrier, t_star = loss_barrier(ts, values)
    assert barrier == pytest.approx(3.0 - 1.25) and t_star == 0.25
    with pytest.raises(ValueError, match="contain 0 and 1"):
        loss_barrier(ts[1:], values[1:])


def test_interpolation_adds_endpoints_and_reports_error_barrier():
    flat, x, y = _softmax_regression()
    w = torch.zeros(flat.num_params, dtype=torch.float64)
    result = interpolate(DatasetEvaluator(flat, x, y), w, w + 1.0, ts=[0.3, 0.6])
    assert result.ts.tolist() == [0.0, 0.3, 0.6, 1.0]
    assert result.barrier_error is not None and result.barrier_error >= 0.0


# --------------------------------------------------------------------------- CKA

def test_cka_identity_invariances_and_independence():
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(400, 12, generator=gen, dtype=torch.float64)
    Y = X @ torch.randn(12, 7, generator=gen, dtype=torch.float64) + 0.5 * torch.randn(
        400, 7, generator=gen, dtype=torch.float64
    )
    Q, _ = torch.linalg.qr(torch.randn(12, 12, generator=gen, dtype=torch.float64))
    for unbiased in (False, True):
        assert linear_cka(X, X, unbiased) == pytest.approx(1.0, abs=1e-12)
        base = linear_cka(X, Y, unbiased)
        assert 0.1 < base < 1.0
        assert linear_cka(X @ Q, Y, unbiased) == pytest.approx(base, rel=1e-10)
        assert linear_cka(3.7 * X, 0.2 * Y, unbiased) == pytest.approx(base, rel=1e-10)
        assert linear_cka(X + 5.0, Y, unbiased) == pytest.approx(base, rel=1e-8)  # centring
        assert linear_cka(X, Y, unbiased) == pytest.approx(linear_cka(Y, X, unbiased), rel=1e-12)
    A = torch.randn(3000, 10, generator=gen, dtype=torch.float64)
    B = torch.randn(3000, 10, generator=gen, dtype=torch.float64)
    assert linear_cka(A, B) < 0.02
    assert abs(linear_cka(A[:1000], B[:1000], unbiased=True)) < 0.02


def test_pairwise_cka_and_covariance_factor():
    gen = torch.Generator().manual_seed(1)
    X = torch.randn(200, 5, generator=gen, dtype=torch.float64)
    same = torch.stack([X, 2 * X, X @ torch.linalg.qr(torch.randn(5, 5, generator=gen, dtype=torch.float64))[0]])
    C = pairwise_cka(same)
    torch.testing.assert_close(C, torch.ones(3, 3, dtype=torch.float64))
    assert cka_covariance(same)["covariance"] == pytest.approx(1.0)


# --------------------------------------------------------------------------- LPF

def test_lpf_with_sigma_to_zero_equals_the_loss():
    flat, x, y = _softmax_regression()
    w = torch.randn(flat.num_params, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    ev = DatasetEvaluator(flat, x, y)
    loss, _ = ev.evaluate(w)
    assert lpf(ev, w, sigma=0.0, m=3).value == pytest.approx(float(loss), rel=1e-12)
    assert lpf(ev, w, sigma=1e-7, m=5).value == pytest.approx(float(loss), rel=1e-6)
    a, b = lpf(ev, w, sigma=0.1, m=4, seed=5), lpf(ev, w, sigma=0.1, m=4, seed=5)
    assert torch.equal(a.losses, b.losses)


def test_lpf_of_a_quadratic_is_loss_plus_half_sigma_squared_trace():
    lam = torch.linspace(1.0, 4.0, 20, dtype=torch.float64)
    def quad(W):
        return 0.5 * (lam[None] * W ** 2).sum(1)
    w = torch.full((20,), 0.2, dtype=torch.float64)
    sigma = 0.3
    result = lpf(quad, w, sigma=sigma, m=4000, seed=1, chunk=500)
    expect = float(quad(w[None])[0]) + 0.5 * sigma ** 2 * float(lam.sum())
    assert abs(result.value - expect) < 4 * result.std_error


def test_perturbation_curve_grows_and_direction_kind_has_fixed_distance():
    def quad(W):
        return (W ** 2).sum(1)
    w = torch.zeros(10, dtype=torch.float64)
    curve = perturbation_curve(quad, w, [0.0, 0.1, 0.5], samples=50, seed=2)
    assert curve.loss[0] == 0.0 and curve.loss[1] < curve.loss[2]
    unit = perturbation_curve(quad, w, [0.5, 2.0], samples=3, kind="direction")
    torch.testing.assert_close(unit.loss, torch.tensor([0.25, 4.0], dtype=torch.float64))


# --------------------------------------------------------------------------- sharpness / Delta_F

def test_one_step_sharpness_of_a_quadratic_is_the_closed_form():
    lam = torch.tensor([1.0, 3.0, 0.5], dtype=torch.float64)
    H = torch.diag(lam)
    def loss_grad(w):
        return (0.5 * w @ H @ w, H @ w)
    w0 = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    rho = 0.1
    g = H @ w0
    delta = rho * g / g.norm()
    expect = float(0.5 * (w0 + delta) @ H @ (w0 + delta) - 0.5 * w0 @ H @ w0)
    result = ball_ascent(loss_grad, w0, rho, steps=1)
    assert result.sharpness == pytest.approx(expect, rel=1e-12)
    torch.testing.assert_close(result.delta, delta)
    more = ball_ascent(loss_grad, w0, rho, steps=5)
    assert more.sharpness >= result.sharpness and float(more.delta.norm()) <= rho + 1e-12


def test_flatness_discrepancy_from_parts_and_on_models():
    assert flatness_discrepancy_from(0.5, [0.2, 0.4], [1, 3]) == pytest.approx(0.5 - 0.35)
    flat, x, y = _softmax_regression()
    w = torch.randn(flat.num_params, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    # one client holding all the data with the global model: no discrepancy
    same = flatness_discrepancy(flat, w, (x, y), w[None], [(x, y)], rho=0.05)
    assert same.delta_f == pytest.approx(0.0, abs=1e-12) and same.global_sharpness > 0
    # two clients: Delta_F = |S(w; D) - sum_i p_i S(w_i; D_i)|
    parts = [(x[:20], y[:20]), (x[20:], y[20:])]
    W = torch.stack([w + 0.1, w - 0.1])
    result = flatness_discrepancy(flat, w, (x, y), W, parts, rho=0.05)
    s = [sharpness(flat, wi, xi, yi, 0.05).sharpness for wi, (xi, yi) in zip(W, parts)]
    hand = abs(sharpness(flat, w, x, y, 0.05).sharpness - (20 * s[0] + 40 * s[1]) / 60)
    assert result.delta_f == pytest.approx(hand, rel=1e-10)
    assert result.weights.tolist() == pytest.approx([1 / 3, 2 / 3])


# --------------------------------------------------------------------------- decomposition

def test_client_global_distance_by_hand():
    W = torch.tensor([[3.0, 4.0], [0.0, 1.0]])
    out = client_global_distance(W, torch.zeros(2))
    assert out["distances"].tolist() == [5.0, 1.0] and out["max"] == 5.0 and out["mean"] == 3.0


def test_bias_terms_split_own_and_other_samples():
    flat, x, y = _softmax_regression()
    gen = torch.Generator().manual_seed(6)
    W = torch.randn(2, flat.num_params, generator=gen, dtype=torch.float64)
    idx = [torch.arange(0, 15), torch.arange(15, 60)]
    out = bias_terms(flat, W, x, y, idx)
    l0, _ = per_sample_losses(flat, W[0], x, y)
    l1, _ = per_sample_losses(flat, W[1], x, y)
    assert out["train_loss"].tolist() == pytest.approx([float(l0[:15].mean()), float(l1[15:].mean())])
    assert out["heter_loss"].tolist() == pytest.approx([float(l0[15:].mean()), float(l1[:15].mean())])
    assert out["train_bias"] == pytest.approx(0.25 * float(l0[:15].mean()) + 0.75 * float(l1[15:].mean()))
    mse = bias_terms(flat, W, x, y, idx, loss="mse")
    assert 0 <= mse["train_bias"] <= 2


def test_ensemble_variance_matches_the_sampling_formula():
    gen = torch.Generator().manual_seed(7)
    outputs = torch.randn(5, 30, 4, generator=gen, dtype=torch.float64)
    out = ensemble_variance(outputs, num_subsets=100)
    V, K = out["variance"], 5
    for m, value in out["variance_by_m"].items():
        assert value == pytest.approx(V * (K - m) / (m * (K - 1)), rel=1e-10, abs=1e-12)


def test_loss_decomposition_runs_on_a_model():
    torch.manual_seed(0)
    flat = FlatModel(build_model("mnist1d_mlp", (40,), 10))
    w = flat.flatten()
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(40, 40, generator=gen)
    y = torch.randint(0, 10, (40,), generator=gen)
    W = w[None] + 0.05 * torch.randn(3, w.numel(), generator=gen)
    idx = [torch.arange(0, 10), torch.arange(10, 25), torch.arange(25, 40)]
    out = loss_decomposition(flat, W, W.mean(0), x, y, idx)
    for key in ("train_bias", "heter_bias", "variance", "covariance", "locality", "mean_distance", "global_loss"):
        assert math.isfinite(out[key]), key
    assert 0 < out["covariance"] <= 1 and out["variance_by_m"][3] == pytest.approx(0.0, abs=1e-12)


# --------------------------------------------------------------------------- probes

def test_perturbation_probes_by_hand():
    g = torch.tensor([1.0, 0.0, 0.0])
    local = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
    torch.testing.assert_close(perturbation_cosine(local, g), torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64))
    assert perturbation_drift(local, g) == pytest.approx((0 + 2 ** 0.5 + 2) / 3)
    assert perturbation_drift(local, g, squared=True) == pytest.approx((0 + 2 + 4) / 3)
    # |d - d_i|^2 = 2 rho^2 (1 - cos) for perturbations of norm rho
    rho = 0.05
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(2, 10, generator=gen, dtype=torch.float64)
    da, db = rho * a / a.norm(), rho * b / b.norm()
    cos = float(perturbation_cosine(db, da)[0])
    assert perturbation_drift(db, da, squared=True) == pytest.approx(2 * rho ** 2 * (1 - cos))
    assert server_perturbation_error(torch.tensor([2.0, 0.0]), torch.tensor([0.0, 3.0]), 0.1) == pytest.approx(
        0.1 * 2**0.5
    )
    assert parameter_norm(torch.tensor([3.0, 4.0])) == 5.0


def test_global_perturbation_has_norm_rho():
    flat, x, y = _softmax_regression()
    w = torch.zeros(flat.num_params, dtype=torch.float64)
    d = global_perturbation(flat, w, x, y, rho=0.05, batch_size=16)
    assert float(d.norm()) == pytest.approx(0.05)


def test_feature_norms_and_client_eigenvalues():
    torch.manual_seed(0)
    flat = FlatModel(build_model("mnist1d_mlp", (40,), 10).double())
    w = flat.flatten()
    gen = torch.Generator().manual_seed(9)
    xs = [
        torch.randn(8, 40, generator=gen, dtype=torch.float64),
        torch.randn(5, 40, generator=gen, dtype=torch.float64),
    ]
    norms = feature_norms(flat, w, xs)
    for value, x in zip(norms, xs):
        assert float(value) == pytest.approx(float(flat.module(x).detach().norm(dim=1).mean()), rel=1e-10)
    ys = [torch.randint(0, 10, (8,), generator=gen), torch.randint(0, 10, (5,), generator=gen)]
    lam = client_top_eigenvalue(flat, torch.stack([w, w]), list(zip(xs, ys)), iters=10)
    ref = power_iteration(DatasetHVP(flat, w, xs[1], ys[1]), k=1, iters=10).eigenvalues[0]
    assert float(lam[1]) == pytest.approx(float(ref), rel=1e-10)


def test_probe_callback_every_k_rounds_and_missing_keys():
    state = {"w": torch.tensor([3.0, 4.0]),
             "local_perturbations": torch.tensor([[1.0, 0.0], [0.0, 1.0]]),
             "global_perturbation": torch.tensor([1.0, 0.0]),
             "prev_pseudo_grad": torch.tensor([1.0, 0.0]), "pseudo_grad": torch.tensor([1.0, 0.0])}
    cb = ProbeCallback([parameter_norm_probe(), perturbation_probe(), delta_eps_probe(0.1),
                        Probe("custom", lambda s: {"a": torch.tensor(2.0)})], every=2)
    assert cb.on_round_end(1, state) == {}
    out = cb.on_round_end(2, state)
    assert out["param_norm"] == 5.0 and out["delta_eps"] == 0.0 and out["custom.a"] == 2.0
    assert out["perturbation.cosine"] == pytest.approx([1.0, 0.0])
    assert out["perturbation.mean_cosine"] == pytest.approx(0.5)
    assert "w" in cb.requires and "pseudo_grad" in cb.requires
    with pytest.raises(KeyError, match="global_perturbation"):
        cb.on_round_end(4, {"w": state["w"]})
