"""One rule for the numbers a page prints and its CSVs hold."""
from __future__ import annotations

import base64
import io

import numpy as np
import pandas as pd
import pytest

from flcore.report.numbers import MISSING, csv_frame, display_frame, format_number, round_number
from flcore.report.page import csv_link


@pytest.mark.parametrize("value, text", [
    (34.003499999999995, "34.00"), (1000.0, "1000"), (5, "5"), (np.int64(7), "7"), (0.05, "0.05"),
    (0.000312456, "0.000312"), (1.23456e-5, "1.23e-05"), (-0.5, "-0.5"), (70.16, "70.16"), (0.0, "0"),
    (float("nan"), MISSING), (None, MISSING), (pd.NA, MISSING), ("1-2", "1-2"), (True, "True"),
    (float("inf"), "inf"),
])
def test_format_number(value, text):
    assert format_number(value) == text


def test_round_number_is_the_printed_value():
    for value in (34.003499999999995, 0.000312456, 1.23456e-5, 1000.0, 2.5, 7, -12.345678):
        assert round_number(value) == float(format_number(value))
    assert isinstance(round_number(1000.0), int) and round_number("x") == "x"


def _frame():
    return pd.DataFrame({"accuracy": [34.003499999999995, np.nan, 65.0], "alpha": [0.0, 0.05, 1000.0],
                         "se": [0.0003124, 0.0, np.nan], "algorithm": ["A", None, "C"], "seeds": [1, 3, 1]})


def test_display_frame_prints_no_nan_no_float_noise_no_trailing_zero():
    shown = display_frame(_frame().set_index("alpha"))
    text = shown.to_string()
    assert "nan" not in text.lower() and "NaN" not in text and "1000.0" not in text
    assert list(shown.index) == ["0", "0.05", "1000"] and shown.index.name == "alpha"
    assert list(shown["accuracy"]) == ["34.00", MISSING, "65"]
    assert list(shown["se"]) == ["0.000312", "0", MISSING]  # a small standard error is not printed as 0.0
    assert list(shown["algorithm"]) == ["A", MISSING, "C"] and list(shown["seeds"]) == ["1", "3", "1"]
    wide = pd.DataFrame([[1.5, 2.0]], columns=pd.MultiIndex.from_tuples([(0.0, "paper"), (1000.0, "ours")],
                                                                         names=["alpha", ""]))
    assert list(display_frame(wide).columns) == [("0", "paper"), ("1000", "ours")]


def test_csv_holds_the_printed_precision():
    frame = _frame()
    link = csv_link(frame, "t.csv", "table (CSV)")
    text = base64.b64decode(link.split("base64,", 1)[1].split('"', 1)[0]).decode()
    assert "34.003499999999995" not in text and "1000.0" not in text and "nan" not in text.lower()
    back = pd.read_csv(io.StringIO(text))
    shown = display_frame(frame)
    for column in ("accuracy", "alpha", "se"):
        for printed, written in zip(shown[column], back[column]):
            assert (printed == MISSING and pd.isna(written)) or float(printed) == written
    assert text.splitlines()[1] == "34.0,0,0.000312,A,1"
    assert csv_frame(frame).shape == frame.shape
