"""FedGF result and analysis artifacts: their runs are the shared CNN-protocol runs, Table 4's
counting against hand computations, one further round from a stored state equals a run one
round longer, and the claims' metrics read stored runs."""
from __future__ import annotations

import json

import pandas as pd
import pytest
import torch

from flcore import resolve_config, run_experiment
from flcore.papers.fedgf import analysis as fedgf_analysis
from flcore.papers.fedgf import runs as fedgf
from flcore.papers.fedsam import runs as fedsam
from flcore.reproduction.claims import METRICS, all_claims
from flcore.store import RunStore

# ----------------------------------------------------------------------------- runs

def test_table1_paper_grid_is_198_runs_and_shares_the_fedsam_pages_runs():
    specs = fedgf.table1_runs("paper")
    assert len(specs) == 198 and len({s.run_id() for s in specs}) == 198
    sam_ids = {s.run_id() for s in fedsam.table2_runs("paper")}
    shared = [s for s in specs if s.labels["algorithm"] in ("FedAvg", "FedSAM", "FedASAM")]
    assert len(shared) == 54 and all(s.run_id() in sam_ids for s in shared)
    # no override beyond the method and the grid: other pages can share every run
    assert all(set(s.config) == {"method", "dataset", "scale", "alpha", "per_round", "seed"} for s in specs)


def test_small_grid_runs_every_cell_a_claim_compares():
    by_artifact = {"fedgf-table-1": fedgf.table1_runs, "fedgf-table-2": fedgf.table2_runs,
                   "fedgf-table-4": fedgf.table4_runs, "fedgf-table-5": fedgf.table5_runs,
                   "fedgf-fig-1": fedgf.fig1_runs}
    for claim in all_claims():
        if claim.paper != "fedgf":
            continue
        runs = [s for a in claim.artifacts if a in by_artifact for s in by_artifact[a]("small")]
        matched = 0
        for comparison in claim.comparisons:
            cells = [comparison.better, comparison.worse]
            if all(any(all(s.labels.get(k) == v for k, v in cell.items()) for s in runs) for cell in cells):
                matched += 1
        assert matched, claim.id  # at least one comparison decides a verdict at small


def test_static_c_runs_and_the_c0_column_is_fedsam():
    specs = fedgf.table5_runs("paper")
    static = [s for s in specs if s.method == "fedgf-static-c"]
    assert {s.config["fedgf_static_c"] for s in static} == {0.5, 1.0}
    assert all(s.labels["c"] == s.config["fedgf_static_c"] for s in static)
    c0 = [s for s in specs if s.labels["algorithm"] == "FedSAM"]
    assert {s.run_id() for s in c0} <= {s.run_id() for s in fedsam.table2_runs("paper")}


# ----------------------------------------------------------------------------- Table 4 counting

def _curve(rounds, accuracy):
    return pd.DataFrame({"round": rounds, "test_accuracy": accuracy})


def test_a_target_never_reached_is_counted_censored():
    curve = _curve([10, 20, 30, 40], [0.2, 0.5, 0.45, 0.7])
    reached = fedgf_analysis.transmissions_to_target(curve, "fedgf", 0.5)
    assert (reached["rounds"], reached["reached"]) == (20, True)
    never = fedgf_analysis.transmissions_to_target(curve, "fedgf", 0.9)
    assert (never["rounds"], never["reached"], never["transmissions"]) == (41, False, 41 * 3 / 100)


def test_transmissions_to_target_use_table3_counts():
    curve = _curve([10, 20, 30], [0.1, 0.3, 0.6])
    gf = fedgf_analysis.transmissions_to_target(curve, "fedgf", 0.5)
    smoo = fedgf_analysis.transmissions_to_target(curve, "fedsmoo-noreg", 0.25)
    assert (gf["rounds"], gf["per_round"], gf["transmissions"]) == (30, 3, 0.9)
    assert (smoo["rounds"], smoo["per_round"], smoo["transmissions"]) == (20, 4, 0.8)


