"""The FedGF pages' cells are the seeds' means the verdicts read (flcore.papers.fedgf.results),
checked by hand on small frames: Table 2's flatness means and its ranking among the methods
that learn, Table 4's transmission means with never-reached seeds and the ratio of the means,
Fig. 1's sweep."""
from __future__ import annotations

import dataclasses
import math

import pandas as pd
import pytest

from flcore.papers.fedgf import analysis as fedgf_analysis
from flcore.papers.fedgf import results as cells
from flcore.reproduction.claims import METRICS

# ----------------------------------------------------------------------------- Table 4


def _run(dataset, alpha, algorithm, seed, transmissions, reached=True, run_id=None):
    return {"dataset": dataset, "alpha": alpha, "seed": seed, "algorithm": algorithm, "target": 50.0,
            "rounds": int(transmissions * 100), "reached": reached, "per_round": 3,
            "transmissions": transmissions, "run_id": run_id or f"{algorithm}-{dataset}-{alpha}-{seed}"}


def _table4():
    return pd.DataFrame([
        # alpha = 0: every seed of both reached
        _run("D", 0.0, "FedGF", 0, 0.9), _run("D", 0.0, "FedGF", 1, 1.2), _run("D", 0.0, "FedGF", 2, 1.5),
        _run("D", 0.0, "FedSMOO", 0, 2.0), _run("D", 0.0, "FedSMOO", 1, 2.4), _run("D", 0.0, "FedSMOO", 2, 2.8),
        # alpha = 1: FedSMOO's seed 2 never reached (counted at its last round + 1)
        _run("D", 1.0, "FedGF", 0, 0.3), _run("D", 1.0, "FedGF", 1, 0.6), _run("D", 1.0, "FedGF", 2, 0.9),
        _run("D", 1.0, "FedSMOO", 0, 2.0), _run("D", 1.0, "FedSMOO", 1, 2.4),
        _run("D", 1.0, "FedSMOO", 2, 2.8, reached=False),
    ])


def test_transmission_cells_are_seed_means_with_never_reached_seeds_counted():
    table = cells.transmission_cells(_table4()).set_index(["dataset", "alpha", "algorithm"])
    gf, smoo = table.loc[("D", 0.0, "FedGF")], table.loc[("D", 0.0, "FedSMOO")]
    assert (gf["ours"], gf["ours_std"], gf["seeds"]) == (pytest.approx(1.2), pytest.approx(0.3), 3)
    assert gf["ours"] != 0.9  # not seed 0's
    assert (smoo["ours"], smoo["ours_std"], smoo["never_reached"]) == (pytest.approx(2.4), pytest.approx(0.4), 0)
    assert smoo["ratio"] == pytest.approx(2.4 / 1.2) and math.isnan(gf["ratio"])  # on FedSMOO's row only
    censored = table.loc[("D", 1.0, "FedSMOO")]
    # the never-reached seed is in the mean (as the verdict counts it) and counted, and there is no ratio
    assert (censored["ours"], censored["seeds"], censored["never_reached"]) == (pytest.approx(2.4), 3, 1)
    assert math.isnan(censored["ratio"])
    assert censored["runs"] == ("FedSMOO-D-1.0-0", "FedSMOO-D-1.0-1", "FedSMOO-D-1.0-2")


def test_transmission_cells_mean_is_the_communication_metrics_mean():
    per_run = _table4()
    table = cells.transmission_cells(per_run).set_index(["dataset", "alpha", "algorithm"])
    for (dataset, alpha, algorithm), block in per_run.groupby(["dataset", "alpha", "algorithm"]):
        # the verdict's cell (table_check.printed_cell): the plain mean of every finished run's count
        assert round(table.loc[(dataset, alpha, algorithm), "ours"], 2) == round(block["transmissions"].mean(), 2)


def test_transmission_text_marks_a_lower_bound():
    assert cells.transmission_text(1.2, 0.3, 3, 0) == "1.20 \u00b1 0.30 (n = 3)"
    assert cells.transmission_text(2.4, 0.4, 3, 1) == "\u2265 2.40 \u00b1 0.40 (n = 3; 1 never reached)"
    assert cells.transmission_text(0.9, float("nan"), 1, 0) == "0.90"
    assert cells.transmission_text(0.9, float("nan"), 1, 1) == "\u2265 0.90 (never reached)"


