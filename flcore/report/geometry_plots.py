"""Plots of the geometry of stored runs (:mod:`flcore.reproduction.run_geometry`), in the
book's style: 3-D loss surfaces, planes through three models, Hessian spectra and
per-client heat-maps over rounds.  Each helper draws on a given matplotlib axis and
returns it; nothing is computed here.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from flcore.report.style import algorithm_color

__all__ = ["MAX_PLANE_ELONGATION", "client_heatmap", "plane_panel", "spectrum_curves", "surface_3d"]


def surface_3d(ax, surface, field: str = "loss", title: str | None = None, zmax: float | None = None):
    """``surface.<field>`` over ``(xs, ys)`` as a 3-D surface (``ax``: a ``projection="3d"``
    axis), clipped at ``zmax`` so that panels share one vertical scale."""
    values = np.asarray(getattr(surface, field), dtype=float)
    if zmax is not None:
        values = np.minimum(values, zmax)
    X, Y = np.meshgrid(surface.xs, surface.ys, indexing="ij")
    ax.plot_surface(X, Y, values, cmap="viridis", linewidth=0, antialiased=True)
    ax.set_xlabel("direction 1")
    ax.set_ylabel("direction 2")
    ax.set_zlabel("train loss" if field == "loss" else "test error")
    if zmax is not None:
        ax.set_zlim(0, zmax)
    if title:
        ax.set_title(title)
    return ax


#: Largest ratio of a plane's two extents drawn at equal scales (:func:`plane_panel`).
MAX_PLANE_ELONGATION = 2.5


def plane_panel(ax, surface, field: str = "loss", labels: Sequence[str] = (), title: str | None = None,
                levels: int = 20, vmax: float | None = None):
    """Filled contours of ``surface.<field>`` on a plane through three models, the models as
    black triangles labelled ``labels`` and their mean as a white cross (the FedSAM
    paper's Figs. 2, 12-14).  Test error is shown in percent.  Both axes share one scale
    unless one extent of the plane exceeds the other :data:`MAX_PLANE_ELONGATION` times:
    the panel then fills its box (the tick labels give the two scales) instead of
    printing a strip."""
    values = np.asarray(getattr(surface, field), dtype=float) * (100.0 if field == "error" else 1.0)
    if vmax is not None:
        values = np.minimum(values, vmax)
    ax.grid(False)
    filled = ax.contourf(surface.xs, surface.ys, values.T, levels=levels, cmap="viridis")
    ax.contour(surface.xs, surface.ys, values.T, levels=levels, colors="k", linewidths=0.3, alpha=0.4)
    ax.figure.colorbar(filled, ax=ax, label="train loss" if field == "loss" else "test error (%)")
    coords = np.asarray(surface.coords)
    ax.scatter(coords[:, 0], coords[:, 1], marker="^", s=60, c="k", zorder=3)
    mean = coords.mean(0)
    from matplotlib import patheffects

    outline = [patheffects.withStroke(linewidth=2, foreground="k")]
    for (x, y), label in zip(coords, labels):
        right = x > mean[0]  # labels point inwards, so none leaves the axes
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(-5 if right else 5, 5), color="w",
                    fontsize=9, fontweight="bold", ha="right" if right else "left", path_effects=outline)
    ax.scatter([mean[0]], [mean[1]], marker="x", s=70, c="w", linewidths=2, zorder=4)
    # The plane's axes are orthonormal, so equal scales show its true shape; a plane far
    # longer than wide would then be a strip, so beyond MAX_PLANE_ELONGATION it fills the panel.
    extent = (float(np.ptp(np.asarray(surface.xs, dtype=float))), float(np.ptp(np.asarray(surface.ys, dtype=float))))
    equal = min(extent) > 0 and max(extent) / min(extent) <= MAX_PLANE_ELONGATION
    ax.set_aspect("equal" if equal else "auto", adjustable="box")
    ax.set_xlabel("x (along model 2 - model 1)")
    ax.set_ylabel("y")
    if title:
        ax.set_title(title)
    return ax


def spectrum_curves(ax, spectra: Mapping[str, Sequence[float]], title: str | None = None):
    """Eigenvalue against its index (1 = largest), one line per algorithm (Figs. 5, 15)."""
    for label, values in spectra.items():
        values = np.asarray(values, dtype=float)
        ax.plot(np.arange(1, len(values) + 1), values, marker="o", markersize=3, label=label,
                color=algorithm_color(label), linestyle="--" if "E=2" in label else "-")
    ax.set_xlabel("eigenvalue index")
    ax.set_ylabel("eigenvalue")
    ax.legend()
    if title:
        ax.set_title(title)
    return ax


def client_heatmap(ax, history: pd.DataFrame, row: str = "slot", title: str | None = None,
                   vmin: float | None = None, vmax: float | None = None, row_order: Sequence | None = None,
                   label: str = "value"):
    """A heat-map of ``history`` (columns ``round``, ``row``, ``value``): one column per
    recorded round, one row per ``row`` value (Figs. 4, 7, 16)."""
    table = history.pivot_table(index=row, columns="round", values="value", aggfunc="mean")
    if row_order is not None:
        table = table.reindex([r for r in row_order if r in table.index])
    ax.grid(False)
    image = ax.imshow(table.to_numpy(dtype=float), aspect="auto", cmap="magma", vmin=vmin, vmax=vmax,
                      interpolation="nearest")
    ax.figure.colorbar(image, ax=ax, label=label)
    rounds = list(table.columns)
    step = max(1, len(rounds) // 8)
    ax.set_xticks(range(0, len(rounds), step))
    ax.set_xticklabels([str(r) for r in rounds[::step]])
    ax.set_xlabel("round")
    ax.set_ylabel(row)
    if title:
        ax.set_title(title)
    return ax
