"""claims.json and claims.csv (flcore.site.verdict_files): the rows by hand, per-seed values
with their flags, and the files written where the build copies them from."""
from __future__ import annotations

import csv
import io
import json

import yaml

from flcore.site.verdict_files import CSV_COLUMNS, FOLDER, csv_text, links_html, write_verdict_files

RESULT = {
    "id": "x-claim", "paper": "fedsam", "by": "fedsam", "scale": "small", "verdict": "holds",
    "verdict_corrected": "inconclusive", "q": 0.2,
    "comparisons": [{
        "cells": {"better": {"dataset": "CIFAR-10", "algorithm": "FedSAM"},
                  "worse": {"dataset": "CIFAR-10", "algorithm": "FedAvg"}},
        "seeds": [0, 1, 2], "published": {"gap": 1.5}, "gap": 2.25, "units": "points of accuracy",
        "interval_95": [0.5, 4.0], "margin": 1.0, "verdict": "holds", "verdict_text": "holds", "p": 0.01,
        "reason": None,
        "per_seed": {"better": [{"seed": 0, "value": 71.5, "flag": None},
                                {"seed": 1, "value": None, "flag": "diverged"},
                                {"seed": 2, "value": 10.1, "flag": "collapsed"}],
                     "worse": [{"seed": 0, "value": 70.0, "flag": None}]}}]}


def test_one_csv_row_per_comparison_with_its_per_seed_values_and_flags():
    rows = list(csv.DictReader(io.StringIO(csv_text([RESULT]))))
    assert len(rows) == 1 and tuple(rows[0]) == CSV_COLUMNS
    row = rows[0]
    assert row["claim"] == "x-claim" and row["claim_verdict"] == "holds"
    assert row["claim_verdict_corrected"] == "inconclusive"
    assert row["better"] == "dataset=CIFAR-10, algorithm=FedSAM" and row["n"] == "3" and row["gap"] == "2.25"
    assert (row["interval_95_low"], row["interval_95_high"]) == ("0.5", "4.0")
    assert row["better_per_seed"] == "0:71.5;1:(diverged);2:10.1(collapsed)"
    assert row["worse_per_seed"] == "0:70.0" and row["reason"] == ""


def test_the_files_are_written_where_the_build_copies_them_from(tmp_path):
    paths = write_verdict_files(tmp_path, [RESULT])
    assert [p.relative_to(tmp_path) for p in paths] == [FOLDER / "claims.json", FOLDER / "claims.csv"]
    assert json.loads(paths[0].read_text()) == [RESULT]
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    config = yaml.safe_load((root / "_config.yml").read_text())
    assert config["sphinx"]["config"]["html_extra_path"] == [str(FOLDER)]
    assert (root / FOLDER / ".gitkeep").is_file()  # the folder exists before any build (-W: a missing path warns)
    assert links_html(2) == '<a href="../../claims.json">claims.json</a> and <a href="../../claims.csv">claims.csv</a>'


def test_per_seed_lists_every_seed_with_its_flag():
    from flcore.reproduction.claim_cells import CellValues
    from flcore.reproduction.claim_compare import per_seed

    cell = CellValues(values={0: 71.23456, 2: 55.0, 3: 60.0}, run_ids={}, configs=[], diverged=[1], censored=[3])
    assert per_seed(cell) == [{"seed": 0, "value": 71.2346, "flag": None},
                              {"seed": 1, "value": None, "flag": "diverged"},
                              {"seed": 2, "value": 55.0, "flag": None},
                              {"seed": 3, "value": 60.0, "flag": "censored"}]
