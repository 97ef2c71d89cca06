"""Landscapes, filter normalisation, the plane through three models and evaluators."""
import pytest
import torch
from torch import nn

from flcore.analysis import (
    DatasetEvaluator,
    filter_normalize,
    filter_norms,
    grid_points,
    landscape_1d,
    landscape_2d,
    landscapes_on_datasets,
    loss_plane,
    model_outputs,
    plane_through,
    random_direction,
    random_directions,
)
from flcore.flat import FlatModel
from flcore.models import build_model


def _quadratic(dim=12, seed=0):
    """L(w) = 1/2 (w - w*)^T H (w - w*) with H's eigenvectors Q and eigenvalues lam."""
    gen = torch.Generator().manual_seed(seed)
    Q, _ = torch.linalg.qr(torch.randn(dim, dim, generator=gen, dtype=torch.float64))
    lam = torch.linspace(0.5, 6.0, dim, dtype=torch.float64)
    H = Q @ torch.diag(lam) @ Q.T
    w_star = torch.randn(dim, generator=gen, dtype=torch.float64)

    def evaluate(W):
        D = W - w_star[None]
        return 0.5 * ((D @ H) * D).sum(1), None
    return evaluate, H, Q, lam, w_star


def test_landscape_2d_of_a_quadratic_along_eigenvectors_is_the_closed_form():
    evaluate, H, Q, lam, w_star = _quadratic()
    d1, d2 = Q[:, 0], Q[:, 3]
    xs, ys = grid_points(1.5, 7), grid_points(0.5, 5)
    surface = landscape_2d(evaluate, w_star, d1, d2, xs, ys, chunk=4)
    a, b = torch.meshgrid(xs, ys, indexing="ij")
    torch.testing.assert_close(surface.loss, 0.5 * (lam[0] * a ** 2 + lam[3] * b ** 2))
    assert surface.error is None and surface.loss.shape == (7, 5)


def test_landscape_of_a_quadratic_along_general_orthonormal_directions():
    evaluate, H, Q, lam, w_star = _quadratic(seed=1)
    gen = torch.Generator().manual_seed(5)
    D, _ = torch.linalg.qr(torch.randn(12, 2, generator=gen, dtype=torch.float64))
    w0 = w_star + 0.3 * torch.randn(12, generator=gen, dtype=torch.float64)
    surface = landscape_2d(evaluate, w0, D[:, 0], D[:, 1])  # default 21 x 21 on [-1, 1]^2
    delta = w0 - w_star
    for i, a in enumerate(surface.xs):
        for j, b in enumerate(surface.ys):
            p = delta + a * D[:, 0] + b * D[:, 1]
            assert float(surface.loss[i, j]) == pytest.approx(float(0.5 * p @ H @ p), rel=1e-12, abs=1e-12)
    line = landscape_1d(evaluate, w0, D[:, 0], grid_points(2.0, 9))
    expect = [float(0.5 * (delta + a * D[:, 0]) @ H @ (delta + a * D[:, 0])) for a in line.alphas]
    torch.testing.assert_close(line.loss, torch.tensor(expect, dtype=torch.float64))


def _cnn1d(seed=0):
    torch.manual_seed(seed)
    return FlatModel(build_model("mnist1d_cnn", (40,), 10))


def test_filter_normalization_preserves_per_filter_norms():
    flat = _cnn1d()
    w = flat.flatten()
    d = random_direction(flat, w, seed=3)
    wn, dn = filter_norms(flat, w), filter_norms(flat, d)
    for name, shape in zip(flat.names, flat.shapes):
        if len(shape) >= 2:
            torch.testing.assert_close(dn[name], wn[name], rtol=1e-5, atol=1e-7)
        else:  # biases: ignored as in Li et al. (ignore='biasbn')
            assert float(dn[name]) == 0.0
    # one_d="norm" gives 1-D tensors the tensor norm; "layer" matches whole tensors
    d_norm = random_direction(flat, w, seed=3, one_d="norm")
    d_layer = random_direction(flat, w, seed=3, normalization="layer")
    segments = flat.unflatten(w)
    for name, shape in zip(flat.names, flat.shapes):
        ref = segments[name].norm()
        if len(shape) < 2:
            assert float(flat.unflatten(d_norm)[name].norm()) == pytest.approx(float(ref), rel=1e-5)
        assert float(flat.unflatten(d_layer)[name].norm()) == pytest.approx(
            float(ref) if len(shape) >= 2 else 0.0, rel=1e-5, abs=1e-7)
    d_model = random_direction(flat, w, seed=3, normalization="model")
    assert float(d_model.norm()) == pytest.approx(float(w.norm()), rel=1e-5)


