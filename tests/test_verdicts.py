"""The verdict rules on numbers given by hand: one comparison (every verdict word, the
learning of its cells, the resolution floor, ranks for censored, diverged and collapsed
seeds) and one claim (Holm within it, the union traps avoided, the book's correction)."""
from __future__ import annotations

import math

import pytest
from scipy import stats

from flcore.reproduction.verdicts import (
    RUN,
    VERDICT_TEXT,
    VERDICTS,
    cell_state,
    claim_verdict,
    correct_claims,
    correct_within_claim,
    decide_comparison,
    rule_text,
    tost_p,
)


def test_the_issue_s_four_cases():
    # 30/60/62 against 28/57.5/59: differences 2, 2.5, 3 (mean 2.5, sd 0.5); every seed learned
    # (chance 10 + 5); t = 2.5 / (0.5 / sqrt 3) = 8.66 at df 2
    a = decide_comparison([30, 60, 62], [28, 57.5, 59], chance=10, margin=1)
    assert a.verdict == "holds" and a.gap == pytest.approx(2.5) and a.sd == pytest.approx(0.5)
    assert a.p == pytest.approx(2 * stats.t.sf(2.5 / (0.5 / math.sqrt(3)), 2))
    assert {c.status for c in a.cells.values()} == {"learned"}
    # both cells below chance + 5 at every seed: the stand-in did not train, nothing is decided
    b = decide_comparison([9.3, 9.3, 9.3], [9.5, 9.4, 9.6], chance=10, margin=1)
    assert b.verdict == "at_chance" and b.p is None and VERDICT_TEXT[b.verdict].startswith("not testable")
    # differences 0.4, 0.5, 0.6: significant (95 % interval [0.25, 0.75]) but the 90 % interval
    # [0.33, 0.67] lies inside (-1, 1): negligible, not holds
    c = decide_comparison([60.4, 60.5, 60.6], [60, 60, 60], margin=1)
    assert c.verdict == "negligible"
    assert c.interval_95[0] > 0 and c.interval_90[0] > -1 and c.interval_90[1] < 1
    # equal differences: the sd floored at the resolution, a finite p above 0
    d = decide_comparison([61, 61, 61], [60, 60, 60], margin=1, resolution=0.05)
    assert d.sd == 0.05 and d.sd_floored and 0 < d.p < 1e-3 and math.isfinite(d.p)
    assert d.p == pytest.approx(2 * stats.t.sf(1.0 / (0.05 / math.sqrt(3)), 2))


def test_fails_absent_and_inconclusive_by_hand():
    # differences -2, -2.5, -3: the 95 % interval below 0
    assert decide_comparison([28, 57.5, 59], [30, 60, 62], margin=1).verdict == "fails"
    # lower is better: the same numbers the other way
    assert decide_comparison([28, 57.5, 59], [30, 60, 62], margin=1, better="lower").verdict == "holds"
    # differences 0.1, -0.1, 0, 0.05, -0.05, 0: mean 0, sd 0.0707; 90 % half-width
    # t(0.95, 5) x 0.0289 = 0.058 inside (-1, 1): absent, with its TOST p below 5 %
    e = decide_comparison([60.1, 59.9, 60, 60.05, 59.95, 60], [60] * 6, margin=1)
    assert e.verdict == "absent" and e.p_tost < 0.05
    se = e.sd / math.sqrt(6)
    assert e.p_tost == pytest.approx(max(stats.t.sf((e.gap + 1) / se, 5), stats.t.cdf((e.gap - 1) / se, 5)))
    # differences 3, -2, 1: neither side, nor inside the margin; the MDE and the seeds it needs
    f = decide_comparison([63, 58, 61], [60, 60, 60], margin=1)
    assert f.verdict == "inconclusive" and f.mde > 1 and f.needs > 3 and f.text.startswith("inconclusive: needs")


def test_fewer_seeds_than_planned_are_indicative():
    g = decide_comparison([30, 60, 62, None], [28, 57.5, 59, 40], margin=1, planned=4)
    assert g.verdict == "indicative" and g.n == 3 and g.gap == pytest.approx(2.5)
    assert decide_comparison([30, 60], [28, 57.5], margin=1).verdict == "indicative"


def test_a_collapsed_or_diverged_seed_ranks_worst_and_the_sign_test_decides():
    # one seed of the first cell collapsed (9 < 15) among six: the cell is unstable, that seed
    # ranks worst, the other five favour it: 5 of 6 untied, p = 0.22
    h = decide_comparison([9, 60, 61, 62, 63, 64], [50, 50, 50, 50, 50, 50], chance=10, margin=1)
    assert h.cells["a"].status == "unstable" and h.cells["a"].collapsed == (0,)
    assert h.test == "sign" and (h.wins, h.untied) == (5, 6) and h.p == pytest.approx(2 * 7 / 64)
    assert h.verdict == "inconclusive"
    # a diverged seed (no value) of the worse cell ranks worst for it: 6 of 6, p = 1/32
    i = decide_comparison([60, 61, 62, 63, 64, 65], [50, 50, None, 50, 50, 50], chance=10, margin=1,
                          diverged_b=[False, False, True, False, False, False])
    assert i.verdict == "holds" and i.p == pytest.approx(2 / 64)
    assert i.cells["b"].divergence_rate == pytest.approx(1 / 6)
    # the same seed collapsed in both cells ties: 5 untied seeds cannot reach 5 % (2 / 32)
    j = decide_comparison([34.65, 9.87, 33.43, 35, 34, 36], [32.96, 9.82, 32.25, 33, 33, 34], chance=10, margin=1)
    assert j.verdict == "cannot_decide" and j.untied == 5 and j.text == "cannot decide at 5 untied seeds"
    # most seeds collapsed: at chance, whatever the other cell
    k = decide_comparison([9, 9, 60], [50, 50, 50], chance=10, margin=1)
    assert k.verdict == "at_chance" and k.cells["a"].status == "at_chance"


