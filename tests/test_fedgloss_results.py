"""FedGloSS result runs and metrics: run sharing with the FedSAM pages, the scales' grids,
and the communication metrics on hand-made stored runs."""
from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from flcore.papers.fedgloss import results as gloss
from flcore.papers.fedsam import runs as fedsam
from flcore.reproduction.artifacts import get_artifact
from flcore.reproduction.claims import METRICS


def test_fedavg_and_fedsam_are_the_fedsam_pages_runs():
    for label, fedsam_label in (("FedAvg", "FedAvg E=1"), ("FedSAM", "FedSAM")):
        for scale in ("smoke", "small", "paper"):
            ours = gloss.gloss_cnn_run("CIFAR-10", label, 0.0, 0, scale)
            theirs = fedsam.sam_main_run("CIFAR-10", fedsam_label, 0.0, 5, 0, scale)
            assert ours.run_id() == theirs.run_id()
            assert ours.labels["algorithm"] == label and ours.labels["model"] == "CNN"


def test_small_cifar100_alpha0_is_the_cifar10_run_and_paper_is_not():
    for label in ("FedGloSS-SAM", "FedSMOO"):
        a = gloss.gloss_cnn_run("CIFAR-10", label, 0.0, 0, "small")
        b = gloss.gloss_cnn_run("CIFAR-100", label, 0.0, 0, "small")
        assert a.run_id() == b.run_id()
        assert (gloss.gloss_cnn_run("CIFAR-10", label, 0.0, 0, "paper").run_id()
                != gloss.gloss_cnn_run("CIFAR-100", label, 0.0, 0, "paper").run_id())


def test_resnet_block_only_at_paper():
    assert gloss.resnet_main_runs("small") == [] and gloss.fig17_runs("small") == []
    specs = gloss.resnet_main_runs("paper")
    assert len(specs) == 2 * 11
    cfg = specs[0].resolve()
    assert (cfg.model, cfg.per_round, cfg.rounds, cfg.momentum, cfg.weight_decay) == (
        "resnet18gn",
        10,
        10_000,
        0.7,
        1e-5,
    )
    with pytest.raises(ValueError, match="scale"):
        gloss.gloss_resnet_run("CIFAR-10", "FedAvg", 0.05, 0, "small")


def test_paper_scale_runs_the_full_grid():
    specs = get_artifact("fedgloss-table-3").runs("paper", [0, 1, 2])
    cnn = [s for s in specs if s.labels["model"] == "CNN"]
    assert len(cnn) == 4 * 11 * 3 and len(specs) - len(cnn) == 2 * 11 * 3
    assert all(s.available for s in specs)


def test_every_claim_cell_of_my_artifacts_matches_runs_at_paper():
    from flcore.reproduction.claims import all_claims, labels_match

    mine = {"fedgloss-table-3", "fedgloss-table-5", "fedgloss-table-6", "fedgloss-table-7", "fedgloss-table-10",
            "fedgloss-fig-18"}
    for claim in all_claims():
        if claim.paper != "fedgloss" or not set(claim.artifacts) & mine:
            continue
        specs = [s for a in claim.artifacts if a in mine for s in get_artifact(a).runs("paper", [0])]
        for comparison in claim.comparisons:
            for cell in (comparison.better, comparison.worse):
                assert any(labels_match(s.labels, cell) for s in specs), (claim.id, cell)


# ----------------------------------------------------------------------------- metrics on stored runs

def _write_run(root, spec_or_id, method, rounds, curve, mean_last_100=None):
    run_id = spec_or_id if isinstance(spec_or_id, str) else spec_or_id.run_id()
    path = root / run_id
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"method": method, "scale": "small", "rounds": rounds}))
    (path / "metrics.jsonl").write_text("".join(json.dumps({"round": r, "test_accuracy": a}) + "\n" for r, a in curve))
    if mean_last_100 is not None:
        (path / "summary.json").write_text(json.dumps({"mean_last_100": mean_last_100}))
    return str(path)


