"""The verdict rules on multiplicity, size, censored values and canonical runs: Holm's
correction before a claim fails, *mixed* claims, the book's false-discovery q, our gap over
the published one, the sign test of values that never reached their target, and one run per
cell and seed.  Hand-computed seeds throughout (df 2: P(T > t) = (1 - t / sqrt(t^2 + 2)) / 2)."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from flcore.config import resolve_config
from flcore.reproduction import claim_cells, claim_compare, runner
from flcore.reproduction import claims as claims_module
from flcore.reproduction.claims import (
    CellValues,
    Claim,
    Comparison,
    Metric,
    Seeds,
    canonical_specs,
    evaluate,
    evaluate_claims,
)
from flcore.reproduction.multiplicity import benjamini_hochberg, holm, sign_test
from flcore.reproduction.paired import PairedTest

MAIN = {"dataset": ["cifar10", "cifar100"], "model": "cnn"}
SMALL_CONFIG = resolve_config({"method": "fedavg", "scale": "small"})


def _p_df2(t: float) -> float:
    """Two-sided p of Student's t on 2 df, in closed form."""
    return 1.0 - abs(t) / math.sqrt(t * t + 2.0)


def _claim(comparisons, metric="accuracy", direction="higher", claim_id="x-claim"):
    return Claim(id=claim_id, paper="fedsam", text="A beats the others", quote="", artifacts=("fedsam-table-2",),
                 source="", metric=metric, direction=direction, comparisons=tuple(comparisons),
                 about={"dataset": "cifar10", "model": "cnn"}, main_setting=MAIN, seeds=Seeds(3, "three"))


def _vs(name, published_worse=65.0):
    return Comparison({"algorithm": "A"}, {"algorithm": name}, 70.0, published_worse)


def _cells(monkeypatch, values, censored=None):
    censored = censored or {}

    def fake(claim, cell, scale, seeds, store):
        name = cell["algorithm"]
        got = values.get(name, {})
        return CellValues(dict(got), {s: f"{name}-{s}" for s in got}, [SMALL_CONFIG], "", [],
                          list(censored.get(name, [])))

    monkeypatch.setattr(claims_module, "cell_values", fake)


A = {0: 60.0, 1: 60.0, 2: 60.0}
FAILS = {0: 61.0, 1: 61.4, 2: 61.9}   # A - it: -1, -1.4, -1.9: mean -1.4333, sd 0.45092, t -5.5056, p 0.031435
HOLDS = {0: 59.0, 1: 58.8, 2: 58.6}   # A - it: 1, 1.2, 1.4: mean 1.2, sd 0.2, t 10.392, p 0.0091325
NOTHING = {0: 59.0, 1: 61.0, 2: 59.7}  # A - it: 1, -1, 0.3: mean 0.1, sd sqrt(1.03), t 0.17066, p 0.88019
P_FAILS, P_HOLDS, P_NOTHING = _p_df2(5.50557), _p_df2(10.39230), _p_df2(0.1 / math.sqrt(1.03 / 3))


