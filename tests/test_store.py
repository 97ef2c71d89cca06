"""Tests for flcore.store: run directories, crash tolerance and DataFrame queries."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch

from flcore.store import RunStore, atomic_write_text

CONFIG = {"algorithm": "fedsam", "seed": 0, "optim": {"lr": 0.01, "rho": 0.1}, "clients": [5, 100]}


@pytest.fixture
def store(tmp_path):
    return RunStore(tmp_path / "runs")


@pytest.fixture
def run(store):
    return store.create("run-a", CONFIG)


def _metrics_path(run):
    return run.path / "metrics.jsonl"


# -- create / config ---------------------------------------------------------------------


def test_root_is_created_lazily(store):
    assert store.run_ids() == []
    assert list(store.runs().columns[:4]) == ["run_id", "run_dir", "status", "rounds_done"]
    assert not store.root.exists()
    store.create("x", CONFIG)
    assert store.root.is_dir()


def test_create_writes_config_once_and_reopens_with_an_equal_config(store):
    run = store.create("run-a", CONFIG)
    assert run.exists() and run.config() == CONFIG
    written = (run.path / "config.json").read_text()
    # A tuple and a list are the same JSON config.
    again = store.create("run-a", {**CONFIG, "clients": (5, 100)})
    assert again.path == run.path
    assert (run.path / "config.json").read_text() == written
    assert list(json.loads(written)) == sorted(CONFIG)


def test_create_with_a_different_config_raises_naming_the_keys(store):
    store.create("run-a", CONFIG)
    with pytest.raises(ValueError, match="optim"):
        store.create("run-a", {**CONFIG, "optim": {"lr": 0.02, "rho": 0.1}})
    assert store.run("run-a").config() == CONFIG


@pytest.mark.parametrize("bad_id", ["", "../escape", "a/b", ".hidden", "..", "x" * 256])
def test_run_ids_must_be_plain_directory_names(store, bad_id):
    with pytest.raises(ValueError):
        store.run(bad_id)


def test_writes_require_a_created_run(store):
    run = store.run("never-created")
    assert not run.exists()
    assert run.status()["status"] == "new" and run.read_metrics() == []
    assert run.load_checkpoint() is None and run.summary() == {}
    with pytest.raises(FileNotFoundError):
        run.append_metrics({"round": 1})
    with pytest.raises(FileNotFoundError):
        run.config()


# -- status ------------------------------------------------------------------------------


def test_status_defaults_to_new_and_keeps_rounds_done(run):
    assert run.status() == {"status": "new", "rounds_done": 0}
    run.set_status("running", rounds_done=7)
    run.set_status("diverged", diverged_round=9, last_loss=float("nan"))
    status = run.status()
    assert status["status"] == "diverged"
    assert status["rounds_done"] == 7
    assert status["diverged_round"] == 9 and status["last_loss"] is None
    assert "updated" in status
    run.set_status("running")
    assert "diverged_round" not in run.status()


def test_unknown_status_is_rejected(run):
    with pytest.raises(ValueError):
        run.set_status("done")


# -- metrics -----------------------------------------------------------------------------


def test_metrics_round_trip_with_numpy_and_torch_scalars(run):
    run.append_metrics({"round": 1, "test_accuracy": np.float32(0.25), "n": np.int64(3)})
    run.append_metrics([{"round": 2, "test_accuracy": torch.tensor(0.5)}, {"round": 3, "test_loss": 1.5}])
    assert run.read_metrics() == [
        {"round": 1, "test_accuracy": 0.25, "n": 3},
        {"round": 2, "test_accuracy": 0.5},
        {"round": 3, "test_loss": 1.5},
    ]


def test_torn_last_line_is_ignored_and_repaired_by_the_next_append(run):
    run.append_metrics([{"round": 1, "loss": 1.0}, {"round": 2, "loss": 0.9}])
    with open(_metrics_path(run), "ab") as f:
        f.write(b'{"round": 3, "lo')  # a crash in the middle of a write
    assert [row["round"] for row in run.read_metrics()] == [1, 2]
    run.append_metrics({"round": 3, "loss": 0.8})
    assert [row["round"] for row in run.read_metrics()] == [1, 2, 3]
    assert _metrics_path(run).read_bytes().endswith(b'"loss": 0.8}\n')


def test_a_complete_last_row_without_newline_is_kept_on_append(run):
    _metrics_path(run).write_text('{"round": 1}\n{"round": 2}')
    run.append_metrics({"round": 3})
    assert [row["round"] for row in run.read_metrics()] == [1, 2, 3]


def test_a_corrupt_line_before_the_last_raises(run):
    _metrics_path(run).write_text('{"round": 1}\nnot json\n{"round": 3}\n')
    with pytest.raises(ValueError, match=":2:"):
        run.read_metrics()


def test_truncate_metrics_drops_rows_after_the_checkpoint_round(run):
    run.append_metrics([{"round": r, "loss": 1.0 / r} for r in (1, 2, 3, 4)])
    with open(_metrics_path(run), "ab") as f:
        f.write(b'{"round": 5')
    run.truncate_metrics(2)
    assert [row["round"] for row in run.read_metrics()] == [1, 2]
    run.append_metrics({"round": 3, "loss": 0.3})
    assert [row["round"] for row in run.read_metrics()] == [1, 2, 3]
    assert not list(run.path.glob(".*.tmp"))


def test_nan_and_inf_metrics_do_not_crash_and_read_back_as_missing(store, run):
    run.append_metrics({"round": 1, "train_loss": float("nan"), "test_loss": np.float32("inf")})
    run.append_metrics({"round": 2, "train_loss": 2.0, "test_loss": torch.tensor(float("-inf"))})
    rows = run.read_metrics()
    assert rows[0]["train_loss"] is None and rows[0]["test_loss"] is None
    assert rows[1]["test_loss"] is None
    assert "NaN" not in _metrics_path(run).read_text()  # strict JSON only
    frame = store.metrics("run-a")
    assert math.isnan(frame.loc[0, "train_loss"]) and frame.loc[1, "train_loss"] == 2.0
    run.write_summary({"final_loss": float("nan")})
    assert run.summary() == {"final_loss": None}


# -- checkpoints and final model ------------------------------------------------------


def test_checkpoint_keeps_the_latest_and_survives_a_leftover_temp_file(run):
    assert run.load_checkpoint() is None
    run.save_checkpoint({"round": 1, "params": torch.zeros(3)})
    run.save_checkpoint({"round": 2, "params": torch.ones(3), "rng": np.random.default_rng(0).bit_generator.state})
    # What a crash between writing the temp file and renaming it leaves behind.
    (run.path / ".checkpoint.pt.deadbeef.tmp").write_bytes(b"\x80\x02 torn pickle")
    state = run.load_checkpoint()
    assert state["round"] == 2 and torch.equal(state["params"], torch.ones(3))
    assert sorted(p.name for p in run.path.glob("*.pt")) == ["checkpoint.pt"]
    assert run.remove_temp_files() == 1
    assert not list(run.path.glob(".*"))


def test_a_crash_during_checkpoint_save_keeps_the_previous_checkpoint(run, monkeypatch):
    run.save_checkpoint({"round": 1})

    def crash(obj, f, *args, **kwargs):
        f.write(b"half a pickle")
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(torch, "save", crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        run.save_checkpoint({"round": 2})
    monkeypatch.undo()
    assert run.load_checkpoint() == {"round": 1}
    assert not list(run.path.glob(".*.tmp"))


def test_atomic_write_text_replaces_the_whole_file(tmp_path):
    path = tmp_path / "a.txt"
    atomic_write_text(path, "first version, longer")
    atomic_write_text(path, "second")
    assert path.read_text() == "second"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_final_model_and_summary_round_trip(run):
    assert run.load_final_model() is None and run.summary() == {}
    run.save_final_model({"fc.weight": torch.arange(4.0)})
    run.write_summary({"final_accuracy": np.float64(0.8125), "rounds": 10})
    assert torch.equal(run.load_final_model()["fc.weight"], torch.arange(4.0))
    assert run.summary() == {"final_accuracy": 0.8125, "rounds": 10}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_tensors_trained_on_a_gpu_are_stored_on_the_host(run):
    """A model or checkpoint from a GPU run opens on a machine without one."""
    state = {"fc.weight": torch.arange(4.0, device="cuda"), "nested": [{"m": torch.ones(2, device="cuda")}], "n": 3}
    run.save_final_model(state)
    loaded = torch.load(run.path / "final_model.pt", weights_only=True)  # no map_location
    assert loaded["fc.weight"].device.type == "cpu" and loaded["nested"][0]["m"].device.type == "cpu"
    assert torch.equal(loaded["fc.weight"], torch.arange(4.0)) and loaded["n"] == 3


# -- queries -------------------------------------------------------------------------------


def test_runs_table_has_one_row_per_run_with_status_summary_and_config(store):
    finished = store.create("run-b", {**CONFIG, "seed": 1, "status": "cfg"})
    finished.set_status("finished", rounds_done=10)
    finished.write_summary({"final_accuracy": 0.8})
    store.create("run-a", CONFIG)
    (store.root / "stray-dir").mkdir()  # no config.json: not a run

    table = store.runs()
    assert list(table["run_id"]) == ["run-a", "run-b"]
    assert list(table["status"]) == ["new", "finished"]
    assert list(table["rounds_done"]) == [0, 10]
    assert table.loc[1, "final_accuracy"] == 0.8 and pd.isna(table.loc[0, "final_accuracy"])
    assert list(table["seed"]) == [0, 1]
    assert list(table["optim.lr"]) == [0.01, 0.01]
    assert table.loc[0, "clients"] == (5, 100)
    assert table.loc[1, "config.status"] == "cfg"  # a clash with the status column
    assert table.loc[1, "run_dir"] == str(finished.path)


def test_metrics_concatenates_runs_with_a_run_id_column(store):
    store.create("run-a", CONFIG).append_metrics([{"round": 1, "acc": 0.1}, {"round": 2, "acc": 0.2}])
    store.create("run-b", {**CONFIG, "seed": 1}).append_metrics({"round": 1, "acc": 0.3})
    store.create("run-c", {**CONFIG, "seed": 2})  # no metrics yet

    every = store.metrics()
    assert list(every.columns[:2]) == ["run_id", "round"]
    assert list(zip(every["run_id"], every["round"], every["acc"])) == [
        ("run-a", 1, 0.1), ("run-a", 2, 0.2), ("run-b", 1, 0.3)
    ]
    assert list(store.metrics("run-b")["acc"]) == [0.3]
    assert store.metrics("run-c").empty and "run_id" in store.metrics("run-c").columns
    with pytest.raises(FileNotFoundError):
        store.metrics("missing")


def test_training_fsyncs_its_metrics_at_checkpoints_and_status_records_not_every_row(tmp_path, monkeypatch):
    import os

    from flcore import run_experiment
    from flcore.store import metrics_log

    synced = []
    real = os.fsync

    def counting(fd):
        if os.readlink(f"/proc/self/fd/{fd}").endswith("metrics.jsonl"):
            synced.append(fd)
        return real(fd)

    monkeypatch.setattr(metrics_log.os, "fsync", counting)
    # 6 rounds, each evaluated; checkpoints after rounds 2 and 4, then the finish
    summary = run_experiment({"scale": "smoke", "rounds": 6, "eval_every": 1, "eval_last": 0,
                              "checkpoint_every": 2, "device": "cpu"}, store=tmp_path)
    run = RunStore(tmp_path).run(summary["run_id"])
    assert [row["round"] for row in run.read_metrics()] == [1, 2, 3, 4, 5, 6]
    # before: one fsync a row (6); now one before each checkpoint with new rows (2, 4)
    # and one before the final status records (the last checkpoint's rows 5-6)
    assert len(synced) == 3
    assert not run._unsynced


def test_rows_appended_without_an_fsync_are_synced_by_the_next_status_record(run, monkeypatch):
    import os

    from flcore.store import metrics_log

    calls = []
    real = os.fsync

    def counting(fd):
        if os.readlink(f"/proc/self/fd/{fd}").endswith("metrics.jsonl"):
            calls.append(fd)
        return real(fd)

    monkeypatch.setattr(metrics_log.os, "fsync", counting)
    run.append_metrics({"round": 1, "test_accuracy": 0.5}, durable=False)
    run.append_metrics({"round": 2, "test_accuracy": 0.6}, durable=False)
    assert calls == [] and [r["round"] for r in run.read_metrics()] == [1, 2]  # visible at once
    run.set_status("running", rounds_done=2)
    assert len(calls) == 1
    run.set_status("running", rounds_done=2)  # nothing new: no second fsync
    assert len(calls) == 1
    run.append_metrics({"round": 3, "test_accuracy": 0.7})  # durable: synced on the spot
    assert len(calls) == 2 and os.path.exists(run.path / "metrics.jsonl")
