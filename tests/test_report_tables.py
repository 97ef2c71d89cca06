"""Paper-vs-ours tables: delta, pending and diverged cells, layout, claims."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flcore.report import DIVERGED_MARK, PENDING, format_comparison, ours_accuracy, paper_vs_ours
from flcore.report.tables import NOT_RUN

KEYS = ["dataset", "algorithm", "alpha", "clients_per_round"]


def _runs():
    rows = [
        ("CIFAR-10", "FedAvg E=1", 0.0, 5, 0, "finished", 0.60, None),
        ("CIFAR-10", "FedAvg E=1", 0.0, 5, 1, "finished", 0.62, None),
        ("CIFAR-10", "FedSAM", 0.0, 5, 0, "finished", 0.70, None),
        ("CIFAR-10", "FedSAM", 0.0, 5, 1, "diverged", None, 17),
        ("CIFAR-10", "FedAvg+SWA", 0.0, 5, 0, "pending", None, None),
    ]
    return pd.DataFrame(rows, columns=KEYS + ["seed", "status", "mean_last_100", "diverged_round"])


def _published():
    return pd.DataFrame({"dataset": ["CIFAR-10"] * 3, "algorithm": ["FedAvg E=1", "FedSAM", "FedAvg+SWA"],
                         "alpha": [0.0] * 3, "clients_per_round": [5] * 3, "accuracy": [65.0, 70.16, 69.71],
                         "note": ["", "", ""]})


def test_ours_accuracy_averages_seeds_and_flags_diverged_and_pending():
    cells = ours_accuracy(_runs(), KEYS, {"CIFAR-10": "cifar10"}).set_index("algorithm")
    assert cells.loc["FedAvg E=1", "ours"] == pytest.approx(61.0)
    assert cells.loc["FedAvg E=1", "seeds"] == 2 and cells.loc["FedAvg E=1", "ours_std"] > 0
    # a diverged seed is left out, as the verdicts leave it out: FedSAM is its finished seed, n = 1
    assert cells.loc["FedSAM", "status"] == "finished" and cells.loc["FedSAM", "ours"] == pytest.approx(70.0)
    assert cells.loc["FedSAM", "seeds"] == 1 and cells.loc["FedSAM", "left_out"] == 1
    assert cells.loc["FedAvg+SWA", "status"] == "pending" and np.isnan(cells.loc["FedAvg+SWA", "ours"])


def test_a_cell_whose_every_seed_diverged_is_shown_at_chance():
    runs = pd.DataFrame([("CIFAR-10", "FedASAM", 0.0, 5, 0, "diverged", None, 12),
                         ("CIFAR-10", "FedASAM", 0.0, 5, 1, "diverged", None, 9)],
                        columns=KEYS + ["seed", "status", "mean_last_100", "diverged_round"])
    cells = ours_accuracy(runs, KEYS, {"CIFAR-10": "cifar10"})
    assert cells.loc[0, "status"] == "diverged" and cells.loc[0, "ours"] == pytest.approx(10.0)
    table = paper_vs_ours(_published().assign(algorithm="FedASAM").iloc[:1], cells, KEYS)
    assert table.loc[0, "note"] == "diverged (round 9); shown at chance accuracy"
    wide = format_comparison(table, ["algorithm"], ["alpha", "clients_per_round"])
    assert wide.loc["FedASAM"][(0.0, 5, "ours ")] == "10.00" + DIVERGED_MARK


def test_paper_vs_ours_delta_and_notes():
    cells = ours_accuracy(_runs(), KEYS, {"CIFAR-10": "cifar10"})
    table = paper_vs_ours(_published(), cells, KEYS).set_index("algorithm")
    assert table.loc["FedAvg E=1", "delta"] == pytest.approx(61.0 - 65.0)
    assert table.loc["FedSAM", "note"] == "1 diverged seed left out (round 17)"
    assert np.isnan(table.loc["FedAvg+SWA", "delta"]) and "not implemented" in table.loc["FedAvg+SWA", "note"]


def test_format_comparison_never_fakes_a_number():
    cells = ours_accuracy(_runs(), KEYS, {"CIFAR-10": "cifar10"})
    wide = format_comparison(paper_vs_ours(_published(), cells, KEYS), ["algorithm"], ["alpha", "clients_per_round"],
                             {"algorithm": ["FedAvg E=1", "FedSAM", "FedAvg+SWA"]})
    assert list(wide.index) == ["FedAvg E=1", "FedSAM", "FedAvg+SWA"]
    row = wide.loc["FedAvg+SWA"]
    assert row[(0.0, 5, "ours ")] == PENDING and row[(0.0, 5, "paper ")] == "69.71"
    assert row[(0.0, 5, "\u0394")] == "\u2013"
    assert wide.loc["FedSAM"][(0.0, 5, "ours ")] == "70.00"
    # the mean over the seeds the verdicts read, with its sd and n: 60 and 62 -> 61.00 +- 1.41
    assert wide.loc["FedAvg E=1"][(0.0, 5, "ours ")] == "61.00 \u00b1 1.41 (n = 2)"
    assert wide.loc["FedAvg E=1"][(0.0, 5, "\u0394")] == "-4.00"


def test_method_catalog_page_is_in_sync_with_the_recipes():
    from pathlib import Path

    from flcore.algorithms import METHODS
    from flcore.report.method_catalog import render_catalog

    page = Path(__file__).resolve().parents[1] / "book" / "methods" / "catalog.md"
    rendered = render_catalog()
    assert page.read_text() == rendered, "regenerate: python -m flcore.report.method_catalog > book/methods/catalog.md"
    assert all(f"## `{name}`" in rendered for name in METHODS)


def test_performance_page_is_in_sync_with_the_benchmark_results():
    from pathlib import Path

    from flcore.report.performance import load_results, render_performance

    root = Path(__file__).resolve().parents[1]
    results = root / "benchmarks" / "results" / "round_time.jsonl"
    rendered = render_performance(results)
    assert (root / "book" / "performance.md").read_text() == rendered, (
        "regenerate: python -m flcore.report.performance benchmarks/results/round_time.jsonl > book/performance.md")
    for row in load_results(results):
        if row.get("reference_rounds_per_s") is not None:
            assert abs(row["ratio"] - row["flcore_rounds_per_s"] / row["reference_rounds_per_s"]) < 1e-9
        assert f"| {row['method']} |" in rendered


def test_best_item_skips_missing_values():
    from flcore.report.tables import best_item

    frame = pd.DataFrame({"algorithm": ["A", "B", "C"], "paper": [1.0, np.nan, 3.0], "ours": [np.nan] * 3})
    assert best_item(frame, "paper") == "C" and best_item(frame, "ours") == "none"


def test_accuracy_tables_name_the_best_algorithms_of_the_focus_rows():
    from flcore.report.tables import show_accuracy_tables

    class Recording:
        artifact_id = "fedsam-table-2"
        shown = []

        def table(self, frame, caption, downloads=None, show=None):
            self.shown.append((frame, caption, downloads))

    comparison = pd.DataFrame({"dataset": ["D"] * 4, "algorithm": ["A", "B", "A", "B"], "alpha": [0, 0, 1, 1],
                               "clients_per_round": [5, 5, 5, 5], "paper": [1.0, 2.0, 9.0, 1.0],
                               "ours": [3.0, 2.0, 1.0, 9.0], "delta": [np.nan] * 4, "status": ["finished"] * 4})
    page = Recording()
    show_accuracy_tables(page, comparison, comparison.assign(dataset="D"), comparison, ["D"],
                         {"algorithm": ["A", "B"]}, "smoke", {"alpha": 0}, "At alpha = 0")
    frame, caption, downloads = page.shown[0]
    assert caption == ("D (ours: MNIST-1D at the smoke scale): accuracy (%) by algorithm, alpha and clients per round. "
                       "At alpha = 0, among the cells run here, the paper's best is B, ours is A.")
    assert len(frame) == 4 and set(downloads) == {"published", "ours"}


# ----------------------------------------------------------------------------- every published cell

class _Shown:
    """A page that keeps what :meth:`flcore.report.page.Page.table` would show."""

    def __init__(self, artifact_id):
        self.artifact_id = artifact_id
        self.shown = []

    def table(self, frame, caption, downloads=None, show=None):
        self.shown.append((frame, caption, show))


def _ours_from(published_cells: pd.DataFrame, keys) -> pd.DataFrame:
    """Our cells for ``published_cells``' keys: finished, one seed, a made-up accuracy."""
    cells = published_cells[list(keys)].copy()
    cells["ours"] = 12.5
    return cells.assign(ours_std=np.nan, seeds=1, status="finished")