def test_filter_normalization_of_a_known_direction():
    module = nn.Sequential(nn.Linear(3, 2), nn.Conv1d(1, 2, 2))
    flat = FlatModel(module)
    w = torch.arange(1.0, flat.num_params + 1)
    d = torch.ones(flat.num_params)
    out = filter_normalize(flat, d, w)
    views = flat.unflatten(out)
    # linear weight rows [1,2,3] and [4,5,6]: direction rows become (|w_row|/sqrt(3)) * ones
    torch.testing.assert_close(views["0.weight"][0], torch.full((3,), (14 ** 0.5) / 3 ** 0.5))
    torch.testing.assert_close(views["0.weight"][1], torch.full((3,), (77 ** 0.5) / 3 ** 0.5))
    assert views["0.bias"].abs().sum() == 0 and views["1.bias"].abs().sum() == 0


def test_random_directions_repeat_and_differ_by_index():
    flat = _cnn1d()
    w = flat.flatten()
    a = random_directions(flat, w, num=2, seed=11)
    b = random_directions(flat, w, num=2, seed=11)
    assert torch.equal(a, b)
    assert not torch.allclose(a[0], a[1])
    assert not torch.equal(a, random_directions(flat, w, num=2, seed=12))


def test_plane_through_three_models_reproduces_them():
    gen = torch.Generator().manual_seed(0)
    t1, t2, t3 = (torch.randn(50, generator=gen, dtype=torch.float64) for _ in range(3))
    plane = plane_through(t1, t2, t3)
    for (x, y), theta in zip(plane.coords.tolist(), (t1, t2, t3)):
        torch.testing.assert_close(plane.point(x, y), theta)
    assert float(plane.u @ plane.v) == pytest.approx(0.0, abs=1e-12)
    assert float(plane.u.norm()) == pytest.approx(1.0) and float(plane.v.norm()) == pytest.approx(1.0)
    torch.testing.assert_close(plane.project((t1 + t2 + t3) / 3), plane.mean_coord)
    assert plane.coords[0].tolist() == [0.0, 0.0] and plane.coords[1, 1] == 0.0
    with pytest.raises(ValueError, match="collinear"):
        plane_through(t1, t2, 2 * t2 - t1)


def test_loss_plane_grid_covers_models_and_matches_closed_form():
    evaluate, H, Q, lam, w_star = _quadratic(dim=8, seed=2)
    gen = torch.Generator().manual_seed(9)
    t1, t2, t3 = (w_star + torch.randn(8, generator=gen, dtype=torch.float64) for _ in range(3))
    result = loss_plane(evaluate, t1, t2, t3, grid=11, margin=0.2)
    c = result.coords
    assert float(result.xs.min()) < float(c[:, 0].min()) and float(result.xs.max()) > float(c[:, 0].max())
    assert float(result.ys.min()) < float(c[:, 1].min()) and float(result.ys.max()) > float(c[:, 1].max())
    for i in (0, 5, 10):
        for j in (0, 3, 10):
            p = result.plane.point(float(result.xs[i]), float(result.ys[j])) - w_star
            assert float(result.loss[i, j]) == pytest.approx(float(0.5 * p @ H @ p), rel=1e-10)
    out = result.to_dict()
    assert len(out["model_coords"]) == 3 and len(out["mean_coord"]) == 2


def _tiny_data(n=50, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, 40, generator=gen), torch.randint(0, 10, (n,), generator=gen)


