"""The papers' standard plots, drawn from run-store DataFrames.

- :func:`accuracy_curves`: test accuracy (%) against rounds, one panel per ``col`` value,
  one line per algorithm (FedSAM paper Figs. 3c, 10, 11);
- :func:`client_accuracy_curves`: the global model's accuracy on each client's data
  against rounds, one line per client (FedSAM paper Fig. 3a/b);
- :func:`client_accuracy_final`: the fallback when only the final model can be evaluated
  per client: one bar per client, sorted.

Every function returns the matplotlib figure; call :func:`flcore.report.set_style` first.
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from flcore.report.style import algorithm_dashes, algorithm_palette


def schedule_change(rounds: Sequence[int]) -> int | None:
    """The round from which a run's test accuracy is evaluated every round, when it was
    evaluated more sparsely before (every ``eval_every`` rounds, then each of the last 100):
    the curves change texture there.  None when the schedule does not change."""
    points = sorted({int(r) for r in rounds})
    gaps = [b - a for a, b in zip(points, points[1:])]
    if len(gaps) < 2 or gaps[-1] != 1 or max(gaps) == 1:
        return None
    last_sparse = max(i for i, gap in enumerate(gaps) if gap > 1)
    return points[last_sparse + 1]


def accuracy_curves(metrics: pd.DataFrame, hue: str = "algorithm", col: str | None = "dataset",
                    hue_order: Sequence[str] | None = None, col_order: Sequence[str] | None = None,
                    title: str | None = None, palette: dict | None = None, height: float = 3.6,
                    sharex: bool = True):
    """Test accuracy (%) against rounds.  ``metrics`` is :func:`~flcore.reproduction.runner.run_metrics`
    output; several seeds of one line are drawn as their mean with a band (their range).
    Where the evaluation switches to every round (:func:`schedule_change`) a dotted line
    and a note mark it, so the curves' change of texture is not read as the methods'."""
    import seaborn as sns

    data = metrics[metrics["test_accuracy"].notna()].copy()
    data["test accuracy (%)"] = data["test_accuracy"].astype(float) * 100.0
    hue_order = list(hue_order or dict.fromkeys(data[hue]))
    hue_order = [h for h in hue_order if h in set(data[hue])]
    if palette is None and hue == "algorithm":
        palette = algorithm_palette(hue_order)
    kwargs = {}
    if hue == "algorithm":
        kwargs.update(style=hue, style_order=hue_order, dashes=algorithm_dashes(hue_order))
    grid = sns.relplot(data=data, x="round", y="test accuracy (%)", hue=hue, hue_order=hue_order, col=col,
                       col_order=col_order, kind="line", palette=palette, errorbar=("pi", 100), height=height,
                       aspect=1.25, facet_kws={"sharey": False, "sharex": sharex}, **kwargs)
    if col is not None:
        grid.set_titles("{col_name}")
    panels = [(name, data[data[col] == name]) for name in grid.col_names] if col is not None else [(None, data)]
    for ax, (_, panel) in zip(grid.axes.flat, panels):
        change = schedule_change(panel["round"])
        if change is not None:
            ax.axvline(change, color="0.45", linestyle=":", linewidth=1.0)
            ax.annotate("evaluated every round from here", xy=(change, 0.02), xycoords=("data", "axes fraction"),
                        xytext=(-3, 0), textcoords="offset points", ha="right", va="bottom", fontsize=7,
                        color="0.35")
    if title:
        grid.figure.suptitle(title, y=1.03)
    return grid.figure


def client_accuracy_curves(history: pd.DataFrame, ax=None, title: str | None = None, mean: bool = True):
    """One line per client: the global model's accuracy (%) on that client's data against
    rounds (``history``: :func:`flcore.reproduction.per_client.client_accuracy_history`)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.8))
    data = history.copy()
    data["accuracy (%)"] = data["accuracy"] * 100.0
    n = data["client"].nunique()
    sns.lineplot(data=data, x="round", y="accuracy (%)", hue="client", palette=sns.color_palette("husl", n),
                 legend=False, linewidth=0.7, alpha=0.7, ax=ax)
    if mean:
        avg = data.groupby("round", as_index=False)["accuracy (%)"].mean()
        ax.plot(avg["round"], avg["accuracy (%)"], color="black", linewidth=2.0, label="mean over clients")
        ax.legend(loc="upper left")
    ax.set_ylim(-2, 102)
    if title:
        ax.set_title(title)
    return ax.figure


def client_accuracy_final(accuracy: pd.Series, ax=None, title: str | None = None):
    """Fallback: the final model's accuracy (%) on each client's data, sorted, one bar per client."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.2))
    values = (accuracy.sort_values(ascending=False) * 100.0).reset_index(drop=True)
    ax.bar(values.index, values.values, width=1.0, color=sns.color_palette("husl", len(values)))
    ax.set_xlabel("clients, sorted by accuracy")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 102)
    if title:
        ax.set_title(title)
    return ax.figure
