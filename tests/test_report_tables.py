"""Paper-vs-ours tables: delta, pending and diverged cells, layout, claims."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flcore.report import DIVERGED_MARK, PENDING, format_comparison, ours_accuracy, paper_vs_ours

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
    assert cells.loc["FedSAM", "status"] == "diverged" and cells.loc["FedSAM", "ours"] == pytest.approx(10.0)
    assert cells.loc["FedAvg+SWA", "status"] == "pending" and np.isnan(cells.loc["FedAvg+SWA", "ours"])


def test_paper_vs_ours_delta_and_notes():
    cells = ours_accuracy(_runs(), KEYS, {"CIFAR-10": "cifar10"})
    table = paper_vs_ours(_published(), cells, KEYS).set_index("algorithm")
    assert table.loc["FedAvg E=1", "delta"] == pytest.approx(61.0 - 65.0)
    assert "diverged (round 17)" in table.loc["FedSAM", "note"]
    assert np.isnan(table.loc["FedAvg+SWA", "delta"]) and "not implemented" in table.loc["FedAvg+SWA", "note"]


def test_format_comparison_never_fakes_a_number():
    cells = ours_accuracy(_runs(), KEYS, {"CIFAR-10": "cifar10"})
    wide = format_comparison(paper_vs_ours(_published(), cells, KEYS), ["algorithm"], ["alpha", "clients_per_round"],
                             {"algorithm": ["FedAvg E=1", "FedSAM", "FedAvg+SWA"]})
    assert list(wide.index) == ["FedAvg E=1", "FedSAM", "FedAvg+SWA"]
    row = wide.loc["FedAvg+SWA"]
    assert row[(0.0, 5, "ours ")] == PENDING and row[(0.0, 5, "paper ")] == "69.71"
    assert row[(0.0, 5, "\u0394")] == "\u2013"
    assert wide.loc["FedSAM"][(0.0, 5, "ours ")] == "10.00" + DIVERGED_MARK
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
                       "At alpha = 0 the paper's best is B, ours is A.")
    assert len(frame) == 4 and set(downloads) == {"published", "ours"}