def test_transmissions_table_targets_fedavg_of_the_same_setting():
    runs = pd.DataFrame([
        {"dataset": "D", "alpha": 0.0, "seed": 0, "algorithm": "FedAvg", "method": "fedavg", "status": "finished",
         "mean_last_100": 0.5, "run_id": "a"},
        {"dataset": "D", "alpha": 0.0, "seed": 0, "algorithm": "FedGF", "method": "fedgf", "status": "finished",
         "mean_last_100": 0.7, "run_id": "b"},
        {"dataset": "D", "alpha": 1.0, "seed": 0, "algorithm": "FedGF", "method": "fedgf", "status": "finished",
         "mean_last_100": 0.7, "run_id": "c"},  # no FedAvg run at alpha 1: left out
    ])
    metrics = pd.concat([_curve([1, 2, 3], [0.1, 0.5, 0.6]).assign(run_id="a"),
                         _curve([1, 2, 3], [0.2, 0.55, 0.7]).assign(run_id="b"),
                         _curve([1, 2, 3], [0.9, 0.9, 0.9]).assign(run_id="c")])
    table = fedgf_analysis.transmissions_table(runs, metrics)
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["algorithm"], row["rounds"], row["target"]) == ("FedGF", 2, 50.0)
    assert row["transmissions"] == pytest.approx(2 * 3 / 100)


def _cell(dataset, alpha, algorithm, run_id, rounds, reached, per_round):
    return {"dataset": dataset, "alpha": alpha, "seed": 0, "algorithm": algorithm, "target": 50.0, "rounds": rounds,
            "reached": reached, "per_round": per_round, "transmissions": rounds * per_round / 100, "run_id": run_id}


def test_first_to_target_counts_each_pair_of_runs_once_and_never_a_censored_count():
    table = pd.DataFrame([
        # both CIFAR labels at alpha = 0 are the same two runs: one comparison
        _cell("CIFAR-10", 0.0, "FedGF", "gf0", 10, True, 3), _cell("CIFAR-10", 0.0, "FedSMOO", "sm0", 10, True, 4),
        _cell("CIFAR-100", 0.0, "FedGF", "gf0", 10, True, 3), _cell("CIFAR-100", 0.0, "FedSMOO", "sm0", 10, True, 4),
        # neither reaches the target: both counted at the last round + 1, 4/3 apart by construction
        _cell("CIFAR-100", 1000.0, "FedGF", "gf1", 31, False, 3),
        _cell("CIFAR-100", 1000.0, "FedSMOO", "sm1", 31, False, 4),
        # only FedSMOO reaches it
        _cell("CIFAR-10", 100.0, "FedGF", "gf2", 31, False, 3), _cell("CIFAR-10", 100.0, "FedSMOO", "sm2", 20, True, 4),
    ])
    pairs = fedgf_analysis.first_to_target(table)
    assert len(pairs) == 3
    assert list(pairs["settings"]) == ["CIFAR-10, alpha = 0; CIFAR-100, alpha = 0", "CIFAR-100, alpha = 1000",
                                       "CIFAR-10, alpha = 100"]
    assert list(pairs["outcome"]) == [fedgf_analysis.FIRST, fedgf_analysis.NEITHER, fedgf_analysis.SECOND]
    assert int((~pairs["FedGF reached"]).sum()) == 2
    same = fedgf_analysis.first_to_target(pd.DataFrame([_cell("D", 0.0, "FedGF", "a", 10, True, 4),
                                                        _cell("D", 0.0, "FedSMOO", "b", 10, True, 4)]))
    assert list(same["outcome"]) == [fedgf_analysis.SAME]


# ----------------------------------------------------------------------------- stored runs

@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("gf-store")
    for method in ("fedavg", "fedgf"):
        for rounds in (2, 3):
            run_experiment(resolve_config(scale="smoke", method=method, rounds=rounds, eval_every=1, eval_last=1),
                           store=root)
    return root


def _run_dir(store, method, rounds):
    cfg = resolve_config(scale="smoke", method=method, rounds=rounds, eval_every=1, eval_last=1)
    return store / cfg.run_id()


