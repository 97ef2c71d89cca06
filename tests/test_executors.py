"""Executors without a cluster: the planner's groups, the per-run lock (two drivers never train one run
twice), failures recorded with their traceback, the CLI's executor flags."""
from __future__ import annotations

import multiprocessing
import sys

import pytest
import torch

from flcore.executors import LocalExecutor, group_runs, make_executor, train_specs
from flcore.reproduction.artifacts import RunSpec
from flcore.reproduction.runner import ensure_runs
from flcore.store import RunStore

OVERRIDES = {"device": "cpu", "data_root": None, "download": None}


def _good(seed: int = 0) -> RunSpec:
    return RunSpec({"algorithm": "FedAvg", "seed": seed}, {"method": "fedavg", "scale": "smoke", "seed": seed})


def _bad(tmp_path) -> RunSpec:
    return RunSpec({"algorithm": "broken"}, {"method": "fedavg", "dataset": "cifar10", "scale": "smoke",
                                             "data_root": str(tmp_path / "no-data"), "download": False})


def _record(store, run_id: str) -> dict:
    """What must agree between two builds of one run: everything but timings."""
    run = RunStore(store).run(run_id)
    status = run.status()
    final = run.load_final_model()
    return {"config": run.config(), "metrics": run.read_metrics(), "summary": run.summary(),
            "status": (status["status"], status["rounds_done"]),
            "final": {k: v.clone() for k, v in final.items()} if final else None}


def _same_records(a: dict, b: dict) -> None:
    assert a["config"] == b["config"] and a["status"] == b["status"]
    assert a["metrics"] == b["metrics"] and a["summary"] == b["summary"]
    assert a["final"].keys() == b["final"].keys()
    for key in a["final"]:
        assert torch.equal(a["final"][key], b["final"][key]), key


def _todo(*specs) -> dict:
    return {spec.run_id(**OVERRIDES): spec for spec in specs}


def test_group_runs_batches_what_may_share_a_batch_and_separates_the_rest(tmp_path):
    seeds = [_good(0), _good(1), _good(2)]
    (group,) = group_runs(_todo(*seeds), device="cpu", overrides=OVERRIDES)
    assert sorted(s.config["seed"] for s in group) == [0, 1, 2]  # seeds differ only: one batch
    assert sorted(len(g) for g in group_runs(_todo(*seeds), device="cpu", overrides=OVERRIDES,
                                             workers=2)) == [1, 2]  # a share for each worker
    groups = group_runs(_todo(_good(0), _bad(tmp_path)), device="cpu", overrides=OVERRIDES)
    assert sorted(len(g) for g in groups) == [1, 1]  # another data set: another group


@pytest.mark.slow
def test_a_raising_run_is_recorded_failed_with_its_traceback_and_the_others_finish(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    results = train_specs([_bad(tmp_path)], str(store), OVERRIDES) + train_specs([_good()], str(store), OVERRIDES)
    assert [r["status"] for r in results] == ["failed", "finished"]
    failed = RunStore(store).run(results[0]["run_id"]).status()
    assert failed["status"] == "failed" and failed["error"] == results[0]["error"]
    assert failed["traceback"].startswith("Traceback") and "build_federated_data" in failed["traceback"]
    assert RunStore(store).run(results[1]["run_id"]).status()["status"] == "finished"


def test_a_store_the_worker_cannot_see_fails_with_its_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="shared filesystem"):
        train_specs([_good()], str(tmp_path / "elsewhere"), OVERRIDES)


def _driver(store: str, specs, queue) -> None:
    torch.set_num_threads(1)
    queue.put(train_specs(specs, store, OVERRIDES))


@pytest.mark.slow
def test_two_drivers_never_train_one_run_twice(tmp_path):
    """Two processes ask for the same two runs at once (in opposite orders): each run is
    trained by exactly one of them, the other reuses it, and the record equals a
    single driver's."""
    store = tmp_path / "shared"
    store.mkdir()
    specs = [_good(0), _good(1)]
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    drivers = [context.Process(target=_driver, args=(str(store), order, queue))
               for order in (specs, specs[::-1])]
    for p in drivers:
        p.start()
    results = [queue.get(timeout=300) for _ in drivers]
    for p in drivers:
        p.join(timeout=60)
    by_run: dict[str, list[bool]] = {}
    for result in (r for driver in results for r in driver):
        assert result["status"] == "finished"
        by_run.setdefault(result["run_id"], []).append(result["reused"])
    assert len(by_run) == 2 and all(sorted(flags) == [False, True] for flags in by_run.values())
    alone = tmp_path / "alone"
    ensure_runs(specs, store=alone, device="cpu", workers=1, log=None)
    for run_id in by_run:
        _same_records(_record(store, run_id), _record(alone, run_id))


