"""The FedSAM analysis artifacts' runs, and the claims' seed spread measured per metric."""
from __future__ import annotations

import pytest

from flcore.papers.fedsam import analysis as fedsam_analysis
from flcore.papers.fedsam import runs as fedsam
from flcore.reproduction import claims as claims_module
from flcore.reproduction.artifacts import get_artifact
from flcore.reproduction.claims import get_claim, labels_match


def _ids(specs):
    return {s.run_id() for s in specs}


@pytest.mark.parametrize("scale", ["smoke", "small"])
def test_final_model_pages_train_nothing_table_2_does_not(scale):
    table2 = _ids(fedsam.table2_runs(scale))
    for artifact in ("fedsam-table-1", "fedsam-fig-1", "fedsam-fig-5", "fedsam-fig-14", "fedsam-fig-15"):
        extra = [s for s in get_artifact(artifact).runs(scale, [0]) if s.run_id() not in table2]
        # the smoke grid has no alpha = 0.5 (Figs. 14 and 15 add those runs there)
        assert [s.labels["alpha"] for s in extra] == ([0.5] * len(extra) if scale == "smoke" else []), artifact


def test_table1_runs_match_the_flatness_claims_cells():
    claim = get_claim("fedsam-flatter-minima")
    specs = get_artifact("fedsam-table-1").runs("small", [0])
    assert len(specs) == 14
    for comparison in claim.comparisons:
        for cell in (comparison.better, comparison.worse):
            assert len([s for s in specs if labels_match(s.labels, cell)]) == 1, cell


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_recorded_runs_probe_and_snapshot_their_last_round(scale):
    specs = fedsam_analysis._recorded(fedsam_analysis.RECORDED_PAPER)(scale, [0, 1])
    assert len(specs) == len(fedsam_analysis.RECORDED[scale])  # first seed only
    table2 = _ids(fedsam.table2_runs(scale))
    for spec in specs:
        cfg = spec.resolve()
        assert cfg.probes == fedsam_analysis.PROBES and cfg.probe_every == fedsam_analysis.PROBE_EVERY[scale]
        assert cfg.snapshot_rounds == (cfg.rounds,)
        assert spec.run_id() not in table2  # a new run ...
        plain = fedsam_analysis.final_model_run(spec.labels["algorithm"], spec.labels["alpha"], 0, scale)
        same = {k: v for k, v in cfg.canonical().items() if k not in ("probes", "probe_every", "snapshot_rounds")}
        assert same == plain.resolve().canonical()  # ... of the same configuration


def test_below_paper_only_fedavg_is_recorded_and_pages_say_which_panels_are_missing():
    assert all(algorithm == "FedAvg E=1" for algorithm, _ in fedsam_analysis.RECORDED["small"])
    fig4 = get_artifact("fedsam-fig-4")
    assert {s.labels["algorithm"] for s in fig4.runs("small", [0])} == {"FedAvg E=1"}
    assert {s.labels["algorithm"] for s in fig4.runs("paper", [0])} == {"FedAvg E=1", "FedASAM"}


def test_the_flatness_claim_is_read_in_its_own_metric_and_never_borrows_a_spread(monkeypatch):
    from flcore.config import resolve_config

    asked = []

    def spread(scale, store=None, metric="accuracy"):
        asked.append(metric)
        return {"sd": {"accuracy": 1.0, "fedsam_lambda_max": 7.0}[metric], "df": 4}

    small = resolve_config({"method": "fedavg", "scale": "small"})
    monkeypatch.setattr(claims_module, "reference_spread", spread)
    monkeypatch.setattr(claims_module, "cell_values",
                        lambda claim, cell, *a: claims_module.CellValues(
                            {0: 50.0 if cell.get("algorithm") != "FedAvg E=1" else 60.0},
                            {0: repr(sorted(cell.items()))}, [small]))
    results = {r["id"]: r for r in claims_module.evaluate_claims("small", papers=["fedsam"])}
    assert claims_module.METRICS["fedsam_lambda_max"].function is fedsam_analysis.lambda_max_of_row
    assert results["fedsam-flatter-minima"]["metric"] == "fedsam_lambda_max"
    # one seed, gap -10 (lower is better): the reference pairs' lambda_max spread (7 on 4 df) once
    # judged it; now one seed is indicative, and no spread is asked for
    flatter = results["fedsam-flatter-minima"]["comparisons"][0]
    assert results["fedsam-flatter-minima"]["verdict"] == "inconclusive" and flatter["gap"] == -10.0
    assert flatter["verdict"] == "indicative" and flatter["threshold"] is None and asked == []
    assert flatter["units"] == "lambda_max"


