"""Reliability: the run store and the inputs cannot be turned against the user.

One test (or parametrized group) per failure found by trying flcore as a demanding user
would: poisoned ``.pt`` files, two writers, damaged records, one damaged record breaking
the store, validation gaps, bad data through the Python API, and an unreadable notebook
in ``flcore reproduce``.  ``benchmarks/fault_matrix.py`` runs the wider matrix.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from flcore import resolve_config
from flcore.cli.main import EXIT_BUSY, EXIT_DAMAGED, EXIT_USAGE
from flcore.cli.main import main as cli
from flcore.data import DatasetError, load_dataset, write_fake_cifar
from flcore.data.datasets import Dataset
from flcore.store import DamagedRunError, Run, RunLock, RunStore, UnsafeFileError

#: Over 30 s as a whole file (``make test-fast`` leaves it out).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
BASE = ["--scale", "smoke", "--device", "cpu", "--no-progress", "--rounds", "8", "--eval-every", "1",
        "--checkpoint-every", "3"]
SUMMARY_KEYS = ("status", "rounds_done", "final_accuracy", "mean_last_100", "best_accuracy")


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = cli(list(argv))
    except SystemExit as exc:  # argparse's errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def numbers(summary: dict) -> tuple:
    return tuple(summary.get(k) for k in SUMMARY_KEYS)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A store with the finished smoke run, its summary and final model."""
    from flcore.api import run_experiment

    torch.set_num_threads(1)
    store = tmp_path_factory.mktemp("finished")
    cfg = resolve_config(scale="smoke", device="cpu", rounds=8, eval_every=1, checkpoint_every=3)
    summary = run_experiment(cfg, store=store)
    return store, summary


@pytest.fixture
def store_copy(finished, tmp_path):
    store, summary = finished
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    return copy, copy / summary["run_id"], summary


class _StopAt:
    def __init__(self, at: int, error=KeyboardInterrupt):
        self.at, self.error = at, error

    def on_round_end(self, done, state):
        if done == self.at:
            raise self.error
        return {}


@pytest.fixture
def interrupted(tmp_path):
    """The same run interrupted after round 5 (its checkpoint is at round 3)."""
    from flcore.api import run_experiment

    cfg = resolve_config(scale="smoke", device="cpu", rounds=8, eval_every=1, checkpoint_every=3)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(cfg, store=tmp_path / "store", callbacks=(_StopAt(5),))
    run_dir = tmp_path / "store" / cfg.run_id()
    assert json.loads((run_dir / "status.json").read_text())["status"] == "interrupted"
    return tmp_path / "store", run_dir


# ----------------------------------------------------------------------- 1. poisoned files

class _Payload:
    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _poison(path: Path, marker: Path) -> None:
    state = torch.load(path, weights_only=True)  # the real file loads with weights_only
    state["extra"] = _Payload(marker)
    torch.save(state, path)


def test_poisoned_checkpoint_never_runs_on_resume(interrupted, tmp_path, capsys):
    store, run_dir = interrupted
    marker = tmp_path / "PAYLOAD_RAN"
    _poison(run_dir / "checkpoint.pt", marker)
    before = (run_dir / "metrics.jsonl").read_bytes()
    code, _, err = run_cli(capsys, "run", *BASE, "--store", str(store))
    assert not marker.exists()
    assert code == EXIT_DAMAGED
    assert "checkpoint.pt" in err and "not loaded" in err and "fix:" in err and "Traceback" not in err
    assert (run_dir / "metrics.jsonl").read_bytes() == before  # refused before touching the log
    with pytest.raises(UnsafeFileError, match="checkpoint.pt"):
        Run(run_dir, run_dir.name).load_checkpoint()
    assert not marker.exists()


def test_poisoned_final_model_never_runs_in_analyze_or_verify(store_copy, tmp_path, capsys):
    store, run_dir, _ = store_copy
    marker = tmp_path / "PAYLOAD_RAN"
    _poison(run_dir / "final_model.pt", marker)
    code, _, err = run_cli(capsys, "analyze", "lpf", "--run", str(run_dir), "--device", "cpu", "--m", "2",
                           "--samples", "20")
    assert code == EXIT_USAGE and "final_model.pt" in err and "not loaded" in err
    code, out, _ = run_cli(capsys, "runs", "--store", str(store), "--verify", "--json")
    assert code == EXIT_DAMAGED
    record = json.loads(out)[0]
    assert record["damaged"] and any("final_model.pt" in p for p in record["problems"])
    assert not marker.exists()


