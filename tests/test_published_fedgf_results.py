"""FedGF Tables 1, 2, 4 and 5: every published value checked against the paper's text."""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from flcore.reproduction.published import published

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT.parent / "shared" / "papers" / "fedgf.txt"
pytestmark = pytest.mark.skipif(not PAPER.is_file(), reason="shared/papers not beside the repo")


def _rows(start: str, count: int, numbers: int) -> list[list[str]]:
    """The tab-separated cells (bold marks removed) of the first ``count`` lines after the
    line starting with ``start`` that hold ``numbers`` values (numbers or "(X)")."""
    lines = PAPER.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    rows = []
    for line in lines[first + 1:]:
        cells = [re.sub(r"</?b>", "", c).strip() for c in line.split("\t")]
        if sum(bool(re.fullmatch(r"[\d.]+|\(X\)", c)) for c in cells) == numbers:
            rows.append(cells)
        if len(rows) == count:
            return rows
    raise AssertionError(f"table {start!r} has fewer than {count} rows")


def test_table1_every_cell_is_the_papers():
    table = published("fedgf-table-1")
    rows = _rows("Table 1: Test accuracies", 22, 9)
    assert len(table) == 198
    for index, cells in enumerate(rows):
        dataset = "CIFAR-10" if index < 11 else "CIFAR-100"
        algorithm = cells[1]
        values = cells[2:11]
        mine = table[(table["dataset"] == dataset) & (table["algorithm"] == algorithm)]
        assert len(mine) == 9, (dataset, algorithm)
        for value, (_, row) in zip(values, mine.iterrows()):
            if value == "(X)":
                assert row["accuracy"] == "" and "fails to train" in row["note"]
            else:
                assert float(row["accuracy"]) == float(value), (dataset, algorithm, row["alpha"])


def test_table2_every_cell_is_the_papers():
    table = published("fedgf-table-2")
    for cells in _rows(" Table 2: LPF", 6, 6):
        name = cells[0]
        values = [float(v) for v in cells[1:7]]
        for alpha, part in ((0, values[:3]), (1000, values[3:])):
            row = table[(table["algorithm"] == name) & (table["alpha"] == alpha)].iloc[0]
            assert [row["lpf"], row["lambda_max"], row["flatness_discrepancy"]] == part


def test_table4_values_and_ratios_are_the_papers():
    text = PAPER.read_text()
    block = text[text.index("Table 4: Number of model transmissions"):text.index("#### 6.2.6")]
    table = published("fedgf-table-4")
    numbers = {int(n) for n in re.findall(r"\b(\d{2,3})\b", block)}
    assert set(table["transmissions"]) <= numbers
    for ratio in table["ratio"]:
        if ratio != "":
            assert f"(x{ratio})" in block
    # each printed ratio is FedSMOO / FedGF of its setting
    for _, setting in table.groupby(["dataset", "alpha"]):
        by = setting.set_index("algorithm")
        assert round(by.loc["FedSMOO", "transmissions"] / by.loc["FedGF", "transmissions"], 2) == \
            float(by.loc["FedSMOO", "ratio"])


def test_table5_every_cell_is_the_papers_and_c0_is_table1_fedsam():
    table = published("fedgf-table-5")
    table1 = published("fedgf-table-1")
    rows = _rows("Table 5: Static", 4, 4)
    for index, cells in enumerate(rows):
        dataset = "CIFAR-10" if index < 2 else "CIFAR-100"
        iid = cells[-5]
        values = [float(v) for v in cells[-4:]]
        mine = table[(table["dataset"] == dataset) & (table["iidness"] == iid)]
        assert list(mine["accuracy"]) == values
        alpha = mine["alpha"].iloc[0]
        fedsam = table1[(table1["dataset"] == dataset) & (table1["algorithm"] == "FedSAM")
                        & (table1["alpha"] == alpha) & (table1["clients_per_round"] == 5)]
        assert float(fedsam["accuracy"].iloc[0]) == values[0]
    assert isinstance(table, pd.DataFrame)
