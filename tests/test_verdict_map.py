"""The verdict map (flcore.site.verdict_map): tallies apart per group, one cell per claim
with its verdict word, colour, effect and link, escaped; and the anchors it links to."""
from __future__ import annotations

from flcore.report.page import claims_markdown
from flcore.site.verdict_map import claim_anchor, effect_text, short_name, verdict_map


def _comparison(verdict, gap=None, interval=None, published=1.0, text=None):
    return {"cells": {"better": {"algorithm": "A"}, "worse": {"algorithm": "B"}}, "verdict": verdict,
            "verdict_text": text or verdict, "gap": gap, "interval_95": interval, "published": {"gap": published},
            "seeds": [0, 1, 2] if gap is not None else [], "threshold": None, "mde": None, "sd": None}


def _result(claim_id, paper, verdict, comparisons, later=False, text="A <beats> B"):
    return {"id": claim_id, "paper": paper, "text": text, "verdict": verdict, "verdict_text": verdict,
            "comparisons": comparisons, "later_source": {"citation": "x", "quote": "q"} if later else None,
            "summary": "s", "artifacts": [], "units": "points", "reason": None}


RESULTS = [
    _result("fedsam-one", "fedsam", "holds", [_comparison("holds", 1.25, [0.5, 2.0], 3.0)]),
    _result("fedsam-two", "fedsam", "inconclusive",
            [_comparison("holds", 1.0, [0.1, 1.9]), _comparison("inconclusive", 0.2, [-1, 1], text="not settled"),
             _comparison("inconclusive", 0.1, [-1, 1])]),
    _result("fedsam-later-x", "fedsam", "fails", [_comparison("fails", -2.0, [-3.0, -1.0], None)], later=True),
    _result("fedgf-three", "fedgf", "not_testable", [_comparison("not_testable")]),
]


def test_effect_text_by_hand():
    assert effect_text(RESULTS[0]) == "+1.25 [+0.5, +2.0] · paper +3.00"
    assert effect_text(RESULTS[1]) == "1 holds, 1 not settled, 1 inconclusive"
    assert effect_text(RESULTS[2]) == "-2.00 [-3.0, -1.0]"  # a later source prints no gap
    assert effect_text(RESULTS[3]) == ""
    assert short_name(RESULTS[0]) == "one" and short_name({"id": "other", "paper": "fedsam"}) == "other"


def test_the_map_tallies_each_group_apart_and_has_one_linked_cell_per_claim():
    html = verdict_map(RESULTS)
    assert html.startswith('<div class="verdict-map"') and "\n\n" not in html  # one HTML block for MyST
    assert "<b>3 the papers' own claims</b>: 1 holds, 1 inconclusive, 1 not testable here; " \
           "<b>1 later claims by other sources</b>: 1 fails." in html
    assert html.count('<a href="#claim-') == 4
    assert ('<a href="#claim-fedsam-one" title="A &lt;beats&gt; B -- holds; +1.25 [+0.5, +2.0] · paper +3.00" '
            'style="background:#d4edda">one<br><b>holds</b> +1.25 [+0.5, +2.0] · paper +3.00</a>') in html
    assert '<span class="vm-paper">FedSAM</span>' in html and '<span class="vm-paper">FedGF</span>' in html
    assert "<beats>" not in html
    linked = verdict_map(RESULTS, href=lambda claim_id: f"../claims.html#{claim_anchor(claim_id)}")
    assert 'href="../claims.html#claim-fedgf-three"' in linked
    assert verdict_map([]) == ""


def test_each_claim_block_carries_the_anchor_the_map_links_to():
    page = claims_markdown(RESULTS[:1], "small", explain=False)
    assert f'<a id="{claim_anchor("fedsam-one")}"></a>**A &lt;beats&gt; B**' in page  # escaped: a paper file's text


def test_a_page_without_accuracy_claims_says_so_instead_of_counting_zeros():
    from flcore.site.pages import verdict_summary

    timing = {**RESULTS[0], "metric": "wallclock_seconds_per_round", "verdict_corrected": "holds"}
    text = verdict_summary([timing], "small")
    assert "No claim here is about accuracy." in text and "Of the 0" not in text
    accuracy = {**RESULTS[0], "metric": "accuracy", "verdict_corrected": "holds"}
    assert "Of the 1 accuracy claim this scale runs 1 and decides 1" in verdict_summary([accuracy], "small")


def test_the_claims_page_shows_every_seed_of_every_cell_with_its_flags():
    comparison = {**_comparison("holds", 1.25, [0.5, 2.0], 3.0),
                  "per_seed": {"better": [{"seed": 0, "value": 71.2, "flag": None},
                                          {"seed": 1, "value": None, "flag": "diverged"},
                                          {"seed": 2, "value": 10.1, "flag": "collapsed"}],
                               "worse": [{"seed": 0, "value": 70.0, "flag": None}]}}
    page = claims_markdown([_result("fedsam-one", "fedsam", "holds", [comparison])], "small", explain=False,
                           details=True)
    assert "<details><summary>Every seed</summary>" in page
    assert "| 1. A | 0: 71.20, 1: diverged, 2: 10.10 (collapsed) | B | 0: 70.00 | 3 seeds / 1 seed |" in page
    assert "Every seed" not in claims_markdown([_result("fedsam-one", "fedsam", "holds", [comparison])], "small",
                                               explain=False)  # the landing pages keep the short form


def test_coverage_counts_an_artifact_s_claims_as_its_verdict_box_does():
    from flcore.report.page import verdict_box
    from flcore.site.pages import _verdicts_cell

    own = {"id": "a", "text": "A beats B", "verdict": "holds", "reason": None}
    other = {"id": "b", "text": "C beats D", "verdict": "inconclusive", "reason": None}
    later = {"id": "c", "text": "E", "verdict": "fails", "reason": None, "later_source": {"citation": "x"}}
    results = {r["id"]: r for r in (own, other, later)}
    cell = _verdicts_cell({"claims": ["a", "b", "c"]}, results)
    assert cell == "1 hold, 1 inconclusive; 1 later: 1 fail"
    box = verdict_box([own, other, later], "small")
    assert "Verdicts at the small scale: 1 hold, 1 inconclusive\n" in box and "1 later claim" in box
    assert _verdicts_cell({"claims": ["c"]}, results) == "no claim; 1 later: 1 fail"


def test_the_summary_says_how_many_claims_each_undecided_verdict_leaves_aside():
    from flcore.site.pages import verdict_summary

    rows = [{**RESULTS[0], "metric": "accuracy", "verdict": v, "verdict_corrected": v}
            for v in ("not_testable", "not_testable", "same_runs", "holds")]
    text = verdict_summary(rows, "small")
    assert "2 cannot be decided here: they are about a data set or model" in text
    assert "1 rest on the same runs as another claim" in text
    assert "by construction" not in text and "did not learn" not in text