def test_client_eigenvalue_row_means_the_first_and_last_probed_rounds():
    import pandas as pd

    history = pd.DataFrame({"round": [2, 2, 4, 4, 6, 6], "slot": [0, 1] * 3, "value": [1.0, 3.0, 9.0, 5.0, 4.0, 6.0]})
    row = fedsam_analysis.client_eigenvalue_row("FedAvg E=1", 0.5, history, global_max=12.0)
    assert row["probed rounds"] == 3
    assert row["client lambda_max (first probe)"] == pytest.approx(2.0)
    assert row["client lambda_max (last probe)"] == pytest.approx(5.0)
    assert row["client lambda_max (largest)"] == 9.0
    lines = fedsam_analysis.client_eigenvalue_findings([row], ["FedASAM at alpha = 0"], "smoke")
    assert lines == ["FedAvg at alpha = 0.5: the clients' top eigenvalue goes from 2.00 to 5.00 (mean over the "
                     "round's clients), the final global model's is 12.00.",
                     "Not drawn at the smoke scale (recorded runs train alone; the book's budget): "
                     "FedASAM at alpha = 0."]


def test_client_plane_findings_give_the_clients_range_and_their_average():
    import pandas as pd

    values = pd.DataFrame({"alpha": [0.0] * 4, "model": ["client 0", "client 1", "client 2", "their average"],
                           "train loss": [0.5, 0.25, 0.75, 2.0], "test error (%)": [10.0, 20.0, 30.0, 40.0]})
    assert fedsam_analysis.client_plane_findings(values, "loss") == [
        "alpha = 0: the three clients' train loss ranges from 0.25 to 0.75; at their average it is 2."]
    assert fedsam_analysis.client_plane_findings(values, "error") == [
        "alpha = 0: the three clients' test error ranges from 10 to 30; at their average it is 40."]
    assert fedsam_analysis.client_plane_findings(values.iloc[:0], "loss") == []


def test_spectrum_findings_count_fedasam_eigenvalues_below_fedavg():
    table = fedsam_analysis.spectrum_table({("FedAvg E=1", 0.0): [5.0, 3.0, 1.0], ("FedASAM", 0.0): [4.0, 3.5, 0.5],
                                            ("FedAvg E=2", 0.0): [9.0, 8.0, 7.0], ("FedAvg E=1", 1000.0): [2.0, 1.0,
                                                                                                       0.5]})
    assert list(table.columns) == ["algorithm", "alpha", "lambda_1", "lambda_2", "lambda_3"]
    # alpha = 1000 has no FedASAM spectrum: no sentence
    assert fedsam_analysis.spectrum_findings(table, 3) == [
        "alpha = 0: 2 of FedASAM's top 3 eigenvalues lie below FedAvg's (the paper: all of them)."]
    assert fedsam_analysis.spectrum_findings(table.iloc[:0], 3) == []


def test_client_plane_rows_name_the_clients_and_their_average_in_percent():
    from types import SimpleNamespace

    import pandas as pd

    surface = SimpleNamespace(model_loss=[0.5, 0.25, 0.75, 2.0], model_error=[0.1, 0.2, 0.3, 0.4])
    rows = fedsam_analysis.client_plane_rows(surface, [7, 3, 9])
    assert [r["model"] for r in rows] == ["client 7", "client 3", "client 9", "their average"]
    assert [r["train loss"] for r in rows] == [0.5, 0.25, 0.75, 2.0]
    assert [r["test error (%)"] for r in rows] == pytest.approx([10.0, 20.0, 30.0, 40.0])
    unfinished = pd.DataFrame({"alpha": [0.0], "status": ["failed"], "run_dir": ["nowhere"]})
    assert fedsam_analysis.client_planes(unfinished, settings=None) == {}


