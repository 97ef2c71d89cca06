"""The inventory of the papers' 110 tables and figures, and the claims registry: checked
against the shared master inventory and the papers' text; verdicts against hand-computed
thresholds."""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from flcore.reproduction import claims as claims_module
from flcore.reproduction.artifacts import artifact_ids
from flcore.reproduction.claims import CellValue, Claim, Comparison, all_claims, evaluate, seed_spread
from flcore.reproduction.inventory import coverage, inventory, status
from flcore.reproduction.papers import paper_ids

PAPERS = paper_ids()

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
needs_shared = pytest.mark.skipif(not (SHARED / "reference" / "artifacts.yaml").is_file(),
                                  reason="shared/ (papers and reference notes) not beside the repo")


@needs_shared
def test_inventory_matches_the_master_list():
    master = yaml.safe_load((SHARED / "reference" / "artifacts.yaml").read_text())
    ours = {e.id: e for e in inventory()}
    assert len(ours) == len(master) == 110
    for item in master:
        entry = ours[item["id"]]
        assert (entry.paper, entry.kind, entry.cls, entry.caption) == (item["paper"], item["kind"], item["class"],
                                                                       item["caption"])
        assert list(entry.run_groups) == list(item.get("run_groups") or [])


def test_inventory_statuses():
    rows = coverage({"artifacts": {"fedsam-table-2": {"built": {"small": {}, "smoke": {}}}}})
    assert len(rows) == 110 and len({r["id"] for r in rows}) == 110
    by_id = {r["id"]: r for r in rows}
    assert set(artifact_ids()) <= set(by_id)
    for row in rows:
        assert row["status"] in ("reproduced", "pending", "not_regenerable")
        # heavy and schematic artifacts may have a page (registered, no runs): still not regenerable
        regenerable = row["class"] not in ("heavy", "schematic")
        assert (row["status"] == "reproduced") == (row["id"] in artifact_ids() and regenerable)
        if row["class"] in ("heavy", "schematic"):
            assert row["status"] == "not_regenerable" and len(row["reason"]) > 20
    assert by_id["fedsam-table-2"]["scales_built"] == ["smoke", "small"]  # the scales' order, not the manifest's
    assert by_id["fedsam-fig-11"]["scales_built"] == []
    assert sum(r["status"] == "not_regenerable" for r in rows) == 7  # 5 heavy, 2 schematic
    assert "fedsam-heterogeneity-costs-accuracy" in by_id["fedsam-table-2"]["claims"]


def test_every_paper_has_at_least_five_claims_with_known_artifacts():
    known = {e.id for e in inventory()}
    for paper in PAPERS:
        mine = [c for c in all_claims() if c.paper == paper]
        assert len(mine) >= 5, paper
        for claim in mine:
            assert claim.id.startswith(paper + "-")
            assert claim.artifacts and set(claim.artifacts) <= known, claim.id
            assert all(a.startswith(paper + "-") for a in claim.artifacts)
            assert claim.comparisons


def test_published_numbers_go_the_way_the_claim_says():
    for claim in all_claims():
        for comparison in claim.comparisons:
            assert claim.sign * comparison.published_gap > 0, (claim.id, comparison)


def _renderings(value: float) -> set[str]:
    out = {f"{value:.2f}", f"{value:.1f}", f"{value:.3f}", repr(value)}
    if float(value).is_integer():
        out.add(str(int(value)))
    return out