# ----------------------------------------------------------------------- 2. one writer

def test_a_second_writer_is_refused_with_no_wait(store_copy, capsys):
    store, run_dir, _ = store_copy
    # the run must be trainable again for the lock to matter: resume it from round 3
    (run_dir / "status.json").write_text(json.dumps({"status": "interrupted", "rounds_done": 3}))
    with RunLock(run_dir):  # another process trains it (flock conflicts across open files)
        code, _, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--no-wait")
    assert code == EXIT_BUSY
    assert "another process" in err and "--wait" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_two_identical_runs_started_together_write_each_round_once(tmp_path):
    argv = [sys.executable, "-m", "flcore", "run", *BASE[:-6], "--rounds", "30", "--eval-every", "1",
            "--checkpoint-every", "3", "--store", str(tmp_path), "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e for _, e in outs]
    summaries = [json.loads(o.strip().splitlines()[-1]) for o, _ in outs]
    assert numbers(summaries[0]) == numbers(summaries[1])
    metrics = RunStore(tmp_path).metrics()
    assert metrics["round"].tolist() == list(range(1, 31))


@pytest.mark.slow
def test_the_lock_dies_with_its_process(tmp_path):
    code = (f"import sys, os; sys.path.insert(0, {str(ROOT)!r}); from flcore.store import RunLock; "
            f"RunLock({str(tmp_path)!r}).acquire(); os._exit(0)")
    subprocess.run([sys.executable, "-c", code], check=True)
    lock = RunLock(tmp_path)
    assert not lock.held()
    lock.acquire(wait=False)
    lock.release()


# ----------------------------------------------------------------------- 3. damaged records

def _cut(path: Path, fraction: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])


