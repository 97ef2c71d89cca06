"""The Ray executor on a real local cluster: a head node on 127.0.0.1 plus one worker node
process, one CPU each.  ``flcore reproduce --executor ray`` builds the same store records
as the local executor; a worker killed mid-run is retried and the run's record equals an
uninterrupted run's; a run that raises is stored failed and the others finish.  The
cluster is stopped at the end, even on failure.

Ray's servers listen on every interface even when told 127.0.0.1, so the cluster and
every driver that talks to it (each run as a subprocess through ``cluster.command``) live
in a private network namespace that has only the loopback interface (``ip netns``, needs
root).  Where it cannot be made these tests are skipped, loudly, except in CI (``CI``
set), where they fail."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pytest
from test_executors import _record, _same_records

from flcore.api import run_experiment
from flcore.executors.local_cluster import LocalRayCluster, NetnsUnavailable, listening_sockets
from flcore.reproduction.artifacts import RunSpec, runs_for
from flcore.reproduction.claims import spread_specs
from flcore.reproduction.runner import ensure_runs
from flcore.store import RunStore

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
OVERRIDES = {"device": "cpu", "data_root": None, "download": None}
SKIPPED = "the Ray tests did not run"
LOOPBACK = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}
WILDCARD = {"*", "0.0.0.0", "::"}  # inside a namespace with only lo these reach nothing else

# A driver process: connects a RayExecutor to the cluster and prints what it returns as JSON.
DRIVER = """
import json, sys
from flcore.executors.ray_executor import RayExecutor
from flcore.reproduction.artifacts import RunSpec
from flcore.reproduction.runner import ensure_runs
job = json.loads(sys.argv[1])
specs = [RunSpec(**spec) for spec in job["specs"]]
executor = RayExecutor(address=job["address"], device="cpu")
executor.connect()
if job["call"] == "map_groups":
    result = dict(executor.map_groups([specs], job["store"], job["overrides"]))[0]
else:
    frame = ensure_runs(specs, store=job["store"], device="cpu", executor=executor, raise_on_failure=False,
                        log=None, progress=True)
    result = frame[["status", "run_id", "error"]].to_dict(orient="records")
