"""A store that cannot be turned against its reader, and inputs that mean one thing only
(links and special files, proof by digest, records of the wrong shape, interruption,
read-only stores, bounded inputs).  Everything on one smoke run of 8 rounds."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from cli_runner import run_cli

from flcore import resolve_config
from flcore.cli.main import EXIT_DAMAGED, EXIT_USAGE
from flcore.errors import ConfigError, quote
from flcore.store import InvalidRecordError, Run, RunStore, UnsafeFileError, live_status, safe_read_json
from flcore.store.records import Int, Record

#: Over 30 s as a whole file (``make test-fast`` leaves it out).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
BASE = ["--scale", "smoke", "--device", "cpu", "--no-progress", "--rounds", "8", "--eval-every", "1",
        "--checkpoint-every", "3"]
SUMMARY_KEYS = ("status", "rounds_done", "final_accuracy", "mean_last_100", "best_accuracy")


def numbers(summary: dict) -> tuple:
    return tuple(summary.get(k) for k in SUMMARY_KEYS)


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A store with two finished smoke runs (seeds 0 and 1)."""
    from flcore.api import run_experiment

    torch.set_num_threads(1)
    store = tmp_path_factory.mktemp("finished")
    summaries = [run_experiment(resolve_config(scale="smoke", device="cpu", rounds=8, eval_every=1,
                                               checkpoint_every=3, seed=seed), store=store) for seed in (0, 1)]
    return store, summaries


@pytest.fixture
def store_copy(finished, tmp_path):
    store, (summary, other) = finished
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("the user's file\n")
    return copy, copy / summary["run_id"], summary, copy / other["run_id"], outside


class _StopAt:
    def __init__(self, at: int):
        self.at = at

    def on_round_end(self, done, state):
        if done == self.at:
            raise KeyboardInterrupt
        return {}


@pytest.fixture
def interrupted(finished, tmp_path):
    """Run seed 0 interrupted after round 5 (checkpoint at round 3), beside finished seed 1."""
    from flcore.api import run_experiment

    store, (summary, other) = finished
    cfg = resolve_config(scale="smoke", device="cpu", rounds=8, eval_every=1, checkpoint_every=3)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(cfg, store=tmp_path / "istore", callbacks=(_StopAt(5),))
    shutil.copytree(store / other["run_id"], tmp_path / "istore" / other["run_id"])
    return tmp_path / "istore", tmp_path / "istore" / cfg.run_id(), summary, tmp_path / "istore" / other["run_id"]


def _listing(capsys, store: Path, verify: bool = False) -> tuple[int, dict]:
    code, out, err = run_cli(capsys, "runs", "--store", str(store), "--json", *(["--verify"] if verify else []))
    assert "Traceback" not in err
    return code, {r["run_id"]: r for r in json.loads(out)}


# ----------------------------------------------------------------------- the reader

def test_safe_read_json_opens_only_bounded_regular_files_of_their_schema(tmp_path):
    schema = Record(required={"n": Int(0, 10)})
    (tmp_path / "ok.json").write_text('{"n": 3}')
    assert safe_read_json(tmp_path / "ok.json", schema) == {"n": 3}
    assert safe_read_json(tmp_path / "missing.json", schema) is None
    os.symlink(tmp_path / "ok.json", tmp_path / "link.json")
    os.symlink("/dev/zero", tmp_path / "zero.json")
    os.mkfifo(tmp_path / "fifo.json")
    for name in ("link.json", "zero.json", "fifo.json"):
        with pytest.raises(UnsafeFileError):
            safe_read_json(tmp_path / name, schema)
    (tmp_path / "big.json").write_text('{"n": 3, "pad": "' + "x" * 2000 + '"}')
    with pytest.raises(UnsafeFileError, match="more than the 1000"):
        safe_read_json(tmp_path / "big.json", schema, max_bytes=1000)
    for text, needle in (('{"n": 11}', "outside 0..10"), ('{"n": "3"}', "expected an integer"),
                         ("[1, 2]", "expected an object"), ('{"n": 1, "n": 2}', "given twice"),
                         ('{"n": NaN}', "not strict JSON"), ("[" * 100_000 + "]" * 100_000, "nested")):
        (tmp_path / "bad.json").write_text(text)
        with pytest.raises(InvalidRecordError, match=needle):
            safe_read_json(tmp_path / "bad.json", schema)


