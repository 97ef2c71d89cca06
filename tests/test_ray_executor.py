"""The Ray executor on a real local cluster: a head node on 127.0.0.1 plus one worker node
process, one CPU each.  ``flcore reproduce --executor ray`` builds the same store records
as the local executor; a worker killed mid-run is retried and the run's record equals an
uninterrupted run's; a run that raises is stored failed and the others finish.  The
cluster is stopped at the end, even on failure."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from flcore.api import run_experiment
from flcore.executors.local_cluster import LocalRayCluster
from flcore.experiments.artifacts import RunSpec, runs_for
from flcore.experiments.runner import ensure_runs
from flcore.store import RunStore

from test_executors import _record, _same_records

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
OVERRIDES = {"device": "cpu", "data_root": None, "download": None}


@pytest.fixture(scope="module")
def cluster_env(tmp_path_factory):
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           "FLCORE_CACHE": str(tmp_path_factory.mktemp("ray-cache"))}
    return env


@pytest.fixture(scope="module")
def cluster(cluster_env):
    cluster = LocalRayCluster(worker_nodes=1, cpus_per_node=1, env=cluster_env)
    try:
        cluster.start()
        yield cluster
    finally:
        import ray

        if ray.is_initialized():
            ray.shutdown()
        cluster.stop()
        assert cluster.processes() == []


@pytest.fixture(scope="module")
def executor(cluster):
    from flcore.executors.ray_executor import RayExecutor

    executor = RayExecutor(address=cluster.address, device="cpu")
    executor.connect()
    yield executor
    executor.shutdown()


def test_reproduce_with_ray_builds_the_local_executors_records(cluster, cluster_env, tmp_path):
    root = tmp_path / "root"
    notebook = REPO / "notebooks" / "fedsam" / "fedsam-table-2.ipynb"
    (root / "notebooks" / "fedsam").mkdir(parents=True)
    shutil.copy(notebook, root / "notebooks" / "fedsam" / notebook.name)
    command = [sys.executable, "-m", "flcore", "reproduce", "fedsam-table-2", "--scale", "smoke",
               "--executor", "ray", "--address", cluster.address, "--store", str(tmp_path / "ray-store"),
               "--root", str(root)]
    done = subprocess.run(command, env={**os.environ, **cluster_env}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 ok, 0 failed" in done.stdout and "Ray at 127.0.0.1" in done.stdout
    assert (root / "book" / "artifacts" / "fedsam" / "fedsam-table-2.ipynb").is_file()

    specs = runs_for(["fedsam-table-2"], "smoke", [0])
    local = ensure_runs(specs, store=tmp_path / "local-store", workers=1, log=None)
    run_ids = sorted(set(local["run_id"].dropna()))
    assert RunStore(tmp_path / "ray-store").run_ids() == run_ids and len(run_ids) == 21
    for run_id in run_ids:
        _same_records(_record(tmp_path / "ray-store", run_id), _record(tmp_path / "local-store", run_id))


def _task_workers(cluster) -> list[int]:
    """Worker processes of the cluster executing a training task right now."""
    found = []
    for pid in cluster.processes():
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::_train_group_task"):
                found.append(pid)
        except OSError:
            pass
    return found


def test_a_worker_killed_mid_run_is_retried_and_ends_with_the_uninterrupted_record(cluster, executor, tmp_path):
    spec = RunSpec({"algorithm": "FedAvg"}, {"method": "fedavg", "scale": "smoke", "rounds": 60,
                                              "checkpoint_every": 2})
    store = tmp_path / "store"
    store.mkdir()
    run_id = spec.run_id(**OVERRIDES)
    out: dict = {}
    worker = threading.Thread(target=lambda: out.update(dict(executor.map_groups([[spec]], str(store), OVERRIDES))))
    worker.start()
    run = RunStore(store).run(run_id)
    killed = None
    deadline = time.monotonic() + 240
    while killed is None and time.monotonic() < deadline and worker.is_alive():
        status = run.status()
        if status["status"] == "running" and status["rounds_done"] >= 4:
            pids = _task_workers(cluster)
            if pids:
                assert len(pids) == 1
                os.kill(pids[0], signal.SIGKILL)
                killed = status["rounds_done"]
        time.sleep(0.02)
    worker.join(timeout=300)
    assert killed is not None and killed < 60, "the run ended before a worker could be killed"
    assert out[0][0]["status"] == "finished" and out[0][0]["run_id"] == run_id

    reference = tmp_path / "uninterrupted"
    run_experiment(spec.resolve(**OVERRIDES), store=reference)
    _same_records(_record(store, run_id), _record(reference, run_id))


def test_a_raising_run_is_stored_failed_and_the_others_finish(executor, tmp_path, capsys):
    bad = RunSpec({"algorithm": "broken"}, {"method": "fedavg", "dataset": "cifar10", "scale": "smoke",
                                             "data_root": str(tmp_path / "no-data"), "download": False})
    good = RunSpec({"algorithm": "FedAvg"}, {"method": "fedavg", "scale": "smoke"})
    frame = ensure_runs([bad, good], store=tmp_path / "store", device="cpu", executor=executor,
                        raise_on_failure=False, log=None, progress=True)
    assert frame["status"].tolist() == ["failed", "finished"]
    err = capsys.readouterr().err
    assert "2/2" in err and "broken" in err  # one bar over all runs; the failure printed above it
    status = RunStore(tmp_path / "store").run(frame["run_id"][0]).status()
    assert status["status"] == "failed" and "Traceback" in status["traceback"]
    assert "no-data" in frame["error"][0]


def test_cluster_overhead_benchmark_prints_its_rows(cluster, cluster_env):
    script = REPO / "benchmarks" / "cluster_overhead.py"
    command = [sys.executable, str(script), "--json", "--runs", "1", "--address", cluster.address]
    done = subprocess.run(command, env={**os.environ, **cluster_env}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["executor"] for r in rows] == ["local", "ray"]
    assert all(r["runs"] == 1 and r["wall_s"] > 0 and r["parallel"] == 2 for r in rows)
    assert rows[0]["overhead_per_run_s"] == 0.0 and rows[1]["equal_records"] is True
    assert rows[1]["overhead_per_run_s"] == pytest.approx(rows[1]["wall_s"] - rows[0]["wall_s"], abs=0.01)
