"""The inventory of the papers' 110 tables and figures, and the claims registry: checked
against the shared master inventory and the papers' text; verdicts (paired t test,
threshold, MDE, distinct pairs, what a scale can test) against hand computations."""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from flcore.config import resolve_config
from flcore.reproduction import claim_registry
from flcore.reproduction import claims as claims_module
from flcore.reproduction.artifacts import artifact_ids, get_artifact
from flcore.reproduction.claims import (
    METRICS,
    CellValues,
    Claim,
    Comparison,
    Margin,
    Seeds,
    all_claims,
    claim_specs,
    claim_verdict,
    counts_text,
    evaluate,
    margin_of,
    reference_spread,
)
from flcore.reproduction.coverage import coverage, status
from flcore.reproduction.inventory import inventory
from flcore.reproduction.paired import (
    PairedTest,
    detectable_noncentrality,
    pooled_sd,
    power_of_effect,
    t_cdf,
    t_quantile,
)
from flcore.reproduction.paper_registry import paper_ids

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
    assert {a for a in artifact_ids() if get_artifact(a).kind != "page"} <= set(by_id)  # pages: the book's own
    for row in rows:
        assert row["status"] in ("regenerated", "pending", "not_regenerable")
        # heavy and schematic artifacts may have a page (registered, no runs): still not regenerable
        regenerable = row["class"] not in ("heavy", "schematic")
        assert (row["status"] == "regenerated") == (row["id"] in artifact_ids() and regenerable)
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
            if comparison.published_gap is None:  # a later claim whose source prints no numbers
                assert claim.by is not None, claim.id
                continue
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
    for claim in (c for c in all_claims() if c.paper == paper and c.by is None):  # later claims: test_later_claims
        assert claim.quote and _normalise(claim.quote) in normalised, claim.id
        for comparison in claim.comparisons:
            for value in (comparison.published_better, comparison.published_worse):
                found = any(re.search(rf"(?<![\d.]){re.escape(r)}(?![\d])", text) for r in _renderings(value))
                assert found, f"{claim.id}: {value} not in {paper}.txt"


MAIN = {"dataset": ["cifar10", "cifar100"], "model": "cnn"}
#: The small scale's run config (MNIST-1D, its CNN): what the cells' runs train.
SMALL_CONFIG = resolve_config({"method": "fedavg", "scale": "small"})


def _claim(direction="higher", comparisons=None, about=None, metric="accuracy", seeds=3):
    """A claim planned at ``seeds`` seeds (stated, as a ``claims.yaml`` may)."""
    comparisons = comparisons or (Comparison({"algorithm": "A"}, {"algorithm": "B"}, 70.0, 65.0),)
    return Claim(id="x-claim", paper="fedsam", text="A beats B", quote="", artifacts=("fedsam-table-2",),
                 source="", metric=metric, direction=direction, comparisons=comparisons,
                 about=about or {"dataset": "cifar10", "model": "cnn"}, main_setting=MAIN,
                 seeds=Seeds(seeds, "the test's cells"))


def _cells(monkeypatch, values: dict[str, dict[int, float]], reasons: dict[str, str] | None = None):
    """Cells ``algorithm -> {seed: value}`` read by the engine instead of a store (run ids from
    the algorithm and seed; configs: the small scale's)."""
    reasons = reasons or {}

    def fake(claim, cell, scale, seeds, store):
        name = cell["algorithm"]
        got = values.get(name, {})
        return CellValues(dict(got), {s: f"{name}-{s}" for s in got}, [SMALL_CONFIG] if got or name not in reasons
                          else [], reasons.get(name, ""))

    monkeypatch.setattr(claims_module, "cell_values", fake)


def test_t_distribution_matches_the_printed_tables():
    # Student's t tables: t(0.975) = 12.706, 4.303, 2.776, 2.228 at df 1, 2, 4, 10; t(0.80) = 1.061 at df 2
    for df, q in ((1, 12.7062), (2, 4.3027), (4, 2.7764), (10, 2.2281), (30, 2.0423)):
        assert t_quantile(0.975, df) == pytest.approx(q, abs=1e-4)
    assert t_quantile(0.80, 2) == pytest.approx(1.0607, abs=1e-4)
    assert t_quantile(0.80, 4) == pytest.approx(0.9410, abs=1e-4)
    # one-sided 95 % (the equivalence test's 90 % interval): 2.920, 2.132, 1.812 at df 2, 4, 10
    for df, q in ((2, 2.920), (4, 2.132), (10, 1.812)):
        assert t_quantile(0.95, df) == pytest.approx(q, abs=1e-3)
    assert t_cdf(0.0, 3) == pytest.approx(0.5) and t_cdf(1.0, 1) == pytest.approx(0.75)  # Cauchy at df 1
    assert t_quantile(0.025, 4) == pytest.approx(-t_quantile(0.975, 4))