def test_quote_bounds_any_value_and_an_alias_expanded_list():
    huge = [["x"] * 1000] * 1000
    assert len(quote(huge)) <= 200 and len(quote("y" * 10**6)) <= 200
    message = str(ConfigError("method", f"got {quote('z' * 10**6)}"))
    assert len(message) < 300


# ----------------------------------------------------------------------- links and special files

def test_a_lock_that_is_a_link_never_truncates_its_target(store_copy, capsys):
    store, run_dir, summary, _, outside = store_copy
    (run_dir / ".lock").unlink(missing_ok=True)
    os.symlink(outside / "victim.txt", run_dir / ".lock")
    code, out, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert code == 0 and numbers(json.loads(out)) == numbers(summary) or code == EXIT_DAMAGED and "fix:" in err
    assert (outside / "victim.txt").read_text() == "the user's file\n"
    code, records = _listing(capsys, store, verify=True)
    assert code == EXIT_DAMAGED and records[summary["run_id"]]["damaged"]
    assert any(".lock" in p for p in records[summary["run_id"]]["problems"])


def test_a_run_directory_that_is_a_link_is_refused_and_nothing_outside_changes(store_copy, capsys):
    store, run_dir, summary, other_dir, outside = store_copy
    shutil.copytree(run_dir, outside / "run")
    (outside / "run" / "status.json").write_text(json.dumps({"status": "interrupted", "rounds_done": 5}))
    before = {p.name: p.read_bytes() for p in (outside / "run").iterdir()}
    shutil.rmtree(run_dir)
    os.symlink(outside / "run", run_dir)
    code, out, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert code == EXIT_DAMAGED and "symbolic link" in err and "fix:" in err and "Traceback" not in err
    assert {p.name: p.read_bytes() for p in (outside / "run").iterdir()} == before
    code, records = _listing(capsys, store)
    assert records[summary["run_id"]]["damaged"] and not records[other_dir.name]["damaged"]


def test_a_config_that_is_a_folder_is_named_not_replaced(store_copy, capsys):
    store, run_dir, summary, _, _ = store_copy
    (run_dir / "config.json").unlink()
    (run_dir / "config.json").mkdir()
    (run_dir / "config.json" / "notes.txt").write_text("the user's notes\n")
    code, out, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert code == EXIT_DAMAGED and "config.json: not a regular file" in err and "fix: move" in err
    assert "Traceback" not in err
    assert (run_dir / "config.json" / "notes.txt").read_text() == "the user's notes\n"
    shutil.rmtree(run_dir / "config.json")  # the fix: the next run rewrites it from the checkpoint
    code, out, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert code == 0 and numbers(json.loads(out)) == numbers(summary), err


@pytest.mark.parametrize("kind", ["fifo-log", "zero-status", "fifo-summary"])
def test_fifos_and_devices_are_reported_not_read(store_copy, kind, capsys):
    store, run_dir, summary, other_dir, _ = store_copy
    name = {"fifo-log": "metrics.jsonl", "zero-status": "status.json", "fifo-summary": "summary.json"}[kind]
    (run_dir / name).unlink()
    if kind == "zero-status":
        os.symlink("/dev/zero", run_dir / name)
    else:
        os.mkfifo(run_dir / name)
    started = time.perf_counter()
    for verify in (False, True):
        code, records = _listing(capsys, store, verify)
        assert code == (EXIT_DAMAGED if verify else 0) and records[summary["run_id"]]["damaged"]
        assert not records[other_dir.name]["damaged"]
        assert any(name in p for p in records[summary["run_id"]]["problems"])
    code, out, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    if code == 0:  # repaired from the checkpoint: the special file replaced, never read
        assert numbers(json.loads(out)) == numbers(summary) and (run_dir / name).is_file()
    else:
        assert code == EXIT_DAMAGED and name in err and "fix:" in err
    assert time.perf_counter() - started < 120


