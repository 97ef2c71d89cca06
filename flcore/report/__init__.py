"""Figures and tables of the reproduction book: one style, paper-vs-ours tables, the
papers' standard plots.  Nothing here trains or evaluates a model: it formats what the
run store and :mod:`flcore.reproduction` hand over.

- :mod:`~flcore.report.style`: the seaborn style and the fixed colour of each algorithm;
- :mod:`~flcore.report.tables`: published vs ours with the delta, pending and diverged cells;
- :mod:`~flcore.report.ordering`: published and our orderings of the methods, Kendall's tau;
- :mod:`~flcore.report.page`: numbered captions, figures with alt text, CSV downloads, claim verdicts;
- :mod:`~flcore.report.analysis_plots`: the figures of `flcore analyze` and the surfaces of the analysis pages;
- :mod:`~flcore.report.plots`: accuracy against rounds, per-client accuracy of the global model.
"""
from flcore.report.style import algorithm_color, set_style
from flcore.report.tables import (
                     DIVERGED_MARK,
                     PENDING,
                     compare_settings,
                     format_comparison,
                     mean_sd_text,
                     ours_accuracy,
                     ours_values,
                     paper_vs_ours,
)

__all__ = ["DIVERGED_MARK", "PENDING", "algorithm_color", "compare_settings",
           "format_comparison", "mean_sd_text", "ours_accuracy", "ours_values", "paper_vs_ours", "set_style"]