@pytest.mark.parametrize("df", [1, 2, 4, 10, 30])
def test_at_the_reported_mde_the_noncentral_t_power_is_the_stated_power(df):
    test = PairedTest(gap=0.0, sd=1.3, n=3, df=df)
    assert test.power(test.mde) == pytest.approx(0.80, abs=1e-3)
    assert test.power(0.0) == pytest.approx(0.05, abs=1e-9)  # no effect: found at the test's size
    # the shortcut t(0.975) + t(0.80) undershoots the power at few degrees of freedom
    shortcut = (t_quantile(0.975, df) + t_quantile(0.80, df)) * test.se
    if df <= 10:
        assert test.power(shortcut) < 0.80 and test.mde > shortcut


def test_mde_by_hand():
    # df 2 (three paired seeds): the shortcut's "80 %" is 77 % (5.3633 se); the exact MDE is 5.6535 se
    assert power_of_effect(4.302653 + 1.060660, 2) == pytest.approx(0.7663, abs=1e-3)
    assert detectable_noncentrality(2) == pytest.approx(5.6535, abs=1e-3)
    # large df: the normal closed form z(0.975) + z(0.80) = 1.95996 + 0.84162 (the lower tail ~ 1e-6)
    assert detectable_noncentrality(1e7) == pytest.approx(1.959964 + 0.841621, abs=1e-4)
    # simulated: three N(mde, 1) differences, the two-sided t test at df 2 rejects 80 % of the time
    rng = np.random.default_rng(0)
    diffs = rng.normal(detectable_noncentrality(2) / math.sqrt(3), 1.0, size=(200_000, 3))
    t = diffs.mean(axis=1) / (diffs.std(axis=1, ddof=1) / math.sqrt(3))
    assert float(np.mean(np.abs(t) > 4.302653)) == pytest.approx(0.80, abs=0.005)


def test_pooled_sd_is_the_degrees_of_freedom_weighted_variance():
    # variances 1 (df 2) and 4 (df 2) -> sqrt(2.5) on df 4; a group of one value adds nothing
    sd, df = pooled_sd([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [9.0]])
    assert sd == pytest.approx(math.sqrt(2.5)) and df == 4
    assert pooled_sd([[1.0]]) is None


def test_a_comparison_is_the_paired_difference_across_seeds(monkeypatch):
    # the cells vary by 10 points between seeds, their per-seed differences by 0.1: a paired test
    # decides (an unpaired one, sd ~ 10 per cell, could not)
    _cells(monkeypatch, {"A": {0: 61.0, 1: 71.2, 2: 81.1}, "B": {0: 60.0, 1: 70.0, 2: 80.0}})
    result = evaluate(_claim(), "small")
    (comparison,) = result["comparisons"]
    diffs = [1.0, 1.2, 1.1]
    sd = math.sqrt(sum((d - 1.1) ** 2 for d in diffs) / 2)  # 0.1
    assert comparison["seeds"] == [0, 1, 2] and comparison["gap"] == pytest.approx(1.1)
    assert comparison["sd"] == pytest.approx(sd, abs=1e-4) and comparison["df"] == 2
    assert comparison["sd_from"] == "paired seeds"
    assert comparison["threshold"] == pytest.approx(4.302653 * sd / math.sqrt(3), abs=1e-4)  # 0.248
    assert comparison["mde"] == pytest.approx(5.653489 * sd / math.sqrt(3), abs=1e-4)  # noncentral t, df 2
    # the reported (rounded) MDE is found with the stated 80 % power
    assert PairedTest(1.1, sd, 3, 2).power(comparison["mde"]) == pytest.approx(0.80, abs=1e-3)
    assert comparison["verdict"] == "holds" and comparison["units"] == "points"
    assert result["verdict"] == "holds"


@pytest.mark.parametrize("a, expected", [
    ({0: 70.0, 1: 71.0, 2: 72.5}, "inconclusive"),  # diffs 1, 1.5, 2.5: gap 1.667 < 4.303 x 0.764 / sqrt 3 = 1.897
    ({0: 70.0, 1: 70.7, 2: 71.4}, "holds"),         # diffs 1, 1.2, 1.4: gap 1.2 > 4.303 x 0.2 / sqrt 3 = 0.497
    ({0: 67.0, 1: 68.3, 2: 68.6}, "fails"),         # diffs -2, -1.2, -1.4: gap -1.533 < -1.036
])
def test_verdict_is_the_two_sided_95_t_interval_on_the_mean_difference(monkeypatch, a, expected):
    b = {0: 69.0, 1: 69.5, 2: 70.0}
    _cells(monkeypatch, {"A": a, "B": b})
    (comparison,) = evaluate(_claim(), "small")["comparisons"]
    diffs = [a[s] - b[s] for s in range(3)]
    mean = sum(diffs) / 3
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 2)
    assert comparison["gap"] == pytest.approx(mean, abs=1e-4)
    assert comparison["threshold"] == pytest.approx(4.302653 * sd / math.sqrt(3), abs=1e-4)
    assert comparison["verdict"] == expected


