"""Figures readable at the book's width: panels wrap into rows, no text of one axes prints
over another, and the smallest text shows at least MIN_FONT_PX at the content width."""
from __future__ import annotations

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from flcore.papers.fedima import analysis as fedima_analysis  # noqa: E402
from flcore.papers.fedsam import analysis as fedsam_analysis  # noqa: E402
from flcore.report import figure_layout as layout  # noqa: E402
from flcore.report import set_style  # noqa: E402
from flcore.report.geometry_plots import plane_panel  # noqa: E402
from flcore.report.landscape_figures import bars  # noqa: E402


@pytest.fixture(autouse=True)
def _style():
    set_style()
    yield
    plt.close("all")


def _plane(x_extent=1.6, y_extent=1.5, grid=5, seed=0):
    rng = np.random.default_rng(seed)
    # a plane through three models, as flcore.analysis.landscape lays it out: the models
    # inside a grid x_extent by y_extent
    xs = torch.linspace(-0.2 * x_extent, 0.8 * x_extent, grid)
    ys = torch.linspace(-0.2 * y_extent, 0.8 * y_extent, grid)
    coords = torch.tensor([[0.0, 0.0], [x_extent * 0.6, 0.0], [x_extent * 0.3, y_extent * 0.5]])
    plane = SimpleNamespace(xs=xs, ys=ys, loss=torch.tensor(2.5 + 14 * rng.random((grid, grid))),
                            error=torch.tensor(0.87 + 0.04 * rng.random((grid, grid))), coords=coords,
                            plane=SimpleNamespace(coords=coords, mean_coord=coords.mean(0)))
    plane.points = {"model_loss": [3.0, 3.1, 3.2], "mean_loss": 2.9, "model_error": [0.9] * 3, "mean_error": 0.89}
    return plane


def test_grid_shape_wraps_panels_to_the_widest_figure():
    assert layout.grid_shape(8, 5.0) == (4, 2)  # 11 in // 5 in = 2 columns
    assert layout.grid_shape(3, 3.6) == (1, 3)
    assert layout.grid_shape(7, 3.6) == (3, 3)
    assert layout.grid_shape(1, 20.0) == (1, 1)  # one panel wider than the page still gets a column
    with pytest.raises(ValueError, match="at least one panel"):
        layout.grid_shape(0, 5.0)
    figure, axes = layout.panel_figure(3, 5.0, 4.0)
    assert len(axes) == 3 and len(figure.axes) == 3  # the fourth cell of the 2 x 2 grid is removed
    assert figure.get_size_inches()[0] == pytest.approx(10.0)


def test_smallest_font_is_measured_at_the_content_width():
    narrow = plt.figure(figsize=(5, 3))
    narrow.add_subplot().set_title("t", fontsize=10)
    for ax in narrow.axes:
        ax.tick_params(labelsize=12)
        ax.xaxis.label.set_fontsize(12)
    assert layout.display_scale(narrow) == 1.0  # under 750 px: shown at full size
    assert layout.smallest_font_px(narrow) == pytest.approx(10 * 100 / 72)
    wide = plt.figure(figsize=(30, 3))
    wide.add_subplot().set_title("t", fontsize=10)
    scale = layout.display_scale(wide)
    assert scale == pytest.approx(750 / (wide.get_tightbbox(wide.canvas.get_renderer()).width * 100))
    assert scale < 0.35 and layout.smallest_font_px(wide) < layout.MIN_FONT_PX


def test_overprinted_text_finds_a_colour_bar_label_over_its_neighbour():
    # the old Fig. 1 layout: eight contour panels with colour bars in a 2 x 4 grid, 17 x 7.5 in
    figure, axes = plt.subplots(2, 4, figsize=(17, 7.5), squeeze=False)
    for k, ax in enumerate(axes.flat):
        cs = ax.contourf(np.random.default_rng(k).random((5, 5)) * 10)
        figure.colorbar(cs, ax=ax, label="loss")
        ax.set(xlabel="x", ylabel="y", title=f"clients, round {k}: test loss")
    assert layout.overprinted_text(figure)
    assert layout.smallest_font_px(figure) < 9.0


