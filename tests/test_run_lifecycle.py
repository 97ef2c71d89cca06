"""One run lifecycle (flcore.store.lifecycle) for every writer of runs: a single run
(flcore.api.run_experiment), a group (flcore.planning.planner.train_group) and the
executors (flcore.executors.groups.train_specs) -- failures recorded under the run's lock,
no folder left where nothing was recorded, every lock released."""
from __future__ import annotations

import subprocess
import sys

import pytest

from flcore.api import run_experiment
from flcore.config import resolve_config
from flcore.executors import LocalExecutor
from flcore.executors.groups import record_failure, train_specs
from flcore.planning import planner
from flcore.planning.planner import RunGroup, train_group
from flcore.reproduction.artifacts import RunSpec
from flcore.store import RunLifecycle, RunLock, RunStore, run_lifecycle
from flcore.store.lock import LOCK_FILE
from flcore.store.run import Run

SMOKE = {"method": "fedavg", "scale": "smoke", "rounds": 2, "clients": 4, "per_round": 2, "num_samples": 200,
         "eval_every": 1, "device": "cpu"}
OVERRIDES = {"device": "cpu", "data_root": None, "download": None}


def _spec(seed: int = 0) -> RunSpec:
    return RunSpec({"seed": seed}, {**SMOKE, "seed": seed})


def _missing_data(tmp_path) -> RunSpec:
    return RunSpec({"broken": True}, {**SMOKE, "dataset": "cifar10", "data_root": str(tmp_path / "no-data"),
                                      "download": False})


@pytest.fixture
def failed_writes(monkeypatch):
    """Every ``failed`` status written, with whether the run's lock was held at that moment."""
    writes: list[tuple[str, bool]] = []
    real = Run.set_status

    def spying(self, status, **extra):
        if status == "failed":
            writes.append((self.path.name, RunLock(self.path).held()))
        return real(self, status, **extra)

    monkeypatch.setattr(Run, "set_status", spying)
    return writes


@pytest.fixture
def lifecycle_failures(monkeypatch):
    """The run ids whose failure went through ``RunLifecycle.record_failure``, with whether
    this lifecycle held the run's lock then."""
    calls: list[tuple[str, bool]] = []
    real = RunLifecycle.record_failure

    def spying(self, cfg, *args, **kwargs):
        calls.append((cfg.run_id(), self.holds(cfg.run_id())))
        return real(self, cfg, *args, **kwargs)

    monkeypatch.setattr(RunLifecycle, "record_failure", spying)
    return calls


def _boom(*args, **kwargs):
    raise RuntimeError("boom in training")


def _assert_failed_and_released(store, run_id: str, traceback: bool) -> dict:
    run = RunStore(store).run(run_id)
    status = run.status()
    assert status["status"] == "failed" and "boom in training" in status["error"]
    assert ("traceback" in status) is traceback
    assert run.config()["seed"] == 0
    assert not RunLock(run.path).held()  # released
    return status


def test_an_executors_failed_group_run_is_recorded_while_its_lock_is_held(tmp_path, failed_writes):
    store = tmp_path / "store"
    store.mkdir()
    spec = _missing_data(tmp_path)
    ((index, (result,)),) = list(LocalExecutor(workers=1, device="cpu").map_groups([[spec]], str(store), OVERRIDES))
    assert index == 0 and result["status"] == "failed" and "cifar10" in result["error"].lower()
    run_id = spec.run_id(**OVERRIDES)
    assert failed_writes == [(run_id, True)]  # written under the lock, not after its release
    status = RunStore(store).run(run_id).status()
    assert status["status"] == "failed" and status["error"] == result["error"]
    assert status["traceback"].startswith("Traceback") and "build_federated_data" in status["traceback"]
    assert not RunLock(store / run_id).held()