DAMAGE = {
    "truncated": lambda p: _cut(p, 0.6),
    "torn": lambda p: _cut(p, 0.98),
    "emptied": lambda p: p.write_bytes(b""),
    "middle row deleted": lambda p: p.write_text("".join(
        line for i, line in enumerate(p.read_text().splitlines(keepends=True)) if i != 3)),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_log_is_never_summarized_silently(store_copy, damage, capsys):
    store, run_dir, summary = store_copy
    DAMAGE[damage](run_dir / "metrics.jsonl")
    code, out, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    # the final checkpoint cannot rebuild a finished run's lost rows: reported, with the fix
    assert code == EXIT_DAMAGED, out
    assert "metrics.jsonl" in err and "fix:" in err and str(run_dir) in err
    with pytest.raises(DamagedRunError, match="metrics.jsonl"):
        RunStore(store).metrics(summary["run_id"])


def test_a_duplicated_log_is_repaired_and_gives_the_right_numbers(store_copy, capsys):
    store, run_dir, summary = store_copy
    log = run_dir / "metrics.jsonl"
    log.write_bytes(log.read_bytes() * 2)  # 16 rows for 8 rounds
    with pytest.raises(DamagedRunError, match="logged twice"):
        RunStore(store).metrics(summary["run_id"])
    code, out, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert code == 0 and "repaired" in err
    assert numbers(json.loads(out)) == numbers(summary)
    assert RunStore(store).metrics(summary["run_id"])["round"].tolist() == list(range(1, 9))


def test_status_edited_to_finished_resumes_instead_of_returning_no_accuracy(interrupted, finished, capsys):
    store, run_dir = interrupted
    status = json.loads((run_dir / "status.json").read_text())
    (run_dir / "status.json").write_text(json.dumps({**status, "status": "finished"}))
    code, out, _ = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert code == 0
    result = json.loads(out)
    assert result["mean_last_100"] is not None
    assert numbers(result) == numbers(finished[1])  # resumed from round 3 = uninterrupted


def test_summary_edited_is_caught_and_recomputed(store_copy, capsys):
    store, run_dir, summary = store_copy
    data = json.loads((run_dir / "summary.json").read_text())
    (run_dir / "summary.json").write_text(json.dumps({**data, "mean_last_100": 0.99}))
    code, out, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert code == 0 and "mean_last_100" in err
    assert json.loads(out)["mean_last_100"] == summary["mean_last_100"]


def test_rows_carry_the_run_id_and_the_checkpoint_its_run_and_config(store_copy):
    _, run_dir, summary = store_copy
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert {r["run_id"] for r in rows} == {summary["run_id"]} and [r["round"] for r in rows] == list(range(1, 9))
    state = torch.load(run_dir / "checkpoint.pt", weights_only=True)
    run = Run(run_dir, summary["run_id"])
    assert state["run_id"] == summary["run_id"] and state["config_digest"] == run.config_digest()


# ----------------------------------------------------------------------- 4. one damaged record

@pytest.mark.parametrize("file", ["status.json", "config.json"])
def test_runs_lists_every_run_and_marks_a_damaged_one(store_copy, file, capsys):
    store, run_dir, summary = store_copy
    other = resolve_config(scale="smoke", device="cpu", rounds=8, eval_every=1, checkpoint_every=3, seed=1)
    from flcore.api import run_experiment

    run_experiment(other, store=store)
    (run_dir / file).write_text("{not json")
    code, out, _ = run_cli(capsys, "runs", "--store", str(store), "--json")
    assert code == 0
    records = {r["run_id"]: r for r in json.loads(out)}
    assert set(records) == {summary["run_id"], other.run_id()}
    assert records[summary["run_id"]]["damaged"] and not records[other.run_id()]["damaged"]
    assert any(file in p for p in records[summary["run_id"]]["problems"])
    table = RunStore(store).runs()
    assert set(table["run_id"]) == set(records)
    assert table.set_index("run_id").loc[summary["run_id"], "status"] == "damaged"
    # and flcore run puts it right (the checkpoint proves which config it held)
    code, out, _ = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert code == 0 and numbers(json.loads(out)) == numbers(summary)


@pytest.mark.parametrize("kind", ["truncated", "foreign"])
def test_a_bad_checkpoint_is_reported_and_costs_the_log_nothing(interrupted, finished, kind, capsys):
    store, run_dir = interrupted
    checkpoint = run_dir / "checkpoint.pt"
    if kind == "truncated":
        _cut(checkpoint, 0.5)
    else:  # the checkpoint of another run (same model, other seed)
        from flcore.api import run_experiment

        other = run_experiment(resolve_config(scale="smoke", device="cpu", rounds=8, eval_every=1,
                                              checkpoint_every=3, seed=1), store=store)
        shutil.copy(Path(other["run_dir"]) / "checkpoint.pt", checkpoint)
    before = (run_dir / "metrics.jsonl").read_bytes()
    code, _, err = run_cli(capsys, "run", *BASE, "--store", str(store))
    assert code == EXIT_DAMAGED and "checkpoint.pt" in err and "fix:" in err and "Traceback" not in err
    assert ("another run" in err) if kind == "foreign" else ("truncated" in err)
    assert (run_dir / "metrics.jsonl").read_bytes() == before


# ----------------------------------------------------------------------- 5. validation

BAD = [
    ["--model", "cnn"], ["--num-samples", "5"], ["--samples-per-client", "1e9"], ["--clients", "1e12"],
    ["--rounds", "1e12"], ["--local-steps", "1e12"], ["--num-samples", "1e12"], ["--batch-size", "1e12"],
    ["--eval-batch-size", "1e12"], ["--eval-last", "1e12"], ["--eval-every", "1e12"],
    ["--method", "centralized-swa", "--swa-start", "1e12"], ["--chunk-size", "0"], ["--chunk-size", "-4"],
    ["--partition", "shards", "--classes-per-client", "20"], ["--local-epochs", "2", "--local-steps", "5"],
    ["--method", "fedavg", "--rho", "0.3"],
]


@pytest.mark.parametrize("argv", BAD, ids=lambda a: " ".join(a))
def test_bad_values_are_refused_in_one_line_before_anything_is_written(argv, tmp_path, capsys):
    store = tmp_path / "store"
    code, _, err = run_cli(capsys, "run", "--scale", "smoke", "--no-progress", "--store", str(store), *argv)
    assert code == EXIT_USAGE
    errors = [line for line in err.splitlines() if line.startswith("flcore: error:")]
    assert len(errors) == 1 and "Traceback" not in err
    field = argv[-2].lstrip("-").replace("-", "_")
    assert field in errors[0] or field.replace("_", "-") in errors[0]
    assert not store.exists()


def test_an_ignored_hyperparameter_lists_what_the_method_reads(tmp_path, capsys):
    code, _, err = run_cli(capsys, "run", "--scale", "smoke", "--store", str(tmp_path), "--method", "fedsam",
                           "--mu", "0.1")
    assert code == EXIT_USAGE and "does not read mu" in err and "rho" in err


@pytest.mark.parametrize("content,needle", [
    (bytes(range(256)) * 4, "not a text file"),
    (b"method: fedavg\nrounds: [1, 2\nlr: 0.1\n", "line"),
])
def test_unreadable_config_files_give_one_line(content, needle, tmp_path, capsys):
    path = tmp_path / "cfg.yaml"
    path.write_bytes(content)
    code, _, err = run_cli(capsys, "run", "--config", str(path), "--store", str(tmp_path / "s"))
    assert code == EXIT_USAGE and needle in err and len(err.strip().splitlines()) == 1


def test_bounds_follow_the_data():
    from flcore.config import training_set_size
    from flcore.errors import ConfigError

    assert training_set_size("mnist1d", 1000) == 800 and training_set_size("cifar10", None) == 50_000
    resolve_config(scale="smoke", clients=800, per_round=2, batch_size=1)  # 800 clients of 1 example: fine
    with pytest.raises(ConfigError, match="must be <= 800"):
        resolve_config(scale="smoke", clients=801, per_round=2)
    with pytest.raises(ConfigError, match="must be <= 80"):
        resolve_config(scale="smoke", samples_per_client=81)
    # the presets themselves stay valid, whatever the rounds
    resolve_config(scale="small", rounds=5)


# ----------------------------------------------------------------------- 6. data faults

def _dataset(**changes):
    x, y = torch.rand(20, 3, 32, 32), torch.randint(0, 10, (20,))
    args = dict(name="mine", train_x=x, train_y=y, test_x=x[:5], test_y=y[:5], num_classes=10,
                mean=(0.5,) * 3, std=(0.25,) * 3, augment=True)
    return Dataset(**{**args, **changes})


def test_tensor_faults_are_named_before_training():
    y = torch.randint(0, 10, (20,))
    y[4] = 10
    with pytest.raises(DatasetError, match=r"mine train_y: 1 label\(s\) outside 0..9"):
        _dataset(train_y=y)
    with pytest.raises(TypeError, match="train_x must be float32"):
        _dataset(train_x=torch.rand(20, 3, 32, 32, dtype=torch.float64))
    from flcore.data.validation import check_images

    with pytest.raises(DatasetError, match="x.npy: inputs must be float32, got torch.uint8 .pixels in 0..255"):
        check_images(torch.zeros(2, 3, 32, 32, dtype=torch.uint8), "x.npy")
    with pytest.raises(DatasetError, match=r"\[0, 1\].*divide 0..255 pixels by 255"):
        _dataset(train_x=torch.rand(20, 3, 32, 32) * 255)


def _rewrite(path: Path, **changes) -> None:
    with open(path, "rb") as f:
        entry = pickle.load(f, encoding="latin1")
    entry.update(changes)
    with open(path, "wb") as f:
        pickle.dump(entry, f, protocol=2)


@pytest.mark.parametrize("file,changes,needle", [
    ("data_batch_3", {"data": np.zeros((10, 3071), dtype=np.uint8)}, "uint8 [n, 3072]"),
    ("test_batch", {"labels": [10] * 10}, "integers in 0..9"),
    ("data_batch_2", {"labels": [1] * 3}, "must hold 10 labels"),
])
def test_malformed_cifar_batches_name_the_file(tmp_path, file, changes, needle):
    from flcore.data.cifar_format import file_md5

    md5s = write_fake_cifar(tmp_path, "cifar10", num_train=50, num_test=10)
    folder = tmp_path / "cifar-10-batches-py"
    _rewrite(folder / file, **changes)
    md5s[file] = file_md5(folder / file)
    with pytest.raises(DatasetError) as err:
        load_dataset("cifar10", tmp_path, checksums=md5s)
    assert str(folder / file) in str(err.value) and needle in str(err.value)


def test_an_error_during_training_marks_the_run_failed(tmp_path):
    from flcore.api import run_experiment

    cfg = resolve_config(scale="smoke", device="cpu", rounds=4)
    with pytest.raises(IndexError):
        run_experiment(cfg, store=tmp_path, callbacks=(_StopAt(2, IndexError("index 10 is out of bounds")),))
    status = json.loads((tmp_path / cfg.run_id() / "status.json").read_text())
    assert status["status"] == "failed" and "IndexError: index 10" in status["error"]


# ----------------------------------------------------------------------- 7. flcore reproduce

def test_an_unreadable_notebook_fails_alone_and_the_summary_is_printed(tmp_path, monkeypatch, capsys):
    pytest.importorskip("papermill")
    import argparse

    from flcore.cli import reproduce
    from flcore.site import reproduce as site_reproduce
    from flcore.site.manifest import load_manifest, save_manifest

    good, bad = "fedsam-table-10", "fedsam-table-11"
    root = tmp_path / "repo"
    (root / "notebooks" / "fedsam").mkdir(parents=True)
    (root / "notebooks" / "fedsam" / f"{bad}.ipynb").write_text("{ this is not JSON")
    # the manifest says the page is up to date: an unreadable notebook must still count as stale
    save_manifest(root, {"artifacts": {bad: {"status": "ok", "scale": "smoke", "seeds": [0],
                                                      "notebook": "x", "flcore": "y"}}})
    monkeypatch.setattr(site_reproduce, "prefetch_runs", lambda *a, **k: None)
    parser = argparse.ArgumentParser()
    handlers = reproduce.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["reproduce", bad, good, "--stale-only", "--scale", "smoke", "--root", str(root),
                              "--store", str(tmp_path / "store")])
    code = handlers["reproduce"](args)
    out = capsys.readouterr().out
    assert code == reproduce.EXIT_FAILED
    assert "0 ok, 2 failed, 0 skipped" in out
    manifest = load_manifest(root)["artifacts"]
    assert manifest[bad]["status"] == "failed" and manifest[good]["status"] == "failed"