def test_a_log_linked_outside_is_never_appended_to(interrupted, tmp_path, capsys):
    store, run_dir, summary, _ = interrupted
    outside = tmp_path / "outside.jsonl"
    shutil.move(run_dir / "metrics.jsonl", outside)
    before = outside.read_bytes()
    os.symlink(outside, run_dir / "metrics.jsonl")
    code, _, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert code == EXIT_DAMAGED and "metrics.jsonl" in err and "fix:" in err
    assert outside.read_bytes() == before


# ----------------------------------------------------------------------- proof, not trust

def test_every_tensor_file_is_recorded_with_its_digest(store_copy):
    _, run_dir, summary, _, _ = store_copy
    record = json.loads((run_dir / "files.json").read_text())
    assert record["run_id"] == summary["run_id"]
    for name in ("checkpoint.pt", "final_model.pt"):
        data = (run_dir / name).read_bytes()
        assert record["files"][name] == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


@pytest.mark.parametrize("damage", ["flipped bit", "other run's model"])
def test_a_final_model_that_is_not_the_one_written_is_refused(store_copy, damage, capsys):
    store, run_dir, summary, other_dir, _ = store_copy
    path = run_dir / "final_model.pt"
    if damage == "flipped bit":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 1
        path.write_bytes(bytes(data))
    else:
        shutil.copy(other_dir / "final_model.pt", path)
    code, records = _listing(capsys, store, verify=True)
    assert code == EXIT_DAMAGED and records[summary["run_id"]]["damaged"]
    assert not records[other_dir.name]["damaged"]
    with pytest.raises(UnsafeFileError, match="does not match its digest"):
        Run(run_dir, run_dir.name).load_final_model()
    code, _, err = run_cli(capsys, "analyze", "lpf", "--run", str(run_dir), "--device", "cpu", "--m", "2",
                           "--samples", "20")
    assert code == EXIT_USAGE and "not loaded" in err
    code, out, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert code == EXIT_DAMAGED or numbers(json.loads(out)) == numbers(summary)


@pytest.mark.parametrize("forge_digest", [False, True])
def test_a_checkpoint_without_its_stamp_is_never_resumed(interrupted, forge_digest, capsys):
    store, run_dir, summary, other_dir = interrupted
    state = torch.load(other_dir / "checkpoint.pt", weights_only=True)
    del state["run_id"], state["config_digest"]
    torch.save(state, run_dir / "checkpoint.pt")
    if forge_digest:
        record = json.loads((run_dir / "files.json").read_text())
        data = (run_dir / "checkpoint.pt").read_bytes()
        record["files"]["checkpoint.pt"] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        (run_dir / "files.json").write_text(json.dumps(record))
    log = (run_dir / "metrics.jsonl").read_bytes()
    code, out, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert code == EXIT_DAMAGED and "checkpoint.pt" in err and "fix:" in err
    if forge_digest:  # the digest proves the file is the one recorded; the stamp that it is this run's
        assert "no run-id/config stamp" in err
    assert (run_dir / "metrics.jsonl").read_bytes() == log


def test_a_config_edited_to_another_method_is_not_listed_under_it(store_copy, capsys):
    store, run_dir, summary, _, _ = store_copy
    config = json.loads((run_dir / "config.json").read_text())
    config["method"] = "fedsam"
    (run_dir / "config.json").write_text(json.dumps(config))
    code, records = _listing(capsys, store)
    record = records[summary["run_id"]]
    assert code == 0 and record["damaged"] and record["config"] is None
    assert any("run id" in p for p in record["problems"])


def test_a_replaced_data_cache_is_rebuilt(tmp_path):
    from flcore.data.cache import load_arrays, save_arrays

    path = tmp_path / "c.npz"
    arrays = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "y": np.array([0, 1])}
    save_arrays(path, arrays)
    loaded = load_arrays(path)
    assert loaded is not None and np.array_equal(loaded["x"], arrays["x"])
    with np.load(path) as archive:
        stored = {k: archive[k] for k in archive.files}
    stored["x"] = np.zeros_like(stored["x"])  # other arrays under the old digest
    np.savez(path, **stored)
    assert load_arrays(path) is None