def test_table1_cells_are_the_seed_means_the_verdict_reads(monkeypatch):
    import math

    import numpy as np
    import pandas as pd

    spectra = {"a0": [10.0, 5.0, 4.0, 3.0, 2.0], "a1": [12.0, 6.0, 5.0, 4.0, 3.0], "a2": [17.0, 9.0, 5.0, 3.0, 1.0],
               "b0": [20.0, 10.0, 8.0, 6.0, 4.0]}
    seen = []

    def spectrum(row, device="cpu", data_root=None):
        seen.append(row["run_id"])
        return None if row["status"] != "finished" else np.array(spectra[row["run_id"]])

    monkeypatch.setattr(fedsam_analysis, "spectrum_of_row", spectrum)
    cell = {"dataset": "CIFAR-100", "alpha": 0.0}
    runs = pd.DataFrame([
        {**cell, "algorithm": "FedSAM", "seed": 0, "status": "finished", "run_id": "a0"},
        {**cell, "algorithm": "FedSAM", "seed": 1, "status": "finished", "run_id": "a1"},
        {**cell, "algorithm": "FedSAM", "seed": 2, "status": "finished", "run_id": "a2"},
        {**cell, "algorithm": "FedSAM", "seed": 3, "status": "diverged", "run_id": "a3"},
        {**cell, "algorithm": "FedAvg E=1", "seed": 0, "status": "finished", "run_id": "b0"},
        {**cell, "algorithm": "FedAvg E=1", "seed": 0, "status": "finished", "run_id": "b0"},  # one run, two rows
    ])
    measured = fedsam_analysis.table1_spectra(runs)
    assert seen == ["a0", "a1", "a2", "a3", "b0"]
    lam = fedsam_analysis.table1_cells(measured, "lambda_max").set_index("algorithm")
    # (10 + 12 + 17) / 3 = 13; sd = sqrt(((-3)^2 + (-1)^2 + 4^2) / 2) = sqrt(13); the diverged seed left out
    assert lam.loc["FedSAM", "ours"] == pytest.approx(13.0)
    assert lam.loc["FedSAM", "ours_std"] == pytest.approx(math.sqrt(13.0))
    assert lam.loc["FedSAM", "seeds"] == 3 and lam.loc["FedSAM", "left_out"] == 1
    assert lam.loc["FedSAM", "ours"] != spectra["a0"][0]  # not seed 0 alone
    assert lam.loc["FedAvg E=1", "ours"] == 20.0 and lam.loc["FedAvg E=1", "seeds"] == 1
    assert math.isnan(lam.loc["FedAvg E=1", "ours_std"])
    ratio = fedsam_analysis.table1_cells(measured, "ratio").set_index("algorithm")
    # lambda_max / lambda_5 per seed: 5, 4, 17; their mean 26 / 3
    assert ratio.loc["FedSAM", "ours"] == pytest.approx(26.0 / 3.0) and ratio.loc["FedSAM", "seeds"] == 3


def test_table1_page_reads_the_flatness_claims_seeds():
    from flcore.reproduction.claims import CLAIM_SEEDS
    from flcore.reproduction.table_check import page_specs

    specs = page_specs(get_artifact("fedsam-table-1"), "small")
    for algorithm in ("FedAvg E=1", "FedSAM", "FedASAM"):
        seeds = {s.labels["seed"] for s in specs if s.labels["algorithm"] == algorithm and s.labels["alpha"] == 0.0}
        assert seeds == set(CLAIM_SEEDS["small"])


