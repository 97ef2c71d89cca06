"""When a verdict settles: the paired gap and verdict at each evaluated round from the runs'
logged evaluations, ``settles_at``, and the share settled at 10, 25 and 50 % of the rounds.
Hand computations throughout."""
from __future__ import annotations

import math

import pytest

from flcore.config import resolve_config
from flcore.reproduction import claim_compare
from flcore.reproduction import claims as claims_module
from flcore.reproduction.claims import CellValues, Claim, Comparison, evaluate
from flcore.reproduction.settling import settled_shares, settles_at, trajectory, window_means

MAIN = {"dataset": ["cifar10", "cifar100"], "model": "cnn"}
T975_DF2 = 4.302653


def test_window_means_is_the_runs_own_statistic_as_if_it_stopped_there():
    curve = [(1, 0.10), (2, 0.20), (3, 0.30), (4, 0.50)]
    # window min(2, 4) = 2: round 1 -> 10; 2 -> (10 + 20) / 2; 3 -> (20 + 30) / 2; 4 -> (30 + 50) / 2
    assert window_means(curve, 4, window=2) == pytest.approx({1: 10.0, 2: 15.0, 3: 25.0, 4: 40.0})
    # a protocol shorter than the window averages every evaluation so far
    assert window_means(curve, 3, window=100)[4] == pytest.approx(100 * (0.2 + 0.3 + 0.5) / 3)


def test_trajectory_gives_the_paired_gap_interval_and_verdict_per_round():
    better = {0: {10: 50.0, 20: 61.0}, 1: {10: 52.0, 20: 61.2}, 2: {10: 48.0, 20: 61.4}}
    worse = {0: {10: 51.0, 20: 60.0}, 1: {10: 50.0, 20: 60.0}, 2: {10: 49.0, 20: 60.0}}
    first, last = trajectory(better, worse, sign=1, margin=1.0)
    # round 10: diffs -1, 2, -1 -> gap 0, sd sqrt(3), half 4.303 x 1 = 4.303 -> inconclusive
    assert first["gap"] == pytest.approx(0.0) and first["high"] == pytest.approx(T975_DF2, abs=1e-5)
    assert first["verdict"] == "inconclusive"
    # round 20: diffs 1, 1.2, 1.4 -> gap 1.2 +- 4.303 x 0.2 / sqrt 3 = 0.4968 -> holds
    assert last["low"] == pytest.approx(1.2 - T975_DF2 * 0.2 / math.sqrt(3), abs=1e-5)
    assert last["verdict"] == "holds"
    # a round some seed did not evaluate is left out; one seed alone gives none
    better[1].pop(10)
    assert [p["round"] for p in trajectory(better, worse, 1, 1.0)] == [20]
    assert trajectory({0: {1: 1.0}}, {0: {1: 0.0}}, 1, 1.0) == []


def test_settles_at_is_the_first_round_from_which_the_verdict_stays():
    points = [{"round": r, "verdict": v} for r, v in
              [(10, "holds"), (20, "inconclusive"), (30, "holds"), (40, "holds"), (50, "holds")]]
    assert settles_at(points) == 30  # holds at 10 but not at 20: settled from 30
    assert settles_at(points[:2]) == 20 and settles_at([]) is None
    assert settles_at([{"round": 5, "verdict": "fails"}, {"round": 6, "verdict": "fails"}]) == 5


def test_settled_shares_count_comparisons_settled_by_each_share_of_the_rounds():
    comparisons = [{"settles_at": 30, "rounds": 300}, {"settles_at": 75, "rounds": 300},
                   {"settles_at": 150, "rounds": 300}, {"settles_at": 300, "rounds": 300}, {"settles_at": None}]
    got = settled_shares(comparisons)
    # 30 <= 30; 75 <= 75; 150 <= 150: 1, 2, 3 of the 4 with a settling round
    assert got == {"n": 4, "shares": {0.10: 0.25, 0.25: 0.5, 0.50: 0.75}}
    assert settled_shares([{"settles_at": None}]) is None


class _Run:
    def __init__(self, accuracies):
        self.rows = [{"round": r, "test_accuracy": a} for r, a in accuracies]

    def read_metrics(self):
        return self.rows


def test_an_accuracy_comparison_reports_settles_at_from_the_logged_curves(monkeypatch):
    config = resolve_config({"method": "fedavg", "scale": "smoke"})  # 4 rounds: window = 4
    a_rounds = {0: [(2, 0.50), (4, 0.62)], 1: [(2, 0.52), (4, 0.60)], 2: [(2, 0.48), (4, 0.64)]}
    b_rounds = {s: [(2, 0.51), (4, 0.51)] for s in range(3)}

    def fake(claim, cell, scale, seeds, store):
        curves = a_rounds if cell["algorithm"] == "A" else b_rounds
        values = {s: 100 * sum(a for _, a in c) / len(c) for s, c in curves.items()}
        return CellValues(values, {s: f"{cell['algorithm']}-{s}" for s in values}, [config],
                          runs={s: _Run(c) for s, c in curves.items()})

    monkeypatch.setattr(claims_module, "cell_values", fake)
    claim = Claim(id="x-claim", paper="fedsam", text="A beats B", quote="", artifacts=("fedsam-table-2",),
                  source="", metric="accuracy", direction="higher",
                  comparisons=(Comparison({"algorithm": "A"}, {"algorithm": "B"}, 70.0, 65.0),),
                  about={"dataset": "cifar10", "model": "cnn"}, main_setting=MAIN)
    (comparison,) = evaluate(claim, "smoke", seeds=[0, 1, 2])["comparisons"]
    # round 2: diffs -1, 1, -3 -> gap -1, sd 2, half 4.97: inconclusive; round 4 (mean of both
    # evaluations): A 56, 56, 56 minus B 51 -> 5, 5, 5 with sd 0 -> holds, as the final verdict
    assert [p["verdict"] for p in comparison["trajectory"]] == ["inconclusive", "holds"]
    assert comparison["trajectory"][0]["gap"] == pytest.approx(-1.0)
    assert comparison["verdict"] == "holds" and comparison["settles_at"] == 4 and comparison["rounds"] == 4