@pytest.fixture
def store(tmp_path):
    # FedAvg: 300 rounds, accuracy 0.6 (mean of the last 100 rounds).
    fedavg = gloss.gloss_cnn_run("CIFAR-10", "FedAvg", 0.0, 0, "small")
    _write_run(tmp_path, fedavg, "fedavg", 300, [(r, 0.6 * r / 300) for r in range(10, 301, 10)], 0.6)
    return tmp_path


def _row(store, label, method, curve, alpha=0.0):
    run_dir = _write_run(store, f"run-{label}", method, 300, curve)
    return {"dataset": "CIFAR-10", "algorithm": label, "alpha": alpha, "seed": 0, "model": "CNN",
            "run_dir": run_dir, "status": "finished", "mean_last_100": curve[-1][1]}


def test_communication_and_speedup_by_hand(store):
    # FedGloSS-SAM (2 vectors a round) first reaches 0.6 at round 100: 3x, 100*2 / (300*2) = 1/3 B.
    gloss_row = _row(store, "gloss", "fedgloss-sam", [(50, 0.5), (100, 0.61), (150, 0.55), (300, 0.7)])
    assert METRICS["speedup"](gloss_row) == pytest.approx(3.0)
    assert METRICS["relative_bits"](gloss_row) == pytest.approx(1 / 3)
    # FedSMOO (4 vectors a round) at round 60: faster (5x) but 60*4 / 600 = 0.4 B -- more bits.
    smoo_row = _row(store, "smoo", "fedsmoo", [(60, 0.6), (300, 0.8)])
    assert METRICS["speedup"](smoo_row) == pytest.approx(5.0)
    assert METRICS["relative_bits"](smoo_row) == pytest.approx(0.4)
    # never reached: no speed-up, unbounded bits
    slow_row = _row(store, "slow", "fedprox", [(100, 0.3), (300, 0.59)])
    assert METRICS["speedup"](slow_row) == 0.0 and METRICS["relative_bits"](slow_row) == math.inf
    # never reaching FedAvg's accuracy is a censored value (ranked worst), reaching it is not
    assert METRICS["speedup"].censored(slow_row) and METRICS["relative_bits"].censored(slow_row)
    assert not METRICS["speedup"].censored(gloss_row) and not METRICS["relative_bits"].censored(smoo_row)
    # FedAvg is the reference: T rounds, 1x, 1 B
    fedavg_dir = store / gloss.gloss_cnn_run("CIFAR-10", "FedAvg", 0.0, 0, "small").run_id()
    fedavg_row = {"dataset": "CIFAR-10", "algorithm": "FedAvg", "alpha": 0.0, "seed": 0, "model": "CNN",
                  "run_dir": str(fedavg_dir)}
    assert METRICS["speedup"](fedavg_row) == 1.0 and METRICS["relative_bits"](fedavg_row) == 1.0
    # no FedAvg run in the store for this setting: not computed
    assert METRICS["speedup"](_row(store, "other", "fedgloss-sam", [(10, 0.9)], alpha=0.05)) is None

    frame = gloss.cost_frame(pd.DataFrame([gloss_row, smoo_row, slow_row]), ["algorithm"])
    assert frame.set_index("algorithm").loc["smoo", "rounds"] == 60
    assert frame.set_index("algorithm").loc["gloss", "target"] == pytest.approx(60.0)
    assert math.isnan(frame.set_index("algorithm").loc["slow", "rounds"])


def test_accuracy_at_progress(store):
    curve = [(50, 0.2), (140, 0.4), (150, 0.5), (160, 0.9), (300, 0.95)]
    assert gloss.accuracy_at_progress(curve, 300, 0.5) == pytest.approx(50.0)
    assert gloss.accuracy_at_progress(curve, 300, 1.0, mean_last_100=0.93) == pytest.approx(93.0)
    assert gloss.accuracy_at_progress(curve, 300, 0.1) is None
    row = _row(store, "naive", "naivefedgloss", curve)
    row["training_progress"] = 0.5
    assert METRICS["accuracy_at_progress"](row) == pytest.approx(50.0)
    row["training_progress"] = 1.0
    assert METRICS["accuracy_at_progress"](row) == pytest.approx(95.0)  # the row's mean_last_100