# ----------------------------------------------------------------------- one record, one run

@pytest.mark.parametrize("file,content", [
    ("status.json", "[1, 2]"),
    ("summary.json", '"ok"'),
    ("status.json", '{"status": "finished", "rounds_done": "8"}'),
    ("status.json", '{"status": "finished", "rounds_done": 1000000000000}'),
    ("status.json", "[" * 100_000 + "]" * 100_000),
    ("metrics.jsonl", '{"round": 1, "test_accuracy": "high"}\n'),
    ("metrics.jsonl", '{"round": 1000000000000, "test_accuracy": 0.5}\n'),
    ("config.json", '{"rounds": 1000000000000}'),
], ids=["status-list", "summary-string", "rounds-string", "rounds-1e12", "deep", "metric-string", "round-1e12",
        "config-rounds-1e12"])
def test_one_record_of_the_wrong_shape_marks_one_run(store_copy, file, content, capsys):
    store, run_dir, summary, other_dir, _ = store_copy
    if file == "metrics.jsonl":
        with open(run_dir / file, "a") as f:
            f.write(content)
    else:
        (run_dir / file).write_text(content)
    started = time.perf_counter()
    for verify in (False, True):
        code, records = _listing(capsys, store, verify)
        assert code == (EXIT_DAMAGED if verify else 0) and records[summary["run_id"]]["damaged"]
        assert not records[other_dir.name]["damaged"] and records[other_dir.name]["status"] == "finished"
    code, out, err = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert "Traceback" not in err
    assert code == EXIT_DAMAGED and "fix:" in err or code == 0 and numbers(json.loads(out)) == numbers(summary)
    assert time.perf_counter() - started < 60


# ----------------------------------------------------------------------- interruption

def test_a_run_left_running_without_a_lock_holder_is_interrupted_and_resumes(interrupted, capsys):
    store, run_dir, summary, _ = interrupted
    status = json.loads((run_dir / "status.json").read_text())
    (run_dir / "status.json").write_text(json.dumps({**status, "status": "running"}))
    assert live_status(Run(run_dir, run_dir.name), "running") == "interrupted"
    _, records = _listing(capsys, store)
    assert records[run_dir.name]["status"] == "interrupted"
    code, out, _ = run_cli(capsys, "run", *BASE, "--store", str(store), "--json")
    assert code == 0 and numbers(json.loads(out)) == numbers(summary)


@pytest.mark.slow
@pytest.mark.parametrize("sig,code", [("SIGTERM", 143), ("SIGHUP", 129)])
def test_sigterm_and_sighup_stop_a_run_like_ctrl_c(tmp_path, sig, code):
    argv = [sys.executable, "-m", "flcore", "run", "--scale", "smoke", "--device", "cpu", "--no-progress",
            "--rounds", "200", "--eval-every", "1", "--checkpoint-every", "5", "--store", str(tmp_path)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    try:
        run_dir = tmp_path / resolve_config(scale="smoke", device="cpu", rounds=200, eval_every=1,
                                            checkpoint_every=5).run_id()
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            log = run_dir / "metrics.jsonl"
            if log.exists() and log.read_bytes().count(b"\n") >= 3:
                break
            time.sleep(0.01)
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == code
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert json.loads((run_dir / "status.json").read_text())["status"] == "interrupted"


def test_an_interrupted_notebook_leaves_the_page_as_it_was(tmp_path, monkeypatch):
    papermill = pytest.importorskip("papermill")
    from types import SimpleNamespace

    from flcore.site.reproduce import execute_artifact

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "book").mkdir()
    (tmp_path / "notebooks" / "a.ipynb").write_text("{}")
    page = tmp_path / "book" / "a.ipynb"
    page.write_text("the page as it was")

    def half_executed(source, output, **kwargs):
        Path(output).write_text("half-executed")
        raise KeyboardInterrupt

    monkeypatch.setattr(papermill, "execute_notebook", half_executed)
    monkeypatch.setattr(papermill, "inspect_notebook", lambda path: {"scale": None, "seeds": None})
    artifact = SimpleNamespace(id="a", notebook_path="notebooks/a.ipynb", book_path="book/a.ipynb", kind="table")
    with pytest.raises(KeyboardInterrupt):
        execute_artifact(artifact, tmp_path, {"scale": "smoke", "seeds": [0]})
    assert page.read_text() == "the page as it was"
    assert [p.name for p in (tmp_path / "book").iterdir()] == ["a.ipynb"]