def test_transmissions_comparison_puts_the_means_beside_the_paper():
    published = pd.DataFrame([{"dataset": "D", "alpha": 0.0, "algorithm": "FedGF", "transmissions": 75, "ratio": None},
                              {"dataset": "D", "alpha": 0.0, "algorithm": "FedSMOO", "transmissions": 180,
                               "ratio": 2.4},
                              {"dataset": "E", "alpha": 0.0, "algorithm": "FedGF", "transmissions": 1, "ratio": None}])
    shown = cells.transmissions_comparison(published, cells.transmission_cells(_table4()))
    rows = shown.set_index(["dataset", "alpha", "algorithm"])
    assert rows.loc[("D", 0.0, "FedSMOO"), "ours"] == "2.40 \u00b1 0.40 (n = 3)"
    assert rows.loc[("D", 0.0, "FedSMOO"), "ours: FedSMOO / FedGF"] == "2.00"
    assert rows.loc[("D", 1.0, "FedSMOO"), "ours"].startswith("\u2265 2.40")
    assert rows.loc[("D", 1.0, "FedSMOO"), "never reached"] == 1
    assert (rows.loc[("E", 0.0, "FedGF"), "ours"], rows.loc[("E", 0.0, "FedGF"), "n"]) == ("not run", 0)


def test_mean_first_to_target_decides_on_means_and_lower_bounds():
    runs = _table4()
    extra = pd.DataFrame([
        # FedGF never reaches on every seed, FedSMOO's mean (all reached) is lower: FedSMOO first
        _run("D", 2.0, "FedGF", 0, 3.0, False), _run("D", 2.0, "FedSMOO", 0, 1.0),
        # FedGF's lower bound (one seed reached, one never) is below FedSMOO's mean: undecided
        _run("D", 3.0, "FedGF", 0, 0.5), _run("D", 3.0, "FedGF", 1, 0.6, False),
        _run("D", 3.0, "FedSMOO", 0, 1.0), _run("D", 3.0, "FedSMOO", 1, 1.0),
        # FedGF never reaches on any seed, FedSMOO always does: a censored cell ranks worst, as in the verdict
        _run("D", 5.0, "FedGF", 0, 0.5, False), _run("D", 5.0, "FedSMOO", 0, 1.0),
        # neither reaches
        _run("D", 4.0, "FedGF", 0, 3.0, False), _run("D", 4.0, "FedSMOO", 0, 4.0, False),
        # the same runs under another label: one comparison, both settings listed
        _run("E", 0.0, "FedGF", 0, 0.9, run_id="FedGF-D-0.0-0"),
        _run("E", 0.0, "FedGF", 1, 1.2, run_id="FedGF-D-0.0-1"),
        _run("E", 0.0, "FedGF", 2, 1.5, run_id="FedGF-D-0.0-2"),
        _run("E", 0.0, "FedSMOO", 0, 2.0, run_id="FedSMOO-D-0.0-0"),
        _run("E", 0.0, "FedSMOO", 1, 2.4, run_id="FedSMOO-D-0.0-1"),
        _run("E", 0.0, "FedSMOO", 2, 2.8, run_id="FedSMOO-D-0.0-2"),
    ])
    pairs = cells.mean_first_to_target(cells.transmission_cells(pd.concat([runs, extra], ignore_index=True)))
    assert list(pairs["settings"]) == ["D, alpha = 0; E, alpha = 0", "D, alpha = 1", "D, alpha = 2", "D, alpha = 3",
                                       "D, alpha = 5", "D, alpha = 4"]
    assert list(pairs["outcome"]) == [fedgf_analysis.FIRST, fedgf_analysis.FIRST, fedgf_analysis.SECOND,
                                      cells.UNDECIDED, fedgf_analysis.SECOND, fedgf_analysis.NEITHER]
    assert pairs.iloc[1]["FedSMOO (x10^2)"] == "\u2265 2.40 \u00b1 0.40 (n = 3; 1 never reached)"
    assert cells.mean_first_to_target_sentence(pairs) == (
        "FedGF needs fewer transmissions than FedSMOO on the seeds' means in 2 of 6 distinct settings (settings that "
        "are the same runs count once); FedSMOO needs fewer in 2, no seed of either reaches the target in 1, "
        "never-reached seeds leave 1 undecided.")


