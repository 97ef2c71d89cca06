"""benchmarks/round_time.py runs end to end and prints its JSON contract."""
import json
import math
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "round_time.py"
FIELDS = ("method", "device", "engine", "flcore_rounds_per_s", "reference_rounds_per_s",
          "ratio", "rounds_timed", "threads", "torch_version", "peak_memory_mb")


def test_round_time_json_lines():
    cmd = [sys.executable, str(SCRIPT), "--rounds", "1", "--warmup", "0",
           "--samples-per-client", "64", "--clients-per-round", "2", "--device", "cpu",
           "--json", "--methods", "fedavg,fedsam"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [r["method"] for r in rows] == ["fedavg", "fedsam"]
    for row in rows:
        for field in FIELDS:
            assert field in row, field
        assert row["device"] == "cpu" and row["engine"] in ("sequential", "batched")
        assert row["rounds_timed"] == 1 and row["threads"] >= 1
        assert row["peak_memory_mb"] is None
        assert row["flcore_rounds_per_s"] > 0 and row["reference_rounds_per_s"] > 0
        expected = row["flcore_rounds_per_s"] / row["reference_rounds_per_s"]
        assert math.isclose(row["ratio"], expected, rel_tol=1e-9)
