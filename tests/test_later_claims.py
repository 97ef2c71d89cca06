"""Claims made by a later source against one of the papers' (``by`` and ``against`` in
claims.yaml): the schema's checks, one line each; the three later claims of the registry
decided through the same paired rule on the same runs as the claims they contest (a fake
store whose accuracies are set by hand); ``flcore claims --json``'s ``by``; the Claims and
landing pages showing both verdicts side by side."""
from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from flcore.reproduction import claim_registry, runner
from flcore.reproduction import claims as claims_module
from flcore.reproduction.claims import (
    RUN,
    By,
    Claim,
    Comparison,
    all_claims,
    check_against,
    evaluate_claims,
    get_claim,
)

ROOT = Path(__file__).resolve().parents[1]
LATER = ("fedsam-later-fedswa-sam-worse-than-fedavg", "fedlesam-later-reproduction-fedsam-beats-fedlesam",
         "fedlesam-later-fl-simulator-fedsmoo-no-better", "fedlesam-later-fedgmt-beats-fedsmoo-and-fedsam")
#: The later claims about ResNet-18's protocol, which the stand-in's CNN cannot speak to.
ABOUT_RESNET = LATER[1:3]
T975_DF2 = 4.302653  # t(0.975, 2)
T975_DF5 = 2.570582  # t(0.975, 5)
GOOD_BY = {"citation": "Someone et al. 2030", "quote": "B beats A"}


# --------------------------------------------------------------------------- the schema

@pytest.mark.parametrize("bad", [
    "Someone et al. 2030",  # not a mapping
    {"citation": "Someone et al. 2030"},  # no quote
    {"citation": "", "quote": "B beats A"},  # empty citation
    {**GOOD_BY, "page": 3},  # a field the schema does not have
    {**GOOD_BY, "url": "http://example.org"},  # not https
    {**GOOD_BY, "quote": 12},  # not a string
])
def test_a_bad_by_is_one_line_naming_the_claim_and_the_field(bad):
    with pytest.raises(ValueError) as error:
        claim_registry._by(bad, "claims.yaml: claim x-later")
    message = str(error.value)
    assert "\n" not in message and message.startswith("claims.yaml: claim x-later: by")
    assert "citation" in message or "quote" in message or "url" in message


def test_a_good_by_is_read_with_its_url_optional():
    assert claim_registry._by(GOOD_BY, "w") == By("Someone et al. 2030", "B beats A", "")
    assert claim_registry._by({**GOOD_BY, "url": "https://example.org/1"}, "w").url == "https://example.org/1"
    assert claim_registry._by(None, "w") is None


def _write(tmp_path: Path, claim: str) -> Path:
    path = tmp_path / "claims.yaml"
    path.write_text("paper: fedsam\nmain_setting: {dataset: [cifar10, cifar100], model: cnn}\nclaims:\n" + claim)
    return path


CLAIM = """  - id: x-later
    text: "B beats A"
    artifacts: [fedsam-table-2]
    about: {dataset: cifar10, model: cnn}
    comparisons:
      - better: {algorithm: FedAvg E=1}
        worse: {algorithm: FedSAM}
"""


def test_parse_reads_a_later_claim_whose_source_prints_no_numbers(tmp_path):
    claim, = claim_registry.parse_claims(_write(tmp_path, CLAIM + "    by: {citation: Someone, quote: B beats A}\n"
                                                 "    against: fedsam-sam-improves-fedavg\n"))
    assert claim.by == By("Someone", "B beats A") and claim.against == "fedsam-sam-improves-fedavg"
    assert claim.quote == "B beats A"  # the later source's words
    assert claim.comparisons[0].published_gap is None


@pytest.mark.parametrize("extra, expected", [
    ("    by: {citation: Someone}\n", "by quote must be a non-empty string"),
    ("    against: fedsam-sam-improves-fedavg\n", "only a claim made by a later source (by) contests one"),
    ("", "a comparison needs published better and worse numbers"),  # the paper's own claim must print them
])
def test_parse_rejects_with_one_line(tmp_path, extra, expected):
    with pytest.raises(ValueError) as error:
        claim_registry.parse_claims(_write(tmp_path, CLAIM + extra))
    assert "\n" not in str(error.value) and expected in str(error.value)
    assert str(error.value).startswith("claims.yaml: claim x-later")


