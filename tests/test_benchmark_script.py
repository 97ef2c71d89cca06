"""benchmarks/round_time.py runs end to end and prints its JSON contract."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

#: Over 30 s as a whole file (``make test-fast`` leaves it out).
pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "round_time.py"
FIELDS = ("method", "device", "engine", "flcore_rounds_per_s", "reference_rounds_per_s",
          "ratio", "rounds_timed", "threads", "torch_version", "peak_memory_mb",
          "reference_retained_rounds_per_s", "ratio_vs_retained_reference", "flcore_test_eval_s",
          "flcore_client_eval_s", "reference_eval_s", "flcore_protocol_s", "reference_protocol_s",
          "protocol_ratio", "round_gflop", "peak_gflops", "floor_s_per_round", "over_floor")


def test_round_time_json_lines():
    cmd = [sys.executable, str(SCRIPT), "--rounds", "1", "--warmup", "0", "--clients", "4",
           "--samples-per-client", "64", "--clients-per-round", "2", "--test-samples", "100",
           "--protocol-rounds", "300", "--device", "cpu", "--json", "--methods", "fedavg,fedsam"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [r["method"] for r in rows] == ["fedavg", "fedsam"]
    for row in rows:
        for field in FIELDS:
            assert field in row, field
        assert row["device"] == "cpu" and row["engine"] == "sequential"
        assert row["rounds_timed"] == 1 and row["threads"] >= 1
        assert row["peak_memory_mb"] is None
        assert row["flcore_rounds_per_s"] > 0 and row["reference_rounds_per_s"] > 0
        assert math.isclose(row["ratio"], row["flcore_rounds_per_s"] / row["reference_rounds_per_s"], rel_tol=1e-9)
        # 300 rounds, evaluated every 100 and every round of the last 100: rounds 100, 200
        # and 201..300; the per-client accuracy at 100, 200 and 300
        assert row["protocol_evaluations"] == 102 and row["protocol_client_evaluations"] == 3
        flcore = (300 / row["flcore_rounds_per_s"] + 102 * row["flcore_test_eval_s"]
                  + 3 * row["flcore_client_eval_s"])
        reference = 300 / row["reference_rounds_per_s"] + 102 * row["reference_eval_s"]
        assert math.isclose(row["flcore_protocol_s"], flcore, rel_tol=1e-9)
        assert math.isclose(row["protocol_ratio"], reference / flcore, rel_tol=1e-9)
        assert math.isclose(row["over_floor"], row["flcore_s_per_round"] / row["floor_s_per_round"], rel_tol=1e-9)
    # 2 clients x 64 samples.  Per image, by hand: forward 29,386,496 FLOPs (conv1
    # 28*28*64*75*2, conv2 10*10*64*1600*2, fc 1600*384*2 + 384*192*2 + 192*10*2);
    # backward 51,246,592 (conv1's weight gradient only, the input needs none; conv2's
    # input and weight gradients; twice each fc); SAM makes two passes.
    assert math.isclose(rows[0]["round_gflop"], 2 * 64 * 80.633088e6 / 1e9, rel_tol=1e-6)
    assert math.isclose(rows[1]["round_gflop"], 2 * rows[0]["round_gflop"], rel_tol=1e-9)


def test_round_time_rejects_unknown_engine():
    done = subprocess.run([sys.executable, str(SCRIPT), "--engine", "fast"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "--engine" in done.stderr and "sequential" in done.stderr
