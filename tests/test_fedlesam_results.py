"""FedLESAM result/analysis pages' computations: round timing, rounds to a target, the
efficiency ratios, the perturbation-drift probe and the global loss surfaces."""
from __future__ import annotations

import math

import pytest
import torch

from flcore import resolve_config, run_experiment
from flcore.papers.fedlesam import runs as fedlesam
from flcore.papers.fedlesam.analysis import client_perturbations, perturbation_state
from flcore.papers.fedlesam.results import rounds_to_target, run_efficiency, target_accuracy, transmissions_per_round
from flcore.sim.engine import Simulation
from flcore.sim.round_driver import RoundTiming
from flcore.store import RunStore


def test_round_timing_record_is_mean_and_sd_of_the_rounds():
    timing = RoundTiming()
    assert timing.record() == {}
    for s in (1.0, 2.0, 3.0):
        timing.add(s)
    rec = timing.record()
    assert rec["train_seconds"] == 6.0 and rec["timed_rounds"] == 3
    assert rec["seconds_per_round"] == pytest.approx(2.0) and rec["seconds_per_round_sd"] == pytest.approx(1.0)


def test_a_run_trained_alone_records_its_seconds_per_round(tmp_path):
    cfg = resolve_config(scale="smoke", rounds=3, eval_every=1, eval_last=1)
    summary = run_experiment(cfg, store=tmp_path)
    status = RunStore(tmp_path).run(summary["run_id"]).status()
    assert status["timed_rounds"] == 3 and status["batch_runs"] == 1
    assert 0 < status["train_seconds"] <= status["wall_time_s"]
    assert status["seconds_per_round"] == pytest.approx(status["train_seconds"] / 3)
    # the metrics log holds no timing (two builds of one run must agree on it)
    assert all("seconds" not in key for row in RunStore(tmp_path).run(summary["run_id"]).read_metrics()
               for key in row)


def test_rounds_to_target_is_the_first_evaluated_crossing():
    curve = [{"round": 10, "test_accuracy": 0.5}, {"round": 20, "test_accuracy": None},
             {"round": 30, "test_accuracy": 0.71}, {"round": 40, "test_accuracy": 0.69}]
    assert rounds_to_target(curve, 0.7) == 30
    assert rounds_to_target(curve, 0.5) == 10
    assert rounds_to_target(curve, 0.8) is None


def test_targets_below_the_paper_scale_are_relative_to_fedavg():
    curve = [{"round": 1, "test_accuracy": 0.4}, {"round": 2, "test_accuracy": 0.74 * 0.9}]
    assert target_accuracy(74, "paper", curve) == pytest.approx(0.74)
    assert target_accuracy(74, "small", curve) == pytest.approx(0.666)
    assert target_accuracy(68, "small", curve) == pytest.approx(0.666 * 68 / 74)


def test_transmissions_are_table_7s_units():
    assert transmissions_per_round("fedavg") == 2 and transmissions_per_round("scaffold") == 4


def _stored_run(store, rid, method, accs, seconds_per_round, eval_every=10, rounds=40):
    run = RunStore(store).create(rid, {"method": method, "scale": "small", "rounds": rounds,
                                       "eval_every": eval_every})
    run.append_metrics([{"round": eval_every * (i + 1), "test_accuracy": a} for i, a in enumerate(accs)])
    run.set_status("finished", rounds_done=rounds, seconds_per_round=seconds_per_round,
                   seconds_per_round_sd=0.0, timed_rounds=rounds)
    return str(run.path)


def test_efficiency_ratios_by_hand(tmp_path):
    fedavg = _stored_run(tmp_path, "a", "fedavg", [0.2, 0.5, 0.7, 0.74], 1.0)
    scaffold = _stored_run(tmp_path, "b", "scaffold", [0.6, 0.74, 0.74, 0.75], 1.5)
    never = _stored_run(tmp_path, "c", "fedavg", [0.1, 0.1, 0.1, 0.1], 1.0)
    # target 74 below paper scale = FedAvg's best (0.74): FedAvg at 40, SCAFFOLD at 20
    out = run_efficiency(scaffold, fedavg, 74)
    assert out["rounds"] == 20 and out["fedavg_rounds"] == 40 and out["reached"]
    assert out["rounds_ratio"] == pytest.approx(0.5)
    assert out["cost_ratio"] == pytest.approx(20 * 4 / (40 * 2))
    assert out["compute_ratio"] == pytest.approx(20 * 1.5 / (40 * 1.0))
    assert out["rounds_sigma"] == pytest.approx(10 / math.sqrt(12))
    # never reached: counted as T + eval_every
    out = run_efficiency(never, fedavg, 68)
    assert out["rounds"] == 50 and not out["reached"]


