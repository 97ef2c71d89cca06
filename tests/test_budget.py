"""The small book's estimated training time stays within `make main`'s budget (cost model
calibrated by benchmarks/sweep_time.py), and the cost model's arithmetic."""
from __future__ import annotations

from pathlib import Path

import pytest

from flcore.config import resolve_config
from flcore.planning.planner import run_cost
from flcore.reproduction.book_runs import book_estimate, book_specs
from flcore.reproduction.budget import (
    MAIN_BUDGET_S,
    CostModel,
    calibrate,
    estimate_seconds,
    load_cost_model,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "sweep_time.jsonl"


def test_the_small_book_trains_within_the_make_main_budget():
    model = load_cost_model(RESULTS)
    estimate = book_estimate("small", ROOT, model, cores=2)
    assert estimate["runs"] == len(book_specs("small", ROOT)) > 0
    assert estimate["seconds"] <= MAIN_BUDGET_S, (
        f"the small book's {estimate['runs']} runs ({estimate['groups']} groups) are estimated at "
        f"{estimate['seconds'] / 60:.1f} min of training on 2 cores, over the {MAIN_BUDGET_S // 60} min budget")


def test_the_rate_is_interpolated_between_alone_and_the_benchmarks_group_size():
    model = CostModel(alone=4.0, batched=1.0, batched_runs=7)
    assert model.rate(1) == 4.0 and model.rate(7) == 1.0 and model.rate(20) == 1.0
    assert model.rate(3) == pytest.approx(4.0 - 3.0 * 2 / 6)


def test_calibration_is_core_seconds_over_cost():
    rows = [{"engine": "one-at-a-time", "device": "cpu", "seconds": 100.0, "workers": 2, "cost": 50.0, "group_runs": 1},
            {"engine": "batched", "device": "cpu", "seconds": 20.0, "workers": 2, "cost": 50.0, "group_runs": 6}]
    assert calibrate(rows) == CostModel(alone=4.0, batched=0.8, batched_runs=6)
    with pytest.raises(ValueError, match="batched"):
        calibrate(rows[:1])


def test_estimate_schedules_groups_longest_first_on_the_cores():
    small = {"scale": "smoke", "rounds": 10, "clients": 4, "per_round": 2, "num_samples": 200}
    long_run = {**small, "method": "fedavg", "rounds": 40, "seed": 0}
    short = [{**small, "method": "fedsam", "alpha": a, "seed": 0} for a in (0.0, 1000.0)]
    model = CostModel(alone=1.0, batched=0.5, batched_runs=2)
    long_cost = run_cost(resolve_config(long_run))
    short_cost = run_cost(resolve_config(short[0]))
    # one core: all groups in a row; on two the fedsam pair is split into two groups of one
    one_core = estimate_seconds([long_run, *short], model, cores=1)
    assert one_core == pytest.approx(long_cost + 2 * short_cost * 0.5)
    two_cores = estimate_seconds([long_run, *short], model, cores=2)
    assert two_cores == pytest.approx(max(long_cost, 2 * short_cost))