def _result(comparisons):
    return {"id": "x-claim", "paper": "fedsam", "text": "A beats B", "artifacts": ["fedsam-table-2"],
            "verdict": "holds", "metric": "accuracy", "units": "points", "reason": None,
            "summary": "1 of 1 comparison run", "comparisons": comparisons}


def _settled(at, rounds=300, counted_in=None):
    points = [{"round": r, "gap": 1.0, "low": 0.5, "high": 1.5, "verdict": "holds"} for r in (10, rounds)]
    return {"cells": {"better": {"algorithm": "A"}, "worse": {"algorithm": "B"}}, "published": {"gap": 5.0},
            "verdict": "holds", "gap": 1.0, "units": "points", "seeds": [0, 1, 2], "sd": 0.2,
            "sd_from": "paired seeds", "threshold": 0.5, "mde": 0.6, "reason": None, "p": 0.01, "p_holm": 0.02,
            "q": 0.03, "size": {"ratio": 0.2, "interval": [0.1, 0.3]}, "settles_at": at, "rounds": rounds,
            "trajectory": points, "counted_in": counted_in}


def test_the_claims_page_reports_the_settled_shares_and_draws_each_claims_figure(tmp_path):
    from flcore.site.pages import claims_page

    # settled at 20, 60, 200 and 300 of 300 rounds: 1 of 4 by 30 (10 %), 2 by 75, 2 by 150; the
    # comparison counted in another claim is left out of the shares
    results = [_result([_settled(20), _settled(60)]),
               _result([_settled(200), _settled(300), _settled(5, counted_in="y")])]
    page = claims_page(results, tmp_path, "small")
    assert "Over the 4 comparisons at the `small` scale" in page
    assert "| rounds done | 10 % | 25 % | 50 % |" in page and "| verdict already final | 25 % | 50 % | 50 % |" in page
    assert "not a verdict at the paper scale" in page
    assert page.count("<svg ") == 2 and "1. t p 0.01, Holm 0.02, q 0.03, settled at round 20 of 300" in page
    assert "holds; 0.20 x paper's gap [0.10, 0.30]" in page


def test_settling_reads_each_runs_checked_log_from_the_store(tmp_path):
    from flcore.store import RunStore

    store = RunStore(tmp_path / "runs")
    config = resolve_config({"method": "fedavg", "scale": "smoke"})  # 4 rounds
    curves = {("A", 0): [0.50, 0.60, 0.70, 0.72], ("A", 1): [0.52, 0.61, 0.70, 0.70],
              ("A", 2): [0.48, 0.59, 0.71, 0.71], ("B", 0): [0.51, 0.55, 0.60, 0.60],
              ("B", 1): [0.50, 0.56, 0.60, 0.61], ("B", 2): [0.49, 0.54, 0.61, 0.59]}
    runs = {}
    for (name, seed), accuracies in curves.items():
        run = store.create(f"{name.lower()}-{seed}", config.canonical())
        run.append_metrics([{"round": r, "test_accuracy": a} for r, a in enumerate(accuracies, start=1)])
        runs.setdefault(name, {})[seed] = run
    cells = {name: CellValues({s: 0.0 for s in range(3)}, {}, [config], runs=runs[name]) for name in runs}
    claim = Claim(id="x", paper="fedsam", text="A beats B", quote="", artifacts=(), source="", metric="accuracy",
                  direction="higher", comparisons=(), about={}, main_setting=MAIN)
    got = claim_compare._settling(claim, cells["A"], cells["B"], [0, 1, 2], 1.0)
    # round 1 (window 4, one evaluation): diffs -1, 2, -1 -> inconclusive; round 2: (55 - 53),
    # (56.5 - 53), (53.5 - 51.5) = 2, 3.5, 2 -> gap 2.5, sd 0.866, half 2.15 -> holds; and after
    assert [p["verdict"] for p in got["trajectory"]] == ["inconclusive", "holds", "holds", "holds"]
    assert got["trajectory"][1]["gap"] == pytest.approx(2.5) and got["settles_at"] == 2 and got["rounds"] == 4


def test_the_settling_figure_is_one_raw_html_block_with_a_panel_per_trajectory():
    from markdown_it import MarkdownIt

    from flcore.report.settling_figure import settling_svg

    with_points, without = _settled(20), {**_settled(20), "trajectory": []}
    svg = settling_svg([with_points, without, with_points], "x-claim: gap by round")
    assert 'width="440"' in svg and svg.count("<polygon") == 2 and "\n" not in svg
    assert "1. round (of 300)" in svg and "3. round (of 300)" in svg and "2. round" not in svg
    assert [t.type for t in MarkdownIt("commonmark").parse(svg)] == ["html_block"]
    assert settling_svg([without], "none") == ""