def test_partition_config_maps_the_papers_coefficients():
    assert fedlesam.partition_config("Dir-0.1", "cifar10") == {"partition": "dirichlet", "alpha": pytest.approx(1.0)}
    assert fedlesam.partition_config("Dir-0.6", "cifar100")["alpha"] == pytest.approx(60.0)
    assert fedlesam.partition_config("Path-3", "mnist1d") == {"partition": "shards", "classes_per_client": 3}
    with pytest.raises(ValueError, match="split"):
        fedlesam.partition_config("iid", "cifar10")


def test_small_runs_share_the_table_2_runs():
    """Tables 4, 5, 8, 9 and Fig. 3 read Table 2's runs at the small scale: no new run."""
    table2 = {s.run_id() for s in fedlesam.table2_runs("small")}
    for fn in (fedlesam.table4_runs, fedlesam.table5_runs, fedlesam.table8_runs, fedlesam.table9_runs,
               fedlesam.fig3_runs):
        assert {s.run_id() for s in fn("small")} <= table2


def _sim(method, **extra):
    cfg = resolve_config(scale="smoke", method=method, rounds=3, **extra)
    return Simulation.from_config(cfg, device="cpu")


def test_fedsam_client_perturbation_is_rho_times_the_unit_local_gradient():
    from flcore.analysis.evaluation import loss_and_grad

    sim = _sim("fedsam")
    sim.run_rounds()
    clients = [0, 3]
    eps = client_perturbations(sim, sim.w, clients)
    x = sim.data.eval_train_inputs()
    for row, k in enumerate(clients):
        idx = sim.data.client_indices[k]
        _, g = loss_and_grad(sim.flat, sim.w, x[idx], sim.data.train_y[idx])
        assert torch.allclose(eps[row], sim.cfg.rho * g / g.norm(), atol=1e-6)


def test_fedlesam_client_perturbation_is_its_stored_old_model_direction():
    sim = _sim("fedlesam")
    sim.run_rounds()
    seen = sim.client_state["lesam_seen"]
    clients = [int(torch.nonzero(seen)[0]), int(torch.nonzero(~seen)[0])]
    eps = client_perturbations(sim, sim.w, clients)
    d = sim.client_state["lesam_old"][clients[0]] - sim.w
    assert torch.allclose(eps[0], sim.cfg.rho * d / d.norm(), atol=1e-6)
    assert torch.count_nonzero(eps[1]) == 0  # no estimate before the first visit


def test_perturbation_probe_records_drift_cosine_and_sharpness(tmp_path):
    cfg = resolve_config(scale="smoke", method="fedsam", rounds=4, eval_every=2, eval_last=2,
                         probes=["perturbation"])
    summary = run_experiment(cfg, store=tmp_path)
    rows = [r for r in RunStore(tmp_path).run(summary["run_id"]).read_metrics() if "perturbation.drift" in r]
    assert [r["round"] for r in rows] == [2, 4]
    for r in rows:
        # PD per unit radius and the mean cosine are one quantity: |u_i - u|^2 = 2 (1 - cos)
        assert 0.0 <= r["perturbation.drift"] <= 2.0
        assert r["perturbation.drift"] ** 2 <= 2 * (1 - r["perturbation.mean_cosine"]) + 1e-9
        assert r["perturbation.sharpness"] >= 0.0


def test_fedavg_probe_records_sharpness_only():
    sim = _sim("fedavg")
    sim.run_rounds()
    out = perturbation_state(sim, sim.w)
    assert set(out) == {"sharpness"}


def test_surface_summary_of_a_bowl():
    from flcore.analysis.landscape import Landscape2D, grid_points
    from flcore.papers.fedlesam.analysis import surface_summary

    xs = grid_points(1.0, 5)
    loss = xs[:, None] ** 2 + xs[None, :] ** 2 + 0.5
    out = surface_summary(Landscape2D(xs, xs, loss, None))
    assert out["centre_loss"] == pytest.approx(0.5)
    assert out["mean_rise"] == pytest.approx(float((xs[:, None] ** 2 + xs[None, :] ** 2).mean()))
    edge = (xs[:, None] ** 2 + xs[None, :] ** 2) >= 1.0
    assert out["edge_rise"] == pytest.approx(float((xs[:, None] ** 2 + xs[None, :] ** 2)[edge].mean()))