def test_a_training_failure_leaves_one_state_in_every_path(tmp_path, monkeypatch, failed_writes,
                                                           lifecycle_failures):
    """run_experiment, train_group (recording failures) and the executors' train_specs all
    record a failure through RunLifecycle.record_failure, under the run's lock, and leave
    the failed record with its config, and the lock released."""
    cfg = resolve_config(SMOKE | {"seed": 0})
    rid = cfg.run_id()
    monkeypatch.setattr("flcore.api.Simulation.run_rounds", _boom)
    with pytest.raises(RuntimeError, match="boom in training"):
        run_experiment(cfg, store=tmp_path / "single")
    single = _assert_failed_and_released(tmp_path / "single", rid, traceback=False)
    assert single["rounds_done"] == 0

    monkeypatch.setattr(planner, "run_group", _boom)
    group = RunGroup(configs=(dict(SMOKE, seed=0),), run_ids=(rid,), labels=({},))
    (result,) = train_group(group, tmp_path / "group", record_failures=True)
    assert result["status"] == "failed"
    _assert_failed_and_released(tmp_path / "group", rid, traceback=True)

    (tmp_path / "executor").mkdir()
    (result,) = train_specs([_spec(0)], str(tmp_path / "executor"), OVERRIDES)
    assert result["status"] == "failed" and "summary" not in result
    _assert_failed_and_released(tmp_path / "executor", rid, traceback=True)

    assert lifecycle_failures == [(rid, True)] * 3
    assert failed_writes == [(rid, True)] * 3


def test_a_failure_before_anything_is_recorded_leaves_no_run_folder_in_either_path(tmp_path, monkeypatch):
    monkeypatch.setattr(RunLifecycle, "create", _boom)
    cfg = resolve_config(SMOKE | {"seed": 0})
    with pytest.raises(RuntimeError, match="boom in training"):
        run_experiment(cfg, store=tmp_path / "single")
    assert list((tmp_path / "single").iterdir()) == []
    group = RunGroup(configs=(dict(SMOKE, seed=0),), run_ids=(cfg.run_id(),), labels=({},))
    (result,) = train_group(group, tmp_path / "group")  # a group records no failure unless asked
    assert result["status"] == "failed" and "boom in training" in result["error"]
    assert list((tmp_path / "group").iterdir()) == []


def test_the_lifecycle_writes_a_failure_only_under_the_lock(tmp_path):
    cfg = resolve_config(SMOKE | {"seed": 0})
    life = run_lifecycle(tmp_path, [cfg.run_id()])
    with pytest.raises(RuntimeError, match="only while its lock is held"):
        life.record_failure(cfg, "an error")
    with life:
        assert RunLock(tmp_path / cfg.run_id()).held()
        life.record_failure(cfg, "an error")
    assert RunStore(tmp_path).run(cfg.run_id()).status()["status"] == "failed"
    assert not RunLock(tmp_path / cfg.run_id()).held()
    with pytest.raises(RuntimeError, match="only while its lock is held"):
        life.record_failure(cfg, "an error")


_HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


def test_a_failure_recorded_after_the_fact_is_skipped_while_another_process_holds_the_lock(tmp_path, capsys):
    spec = _spec(0)
    run_id = spec.run_id(**OVERRIDES)
    (tmp_path / run_id).mkdir()
    result = {"error": "RuntimeError: the worker died", "traceback": None}
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path / run_id / LOCK_FILE)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert record_failure(RunStore(tmp_path), spec, OVERRIDES, result) is False
        assert not RunStore(tmp_path).run(run_id).exists()  # nothing written over a run another process trains
        err = capsys.readouterr().err
        assert f"not recording the failure of run {run_id}" in err and "another process" in err
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert record_failure(RunStore(tmp_path), spec, OVERRIDES, result) is True
    status = RunStore(tmp_path).run(run_id).status()
    assert status["status"] == "failed" and status["error"] == result["error"] and status["traceback"] is None
    assert not RunLock(tmp_path / run_id).held()
