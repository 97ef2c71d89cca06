"""Figures that stay readable at the book's content width.

The book shows a figure's PNG at most :data:`CONTENT_WIDTH_PX` wide (``max-width: 100%``
of the text column), so a figure ``W`` inches wide saved at ``dpi`` shows its text scaled by
``min(1, CONTENT_WIDTH_PX / (W * dpi))``: a row of six 6-inch panels prints 11-point tick
labels at about 4 px. Decision (no paper says how wide a page is): a figure is at most
:data:`MAX_WIDTH_IN` inches wide and wraps its panels into rows (:func:`panel_figure`);
its smallest text must show at least :data:`MIN_FONT_PX` pixels high
(:func:`smallest_font_px`), and no text of one axes (a colour bar's label, a tick label,
a title) may print over another axes or its text (:func:`overprinted_text`).
"""
from __future__ import annotations

import math

#: Width (px) of the book's text column, where figures are shown.
CONTENT_WIDTH_PX = 750
#: Widest figure (inches) drawn for the book: at 100 dpi an 11-point label still shows 9.5 px.
MAX_WIDTH_IN = 11.0
#: Smallest text height (px, at the content width) a figure may show.
MIN_FONT_PX = 8.0


def grid_shape(n: int, panel_width: float, max_width: float = MAX_WIDTH_IN) -> tuple[int, int]:
    """``(rows, columns)`` for ``n`` panels ``panel_width`` inches wide in a figure at most
    ``max_width`` inches wide (at least one column; rows filled left to right)."""
    if n < 1:
        raise ValueError(f"a figure needs at least one panel, got {n}")
    columns = max(1, min(n, int(max_width // panel_width)))
    return math.ceil(n / columns), columns


def panel_figure(n: int, panel_width: float, panel_height: float, max_width: float = MAX_WIDTH_IN,
                 **subplot_kw):
    """A figure of ``n`` panels wrapped into rows so it is at most ``max_width`` inches wide
    (:func:`grid_shape`), with constrained layout (colour bars and labels get their own
    room); unused grid cells are removed. Returns ``(figure, axes)``, ``axes`` a flat list
    of ``n``."""
    import matplotlib.pyplot as plt

    rows, columns = grid_shape(n, panel_width, max_width)
    figure, grid = plt.subplots(rows, columns, figsize=(panel_width * columns, panel_height * rows),
                                squeeze=False, layout="constrained", subplot_kw=subplot_kw or None)
    axes = [ax for row in grid for ax in row]
    for ax in axes[n:]:
        ax.remove()
    return figure, axes[:n]


def _renderer(figure):
    figure.canvas.draw()
    return figure.canvas.get_renderer()


def display_scale(figure) -> float:
    """How much the book shrinks ``figure``'s saved PNG (``savefig.bbox = "tight"``) to fit
    the content width: ``min(1, CONTENT_WIDTH_PX / width_px)``."""
    import matplotlib as mpl

    renderer = _renderer(figure)
    dpi = mpl.rcParams["savefig.dpi"]
    dpi = figure.dpi if dpi == "figure" else float(dpi)
    width_px = figure.get_tightbbox(renderer).width * dpi
    return min(1.0, CONTENT_WIDTH_PX / width_px)


def _undrawn_tick_labels(artist) -> set[int]:
    """Ids of the tick labels of ``artist``'s axes that are not drawn: an axis keeps ticks
    outside its view limits, with labels, but draws only those inside."""
    from matplotlib.axes import Axes

    hidden = set()
    for ax in artist.findobj(Axes):
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            slack = 1e-9 * max(1.0, abs(high - low))
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not low - slack <= tick.get_loc() <= high + slack:
                    hidden.update((id(tick.label1), id(tick.label2)))
    return hidden


def _texts(artist):
    """The visible, non-empty texts drawn by ``artist`` (an axes or a figure, recursively)."""
    from matplotlib.text import Text

    hidden = _undrawn_tick_labels(artist)
    return [t for t in artist.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden
            and (t.axes is None or t.axes.get_visible())]


def smallest_font_px(figure) -> float:
    """The smallest text height of ``figure`` in pixels as the book shows it: font size
    (points) x dpi / 72 x :func:`display_scale`."""
    import matplotlib as mpl

    dpi = mpl.rcParams["savefig.dpi"]
    dpi = figure.dpi if dpi == "figure" else float(dpi)
    scale = display_scale(figure)
    sizes = [t.get_fontsize() for t in _texts(figure)]
    return min(sizes) * dpi / 72 * scale if sizes else math.inf


def overprinted_text(figure, tolerance: float = 1.0) -> list[str]:
    """Texts of one axes drawn over another axes' plotting area or text:
    ``["'loss' (axes 0) over axes 1", ...]``; empty when the layout is clean. Boxes are
    compared in display pixels, shrunk by ``tolerance`` px so touching edges do not count."""
    renderer = _renderer(figure)
    axes = [ax for ax in figure.axes if ax.get_visible()]

    def box(artist):
        b = artist.get_window_extent(renderer)
        return b.x0 + tolerance, b.y0 + tolerance, b.x1 - tolerance, b.y1 - tolerance

    def overlap(a, b):
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    texts = {i: [(t, box(t)) for t in _texts(ax) if t.get_window_extent(renderer).width > 0] for i, ax in
             enumerate(axes)}
    found = []
    for i in texts:
        for j, other in enumerate(axes):
            if i == j:
                continue
            area = box(other.patch)
            for text, b in texts[i]:
                if overlap(b, area) or any(overlap(b, ob) for _, ob in texts[j]):
                    found.append(f"{text.get_text()!r} (axes {i}) over axes {j}")
    return found