def test_runs_trained_together_record_their_share_of_the_round_time(tmp_path):
    from flcore.planning.planner import plan_groups, train_group

    configs = [resolve_config(scale="smoke", rounds=2, alpha=a).to_dict() for a in (0.5, 5.0)]
    groups = plan_groups(configs, device="cpu", workers=1)
    assert len(groups) == 1 and groups[0].size == 2
    train_group(groups[0], tmp_path)
    for rid in groups[0].run_ids:
        status = RunStore(tmp_path).run(rid).status()
        assert status["batch_runs"] == 2 and status["timed_rounds"] == 2
        assert 0 < status["train_seconds"] <= status["wall_time_s"]


def test_fedsmoo_client_perturbation_is_corrected_by_its_dual_and_the_servers_s():
    from flcore.analysis.evaluation import loss_and_grad

    sim = _sim("fedsmoo")
    sim.run_rounds()
    k = int(torch.nonzero(sim.client_state["smoo_mu"].abs().sum(1))[0])  # a client that took part
    eps = client_perturbations(sim, sim.w, [k])
    idx = sim.data.client_indices[k]
    _, g = loss_and_grad(sim.flat, sim.w, sim.data.eval_train_inputs()[idx], sim.data.train_y[idx])
    s = sim.server_state["smoo"]["s"]
    u = g - sim.client_state["smoo_mu"][k] - s
    assert torch.count_nonzero(s) > 0
    assert torch.allclose(eps[0], sim.cfg.rho * u / u.norm(), atol=1e-6)


def _efficiency_rows():
    import pandas as pd

    return pd.DataFrame({"target": [68] * 4 + [74], "algorithm": ["FedAvg", "FedSAM", "FedSMOO", "FedLESAM-S",
                                                                   "FedAvg"],
                         "rounds_ratio": [1.0, 0.5, 0.8, 0.6, 1.0], "cost_ratio": [1.0, 0.5, 1.6, 0.6, 1.0],
                         "compute_ratio": [1.0, 1.5, 2.25, 0.75, 1.0]})


def test_compute_finding_compares_fedlesam_with_the_sam_based_range():
    from flcore.papers.fedlesam.results import compute_finding

    assert compute_finding(_efficiency_rows()) == ("to the 68 target FedLESAM-S takes 0.75x FedAvg's computation "
                                                   "time, the SAM-based methods 1.50-2.25x")
    assert compute_finding(_efficiency_rows().iloc[:0]).startswith("no computation times are recorded")


def test_efficiency_beside_published_and_its_orderings():
    import pandas as pd

    from flcore.papers.fedlesam.results import efficiency_beside_published, efficiency_orderings

    paper = pd.DataFrame({"algorithm": ["FedAvg", "FedSAM", "FedLESAM-S"], "target": [68] * 3,
                          "rounds_ratio": ["1", "0.7", "0.6"], "cost_ratio": ["1", "0.7", "0.6"],
                          "compute_time_ratio": ["1", "1.4", ""]})
    merged = efficiency_beside_published(paper, _efficiency_rows())
    assert merged["algorithm"].tolist() == ["FedAvg", "FedSAM", "FedLESAM-S"]  # the published rows only
    assert merged["rounds_ratio ours"].tolist() == [1.0, 0.5, 0.6]
    assert math.isnan(merged["compute_time_ratio"].iloc[2]) and merged["compute_ratio"].iloc[2] == 0.75
    orderings = efficiency_orderings(merged)
    assert orderings["what"].tolist() == ["rounds", "communication cost", "computation time"]
    # rounds: the paper orders FedLESAM-S, FedSAM, FedAvg; ours FedSAM, FedLESAM-S, FedAvg
    assert orderings["Kendall's \u03c4"].iloc[0] == 0.33  # (2 - 1) / 3, rounded to 2 places
    # no run: ours left empty, the published ratios still there
    empty = efficiency_beside_published(paper, _efficiency_rows().iloc[:0])
    assert empty["rounds_ratio paper"].tolist() == [1.0, 0.7, 0.6] and empty["rounds_ratio ours"].isna().all()