def test_progress_accuracy_frame_shows_mean_sd_and_n_of_the_finished_seeds(store):
    import pandas as pd

    rows = []
    for seed, final in enumerate([0.90, 0.94, 0.10]):
        row = _row(store, f"gloss-{seed}", "fedgloss-sam", [(150, 0.5), (300, final)])
        rows.append({**row, "algorithm": "FedGloSS-SAM", "seed": seed, "mean_last_100": final,
                     "training_progress": 1.0, "status": "diverged" if seed == 2 else "finished"})
    frame = gloss.progress_accuracy_frame(pd.DataFrame(rows), ["algorithm", "training_progress"])
    (cell,) = frame.to_dict("records")
    # the diverged seed is left out: mean of 90 and 94, sd sqrt(8), two seeds
    assert cell["ours"] == pytest.approx(92.0)
    assert cell["sd"] == pytest.approx(math.sqrt(8.0))
    assert cell["n"] == 2


def test_cost_metrics_spread_leaves_out_configurations_where_they_cannot_vary(monkeypatch):
    """The reference pairs' speed-up differences: at the first alpha FedSAM's speed-up is
    1, 2, 3 over FedAvg's 1 (differences 0, 1, 2: sd 1); at the second both sit at 1 at every
    seed (differences all 0): that configuration says nothing about the spread, so only the
    first one's seeds count."""
    import pandas as pd

    from flcore.reproduction import claims as claims_module
    from flcore.reproduction import runner

    def frame(specs, store=None):
        return pd.DataFrame([{"status": "finished", "mean_last_100": 0.3,
                              "s": 1.0 + s.labels["seed"] if s.labels["algorithm"] == "FedSAM"
                              and s.labels["alpha"] == 0.0 else 1.0} for s in specs])

    monkeypatch.setattr(runner, "results_frame", frame)
    monkeypatch.setitem(claims_module.METRICS, "speedup", claims_module.Metric("speedup", lambda row: row["s"], "x"))
    spread = claims_module.reference_spread("small", metric="speedup")
    assert spread["sd"] == pytest.approx(1.0) and spread["df"] == 2
    assert spread["pairs"] == 1 and spread["runs"] == 6


def _cost_merged(with_speedup: bool) -> pd.DataFrame:
    merged = pd.DataFrame({
        "block": ["SGD", "SGD", "SAM"], "algorithm": ["FedAvg", "SCAFFOLD", "FedSMOO"],
        "rounds (ours)": [100.0, 40.0, float("nan")], "speedup (ours)": [1.0, 2.5, float("nan")],
        "relative_bits": [1.0, 0.8, float("nan")], "rounds (paper)": [10000.0, 2500.0, float("nan")],
        "cost_B": [1.0, 0.5, float("nan")], "note": [None, None, "did not converge"]})
    if with_speedup:
        merged["speedup (paper)"] = [1.0, 4.0, float("nan")]
    return merged


def test_cost_cells_formats_rounds_speedup_and_bits():
    shown = gloss.cost_cells(_cost_merged(with_speedup=True))
    assert list(shown.columns) == ["block", "algorithm", "rounds (paper)", "rounds (ours)", "speed-up (paper)",
                                   "speed-up (ours)", "bits (paper)", "bits (ours)"]
    assert shown.iloc[1].tolist() == ["SGD", "SCAFFOLD", "2500", "40", "4.0x", "2.50x", "0.5 B", "0.80 B"]
    # never reached by us: "-"; did not converge in the paper: a cross
    assert shown.iloc[2].tolist()[2:] == ["\u2717", "-", "\u2717", "-", "\u2717", "-"]


