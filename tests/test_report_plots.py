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


def test_a_change_of_evaluation_schedule_is_drawn_where_it_happens():
    from flcore.report.plots import schedule_change

    # FedSAM Fig. 11: every 10 rounds, then every round over the last 100 of 300
    rounds = list(range(0, 200, 10)) + list(range(200, 301))
    assert schedule_change(rounds) == 200
    assert schedule_change(range(1, 301)) is None and schedule_change(range(0, 301, 10)) is None
    set_style()
    metrics = pd.DataFrame([{"round": r, "test_accuracy": 0.1 + r / 1000, "algorithm": name, "seed": seed,
                             "dataset": "MNIST-1D"}
                            for name in ("FedAvg E=1", "FedSAM") for seed in (0, 1) for r in rounds])
    ax = accuracy_curves(metrics, col="dataset").axes[0]
    marks = [line for line in ax.lines if list(line.get_xdata()) == [200, 200]]
    assert len(marks) == 1 and marks[0].get_linestyle() == ":"
    assert any(text.get_text() == "evaluated every round from here" for text in ax.texts)
    # seeds drawn as their mean with a band (their range): one filled band per method
    assert len(ax.collections) >= 2
    flat = accuracy_curves(metrics[metrics["round"] % 10 == 0], col="dataset").axes[0]
    assert not any(list(line.get_xdata()) == [200, 200] for line in flat.lines) and not flat.texts