def test_first_to_target_lists_each_seeds_pair():
    pairs = fedgf_analysis.first_to_target(_table4())
    assert list(pairs["seed"]) == [0, 1, 2, 0, 1, 2]
    assert list(pairs["outcome"]) == [fedgf_analysis.FIRST] * 6

# ----------------------------------------------------------------------------- Table 2


def _flat(alpha, algorithm, seed, lam, accuracy, status="finished"):
    return {"algorithm": algorithm, "alpha": alpha, "seed": seed, "status": status, "accuracy": accuracy,
            "lpf": lam / 10, "lambda_max": lam, "flatness_discrepancy": lam / 100, "loss": 1.0, "rho": 0.05}


def _table2():
    return pd.DataFrame([
        # FedGF is flattest at seed 0 only; FedSAM's mean is lower
        _flat(0.0, "FedGF", 0, 1.0, 60.0), _flat(0.0, "FedGF", 1, 9.0, 61.0), _flat(0.0, "FedGF", 2, 8.0, 62.0),
        _flat(0.0, "FedSAM", 0, 5.0, 50.0), _flat(0.0, "FedSAM", 1, 5.0, 52.0), _flat(0.0, "FedSAM", 2, 5.0, 51.0),
        # FedAvg sits at chance (10 %) with the flattest model: not ranked
        _flat(0.0, "FedAvg", 0, 0.5, 9.5), _flat(0.0, "FedAvg", 1, 0.5, 10.5), _flat(0.0, "FedAvg", 2, 0.5, 10.0),
        # a diverged seed is left out of the mean
        _flat(0.0, "FedSMOO", 0, 7.0, 55.0), _flat(0.0, "FedSMOO", 1, float("nan"), float("nan"), "diverged"),
    ])


def _published():
    return pd.DataFrame([{"alpha": 0.0, "algorithm": a, "lpf": v / 10, "lambda_max": v, "flatness_discrepancy": v / 100}
                         for a, v in (("FedAvg", 80.0), ("FedSAM", 40.0), ("FedSMOO", 25.0), ("FedGF", 14.0),
                                      ("MoFedSAM", 15.0))])


def test_flatness_comparison_is_the_seed_mean_of_every_column():
    comparison = cells.flatness_comparison(_table2(), _published())
    assert list(dict.fromkeys(comparison["metric"])) == list(cells.FLATNESS_METRICS)
    lam = comparison[comparison["metric"] == "lambda_max"].set_index("algorithm")
    assert (lam.loc["FedGF", "ours"], lam.loc["FedGF", "ours_std"], lam.loc["FedGF", "seeds"]) == (
        pytest.approx(6.0), pytest.approx(math.sqrt(19.0)), 3)
    assert lam.loc["FedGF", "paper"] == 14.0
    assert (lam.loc["FedSMOO", "ours"], lam.loc["FedSMOO", "seeds"], lam.loc["FedSMOO", "left_out"]) == (7.0, 1, 1)
    assert lam.loc["MoFedSAM", "status"] == "not run at this scale"
    lpf = comparison[comparison["metric"] == "lpf"].set_index("algorithm")
    assert lpf.loc["FedGF", "ours"] == pytest.approx(0.6)


def test_the_flattest_is_ranked_on_seed_means_among_the_methods_that_learn():
    per_run = _table2()
    at_chance = cells.at_chance_methods(per_run, chance=10.0)
    assert list(at_chance) == [(0.0, "FedAvg")]
    assert at_chance[(0.0, "FedAvg")] == (pytest.approx(10.0), 3)
    assert cells.at_chance_text(at_chance, 10.0) == (" Not ranked, did not learn (most seeds below 15 %: chance 10 % "
                                                     "+ 5): FedAvg at alpha = 0 (mean 10.00 % over 3 seeds).")
    assert cells.at_chance_text({}, 10.0) == ""
    comparison = cells.flatness_comparison(per_run, _published())
    assert cells.flattest_learning(comparison, "lambda_max", "ours", at_chance) == "FedSAM"  # seed 0 says FedGF
    assert cells.flattest_learning(comparison, "lambda_max", "ours") == "FedAvg"  # the trap when chance is ignored
    assert cells.flattest_learning(comparison, "lambda_max", "paper") == "FedGF"
    assert cells.flattest_learning(comparison.iloc[:0], "lambda_max", "ours") == "none"
    # one seed decides alone, by the same rule
    one = cells.at_chance_methods(per_run[per_run["seed"] == 0], chance=10.0)
    assert list(one) == [(0.0, "FedAvg")] and one[(0.0, "FedAvg")][1] == 1