def test_paper_vs_ours_keeps_the_published_cells_it_did_not_run():
    ours = ours_accuracy(_runs(), KEYS, {"CIFAR-10": "cifar10"})
    published = pd.concat([_published(), pd.DataFrame(
        {"dataset": ["CIFAR-10"], "algorithm": ["FedDyn"], "alpha": [0.05], "clients_per_round": [5],
         "accuracy": [70.1], "note": [""]})], ignore_index=True)
    table = paper_vs_ours(published, ours, KEYS)
    assert len(table) == 4 and list(table["algorithm"])[:3] == list(ours["algorithm"])
    dyn = table.set_index("algorithm").loc["FedDyn"]
    assert dyn["paper"] == 70.1 and np.isnan(dyn["ours"]) and np.isnan(dyn["delta"])
    assert dyn["status"] == NOT_RUN and dyn["note"] == NOT_RUN
    wide = format_comparison(table, ["algorithm"], ["alpha", "clients_per_round"])
    assert wide.loc["FedDyn"][(0.05, 5, "paper ")] == "70.10" and wide.loc["FedDyn"][(0.05, 5, "ours ")] == "not run"
    assert wide.loc["FedSAM"][(0.05, 5, "paper ")] == ""  # neither published nor run: blank
    assert [c[0] for c in wide.columns] == [0.0, 0.0, 0.0, 0.05, 0.05, 0.05]


