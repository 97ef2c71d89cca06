"""How a number is printed on a page and written to its CSV download: one rule for both.

A page shows every table through :func:`display_frame` and offers it through
:func:`csv_frame`, so a CSV holds exactly the precision the page prints (no
``34.003499999999995`` beside a printed ``34.00``) and a missing value reads as the
legend says (:data:`MISSING`), never ``NaN`` (in the CSV: an empty field).

The rule (:func:`format_number`), decided here because the papers print numbers of very
different sizes in one table (accuracies, learning rates, radii, seconds):

- an integer, or a float with an integral value (``1000.0``, ``5.0``), prints without a
  decimal point: ``1000``;
- a number of magnitude 1 or more prints with 2 decimals, as the papers print accuracies
  (``34.0035`` -> ``34.00``);
- a number below 1 in magnitude prints with 3 significant digits (``0.05``,
  ``0.000312``, ``1.23e-05``): a standard error of 0.0003 s stays 0.000312, not ``0.0``;
- a missing value (``None``, ``NaN``) prints :data:`MISSING`; infinities print ``inf``.

:func:`round_number` gives the value that text stands for, which is what the CSV holds.
"""
from __future__ import annotations

import math
import numbers

import pandas as pd

#: What a missing value prints as on a page and in its CSV (an en dash).
MISSING = "\u2013"
#: Decimals of a number of magnitude 1 or more.
DECIMALS = 2
#: Significant digits of a number below 1 in magnitude.
SIGNIFICANT = 3


def _is_missing(value) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def format_number(value) -> str:
    """``value`` as a page prints it (see the module docstring); text is returned as it is."""
    if _is_missing(value):
        return MISSING
    if not _is_real(value):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    value = float(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value.is_integer():
        return str(int(value))
    if abs(value) >= 1:
        return f"{value:.{DECIMALS}f}"
    return f"{value:.{SIGNIFICANT}g}"


def round_number(value):
    """The value :func:`format_number` prints (an ``int`` for integral values, a ``float``
    rounded to the printed digits); text and missing values are returned as they are."""
    if _is_missing(value) or not _is_real(value):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    value = float(value)
    if math.isinf(value):
        return value
    if value.is_integer():
        return int(value)
    return float(format_number(value))


def _labels(index: pd.Index) -> pd.Index:
    if isinstance(index, pd.MultiIndex):
        return pd.MultiIndex.from_tuples([tuple(format_number(v) for v in key) for key in index], names=index.names)
    return pd.Index([format_number(v) for v in index], name=index.name, dtype=object)


def display_frame(frame: pd.DataFrame, labels: bool = True) -> pd.DataFrame:
    """``frame`` with every cell as text by :func:`format_number` (and, with ``labels``,
    its row and column labels: an alpha of ``1000.0`` heads its column as ``1000``)."""
    shown = frame.copy()
    for position in range(shown.shape[1]):
        shown.isetitem(position, [format_number(v) for v in shown.iloc[:, position]])
    if labels:
        names = (shown.index.names, shown.columns.names)
        shown.index = _labels(shown.index)
        shown.columns = _labels(shown.columns)
        shown.index.names, shown.columns.names = names
    return shown


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every number rounded as the page prints it (:func:`round_number`),
    ready for ``to_csv``; a missing value stays missing (an empty CSV field, which every
    CSV reader takes for one)."""
    written = frame.copy()
    for position in range(written.shape[1]):
        written.isetitem(position, pd.Series([round_number(v) for v in written.iloc[:, position]],
                                             index=written.index, dtype=object))
    return written
