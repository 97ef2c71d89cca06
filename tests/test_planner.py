"""The planner (plan_groups / train_group), ensure_runs through it, and `flcore sweep`."""
from __future__ import annotations

import json

from flcore.cli.main import main
from flcore.planning.planner import RunGroup, plan_groups, train_group
from flcore.reproduction.artifacts import RunSpec
from flcore.reproduction.runner import ensure_runs

SMOKE = {"scale": "smoke", "rounds": 2, "clients": 4, "per_round": 2, "num_samples": 200, "eval_every": 1}


def _spec(method="fedsam", **values):
    return RunSpec({"method": method, **values}, {**SMOKE, "method": method, **values})


def test_duplicates_are_one_run_whoever_asks():
    a = _spec(alpha=0.5, seed=0)
    b = RunSpec({"paper": "other", "figure": 3}, dict(a.config))
    groups = plan_groups([a, b, a.config], device="cpu")
    assert [g.size for g in groups] == [1] and groups[0].labels == (a.labels,)


def test_of_two_requests_for_one_run_the_one_recording_client_accuracy_is_trained(tmp_path):
    from flcore.reproduction.runner import missing_runs
    from flcore.store import RunStore

    plain = _spec(alpha=0.5, seed=0, client_accuracy=False)
    recording = RunSpec({"figure": 3}, {**plain.config, "client_accuracy": True})
    assert plain.run_id() == recording.run_id()
    for requests in ([plain, recording], [recording, plain]):
        groups = plan_groups(requests, device="cpu")
        assert [g.size for g in groups] == [1] and groups[0].configs[0]["client_accuracy"] is True
        todo, _ = missing_runs(requests, RunStore(tmp_path), {"device": "cpu"})
        assert list(todo) == [plain.run_id()] and todo[plain.run_id()] is recording
    assert plan_groups([plain, plain.config], device="cpu")[0].configs[0]["client_accuracy"] is False


def test_runs_group_by_shape_and_split_by_workers_and_memory():
    fedsam = [_spec(alpha=a, seed=s, rho=r) for a in (0.0, 1000.0) for s in (0, 1, 2) for r in (0.01, 0.1)]
    fedavg = [_spec("fedavg", seed=s) for s in (0, 1)]
    groups = plan_groups(fedsam + fedavg, device="cpu")
    assert sorted(g.size for g in groups) == [2, 12]
    assert all(len({c["method"] for c in g.configs}) == 1 for g in groups)
    assert groups[0].method == "fedsam"  # the costlier group first
    # two workers, a share of 13 units: FedSAM's 12 runs (24 units) are over 1.5 shares and
    # are halved, FedAvg's two runs (2 units) stay batched
    split = plan_groups(fedsam + fedavg, device="cpu", workers=2)
    assert sorted(g.size for g in split) == [2, 6, 6]
    assert sorted(g.size for g in plan_groups(fedavg, device="cpu", workers=2)) == [1, 1]  # a share each
    # eight workers, a share of 3.25 units: FedSAM is halved down to groups of at most 4.875
    # units (three runs, 6 units, are halved into 2 + 1)
    assert sorted(g.size for g in plan_groups(fedsam + fedavg, device="cpu", workers=8)) == [1] * 4 + [2] * 5
    capped = plan_groups(fedsam, device="cpu", max_runs=5)
    assert sorted(g.size for g in capped) == [4, 4, 4]
    ids = [rid for g in capped for rid in g.run_ids]
    assert len(ids) == len(set(ids)) == 12


def test_methods_that_cannot_batch_across_runs_get_groups_of_one():
    groups = plan_groups([_spec("fedfa", seed=s) for s in (0, 1, 2)], device="cpu")
    assert [g.size for g in groups] == [1, 1, 1]


def test_train_group_records_every_run_and_reuses_finished_ones(tmp_path):
    group = plan_groups([_spec(alpha=0.5, seed=0), _spec(alpha=0.0, seed=1, rho=0.2)], device="cpu")[0]
    first = train_group(group, tmp_path)
    assert [r["status"] for r in first] == ["finished", "finished"]
    assert [r["run_id"] for r in first] == list(group.run_ids)
    for rid in group.run_ids:
        assert (tmp_path / rid / "metrics.jsonl").exists() and (tmp_path / rid / "final_model.pt").exists()
    again = train_group(group, tmp_path)
    assert [r["seconds"] for r in again] == [0.0, 0.0]
    assert [r["summary"]["mean_last_100"] for r in again] == [r["summary"]["mean_last_100"] for r in first]


def test_a_failing_group_fails_its_runs_not_the_caller(tmp_path):
    config = {**SMOKE, "method": "fedavg", "dataset": "cifar10", "data_root": str(tmp_path / "none")}
    group = RunGroup(configs=(config,), run_ids=("x",), labels=({},))
    (result,) = train_group(group, tmp_path / "store")
    assert result["status"] == "failed" and "cifar10" in result["error"].lower()
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").iterdir())


def test_ensure_runs_trains_the_missing_runs_in_groups(tmp_path):
    specs = [_spec(alpha=a, seed=0) for a in (0.0, 0.5, 1000.0)]
    logs = []
    frame = ensure_runs(specs + specs[:1], store=tmp_path, device="cpu", workers=1, log=logs.append)
    assert list(frame["status"]) == ["finished"] * 4
    assert any("training 3 run(s)" in line and "in 1 group(s)" in line for line in logs)


SWEEP = ["sweep", "--method", "fedsam", "--scale", "smoke", "--rounds", "2", "--clients", "4", "--per-round", "2",
         "--num-samples", "200", "--no-progress", "--workers", "1"]
RUN_JSON_FIELDS = {"best_accuracy", "dataset", "final_accuracy", "mean_last_100", "method", "rounds_done", "run_dir",
                   "run_id", "scale", "status", "wall_time_s"}


def test_flcore_sweep_prints_one_run_json_object_per_point(tmp_path, capsys):
    store = str(tmp_path / "runs")
    assert main(SWEEP + ["--alpha", "0,1000", "--rho", "0.01,0.05", "--seed", "0", "--store", store, "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 4 and len({r["run_id"] for r in rows}) == 4
    assert all(set(r) == RUN_JSON_FIELDS and r["status"] == "finished" for r in rows)
    # the same point through `flcore run` is the same run, found in the store
    assert main(["run", "--method", "fedsam", "--scale", "smoke", "--rounds", "2", "--clients", "4",
                 "--per-round", "2", "--num-samples", "200", "--alpha", "1000", "--rho", "0.05", "--seed", "0",
                 "--store", store, "--json", "--no-progress"]) == 0
    alone = json.loads(capsys.readouterr().out)
    match = [r for r in rows if r["run_id"] == alone["run_id"]]
    assert match and match[0]["mean_last_100"] == alone["mean_last_100"]


def test_flcore_sweep_rejects_a_bad_value_before_training(tmp_path, capsys):
    store = tmp_path / "runs"
    assert main(SWEEP + ["--alpha", "0,-1", "--store", str(store), "--json"]) == 2
    err = capsys.readouterr().err
    assert "alpha" in err and len(err.strip().splitlines()) == 1
    assert not store.exists()
    assert main(SWEEP + ["--rho", "0.1,,0.2", "--store", str(store)]) == 2
    assert "rho" in capsys.readouterr().err