def test_cost_cells_leave_out_the_published_speedup_when_the_table_has_none():
    shown = gloss.cost_cells(_cost_merged(with_speedup=False))
    assert "speed-up (paper)" not in shown
    assert shown["speed-up (ours)"].tolist() == ["1.00x", "2.50x", "-"]


def test_table_5_shows_our_speed_up_although_the_paper_prints_none(monkeypatch):
    # Table 5 publishes rounds and bits, no speed-up: the merge suffixes only the shared
    # columns, so ours is "speedup" (not "speedup (ours)") and was printed "-" in every row
    ours = pd.DataFrame({"model": ["CNN", "CNN"], "dataset": ["CIFAR-10", "CIFAR-10"], "alpha": [0.0, 0.0],
                         "block": ["SGD", "SAM"], "algorithm": ["FedAvg", "FedGloSS-SAM"],
                         "rounds": [300.0, 80.0], "speedup": [1.0, 3.75], "relative_bits": [1.0, 0.2667],
                         "target": [40.0, 40.0], "reached": [1.0, 1.0], "status": ["finished", "finished"]})
    monkeypatch.setattr(gloss, "cost_frame", lambda runs, keys: ours)
    merged, _, _ = gloss.cost_comparison(pd.DataFrame(), "fedgloss-table-5")
    shown = gloss.cost_cells(merged)
    assert "speed-up (paper)" not in shown
    assert shown["speed-up (ours)"].tolist() == ["1.00x", "3.75x"]  # 300 / 80
    assert shown["rounds (ours)"].tolist() == ["300", "80"]


def test_cost_frame_averages_the_seeds_as_the_verdicts_do_and_says_which_never_reach(tmp_path):
    """Three seeds of FedGloSS-SAM against FedAvg's 0.6 (300 rounds, 2 vectors a round): seed
    0 reaches it at round 100 (3x, 1/3 B), seed 1 at round 150 (2x, 1/2 B), seed 2 never
    (0x, infinite bits); a fourth seed diverged and is left out; seed 0's row comes twice
    (two labels of one run) and counts once."""
    rows = []
    for seed, curve, status in ((0, [(100, 0.61), (300, 0.7)], "finished"), (1, [(100, 0.5), (150, 0.6), (300, 0.7)],
                                                                              "finished"),
                                (2, [(300, 0.59)], "finished"), (3, [(10, 0.1)], "diverged")):
        fedavg = gloss.gloss_cnn_run("CIFAR-10", "FedAvg", 0.0, seed, "small")
        _write_run(tmp_path, fedavg, "fedavg", 300, [(300, 0.6)], 0.6)
        run_dir = _write_run(tmp_path, f"gloss-{seed}", "fedgloss-sam", 300, curve)
        rows.append({"dataset": "CIFAR-10", "algorithm": "FedGloSS-SAM", "alpha": 0.0, "seed": seed, "model": "CNN",
                     "run_dir": run_dir, "run_id": f"gloss-{seed}", "status": status, "mean_last_100": curve[-1][1]})
    runs = pd.DataFrame(rows + rows[:1])
    (cell,) = gloss.cost_frame(runs, ["algorithm"]).to_dict("records")
    # the speed-up counts the never-reached seed as 0 (the metric's value): mean of 3, 2, 0
    assert cell["speedup"] == pytest.approx(5 / 3) and cell["speedup_sd"] == pytest.approx(math.sqrt(7 / 3))
    # the bits and rounds average the seeds that reach the target (the metric's finite values)
    assert cell["relative_bits"] == pytest.approx(5 / 12)
    assert cell["relative_bits_sd"] == pytest.approx((1 / 6) / math.sqrt(2))
    assert cell["rounds"] == pytest.approx(125.0) and cell["rounds_sd"] == pytest.approx(50 / math.sqrt(2))
    assert (cell["seeds"], cell["never"], cell["left_out"], cell["status"]) == (3, 1, 1, "finished")
    # the same numbers as the claims' metrics over the finished runs (printed_cell's rule)
    finished = [r for r in rows if r["status"] == "finished"]
    speedups = [METRICS["speedup"](r) for r in finished]
    bits = [b for b in (METRICS["relative_bits"](r) for r in finished) if math.isfinite(b)]
    assert cell["speedup"] == pytest.approx(sum(speedups) / 3) and cell["relative_bits"] == pytest.approx(sum(bits) / 2)
    shown = gloss.cost_cells(pd.DataFrame([{**cell, "block": "SAM", "note": None, "rounds (ours)": cell["rounds"]}]))
    assert shown.loc[0, "speed-up (ours)"] == "1.67x \u00b1 1.53 (n = 3; 1 never reached, counted as 0x)"
    assert shown.loc[0, "bits (ours)"] == "0.42 B \u00b1 0.12 (n = 2; 1 never reached)"
    assert shown.loc[0, "rounds (ours)"] == "125 \u00b1 35 (n = 2; 1 never reached)"