@pytest.mark.parametrize("method", ["fedavg", "fedgf"])
def test_extra_round_equals_a_run_one_round_longer(store, method):
    local = fedgf_analysis.extra_round(_run_dir(store, method, 2))
    cfg = local.cfg
    assert len(local.client_ids) == cfg.per_round and local.client_models.shape[0] == cfg.per_round
    assert not torch.equal(local.client_models[0], local.w)
    # the clients' models, averaged by their data sizes (FedAvg's and FedGF's server step), are the 3-round run's model
    sizes = torch.tensor([float(x.shape[0]) for x, _ in local.client_data])
    average = (local.client_models * (sizes / sizes.sum())[:, None]).sum(0)
    longer = RunStore(store).run(_run_dir(store, method, 3).name).load_checkpoint()["w"]
    assert torch.allclose(average, longer, atol=1e-6)


def test_global_flatness_is_cached_and_uses_the_fedsam_radius(store):
    run_dir = _run_dir(store, "fedavg", 2)
    first = fedgf_analysis.global_flatness(run_dir, "smoke")
    cache_path = run_dir / "analysis" / f"{fedgf_analysis.CACHE_NAME}.json"
    cache = json.loads(cache_path.read_text())
    assert list(cache.values()) == [first]
    assert first["rho"] == resolve_config(scale="smoke", method="fedsam").rho
    assert first["lambda_max"] > 0 and first["flatness_discrepancy"] >= 0
    assert first["flatness_discrepancy"] == pytest.approx(abs(first["global_sharpness"] - first["local_sharpness"]))
    assert fedgf_analysis.global_flatness(run_dir, "smoke") == first


def test_an_edited_analysis_cache_is_computed_again_and_verify_names_it(store, monkeypatch, capsys):
    """Made-up numbers written into a run's cache (a verdict reads them) are never shown: the
    cache's digest no longer matches, so the numbers are computed again, and
    ``flcore runs --verify`` reports the file (exit 3) until then."""
    from cli_runner import run_cli

    run_dir = _run_dir(store, "fedavg", 2)
    first = fedgf_analysis.global_flatness(run_dir, "smoke")
    cache_path = run_dir / "analysis" / f"{fedgf_analysis.CACHE_NAME}.json"
    written = json.loads(cache_path.read_text())
    made_up = {key: {**value, "flatness_discrepancy": 123.0} for key, value in written.items()}
    cache_path.write_text(json.dumps(made_up))
    code, out, _ = run_cli(capsys, "runs", "--store", str(store), "--verify")
    assert code == 3 and "DAMAGED: analysis/fedgf.json: " in out
    assert fedgf_analysis.global_flatness(run_dir, "smoke") == first  # recomputed, not read
    code, _, _ = run_cli(capsys, "runs", "--store", str(store), "--verify")
    assert code == 0  # the rewritten cache is the one its digest names


def test_claims_metrics_read_stored_runs(store, monkeypatch):
    assert {"fedgf_lambda_max", "lpf", "flatness_discrepancy", "communication"} <= set(METRICS)
    gf_dir = _run_dir(store, "fedgf", 3)
    row = {"run_dir": str(gf_dir), "status": "finished", "method": "fedgf", "dataset": "CIFAR-10", "alpha": 0.0,
           "clients_per_round": 5, "seed": 0}
    # the FedAvg target of the same setting: point the spec builder at the 3-round FedAvg run
    fedavg_cfg = resolve_config(scale="smoke", method="fedavg", rounds=3, eval_every=1, eval_last=1)
    monkeypatch.setattr(fedgf, "gf_run", lambda *a, **k: type("S", (), {"run_id": lambda self: fedavg_cfg.run_id()})())
    target = RunStore(store).run(fedavg_cfg.run_id()).summary()["mean_last_100"]
    metrics = RunStore(store).metrics(gf_dir.name)
    expected = fedgf_analysis.transmissions_to_target(metrics, "fedgf", float(target))["transmissions"]
    assert METRICS["communication"](row) == pytest.approx(expected)
    reached = fedgf_analysis.transmissions_to_target(metrics, "fedgf", float(target))["reached"]
    assert METRICS["communication"].censored(row) is (not reached)
    # a target above every evaluation is never reached: the count is censored
    monkeypatch.setattr(fedgf_analysis, "transmissions_to_target",
                        lambda m, method, t: {"rounds": 4, "reached": False, "per_round": 2, "transmissions": 0.08})
    assert METRICS["communication"].censored(row) is True
    assert METRICS["fedgf_lambda_max"](row) == pytest.approx(fedgf_analysis.global_flatness(gf_dir)["lambda_max"])
    assert METRICS["lpf"]({**row, "status": "running"}) is None