@pytest.mark.parametrize("gap", [5.0, 2.0, -3.0])
def test_fewer_than_three_seeds_are_indicative_never_decided_on_a_borrowed_spread(monkeypatch, gap):
    # the reference pairs' sd (1.0 on 4 df) once made +5 hold and -3 fail on one seed
    _cells(monkeypatch, {"A": {0: 65.0 + gap}, "B": {0: 65.0}})
    result = evaluate(_claim(), "small")
    (comparison,) = result["comparisons"]
    assert comparison["verdict"] == "indicative" and comparison["gap"] == pytest.approx(gap)
    assert comparison["sd"] is None and comparison["sd_from"] is None and comparison["threshold"] is None
    assert comparison["reason"] == "1 paired seed of 3 planned: the gap is indicative only"
    assert result["verdict"] == "inconclusive"
    assert result["summary"] == "1 of 1 comparison run: 1 indicative (fewer seeds than planned)"


def test_lower_is_better_flips_the_sign(monkeypatch):
    _cells(monkeypatch, {"A": {0: 30.0, 1: 31.0, 2: 29.0}, "B": {0: 90.0, 1: 91.2, 2: 88.8}})
    claim = _claim("lower", (Comparison({"algorithm": "A"}, {"algorithm": "B"}, 30.1, 93.5),))
    result = evaluate(claim, "small")
    assert result["verdict"] == "holds" and result["comparisons"][0]["gap"] == pytest.approx(-60.0)


def test_missing_runs_are_not_run(monkeypatch):
    _cells(monkeypatch, {"A": {0: 70.0}}, reasons={"B": "its runs are not in the store"})
    result = evaluate(_claim(), "small")
    assert result["verdict"] == "not_run" and result["reason"] == "its runs are not in the store"
    assert result["counts"]["run"] == 0 and result["summary"].startswith("0 of 1 comparison run")


def test_a_gap_whose_90_interval_lies_inside_the_margin_is_absent(monkeypatch):
    # diffs 0, 0.2, -0.1: mean 0.0333, sd 0.15275, se 0.08819; the 95 % half-width 4.3027 se = 0.3795
    # does not exclude 0; the 90 % interval 0.0333 +- 2.92 se = (-0.224, 0.291) lies inside (-1, +1)
    _cells(monkeypatch, {"A": {0: 70.0, 1: 70.2, 2: 69.9}, "B": {0: 70.0, 1: 70.0, 2: 70.0}})
    result = evaluate(_claim(), "small")
    (comparison,) = result["comparisons"]
    assert comparison["margin"] == 1.0 and "1 point of test accuracy" in comparison["margin_reason"]
    assert comparison["threshold"] == pytest.approx(0.3795, abs=1e-4)
    assert comparison["interval_90"] == pytest.approx([-0.2242, 0.2908], abs=1e-4)
    assert comparison["verdict"] == "absent" and result["verdict"] == "absent"
    assert result["counts"]["absent"] == 1 and result["summary"] == "1 of 1 comparison run: 1 absent"


@pytest.mark.parametrize("a, margin, expected", [
    # 95 % interval 1.2 +- 0.497 excludes 0; the 90 % one, 1.2 +- 2.92 x 0.1155 = (0.86, 1.54),
    # lies inside +-2 (significant, yet smaller than the claim's smallest effect) but not inside +-1
    ({0: 70.0, 1: 70.7, 2: 71.4}, 2.0, "negligible"),
    ({0: 70.0, 1: 70.7, 2: 71.4}, 1.0, "holds"),
    ({0: 70.0, 1: 71.0, 2: 72.5}, 2.0, "inconclusive"),  # 90 % interval 1.667 +- 2.92 x 0.441 = (0.38, 2.95)
])
def test_an_interval_that_excludes_0_holds_unless_it_lies_inside_the_margin(monkeypatch, a, margin, expected):
    _cells(monkeypatch, {"A": a, "B": {0: 69.0, 1: 69.5, 2: 70.0}})
    wide = Comparison({"algorithm": "A"}, {"algorithm": "B"}, 70.0, 65.0, margin=Margin(stand_in=margin, reason="r"))
    (comparison,) = evaluate(_claim(comparisons=(wide,)), "small")["comparisons"]
    assert comparison["verdict"] == expected and comparison["mde"] is not None
    assert comparison["margin"] == margin and comparison["margin_reason"] == "r"