def test_flatness_order_puts_the_smallest_edge_rise_first():
    import pandas as pd

    from flcore.papers.fedlesam.analysis import flatness_order

    summary = pd.DataFrame({"panel": ["Centralized", "Federated (iid)", "Federated (dir)"],
                            "edge_rise": [0.4, 0.1, 0.9]})
    assert flatness_order(summary, "panel") == ["Federated (iid)", "Centralized", "Federated (dir)"]


# --------------------------------------------------------------------------- rounds never reached: censored

def _stored_spec(store, spec, accs):
    """A finished run at ``spec``'s real id and config whose test accuracy is ``accs`` at its
    first evaluated rounds (every ``eval_every``), then stays at the last value."""
    config = spec.resolve().canonical()
    every, rounds = int(config["eval_every"]), int(config["rounds"])
    accs = list(accs) + [accs[-1]] * (rounds // every - len(accs))
    run = RunStore(store).create(spec.run_id(), config)
    run.append_metrics([{"round": every * (i + 1), "test_accuracy": a} for i, a in enumerate(accs)])
    run.set_status("finished", rounds_done=rounds, seconds_per_round=1.0, seconds_per_round_sd=0.0,
                   timed_rounds=rounds, batch_runs=1)


def _rows_of(store):
    """A stand-in for ``results_frame`` over the hand-made runs of ``store`` (others: new)."""
    import pandas as pd

    def frame(specs, *args, **kwargs):
        def row(spec):
            held = (store / spec.run_id()).is_dir()
            return {**spec.labels, "method": spec.method, "run_id": spec.run_id(),
                    "status": "finished" if held else "new", "run_dir": str(store / spec.run_id()) if held else None,
                    "rounds_done": 800 if held else 0, "rounds": 800}
        return pd.DataFrame([row(s) for s in specs])
    return frame


def test_a_rounds_count_never_reached_is_censored_and_ranked_worst(tmp_path, monkeypatch):
    from flcore.reproduction import runner
    from flcore.reproduction.claims import METRICS, cell_specs, evaluate, get_claim

    # Table 9's claims are about its Dirichlet 0.6 case: testable at the paper scale (800
    # rounds, evaluated every 10), whose targets are 68% and 74%.  FedLESAM-D reaches 74% at
    # round 20; MoFedSAM never does (counted at T + eval_every = 810)
    curves = {"FedAvg": [0.2, 0.5, 0.7, 0.74], "FedLESAM-D": [0.6, 0.74, 0.7], "MoFedSAM": [0.1, 0.2, 0.3]}
    claim = get_claim("fedlesam-d-fewest-rounds-to-74")
    cells = {}
    for cell in claim.comparisons[1].cells_at("paper"):
        cells[cell["algorithm"]] = cell_specs(claim, cell, "paper", (0, 1, 2))[0]
        for spec in cells[cell["algorithm"]]:
            _stored_spec(tmp_path, spec, curves[cell["algorithm"]])
            companion = fedlesam.lesam_run(spec.labels["dataset"], "FedAvg", spec.labels["split"],
                                           spec.labels["population"], spec.labels["seed"], "paper")
            _stored_spec(tmp_path, companion, curves["FedAvg"])
    assert len(cells["MoFedSAM"]) == len(cells["FedLESAM-D"]) == 3
    frame = _rows_of(tmp_path)
    monkeypatch.setattr(runner, "results_frame", frame)
    metric = METRICS["lesam_rounds"]
    mofedsam, lesam_d = (frame(cells[a]).to_dict("records")[0] for a in ("MoFedSAM", "FedLESAM-D"))
    assert metric(mofedsam) == 810.0 and metric.censored(mofedsam)
    assert metric(lesam_d) == 20.0 and not metric.censored(lesam_d)
    # a paired t test on 790 rounds saved at every seed would hold; the censored value is
    # ranked worst and the sign test of 3 wins of 3 (p = 2 x 0.5^3 = 0.25) cannot decide
    result = evaluate(claim, "paper", store=tmp_path, seeds=(0, 1, 2))
    first = next(c for c in result["comparisons"] if 1 in c["listed"])
    assert first["test"] == "sign" and first["p"] == pytest.approx(0.25)
    assert first["censored"] == {"better": [], "worse": [0, 1, 2]}
    assert first["verdict"] == "cannot_decide"
    # the cost and time it took are lower bounds too: censored, while a run that reached is not
    for name in ("communication_cost_ratio", "compute_time_ratio"):
        ratio = METRICS[name]
        assert ratio.censored(mofedsam) and not ratio.censored(lesam_d)
        assert ratio(mofedsam) > ratio(lesam_d)


# --------------------------------------------------------------------------- the pages' cells: seed means

def _per_run_efficiency():
    import pandas as pd

    # FedSAM at 68: seeds 0-2 timed, seed 2 never reached (counted at 310); seed 3 trained in a
    # batch (not timed): its rounds count, its computation time does not.  FedAvg: one seed.
    return pd.DataFrame({
        "case": ["Table 5"] * 5, "target": [68] * 5, "algorithm": ["FedSAM"] * 4 + ["FedAvg"],
        "seed": [0, 1, 2, 3, 0], "timed": [True, True, True, False, True],
        "target_accuracy": [0.60, 0.62, 0.64, 0.66, 0.60], "rounds": [100, 120, 310, 140, 200],
        "reached": [True, True, False, True, True], "rounds_ratio": [0.5, 0.6, 1.55, 0.7, 1.0],
        "cost_ratio": [0.5, 0.6, 1.55, 0.7, 1.0], "compute_ratio": [1.0, 1.2, 3.1, 9.0, 1.0]})


def test_efficiency_cells_are_seed_means_with_sd_n_and_the_never_reached():
    from flcore.papers.fedlesam.results import efficiency_cells

    cells = efficiency_cells(_per_run_efficiency()).set_index("algorithm")
    sam = cells.loc["FedSAM"]
    # rounds: all four runs, the never-reached one at its lower bound 310
    assert sam["rounds"] == pytest.approx((100 + 120 + 310 + 140) / 4) and sam["rounds_n"] == 4
    assert sam["rounds_sd"] == pytest.approx(math.sqrt((67.5 ** 2 + 47.5 ** 2 + 142.5 ** 2 + 27.5 ** 2) / 3))
    assert sam["rounds_never"] == 1
    # computation time: the timed runs only (a time), the batched seed 3 left out
    assert sam["compute_ratio"] == pytest.approx((1.0 + 1.2 + 3.1) / 3) and sam["compute_ratio_n"] == 3
    assert sam["compute_ratio_sd"] == pytest.approx(math.sqrt(((1.0 - 1.7667) ** 2 + (1.2 - 1.7667) ** 2
                                                               + (3.1 - 1.7667) ** 2) / 2), abs=1e-3)
    assert sam["compute_ratio_never"] == 1
    assert sam["target_accuracy"] == pytest.approx(0.63)
    fedavg = cells.loc["FedAvg"]
    assert fedavg["rounds"] == 200 and fedavg["rounds_n"] == 1 and math.isnan(fedavg["rounds_sd"])
    assert fedavg["rounds_never"] == 0
    assert len(efficiency_cells(_per_run_efficiency().iloc[:0])) == 0


def test_a_cell_with_never_reached_seeds_says_so():
    from flcore.papers.fedlesam.results import censored_text, efficiency_cells, efficiency_shown

    assert censored_text(167.5, 96.39, 4, 1) == "\u2265 167.50 \u00b1 96.39 (n = 4; 1 never reached)"
    assert censored_text(310.0, float("nan"), 1, 1) == "\u2265 310.00 (never reached)"
    assert censored_text(1.7, 0.25, 3) == "1.70 \u00b1 0.25 (n = 3)"
    shown = efficiency_shown(efficiency_cells(_per_run_efficiency())).set_index("algorithm")
    assert shown.loc["FedSAM", "rounds"] == "\u2265 167.50 \u00b1 96.39 (n = 4; 1 never reached)"
    assert shown.loc["FedSAM", "compute-time ratio (timed runs)"] == "\u2265 1.77 \u00b1 1.16 (n = 3; 1 never reached)"
    assert shown.loc["FedAvg", "rounds"] == "200.00" and shown.loc["FedSAM", "target accuracy (%)"] == "63.00"


def test_published_beside_ours_prints_our_seed_means():
    import pandas as pd

    from flcore.papers.fedlesam.results import beside_published_shown, efficiency_beside_published, efficiency_cells
    from flcore.report.numbers import MISSING

    cells = efficiency_cells(_per_run_efficiency())
    paper = pd.DataFrame({"algorithm": ["FedAvg", "FedSAM", "MoFedSAM"], "target": [68] * 3,
                          "rounds_ratio": ["1", "0.7", "0.6"], "cost_ratio": ["1", "0.7", "0.6"],
                          "compute_time_ratio": ["1", "1.96", "1.08"]})
    merged = efficiency_beside_published(paper, cells)
    assert merged["compute_ratio"].iloc[1] == pytest.approx(5.3 / 3)  # the mean, as the verdicts read it
    shown = beside_published_shown(merged, cells)
    assert shown["compute_ratio ours"].tolist()[:2] == ["1.00", "\u2265 1.77 \u00b1 1.16 (n = 3; 1 never reached)"]
    assert shown["compute_ratio paper"].tolist() == [1.0, 1.96, 1.08]
    assert shown["cost_ratio ours"].iloc[1] == "\u2265 0.84 \u00b1 0.48 (n = 4; 1 never reached)"
    assert shown["rounds_ratio ours"].iloc[2] == MISSING  # published, not run here


def test_seconds_per_round_cells_are_the_timed_runs_means(tmp_path):
    import pandas as pd

    from flcore.papers.fedlesam.results import seconds_per_round_cells, seconds_per_round_runs

    seconds = {("FedAvg", 0): 1.0, ("FedLESAM", 0): 1.1, ("FedLESAM", 1): 1.3, ("FedLESAM", 2): 1.2,
               ("FedSAM", 0): 2.0, ("FedSAM", 1): 2.4}
    rows = []
    for (algorithm, seed), s in seconds.items():
        spec = fedlesam.lesam_run("CIFAR-10", algorithm, "Dir-0.1", "100 clients, 10%", seed, "smoke")
        run = RunStore(tmp_path).create(spec.run_id(), spec.resolve().canonical())
        # FedSAM's seed 1 trained in a batch of two: its record is a share of a round, left out
        run.set_status("finished", seconds_per_round=s, seconds_per_round_sd=0.0, timed_rounds=4,
                       batch_runs=2 if (algorithm, seed) == ("FedSAM", 1) else 1)
        rows.append({"algorithm": algorithm, "seed": seed, "status": "finished", "run_dir": str(run.path)})
    rows.append({"algorithm": "FedSAM", "seed": 2, "status": "new", "run_dir": None})
    per_run = seconds_per_round_runs(pd.DataFrame(rows))
    assert per_run["timed"].tolist() == [True] * 6 + [False]
    cells = seconds_per_round_cells(per_run).set_index("algorithm")
    assert cells.loc["FedLESAM", "ours"] == pytest.approx(1.2) and cells.loc["FedLESAM", "seeds"] == 3
    assert cells.loc["FedLESAM", "ours_std"] == pytest.approx(0.1)
    assert cells.loc["FedSAM", "ours"] == 2.0 and cells.loc["FedSAM", "seeds"] == 1
    assert cells.loc["FedLESAM", "ratio"] == pytest.approx(1.2) and cells.loc["FedSAM", "ratio"] == 2.0


class _Page:
    """Records the captions and shown frames of a page's tables."""

    def __init__(self, artifact_id):
        self.artifact_id, self.captions, self.shown = artifact_id, [], []

    def table(self, frame, caption, downloads=None, show=None):
        self.captions.append(caption)
        self.shown.append(frame if show is None else show)


def test_pages_without_finished_runs_print_no_nan():
    import pandas as pd

    from flcore.papers.fedlesam.results import show_efficiency, show_published_beside_ours, show_seconds_per_round

    page = _Page("fedlesam-table-8")
    show_seconds_per_round(page, pd.DataFrame([{"algorithm": "FedAvg", "seed": 0, "status": "new",
                                                "run_dir": None}]), "small")
    page5 = _Page("fedlesam-table-5")
    cells = show_efficiency(page5, pd.DataFrame(columns=["case", "target", "algorithm", "seed", "status", "run_dir"]),
                            "small")
    show_published_beside_ours(page5, cells)
    for p in (page, page5):
        assert p.captions and not any("nan" in caption for caption in p.captions)
        assert not any("nan" in frame.to_string() for frame in p.shown)


def test_seconds_print_with_three_significant_digits():
    import pandas as pd

    from flcore.papers.fedlesam.results import seconds_digits

    assert seconds_digits(pd.Series([0.0141, 0.0271])) == 4  # 0.0141, not 0.01
    assert seconds_digits(pd.Series([0.25, 1.5])) == 3
    assert seconds_digits(pd.Series([20.34, 29.88, None])) == 2
    assert seconds_digits(pd.Series([None], dtype=float)) == 2
