"""The "The stand-in" page (flcore.site.stand_in_page): what it says of the stand-in, the
claims it cannot decide with their reasons, the heterogeneity gap and the plateau share,
from verdicts given by hand; and that ``flcore book`` writes it into the table of contents."""
from __future__ import annotations

from pathlib import Path

import yaml

from flcore.site.pages import generated_pages
from flcore.site.stand_in_page import stand_in_page

ROOT = Path(__file__).resolve().parents[1]


def _comparison(verdict, gap, published, reason=None, plateau=None, text=None, settled=None):
    out = {"cells": {"better": {"dataset": "CIFAR-10", "alpha": 100, "algorithm": "FedAvg"},
                     "worse": {"dataset": "CIFAR-10", "alpha": 0, "algorithm": "FedAvg"}},
           "runs_on": {"dataset": "mnist1d", "model": "mnist1d_cnn"}, "verdict": verdict,
           "verdict_text": text or verdict, "gap": gap, "published": {"gap": published}, "reason": reason,
           "run_ids": {"better": ["b"], "worse": ["w"]}}
    if plateau is not None:
        out["plateau"] = {"better": {"reached": True, "change": 0.1, "tolerance": 0.5},
                          "worse": {"reached": plateau, "change": 0.9 if not plateau else 0.2, "tolerance": 0.5}}
    if settled:
        out["settled_verdict"] = settled
    return out


RESULTS = [
    {"id": "fedsam-heterogeneity-costs-accuracy", "text": "Heterogeneity | degrades FedAvg", "verdict": "holds",
     "verdict_text": "holds", "comparisons": [_comparison("holds", 12.5, 19.46, plateau=True)]},
    {"id": "x-augmentation", "text": "Mixup helps", "verdict": "not_testable", "verdict_text": "not testable here",
     "comparisons": [_comparison("not_testable", None, 1.0, reason="needs two-dimensional images (image <b>)")]},
    {"id": "x-climbs", "text": "E = 2 is worse", "verdict": "inconclusive", "verdict_text": "inconclusive",
     "comparisons": [{**_comparison("inconclusive", 3.0, 1.0, plateau=False, text="not settled", settled="holds"),
                      "run_ids": {"better": ["c"], "worse": ["d"]}}]},
]


def test_the_page_names_the_stand_in_what_it_cannot_decide_the_gap_and_the_plateau_share():
    page = stand_in_page(RESULTS, "small")
    assert page.startswith("# The stand-in\n")
    assert "MNIST-1D with `mnist1d_cnn` (11,786 parameters): 100 clients, 5 per round, 300 rounds" in page
    # the heterogeneity gap, ours beside the paper's, and the stand-in it ran on
    assert "| 1. alpha 100 beats alpha 0 (MNIST-1D, FedAvg (for CIFAR-10, FedAvg)) | +19.46 | +12.50 |" in page
    assert "Heterogeneity \\| degrades FedAvg" in page  # text from the registry, escaped for its table
    # the claims it cannot decide, with their reasons, escaped
    assert "| Mixup helps (`x-augmentation`) | needs two\\-dimensional images \\(image &lt;b&gt;\\) |" in page
    assert "| `mnist1d_cnn` (the stand-in) | no | yes | yes | no |" in page
    assert "| `resnet18gn` (FedLESAM's ResNet-18) | yes | no | yes | yes |" in page
    # cells b, w, c, d: three reached, d did not; one comparison not settled, listed with its last-round verdict
    assert "3 of the 4 accuracy cells the claims read at this scale had reached it; 1 comparison read *not settled*" \
        in page
    assert ("| `x-climbs` 1: alpha 100 beats alpha 0 (MNIST-1D, FedAvg (for CIFAR-10, FedAvg)) "
            "| +0.10 / +0.90 | holds |") in page
    # the tuning record's choices beside the paper's CIFAR values, from the committed record
    from flcore.config.tuned import load_record
    record = load_record("fedsam", "small")
    assert "## Tuned on its own validation data" in page and "`flcore tune --scale small --paper fedsam`" in page
    sam = next(s for s in record["studies"] if s["name"] == "sam")
    homogeneous = next(r for r in sam["rows"] if r["row"] == "homogeneous")
    assert (f"| sam (`fedsam`) | homogeneous (100) | rho {{0.01, 0.02, 0.05, 0.1, 0.2, 0.5}} | "
            f"rho {homogeneous['choice']['rho']:g} |") in page
    assert "| rho 0.02 / 0.05 |" in page  # Table 11: CIFAR-10 homogeneous 0.02, CIFAR-100 0.05
    # a row says how many of its grid points diverged on a tuning seed (FedGAMMA's small radii at alpha 0.5)
    gamma = next(s for s in load_record("fedgf", "small")["studies"] if s["name"] == "fedgamma")
    row = next(r for r in gamma["rows"] if r["row"] == "heterogeneous")
    diverged = sum(1 for p in row["points"] if p.get("diverged"))
    gamma_row = page.split("| fedgamma (`fedgamma`) | heterogeneous")[1].splitlines()[0]
    assert diverged and f"| {diverged} of {len(row['points'])} |" in gamma_row
    # the smoke scale has no record: it says so
    assert "## Not tuned" in stand_in_page(RESULTS, "smoke")


def test_the_plateau_search_rows_and_what_they_conclude():
    def row(name, cost, changes):
        cells = [{"method": m, "alpha": a, "accuracy": 50.0, "change": c, "reached": abs(c) < 0.5}
                 for (m, a), c in zip([("fedavg", 0.0), ("fedsam", 100.0)], changes)]
        return {"benchmark": "plateau_search", "candidate": name, "cost": cost, "cells": cells,
                "reached": sum(c["reached"] for c in cells), "cells_total": 2, "commit": "abc"}
    rows = [row("today", 1.0, [3.0, 9.0]), row("decay", 1.0, [0.2, 4.0]), row("today", 1.0, [3.5, 9.5]),
            row("5x the rounds", 5.0, [0.1, 0.3])]
    page = stand_in_page(RESULTS, "small", rows)
    assert "| protocol | cost | at a plateau | fedavg, alpha 0 | fedsam, alpha 100 | commit |" in page
    assert "| today | x1 | 0 of 2 | 50.0 % (+3.50) | 50.0 % (+9.50) | abc |" in page  # the latest row of a candidate
    assert page.count("| today |") == 1
    assert "at most 1 of the 2 cells reach a plateau; 5x the rounds (x5) brings 2." in page


def test_at_the_paper_scale_there_is_no_stand_in():
    assert "no stand-in is used" in stand_in_page(RESULTS, "paper")


def test_the_page_is_generated_ignored_and_in_the_table_of_contents():
    assert "book/stand-in.md" in generated_pages()
    assert "book/stand-in.md" in (ROOT / ".gitignore").read_text().splitlines()
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    overview = [c["file"] for c in toc["parts"][0]["chapters"]]
    assert overview == ["book/coverage", "book/claims", "book/stand-in"]
