"""Plots of analysis results, in the book's style.

:func:`apply_style` applies the one shared style: ``flcore.report``'s
:func:`~flcore.report.style.set_style` (seaborn) when seaborn can be imported, else a
matplotlib-only fallback with the same sizes.  The plot helpers apply it once per
process (so they do not undo a caller's later changes) and draw on a given or new
matplotlib axis, returning the axis.  Computation modules never import this one
(matplotlib is imported lazily here).

- :func:`plot_surface_2d`: filled contour of a :class:`~flcore.analysis.landscape.Landscape2D`
  (or a plane landscape, with the three models as black triangles and their mean as a
  white cross, as in the FedIMA paper's Fig. 1; the FedSAM paper marks its models the
  same way);
- :func:`plot_curve_1d`: a 1-D landscape, an interpolation or a perturbation curve;
- :func:`plot_density`: an SLQ eigenvalue density (log scale).
"""
from __future__ import annotations

import math

import numpy as np
import torch

from flcore.report.style import set_style

__all__ = ["apply_style", "plot_curve_1d", "plot_density", "plot_surface_2d", "save_figure"]

_STYLE = {
    "figure.figsize": (5.0, 4.0),
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    "image.cmap": "viridis",
}


_applied = False


def apply_style() -> None:
    """Apply flcore's figure style (``flcore.report``'s when available) to later figures."""
    global _applied
    try:
        set_style()
    except ImportError:  # seaborn unavailable: matplotlib-only fallback
        import matplotlib as mpl

        mpl.rcParams.update(_STYLE)
    _applied = True


def _axis(ax):
    if not _applied:
        apply_style()
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots()[1]


def _np(t):
    return torch.as_tensor(t, dtype=torch.float64).cpu().numpy()


def plot_surface_2d(surface, ax=None, field: str = "loss", levels: int = 30, log: bool = False,
                    markers=None, mean_marker: bool = True, colorbar: bool = True, title: str | None = None):
    """Contour of ``surface.loss`` (or ``field="error"``) over ``(xs, ys)``.

    ``markers``: extra ``[(x, y, label)]``; plane landscapes mark their models and
    (``mean_marker``) the models' mean automatically.
    """
    ax = _axis(ax)
    Z = getattr(surface, field)
    if Z is None:
        raise ValueError(f"the surface has no {field!r} values")
    Z = _np(Z).T  # [i, j] = (xs[i], ys[j]) -> contour wants rows along y
    if log:
        Z = np.log10(np.maximum(Z, 1e-12))
    ax.grid(False)
    cs = ax.contourf(_np(surface.xs), _np(surface.ys), Z, levels=levels, cmap="viridis")
    ax.contour(_np(surface.xs), _np(surface.ys), Z, levels=levels, colors="k", linewidths=0.3, alpha=0.4)
    if colorbar:
        ax.figure.colorbar(cs, ax=ax, label=("log10 " if log else "") + field)
    plane = getattr(surface, "plane", None)
    if plane is not None:
        c = _np(plane.coords)
        ax.scatter(c[:, 0], c[:, 1], marker="^", s=60, c="k", zorder=3, label="models")
        if mean_marker:
            m = _np(plane.mean_coord)
            ax.scatter([m[0]], [m[1]], marker="x", s=80, c="w", linewidths=2, zorder=4, label="mean")
    for x, y, label in markers or []:
        ax.scatter([x], [y], marker="o", s=40, zorder=4, label=label)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    if title:
        ax.set_title(title)
    return ax


def plot_curve_1d(xs, values, ax=None, label: str | None = None, xlabel: str = "t",
                  ylabel: str = "loss", mark_endpoints: bool = False):
    """A line plot; ``mark_endpoints`` marks ``t = 0`` and ``t = 1`` (interpolations)."""
    ax = _axis(ax)
    xs_np, v_np = _np(xs), _np(values)
    ax.plot(xs_np, v_np, label=label)
    if mark_endpoints:
        for t in (0.0, 1.0):
            hit = [i for i, x in enumerate(xs_np) if math.isclose(x, t, abs_tol=1e-12)]
            if hit:
                ax.scatter([t], [v_np[hit[0]]], c="k", zorder=3, s=25)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if label:
        ax.legend()
    return ax


def plot_density(density, ax=None, num: int = 1000, sigma: float | None = None, label: str | None = None):
    """The smoothed SLQ density of a :class:`~flcore.analysis.spectrum.SpectralDensity`."""
    ax = _axis(ax)
    grid = density.grid(num=num, sigma=sigma)
    values = density.density(grid, sigma)
    ax.semilogy(_np(grid), _np(values).clip(min=1e-12), label=label)
    ax.set_xlabel("eigenvalue")
    ax.set_ylabel("density")
    if label:
        ax.legend()
    return ax


def save_figure(ax, path) -> None:
    """Save the axis's figure and close it."""
    import matplotlib.pyplot as plt

    fig = ax.figure
    fig.savefig(path)
    plt.close(fig)