def test_fedima_planes_are_rows_of_loss_and_error_with_nothing_overprinted():
    panels = [(f"clients, round {r}", f"clients, round {r}", _plane(seed=r)) for r in (1, 4)]
    figure, table = fedima_analysis.draw_planes(panels, key="panel", gap=False, field_prefix="test ")
    titles = [ax.get_title() for ax in figure.axes if ax.get_title()]
    assert titles == [f"clients, round {r}: test {f}" for r in (1, 4) for f in ("loss", "error")]
    assert list(table["panel"]) == [p[0] for p in panels]
    assert figure.get_size_inches()[0] <= layout.MAX_WIDTH_IN
    assert layout.overprinted_text(figure) == []
    assert layout.smallest_font_px(figure) >= layout.MIN_FONT_PX


def test_fedsam_client_planes_keep_an_elongated_plane_readable():
    planes = {0.0: (_plane(1.6, 0.05), [3, 5, 8]), 0.5: (_plane(1.4, 1.3), [3, 5, 8]),
              1000.0: (_plane(0.1, 0.14), [3, 5, 8])}
    figure = fedsam_analysis.draw_client_planes(planes, "loss", lambda index, alpha: f"train loss, alpha = {alpha:g}")
    assert figure.get_size_inches()[0] <= layout.MAX_WIDTH_IN
    assert layout.overprinted_text(figure) == []
    assert layout.smallest_font_px(figure) >= layout.MIN_FONT_PX
    renderer = figure.canvas.get_renderer()
    boxes = {ax.get_title(): ax.get_window_extent(renderer) for ax in figure.axes if ax.get_title()}
    strip = boxes["train loss, alpha = 0"]
    assert strip.height / strip.width > 0.5  # 32 times longer than wide, drawn as a panel, not a strip
    square = [ax for ax in figure.axes if ax.get_title() == "train loss, alpha = 0.5"][0]
    assert square.get_aspect() == 1.0  # a plane of comparable extents keeps its true shape


def test_plane_panel_keeps_equal_scales_up_to_the_elongation_limit():
    _, (a, b) = plt.subplots(1, 2)
    plane_panel(a, _plane(1.0, 1.05 / layout_limit()), "loss")
    plane_panel(b, _plane(1.0, 0.95 / layout_limit()), "loss")
    assert a.get_aspect() == 1.0 and b.get_aspect() == "auto"


def layout_limit():
    from flcore.report.geometry_plots import MAX_PLANE_ELONGATION

    return MAX_PLANE_ELONGATION


def test_bars_of_many_methods_stay_within_the_page():
    methods = [f"Method-{i}" for i in range(11)]
    frame = pd.DataFrame([{"algorithm": m, "setting": s, "lambda": 10.0 + i + k}
                          for i, m in enumerate(methods) for k, s in enumerate(["C10 a=0", "C10 a=0.05",
                                                                                "C100 a=0", "C100 a=0.5"])])
    figure = bars(frame, "lambda", "algorithm", "setting", order=methods, log=True)
    assert figure.get_size_inches()[0] == pytest.approx(layout.MAX_WIDTH_IN)  # 0.55 x 44 + 2 = 26 in before
    assert layout.smallest_font_px(figure) >= layout.MIN_FONT_PX
    assert layout.overprinted_text(figure) == []
    # the legend sits above the bars, not over them
    renderer = figure.canvas.get_renderer()
    ax = figure.axes[0]
    assert ax.get_legend().get_window_extent(renderer).y0 >= ax.patch.get_window_extent(renderer).y1 - 1


def test_a_bar_over_several_seeds_is_their_mean_with_every_seed_drawn():
    # FedSAM at C10: seeds 4, 6, 8 -> a bar of 6 with three dots; FedAvg: one seed, no dot
    frame = pd.DataFrame({"algorithm": ["FedSAM"] * 3 + ["FedAvg"], "setting": ["C10"] * 4,
                          "lambda": [4.0, 6.0, 8.0, 10.0]})
    figure = bars(frame, "lambda", "algorithm", "setting", order=["FedAvg", "FedSAM"])
    ax = figure.axes[0]
    assert [p.get_height() for p in ax.patches] == pytest.approx([10.0, 6.0])
    (dots,) = ax.collections
    assert sorted(dots.get_offsets()[:, 1]) == pytest.approx([4.0, 6.0, 8.0])
    centre = ax.patches[1].get_x() + ax.patches[1].get_width() / 2
    assert list(dots.get_offsets()[:, 0]) == pytest.approx([centre] * 3)  # on FedSAM's bar
