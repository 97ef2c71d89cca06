"""benchmarks/sweep_time.py's gradient ceiling: the kernel it times is the one each way trains with."""
import importlib.util
import json
import multiprocessing
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("sweep_time", ROOT / "benchmarks" / "sweep_time.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["sweep_time"] = module
    spec.loader.exec_module(module)
    return module


CONFIG = {"method": "fedavg", "dataset": "mnist1d", "scale": "smoke", "rounds": 1}


@pytest.mark.parametrize("engine", ["one-at-a-time", "batched"])
def test_gradient_timing_reports_milliseconds_per_client_step(engine, monkeypatch):
    """On a CPU both ways take the row kernel (the engine ``auto`` picks for the MNIST-1D CNN)."""
    sweep = _script()
    calls = []
    from flcore.models.row_kernels import RowKernel

    real = RowKernel.loss_and_grad

    def spy(self, W, x, y, weight):
        calls.append((W.shape[0], tuple(x.shape)))
        return real(self, W, x, y, weight)

    monkeypatch.setattr(RowKernel, "loss_and_grad", spy)
    parent, child = multiprocessing.Pipe()
    threads = torch.get_num_threads()
    try:
        sweep.time_gradient(engine, CONFIG, clients=6, device="cpu", out=child, steps=3)
    finally:
        torch.set_num_threads(threads)
    ms, peak = parent.recv()
    assert ms > 0 and peak is None
    # 5 warm-up calls and 3 timed ones, 6 clients of the MNIST-1D presets' batch of 20
    # signals of length 40
    assert calls == [(6, (6, 20, 40))] * 8


def test_the_performance_page_shows_the_gradient_ceiling(tmp_path):
    from flcore.report.performance import render_performance

    rows = ('{"engine": "one-at-a-time", "device": "cpu", "runs": 24, "runs_per_s": 0.1, "ratio": 1.0, '
            '"gradient_ms_per_client_step": 1.5, "gradient_ratio": 1.0, "gradient_share": 0.5, "ratio_ceiling": 2.0, '
            '"machine": "CPU, 2 cores"}\n'
            '{"engine": "batched", "device": "cpu", "runs": 24, "runs_per_s": 0.25, "ratio": 2.5, '
            '"gradient_ms_per_client_step": 0.5, "gradient_ratio": 3.0, "gradient_share": 0.9, "ratio_ceiling": 6.0, '
            '"machine": "CPU, 2 cores"}\n')
    (tmp_path / "round_time.jsonl").write_text("")
    (tmp_path / "sweep_time.jsonl").write_text(rows)
    page = render_performance(tmp_path / "round_time.jsonl")
    assert "| batched | CPU, 2 cores | 24 |  |  | 0.2500 | 2.50 |  | 0.500 | 3.00 | 90% | 6.00 |  |  |" in page


def test_gradient_share_and_ceiling_by_hand():
    sweep = _script()
    # 1,000 gradient evaluations of 2 ms on 2 workers: 1 s of wall time in gradients
    out = sweep.gradient_fields(cost=1000, gradient_ms=2.0, seconds=4.0, workers=2, base_seconds=10.0)
    assert out == {"gradient_share": 0.25, "ratio_ceiling": 10.0}


def test_the_performance_page_shows_how_long_after_import_training_starts(tmp_path):
    from flcore.report.performance import render_performance

    row = {"cache": "warm", "device": "cpu", "machine": "CPU, 2 cores", "num_train": 50000, "import_s": 2.5,
           "data_s": 0.75, "simulation_s": 0.05, "to_first_round_s": 3.3, "first_round_s": 1.0, "date": "2026-11-26"}
    (tmp_path / "round_time.jsonl").write_text("")
    (tmp_path / "startup.jsonl").write_text(json.dumps(row) + "\n")
    page = render_performance(tmp_path / "round_time.jsonl")
    # after import = data + simulation = 0.80 s; import to the first round 3.30 s
    assert "| warm | CPU, 2 cores | 50,000 | 2.50 | 0.75 | 0.05 | 0.80 | 3.30 | 1.00 | 2026-11-26 |" in page
    (tmp_path / "startup.jsonl").unlink()
    assert "## Start-up" not in render_performance(tmp_path / "round_time.jsonl")