def _assert_every_published_cell_shown(published_cells, shown_tables, row_keys, column_keys, value="accuracy"):
    """Every published number is printed in the ``paper`` column of the table of its data set."""
    checked = 0
    for cell in published_cells.to_dict("records"):
        wanted = f"{float(cell[value]):.2f}" if not pd.isna(cell[value]) else "\u2013"
        found = []
        for show in shown_tables:
            row = tuple(cell[k] for k in row_keys)
            column = tuple(cell[k] for k in column_keys) + ("paper ",)
            if column in show.columns and (row[0] if len(row) == 1 else row) in show.index:
                found.append(show.loc[row[0] if len(row) == 1 else row, column])
        assert wanted in found, (cell, found)
        checked += 1
    return checked


def test_fedgf_table1_shows_every_published_cell_when_ours_are_missing():
    from flcore.papers.fedgf import runs as fedgf
    from flcore.reproduction.published import published

    keys = ["dataset", "algorithm", "alpha", "clients_per_round"]
    paper_values = published("fedgf-table-1")
    paper_values["accuracy"] = pd.to_numeric(paper_values["accuracy"], errors="coerce")
    # ours: the cells are the ones missing (CIFAR-10, alpha = 0.05, 5 clients per round)
    missing = (paper_values["dataset"] == "CIFAR-10") & (paper_values["alpha"] == 0.05) & (
        paper_values["algorithm"].isin(["FedDyn", "MoFedSAM", "FedSMOO", "FedGF"]))
    ours = _ours_from(paper_values[~missing & (paper_values["clients_per_round"] == 5)], keys)
    comparison = paper_vs_ours(paper_values, ours, keys)
    page = _Shown("fedgf-table-1")
    from flcore.report.tables import show_accuracy_tables

    show_accuracy_tables(page, comparison, paper_values, ours, fedgf.DATASETS, {"algorithm": list(fedgf.ALGORITHMS)},
                         "small", focus={"alpha": 0, "clients_per_round": 5}, focus_text="At alpha = 0 with 5 clients")
    shown = [show for _, _, show in page.shown]
    assert _assert_every_published_cell_shown(paper_values, shown, ["algorithm"],
                                              ["alpha", "clients_per_round"]) == 198
    c10 = shown[0]
    for algorithm, value in (("FedDyn", "70.74"), ("MoFedSAM", "74.43"), ("FedSMOO", "71.90"), ("FedGF", "78.79")):
        assert c10.loc[algorithm, (0.05, 5, "paper ")] == value
        assert c10.loc[algorithm, (0.05, 5, "ours ")] == "not run"
    assert c10.loc["FedAvg", (0.05, 5, "ours ")] == "12.50"


def test_fedgloss_table3_shows_every_published_cell_when_ours_are_missing():
    from flcore.papers.fedgloss import results as gloss

    keys = ["model", "dataset", "alpha", "block", "algorithm"]
    paper_values = gloss.published_numeric("fedgloss-table-3")
    # ours as at the small scale: CNN only, no CIFAR-100 alpha = 0.5, no FedDyn / SCAFFOLD at CIFAR-10 alpha = 0.05
    run = (paper_values["model"] == "CNN") & ~((paper_values["dataset"] == "CIFAR-100")
                                               & (paper_values["alpha"] == 0.5))
    run &= ~((paper_values["dataset"] == "CIFAR-10") & (paper_values["alpha"] == 0.05)
             & paper_values["algorithm"].isin(["FedDyn", "SCAFFOLD"]))
    ours = _ours_from(paper_values[run], keys)
    comparison = paper_vs_ours(paper_values, ours, keys)
    page = _Shown("fedgloss-table-3")
    gloss.show_table3(page, comparison, paper_values, ours, "small")
    shown = [show for _, _, show in page.shown]
    assert len(shown) == paper_values.groupby(["model", "dataset"]).ngroups
    assert _assert_every_published_cell_shown(paper_values, shown, ["block", "algorithm"], ["alpha"]) == len(
        paper_values)
    c10 = shown[0]
    assert c10.loc[("SGD", "FedDyn"), (0.05, "paper ")] == "70.10"
    assert c10.loc[("SGD", "SCAFFOLD"), (0.05, "paper ")] == "54.00"
    assert c10.loc[("SGD", "FedDyn"), (0.05, "ours ")] == "not run"
    captions = [caption for _, caption, _ in page.shown]
    assert captions[0].endswith("Among the cells run here: alpha = 0: best SGD FedAvg (paper FedGloSS-SGD), best SAM "
                                "FedSAM (paper FedGloSS-SAM); alpha = 0.05: best SGD FedAvg (paper FedGloSS-SGD), best "
                                "SAM FedSAM (paper FedGloSS-SAM).")
    resnet = [c for c in captions if c.startswith("ResNet")]
    assert resnet and all(c.endswith("No cell of this table runs at the small scale.") for c in resnet)