executor.shutdown()
print("RESULT " + json.dumps(result))
"""


@pytest.fixture(scope="module")
def cluster_env(tmp_path_factory):
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           "FLCORE_CACHE": str(tmp_path_factory.mktemp("ray-cache")),
           # the namespace is the fence: a token a local ray.init once left in ~/.ray (Ray >= 2.5x
           # writes one) must not make this cluster and its drivers disagree
           "RAY_AUTH_MODE": "disabled"}
    return env


@pytest.fixture(scope="module")
def cluster(cluster_env):
    cluster = LocalRayCluster(worker_nodes=1, cpus_per_node=1, env=cluster_env, netns=True)
    try:
        try:
            cluster.start()
        except NetnsUnavailable as exc:
            reason = f"no private network namespace for the Ray cluster ({exc}): {SKIPPED}"
            if os.environ.get("CI"):
                pytest.fail(f"CI runs as root with iproute2: {reason}")
            pytest.skip(reason)
        yield cluster
    finally:
        cluster.stop()
        assert cluster.processes() == []
        assert cluster.netns not in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                                   text=True).stdout


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_without_the_right_to_make_a_namespace_start_says_why_and_leaves_nothing_behind():
    probe = ("from flcore.executors.local_cluster import LocalRayCluster, NetnsUnavailable\n"
             "import os\n"
             "cluster = LocalRayCluster(netns=True)\n"
             "try:\n"
             "    cluster.start()\n"
             "except NetnsUnavailable as exc:\n"
             "    print('unavailable:', exc)\n"
             "print('left:', os.path.exists(cluster.temp_dir), cluster.processes(), cluster.netns)\n")
    no_sys_admin = ["setpriv", "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin"]
    done = subprocess.run([*no_sys_admin, sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "unavailable: ip netns add flray-" in done.stdout and "not permitted" in done.stdout
    name = done.stdout.split()[-1]
    assert f"left: False [] {name}" in done.stdout
    assert name not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def _driver(cluster, cluster_env, call: str, specs: list[RunSpec], store: Path) -> subprocess.Popen:
    """Start a driver process inside the cluster's namespace (see ``DRIVER``)."""
    job = {"address": cluster.address, "call": call, "specs": [asdict(spec) for spec in specs],
           "store": str(store), "overrides": OVERRIDES}
    return subprocess.Popen(cluster.command([sys.executable, "-c", DRIVER, json.dumps(job)]),
                            env={**os.environ, **cluster_env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _result(driver: subprocess.Popen, timeout: float = 300):
    out, err = driver.communicate(timeout=timeout)
    assert driver.returncode == 0, out[-3000:] + err[-3000:]
    return json.loads(out.split("RESULT ", 1)[1]), err


@pytest.mark.extended
def test_reproduce_with_ray_builds_the_local_executors_records(cluster, cluster_env, tmp_path):
    root = tmp_path / "root"
    notebook = REPO / "notebooks" / "fedgloss" / "fedgloss-fig-1.ipynb"
    (root / "notebooks" / "fedgloss").mkdir(parents=True)
    shutil.copy(notebook, root / "notebooks" / "fedgloss" / notebook.name)
    command = [sys.executable, "-m", "flcore", "reproduce", "fedgloss-fig-1", "--scale", "smoke",
               "--executor", "ray", "--address", cluster.address, "--store", str(tmp_path / "ray-store"),
               "--root", str(root)]
    done = subprocess.run(cluster.command(command), env={**os.environ, **cluster_env}, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 ok, 0 failed" in done.stdout and "Ray at 127.0.0.1" in done.stdout
    assert (root / "book" / "artifacts" / "fedgloss" / "fedgloss-fig-1.ipynb").is_file()

    specs = runs_for(["fedgloss-fig-1"], "smoke", [0]) + spread_specs("smoke")  # what reproduce trains
    # the same groups as the cluster's two CPUs make (batched runs equal alone to float
    # tolerance; the same groups give the same bits)
    local = ensure_runs(specs, store=tmp_path / "local-store", workers=2, log=None)
    run_ids = sorted(set(local["run_id"].dropna()))
    assert RunStore(tmp_path / "ray-store").run_ids() == run_ids
    assert len(run_ids) == 12  # the claims' 12 seed-spread runs, the figure's 2 among them
    for run_id in run_ids:
        _same_records(_record(tmp_path / "ray-store", run_id), _record(tmp_path / "local-store", run_id))


def test_the_cluster_listens_on_loopback_only_inside_its_namespace(cluster):
    interfaces = subprocess.run(cluster.command(["ip", "-o", "link"]), capture_output=True, text=True,
                                check=True).stdout
    assert [line.split(":")[1].strip() for line in interfaces.splitlines()] == ["lo"]
    ours = set(cluster.processes())
    inside = cluster.listening()
    assert cluster.port in {port for _, port, _ in inside}  # the GCS server
    assert {pid for _, _, pids in inside for pid in pids} & ours  # the raylets, agents, workers
    assert {address for address, _, _ in inside} <= LOOPBACK | WILDCARD, inside
    assert not [entry for entry in listening_sockets() if entry[2] & ours]  # nothing outside
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(("127.0.0.1", cluster.port))  # the GCS port is closed outside the namespace


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


@pytest.mark.extended
def test_a_worker_killed_mid_run_is_retried_and_ends_with_the_uninterrupted_record(cluster, cluster_env,
                                                                                     tmp_path):
    spec = RunSpec({"algorithm": "FedAvg"}, {"method": "fedavg", "scale": "smoke", "rounds": 60,
                                              "checkpoint_every": 2})
    store = tmp_path / "store"
    store.mkdir()
    run_id = spec.run_id(**OVERRIDES)
    driver = _driver(cluster, cluster_env, "map_groups", [spec], store)
    run = RunStore(store).run(run_id)
    killed = None
    deadline = time.monotonic() + 240
    while killed is None and time.monotonic() < deadline and driver.poll() is None:
        status = run.status()
        if status["status"] == "running" and status["rounds_done"] >= 4:
            pids = _task_workers(cluster)
            if pids:
                assert len(pids) == 1
                os.kill(pids[0], signal.SIGKILL)  # process ids are shared across network namespaces
                killed = status["rounds_done"]
        time.sleep(0.02)
    result, _ = _result(driver, timeout=600)  # the retry starts a new worker (torch's import) on a busy machine
    assert killed is not None and killed < 60, "the run ended before a worker could be killed"
    assert result[0]["status"] == "finished" and result[0]["run_id"] == run_id

    reference = tmp_path / "uninterrupted"
    run_experiment(spec.resolve(**OVERRIDES), store=reference)
    _same_records(_record(store, run_id), _record(reference, run_id))


def test_a_raising_run_is_stored_failed_and_the_others_finish(cluster, cluster_env, tmp_path):
    bad = RunSpec({"algorithm": "broken"}, {"method": "fedavg", "dataset": "cifar10", "scale": "smoke",
                                             "data_root": str(tmp_path / "no-data"), "download": False})
    good = RunSpec({"algorithm": "FedAvg"}, {"method": "fedavg", "scale": "smoke"})
    frame, err = _result(_driver(cluster, cluster_env, "ensure_runs", [bad, good], tmp_path / "store"))
    assert [row["status"] for row in frame] == ["failed", "finished"]
    assert "2/2" in err and "broken" in err  # one bar over all runs; the failure printed above it
    status = RunStore(tmp_path / "store").run(frame[0]["run_id"]).status()
    assert status["status"] == "failed" and "Traceback" in status["traceback"]
    assert "no-data" in frame[0]["error"]


def test_the_clusters_workers_run_at_the_normal_priority(cluster, cluster_env):
    """Ray's default worker niceness (15) starves its tasks on a busy machine (minutes for
    an ``import torch`` beside a test suite); the local cluster's workers run at 0."""
    probe = ("import os, ray\n"
             f"ray.init(address={cluster.address!r}, log_to_driver=False)\n"
             "print('NICE', ray.get(ray.remote(num_cpus=1)(lambda: os.nice(0)).remote()))\n")
    done = subprocess.run(cluster.command([sys.executable, "-c", probe]), env={**os.environ, **cluster_env},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "NICE 0" in done.stdout


@pytest.mark.extended
def test_cluster_overhead_benchmark_prints_its_rows(cluster, cluster_env):
    script = REPO / "benchmarks" / "cluster_overhead.py"
    command = [sys.executable, str(script), "--json", "--runs", "1", "--address", cluster.address]
    done = subprocess.run(cluster.command(command), env={**os.environ, **cluster_env}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["executor"] for r in rows] == ["local", "ray"]
    assert all(r["runs"] == 1 and r["wall_s"] > 0 and r["parallel"] == 2 for r in rows)
    assert rows[0]["overhead_per_run_s"] == 0.0 and rows[1]["equal_records"] is True
    assert rows[1]["overhead_per_run_s"] == pytest.approx(rows[1]["wall_s"] - rows[0]["wall_s"], abs=0.01)