@pytest.mark.parametrize("margin, expected", [(1.0, "inconclusive"), (1.00575, "inconclusive"),
                                              (1.0058, "absent")])
def test_absent_is_strict_at_the_margin(monkeypatch, margin, expected):
    # diffs 0.2, 0.5, 0.8: gap 0.5, sd 0.3, se 0.17321; 95 % half-width 0.7453 (not decided); the 90 %
    # interval's upper end is 0.5 + 2.919986 x 0.17321 = 1.00575
    test = PairedTest(gap=0.5, sd=0.3, n=3, df=2)
    assert test.gap + test.equivalence_half_width == pytest.approx(1.00575, abs=1e-5)
    _cells(monkeypatch, {"A": {0: 70.2, 1: 70.5, 2: 70.8}, "B": {0: 70.0, 1: 70.0, 2: 70.0}})
    stated = Comparison({"algorithm": "A"}, {"algorithm": "B"}, 70.0, 65.0,
                        margin=Margin(stand_in=margin, reason="stated"))
    (comparison,) = evaluate(_claim(comparisons=(stated,)), "small")["comparisons"]
    assert comparison["verdict"] == expected
    assert test.is_absent(test.gap + test.equivalence_half_width) is False  # on the boundary: not inside


def test_flcore_claims_prints_the_margin_beside_an_absent_comparison():
    from flcore.cli.reproduce import _comparison_text

    row = {"gap": 0.0333, "threshold": 0.3795, "verdict": "absent", "mde": 0.4953, "margin": 1.0}
    assert _comparison_text(row) == "+0.03 +- 0.38 (absent, 90 % interval inside +-1.00)"
    assert _comparison_text({**row, "verdict": "inconclusive"}) == "+0.03 +- 0.38 (inconclusive, MDE 0.50)"


def test_margins_at_the_paper_scale_and_from_claims_yaml():
    comparison = Comparison({"algorithm": "A"}, {"algorithm": "B"}, 70.0, 65.0)
    margin, reason = margin_of(_claim(comparisons=(comparison,)), comparison, "paper")
    assert margin == pytest.approx(2.5) and "0.5 of the published gap" in reason  # half of 70 - 65
    claim = _claim(comparisons=(comparison,))
    claim = Claim(**{**claim.__dict__, "margin": Margin(stand_in=0.3, paper_fraction=0.2, reason="why")})
    assert margin_of(claim, comparison, "small") == (0.3, "why")
    assert margin_of(claim, comparison, "paper")[0] == pytest.approx(1.0)  # 0.2 x 5
    own = Comparison({"algorithm": "A"}, {"algorithm": "B"}, 70.0, 65.0, margin=Margin(stand_in=0.7, reason="own"))
    assert margin_of(claim, own, "small") == (0.7, "own")
    # a unit without a stand-in margin (rounds) has none unless claims.yaml states one: never absent
    assert claims_module.METRICS["lesam_rounds"].unit == "rounds"
    margin, reason = margin_of(_claim("lower", (comparison,), metric="lesam_rounds"), comparison, "small")
    assert margin is None and reason == "no margin stated for rounds on the stand-in"


def test_margin_in_claims_yaml_needs_a_reason_and_positive_values():
    assert claim_registry._margin(None, "x") is None
    assert claim_registry._margin({"stand_in": 0.5, "reason": "r"}, "x") == Margin(0.5, None, "r")
    for bad in ({"stand_in": 0.5}, {"stand_in": -1, "reason": "r"}, {"stand_in": "1", "reason": "r"},
                {"width": 1, "reason": "r"}, 3.0):
        with pytest.raises(ValueError, match="margin"):
            claim_registry._margin(bad, "claims.yaml: claim x")


def _verdict_of(kinds: list[str]) -> str:
    """A claim's verdict from comparisons of these verdicts, each significant either way."""
    return claim_verdict([{"verdict": k, "p": 0.01, "p_tost": 0.01} for k in kinds])[0]


def test_a_claim_with_an_absent_comparison_does_not_hold_and_is_not_a_fail():
    assert _verdict_of(["absent", "negligible"]) == "absent"
    assert _verdict_of(["holds", "absent"]) == "inconclusive"  # neither every setting holds nor none does
    assert _verdict_of(["absent", "inconclusive"]) == "inconclusive"
    assert _verdict_of(["absent", "fails"]) == "fails"
    assert _verdict_of(["absent", "at_chance"]) == "absent"  # a stand-in that did not learn is no evidence
    counts = {"holds": 1, "absent": 1, "run": 2, "distinct": 2, "listed": 2}
    assert counts_text(counts) == "2 of 2 comparisons run: 1 hold, 1 absent"


