"""Hessian-vector products and spectra against closed forms (flcore.analysis.hvp/spectrum)."""
import math

import pytest
import torch
from torch import nn

from flcore.analysis import (
    DatasetHVP,
    hutchinson_trace,
    lanczos_eigenvalues,
    matrix_hvp,
    power_iteration,
    slq_density,
    top_eigenvalues,
)
from flcore.flat import FlatModel
from flcore.models import build_model

# known spectrum with a negative eigenvalue (small in magnitude, so the top-5 by
# magnitude are the top-5 by value)
EIGS = torch.tensor([10.0, 8.0, 6.0, 5.0, 4.0] + [0.1 * i for i in range(1, 35)] + [-1.0],
                    dtype=torch.float64)


def _known_hessian(eigs=EIGS, seed=0):
    gen = torch.Generator().manual_seed(seed)
    Q, _ = torch.linalg.qr(torch.randn(eigs.numel(), eigs.numel(), generator=gen, dtype=torch.float64))
    return Q @ torch.diag(eigs) @ Q.T, Q


def _linear_softmax(seed=0, n=23, d=5, c=3):
    torch.manual_seed(seed)
    module = nn.Linear(d, c).double()
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(n, d, generator=gen, dtype=torch.float64)
    y = torch.randint(0, c, (n,), generator=gen)
    flat = FlatModel(module)
    return flat, flat.flatten(), x, y


def _explicit_hessian(flat, w, x, y):
    def mean_loss(v):
        return torch.nn.functional.cross_entropy(flat.forward(v, x), y)
    return torch.autograd.functional.hessian(mean_loss, w)


# --------------------------------------------------------------------------- HVP

@pytest.mark.parametrize("method", ["double_backward", "jvp"])
def test_dataset_hvp_equals_explicit_hessian_of_linear_softmax(method):
    flat, w, x, y = _linear_softmax()
    H = _explicit_hessian(flat, w, x, y)
    hvp = DatasetHVP(flat, w, x, y, batch_size=7, method=method)  # ragged batches: 7+7+7+2
    gen = torch.Generator().manual_seed(3)
    for _ in range(3):
        v = torch.randn(w.numel(), generator=gen, dtype=torch.float64)
        torch.testing.assert_close(hvp(v), H @ v, rtol=1e-9, atol=1e-11)
    assert hvp.num_calls == 3 and hvp.dim == w.numel()


def test_dataset_hvp_equals_finite_difference_of_gradients():
    torch.manual_seed(0)
    flat = FlatModel(build_model("mnist1d_mlp", (40,), 10).double())
    w = flat.flatten()
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(64, 40, generator=gen, dtype=torch.float64)
    y = torch.randint(0, 10, (64,), generator=gen)
    v = torch.randn(w.numel(), generator=gen, dtype=torch.float64)
    v /= v.norm()

    def grad(at):
        at = at.clone().requires_grad_(True)
        loss = torch.nn.functional.cross_entropy(flat.forward(at, x), y)
        return torch.autograd.grad(loss, at)[0]

    eps = 1e-5
    fd = (grad(w + eps * v) - grad(w - eps * v)) / (2 * eps)
    hv = DatasetHVP(flat, w, x, y, batch_size=20)(v)
    assert torch.allclose(hv, fd, rtol=1e-5, atol=1e-8)


def test_power_iteration_on_a_model_matches_eigvalsh():
    flat, w, x, y = _linear_softmax()
    H = _explicit_hessian(flat, w, x, y)
    exact = torch.linalg.eigvalsh(H).flip(0)
    result = power_iteration(DatasetHVP(flat, w, x, y, batch_size=10), k=2, iters=100, tol=0)
    torch.testing.assert_close(result.eigenvalues, exact[:2], rtol=1e-4, atol=1e-6)


# --------------------------------------------------------------------------- spectra

def test_power_iteration_with_deflation_recovers_top_k_in_order():
    H, Q = _known_hessian()
    result = power_iteration(matrix_hvp(H), k=5, iters=400, tol=0, seed=1)
    torch.testing.assert_close(result.eigenvalues, EIGS[:5], rtol=1e-6, atol=1e-6)
    assert result.eigenvalues.tolist() == sorted(result.eigenvalues.tolist(), reverse=True)
    # eigenvectors match up to sign
    overlap = (result.eigenvectors @ Q[:, :5]).abs().diagonal()
    assert torch.all(overlap > 1 - 1e-5)
    assert result.num_hvps == 5 * 400


def test_power_iteration_is_repeatable_and_stops_early_with_tol():
    H, _ = _known_hessian()
    a = power_iteration(matrix_hvp(H), k=2, iters=50, tol=1e-3, seed=7)
    b = power_iteration(matrix_hvp(H), k=2, iters=50, tol=1e-3, seed=7)
    assert torch.equal(a.eigenvalues, b.eigenvalues)
    assert max(a.iterations) < 50
    fixed = power_iteration(matrix_hvp(H), k=1, iters=20, tol=0)
    assert fixed.iterations == [20]