def test_dataset_evaluator_matches_flat_evaluate_and_vmap_matches_loop():
    flat = _cnn1d()
    w = flat.flatten()
    x, y = _tiny_data()
    acc, loss = flat.evaluate(w, x, y, batch_size=16)
    ev = DatasetEvaluator(flat, x, y, batch_size=16)
    loss_value, e = ev.evaluate(w)
    assert float(loss_value) == pytest.approx(float(loss), rel=1e-6)
    assert float(e) == pytest.approx(1 - float(acc), abs=1e-12)
    W = w[None] + 0.05 * torch.randn(5, w.numel(), generator=torch.Generator().manual_seed(1))
    looped = DatasetEvaluator(flat, x, y, batch_size=16, points_per_pass=1)(W)
    vmapped = DatasetEvaluator(flat, x, y, batch_size=16, points_per_pass=3)(W)
    torch.testing.assert_close(looped[0], vmapped[0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(looped[1], vmapped[1])


def test_model_landscape_center_is_the_model_loss_and_shared_directions():
    flat = _cnn1d()
    w = flat.flatten()
    x, y = _tiny_data()
    xl, yl = x[:20], y[:20]
    d1, d2 = random_directions(flat, w, num=2, seed=0)
    xs = grid_points(1.0, 3)
    surfaces = landscapes_on_datasets({"local": DatasetEvaluator(flat, xl, yl), "global": DatasetEvaluator(flat, x, y)},
                                      w, d1, d2, xs, xs)
    assert float(surfaces["global"].loss[1, 1]) == pytest.approx(float(flat.evaluate(w, x, y)[1]), rel=1e-6)
    assert float(surfaces["local"].loss[1, 1]) == pytest.approx(float(flat.evaluate(w, xl, yl)[1]), rel=1e-6)
    assert surfaces["local"].error.shape == (3, 3)


def test_model_outputs_features_and_probs():
    flat = _cnn1d()
    w = flat.flatten()
    x, _ = _tiny_data(n=7)
    feats = model_outputs(flat, w, x, "features", batch_size=3)
    torch.testing.assert_close(feats, flat.module.features(x).detach().reshape(7, -1))
    probs = model_outputs(flat, w, x, "probs")
    torch.testing.assert_close(probs.sum(1), torch.ones(7))


def test_evaluator_channels_last_matches_default_on_images():
    torch.manual_seed(0)
    module = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))
    flat = FlatModel(module)
    w = flat.flatten()
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(10, 3, 8, 8, generator=gen), torch.randint(0, 5, (10,), generator=gen)
    W = w[None] + 0.1 * torch.randn(3, w.numel(), generator=gen)
    a = DatasetEvaluator(flat, x, y, batch_size=4, channels_last=False)(W)
    b = DatasetEvaluator(flat, x, y, batch_size=4, channels_last=True, points_per_pass=2)(W)
    torch.testing.assert_close(a[0], b[0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(a[1], b[1])


def test_plots_draw_a_plane_a_curve_and_a_density(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from flcore.analysis import matrix_hvp, slq_density
    from flcore.report.analysis_plots import plot_curve_1d, plot_density, plot_surface_2d, save_figure

    evaluate, H, Q, lam, w_star = _quadratic(dim=6, seed=3)
    gen = torch.Generator().manual_seed(2)
    t1, t2, t3 = (w_star + torch.randn(6, generator=gen, dtype=torch.float64) for _ in range(3))
    plane = loss_plane(evaluate, t1, t2, t3, grid=5)
    ax = plot_surface_2d(plane, title="plane")
    assert len(ax.collections) >= 3  # contours + models + mean
    save_figure(ax, tmp_path / "plane.png")
    ax = plot_curve_1d([0.0, 0.5, 1.0], [1.0, 2.0, 1.5], mark_endpoints=True, label="a")
    save_figure(ax, tmp_path / "curve.png")
    ax = plot_density(slq_density(matrix_hvp(H), iters=6))
    save_figure(ax, tmp_path / "density.png")
    assert all((tmp_path / f).stat().st_size > 0 for f in ("plane.png", "curve.png", "density.png"))