def test_two_cells_at_chance_are_not_testable_on_the_stand_in(monkeypatch):
    # MNIST-1D's chance level is 10 %, a seed learned from 15 %: neither cell learned
    _cells(monkeypatch, {"A": {0: 10.0, 1: 11.0, 2: 12.0}, "B": {0: 9.9, 1: 10.0, 2: 10.1}})
    result = evaluate(_claim(), "small")
    assert result["verdict"] == "at_chance" and result["comparisons"][0]["verdict"] == "at_chance"
    assert "A and B did not learn" in result["comparisons"][0]["reason"]
    _cells(monkeypatch, {"A": {0: 40.0, 1: 41.0, 2: 42.0}, "B": {0: 30.0, 1: 30.5, 2: 31.0}})  # both learn
    assert evaluate(_claim(), "small")["verdict"] == "holds"


def test_each_distinct_pair_of_runs_counts_once(monkeypatch):
    # CIFAR-10 and CIFAR-100 at alpha = 0 are the same runs below the paper scale
    _cells(monkeypatch, {"A": {0: 70.0, 1: 70.7, 2: 71.4}, "B": {0: 69.0, 1: 69.5, 2: 70.0},
                         "C": {0: 69.0, 1: 70.0, 2: 71.0}})
    listed = (Comparison({"algorithm": "A"}, {"algorithm": "B"}, 70.0, 65.0),
              Comparison({"algorithm": "A"}, {"algorithm": "B"}, 60.0, 55.0),
              Comparison({"algorithm": "A"}, {"algorithm": "C"}, 70.0, 69.0),
              Comparison({"algorithm": "A"}, {"algorithm": "D"}, 70.0, 69.0))
    result = evaluate(_claim(comparisons=listed), "small")
    assert [c["listed"] for c in result["comparisons"]] == [[0, 1], [2], [3]]
    counts = result["counts"]
    assert (counts["listed"], counts["distinct"], counts["run"]) == (4, 3, 2)
    assert counts["holds"] == 1 and counts["inconclusive"] == 1 and counts["not_run"] == 1
    assert result["summary"] == ("2 of 3 comparisons run: 1 hold, 1 inconclusive; 1 not run at this scale "
                                 "(4 listed, 1 the same runs as another)")
    assert result["verdict"] == "inconclusive"
    run_pairs = [(tuple(c["run_ids"]["better"]), tuple(c["run_ids"]["worse"])) for c in result["comparisons"]]
    assert len(set(run_pairs)) == len(run_pairs)


def test_a_stand_in_never_decides_a_claim_about_what_it_stands_in_for(monkeypatch):
    _cells(monkeypatch, {"A": {0: 80.0, 1: 81.0, 2: 82.0}, "B": {0: 60.0, 1: 60.5, 2: 61.5}})
    for about in ({"dataset": "fmnist", "model": "fmnist_cnn"}, {"dataset": "cifar10", "model": "resnet18gn"}):
        result = evaluate(_claim(about=about), "small")
        assert result["verdict"] == "not_testable" and result["comparisons"][0]["gap"] is None
        assert "stand in for cifar10/cifar100 with cnn only" in result["reason"]
    # the paper's main setting is what MNIST-1D stands in for: decided
    assert evaluate(_claim(about={"dataset": "cifar100", "model": "cnn"}), "small")["verdict"] == "holds"
    # at the paper scale the runs must train what the claim is about
    result = evaluate(_claim(about={"dataset": "cifar10", "model": "cnn"}), "paper")
    assert result["verdict"] == "not_testable" and "runs mnist1d with mnist1d_cnn" in result["reason"]


def test_by_construction_is_shown_and_not_counted_as_evidence(monkeypatch):
    _cells(monkeypatch, {"A": {0: 1.0}, "B": {0: 2.0}})
    claim = _claim("lower", metric="backprops_per_step",
                   comparisons=(Comparison({"algorithm": "A"}, {"algorithm": "B"}, 1.0, 2.0),))
    result = evaluate(claim, "small")
    assert result["verdict"] == "by_construction" and result["comparisons"][0]["verdict"] == "by_construction"
    assert _verdict_of(["by_construction", "holds"]) == "holds"
    assert _verdict_of(["by_construction", "inconclusive"]) == "inconclusive"


