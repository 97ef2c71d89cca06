"""One seaborn style for every figure of the book, and a fixed colour per algorithm.

An algorithm keeps its colour in every figure; its +SWA version has the same colour and
a dashed line (:func:`algorithm_dashes`), so the eye pairs a method with its SWA version
as in the FedSAM paper's Figs. 10-11.
"""
from __future__ import annotations

import functools
import zlib

import pandas as pd

#: Base algorithms in a fixed order; colours come from seaborn's colour-blind palette.
BASE_ALGORITHMS = ("FedAvg", "FedAvg E=2", "FedSAM", "FedASAM", "FedAvgM", "FedProx", "SCAFFOLD", "FedDyn",
                   "FedGloSS", "FedGF", "FedLESAM", "FedIMA")


@functools.cache
def _palette() -> list:
    # seaborn (with scipy.stats) costs about 2 s to import: every flcore command and
    # notebook kernel imports this module, few of them draw
    import seaborn as sns

    return sns.color_palette("colorblind", n_colors=10) + sns.color_palette("dark", n_colors=10)


def base_algorithm(label: str) -> str:
    """``"FedSAM+SWA"`` -> ``"FedSAM"``; ``"FedAvg E=1"`` -> ``"FedAvg"``."""
    base = label.replace("+SWA", "").replace(" + SWA", "").strip()
    return "FedAvg" if base == "FedAvg E=1" else base


def algorithm_color(label: str):
    base = base_algorithm(label)
    if base in BASE_ALGORITHMS:
        return _palette()[BASE_ALGORITHMS.index(base)]
    spare = len(_palette()) - len(BASE_ALGORITHMS)
    return _palette()[len(BASE_ALGORITHMS) + zlib.crc32(base.encode()) % spare]


def algorithm_palette(labels) -> dict:
    return {label: algorithm_color(label) for label in labels}


def algorithm_dashes(labels) -> dict:
    """Solid lines for the methods, dashed for their +SWA versions."""
    return {label: (4, 2) if "SWA" in label else "" for label in labels}


def _inline_in_notebooks() -> None:
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and type(shell).__name__ == "ZMQInteractiveShell":
        shell.run_line_magic("matplotlib", "inline")


def set_style() -> None:
    """Apply the book's style (call once at the top of a notebook).

    In a notebook kernel it also selects the inline backend, so figures are embedded in
    the executed notebook even when ``MPLBACKEND`` names a non-interactive backend.
    """
    _inline_in_notebooks()
    import matplotlib
    import seaborn as sns

    pd.set_option("display.max_colwidth", None)  # long cells (orderings, notes) are shown whole
    matplotlib.rcParams.update(matplotlib.rcParamsDefault)
    sns.set_theme(context="notebook", style="whitegrid", palette=_palette()[:10], rc={
        "figure.figsize": (7.0, 4.0),
        "figure.dpi": 100,
        "savefig.dpi": 100,
        "savefig.bbox": "tight",
        "axes.titlesize": "medium",
        "legend.frameon": False,
        "lines.linewidth": 1.6,
    })