def test_table1_ranks_for_flatness_only_the_methods_that_learn():
    import pandas as pd

    cells = pd.DataFrame({"algorithm": ["FedAvg E=1", "FedSAM", "FedASAM", "FedAvg E=2"], "alpha": 0.0,
                          "ours": [5.0, 3.0, 4.0, float("nan")]})
    accuracy = {"FedAvg E=1": (0.40, 0.41, 0.39), "FedSAM": (0.100, 0.102, 0.098), "FedASAM": (0.50, 0.52, 0.54)}
    runs = pd.DataFrame([{"algorithm": a, "alpha": 0.0, "seed": s, "status": "finished", "run_id": f"{a}{s}",
                          "mean_last_100": v} for a, values in accuracy.items() for s, v in enumerate(values)])
    # FedSAM's seeds at 10.0, 10.2 and 9.8 % where chance is 10 %: all below chance + 5 (the learn
    # margin), flattest but not ranked
    assert fedsam_analysis.lowest_learning(cells, runs, 10.0) == ("FedASAM", ["FedSAM"])
    # at 5 % chance two of its three seeds reach 10 %: it learns (unstable), and is the flattest
    assert fedsam_analysis.lowest_learning(cells, runs, 5.0) == ("FedSAM", [])
    # one seed decides alone
    one = runs[runs["seed"] == 1]  # FedSAM at 10.2 %
    assert fedsam_analysis.lowest_learning(cells, one, 10.0) == ("FedASAM", ["FedSAM"])
    assert fedsam_analysis.lowest_learning(cells, one, 5.0) == ("FedSAM", [])
    # a mean below chance is not learning either
    below = runs.assign(mean_last_100=[0.06 if a == "FedSAM" else v for a, v in zip(runs["algorithm"],
                                                                                 runs["mean_last_100"])])
    assert fedsam_analysis.lowest_learning(cells, below, 10.0) == ("FedASAM", ["FedSAM"])


def test_loss_rise_is_the_mean_over_the_grid_minus_the_centre():
    from types import SimpleNamespace

    import numpy as np

    loss = np.array([[3.0, 3.0, 3.0], [3.0, 1.0, 3.0], [3.0, 3.0, 6.0]])
    surface = SimpleNamespace(loss=loss, xs=[-1, 0, 1], ys=[-1, 0, 1])
    rise, centre = fedsam_analysis.loss_rise(surface)
    assert centre == 1.0 and rise == pytest.approx(28.0 / 9 - 1.0)


def test_lowest_model_per_alpha():
    import pandas as pd

    values = pd.DataFrame({"alpha": [0.0, 0.0, 1.0], "model": ["FedAvg", "FedSAM", "FedAvg"],
                           "train loss": [0.5, 0.4, 0.9]})
    assert fedsam_analysis.lowest_model(values, 0.0, "train loss") == "FedSAM"
    assert fedsam_analysis.lowest_model(values, 1.0, "train loss") == "FedAvg"
    assert fedsam_analysis.lowest_model(values, 5.0, "train loss") == "none"


def test_client_accuracy_spread_by_hand():
    import pandas as pd

    history = pd.DataFrame({"round": [2, 1, 1, 2, 3, 3], "client": [0, 0, 1, 1, 0, 1],
                            "accuracy": [0.6, 0.5, 0.2, 0.4, 0.5, 0.8]})
    spread, swing = fedsam_analysis.client_accuracy_spread(history)
    # last round (3): 0.5 and 0.8, sample sd 0.2121; client 0 moves 0.1, 0.1 (mean 0.1), client 1
    # 0.2, 0.4 (mean 0.3): mean swing 0.2
    assert spread == pytest.approx(0.3 / 2 ** 0.5 * 100) and swing == pytest.approx(20.0)
    assert fedsam_analysis.client_accuracy_spread(history.iloc[:0]) is None


def test_table1_findings_name_the_three_methods_and_the_verdict():
    import pandas as pd

    lam = pd.Series({("FedAvg E=1", 0.0): 10.0, ("FedSAM", 0.0): 5.5, ("FedASAM", 1.0): 1.0})
    one = fedsam_analysis.table1_findings(lam, 0.5, pd.DataFrame({"verdict": ["not_run"]}), "small")
    assert one[0].startswith("At the **small** scale, alpha = 0: lambda_max is 10.00 with FedAvg, 5.50 with FedSAM "
                             "and nan with FedASAM (paper: 93.46")
    assert one[0].endswith("mean Kendall's \u03c4 of 0.50.") and one[1].startswith("The claim this table checks: "
                                                                                  "**not run**")
    two = fedsam_analysis.table1_findings(lam, 0.5, pd.DataFrame({"verdict": ["holds", "fails"]}), "small")
    assert two[1].startswith("Of the 2 claims this table checks, 2 are decided (1 hold, 1 fail); ties")