def test_ours_values_averages_the_finished_seeds_with_a_value_as_the_verdicts_do():
    from flcore.report import mean_sd_text, ours_values

    runs = pd.DataFrame([
        {"algorithm": "A", "seed": 0, "status": "finished", "lambda": 2.0},
        {"algorithm": "A", "seed": 1, "status": "finished", "lambda": 4.0},
        {"algorithm": "A", "seed": 2, "status": "diverged", "lambda": 99.0},   # left out, counted
        {"algorithm": "B", "seed": 0, "status": "finished", "lambda": float("inf")},  # no finite value
        {"algorithm": "B", "seed": 1, "status": "finished", "lambda": 5.0},
        {"algorithm": "C", "seed": 0, "status": "new", "lambda": None},
    ])
    cells = ours_values(runs, ["algorithm"], "lambda").set_index("algorithm")
    assert cells.loc["A", "ours"] == 3.0 and cells.loc["A", "ours_std"] == pytest.approx(2 ** 0.5)
    assert (cells.loc["A", "seeds"], cells.loc["A", "left_out"], cells.loc["A", "status"]) == (2, 1, "finished")
    assert cells.loc["B", "ours"] == 5.0 and np.isnan(cells.loc["B", "ours_std"]) and cells.loc["B", "seeds"] == 1
    assert np.isnan(cells.loc["C", "ours"]) and cells.loc["C", "status"] == "new"
    assert mean_sd_text(3.0, 2 ** 0.5, 2) == "3.00 \u00b1 1.41 (n = 2)"
    assert mean_sd_text(5.0, float("nan"), 1) == "5.00"
    # runs that never reached a target count at their lower bound: the mean is one too
    assert mean_sd_text(412.333, 20.1, 3, never_reached=1) == "\u2265 412.33 \u00b1 20.10 (n = 3; 1 never reached)"
    assert mean_sd_text(310.0, float("nan"), 1, never_reached=1) == "\u2265 310.00 (never reached)"
    assert mean_sd_text(float("nan"), float("nan"), 0, never_reached=1) == mean_sd_text(float("nan"), 0.0, 0)
    # laid out like an accuracy table: the spread is printed beside the mean
    cells = cells.reset_index().assign(alpha=0.5)
    published = pd.DataFrame({"algorithm": ["A"], "alpha": [0.5], "lambda": [1.0]})
    comparison = paper_vs_ours(published, cells, ["algorithm", "alpha"], value="lambda")
    assert comparison.set_index("algorithm").loc["A", "note"] == "1 diverged seed left out"
    wide = format_comparison(comparison, ["algorithm"], ["alpha"], delta=False)
    assert wide.loc["A", (0.5, "ours ")] == "3.00 \u00b1 1.41 (n = 2)" and wide.loc["B", (0.5, "ours ")] == "5.00"


def test_performance_page_shows_the_latest_breakdown_row_per_method(tmp_path):
    import json

    from flcore.report.performance import render_performance

    (tmp_path / "round_time.jsonl").write_text("")
    row = {"method": "fedavg", "device": "cpu", "machine": "CPU, 2 cores", "flcore_s_per_round": 1.0,
           "reference_s_per_round": 1.5, "ratio": 1.5, "convolution_s": 0.6, "conv_gflops_achieved": 300.0,
           "conv_floor_s": 0.4, "pooling_s": 0.1, "linear_s": 0.05, "other_s": 0.25, "round_for_2x_s": 0.75,
           "left_for_the_rest_s": 0.15, "commit": "abc1234", "date": "2026-12-07"}
    newer = {**row, "flcore_s_per_round": 0.9, "commit": "def5678"}
    (tmp_path / "round_breakdown.jsonl").write_text(json.dumps(row) + "\n" + json.dumps(newer) + "\n")
    page = render_performance(tmp_path / "round_time.jsonl")
    assert "## Where a CPU round goes" in page
    assert ("| fedavg | CPU, 2 cores | 0.900 | 1.500 | 1.50 | 0.600 (300) | 0.400 | 0.100 | 0.050 | 0.250 "
            "| 0.750 | 0.150 | def5678 | 2026-12-07 |") in page
    assert "abc1234" not in page
