"""Figures of loss surfaces and per-method bars, drawn as the FedGloSS paper draws them.

- :func:`net_over_solid`: one 3-D panel per pair of surfaces on a shared plane, the
  reference method as a wire net over the other method's solid surface (Figs. 1, 6,
  12-14: "FedGloSS (net) vs FedSAM (solid)").
- :func:`local_global_panels`: a client model's surface on the global data above its
  surface on its own data (Figs. 2, 5, 10, 11), optionally with another method's client
  model as a net.
- :func:`bars`: one bar per method and setting (Fig. 7).

Nothing is computed here: the surfaces come from :mod:`flcore.analysis.landscape`.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from flcore.report.figure_layout import MAX_WIDTH_IN


def _grid(surface):
    xs, ys = surface.xs.numpy(), surface.ys.numpy()
    X, Y = np.meshgrid(xs, ys)
    return X, Y, surface.loss.numpy().T


def net_over_solid(panels: Sequence[tuple[str, object, object]], net_label: str, solid_labels: Sequence[str],
                   columns: int = 3, size: float = 3.6):
    """``panels``: ``(title, solid_surface, net_surface)``; returns the figure."""
    import matplotlib.pyplot as plt

    n = max(1, len(panels))
    cols = min(columns, n)
    rows = int(np.ceil(n / cols))
    fig = plt.figure(figsize=(size * cols, size * rows))
    for i, (title, solid, net) in enumerate(panels):
        ax = fig.add_subplot(rows, cols, i + 1, projection="3d")
        X, Y, Z = _grid(solid)
        ax.plot_surface(X, Y, Z, cmap="viridis", alpha=0.75, linewidth=0)
        Xn, Yn, Zn = _grid(net)
        ax.plot_wireframe(Xn, Yn, Zn, color="black", linewidth=0.6)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("a")
        ax.set_ylabel("b")
        ax.set_zlabel("loss")
    fig.suptitle(f"{net_label} (net) over " + " / ".join(dict.fromkeys(solid_labels)) + " (solid)", fontsize=10)
    fig.tight_layout()
    return fig


def local_global_panels(panels: Sequence[tuple[str, dict, dict | None]], size: float = 3.4):
    """``panels``: ``(title, {"local": s, "global": s}, reference or None)``: one column per
    panel, the global-data surface on top and the local-data surface below; a reference
    (another method's client model on the global data) is drawn as a net over the top one,
    as the paper does."""
    import matplotlib.pyplot as plt

    n = max(1, len(panels))
    fig = plt.figure(figsize=(size * n, size * 2))
    for j, (title, surfaces, reference) in enumerate(panels):
        for i, which in enumerate(("global", "local")):
            ax = fig.add_subplot(2, n, i * n + j + 1, projection="3d")
            X, Y, Z = _grid(surfaces[which])
            ax.plot_surface(X, Y, Z, cmap="viridis" if which == "global" else "magma", alpha=0.75, linewidth=0)
            if reference is not None and which == "global":
                Xr, Yr, Zr = _grid(reference[which])
                ax.plot_wireframe(Xr, Yr, Zr, color="black", linewidth=0.5)
            ax.set_title(f"{title}\n{which} data", fontsize=9)
            ax.set_zlabel("loss")
    fig.tight_layout()
    return fig


def bars(frame, value: str, category: str, group: str, order: Sequence[str] | None = None,
         ylabel: str | None = None, log: bool = False):
    """Grouped bars: one group per ``group`` value, one bar per ``category`` value.  A bar
    over several rows (the seeds of one method and setting) is their mean, with every
    seed's value drawn on it as a dot, so the spread is in view."""
    import matplotlib.pyplot as plt

    groups = list(dict.fromkeys(frame[group]))
    cats = [c for c in (order or list(dict.fromkeys(frame[category]))) if c in set(frame[category])]
    # as wide as the bars need, but no wider than the book shows at full size
    fig, ax = plt.subplots(figsize=(min(MAX_WIDTH_IN, max(6, 0.55 * len(cats) * len(groups) + 2)), 3.8),
                           layout="constrained")
    width = 0.8 / max(1, len(groups))
    for k, g in enumerate(groups):
        values = frame[frame[group] == g].groupby(category, sort=False)[value]
        means = values.mean()
        heights = [float(means.get(c, np.nan)) for c in cats]
        at = np.arange(len(cats)) + (k - (len(groups) - 1) / 2) * width
        ax.bar(at, heights, width, label=str(g))
        seeds = {c: [float(v) for v in group_values] for c, group_values in values if len(group_values) > 1}
        for x, c in zip(at, cats):
            if c in seeds:  # every seed of a bar over more than one
                ax.scatter([x] * len(seeds[c]), seeds[c], s=9, color="black", zorder=3)
    ax.set_xticks(np.arange(len(cats)))
    ax.set_xticklabels(cats, rotation=35, ha="right")
    ax.set_ylabel(ylabel or value)
    if log:
        ax.set_yscale("log")
    if len(groups) > 1:  # above the axes, where no bar can be hidden under it
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=min(4, len(groups)))
    return fig