def test_a_later_claim_against_no_papers_claim_is_refused():
    def claim(claim_id, by=None, against=""):
        return Claim(claim_id, "fedsam", "t", "q", ("fedsam-table-2",), "", "accuracy", "higher", (),
                     by=by, against=against)

    check_against([claim("a"), claim("b", By("c", "q"), "a")])
    for against in ("missing", "b"):  # unknown, or itself a later claim
        with pytest.raises(ValueError, match=r"later claims against no paper's claim of the registry: x \(against"):
            check_against([claim("a"), claim("b", By("c", "q"), "a"), claim("x", By("c", "q"), against)])


# --------------------------------------------------------------------------- the registry's later claims

def test_the_later_claims_are_registered_with_their_sources():
    later = {c.id: c for c in all_claims() if c.by is not None}
    assert set(later) == set(LATER)
    assert later["fedsam-later-fedswa-sam-worse-than-fedavg"].against == "fedsam-sam-improves-fedavg"
    assert later["fedsam-later-fedswa-sam-worse-than-fedavg"].paper == "fedsam"
    assert {later[i].paper for i in LATER[1:]} == {"fedlesam"}
    assert "MediaBrain-SJTU/FedLESAM" in later["fedlesam-later-reproduction-fedsam-beats-fedlesam"].by.citation
    assert "woodenchild95/FL-Simulator" in later["fedlesam-later-fl-simulator-fedsmoo-no-better"].by.citation
    gmt = later["fedlesam-later-fedgmt-beats-fedsmoo-and-fedsam"]
    assert "harrylee999/FL-SAM" in gmt.by.citation and gmt.against == ""
    assert [(c.published_better, c.published_worse) for c in gmt.comparisons] == [(75.89, 75.22), (75.89, 64.38)]
    # the numbers a later claim prints are the ones its source's quote gives
    reproduction = later["fedlesam-later-reproduction-fedsam-beats-fedlesam"]
    for value in (reproduction.comparisons[0].published_better, reproduction.comparisons[0].published_worse):
        assert f"{value:.2f}%" in reproduction.by.quote


# --------------------------------------------------------------------------- verdicts through the same rule

#: Hand-set accuracies (%) of the cells the later claims read, per seed; other runs get a
#: fixed value drawn from their run id.
HAND = {("fedavg", 0.0): (60.0, 62.0, 64.0, 61.0, 63.0, 60.5), ("fedsam", 0.0): (55.0, 58.0, 57.0, 57.5, 56.0, 55.5)}


def _store(monkeypatch):
    def frame(specs, store=None):
        rows = []
        for spec in specs:
            key = (spec.config["method"], spec.config.get("alpha"))
            seed = int(spec.labels.get("seed", 0))
            if key in HAND and spec.config["dataset"] == "mnist1d" and spec.config.get("per_round") == 5:
                value = HAND[key][seed] / 100
            else:
                value = 0.2 + 0.6 * hashlib.sha256(spec.resolve().run_id().encode()).digest()[0] / 255
            rows.append({"status": "finished", "mean_last_100": value})
        return pd.DataFrame(rows)

    monkeypatch.setattr(runner, "results_frame", frame)


@pytest.mark.parametrize("scale", ["smoke", "small"])
def test_every_later_claim_gets_a_verdict_whose_by_is_not_its_paper(monkeypatch, scale):
    _store(monkeypatch)
    results = {r["id"]: r for r in evaluate_claims(scale)}
    for claim_id in LATER:
        result = results[claim_id]
        if claim_id in ABOUT_RESNET:  # about ResNet-18's protocol: the stand-in's CNN cannot speak to it
            assert result["verdict"] == "not_testable", (claim_id, result["verdict"])
            assert result["reason"].startswith("needs a residual network (ResNet) (a claim about one protocol")
            assert result["reason"].endswith(f"the {scale} scale runs mnist1d with mnist1d_cnn")
        else:
            assert result["verdict"] in RUN, (claim_id, result["verdict"], result["reason"])
        assert result["by"] != result["paper"] and result["by"] == result["later_source"]["citation"]
    assert all(r["by"] == r["paper"] and r["later_source"] is None for i, r in results.items() if i not in LATER)