def test_reference_spread_of_a_claim_is_measured_in_its_own_metric(monkeypatch):
    from flcore.reproduction import claims as claims_module
    from flcore.reproduction import runner

    # lambda_max: FedSAM 10 + 3 x seed over FedAvg 10 at both alphas -> differences (0, 3, 6), sd 3
    def frame(specs, store=None):
        return pd.DataFrame([{"status": "finished", "mean_last_100": 0.3,
                              "lam": 10.0 + (3.0 * s.labels["seed"] if s.labels["algorithm"] == "FedSAM" else 0.0)}
                             for s in specs])

    monkeypatch.setattr(runner, "results_frame", frame)
    monkeypatch.setitem(claims_module.METRICS, "lambda_max",
                        claims_module.Metric("lambda_max", lambda row: row["lam"], "lambda_max"))
    spread = claims_module.reference_spread("small", metric="lambda_max")
    assert spread["sd"] == pytest.approx(3.0) and spread["df"] == 4 and spread["runs"] == 12
    assert claims_module.reference_spread("small") is None  # accuracy: all 30 %, the differences cannot vary
    assert claims_module.reference_spread("small", metric="no-such-metric") is None


# ----------------------------------------------------------------------------- Figures 2 and 6 pages

def test_surface_summary_takes_the_centre_and_the_largest_rise():
    from flcore.analysis.landscape import Landscape2D

    grid = torch.tensor([-1.0, 0.0, 1.0])
    local = Landscape2D(grid, grid, torch.tensor([[3.0, 2.0, 3.0], [2.0, 1.0, 2.0], [3.0, 2.0, 4.0]]), None)
    sharp = Landscape2D(grid, grid, torch.tensor([[9.0, 5.0, 9.0], [5.0, 0.5, 5.0], [9.0, 5.0, 9.0]]), None)
    table = fedgf_analysis.surface_summary({"global_on_global": sharp, "local_on_local": local, "client_id": 3})
    assert list(table["surface"]) == [fedgf_analysis.SURFACE_PANELS["local_on_local"],
                                      fedgf_analysis.SURFACE_PANELS["global_on_global"]]
    assert list(table["loss at the centre"]) == [1.0, 0.5]
    assert list(table["largest rise on the grid"]) == [3.0, 8.5]
    assert fedgf_analysis.surface_summary({}).empty


def test_surface_findings_compare_the_local_and_the_global_rise():
    rises = {"local_on_local": 3.0, "global_on_global": 8.5}
    assert fedgf_analysis.local_flatter(rises) and not fedgf_analysis.local_flatter({"local_on_local": 3.0})
    fedsam_lines = fedgf_analysis.surface_findings(rises, "small", "FedSAM")
    assert fedsam_lines == ["At the **small** scale the local model's surface on its own data is flatter than the "
                            "global model's on the global data (the paper: flat locally, sharp globally). The paper "
                            "gives surfaces only."]
    fedgf_lines = fedgf_analysis.surface_findings({"local_on_local": 9.0, "global_on_global": 8.5}, "smoke", "FedGF")
    assert fedgf_lines[0].startswith("At the **smoke** scale FedGF's global model rises by 8.500 over the grid")
    assert "is not flatter than that" in fedgf_lines[0] and len(fedgf_lines) == 2
