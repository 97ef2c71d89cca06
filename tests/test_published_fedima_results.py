"""FedIMA Tables I-III: every published number checked against the paper's text."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from flcore.reproduction.published import published

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT.parent / "shared" / "papers" / "fedima.txt"
needs_paper = pytest.mark.skipif(not PAPER.is_file(), reason="shared/papers not beside the repo")
METHODS = ["FedAvg", "FedProx", "FedASAM", "FedFA", "FedNova", "FedAdam", "FedYogi", "FedGMA"]


def _lines() -> list[str]:
    return PAPER.read_text().splitlines()


@needs_paper
def test_table1_rows_are_the_papers_rows_in_order():
    rows = [line for line in _lines() if len(re.findall(r"\d+\.\d+\(\d+\.\d+\)", line)) == 8]
    assert len(rows) == 12
    table = published("fedima-table-1")
    assert len(table) == 12 * 16
    blocks = table.groupby(["dataset", "model", "partition"], sort=False)
    assert blocks.ngroups == 12
    for line, (_, block) in zip(rows, blocks):
        pairs = re.findall(r"(\d+\.\d+)\((\d+\.\d+)\)", line)
        values = dict(zip(block["algorithm"], block["accuracy"]))
        for method, (without, with_ima) in zip(METHODS, pairs):
            assert values[method] == pytest.approx(float(without))
            assert values[method + "+IMA"] == pytest.approx(float(with_ima))


@needs_paper
def test_table1_first_rows_name_their_data_set():
    rows = [line for line in _lines() if len(re.findall(r"\d+\.\d+\(\d+\.\d+\)", line)) == 8]
    table = published("fedima-table-1")
    firsts = table.drop_duplicates(["dataset", "model", "partition"])
    for line, row in zip(rows[0::2], firsts.iloc[0::2].itertuples()):
        if row.dataset in ("FMNIST", "CIFAR-10", "Digit-Five", "PACS"):
            name = {"Digit-Five": "Digit Five", "ResNet-18": "ResNet"}
            assert (name.get(row.dataset, row.dataset) in line), row


@needs_paper
def test_table2_values_are_the_papers():
    text = "\n".join(_lines())
    table = published("fedima-table-2")
    assert len(table) == 6 * 5
    for method, block in table.groupby("algorithm", sort=False):
        cells = " | ".join(f"{int(r.rounds)}({r.speedup:.2f})".replace("(1.00)", "(1)")
                           for r in block.itertuples())
        assert f"| {method} | {cells} |" in text


@needs_paper
def test_table3_values_are_the_papers():
    text = "\n".join(_lines())
    table = published("fedima-table-3")
    assert len(table) == 8 * 5
    for method, block in table.groupby("algorithm", sort=False):
        cells = " | ".join(f"{v:.2f}" for v in block["accuracy"])
        assert f"| {method.removesuffix('+IMA')} | {cells} |" in text
    # the first column is Table I's CIFAR-10 CNN Dirichlet row with IMA
    table1 = published("fedima-table-1")
    row = table1[(table1["dataset"] == "CIFAR-10") & (table1["model"] == "CNN") & (table1["partition"] == "dirichlet")]
    first = table[table["client_decay"] == "exponential"].set_index("algorithm")["accuracy"]
    assert first.to_dict() == pytest.approx(row.set_index("algorithm")["accuracy"][first.index].to_dict())
