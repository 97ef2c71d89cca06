"""Global loss surfaces of stored runs: the FedLESAM paper's Figures 1 (a)-(c), 3 and 6.

The paper draws the loss of each final global model on the global (pooled) training data
around it, presumably with Li et al.'s (2018) filter-normalised random directions (it
cites them; grid and range are not stated).  :func:`global_surface` evaluates ``L(w + a
d1 + b d2)`` on a ``num x num`` grid of ``[-span, span]^2`` with two filter-normalised
directions drawn from ``seed`` (:mod:`flcore.analysis.landscape`), on at most ``samples``
training images (a fixed subset).

Each model gets its own directions (they are normalised to its filters), drawn from the
same seed, so the surfaces differ by the models only.  :func:`surface_summary` reduces a
surface to numbers that order the methods by flatness, which the paper reads off its
pictures: the loss at the centre, the mean rise of the loss over the grid, and the rise
at the grid's edge (radius ``span``).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import torch

from flcore.analysis.evaluation import DatasetEvaluator
from flcore.analysis.io import load_run
from flcore.analysis.landscape import Landscape2D, grid_points, landscape_2d, random_directions
from flcore.report.analysis_plots import plot_surface_2d
from flcore.report.figure_layout import panel_figure
from flcore.reproduction.published import source
from flcore.reproduction.stand_in import stand_in_for

if TYPE_CHECKING:
    import pandas as pd


def global_surface(run_dir: str | Path, num: int = 11, span: float = 1.0, samples: int | None = 2000,
                   seed: int = 0, device: str = "cpu") -> Landscape2D:
    """The loss surface of the run's final global model on its pooled training data."""
    run = load_run(run_dir, device=device)
    x, y = run.data("train", samples=samples, seed=seed)
    evaluate = DatasetEvaluator(run.flat, x, y, batch_size=run.config.eval_batch_size)
    d1, d2 = random_directions(run.flat, run.w, num=2, seed=seed)
    grid = grid_points(span, num)
    return landscape_2d(evaluate, run.w, d1, d2, grid, grid)


def surface_summary(surface: Landscape2D) -> dict:
    """``centre_loss``, ``mean_rise`` (mean loss over the grid minus the centre's) and
    ``edge_rise`` (mean loss on the grid points at distance >= the grid's half-width from
    the centre, minus the centre's)."""
    xs, ys, loss = surface.xs, surface.ys, surface.loss
    i0, j0 = int(torch.argmin(xs.abs())), int(torch.argmin(ys.abs()))
    centre = float(loss[i0, j0])
    radius = torch.sqrt(xs[:, None] ** 2 + ys[None, :] ** 2)
    edge = radius >= float(xs.abs().max())
    return {"centre_loss": centre, "mean_rise": float(loss.mean()) - centre,
            "edge_rise": float(loss[edge].mean()) - centre}


#: Grid points per axis and training samples of the pages' surfaces (coarse below the paper scale).
PAGE_GRID = {"smoke": 5, "small": 11, "paper": 21}
PAGE_SAMPLES = {"smoke": 500, "small": 2000, "paper": 10000}


def flatness_order(summary, name: str = "algorithm") -> list[str]:
    """The surfaces of :func:`surface_summary` rows from flattest to sharpest (smallest rise
    of the loss at the grid's edge first), by their ``name`` column."""
    return list(summary.sort_values("edge_rise")[name])


def show_global_surfaces(page, runs, scale: str, name: str = "algorithm") -> pd.DataFrame:
    """Figs. 1 (a)-(c), 3 and 6 of the FedLESAM paper: the loss surface of each finished run's
    final global model on its pooled training data (:func:`global_surface`, grid and samples
    of :data:`PAGE_GRID` / :data:`PAGE_SAMPLES`), one contour panel per run named by its
    ``name`` column, then :func:`surface_summary` as a table ordered by flatness; ends with the
    published source.  Returns the summary (one row per panel)."""
    import pandas as pd
    from IPython.display import Markdown, display


    data_name = stand_in_for(scale, "fedlesam").data_name("CIFAR-10")
    finished = runs[runs["status"] == "finished"].drop_duplicates("run_id")
    surfaces = {row[name]: global_surface(row["run_dir"], num=PAGE_GRID[scale], samples=PAGE_SAMPLES[scale],
                                          device="cpu")
                for row in finished.to_dict("records")}
    summary = pd.DataFrame([{name: key, **surface_summary(s)} for key, s in surfaces.items()])
    if len(surfaces):
        fig, axes = panel_figure(len(surfaces), 3.6, 3.2)
        for ax, (key, surface) in zip(axes, surfaces.items()):
            plot_surface_2d(surface, ax=ax, levels=20, colorbar=False, title=key)
        ranked = flatness_order(summary, name)
        page.figure(fig, f"Global loss surfaces on {data_name}: the flattest (smallest loss rise at the grid's edge) "
                         f"is {ranked[0]}.",
                    alt=f"Contour plots of the training loss around each final global model ({', '.join(surfaces)}).")
        page.table(summary, f"The surfaces in numbers: loss at the centre, mean rise over the grid, rise at the edge; "
                            f"from flattest to sharpest: {' > '.join(ranked)}.",
                   show=summary)
    display(Markdown(f"Published values: {source(page.artifact_id)['value']}."))
    return summary
