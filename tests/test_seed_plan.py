"""The seed plan: each claim comparison's seeds fixed by a power analysis of its variance,
read by the planner and by the verdicts, never by outcomes."""
from __future__ import annotations

import json

import pytest

from flcore.reproduction import seed_plan
from flcore.reproduction.claims import (
    CLAIM_SEEDS,
    METRICS,
    Seeds,
    all_claims,
    cell_specs,
    claim_specs,
    comparison_seeds,
    planned_seeds,
)
from flcore.reproduction.paired import detectable_noncentrality
from flcore.reproduction.seed_plan import CAP, MIN_SEEDS, needed_seeds, planned_from_sd


def test_needed_seeds_is_the_fewest_whose_mde_reaches_the_margin():
    """MDE(n) = noncentrality(df = n - 1) x sd / sqrt(n): 11.55 sd at n = 2, 3.264 sd at 3,
    2.128 sd at 4.  With a margin of 1: sd 0.30 -> 0.98 at n = 3 (3 seeds); sd 0.31 -> 1.01 at
    3, 0.66 at 4 (4 seeds)."""
    assert detectable_noncentrality(2) / 3 ** 0.5 == pytest.approx(3.264, abs=1e-3)
    assert needed_seeds(0.30, 1.0) == 3
    assert needed_seeds(0.31, 1.0) == 4
    assert needed_seeds(0.0, 1.0) == 2
    assert needed_seeds(3.0, 1.0) == 73
    assert needed_seeds(3.0, 1.0, limit=50) is None
    assert needed_seeds(1.0, 0.0) is None


def test_a_comparison_plans_its_need_between_three_and_the_cap():
    assert planned_from_sd(0.30, 3, 1.0).seeds == MIN_SEEDS
    assert planned_from_sd(0.05, 3, 1.0).seeds == MIN_SEEDS and "at least 3" in planned_from_sd(0.05, 3, 1.0).reason
    assert planned_from_sd(0.5, 3, 1.0).seeds == needed_seeds(0.5, 1.0) == 5
    capped = planned_from_sd(3.0, 3, 1.0)
    assert (capped.seeds, capped.needed) == (CAP, 73) and "73 seeds" in capped.reason and "the cap" in capped.reason
    assert planned_from_sd(None, None, 1.0).seeds == CAP


def _first(predicate):
    for claim in all_claims():
        for index in range(len(claim.comparisons)):
            if predicate(claim, index):
                return claim, index
    raise AssertionError("no such comparison")


def test_what_each_kind_of_comparison_plans():
    accuracy, i = _first(lambda c, i: c.metric == "accuracy" and not c.one_seed)
    assert MIN_SEEDS <= planned_seeds(accuracy, i, "small").seeds <= CAP
    assert planned_seeds(accuracy, i, "paper").seeds == planned_seeds(accuracy, i, "smoke").seeds == 1
    censored, j = _first(lambda c, i: METRICS.get(c.metric) is not None and METRICS[c.metric].censored is not None
                         and not c.one_seed)
    assert planned_seeds(censored, j, "small").seeds == CAP
    timed, k = _first(lambda c, i: METRICS.get(c.metric) is not None and METRICS[c.metric].timed)
    assert planned_seeds(timed, k, "small").seeds == seed_plan.OTHER_SEEDS
    one, m = _first(lambda c, i: bool(c.one_seed))
    assert planned_seeds(one, m, "small").seeds == 1
    import dataclasses

    stated = dataclasses.replace(accuracy, seeds=Seeds(4, "a reason"))
    assert (planned_seeds(stated, i, "small").seeds, planned_seeds(stated, i, "small").reason) == (4, "a reason")


def test_the_committed_plan_reads_variances_only_and_covers_every_accuracy_comparison():
    plan = json.loads(seed_plan.PLAN_FILE.read_text())
    assert plan["cap"] == CAP and plan["min_seeds"] == MIN_SEEDS
    keys = set()
    for claim in all_claims():
        metric = METRICS.get(claim.metric)
        if claim.one_seed or metric is None or not metric.accuracy or metric.censored is not None:
            continue
        keys |= {seed_plan.key_of(claim.id, i) for i in range(len(claim.comparisons))}
    assert set(plan["comparisons"]) == keys
    for entry in plan["comparisons"].values():
        assert set(entry) == {"seeds", "reason", "paired_sd", "pairs", "needed"}  # no gap, no p, no verdict
        assert MIN_SEEDS <= entry["seeds"] <= CAP
        if entry["paired_sd"] is not None and entry["needed"] is not None:
            assert entry["seeds"] == min(CAP, max(MIN_SEEDS, entry["needed"]))


def test_the_book_trains_each_comparison_s_planned_seeds():
    """Where the claims train a comparison's cells (their seed-0 runs are among the runs the
    claims add), they train every seed the comparison plans; and no run of the claims has a
    seed beyond what some comparison reading its cell (or its metric's companion run) reads:
    a comparison's two cells train the same seeds, the most any comparison linked to them
    plans (``comparison_seeds``)."""
    assert CLAIM_SEEDS["small"] == tuple(range(CAP))
    added = {spec.run_id(): spec for spec in claim_specs("small")}
    most: dict[tuple, int] = {}
    checked = 0
    for claim in all_claims():
        metric = METRICS.get(claim.metric)
        if claim.one_seed or metric is None or not metric.seeded or metric.by_construction or metric.timed:
            continue
        for i, comparison in enumerate(claim.comparisons):
            n = planned_seeds(claim, i, "small").seeds
            reads = len(comparison_seeds(claim, i, "small"))
            assert reads >= n
            cells = [cell_specs(claim, cell, "small", tuple(range(CAP)))[0] for cell in comparison.cells_at("small")]
            if not all(cells) or not all(s.run_id() in added for specs in cells for s in specs if _seed(s) == 0):
                continue
            checked += 1
            for specs in cells:
                assert {_seed(s) for s in specs if s.run_id() in added} >= set(range(n)), (claim.id, i)
                for spec in specs:
                    for read in [spec, *(metric.companions(spec) if metric.companions else [])]:
                        most[_cell(read)] = max(most.get(_cell(read), 1), reads)
    assert checked > 50
    for spec in added.values():  # timed twins: the timed claims left out above train their own seeds
        if _cell(spec) in most and not spec.config.get("timed"):
            assert _seed(spec) < most[_cell(spec)], spec.labels


def _seed(spec) -> int:
    return int(spec.labels.get("seed", spec.config.get("seed", 0)))


def _cell(spec) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in spec.config.items() if k != "seed"))


def test_the_seeds_page_is_the_plan_rendered():
    from pathlib import Path

    from flcore.report.seed_plan_page import page

    committed = Path(__file__).resolve().parents[1] / "book" / "reference" / "seeds.md"
    assert committed.read_text(encoding="utf-8") == page(), \
        "run python -m flcore.report.seed_plan_page > book/reference/seeds.md"
    assert "| 6 |" in page() and "seeds for 80 % power" in page()
