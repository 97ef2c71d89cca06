"""The standard plots draw from store-shaped frames with the book's style."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from flcore.report import algorithm_color, set_style  # noqa: E402
from flcore.report.plots import accuracy_curves, client_accuracy_curves, client_accuracy_final  # noqa: E402


def test_curves_and_client_plots_draw():
    set_style()
    metrics = pd.DataFrame({"round": [1, 2, 1, 2], "test_accuracy": [0.1, 0.2, 0.15, 0.3],
                            "algorithm": ["FedAvg E=1", "FedAvg E=1", "FedSAM+SWA", "FedSAM+SWA"],
                            "dataset": ["MNIST-1D"] * 4})
    figure = accuracy_curves(metrics, col="dataset")
    assert len(figure.axes) == 1 and len(figure.axes[0].lines) >= 2
    history = pd.DataFrame({"round": [2, 2, 4, 4], "client": [0, 1, 0, 1], "accuracy": [0.0, 1.0, 0.5, 0.5]})
    assert client_accuracy_curves(history).axes
    assert client_accuracy_final(pd.Series([0.2, 0.9, 0.5])).axes


def test_an_algorithm_and_its_swa_version_share_a_colour():
    assert algorithm_color("FedSAM") == algorithm_color("FedSAM+SWA")
    assert algorithm_color("FedAvg E=1") == algorithm_color("FedAvg+SWA")
    assert algorithm_color("FedSAM") != algorithm_color("FedASAM")
    assert algorithm_color("SomethingNew") == algorithm_color("SomethingNew")
