"""Geometry of stored runs (flcore.reproduction.run_geometry): spectra, planes, probe records."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from flcore.analysis.evaluation import DatasetEvaluator
from flcore.analysis.hvp import DatasetHVP
from flcore.analysis.io import load_run
from flcore.analysis.spectrum import lanczos_eigenvalues
from flcore.config import resolve_config
from flcore.reproduction import run_geometry as rg
from flcore.store import Run, RunStore

TINY = rg.GeometrySettings(hessian_samples=64, hessian_method="lanczos", top_k=3, iters=12, surface_grid=3,
                           surface_span=0.5, plane_grid=3, loss_samples=64, error_samples=64)


def _stored_run(store, alpha=0.0, seed=0, perturb=0.0, snapshot=False):
    """A run directory holding a (randomly initialised, optionally perturbed) final model:
    what the analysis reads, without training."""
    cfg = resolve_config({"scale": "smoke", "method": "fedavg", "dataset": "mnist1d", "alpha": alpha, "seed": seed,
                          "device": "cpu"})
    run = RunStore(store).create(cfg.run_id(), cfg.canonical())
    from flcore.analysis.io import build_template
    from flcore.data import load_dataset

    data = load_dataset(cfg.dataset, cfg.data_root, download=False, num_samples=cfg.num_samples, seed=cfg.seed)
    flat = build_template(cfg, data.input_shape, data.num_classes)
    w = flat.flatten(flat.module)
    if perturb:
        w = w + perturb * torch.randn(w.shape, generator=torch.Generator().manual_seed(1))
    run.save_final_model(flat.state_dict(w))
    run.set_status("finished", rounds_done=cfg.rounds)
    if snapshot:
        from flcore.analysis.recording import save_snapshot

        gen = torch.Generator().manual_seed(2)
        clients = torch.stack([w + 0.05 * torch.randn(w.shape, generator=gen) for _ in range(4)])
        save_snapshot(run, cfg.rounds, w, clients, torch.tensor([7, 3, 5, 1]))  # its digest recorded
    return run.path


def test_spectrum_is_that_of_the_stored_model_on_the_training_subset(tmp_path):
    run_dir = _stored_run(tmp_path, perturb=0.02)
    values = rg.hessian_spectrum(run_dir, TINY)
    assert values.shape == (3,) and np.all(np.diff(values) <= 0)
    # independent: the same model and subset, a long Lanczos run
    loaded = load_run(run_dir, which="final")
    x, y = loaded.data("train", 64, seed=0)
    reference = lanczos_eigenvalues(DatasetHVP(loaded.flat, loaded.w, x, y), k=1, iters=40).eigenvalues
    assert values[0] == pytest.approx(float(reference[0]), rel=1e-3)


def test_spectrum_is_cached_and_recomputed_when_the_model_changes(tmp_path, monkeypatch):
    run_dir = _stored_run(tmp_path)
    first = rg.hessian_spectrum(run_dir, TINY)
    calls = []
    real = rg.load_run
    monkeypatch.setattr(rg, "load_run", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    assert np.array_equal(rg.hessian_spectrum(run_dir, TINY), first) and not calls
    # another model in the same run directory: a new key, a new value
    other = _stored_run(tmp_path / "other", perturb=0.5)
    # written through the store (a file copied in by hand is refused: no digest of it)
    Run(run_dir, run_dir.name).save_final_model(Run(other, other.name).load_final_model())
    second = rg.hessian_spectrum(run_dir, TINY)
    assert calls and not np.allclose(second, first)


def test_lambda_max_metric_reads_finished_runs_only(tmp_path):
    run_dir = _stored_run(tmp_path)
    row = {"run_dir": str(run_dir), "status": "finished"}
    # the metric uses the run's own scale (smoke)
    assert rg.lambda_max_of_row(row) == pytest.approx(float(rg.hessian_spectrum(run_dir, rg.GEOMETRY["smoke"])[0]))
    assert rg.lambda_max_of_row({**row, "status": "running"}) is None
    assert rg.lambda_max_of_row({"run_dir": None, "status": "finished"}) is None


def test_sharpness_ratio_by_hand():
    assert rg.sharpness_ratio([10.0, 8.0, 6.0, 5.0, 4.0]) == pytest.approx(2.5)
    assert rg.sharpness_ratio([4.0, 10.0, 8.0, 6.0, 5.0]) == pytest.approx(2.5)  # order does not matter
    assert math.isnan(rg.sharpness_ratio([10.0, 8.0]))


def test_plane_through_three_runs_puts_them_where_they_are(tmp_path):
    dirs = [_stored_run(tmp_path / str(i), perturb=p) for i, p in enumerate((0.0, 0.05, 0.1))]
    surface = rg.global_models_plane(dirs, TINY)
    assert surface.loss.shape == (3, 3) and surface.error.shape == (3, 3)
    assert surface.coords[0].tolist() == [0.0, 0.0] and surface.coords[1, 1] == 0.0
    # the values at the models are the models' own, evaluated directly
    loaded = [load_run(d, which="final") for d in dirs]
    x, y = loaded[0].data("train", 64, seed=0)
    direct = DatasetEvaluator(loaded[0].flat, x, y)(torch.stack([ln.w for ln in loaded]))[0].numpy()
    assert np.allclose(surface.model_loss[:3], direct, rtol=1e-6)
    assert surface.model_loss.shape == (4,)  # and their average


def test_plane_refuses_runs_on_other_data(tmp_path):
    a = _stored_run(tmp_path / "a")
    cfg = resolve_config({"scale": "smoke", "method": "fedavg", "dataset": "synthetic", "device": "cpu"})
    run = RunStore(tmp_path / "b").create(cfg.run_id(), cfg.canonical())
    from flcore.analysis.io import build_template
    from flcore.data import load_dataset

    data = load_dataset(cfg.dataset, cfg.data_root, download=False, num_samples=cfg.num_samples, seed=cfg.seed)
    flat = build_template(cfg, data.input_shape, data.num_classes)
    run.save_final_model(flat.state_dict(flat.flatten(flat.module)))
    with pytest.raises(ValueError, match="differ in dataset"):
        rg.global_models_plane([a, a, run.path], TINY)


def test_client_plane_uses_the_snapshot_clients(tmp_path):
    run_dir = _stored_run(tmp_path, snapshot=True)
    surface, ids = rg.client_models_plane(run_dir, clients=(1, 2, 3), settings=TINY)
    assert ids == [3, 5, 1]
    with pytest.raises(ValueError, match="positions 0..3"):
        rg.client_models_plane(run_dir, clients=(0, 1, 4), settings=TINY)
    with pytest.raises(FileNotFoundError, match="no snapshot"):
        rg.client_models_plane(_stored_run(tmp_path / "plain"), settings=TINY)


def test_probe_history_reads_both_record_shapes():
    metrics = pd.DataFrame({"round": [10, 20, 25],
                            "client_lambda_max.values": [[1.0, 2.0], [3.0, None], float("nan")],
                            "client_lambda_max.clients": [[4, 9], [0, 2], float("nan")],
                            "feature_norms": [[0.5, 0.6, 0.7], float("nan"), [1.0, 1.1, 1.2]]})
    lam = rg.probe_history(metrics, "client_lambda_max")
    assert lam.values.tolist()[:2] == [[10, 0, 4, 1.0], [10, 1, 9, 2.0]]
    assert lam["client"].tolist() == [4, 9, 0, 2] and math.isnan(lam["value"].iloc[3])
    norms = rg.probe_history(metrics, "feature_norms")
    assert norms["round"].tolist() == [10] * 3 + [25] * 3 and norms["client"].tolist() == [0, 1, 2] * 2
    assert rg.probe_history(metrics, "param_norm").empty


def test_client_spread_by_hand():
    history = pd.DataFrame({"round": [1, 1, 2, 2], "value": [1.0, 3.0, 2.0, 2.0]})
    assert rg.client_spread(history) == pytest.approx((1.0 / 2.0 + 0.0) / 2)


def test_majority_class_is_each_clients_most_frequent_label(tmp_path):
    run_dir = _stored_run(tmp_path, alpha=0.0)
    loaded = load_run(run_dir)
    classes = rg.client_majority_class(run_dir)
    assert len(classes) == len(loaded.client_indices())
    for k, indices in enumerate(loaded.client_indices()):
        counts = torch.bincount(loaded.dataset.train_y[indices], minlength=10)
        assert counts[classes[k]] == counts.max()
        # alpha = 0 (Hsu et al.): a client's data is dominated by one class
        assert counts[classes[k]] >= 0.5 * len(indices)


def test_settings_are_checked():
    with pytest.raises(ValueError, match="hessian_method"):
        rg.GeometrySettings(1, "qr", 1, 1, 3, 1.0, 3, None, None)
    with pytest.raises(ValueError, match="scale must be"):
        rg.geometry_settings("huge")
    assert rg.GEOMETRY["paper"].top_k == 50 and rg.GEOMETRY["paper"].hessian_method == "power"


def test_cpu_computations_run_on_one_thread_and_restore_the_count():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        seen = []
        rg._on_one_thread("cpu")(lambda: seen.append(torch.get_num_threads()))()
        assert seen == [1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_the_pages_spectrum_is_the_metrics_cached_value(tmp_path, monkeypatch):
    run_dir = _stored_run(tmp_path, perturb=0.02)
    row = {"run_dir": str(run_dir), "status": "finished"}
    spectrum = rg.spectrum_of_row(row)  # the run's scale (smoke), as Table 1's page asks for it
    assert np.array_equal(spectrum, rg.hessian_spectrum(run_dir, rg.GEOMETRY["smoke"]))
    calls = []
    real = rg.load_run
    monkeypatch.setattr(rg, "load_run", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    # the verdict's metric reads the page's value from the cache: nothing is loaded again
    assert rg.lambda_max_of_row(row) == float(spectrum[0]) and not calls
    assert rg.spectrum_of_row({**row, "status": "diverged"}) is None
    assert rg.spectrum_of_row({"run_dir": str(tmp_path / "absent"), "status": "finished"}) is None