def test_the_paired_p_is_the_two_sided_t_tail():
    assert PairedTest(1.2, 0.2, 3, 2).p_value == pytest.approx(P_HOLDS, abs=1e-5)  # 0.009133
    assert P_HOLDS == pytest.approx(0.009133, abs=1e-6)
    assert PairedTest(0.0, 0.0, 3, 2).p_value == 1.0 and PairedTest(0.5, 0.0, 3, 2).p_value == 0.0


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 -> 3 x 0.01 = 0.03, 2 x 0.03 = 0.06, max(0.06, 1 x 0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_benjamini_hochberg_by_hand():
    # sorted 0.01, 0.03, 0.04 -> 3/1 x 0.01 = 0.03, 3/2 x 0.03 = 0.045, 3/3 x 0.04 = 0.04; q = running
    # minimum from the top: 0.04, min(0.045, 0.04) = 0.04, min(0.03, 0.04) = 0.03
    assert benjamini_hochberg([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.04, 0.04])


def test_a_fail_that_does_not_survive_holm_is_inconclusive(monkeypatch):
    # alone, A - B fails (p = 0.0314); beside a comparison with p = 0.8802 Holm gives it
    # 2 x 0.0314 = 0.0629 >= 0.05: the claim no longer fails on one of two comparisons by chance
    _cells(monkeypatch, {"A": A, "B": FAILS, "C": NOTHING})
    alone = evaluate(_claim([_vs("B")]), "small")
    assert alone["verdict"] == "fails" and alone["comparisons"][0]["p"] == pytest.approx(P_FAILS, abs=1e-5)
    assert alone["comparisons"][0]["p_holm"] == pytest.approx(P_FAILS, abs=1e-5)
    result = evaluate(_claim([_vs("B"), _vs("C")]), "small")
    fail, other = result["comparisons"]
    assert fail["p_holm"] == pytest.approx(2 * P_FAILS, abs=1e-5) and other["p_holm"] == pytest.approx(P_NOTHING,
                                                                                                      abs=1e-5)
    assert fail["verdict"] == "inconclusive" and result["verdict"] != "fails"
    assert fail["reason"] == ("fails at p = 0.0314 but not after Holm's correction over the claim's 2 "
                              "comparisons that can reach 5 % (p = 0.0629)")


def test_a_claim_whose_comparisons_disagree_significantly_is_mixed(monkeypatch):
    # Holm over p 0.00913 and 0.0314: 2 x 0.00913 = 0.0183 and max(0.0183, 0.0314) = 0.0314, both < 0.05
    _cells(monkeypatch, {"A": A, "B": FAILS, "D": HOLDS})
    result = evaluate(_claim([_vs("B"), _vs("D")]), "small")
    fail, hold = result["comparisons"]
    assert (fail["verdict"], hold["verdict"]) == ("fails", "holds")
    assert hold["p_holm"] == pytest.approx(2 * P_HOLDS, abs=1e-5) and fail["p_holm"] == pytest.approx(P_FAILS,
                                                                                                     abs=1e-5)
    assert result["verdict"] == "mixed" and result["p"] == pytest.approx(P_FAILS, abs=1e-5)
    # a fail beside an inconclusive one is a plain fail
    assert claims_module.claim_verdict([{"verdict": "fails", "p": 0.01, "p_holm": 0.02},
                                        {"verdict": "inconclusive", "p": 0.5}]) == ("fails", 0.02)


def test_our_gap_over_the_published_gap_with_its_interval_at_the_paper_scale(monkeypatch):
    # gap 1.2 +- 4.302653 x 0.2 / sqrt 3 = 1.2 +- 0.49683 over the published 70 - 65 = 5; below
    # the paper scale the gap is on the stand-in's data, the paper's on its own: no ratio
    _cells(monkeypatch, {"A": A, "D": HOLDS})
    assert evaluate(_claim([_vs("D")]), "small")["comparisons"][0]["size"] is None
    monkeypatch.setattr(claim_compare, "untestable_reason", lambda *args: "")
    (comparison,) = evaluate(_claim([_vs("D")]), "paper")["comparisons"]
    half = 4.302653 * 0.2 / math.sqrt(3)
    assert comparison["size"]["ratio"] == pytest.approx(0.24)
    assert comparison["size"]["interval"] == pytest.approx([(1.2 - half) / 5, (1.2 + half) / 5], abs=1e-4)
    assert comparison["interval_95"] == pytest.approx([1.2 - half, 1.2 + half], abs=1e-4)
    _cells(monkeypatch, {"A": A, "D": HOLDS})
    (flat,) = evaluate(_claim([_vs("D", published_worse=70.0)]), "paper")["comparisons"]
    assert flat["size"] is None  # the paper prints no gap


def test_no_ratio_over_a_published_gap_within_the_noise_and_relative_gaps_for_flatness(monkeypatch):
    _cells(monkeypatch, {"A": A, "D": HOLDS})
    monkeypatch.setattr(claim_compare, "untestable_reason", lambda *args: "")
    (small,) = evaluate(_claim([_vs("D", published_worse=69.9)]), "paper")["comparisons"]
    # the paper's gap, 0.10, is inside the noise of a gap on these seeds (95 % half-width 0.50)
    assert small["size"]["ratio"] is None
    assert small["size"]["note"] == ("no ratio: the paper's gap +0.10 is within the 95 % half-width 0.50 of a gap "
                                     "on these seeds")
    # lambda_max 20 -> 10 in the paper (-50 %), ours 4 -> 3 (-25 %): half the paper's relative gap,
    # where the absolute ratio (-1 / -10 = 0.1) would compare numbers of two networks
    size = claim_compare.size_of(-1.0, 0.5, -10.0, relative_to=(4.0, 20.0))
    assert size["basis"] == "relative" and size["ratio"] == pytest.approx(0.5)
    assert size["interval"] == pytest.approx([0.25, 0.75])
    assert claim_compare.size_of(-1.0, 0.5, -10.0)["ratio"] == pytest.approx(0.1)


def test_a_gap_in_rounds_is_compared_as_a_share_of_each_run():
    # ours: 30 rounds fewer of a 100-round run (30 %); the paper's: 85 fewer of 400 (21.25 %)
    size = claim_compare.size_of(-30.0, 6.0, -85.0, lengths=(100, 400))
    assert size["basis"] == "run length" and size["ratio"] == pytest.approx(0.30 / 0.2125, abs=1e-4)
    assert size["interval"] == pytest.approx([24 / 21.25, 36 / 21.25], abs=1e-4)
    # in absolute rounds the same numbers would read 0.35 x the paper's gap
    assert claim_compare.size_of(-30.0, 6.0, -85.0)["ratio"] == pytest.approx(30 / 85, abs=1e-4)
    # no length stated by the paper: no ratio, and why
    assert claim_compare.size_of(-30.0, 6.0, -85.0, lengths=(100, None))["note"].startswith(
        "no ratio: the paper does not state its runs' length")
    # the noise test in our units: -85 of 400 is -21.25 of 100, inside a half-width of 25
    note = claim_compare.size_of(-30.0, 25.0, -85.0, lengths=(100, 400))["note"]
    assert note.startswith("no ratio: the paper's gap -85.00 is within") and "scaled to 100 rounds: -21.25" in note


def test_the_paper_states_the_run_length_of_its_claims_in_rounds():
    from flcore.reproduction.claim_metrics import METRICS
    from flcore.reproduction.claim_registry import _published_rounds, all_claims

    rounds = [c for c in all_claims() if METRICS[c.metric].in_rounds]
    assert rounds and {c.id: c.published_rounds for c in rounds if c.paper == "fedima"} == {
        "fedima-ima-reaches-target-faster": 400, "fedima-early-ima-halves-rounds": 400}
    assert all(c.published_rounds is None for c in rounds if c.paper == "fedlesam")  # T is lost in that paper
    for bad in (0, -3, 2.5, True, "400"):
        with pytest.raises(ValueError, match="published_rounds must be a whole number"):
            _published_rounds(bad, "claims.yaml: claim x")


def test_evaluate_claims_corrects_the_book_s_claims_with_benjamini_hochberg(monkeypatch):
    claims = (_claim([_vs("B"), _vs("D")], claim_id="x-one"), _claim([_vs("D")], claim_id="x-two"),
              _claim([_vs("C")], claim_id="x-three"))
    monkeypatch.setattr(claims_module, "all_claims", lambda: claims)
    monkeypatch.setattr(claims_module, "_carrier", lambda *args: None)
    _cells(monkeypatch, {"A": A, "B": FAILS, "C": NOTHING, "D": HOLDS})
    one, two, three = evaluate_claims("small")
    # x-one is mixed at its smallest Holm p of a fail (0.0314), x-two holds at 0.00913, x-three is
    # inconclusive (p 1 in the family): BH over 0.0314, 0.00913, 1 -> 0.0471, 0.0274, 1
    assert (one["verdict"], two["verdict"], three["verdict"]) == ("mixed", "holds", "inconclusive")
    assert [one["q"], two["q"], three["q"]] == pytest.approx([1.5 * P_FAILS, 3 * P_HOLDS, 1.0], abs=1e-5)
    assert [r["verdict_corrected"] for r in (one, two, three)] == ["mixed", "holds", "inconclusive"]
    # a subset of the book gets no correction: it would not be the book's
    assert all("q" not in r for r in evaluate_claims("small", papers=["fedsam"]))


# --------------------------------------------------------------------------- censored values

def _rounds_claim():
    return _claim([Comparison({"algorithm": "A"}, {"algorithm": "B"}, 40.0, 90.0)], metric="rounds",
                  direction="lower")


def test_censored_values_rank_worst_and_take_a_sign_test(monkeypatch):
    # B never reached the target (its number, 101, is the protocol's rounds + 1).  The t test
    # read 51, 50, 49 rounds saved with sd 1 and held; the sign test of 3 wins of 3 has
    # p = 2 x 0.5^3 = 0.25: undecidable on three seeds, said so
    _cells(monkeypatch, {"A": {0: 50.0, 1: 51.0, 2: 52.0}, "B": {0: 101.0, 1: 101.0, 2: 101.0}},
           censored={"B": [0, 1, 2]})
    (comparison,) = evaluate(_rounds_claim(), "small")["comparisons"]
    assert comparison["test"] == "sign" and comparison["p"] == pytest.approx(0.25)
    assert comparison["censored"] == {"better": [], "worse": [0, 1, 2]}
    assert comparison["verdict"] == "cannot_decide"
    assert comparison["reason"] == ("ranked worst (censored, diverged or collapsed): B: seeds 0, 1, 2; "
                                    "sign test: 3 of 3 untied seeds the claim's way, p = 0.25; with 3 untied seeds "
                                    "a sign test cannot reach 5 % (6 are needed)")


def test_six_seeds_that_all_win_hold_and_a_censored_better_cell_loses(monkeypatch):
    seeds = range(6)
    _cells(monkeypatch, {"A": {s: 50.0 + s for s in seeds}, "B": {s: 101.0 for s in seeds}},
           censored={"B": list(seeds)})
    (comparison,) = evaluate(_rounds_claim(), "small", seeds=list(seeds))["comparisons"]
    assert comparison["p"] == pytest.approx(2 * 0.5 ** 6) and comparison["verdict"] == "holds"  # 0.03125
    # seeds 0-5: A censored at 0-5, B reached at 80: six losses, p 0.03125 -> fails; two censored
    # values tie (seed 5 below), so n = 5 and p = 0.0625
    _cells(monkeypatch, {"A": {s: 101.0 for s in seeds}, "B": {s: 80.0 for s in seeds}}, censored={"A": list(seeds)})
    assert evaluate(_rounds_claim(), "small", seeds=list(seeds))["comparisons"][0]["verdict"] == "fails"
    _cells(monkeypatch, {"A": {s: 101.0 for s in seeds}, "B": {**{s: 80.0 for s in range(5)}, 5: 101.0}},
           censored={"A": list(seeds), "B": [5]})
    (tied,) = evaluate(_rounds_claim(), "small", seeds=list(seeds))["comparisons"]
    assert tied["p"] == pytest.approx(0.0625) and tied["verdict"] == "cannot_decide"
    assert sign_test([1, 1, 0, -1]) == (pytest.approx(1.0), 2, 3)


class _Spec:
    def __init__(self, seed, timed=False, name="A"):
        self.labels = {"algorithm": name, "seed": seed}
        self.config = {"seed": seed, "timed": timed}
        self.method, self.available = "fedavg", True
        self.run = f"{name}-{seed}-{'timed' if timed else 'batched'}"

    def resolve(self):
        return SimpleNamespace(run_id=lambda: self.run, dataset="mnist1d")


def test_the_store_reader_marks_censored_seeds(monkeypatch):
    metric = Metric("rounds_x", lambda row: row["value"], "rounds", censored=lambda row: row["never"])
    monkeypatch.setitem(claims_module.METRICS, "rounds_x", metric)
    monkeypatch.setattr(claim_cells, "cell_specs", lambda *args: ([_Spec(0), _Spec(1)], ""))
    monkeypatch.setattr(runner, "results_frame", lambda specs, store=None: pd.DataFrame(
        [{"status": "finished", "value": 40.0, "never": False}, {"status": "finished", "value": math.inf,
                                                                  "never": True}]))
    claim = _claim([Comparison({"algorithm": "A"}, {"algorithm": "B"}, 1.0, 2.0)], metric="rounds_x")
    cell = claims_module.cell_values(claim, {"algorithm": "A"}, "small", (0, 1), None)
    assert cell.values == {0: 40.0, 1: math.inf} and cell.censored == [1]


# --------------------------------------------------------------------------- one canonical run

def test_one_canonical_run_per_cell_and_seed():
    timed0, batched0, batched1 = _Spec(0, timed=True), _Spec(0), _Spec(1)
    # a metric read from the curves reads the batched run, whichever is listed first
    assert canonical_specs([timed0, batched0, batched1], timed=False) == [batched0, batched1]
    assert canonical_specs([batched1, batched0, timed0], timed=False) == [batched0, batched1]
    # the timed twin only where a seed has no other run; a timed metric reads the timed run
    timed1 = _Spec(1, timed=True)
    assert canonical_specs([batched0, timed1], timed=False) == [batched0, timed1]
    assert canonical_specs([timed0, timed1], timed=True) == [timed0, timed1]