def _slow_notebook(started: Path) -> dict:
    """A notebook whose second cell marks ``started`` (the kernel is in it), then sleeps."""
    return {
        "cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {"tags": ["parameters"]},
                   "outputs": [], "source": "scale = 'smoke'\nseeds = [0]"},
                  {"cell_type": "code", "execution_count": None, "id": "c2", "metadata": {}, "outputs": [],
                   "source": f"import time\nopen({str(started)!r}, 'w').close()\ntime.sleep(120)"}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
# A user's Ctrl-C reaches a terminal's foreground process; a test runner's worker may hold
# SIGINT ignored (a Ray or Flower test before this one), which a child inherits and
# ``handled`` rightly keeps ignored: the child takes the terminal's default first.
EXECUTE_SLOW = """
import signal
import sys
from pathlib import Path
signal.signal(signal.SIGINT, signal.default_int_handler)
from types import SimpleNamespace
from flcore.cli.interrupts import handled
from flcore.site.reproduce import execute_artifact
artifact = SimpleNamespace(id="slow", notebook_path="notebooks/slow.ipynb", book_path="book/slow.ipynb", kind="table")
with handled():
    try:
        execute_artifact(artifact, Path(sys.argv[1]), {"scale": "smoke", "seeds": [0]})
    except KeyboardInterrupt:
        print("flcore: interrupted", file=sys.stderr)
        sys.exit(130)
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_stopping_a_notebook_prints_one_line_and_keeps_the_page(tmp_path, sig):
    """The kernel's own log (tracebacks of the sockets Ctrl-C closes) stays off the terminal."""
    pytest.importorskip("papermill")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "book").mkdir()
    started = tmp_path / "sleeping"
    (tmp_path / "notebooks" / "slow.ipynb").write_text(json.dumps(_slow_notebook(started)))
    page = tmp_path / "book" / "slow.ipynb"
    page.write_text("the page as it was")
    proc = subprocess.Popen([sys.executable, "-c", EXECUTE_SLOW, str(tmp_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(), start_new_session=True)
    try:
        deadline = time.time() + 120
        # a fixed wait raced the kernel's start on a loaded machine: wait until it is in the cell
        while not started.exists():
            assert proc.poll() is None and time.time() < deadline, proc.stderr.read()
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130 and err == "flcore: interrupted\n"
    assert page.read_text() == "the page as it was"
    assert [p.name for p in (tmp_path / "book").iterdir()] == ["slow.ipynb"]


# ----------------------------------------------------------------------- read-only stores

def _read_only_prefix(store: Path) -> list[str]:
    if os.geteuid() != 0:
        for folder, _, files in os.walk(store):
            for path in [folder, *(os.path.join(folder, f) for f in files)]:
                os.chmod(path, os.stat(path).st_mode & ~0o222)
        return []
    if not shutil.which("unshare") or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode:
        pytest.skip("no way to mount a store read-only here (root without mount namespaces)")
    return ["unshare", "-m", "sh", "-c", f'mount --bind -o ro "{store}" "{store}" && exec "$@"', "sh"]


def test_a_read_only_store_answers_lookups_and_refuses_training_in_one_line(store_copy):
    store, run_dir, summary, _, _ = store_copy
    prefix = _read_only_prefix(store)
    flcore = [*prefix, sys.executable, "-m", "flcore"]
    done = subprocess.run([*flcore, "sweep", *BASE, "--seed", "0,1", "--store", str(store), "--json"],
                          capture_output=True, text=True, env=_env(), timeout=900)
    assert done.returncode == 0, done.stderr
    assert numbers(json.loads(done.stdout.splitlines()[0])) == numbers(summary)
    done = subprocess.run([*flcore, "run", *BASE, "--seed", "2", "--store", str(store)],
                          capture_output=True, text=True, env=_env(), timeout=900)
    assert done.returncode == EXIT_USAGE and "cannot be written" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (store / resolve_config(scale="smoke", device="cpu", rounds=8, eval_every=1, checkpoint_every=3,
                                       seed=2).run_id()).exists()


# ----------------------------------------------------------------------- bounded, unambiguous inputs

@pytest.mark.parametrize("name,text,needle", [
    ("bomb.yaml", "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nmethod: [*b,*b,*b,*b,*b,*b]\n",
     "anchors"),
    ("twice.yaml", "rounds: 4\nrounds: 8\n", "given twice"),
    ("twice.json", '{"rounds": 4, "rounds": 8}', "given twice"),
    ("spell.yaml", "per_round: 2\nper-round: 3\n", "given twice"),
    ("sexagesimal.yaml", "lr: 1:30\n", "'1:30'"),
])
def test_config_files_mean_one_thing(tmp_path, name, text, needle, capsys):
    (tmp_path / name).write_text(text)
    code, _, err = run_cli(capsys, "run", *BASE, "--config", str(tmp_path / name), "--store", str(tmp_path / "s"))
    assert code == EXIT_USAGE and needle in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists()


def test_negative_zero_is_zero_in_the_run_id():
    ids = {resolve_config(scale="smoke", alpha=a).run_id() for a in ("-0", "0", "-0.0", 0.0, -0.0)}
    assert len(ids) == 1


@pytest.mark.parametrize("argv,needle", [
    (["sweep", "--seed", ",".join(map(str, range(1000))), "--lr", ",".join(f"0.{i}1" for i in range(1000)),
      "--rounds", ",".join(map(str, range(1, 1001)))], "1000000000 points"),
    (["sweep", "--seed", ",".join(map(str, range(100))), "--rounds", ",".join(map(str, range(1, 101)))],
     "--max-runs"),
    (["sweep", "--method", "fedavg", "--rho", "0.01,0.05"], "does not read rho"),
    (["sweep", "--workers", "-1"], "--workers"),
    (["run", "--cutout-size", "41"], "cutout_size"),
    (["run", "--mixup-alpha", "1e39"], "mixup_alpha"),
    (["reproduce", "fedsam-table-2", "--timeout", "-5"], "--timeout"),
    (["reproduce", "fedsam-table-2", "--seeds", "-1"], "--seeds"),
    (["reproduce", "fedsam-table-2", "--root", "{tmp}"], "notebooks"),
])
def test_unbounded_or_silent_options_are_refused_before_work(tmp_path, argv, needle, capsys):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if argv[0] in ("run", "sweep"):
        argv = [argv[0], "--scale", "smoke", "--device", "cpu", "--no-progress", *argv[1:]]
    started = time.perf_counter()
    code, _, err = run_cli(capsys, *argv, "--store", str(tmp_path / "s"))
    assert code == EXIT_USAGE and needle in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists() and time.perf_counter() - started < 30


def test_analysis_counts_are_capped_by_memory(store_copy, capsys):
    _, run_dir, _, other_dir, _ = store_copy
    code, _, err = run_cli(capsys, "analyze", "barrier", "--run", str(run_dir), "--run-b", str(other_dir),
                           "--points", "1000000000", "--device", "cpu")
    assert code == EXIT_USAGE and "points" in err
    code, _, err = run_cli(capsys, "analyze", "hessian", "--run", str(run_dir), "--top-k", "900000",
                           "--device", "cpu")
    assert code == EXIT_USAGE and "parameters" in err


def test_listing_a_store_never_writes(store_copy, capsys):
    store, run_dir, *_ = store_copy
    before = sorted((p.relative_to(store), p.stat().st_mtime_ns) for p in store.rglob("*"))
    run_cli(capsys, "runs", "--store", str(store), "--verify", "--json")
    assert sorted((p.relative_to(store), p.stat().st_mtime_ns) for p in store.rglob("*")) == before
    assert RunStore(store).run_ids()