@pytest.mark.parametrize("scale", ["smoke", "small"])
def test_fedswas_claim_reads_the_contested_claims_runs_the_other_way(monkeypatch, scale):
    _store(monkeypatch)
    results = {r["id"]: r for r in evaluate_claims(scale)}
    later, contested = results["fedsam-later-fedswa-sam-worse-than-fedavg"], results["fedsam-sam-improves-fedavg"]
    ran = [c for c in later["comparisons"] if c["verdict"] in RUN]
    assert ran and all("counted_in" not in c for c in later["comparisons"])  # never "counted in another claim"
    mirror = {"holds": "fails", "fails": "holds"}
    for comparison in ran:
        theirs = next(c for c in contested["comparisons"] if c["run_ids"]["worse"] == comparison["run_ids"]["better"])
        assert theirs["run_ids"]["better"] == comparison["run_ids"]["worse"]
        assert comparison["gap"] == pytest.approx(-theirs["gap"]) and comparison["threshold"] == theirs["threshold"]
        assert comparison["p"] == pytest.approx(theirs["p"])  # the same two-sided test
        if comparison["verdict"] != mirror.get(theirs["verdict"], theirs["verdict"]):
            # the rules are not symmetric: a fails must survive Holm within its claim, and a
            # win over a cell at chance is no support; the one left undecided says which
            undecided = comparison if comparison["verdict"] == "inconclusive" else theirs
            assert undecided["verdict"] == "inconclusive", (comparison, theirs)
            assert "Holm" in undecided["reason"] or "chance" in undecided["reason"], undecided["reason"]


def test_at_small_the_fedswa_claim_holds_by_the_hand_computed_paired_interval(monkeypatch):
    _store(monkeypatch)
    result = next(r for r in evaluate_claims("small", papers=["fedsam"]) if r["id"] == LATER[0])
    alpha0 = next(c for c in result["comparisons"] if c["cells"]["better"]["alpha"] == 0.0)
    diffs = [a - b for a, b in zip(HAND[("fedavg", 0.0)], HAND[("fedsam", 0.0)])]  # 5, 4, 7, 3.5, 7, 5
    mean = sum(diffs) / 6  # 5.25
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 5)  # sqrt(10.875 / 5) = 1.4748
    assert alpha0["seeds"] == [0, 1, 2, 3, 4, 5] and alpha0["gap"] == pytest.approx(mean, abs=1e-4)
    assert alpha0["threshold"] == pytest.approx(T975_DF5 * sd / math.sqrt(6), abs=1e-3)  # 1.55 < 5.25
    assert alpha0["verdict"] == "holds"


def test_the_fl_simulator_claim_is_not_testable_on_the_stand_in_s_cnn():
    """Its cells map to the CIFAR-10 runs below the paper scale, but those train the stand-in's
    CNN, and the claim needs a ResNet (``needs: [resnet]``); at the paper scale it is testable."""
    claim = get_claim("fedlesam-later-fl-simulator-fedsmoo-no-better")
    comparison = claim.comparisons[0]
    assert claim.needs == ("resnet",)
    assert comparison.cells_at("paper") == (comparison.better, comparison.worse)
    better, worse = comparison.cells_at("small")
    assert better["dataset"] == worse["dataset"] == "CIFAR-10" and comparison.better["dataset"] == "CIFAR-100"
    specs = [claims_module.cell_specs(claim, cell, "small", (0, 1, 2))[0] for cell in (better, worse)]
    assert [len(s) for s in specs] == [3, 3]
    reason = claims_module.untestable_reason(claim, comparison, [s.resolve() for c in specs for s in c], "small")
    assert reason.startswith("needs a residual network (ResNet) (a claim about one protocol: its run of FL-Simulator")
    paper = [claims_module.cell_specs(claim, cell, "paper", (0,))[0] for cell in comparison.cells_at("paper")]
    assert claims_module.untestable_reason(claim, comparison, [s.resolve() for c in paper for s in c], "paper") == ""