def test_power_iteration_finds_largest_magnitude_first():
    H, _ = _known_hessian(torch.tensor([3.0, -7.0, 1.0, 0.5], dtype=torch.float64))
    result = power_iteration(matrix_hvp(H), k=2, iters=300, tol=0)
    torch.testing.assert_close(result.eigenvalues, torch.tensor([-7.0, 3.0], dtype=torch.float64))


def test_lanczos_recovers_top_k_and_bottom():
    H, _ = _known_hessian()
    top = lanczos_eigenvalues(matrix_hvp(H), k=5, iters=40)
    torch.testing.assert_close(top.eigenvalues, EIGS[:5], rtol=1e-8, atol=1e-8)
    bottom = lanczos_eigenvalues(matrix_hvp(H), k=1, iters=40, which="SA")
    assert math.isclose(float(bottom.eigenvalues[0]), -1.0, abs_tol=1e-8)
    # fewer steps than the dimension still resolve the well-separated top eigenvalue
    few = top_eigenvalues(matrix_hvp(H), k=1, method="lanczos", iters=20)
    assert math.isclose(float(few.eigenvalues[0]), 10.0, rel_tol=1e-4)


def test_lanczos_eigenvectors_are_eigenvectors():
    H, _ = _known_hessian()
    result = lanczos_eigenvalues(matrix_hvp(H), k=3, iters=40, return_vectors=True)
    for lam, v in zip(result.eigenvalues, result.eigenvectors):
        torch.testing.assert_close(H @ v, lam * v, atol=1e-8, rtol=0)


def test_hutchinson_trace_within_tolerance_and_exact_for_diagonal():
    H, _ = _known_hessian()
    est = hutchinson_trace(matrix_hvp(H), samples=1000, seed=2)
    true = float(EIGS.sum())
    assert abs(est.trace - true) < 4 * est.std_error + 1e-9
    assert abs(est.trace - true) / true < 0.05
    D = torch.diag(torch.tensor([3.0, -1.0, 2.5, 7.0], dtype=torch.float64))
    exact = hutchinson_trace(matrix_hvp(D), samples=3)
    assert exact.trace == pytest.approx(11.5, abs=1e-12)
    assert exact.std_error == pytest.approx(0.0, abs=1e-12)
    gauss = hutchinson_trace(matrix_hvp(H), samples=2000, distribution="gaussian", seed=3)
    assert abs(gauss.trace - true) < 4 * gauss.std_error


def test_slq_density_puts_mass_on_the_known_eigenvalues_and_integrates_to_one():
    eigs = torch.tensor([-2.0] * 5 + [1.0] * 10 + [6.0] * 5, dtype=torch.float64)
    H, _ = _known_hessian(eigs)
    density = slq_density(matrix_hvp(H), runs=8, iters=30, seed=4)
    # each run: nodes are the distinct eigenvalues, weights sum to 1
    torch.testing.assert_close(density.weights.sum(1), torch.ones(8, dtype=torch.float64))
    for value, share in ((-2.0, 0.25), (1.0, 0.5), (6.0, 0.25)):
        near = ((density.nodes - value).abs() < 1e-6) * density.weights
        assert abs(float(near.sum(1).mean()) - share) < 0.1
    grid = density.grid(num=4000)
    values = density.density(grid, sigma=0.05)
    assert float(torch.trapezoid(values, grid)) == pytest.approx(1.0, abs=1e-3)
    # the density peaks at the eigenvalues, not between them
    def at(t):
        return float(density.density(torch.tensor([t], dtype=torch.float64), sigma=0.05)[0])
    assert at(1.0) > 10 * at(3.5)


def test_operator_without_dim_needs_dim():
    H, _ = _known_hessian()
    with pytest.raises(ValueError, match="dim"):
        power_iteration(lambda v: H @ v, k=1)
    result = power_iteration(lambda v: H @ v, k=1, iters=200, tol=0, dim=H.shape[0], dtype=torch.float64)
    assert math.isclose(float(result.eigenvalues[0]), 10.0, rel_tol=1e-6)


def _tiny_conv2d(seed=0):
    torch.manual_seed(seed)
    module = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))
    flat = FlatModel(module)
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(12, 3, 8, 8, generator=gen)
    y = torch.randint(0, 5, (12,), generator=gen)
    return flat, flat.flatten(), x, y


def test_hvp_cached_graph_and_channels_last_give_the_same_product():
    flat, w, x, y = _tiny_conv2d()
    v = torch.randn(w.numel(), generator=torch.Generator().manual_seed(2))
    plain = DatasetHVP(flat, w, x, y, batch_size=5, cache_graph=False, channels_last=False)
    ref = plain(v)
    cached = DatasetHVP(flat, w, x, y, batch_size=5, cache_graph=True, channels_last=True)
    torch.testing.assert_close(cached(v), ref, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(cached(2 * v), 2 * ref, rtol=1e-4, atol=1e-6)  # graph reused
    assert cached._graphs is not None and len(cached._graphs) == 3
    cached.release()
    assert cached._graphs is None
    # auto: cache exactly when the data is one batch
    assert DatasetHVP(flat, w, x, y, batch_size=12).cache_graph
    assert not DatasetHVP(flat, w, x, y, batch_size=5).cache_graph