def test_cost_cell_text_keeps_the_dash_for_never_reached():
    assert gloss.cost_cell_text(float("nan"), float("nan"), 1, 1) == "-"
    assert gloss.cost_cell_text(float("nan"), float("nan"), 0, 3, unit=" B") == "- (3 never reached)"
    # every seed never reached: a speed-up mean of 0x is shown as never reached
    assert gloss.cost_cell_text(0.0, 0.0, 3, 3, unit="x", never_counted=", counted as 0x") == "- (3 never reached)"
    assert gloss.cost_cell_text(0.2667, float("nan"), 1, 2, unit=" B") == "0.27 B (n = 1; 2 never reached)"
    assert gloss.cost_cell_text(3.75, float("nan"), 1, unit="x") == "3.75x"


def test_fig18_panels_average_the_seeds_and_leave_a_diverged_one_out():
    federated = pd.DataFrame({
        "panel": ["CIFAR-10, alpha = 0"] * 4, "algorithm": ["FedGloSS-SAM"] * 3 + ["NaiveFedGloSS"],
        "mean_last_100": [0.70, 0.72, 0.10, 0.69], "run_id": ["a0", "a1", "a2", "b0"],
        "status": ["finished", "finished", "diverged", "finished"]})
    (row,) = gloss.fig18_panels(federated).to_dict("records")
    assert row["FedGloSS-SAM"] == pytest.approx(71.0) and row["FedGloSS-SAM sd"] == pytest.approx(math.sqrt(2))
    assert row["FedGloSS-SAM n"] == 2 and row["NaiveFedGloSS n"] == 1 and row["runs"] == 4
    assert gloss.fig18_ends(pd.DataFrame([row])) == (
        "CIFAR-10, alpha = 0: FedGloSS 71.0% \u00b1 1.4 (n = 2), NaiveFedGloSS 69.0%")


def test_final_accuracy_leaders_pick_the_best_method_per_panel():
    federated = pd.DataFrame({
        "panel": ["alpha = 0, SAM clients"] * 3 + ["alpha = 0, SGD clients"] * 2,
        "algorithm": ["FedSAM", "FedGloSS-SAM", "FedSAM", "FedAvg", "FedDyn"],
        "mean_last_100": [0.5, 0.625, 0.9, 0.25, None]})  # the second FedSAM row is another seed
    final, leaders = gloss.final_accuracy_leaders(
        federated, ["alpha = 0, SAM clients", "alpha = 0, SGD clients", "alpha = 0.05, SAM clients"])
    assert final[("alpha = 0, SAM clients", "FedSAM")] == 50.0
    assert ("alpha = 0, SGD clients", "FedDyn") not in final.index
    assert leaders == {"alpha = 0, SAM clients": "FedGloSS-SAM", "alpha = 0, SGD clients": "FedAvg"}
    assert gloss.accuracy_leaders_text(final, leaders) == (
        "alpha = 0, SAM clients: FedGloSS-SAM (62.5%); alpha = 0, SGD clients: FedAvg (25.0%)")