def test_a_comparison_without_published_numbers_has_no_paper_scale_margin():
    comparison = Comparison({"algorithm": "A"}, {"algorithm": "B"}, None, None)
    claim = Claim("x", "fedsam", "t", "q", ("fedsam-table-2",), "", "accuracy", "higher", (comparison,),
                  by=By("c", "q"))
    margin, reason = claims_module.margin_of(claim, comparison, "paper")
    assert margin is None and "prints no numbers" in reason
    assert claims_module.margin_of(claim, comparison, "small")[0] == 1.0  # the stand-in's margin still applies


# --------------------------------------------------------------------------- the command line and the pages

def test_flcore_claims_json_gives_every_claims_by(tmp_path):
    result = subprocess.run([sys.executable, "-m", "flcore", "claims", "--scale", "smoke", "--store",
                             str(tmp_path / "store"), "--json"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == len(all_claims()) and all("by" in r and "later_source" in r for r in rows)
    later = [r for r in rows if r["by"] != r["paper"]]
    assert sorted(r["id"] for r in later) == sorted(LATER)


def test_the_claims_and_landing_pages_show_a_later_claim_beside_the_one_it_contests(monkeypatch, tmp_path):
    from flcore.reproduction.coverage import coverage
    from flcore.site.pages import claims_page, paper_page

    _store(monkeypatch)
    results = evaluate_claims("small")
    by_id = {r["id"]: r for r in results}
    later, contested = by_id["fedsam-later-fedswa-sam-worse-than-fedavg"], by_id["fedsam-sam-improves-fedavg"]
    verdict_text = claims_module.VERDICT_TEXT
    from flcore.report.escaping import page_text
    row = (f"| {page_text(later['text'])} | {page_text(later['later_source']['citation'])} "
           f"| **{verdict_text[later['verdict']]}** "
           f"| {page_text(contested['text'])} (fedsam-sam-improves-fedavg) "
           f"| **{verdict_text[contested['verdict']]}** |")
    landing = paper_page("fedsam", coverage({}), [r for r in results if r["paper"] == "fedsam"], tmp_path, "small")
    claims = claims_page(results, tmp_path, "small", None)
    for page in (landing, claims):
        assert row in page and "Later claims against it" in page
        assert page_text(later["later_source"]["quote"], limit=2000) in page
    # the landing page's summary counts the paper's own claims
    own = sum(r["paper"] == "fedsam" and r["later_source"] is None for r in results)
    assert f"**{own} claims at the `small` scale" in landing
    # FedLESAM's later claims contest no claim of the registry: said so in the table
    lesam = paper_page("fedlesam", coverage({}), [r for r in results if r["paper"] == "fedlesam"], tmp_path, "small")
    assert lesam.count("none in the registry") == 3


def test_a_later_claim_is_shown_on_an_artifact_page_but_not_counted_in_its_verdict():
    from flcore.report.page import page_verdict, verdict_box

    source = {"citation": "Someone", "quote": "B beats A", "url": None}
    own = {"id": "x", "text": "A beats B", "verdict": "holds", "reason": None}
    later = {"id": "y", "text": "B beats A", "verdict": "fails", "reason": None, "later_source": source}
    assert page_verdict([own, later]) == "holds" and page_verdict([later]) == "not testable"
    box = verdict_box([own, later], "small")
    assert "Verdicts at the small scale: 1 hold\n" in box and "Of the 1 claim this page checks: 1 hold" in box
    assert "and 1 later claim by other sources against the paper: 1 fail." in box  # shown, counted apart