@pytest.mark.parametrize("verdicts, expected", [
    (["holds", "holds", "not_run"], "holds"),
    (["holds", "inconclusive"], "inconclusive"),
    (["holds", "fails", "at_chance"], "mixed"),
    (["fails", "at_chance"], "fails"),
    (["holds", "at_chance"], "holds"),
    (["at_chance", "not_run"], "at_chance"),
    (["cannot_decide", "holds"], "inconclusive"),
    (["not_testable", "not_testable"], "not_testable"),
    (["not_testable", "not_run"], "not_run"),
    ([], "not_run"),
])
def test_a_claims_verdict_aggregates_its_distinct_comparisons(verdicts, expected):
    assert _verdict_of(verdicts) == expected


def test_reference_spread_is_the_pooled_sd_of_paired_differences(monkeypatch):
    from flcore.reproduction import runner

    # FedSAM - FedAvg at two alphas, three seeds each: differences (1, 2, 3) and (2, 4, 6)
    # -> variances 1 and 4 -> pooled sqrt(2.5) on 4 degrees of freedom
    fedsam = {0.0: (31.0, 42.0, 53.0), 100.0: (62.0, 74.0, 86.0)}
    fedavg = {0.0: (30.0, 40.0, 50.0), 100.0: (60.0, 70.0, 80.0)}

    def frame(specs, store=None):
        rows = []
        for spec in specs:
            table = fedsam if spec.labels["algorithm"] == "FedSAM" else fedavg
            rows.append({"status": "finished", "mean_last_100": table[spec.labels["alpha"]][spec.labels["seed"]] / 100})
        return pd.DataFrame(rows)

    monkeypatch.setattr(runner, "results_frame", frame)
    spread = reference_spread("small")
    assert spread["sd"] == pytest.approx(math.sqrt(2.5)) and spread["df"] == 4
    assert spread["pairs"] == 2 and spread["runs"] == 12


def test_claim_cells_run_their_planned_seeds_at_small_batched_per_configuration():
    from flcore.planning.planner import plan_groups

    specs = claim_specs("small", ["fedsam-table-2"])
    seeds: dict[str, set] = {}
    for spec in specs:
        values = {k: v for k, v in spec.resolve().canonical().items() if k != "seed"}
        seeds.setdefault(repr(sorted(values.items())), set()).add(spec.resolve().seed)
    # every cell trains seeds 0 .. n - 1, n the seeds the comparisons reading it plan (3 to 6)
    assert seeds and all(s == set(range(len(s))) and 3 <= len(s) <= 6 for s in seeds.values())
    # the seeds of one configuration share the planner's batch key, so with one worker they
    # train as one group (more workers cut a set of batchable runs for parallelism)
    from flcore.sim.multi_run import group_key

    by_config: dict[str, set] = {}
    for spec in specs:
        cfg = spec.resolve()
        by_config.setdefault(repr(sorted((k, repr(v)) for k, v in cfg.canonical().items() if k != "seed")),
                             set()).add(group_key(cfg))
    assert all(len(keys) == 1 for keys in by_config.values())
    groups_of: dict[str, set] = {}
    for index, group in enumerate(plan_groups(specs, device="cpu", workers=1)):
        for config in group.configs:
            key = repr(sorted((k, repr(v)) for k, v in resolve_config(config).canonical().items() if k != "seed"))
            groups_of.setdefault(key, set()).add(index)
    assert len(groups_of) == len(seeds) and all(len(g) == 1 for g in groups_of.values())
    # a claim that keeps one seed adds none, nor does a scale with one claim seed
    one_seed = [c for c in all_claims() if c.one_seed]
    assert one_seed and claim_specs("smoke") == []
    assert all(c.metric == "accuracy" for c in one_seed)


def test_a_flatness_comparisons_two_cells_have_the_same_seeds_in_the_book():
    # a flatness metric analyses each stored model, so its claims train no seeds of their own; but
    # where one cell's seeds 1 and 2 are trained for an accuracy claim, the other cell gets them
    # too: otherwise the verdict reads seed 0 alone (the seeds both ran) while the page's table
    # prints the first cell's three-seed mean
    from flcore.reproduction.artifacts import runs_for

    scale = "small"
    seeds = claims_module.CLAIM_SEEDS[scale]
    book = {s.run_id() for s in runs_for(artifact_ids(), scale) + claim_specs(scale) if s.available}
    both, checked = 0, 0
    for claim in all_claims():
        metric = METRICS.get(claim.metric)
        if metric is None or not metric.flatness:
            continue
        for comparison in claim.comparisons:
            cells = [claims_module.cell_specs(claim, cell, scale, seeds)[0] for cell in comparison.cells_at(scale)]
            if not all(cells):
                continue
            trained = [{claims_module.seed_of(s) for s in specs if s.run_id() in book} for specs in cells]
            assert trained[0] == trained[1], (claim.id, comparison)
            checked += 1
            both += trained[0] == set(seeds)
    # FedGloSS's FedGAMMA and FedGF's alpha = 1k cells are the partners that gained seeds
    assert checked >= 20 and both >= 15