def test_cost_findings_count_the_verdicts():
    verdicts = pd.DataFrame({"verdict": ["holds", "inconclusive", "inconclusive", "not_run"]})
    lines = gloss.cost_findings(verdicts, 0.25, "small")
    assert lines == [
        "At the **small** scale the paper's and our rankings by bits agree with a mean Kendall's \u03c4 of "
        "0.25; of the 4 claims this table checks, 1 is decided at this scale (1 hold); 2 inconclusive, "
        "1 not run at this scale."
    ]
    assert len(gloss.cost_findings(verdicts, 0.25, "smoke")) == 2


def test_fig18_says_which_panels_compare_both_methods():
    federated = pd.DataFrame({
        "panel": ["CIFAR-10, alpha = 0"] * 2 + ["CIFAR-10, alpha = 0.05"] + ["CIFAR-100, alpha = 0"] * 2,
        "algorithm": ["FedGloSS-SAM", "NaiveFedGloSS", "FedGloSS-SAM", "FedGloSS-SAM", "NaiveFedGloSS"],
        "mean_last_100": [0.701, 0.698, 0.71, 0.701, 0.698], "run_id": ["a", "b", "c", "a", "b"],
        "status": "finished"})
    panels = gloss.fig18_panels(federated)
    assert list(panels["runs"]) == [2, 1, 2] and math.isnan(panels.loc[1, "NaiveFedGloSS"])
    assert gloss.fig18_ends(panels) == ("CIFAR-10, alpha = 0: FedGloSS 70.1%, NaiveFedGloSS 69.8%; CIFAR-10, alpha = "
                                        "0.05: FedGloSS 71.0%, NaiveFedGloSS not run; CIFAR-100, alpha = 0: FedGloSS "
                                        "70.1%, NaiveFedGloSS 69.8%")
    assert gloss.fig18_coverage(panels, "small") == ("At the small scale 2 of the 3 panels draw both methods "
                                                     "(CIFAR-10, alpha = 0; CIFAR-100, alpha = 0); CIFAR-10, alpha = "
                                                     "0.05 has one method only.")


def test_equal_communication_subtracts_naive_at_half_from_fedgloss_at_all_rounds():
    frame = pd.DataFrame({
        "dataset": ["C10"] * 4 + ["C100"] * 2,
        "alpha": [0.1] * 4 + [0.1] * 2,
        "algorithm": ["FedGloSS-SAM", "NaiveFedGloSS", "FedGloSS-SAM", "NaiveFedGloSS", "FedGloSS-SAM", "FedGloSS-SAM"],
        "training_progress": [1.0, 0.5, 0.5, 1.0, 1.0, 0.5],
        "ours": [70.0, 66.5, 60.0, 72.0, 40.0, 35.0],
    })
    # C10: 70.0 - 66.5 (the 50% FedGloSS and 100% Naive values are not read); C100 lacks Naive
    assert gloss.equal_communication(frame) == {("C10", 0.1): pytest.approx(3.5)}


def test_ladder_text_reads_the_first_cell_run_here_of_each_method_in_order():
    comparison = pd.DataFrame({"block": ["SAM", "SAM", "SAM", "SAM", "SGD"],
                               "algorithm": ["FedSAM", "FedSAM", "FedDyn+SAM", "FedGloSS-SAM", "FedAvg"],
                               "ours": [41.25, 99.0, 44.0, float("nan"), 30.0],
                               "paper": [50.0, 50.0, 55.0, 60.0, 40.0], "note": ["", "", "", "", ""]})
    # FedSAM's first row (41.25, not 99.0); FedGloSS-SAM without a number prints the book's missing mark
    text = gloss.ladder_text(comparison, "SAM", ["FedSAM", "FedDyn+SAM", "FedGloSS-SAM"])
    from flcore.report.numbers import format_number

    assert text == (f"FedSAM {format_number(41.25)} \u2192 FedDyn+SAM {format_number(44.0)} \u2192 FedGloSS-SAM "
                    f"{format_number(float('nan'))}")
    assert gloss.ladder_text(comparison, "SGD", ["FedAvg"]) == f"FedAvg {format_number(30.0)}"
