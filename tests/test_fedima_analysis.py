"""FedIMA's analysis artifacts: the snapshot runs and what is computed on their models."""
from __future__ import annotations

import pytest
import torch

from flcore.analysis.recording import load_snapshot
from flcore.papers.fedima import analysis as analysis
from flcore.reproduction.runner import ensure_runs


def test_runs_follow_table_vi_at_the_paper_scale():
    cd = analysis.vis_run("paper").resolve()
    assert (cd.dataset, cd.clients, cd.per_round, cd.local_epochs, cd.batch_size, cd.lr, cd.momentum) == (
        "cifar10", 100, 10, 5, 50, 0.01, 0.9)
    assert (cd.partition, cd.classes_per_client, cd.lr_decay, cd.rounds) == ("shards", 2, 1.0, 400)
    cs = analysis.vis_run("paper", "cross-silo", lr_decay=True).resolve()
    assert (cs.clients, cs.per_round, cs.lr_decay) == (10, 10, 0.99)
    assert set(range(10, 401, 10)) <= set(cs.snapshot_rounds)
    assert {50, 200, 398, 399, 400} <= set(cd.snapshot_rounds)
    assert analysis.vis_run("paper", model="ResNet-18").resolve().model == "resnet18gn"
    fm = analysis.vis_run("paper", partition="dirichlet", dataset="FMNIST").resolve()
    assert (fm.dataset, fm.model, fm.clients, fm.per_round, fm.alpha) == ("fmnist", "fmnist_cnn", 100, 10, 0.1)
    with pytest.raises(ValueError, match="dataset, model"):
        analysis.vis_run("paper", dataset="FMNIST", model="ResNet-18")
    with pytest.raises(ValueError, match="cross-device or cross-silo"):
        analysis.vis_run("small", "cross-region")


def test_fig10_runs_every_pair_and_skew_at_the_paper_scale_and_one_model_below():
    paper = [(spec.labels["dataset"], spec.labels["model"], spec.labels["partition"])
             for spec in analysis.fig10_runs("paper")]
    assert paper == [(d, m, p) for d, m in (("CIFAR-10", "CNN"), ("CIFAR-10", "ResNet-18"), ("FMNIST", "CNN"))
                     for p in ("shards", "dirichlet")]
    assert [spec.resolve().model for spec in analysis.fig10_runs("small")] == ["mnist1d_cnn"] * 2


def test_small_cross_silo_is_ten_clients_on_a_smaller_mnist1d():
    cs = analysis.vis_run("small", "cross-silo").resolve()
    assert (cs.dataset, cs.clients, cs.per_round, cs.num_samples, cs.rounds) == ("mnist1d", 10, 10, 2500, 50)
    assert analysis.stage_rounds("small") == (12, 50, 100)
    assert analysis.last_rounds("small") == (98, 99, 100)
    # the decomposition and plane runs of one setting are one run
    assert analysis.fig8_runs("small")[1].run_id() == analysis.decomposition_runs("small")[0].run_id()


@pytest.mark.slow
def test_planes_lines_and_decomposition_on_a_recorded_run(tmp_path):
    spec = analysis.vis_run("smoke", "cross-silo")
    run_dir = ensure_runs([spec], store=tmp_path, workers=1, log=None)["run_dir"].iloc[0]
    snap = load_snapshot(run_dir, 4)
    W, w = snap["client_models"], snap["w"]
    # FedAvg with equal shards: the global model is the clients' mean
    assert torch.allclose(W.mean(0), w, atol=1e-5)

    plane = analysis.client_plane(run_dir, 4, grid=3, samples=100)
    assert plane.loss.shape == (3, 3)
    assert plane.points["mean_loss"] == pytest.approx(
        float(analysis._test_evaluator(analysis._loaded(run_dir), 100)(W[:3].mean(0))[0]))
    assert torch.allclose(plane.mean_coord, plane.coords.mean(0))
    fig, table = analysis.draw_planes([("a", "a", plane), ("b", "b", plane)])
    titles = {ax.get_title() for ax in fig.axes} - {""}
    assert titles == {"a: loss", "a: error", "b: loss", "b: error"} and list(table["setting"]) == ["a", "b"]
    assert table["cross above the lowest point"].iloc[0] == pytest.approx(
        plane.points["mean_loss"] - float(plane.loss.min()))
    _, panels = analysis.draw_planes([("a", "a", plane)], key="panel", gap=False)
    assert "cross above the lowest point" not in panels and list(panels["panel"]) == ["a"]

    line = analysis.global_interpolation(run_dir, 2, 4, num=3, samples=100)
    ends = analysis._test_evaluator(analysis._loaded(run_dir), 100)(torch.stack([load_snapshot(run_dir, 2)["w"], w]))
    assert line.loss[line.ts == 0].item() == pytest.approx(float(ends[0][0]))
    assert line.loss[line.ts == 1].item() == pytest.approx(float(ends[0][1]))

    frame = analysis.decomposition_over_rounds(run_dir, rounds=[4], samples=100)
    row = frame.iloc[0]
    assert row["locality"] == pytest.approx(float((W - w).norm(dim=1).max()), rel=1e-5)
    assert row["variance_by_m"][10] == pytest.approx(0.0, abs=1e-12)  # all ten averaged: the ensemble itself
    assert row["heter_bias"] > row["train_bias"] > 0
    curve = analysis.variance_curve(frame)
    assert list(curve["clients averaged"]) == list(range(1, 11))


def test_gain_trend_compares_the_mean_gain_at_the_smallest_and_largest_value():
    import pandas as pd

    gains = pd.DataFrame({"panel": ["alpha", "alpha", "alpha", "epochs"], "x": [1.0, 0.1, 0.1, 5],
                          "gain": [-0.5, 1.0, 2.0, 0.3]})
    # alpha: mean at 0.1 is 1.5, at 1.0 is -0.5; one point on epochs is not a trend
    assert analysis.gain_trend(gains, "alpha") == "+1.50 -> -0.50 points from the smallest to the largest value"
    assert analysis.gain_trend(gains, "epochs") == "not measured at this scale"