def test_every_claim_says_what_it_is_about_and_fmnist_and_resnet_claims_are_not_testable_below_paper():
    for claim in all_claims():
        assert {"dataset", "model"} <= set(claim.about), claim.id
    by_id = {c.id: c for c in all_claims()}
    assert by_id["fedima-ima-improves-all-methods-fmnist"].about["dataset"] == "fmnist"
    assert by_id["fedima-ima-improves-resnet18-cifar10"].about["model"] == "resnet18gn"


def test_reproduce_list_json_has_one_object_per_artifact(tmp_path):
    out = subprocess.run([sys.executable, "-m", "flcore", "reproduce", "--list", "--json", "--root", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 110
    for row in rows:
        assert {"id", "paper", "kind", "class", "status", "scales_built", "claims"} <= set(row)
        assert row["kind"] in ("table", "figure") and row["paper"] in PAPERS
    regenerable = {r["id"] for r in rows if r["class"] not in ("heavy", "schematic")}
    assert {r["id"] for r in rows if r["status"] == "regenerated"} == set(artifact_ids()) & regenerable
    # a heavy or schematic artifact with a page is listed, not regenerated
    assert all(r["status"] == "not_regenerable" for r in rows if r["id"] not in regenerable)


def test_claims_cli_reports_every_claim_and_refuses_an_unknown_paper(tmp_path):
    out = subprocess.run([sys.executable, "-m", "flcore", "claims", "--scale", "small", "--json", "--store",
                          str(tmp_path / "empty")], capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in rows] == [c.id for c in all_claims()]
    vocabulary = set(claims_module.VERDICTS)
    for row in rows:
        assert {"id", "paper", "text", "artifacts", "verdict", "counts", "summary", "units", "comparisons"} <= set(row)
        # an empty store decides nothing
        assert row["verdict"] in vocabulary and row["verdict"] not in claims_module.DECIDED
        assert row["counts"]["distinct"] == len(row["comparisons"]) >= 1
        for comparison in row["comparisons"]:
            assert {"cells", "seeds", "gap", "sd", "threshold", "mde", "units", "verdict"} <= set(comparison)
            assert comparison["verdict"] in vocabulary
    by_id = {r["id"]: r for r in rows}
    assert by_id["fedima-ima-improves-resnet18-cifar10"]["verdict"] == "not_testable"
    assert by_id["fedlesam-one-backprop-per-step"]["verdict"] == "by_construction"
    bad = subprocess.run([sys.executable, "-m", "flcore", "claims", "--paper", "fedfoo"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "fedsam fedgloss" not in bad.stderr and "allowed values" in bad.stderr


def test_inventory_status_follows_the_registry():
    for entry in inventory():
        assert status(entry) == ("not_regenerable" if entry.cls in ("heavy", "schematic")
                                 else "regenerated" if entry.id in artifact_ids() else "pending")


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


def test_timing_claims_read_their_planned_timed_runs_each_trained_alone():
    from flcore.planning.planner import plan_groups
    from flcore.reproduction.claims import cell_specs, comparison_seeds, get_claim

    claim = get_claim("fedlesam-faster-per-round-than-sam-methods")
    specs = claim_specs("small", ["fedlesam-table-8"])
    assert specs and all(s.config.get("timed") for s in specs)
    seeds: dict[str, set] = {}
    for spec in specs:
        seeds.setdefault(spec.labels["algorithm"], set()).add(spec.resolve().seed)
    reads = comparison_seeds(claim, 0, "small")
    assert len(reads) >= 3 and all(s == set(reads) for s in seeds.values())
    assert all(group.size == 1 for group in plan_groups(specs, device="cpu", workers=2))  # never batched
    cell, _ = cell_specs(claim, claim.comparisons[0].better, "small", reads)
    assert len(cell) == len(reads) and all(s.config.get("timed") for s in cell)


def test_every_run_a_claims_metric_reads_is_trained_with_the_claims_seeds():
    """A metric that reads a run beside its cell's (FedLESAM's efficiency ratios read
    FedAvg's run on the same setting and seed) gets that run at every claim seed; without
    it the small book's notebooks asked the store for a FedAvg run never trained."""
    from flcore.reproduction.claims import METRICS, all_claims, cell_specs

    trained = {s.run_id() for s in claim_specs("small")}
    companions = []
    for claim in all_claims():
        metric = METRICS.get(claim.metric)
        if metric is None or metric.companions is None or claim.one_seed:
            continue
        for comparison in claim.comparisons:
            for cell in (comparison.better, comparison.worse):
                for spec in cell_specs(claim, cell, "small", (0, 1, 2))[0]:
                    if spec.available:
                        companions += metric.companions(spec)
    fedavg_seeds = {c.resolve().seed for c in companions}
    assert companions and fedavg_seeds == {0, 1, 2}
    assert {c.run_id() for c in companions} <= trained


def _page_result(verdict, metric="accuracy", paper="fedsam"):
    return {"id": f"x-{verdict}", "paper": paper, "text": f"claim {verdict}", "artifacts": ["fedsam-table-2"],
            "verdict": verdict, "metric": metric, "units": "points", "reason": None,
            "summary": "1 of 1 comparison run", "comparisons": []}


def test_claims_and_landing_pages_open_with_the_counts_and_what_the_scale_decides(tmp_path):
    from flcore.site.pages import claims_page, paper_page

    results = [_page_result("holds"), _page_result("inconclusive"), _page_result("not_testable"),
               _page_result("by_construction", metric="backprops_per_step")]
    page = claims_page(results, tmp_path, "small")
    assert page.startswith('# Claims\n\n<div class="verdict-map"')  # the map first, then the counts
    lines = page.split("\n")
    opening = lines[lines.index("</div>") + 2]
    assert opening.startswith("**4 claims at the `small` scale: 1 hold, 1 inconclusive, 1 by construction, "
                              "1 not testable here.**")
    assert "Of the 3 accuracy claims this scale runs 2 and decides 1 (holds, fails or absent)" in opening
    assert "No comparison is absent at this scale." in page
    assert "No comparison at this scale has every seed's evaluations in the store." in page
    landing = paper_page("fedsam", [], results, tmp_path, "small")
    # the first screen: the verdict map, the paper, then the stand-in, then the counts
    lines = landing.split("\n")
    after_map = lines.index("</div>") + 1
    assert lines[after_map + 3].startswith("**Built at the `small` scale on MNIST-1D**, which stands in for the "
                                           "paper's CIFAR-10 and CIFAR-100 with its cnn")
    assert lines[after_map + 5].startswith("**4 claims at the `small` scale:")


def test_the_claims_page_works_one_absent_comparison_through(tmp_path):
    from flcore.site.pages import claims_page

    absent = {**_page_result("absent"), "comparisons": [
        {"cells": {"better": {"algorithm": "A"}, "worse": {"algorithm": "B"}}, "published": {"gap": 5.0},
         "verdict": "absent", "gap": 0.0333, "units": "points", "seeds": [0, 1, 2], "sd": 0.1528,
         "sd_from": "paired seeds", "threshold": 0.3795, "mde": 0.4953, "reason": None, "margin": 1.0,
         "margin_reason": "1 point", "interval_90": [-0.2242, 0.2908]}]}
    page = claims_page([_page_result("holds"), absent], tmp_path, "small")
    assert "**Absent, not only inconclusive.**" in page
    assert ("For example, in *claim absent* (x-absent) the gap is +0.03 points over n = 3 seeds (sd 0.15): its 95 % "
            "half-width 0.38 does not exclude 0, and its 90 % interval [-0.22, +0.29] lies inside the margins "
            "[-1.00, +1.00], so the effect is absent.") in page
    assert "1 hold, 1 absent" in page


def test_coverage_says_regenerated_on_the_stand_in_with_each_pages_verdicts(tmp_path):
    from flcore.site.pages import coverage_page

    rows = coverage({"artifacts": {"fedsam-table-2": {"built": {"smoke": {}, "small": {}}},
                                   "fedgf-table-1": {"built": {"small": {}, "paper": {}}}}})
    table2 = next(r for r in rows if r["id"] == "fedsam-table-2")
    results = [{**_page_result("holds"), "id": table2["claims"][0]},
               {**_page_result("inconclusive"), "id": table2["claims"][1]}]
    page = coverage_page(rows, tmp_path, "small", results)
    line = next(line for line in page.splitlines() if line.startswith("| Table 2 | Accuracy of FedAvg"))
    assert "| regenerated on MNIST-1D (smoke, small) |" in line and line.endswith("| 1 hold, 1 inconclusive |")
    fedgf = next(line for line in page.splitlines() if "regenerated on MNIST-1D (small); on the paper's data" in line)
    assert fedgf.startswith("| Table 1 |")
    assert "reproduced" not in page
    assert "at the small scale on **MNIST-1D**, which stands in for the papers' data" in page