def _normalise(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@needs_shared
@pytest.mark.parametrize("paper", PAPERS)
def test_published_numbers_and_quotes_are_in_the_paper_text(paper):
    text = (SHARED / "papers" / f"{paper}.txt").read_text()
    normalised = _normalise(text)
    for claim in (c for c in all_claims() if c.paper == paper):
        assert claim.quote and _normalise(claim.quote) in normalised, claim.id
        for comparison in claim.comparisons:
            for value in (comparison.published_better, comparison.published_worse):
                found = any(re.search(rf"(?<![\d.]){re.escape(r)}(?![\d])", text) for r in _renderings(value))
                assert found, f"{claim.id}: {value} not in {paper}.txt"


def _claim(direction="higher"):
    return Claim(id="x-claim", paper="fedsam", text="A beats B", quote="", artifacts=("fedsam-table-2",),
                 source="", metric="accuracy", direction=direction,
                 comparisons=(Comparison({"algorithm": "A"}, {"algorithm": "B"}, 70.0, 65.0),))


@pytest.mark.parametrize("better, worse, spread, expected", [
    ((70.0, 1, None), (65.0, 1, None), 1.0, "holds"),      # gap 5 > 2 * 1 * sqrt(2) = 2.83
    ((67.0, 1, None), (65.0, 1, None), 1.0, "tie"),        # gap 2 < 2.83
    ((62.0, 1, None), (65.0, 1, None), 1.0, "fails"),      # gap -3 < -2.83
    ((67.0, 3, 0.5), (65.0, 3, 0.5), 9.0, "holds"),        # own seeds: 2 * 0.5 * sqrt(2/3) = 0.82 < 2
    ((65.5, 3, 0.5), (65.0, 3, 0.5), 0.01, "tie"),         # own seeds win over the reference spread
])
def test_verdict_threshold_is_twice_the_standard_error_of_the_gap(monkeypatch, better, worse, spread, expected):
    values = {"A": CellValue(better[0], better[1], better[2]), "B": CellValue(worse[0], worse[1], worse[2])}
    monkeypatch.setattr(claims_module, "_cell_value", lambda claim, cell, *a: values[cell["algorithm"]])
    result = evaluate(_claim(), "small", spread={"sigma": spread})
    assert result["verdict"] == expected
    ours = result["ours"][0]
    sigma = math.sqrt((better[2] ** 2 + worse[2] ** 2) / 2) if better[2] is not None else spread
    assert ours["threshold"] == pytest.approx(2 * sigma * math.sqrt(1 / better[1] + 1 / worse[1]), abs=1e-4)
    assert ours["gap"] == pytest.approx(better[0] - worse[0])
    assert result["published"][0]["gap"] == pytest.approx(5.0)


def test_lower_is_better_flips_the_sign(monkeypatch):
    values = {"A": CellValue(30.0, 1, None), "B": CellValue(90.0, 1, None)}
    monkeypatch.setattr(claims_module, "_cell_value", lambda claim, cell, *a: values[cell["algorithm"]])
    claim = _claim("lower")
    claim = Claim(
        **{**claim.__dict__, "comparisons": (Comparison({"algorithm": "A"}, {"algorithm": "B"}, 30.1, 93.5),)}
    )
    assert evaluate(claim, "small", spread={"sigma": 1.0})["verdict"] == "holds"


def test_unmeasured_spread_or_missing_runs_are_not_checked(monkeypatch):
    values = {"A": CellValue(70.0, 1, None), "B": CellValue(None, 0, None, "its runs are not in the store")}
    monkeypatch.setattr(claims_module, "_cell_value", lambda claim, cell, *a: values[cell["algorithm"]])
    result = evaluate(_claim(), "small", spread={"sigma": 1.0})
    assert result["verdict"] == "not_checked" and result["reason"] == "its runs are not in the store"
    values["B"] = CellValue(60.0, 1, None)
    result = evaluate(_claim(), "small", spread=None)
    assert result["verdict"] == "not_checked" and "spread is not measured" in result["reason"]


def test_seed_spread_is_the_pooled_standard_deviation(monkeypatch):
    from flcore.reproduction import runner

    # two configurations with three seeds each: variances 1 and 4 (points^2) -> pooled sqrt(2.5)
    rows = [{"algorithm": "FedAvg E=1", "alpha": 0.0, "status": "finished", "mean_last_100": v / 100}
            for v in (30.0, 31.0, 32.0)]
    rows += [{"algorithm": "FedSAM", "alpha": 0.0, "status": "finished", "mean_last_100": v / 100}
             for v in (40.0, 42.0, 44.0)]
    monkeypatch.setattr(runner, "results_frame", lambda specs, store=None: pd.DataFrame(rows))
    spread = seed_spread("small")
    assert spread["sigma"] == pytest.approx(math.sqrt(2.5)) and spread["runs"] == 6
    assert spread["configurations"] == 2


def test_reproduce_list_json_has_one_object_per_artifact(tmp_path):
    out = subprocess.run([sys.executable, "-m", "flcore", "reproduce", "--list", "--json", "--root", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 110
    for row in rows:
        assert {"id", "paper", "kind", "class", "status", "scales_built", "claims"} <= set(row)
        assert row["kind"] in ("table", "figure") and row["paper"] in PAPERS
    regenerable = {r["id"] for r in rows if r["class"] not in ("heavy", "schematic")}
    assert {r["id"] for r in rows if r["status"] == "reproduced"} == set(artifact_ids()) & regenerable
    # a heavy or schematic artifact with a page is listed, not regenerated
    assert all(r["status"] == "not_regenerable" for r in rows if r["id"] not in regenerable)


def test_claims_cli_reports_every_claim_and_refuses_an_unknown_paper(tmp_path):
    out = subprocess.run([sys.executable, "-m", "flcore", "claims", "--scale", "small", "--json", "--store",
                          str(tmp_path / "empty")], capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in rows] == [c.id for c in all_claims()]
    for row in rows:
        assert {"id", "paper", "text", "artifacts", "verdict", "published", "ours"} <= set(row)
        assert row["verdict"] == "not_checked"  # an empty store checks nothing
    bad = subprocess.run([sys.executable, "-m", "flcore", "claims", "--paper", "fedfoo"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "fedsam fedgloss" not in bad.stderr and "allowed values" in bad.stderr


def test_inventory_status_follows_the_registry():
    for entry in inventory():
        assert status(entry) == ("not_regenerable" if entry.cls in ("heavy", "schematic")
                                 else "reproduced" if entry.id in artifact_ids() else "pending")


def test_toc_lists_every_paper_page_and_every_registered_artifact_under_its_paper():
    from flcore.reproduction.artifacts import get_artifact

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    chapters = {c["file"]: c for part in toc["parts"] for c in part["chapters"]}
    assert {"book/coverage", "book/claims"} <= set(chapters)
    for paper in PAPERS:
        sections = [s["file"] for s in chapters[f"book/{paper}/index"].get("sections", [])]
        registered = [get_artifact(a).book_path[:-len(".ipynb")] for a in artifact_ids()
                      if get_artifact(a).paper == paper]
        assert sorted(sections) == sorted(registered), paper