def test_censored_values_rank_worst():
    # rounds to a target (lower is better); the first cell never reached it at seed 0
    m = decide_comparison([100, 80, 90, 70, 60, 50], [120, 110, 100, 90, 100, 95], better="lower", margin=None,
                          censored_a=[True, False, False, False, False, False])
    assert m.test == "sign" and (m.wins, m.untied) == (5, 6) and m.verdict == "inconclusive"


def test_cell_state_counts_seeds_with_a_value_or_diverged():
    state = cell_state([60, None, 9, 61], 10, 5, [False, True, False, False])
    assert (state.status, state.collapsed, state.diverged, state.seeds) == ("unstable", (2,), (1,), 4)
    assert cell_state([60, None, 9], 10, 5, [False, True, False]).status == "at_chance"
    assert cell_state([1.0, 2.0], None, 5, [False, False]).status is None


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="better"):
        decide_comparison([1, 2, 3], [1, 2, 3], better="up", margin=1)
    with pytest.raises(ValueError, match="pair seeds by position"):
        decide_comparison([1, 2, 3], [1, 2], margin=1)


def test_tost_p_is_the_larger_one_sided_p():
    assert tost_p(0.0, 0.1, 5, 1.0) == pytest.approx(stats.t.sf(10, 5))
    assert tost_p(0.9, 0.1, 5, 1.0) == pytest.approx(stats.t.cdf(-1, 5))


def _c(verdict, p=None, p_tost=None):
    return {"verdict": verdict, "p": p, "p_tost": p_tost, "reason": ""}


def test_a_claim_holds_only_when_every_comparison_it_runs_holds():
    assert claim_verdict([_c("holds", 0.01), _c("holds", 0.03)]) == ("holds", 0.03)  # intersection-union
    assert claim_verdict([_c("holds", 0.01), _c("inconclusive", 0.2)])[0] == "inconclusive"
    # not testable on the stand-in is counted apart
    assert claim_verdict([_c("holds", 0.01), _c("at_chance")]) == ("holds", 0.01)
    assert claim_verdict([_c("at_chance"), _c("not_testable")]) == ("at_chance", None)


def test_absent_only_when_every_comparison_is_absent_or_negligible():
    # the union trap: one absent beside two that lean the paper's way is not absent
    assert claim_verdict([_c("absent", 0.5, 0.01), _c("inconclusive", 0.07), _c("inconclusive", 0.1)])[0] == \
        "inconclusive"
    assert claim_verdict([_c("absent", 0.5, 0.01), _c("negligible", 0.01, 0.03)]) == ("absent", 0.03)


def test_a_fail_must_survive_holm_and_a_fail_beside_a_hold_is_mixed():
    comparisons = [_c("fails", 0.03), _c("holds", 0.001), _c("inconclusive", 0.4)]
    correct_within_claim(comparisons)  # Holm over 3: 0.003, 0.06, 0.4
    assert comparisons[0]["verdict"] == "inconclusive" and comparisons[0]["p_holm"] == pytest.approx(0.06)
    assert claim_verdict(comparisons)[0] == "inconclusive"
    strong = [_c("fails", 0.001), _c("holds", 0.002)]
    correct_within_claim(strong)
    assert claim_verdict(strong) == ("mixed", pytest.approx(0.002))
    # a comparison that cannot reach 5 % is left out of Holm's k (Tarone)
    tarone = [_c("fails", 0.02), _c("cannot_decide", 0.0625)]
    correct_within_claim(tarone)
    assert tarone[0]["verdict"] == "fails" and tarone[0]["p_holm"] == pytest.approx(0.02)


def test_the_book_correction_keeps_claims_whose_q_passes():
    results = [{"verdict": "holds", "p": 0.001}, {"verdict": "fails", "p": 0.04}, {"verdict": "inconclusive"},
               {"verdict": "not_run"}]
    correct_claims(results)
    # BH over the three that ran (p 0.001, 0.04, 1): q = 0.003, 0.06, 1
    assert results[0]["q"] == pytest.approx(0.003) and results[0]["verdict_corrected"] == "holds"
    assert results[1]["q"] == pytest.approx(0.06) and results[1]["verdict_corrected"] == "inconclusive"
    assert results[2]["verdict_corrected"] == "inconclusive" and results[3]["q"] is None


def test_one_vocabulary_and_its_rule_text():
    assert len(set(VERDICT_TEXT.values())) == len(VERDICTS)  # no word in two spellings
    assert set(RUN) <= set(VERDICTS)
    text = rule_text()
    for word in ("holds", "fails", "negligible", "absent", "inconclusive", "cannot decide", "indicative",
                 "not testable on the stand-in", "mixed", "Benjamini-Hochberg", "Holm"):
        assert word in text, word
    assert ":func:" not in text and "``" not in text


def test_the_reproducing_page_and_the_claims_help_state_the_rule_the_code_applies():
    from pathlib import Path

    from flcore.cli.main import build_parser

    page = (Path(__file__).resolve().parents[1] / "book" / "reference" / "reproducing.md").read_text()
    block = page.split("<!-- the verdict rules: python -m flcore.reproduction.verdicts writes them -->\n")[1]
    assert block.split("\n<!-- end of the verdict rules -->")[0] == rule_text()
    for retired in ("tie", "not checked", "not_checked", "twice its standard error", "neither learns"):
        assert f" {retired} " not in block and f"*{retired}*" not in page, retired
    claims = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "claims")[1]
    assert rule_text() in " ".join(claims.description.split())