def test_flatness_runs_read_the_claims_metrics(monkeypatch):
    values = {"a": {"lpf": 1.5, "lambda_max": 12.0, "flatness_discrepancy": 0.2, "loss": 2.0, "rho": 0.05}}
    monkeypatch.setattr(cells, "global_flatness", lambda run_dir: values[run_dir])
    for metric, key in (("lpf", "lpf"), ("fedgf_lambda_max", "lambda_max"),
                        ("flatness_discrepancy", "flatness_discrepancy")):
        monkeypatch.setitem(METRICS, metric, dataclasses.replace(
            METRICS[metric], function=lambda row, key=key: values[row["run_dir"]][key] * 10))
    runs = pd.DataFrame([
        {"algorithm": "FedGF", "alpha": 0.0, "seed": 0, "status": "finished", "mean_last_100": 0.6, "run_dir": "a"},
        {"algorithm": "FedGF", "alpha": 0.0, "seed": 1, "status": "new", "mean_last_100": None, "run_dir": "b"},
    ])
    table = cells.flatness_runs(runs)
    first, second = table.iloc[0], table.iloc[1]
    assert (first["lpf"], first["lambda_max"], first["flatness_discrepancy"]) == (15.0, 120.0, 2.0)  # the metrics'
    assert (first["accuracy"], first["loss"], first["rho"]) == (pytest.approx(60.0), 2.0, 0.05)
    assert second["status"] == "new" and pd.isna(second["lambda_max"]) and math.isnan(second["accuracy"])

# ----------------------------------------------------------------------------- Fig. 1


def test_alpha_sweep_means_every_seed_of_an_alpha(monkeypatch):
    delta_f = {"r0": 0.3, "r1": 0.5, "r2": 0.4, "r3": 0.1}
    monkeypatch.setitem(METRICS, "flatness_discrepancy", dataclasses.replace(
        METRICS["flatness_discrepancy"], function=lambda row: delta_f[row["run_id"]]))
    runs = pd.DataFrame([{"alpha": a, "seed": s, "status": "finished", "mean_last_100": acc, "run_id": r}
                         for a, s, acc, r in ((0.0, 0, 0.40, "r0"), (0.0, 1, 0.50, "r1"), (0.0, 2, 0.60, "r2"),
                                              (100.0, 0, 0.80, "r3"))]
                        + [{"alpha": 5.0, "seed": 0, "status": "new", "mean_last_100": None, "run_id": "r4"}])
    sweep = cells.alpha_sweep(runs)
    assert list(sweep["run_id"]) == ["r0", "r1", "r2", "r3"]
    means = cells.sweep_means(sweep).set_index("alpha")
    assert (means.loc[0.0, "accuracy"], means.loc[0.0, "accuracy sd"], means.loc[0.0, "accuracy n"]) == (
        pytest.approx(50.0), pytest.approx(10.0), 3)
    assert means.loc[0.0, "flatness_discrepancy"] == pytest.approx(0.4)
    assert means.loc[100.0, "accuracy n"] == 1 and math.isnan(means.loc[100.0, "accuracy sd"])
    text = cells.sweep_means_text(cells.sweep_means(sweep))
    assert text.loc[0.0, "accuracy (%)"] == "50.00 \u00b1 10.00 (n = 3)"
    assert text.loc[0.0, "Delta_F"] == "0.400 \u00b1 0.100 (n = 3)"
    assert text.loc[100.0, "accuracy (%)"] == "80.00"


def test_best_c_is_the_c_of_the_highest_value_among_the_rows_with_one():
    block = pd.DataFrame({"c": ["0", "0.5", "adaptive"], "paper": [50.0, 52.5, float("nan")],
                          "ours": [float("nan"), 40.0, 41.0]})
    assert cells.best_c(block, "paper") == "0.5"
    assert cells.best_c(block, "ours") == "adaptive"
    assert cells.best_c(block.iloc[:0], "ours") == "none"
