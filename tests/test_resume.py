"""A run killed with SIGKILL mid-way and resumed ends exactly as an uninterrupted run."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

#: Over 30 s as a whole file (``make test-fast`` leaves it out).
pytestmark = pytest.mark.slow

ARGS = ["-m", "flcore", "run", "--scale", "smoke", "--method", "fedsam", "--rounds", "60",
        "--checkpoint-every", "10", "--eval-every", "5", "--eval-last", "20", "--no-progress", "--json"]


def _env():
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "1"  # same reduction order in every process
    env["MKL_NUM_THREADS"] = "1"
    return env


def _status(run_dir: Path) -> dict:
    try:
        return json.loads((run_dir / "status.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    root = tmp_path_factory.mktemp("full")
    full = subprocess.run([sys.executable, *ARGS, "--store", str(root)],
                          capture_output=True, text=True, env=_env(), timeout=600, check=True)
    return root, json.loads(full.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGINT"])
def test_interrupt_then_resume_equals_uninterrupted(tmp_path, uninterrupted, sig):
    """SIGKILL (a crash) and SIGINT (Ctrl-C) lose at most the rounds since the last
    checkpoint; rerunning the command finishes the run exactly as if never stopped."""
    full_root, expected = uninterrupted

    store = tmp_path / "killed"
    # an ignored SIGINT is inherited (a shell's background job starts with it ignored, and
    # so may the test process); give the run a terminal's disposition, where Ctrl-C arrives
    proc = subprocess.Popen([sys.executable, *ARGS, "--store", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    run_dir = store / expected["run_id"]
    deadline = time.time() + 300
    while time.time() < deadline:
        done = _status(run_dir).get("rounds_done", 0)
        if 20 <= done:
            break
        if proc.poll() is not None:
            pytest.fail("the run finished before it could be killed")
        time.sleep(0.01)
    proc.send_signal(getattr(signal, sig))
    code = proc.wait()
    killed_at = _status(run_dir)
    assert killed_at["rounds_done"] < 60
    if sig == "SIGINT":
        assert code == 130 and killed_at["status"] == "interrupted"
    else:
        assert killed_at["status"] == "running"

    resumed = subprocess.run([sys.executable, *ARGS, "--store", str(store)],
                             capture_output=True, text=True, env=_env(), timeout=600, check=True)
    got = json.loads(resumed.stdout.strip().splitlines()[-1])
    for key in ("status", "rounds_done", "final_accuracy", "mean_last_100", "best_accuracy"):
        assert got[key] == expected[key], key
    metrics_full = (full_root / expected["run_id"] / "metrics.jsonl").read_text()
    metrics_resumed = (run_dir / "metrics.jsonl").read_text()
    assert metrics_resumed == metrics_full
    import torch

    a = torch.load(full_root / expected["run_id"] / "final_model.pt", weights_only=False)
    b = torch.load(run_dir / "final_model.pt", weights_only=False)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