def test_local_executor_yields_every_group(tmp_path):
    groups = [[_good(0)], [_bad(tmp_path)]]
    (tmp_path / "s").mkdir()
    done = dict(LocalExecutor(workers=1).map_groups(groups, str(tmp_path / "s"), OVERRIDES))
    assert sorted(done) == [0, 1]
    assert [r["status"] for r in done[0]] == ["finished"] and [r["status"] for r in done[1]] == ["failed"]


def test_make_executor_names_the_choices():
    assert make_executor("local").name == "local"
    with pytest.raises(ValueError, match="local, ray"):
        make_executor("slurm")


def _root(tmp_path) -> str:
    """A repository root as ``--root`` requires it (a ``notebooks/`` folder), so the checks
    under test are the ones that answer."""
    (tmp_path / "notebooks").mkdir(exist_ok=True)
    return str(tmp_path)


def _reproduce(argv, capsys):
    from flcore.cli import reproduce

    code = reproduce.main(argv)
    return code, capsys.readouterr().err


def test_cli_without_ray_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    code, err = _reproduce(["reproduce", "fedsam-table-2", "--scale", "smoke", "--executor", "ray",
                            "--store", str(tmp_path / "s"), "--root", _root(tmp_path)], capsys)
    assert code == 2 and 'pip install "flcore[cluster]"' in err
    assert not (tmp_path / "s").exists() and not (tmp_path / "book").exists()


@pytest.mark.parametrize("flag", [["--address", "127.0.0.1:1"], ["--gpus-per-run", "1"]])
def test_cli_ray_flags_need_the_ray_executor(tmp_path, capsys, flag):
    code, err = _reproduce(["reproduce", "fedsam-table-2", "--scale", "smoke", "--store", str(tmp_path / "s"),
                            "--root", _root(tmp_path), *flag], capsys)
    assert code == 2 and f"{flag[0]} needs --executor ray" in err


def test_a_bad_ray_setting_fails_before_connecting(tmp_path, capsys):
    code, err = _reproduce(["reproduce", "fedsam-table-2", "--scale", "smoke", "--executor", "ray",
                            "--device", "cuda:1", "--root", _root(tmp_path)], capsys)
    assert code == 2 and "device must be auto, cpu or cuda" in err


@pytest.mark.parametrize("address, message", [("127.0.0.1:1", "cannot reach a Ray cluster at 127.0.0.1:1"),
                                              ("nohost", "address must be auto or HOST:PORT")])
def test_an_unreachable_ray_address_fails_fast(tmp_path, capsys, address, message):
    pytest.importorskip("ray")
    code, err = _reproduce(["reproduce", "fedsam-table-2", "--scale", "smoke", "--executor", "ray",
                            "--address", address, "--store", str(tmp_path / "s"), "--root", _root(tmp_path)], capsys)
    assert code == 2 and message in err and not (tmp_path / "s").exists()


def test_timed_runs_of_a_timing_table_are_interleaved_seed_by_seed_not_one_window_per_method():
    from flcore.executors.groups import group_runs
    from flcore.reproduction.artifacts import get_artifact

    # FedLESAM Table 5 at small: three timed seeds of each method.  Largest cost first put
    # FedSAM's three seeds first and FedLESAM's last, each method timed in its own window of
    # the machine's load; interleaved, every method's seed s is trained before any seed s + 1
    specs = [s for s in get_artifact("fedlesam-table-5").runs("small", (0, 1, 2)) if s.available]
    groups = group_runs({s.run_id(): s for s in specs}, device="cpu", workers=1)
    timed = [g[0] for g in groups if len(g) == 1 and g[0].config.get("timed")]
    methods = {s.method for s in timed}
    assert len(timed) == 3 * len(methods) and {"fedsam", "fedlesam-s"} <= methods
    seeds = [int(s.config.get("seed", s.labels.get("seed", 0))) for s in timed]
    assert seeds == sorted(seeds)
    for seed in (0, 1, 2):
        assert {s.method for s, k in zip(timed, seeds) if k == seed} == methods
    # a FedSAM run and a FedLESAM run of one seed are at most one window of the methods apart
    position = {(s.method, k): i for i, (s, k) in enumerate(zip(timed, seeds))}
    assert all(abs(position["fedsam", k] - position["fedlesam-s", k]) < len(methods) for k in (0, 1, 2))
