"""The FedSAM paper's Table 1 as transcribed: every published number against the paper's text."""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from flcore.reproduction.published import published, source

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT.parent / "shared" / "papers"
needs_papers = pytest.mark.skipif(not (PAPERS / "fedsam.txt").is_file(), reason="shared/papers not beside the repo")


def _paper_name(label: str) -> str:
    """Our algorithm label as the paper's Table 1 prints it ("FedAvg+SWA" -> "FedAvg + SWA")."""
    return label.replace("+", " + ")


@needs_papers
def test_table1_published_values_are_the_papers():
    lines = (PAPERS / "fedsam.txt").read_text().splitlines()
    rows = published("fedsam-table-1")
    assert len(rows) == 14
    for algorithm, cells in rows.groupby("algorithm", sort=False):
        cells = cells.set_index("alpha")
        numbers = [f"{cells.loc[0, 'lambda_max']:.2f}", f"{cells.loc[1000, 'lambda_max']:.2f}",
                   f"{float(cells.loc[0, 'ratio']):.2f}"]
        ratio_1k = pd.to_numeric(cells.loc[1000, "ratio"], errors="coerce")
        if not pd.isna(ratio_1k):
            numbers.append(f"{ratio_1k:.2f}")
        # the row's line: the name (not preceded by another letter: FedSAM is not FedASAM)
        # followed by its numbers in the table's column order
        pattern = re.compile(rf"(^|[^A-Za-z]){re.escape(_paper_name(algorithm))} " + " ".join(map(re.escape, numbers))
                             + r"(\s|$)")
        assert any(pattern.search(line) for line in lines), (algorithm, numbers)


def test_table1_garbled_cells_are_marked_not_invented():
    rows = published("fedsam-table-1")
    ratio = pd.to_numeric(rows["ratio"], errors="coerce")
    missing = rows[ratio.isna()]
    assert sorted(missing["algorithm"]) == sorted(["FedAvg E=1", "FedAvg E=2", "FedSAM", "FedASAM"])
    assert set(missing["alpha"]) == {1000} and all("garbled" in note for note in missing["note"])
    assert "Table 1" in source("fedsam-table-1")["source"]


@pytest.mark.parametrize("artifact", ["fedsam-fig-1", "fedsam-fig-2", "fedsam-fig-4", "fedsam-fig-5", "fedsam-fig-7",
                                      "fedsam-fig-12", "fedsam-fig-13", "fedsam-fig-14", "fedsam-fig-15",
                                      "fedsam-fig-16"])
def test_analysis_figures_say_the_paper_gives_no_numbers(artifact):
    info = source(artifact)
    assert info["file"] is None and "no numbers" in info["value"]
