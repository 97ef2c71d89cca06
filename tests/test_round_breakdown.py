"""benchmarks/round_breakdown.py: the convolutions' FLOPs by hand, and a row whose parts add
up to the measured round."""
import argparse
import math
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import round_breakdown  # noqa: E402

SMALL = {"device": "cpu", "threads": None, "clients": 4, "clients_per_round": 2,
         "samples_per_client": 64, "test_samples": 100, "chunk_size": None}


def test_conv_gflop_by_hand():
    # Per image: conv1 forward 28*28*64*75*2 and its weight gradient as much again (the
    # input needs no gradient); conv2 forward 10*10*64*1600*2, its input and weight
    # gradients twice that.  2 clients x 64 images; SAM evaluates two gradients per step.
    per_image = 2 * (28 * 28 * 64 * 75 * 2) + 3 * (10 * 10 * 64 * 1600 * 2)
    assert math.isclose(round_breakdown.conv_gflop("fedavg", SMALL), 128 * per_image / 1e9, rel_tol=1e-9)
    assert math.isclose(round_breakdown.conv_gflop("fedsam", SMALL), 2 * 128 * per_image / 1e9, rel_tol=1e-9)


@pytest.mark.slow
def test_breakdown_row_adds_up():
    args = argparse.Namespace(rounds=1)
    row = round_breakdown.breakdown("fedavg", args, SMALL, (100.0, "matmul"))
    parts = sum(row[f"{c}_s"] for c in ("convolution", "linear", "pooling", "other"))
    assert math.isclose(parts, row["flcore_s_per_round"], rel_tol=1e-9)
    assert row["convolution_s"] > 0 and row["pooling_s"] > 0 and row["linear_s"] > 0
    assert math.isclose(row["ratio"], row["reference_s_per_round"] / row["flcore_s_per_round"], rel_tol=1e-9)
    assert math.isclose(row["left_for_the_rest_s"], row["reference_s_per_round"] / 2 - row["convolution_s"],
                        rel_tol=1e-9)
    assert math.isclose(row["conv_floor_s"], row["conv_gflop"] / 100.0, rel_tol=1e-9)
    assert row["threads"] == torch.get_num_threads()


def test_rejects_unknown_method(capsys):
    with pytest.raises(SystemExit) as exc:
        round_breakdown.parse_args(["--methods", "fedprox"])
    assert exc.value.code == 2 and "--methods" in capsys.readouterr().err
