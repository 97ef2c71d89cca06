"""Rounds to a target accuracy and the communication they cost, on hand-made curves."""
import math

import pandas as pd
import pytest

from flcore.reproduction.targets import (
    accuracy_curve,
    bits_exchanged,
    communication_cost,
    cost_row,
    relative_bits,
    rounds_to_target,
    speedup,
    transmissions_per_round,
)

# Evaluated every 2 rounds; round 3 has no evaluation (None), round 5 a NaN.
ROWS = [{"round": 1, "test_accuracy": 0.10}, {"round": 2, "test_accuracy": 0.30},
        {"round": 3, "test_accuracy": None}, {"round": 4, "test_accuracy": 0.55},
        {"round": 5, "test_accuracy": float("nan")}, {"round": 6, "test_accuracy": 0.50},
        {"round": 8, "test_accuracy": 0.70}]


def test_first_crossing_not_final_value():
    # 0.55 is first reached at round 4 although the curve dips below it again at round 6.
    assert rounds_to_target(ROWS, 0.55) == 4
    assert rounds_to_target(ROWS, 0.56) == 8
    assert rounds_to_target(ROWS, 0.10) == 1
    assert rounds_to_target(ROWS, 0.71) is None


def test_curve_shapes_agree():
    frame = pd.DataFrame(ROWS)
    pairs = [(r["round"], r["test_accuracy"]) for r in ROWS]
    shuffled = list(reversed(ROWS))
    for curve in (frame, pairs, shuffled):
        assert rounds_to_target(curve, 0.5) == 4
    assert accuracy_curve(frame) == [(1, 0.1), (2, 0.3), (4, 0.55), (6, 0.5), (8, 0.7)]


def test_bad_input():
    with pytest.raises(ValueError, match="target"):
        rounds_to_target(ROWS, float("nan"))
    with pytest.raises(ValueError, match="columns"):
        rounds_to_target(pd.DataFrame({"round": [1]}), 0.5)


def test_transmissions_from_registry():
    # FedGF Table 3 / FedGloSS Table 2: FedAvg and FedGloSS 2, SCAFFOLD, FedSMOO and NaiveFedGloSS 4.
    assert transmissions_per_round("fedavg") == 2
    assert transmissions_per_round("fedgloss-sam") == 2
    assert transmissions_per_round("fedsmoo") == 4
    assert transmissions_per_round("scaffold") == 4
    assert transmissions_per_round("naivefedgloss") == 4


def test_cost_bits_and_speedup_by_hand():
    # T = 1000 rounds; FedSMOO reaches FedAvg's accuracy at round 200: speed-up 5x,
    # cost 200 x 4 = 800 vectors, relative bits 800 / (1000 x 2) = 0.4 B (FedGloSS Table 5's 0.4).
    assert speedup(1000, 200) == 5.0
    assert communication_cost(200, "fedsmoo") == 800
    assert relative_bits(200, "fedsmoo", 1000) == pytest.approx(0.4)
    assert bits_exchanged(200, "fedsmoo", model_parameters=10) == 800 * 10 * 32
    assert bits_exchanged(200, "fedsmoo", model_parameters=10, clients_per_round=5) == 5 * 800 * 10 * 32
    # FedAvg reaching its own accuracy at T costs exactly B.
    assert relative_bits(1000, "fedavg", 1000) == 1.0
    for fn in (lambda: speedup(10, None), lambda: communication_cost(None, "fedavg"),
               lambda: relative_bits(None, "fedavg", 10), lambda: bits_exchanged(None, "fedavg", 5)):
        assert fn() is None
    with pytest.raises(ValueError, match="rounds"):
        speedup(10, 0)


def test_cost_row():
    row = cost_row(ROWS, 0.55, "fedsmoo", total_rounds=8)
    assert row == {"rounds": 4, "speedup": 2.0, "cost": 16, "relative_bits": 1.0}
    never = cost_row(ROWS, 0.9, "fedavg", total_rounds=8)
    assert never == {"rounds": None, "speedup": None, "cost": None, "relative_bits": None}
    assert not math.isnan(cost_row(ROWS, 0.1, "fedavg", 8)["relative_bits"])
