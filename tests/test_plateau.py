"""The plateau criterion (flcore.reproduction.plateau) by hand, and a comparison whose cell
still climbs read as *not settled* below the paper scale (claim_compare.unsettled)."""
from __future__ import annotations

import pytest

from flcore.reproduction.claim_compare import unsettled
from flcore.reproduction.plateau import cell_plateau, criterion_text, fifth_change


def _curve(rounds: int, every: int, value) -> list[tuple[int, float]]:
    return [(r, value(r)) for r in range(every, rounds + 1, every)]


def test_fifth_change_by_hand():
    # 100 rounds, evaluated every 10: the fifth before is (60, 80] -> rounds 70, 80; the last
    # fifth (80, 100] -> 90, 100.  Accuracy r / 200: means 0.375 and 0.475, a change of 10 points.
    assert fifth_change(_curve(100, 10, lambda r: r / 200), 100) == pytest.approx(10.0)
    assert fifth_change(_curve(100, 10, lambda r: 0.5), 100) == pytest.approx(0.0)
    assert fifth_change([(10, 0.1), (100, 0.5)], 100) is None  # nothing in (60, 80]


def test_a_cell_is_at_a_plateau_when_its_seeds_mean_change_is_below_half_the_margin():
    flat = _curve(300, 10, lambda r: 0.8)
    rising = _curve(300, 10, lambda r: 0.5 + r / 10_000)  # +0.6 points per 60 rounds... per fifth
    # rising: (180, 240] evaluated at 190..240 -> mean 215 / 10000; (240, 300] -> mean 275 / 10000: +0.6 points
    assert fifth_change(rising, 300) == pytest.approx(0.6)
    assert cell_plateau({0: flat, 1: flat}, 300, margin=1.0) == {"reached": True, "change": 0.0, "tolerance": 0.5,
                                                                   "seeds": 2}
    state = cell_plateau({0: rising, 1: rising}, 300, margin=1.0)
    assert state["reached"] is False and state["change"] == pytest.approx(0.6)
    mixed = cell_plateau({0: rising, 1: flat}, 300, margin=1.0)  # the seeds' mean: +0.3 < 0.5
    assert mixed["reached"] is True and mixed["change"] == pytest.approx(0.3)
    assert cell_plateau({0: rising}, 300, margin=2.0)["reached"] is True  # tolerance 1.0
    assert cell_plateau({0: [(300, 0.5)]}, 300, margin=1.0)["reached"] is None
    assert "0.5 points (half the margin)" in criterion_text(1.0)


def _result(verdict: str, better_change: float, worse_change: float) -> dict:
    return {"verdict": verdict, "verdict_text": verdict, "reason": None,
            "plateau": {"better": {"reached": abs(better_change) < 0.5, "change": better_change, "tolerance": 0.5},
                        "worse": {"reached": abs(worse_change) < 0.5, "change": worse_change, "tolerance": 0.5}}}


@pytest.mark.parametrize("verdict", ["holds", "fails", "absent", "negligible"])
def test_a_verdict_on_final_accuracy_with_a_climbing_cell_is_not_settled(verdict):
    result = unsettled(_result(verdict, 0.1, 1.4), "small")
    assert result["verdict"] == "inconclusive" and result["verdict_text"] == "not settled"
    assert result["settled_verdict"] == verdict
    assert result["reason"].startswith("not settled: the worse cell moved +1.40 points over the last fifth")


def test_settled_cells_undecided_verdicts_and_the_paper_scale_keep_their_verdict():
    assert unsettled(_result("holds", 0.1, -0.2), "small")["verdict"] == "holds"
    assert unsettled(_result("inconclusive", 2.0, 2.0), "small")["verdict_text"] == "inconclusive"
    assert unsettled(_result("holds", 2.0, 0.0), "paper")["verdict"] == "holds"
    assert unsettled({"verdict": "holds"}, "small") == {"verdict": "holds"}  # no curves: no plateau to read


def test_plateau_counts_count_a_cell_once_and_the_claims_page_states_the_share():
    from flcore.reproduction.plateau import plateau_counts
    from flcore.site.pages import plateau_text

    def comparison(better, worse, reached_b, reached_w, text="holds"):
        return {"run_ids": {"better": better, "worse": worse}, "verdict_text": text,
                "plateau": {"better": {"reached": reached_b, "change": 0.1, "tolerance": 0.5},
                            "worse": {"reached": reached_w, "change": 0.9, "tolerance": 0.5}}}

    comparisons = [comparison(["a1", "a2"], ["b1", "b2"], True, False, "not settled"),
                   comparison(["a2", "a1"], ["c1", "c2"], True, True),  # cell a again, listed in another order
                   comparison(["d1"], ["e1"], None, True)]
    assert plateau_counts(comparisons) == {"cells": 4, "reached": 3, "unknown": 1, "not_settled": 1}
    text = plateau_text([{"comparisons": comparisons}], "small")
    assert "At the `small` scale 3 of the 4 accuracy cells the claims read (75 %) had reached their plateau; " \
           "1 comparison is not settled." in text
    assert "No accuracy cell" in plateau_text([{"comparisons": []}], "small")


def test_the_command_line_names_a_comparison_not_settled():
    from flcore.cli.reproduce import _comparison_text

    comparison = {"gap": 2.5, "threshold": 1.0, "verdict": "inconclusive", "verdict_text": "not settled",
                  "mde": 1.2, "margin": 1.0}
    assert _comparison_text(comparison).startswith("+2.50 +- 1.00 (not settled")
    assert _comparison_text({**comparison, "verdict_text": "inconclusive"}).startswith("+2.50 +- 1.00 (inconclusive")
