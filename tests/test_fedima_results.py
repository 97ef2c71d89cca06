"""FedIMA's result artifacts (Tables I-III, Figs. 6-7): run specs, metrics, claim cells."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from flcore.papers.fedima import runs as fedima
from flcore.reproduction.artifacts import get_artifact
from flcore.reproduction.claims import METRICS, all_claims, labels_match
from flcore.store import RunStore


def test_rounds_to_target_smooths_then_takes_the_first_crossing():
    curve = [(1, 0.1), (2, 0.9), (3, 0.2), (4, 0.9), (5, 0.9)]
    assert fedima.rounds_to_target(curve, 0.6) == 2
    # windows of three: round 3 -> 0.4, round 4 -> 0.667
    assert fedima.rounds_to_target(curve, 0.6, smooth=3) == 4
    assert fedima.rounds_to_target(curve, 0.95, smooth=1) is None


def test_last_rounds_accuracy_is_the_mean_of_the_last_ten_evaluations():
    metrics = [{"round": r, "test_accuracy": r / 100} for r in range(1, 21)] + [{"round": 21}]
    assert fedima.last_rounds_accuracy(metrics) == pytest.approx(sum(range(11, 21)) / 1000)
    assert fedima.last_rounds_accuracy([{"round": 1}]) is None


def test_small_maps_every_row_to_mnist1d_and_rows_of_one_partition_share_runs():
    specs = fedima.table1_runs("small")
    assert len(specs) == 7 * 16
    assert len({s.run_id() for s in specs}) == 2 * 16  # the CIFAR-100 row adds cells, not runs
    by = {(s.labels["dataset"], s.labels["model"], s.labels["partition"], s.labels["algorithm"]): s for s in specs}
    assert (by["FMNIST", "CNN", "dirichlet", "FedAvg+IMA"].run_id()
            == by["CIFAR-10", "ResNet-18", "dirichlet", "FedAvg+IMA"].run_id()
            == by["CIFAR-100", "VGG-11", "dirichlet", "FedAvg+IMA"].run_id())  # T 300 and 400 scale alike
    cfg = by["CIFAR-10", "CNN", "pathological", "FedProx+IMA"].resolve()
    assert (cfg.dataset, cfg.partition, cfg.classes_per_client, cfg.rounds, cfg.ima_start) == (
        "mnist1d", "shards", 2, 100, 75)
    assert (cfg.lr_decay, cfg.ima_gamma, cfg.ima_gamma_late, cfg.ima_window, cfg.eval_every) == (
        0.99, 0.99, 0.97, 5, 1)


def test_paper_scale_is_the_papers_protocol():
    specs = fedima.table1_runs("paper")
    assert len(specs) == len({s.run_id() for s in specs}) == 9 * 16
    spec = next(s for s in specs if s.labels["algorithm"] == "FedAvg+IMA" and s.labels["model"] == "ResNet-18")
    cfg = spec.resolve()
    assert (cfg.dataset, cfg.model, cfg.clients, cfg.per_round, cfg.local_epochs, cfg.batch_size) == (
        "cifar10", "resnet18gn", 100, 10, 5, 50)
    assert (cfg.lr, cfg.momentum, cfg.weight_decay, cfg.rounds, cfg.ima_start) == (0.01, 0.9, 1e-3, 400, 300)
    starts = sorted(s.resolve().ima_start for s in fedima.table2_runs("paper") if s.labels["ima"])
    assert sorted(set(starts)) == [150, 200, 250, 300]


def test_paper_scale_runs_the_fmnist_and_cifar100_rows_on_their_data_and_models():
    specs = fedima.table1_runs("paper")
    resolved = {(s.labels["dataset"], s.labels["model"], s.labels["table_row"]): s.resolve() for s in specs
                if s.labels["algorithm"] == "FedAvg+IMA"}
    assert set(resolved) == {("FMNIST", "CNN", "shards"), ("FMNIST", "CNN", "dirichlet"),
                             ("CIFAR-10", "CNN", "shards"), ("CIFAR-10", "CNN", "dirichlet"),
                             ("CIFAR-10", "ResNet-18", "shards"), ("CIFAR-10", "ResNet-18", "dirichlet"),
                             ("CIFAR-100", "VGG-11", "row 1"), ("PACS", "AlexNet", "row 1 (+FS)"),
                             ("PACS", "AlexNet", "row 2 (+FS)")}
    fmnist = resolved["FMNIST", "CNN", "dirichlet"]
    assert (fmnist.dataset, fmnist.model, fmnist.rounds, fmnist.ima_start, fmnist.alpha) == (
        "fmnist", "fmnist_cnn", 300, 225, 0.1)
    assert resolved["FMNIST", "CNN", "shards"].partition == "shards"
    cifar100 = resolved["CIFAR-100", "VGG-11", "row 1"]
    assert (cifar100.dataset, cifar100.model, cifar100.partition, cifar100.alpha, cifar100.rounds,
            cifar100.ima_start) == ("cifar100", "vgg11gn", "dirichlet", 0.1, 300, 225)
    assert (cifar100.clients, cifar100.per_round, cifar100.local_epochs, cifar100.batch_size, cifar100.lr) == (
        100, 10, 5, 50, 0.01)
    # the published rows these runs are compared with exist
    from flcore.reproduction.published import published

    keys = set(map(tuple, published("fedima-table-1")[["dataset", "model", "partition"]].values.tolist()))
    assert {key for key in resolved} <= keys


def test_paper_scale_fmnist_row_trains_end_to_end_on_torchvision_format_data(tmp_path):
    from flcore.api import run_experiment
    from flcore.data import write_fake_fmnist
    from flcore.data.checksums import expected_checksums

    spec = next(s for s in fedima.table1_runs("paper") if s.labels["dataset"] == "FMNIST"
                and s.labels["table_row"] == "dirichlet" and s.labels["algorithm"] == "FedAvg+IMA")
    md5s = write_fake_fmnist(tmp_path / "data", num_train=120, num_test=20)
    config = {**spec.config, "clients": 4, "per_round": 2, "samples_per_client": 30, "rounds": 2, "ima_start": 1,
              "local_epochs": 1, "batch_size": 10, "data_root": str(tmp_path / "data")}
    with expected_checksums("fmnist", md5s):
        summary = run_experiment(config, store=tmp_path / "runs")
    assert summary["status"] == "finished" and summary["rounds_done"] == 2
    assert 0.0 <= summary["final_accuracy"] <= 1.0


def test_paper_scale_runs_the_pacs_rows_with_table_viis_protocol():
    specs = [s for s in fedima.table1_runs("paper") if s.labels["dataset"] == "PACS"]
    assert len(specs) == 2 * 16
    rows = {s.labels["table_row"]: s.resolve() for s in specs if s.labels["algorithm"] == "FedAvg+IMA"}
    first, second = rows["row 1 (+FS)"], rows["row 2 (+FS)"]
    assert (first.dataset, first.model, first.partition, first.alpha, second.alpha) == (
        "pacs", "alexnet_gn", "domains", 0.1, 0.05)
    assert (first.clients, first.per_round, first.local_epochs, first.batch_size, first.lr, first.momentum) == (
        80, 16, 5, 50, 0.01, 0.9)
    assert (first.rounds, first.ima_start, first.ima_window, first.lr_decay, first.ima_gamma_late) == (
        400, 300, 5, 0.99, 0.97)
    assert first.probes == ("domain_accuracy",) and (first.eval_every, first.eval_last) == (1, 10)
    fma = next(s for s in specs if s.labels["algorithm"] == "FedAvg" and s.labels["table_row"] == "row 1 (+FS)")
    assert fma.resolve().method == "fedavg" and fma.labels["partition"] == "domains"


def test_below_the_paper_scale_the_pacs_rows_are_published_only():
    from flcore.algorithms.recipes_since import SINCE_METHODS
    from flcore.reproduction.artifacts import artifact_ids, get_artifact, runs_for

    for scale in ("small", "smoke"):
        specs = fedima.table1_runs(scale)
        assert len(specs) == 7 * 16 and all(s.labels["dataset"] != "PACS" for s in specs)
        assert all(s.resolve().dataset == "mnist1d" for s in specs)
    # the run counts of every artifact below the paper scale (measured before PACS was added; at
    # smoke FedLESAM's two timed efficiency runs no longer coincide with untimed runs of other pages)
    tables_and_figures = [a for a in artifact_ids() if get_artifact(a).kind != "page"]
    # (219 since the small presets take the tuning record's values: FedSAM Fig. 9's sweep shares
    # one point fewer with Table 2 at each of five (panel, alpha) pairs; 220 and 179 since FedLESAM
    # Table 2 trains FedGMT at its Dirichlet 0.1 cell for a later claim)
    assert len(runs_for(tables_and_figures, "small")) == 220
    assert len(runs_for(tables_and_figures, "smoke")) == 179
    # the book's own "Since these papers" page adds each newer method at 2 alphas x 6 seeds (the
    # claims' most), and seeds 1 to 5 of FedSAM's and FedAvg's Table 2 cells at those alphas
    newer = 2 * 6 * len(SINCE_METHODS) + 2 * 2 * 5
    assert len(runs_for(artifact_ids(), "small")) == 220 + newer


def test_reported_accuracy_of_a_pacs_run_is_the_mean_over_domains(tmp_path):
    import json

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.json").write_text(json.dumps({"probes": ["domain_accuracy"], "scale": "paper"}))
    rows = [{"round": r, "test_accuracy": 0.9, "domain_accuracy.photo": 0.8, "domain_accuracy.sketch": 0.2,
             "domain_accuracy.mean": 0.5 + r / 1000} for r in range(1, 13)]
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    fedima._metrics_of.cache_clear()
    assert fedima.reported_accuracy(str(run_dir)) == pytest.approx(0.5 + sum(range(3, 13)) / 10_000)
    assert fedima.last_rounds_accuracy(rows) == pytest.approx(0.9)  # the pooled accuracy, not reported


@pytest.mark.slow
def test_paper_scale_pacs_row_trains_end_to_end_on_image_folder_data(tmp_path):
    from flcore.api import run_experiment
    from flcore.data import write_fake_pacs
    from flcore.data.pacs import expected_pacs_counts
    from flcore.store import Run

    spec = next(s for s in fedima.table1_runs("paper") if s.labels["dataset"] == "PACS"
                and s.labels["table_row"] == "row 2 (+FS)" and s.labels["algorithm"] == "FedAvg+IMA")
    counts = write_fake_pacs(tmp_path / "data", per_class=1, side=16)
    config = {**spec.config, "clients": 4, "per_round": 2, "rounds": 2, "ima_start": 1, "local_epochs": 1,
              "batch_size": 3, "eval_batch_size": 64, "data_root": str(tmp_path / "data")}
    with expected_pacs_counts(counts):
        summary = run_experiment(config, store=tmp_path / "runs")
    assert summary["status"] == "finished" and summary["rounds_done"] == 2
    run_dir = next(p for p in (tmp_path / "runs").iterdir() if (p / "metrics.jsonl").is_file())
    metrics = Run(run_dir, run_dir.name).read_metrics()
    last = metrics[-1]
    per_domain = [last[f"domain_accuracy.{d}"] for d in ("art_painting", "cartoon", "photo", "sketch")]
    assert last["domain_accuracy.mean"] == pytest.approx(sum(per_domain) / 4)
    fedima._metrics_of.cache_clear()
    assert fedima.reported_accuracy(str(run_dir)) == pytest.approx(
        sum(m["domain_accuracy.mean"] for m in metrics) / len(metrics))


def test_table3_schemes_reach_the_config():
    specs = {(s.labels["algorithm"], s.labels["client_decay"]): s for s in fedima.table3_runs("paper")}
    cyclic = specs["FedAvg+IMA", "cyclic"].resolve()
    assert (cyclic.ima_exploration, cyclic.ima_lr_min, cyclic.ima_exploration_period) == ("cyclic", 5e-5, 20)
    assert specs["FedAvg+IMA", "exponential"].run_id() == fedima.ima_run(fedima.MAIN, "FedAvg", True, "paper").run_id()
    assert len(specs) == 8 * 5


@pytest.mark.parametrize("scale", ["small", "smoke"])
def test_every_claim_cell_names_runs_of_its_artifact(scale):
    for claim in [c for c in all_claims() if c.paper == "fedima"]:
        specs = get_artifact(claim.artifacts[0]).runs(scale, (0,))
        for comparison in claim.comparisons:
            for cell in (comparison.better, comparison.worse):
                matching = {s.run_id() for s in specs if labels_match(s.labels, cell)}
                assert len(matching) == 1, (claim.id, cell)
        assert claim.metric in METRICS


def _fake_run(store, spec, accuracies):
    cfg = spec.resolve()
    run = RunStore(store).create(cfg.run_id(), cfg.canonical())
    run.append_metrics([{"round": r, "test_accuracy": a} for r, a in enumerate(accuracies, start=1)])
    return str(run.path)


def test_rounds_metric_uses_where_fedavg_ends_as_the_target(tmp_path):
    fma = fedima.ima_run(fedima.MAIN, "FedAvg", False, "smoke")
    ima = fedima.ima_run(fedima.MAIN, "FedProx", True, "smoke")
    # FedAvg ends at the mean of its last ten rounds: 0.5
    fedavg_dir = _fake_run(tmp_path, fma, [0.1] * 5 + [0.5] * 10)
    ima_dir = _fake_run(tmp_path, ima, [0.1, 0.2, 0.6, 0.6, 0.6, 0.6, 0.6, 0.7])
    assert fedima.reference_run_dir(ima_dir) == fedavg_dir
    assert fedima.table2_target(ima_dir) == pytest.approx(0.5)
    # smoothed over 5 rounds: round 5 -> (0.1+0.2+0.6+0.6+0.6)/5 = 0.42, round 6 -> 0.52
    assert METRICS["rounds"]({"run_dir": ima_dir}) == 6.0
    assert METRICS["rounds"]({"run_dir": fedavg_dir}) == 10.0
    assert METRICS["accuracy_last_10"]({"run_dir": fedavg_dir}) == pytest.approx(50.0)
    # a run that never reaches 0.5 counts its last round + 1, a censored value the claims rank worst
    never = _fake_run(tmp_path, fedima.ima_run(fedima.MAIN, "FedAdam", True, "smoke"), [0.1, 0.2, 0.3, 0.3, 0.3])
    assert METRICS["rounds"]({"run_dir": never}) == float(fedima.ima_run(fedima.MAIN, "FedAdam", True,
                                                                         "smoke").resolve().rounds + 1)
    assert METRICS["rounds"].censored({"run_dir": never})
    assert not METRICS["rounds"].censored({"run_dir": ima_dir})


def test_gain_table_pairs_each_method_with_its_ima_run():
    comparison = pd.DataFrame({"dataset": ["A"] * 4, "algorithm": ["FedAvg", "FedAvg+IMA", "FedProx", "FedProx+IMA"],
                               "paper": [60.0, 64.0, 61.0, 62.0], "ours": [70.0, 71.5, 72.0, 71.0]})
    gains = fedima.gain_table(comparison, ["dataset"]).set_index("method")
    assert gains.loc["FedAvg", "paper gain"] == pytest.approx(4.0)
    assert gains.loc["FedProx", "ours gain"] == pytest.approx(-1.0)
    assert "n" not in gains  # one seed: no spread to show


def test_gain_table_shows_the_spread_of_ours_over_the_seeds():
    from flcore.report import ours_accuracy

    # FedAvg: 70 and 74 (mean 72, sd 2.83); FedAvg+IMA: 71, 73, 75 (mean 73, sd 2); one seed diverged
    runs = pd.DataFrame({"dataset": ["A"] * 6, "algorithm": ["FedAvg"] * 3 + ["FedAvg+IMA"] * 3,
                         "status": ["finished", "finished", "diverged", "finished", "finished", "finished"],
                         "mean_last_100": [0.70, 0.74, None, 0.71, 0.73, 0.75]})
    cells = ours_accuracy(runs, ["dataset", "algorithm"])
    comparison = cells.assign(paper=[60.0, 64.0])
    row = fedima.gain_table(comparison, ["dataset"]).set_index("method").loc["FedAvg"]
    assert row["ours gain"] == pytest.approx(1.0)
    assert row["sd FMA"] == pytest.approx(math.sqrt(8.0))
    assert row["sd IMA"] == pytest.approx(2.0)
    assert row["n"] == 2  # the fewer seeds of the two means


def test_scaled_rounds():
    assert fedima.scaled_round(150, "small") == 38  # 37.5, rounded half to even
    assert fedima.scaled_round(300, "small") == 75
    assert fedima.scaled_round(225, "small", 300) == 75
    assert fedima.scaled_round(150, "paper") == 150
    assert math.isclose(sum(fedima.smoothed([1.0, 3.0, 5.0], 2)), 1.0 + 2.0 + 4.0)


def test_distinct_comparisons_count_a_shared_stand_in_comparison_once():
    """Below the paper scale the CIFAR-10 and Fashion-MNIST rows of one partition read the
    same runs: their FedAvg comparison is one comparison, counted at its first row; FedProx's
    runs differ by row, and a row without runs of ours is never counted."""
    keys = ["dataset", "partition"]
    gains = pd.DataFrame([
        {"dataset": "CIFAR-10", "partition": "dir", "method": "FedAvg", "ours gain": 1.0},
        {"dataset": "FMNIST", "partition": "dir", "method": "FedAvg", "ours gain": 1.0},
        {"dataset": "CIFAR-10", "partition": "dir", "method": "FedProx", "ours gain": -1.0},
        {"dataset": "FMNIST", "partition": "dir", "method": "FedProx", "ours gain": 2.0},
        {"dataset": "PACS", "partition": "dir", "method": "FedAvg", "ours gain": 3.0},
    ], index=[10, 11, 12, 13, 14])
    runs = pd.DataFrame([
        {"dataset": d, "partition": "dir", "algorithm": a, "run_id": rid}
        for d, a, rid in [("CIFAR-10", "FedAvg", "r1"), ("CIFAR-10", "FedAvg+IMA", "r2"),
                          ("FMNIST", "FedAvg", "r1"), ("FMNIST", "FedAvg+IMA", "r2"),
                          ("CIFAR-10", "FedProx", "r3"), ("CIFAR-10", "FedProx+IMA", "r4"),
                          ("FMNIST", "FedProx", "r3"), ("FMNIST", "FedProx+IMA", "r5"),
                          ("PACS", "FedAvg", None)]])
    first = fedima.distinct_comparisons(gains, runs, keys)
    assert list(first.index) == [10, 11, 12, 13, 14]
    assert first.tolist() == [True, False, True, True, False]


def test_exponential_beats_none_counts_the_methods_with_both_decays():
    from flcore.papers.fedima.results import exponential_beats_none

    comparison = pd.DataFrame({
        "algorithm": ["A", "A", "B", "B", "C", "D", "D"],
        "client_decay": ["exponential", "none", "exponential", "none", "exponential", "exponential", "none"],
        "ours": [60.0, 55.0, 50.0, 52.0, 70.0, None, 40.0],
    })
    # A beats (60 > 55), B does not (50 < 52), C has no "none" value, D no exponential one
    assert exponential_beats_none(comparison, "ours") == (1, 2)
    assert exponential_beats_none(comparison[comparison["client_decay"] == "none"], "ours") == (0, 0)