# ----------------------------------------------------------------------- the Reliability page

def test_the_reliability_page_is_the_rendered_fault_matrix():
    from flcore.report.reliability import render_reliability

    results = ROOT / "benchmarks" / "results" / "fault_matrix.json"
    report = json.loads(results.read_text())
    assert set(report["categories"]) == {"bad_configs", "kills", "store_corruptions", "data_faults",
                                         "concurrent_runs", "poisoned_files", "links_and_special_files",
                                         "trust_without_proof", "listing_records", "interruption",
                                         "read_only_stores", "unbounded_inputs", "bundle_content",
                                         "bundle_archives", "page_injection", "split_files", "failure_cleanup",
                                         "disk_full", "command_limits", "book_files", "paper_text", "verdict_caches",
                                         "paper_files"}
    assert all(c["tried"] > 0 and c["handled"] == c["tried"] for c in report["categories"].values())
    assert (ROOT / "book" / "reliability.md").read_text() == render_reliability(results), (
        "regenerate: python -m flcore.report.reliability benchmarks/results/fault_matrix.json > book/reliability.md")


def test_the_reliability_page_names_the_commit_its_matrix_ran_on(tmp_path):
    from flcore.report.reliability import render_reliability

    report = json.loads((ROOT / "benchmarks" / "results" / "fault_matrix.json").read_text())
    (tmp_path / "with.json").write_text(json.dumps({**report, "commit": "abc1234"}))
    assert "Run on commit `abc1234`, on " in render_reliability(tmp_path / "with.json")
    (tmp_path / "without.json").write_text(json.dumps({k: v for k, v in report.items() if k != "commit"}))
    assert "Run on a commit it did not record" in render_reliability(tmp_path / "without.json")
