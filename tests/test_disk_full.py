"""A full disk (``ENOSPC``) anywhere a run writes: one line naming the file, exit 3 during
training (2 before it), and the run resumable from its last checkpoint -- the resumed run
equal to an uninterrupted one.  And ``flcore runs --verify`` holds a stored final model
to the same standard as an imported one: its config's model, every value finite."""
from __future__ import annotations

import errno
import json
import math
import os
import re
from pathlib import Path

import pytest
import torch
from cli_runner import run_cli

from flcore.store import RunStore, atomic, live_status
from flcore.store import run as run_module

ARGS = ["run", "--scale", "smoke", "--device", "cpu", "--rounds", "8", "--eval-every", "1",
        "--checkpoint-every", "3", "--no-progress", "--json"]
SUMMARY_KEYS = ("status", "rounds_done", "final_accuracy", "mean_last_100", "best_accuracy")


def _run(capsys, store: Path) -> tuple[int, str, str]:
    return run_cli(capsys, *ARGS, "--store", str(store))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    from flcore.cli.main import main

    torch.set_num_threads(1)
    store = tmp_path_factory.mktemp("full")
    assert main([*ARGS, "--store", str(store)]) == 0
    rid = RunStore(store).run_ids()[0]
    run = RunStore(store).run(rid)
    return rid, run.summary(), run.load_final_model()


def _full_disk(monkeypatch, trigger) -> dict:
    """Every atomic write fails with ENOSPC from the first one ``trigger(path)`` picks on
    (the disk stays full), as a real failing ``write()`` fails: no file named."""
    state = {"full": False}
    original = atomic._replace_atomically

    def replace(path, write, before_replace=None):
        if state["full"] or trigger(Path(path)):
            state["full"] = True

            def write(f):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return original(path, write, before_replace)

    monkeypatch.setattr(atomic, "_replace_atomically", replace)
    return state


def _second_checkpoint():
    seen = []

    def trigger(path: Path) -> bool:
        if path.name == "checkpoint.pt":
            seen.append(path)
        return len(seen) == 2  # the checkpoint of round 6
    return trigger


def _resumes_to_the_uninterrupted_run(capsys, store: Path, uninterrupted) -> None:
    rid, summary, model = uninterrupted
    run = RunStore(store).run(rid)
    assert live_status(run, run.status()["status"]) == "interrupted"
    code, out, err = _run(capsys, store)
    assert code == 0, err
    resumed = json.loads(out.strip().splitlines()[-1])
    assert {k: resumed[k] for k in SUMMARY_KEYS} == {k: summary[k] for k in SUMMARY_KEYS}
    again = run.load_final_model()
    assert again.keys() == model.keys() and all(torch.equal(again[k], model[k]) for k in model)
    rounds = [json.loads(line)["round"] for line in (run.path / "metrics.jsonl").read_text().splitlines()]
    assert rounds == list(range(1, 9))  # each round logged once


def test_a_full_disk_at_a_checkpoint_is_one_line_exit_3_and_the_run_resumes(tmp_path, capsys, monkeypatch,
                                                                            uninterrupted):
    store = tmp_path / "store"
    state = _full_disk(monkeypatch, _second_checkpoint())
    code, out, err = _run(capsys, store)
    assert state["full"]
    assert code == 3, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert re.search(r"no space left on the device writing \S*/checkpoint\.pt after round 6", lines[0]), lines[0]
    assert "resume" in lines[0]
    monkeypatch.undo()  # space freed
    _resumes_to_the_uninterrupted_run(capsys, store, uninterrupted)


def test_a_full_disk_while_the_log_is_appended_leaves_a_torn_line_that_resuming_repairs(
        tmp_path, capsys, monkeypatch, uninterrupted):
    store = tmp_path / "store"
    original = run_module.append_jsonl

    def append(path, rows, root=None, **options):
        if any(row.get("round") == 5 for row in rows):
            with open(path, "ab") as f:  # half a line reached the disk
                f.write(b'{"round": 5, "train_lo')
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return original(path, rows, root, **options)

    monkeypatch.setattr(run_module, "append_jsonl", append)
    code, _, err = _run(capsys, store)
    assert code == 3 and len(err.strip().splitlines()) == 1, err
    assert "metrics.jsonl after round 5" in err
    monkeypatch.undo()
    _resumes_to_the_uninterrupted_run(capsys, store, uninterrupted)


def test_a_full_disk_before_training_is_exit_2_and_leaves_no_run_folder(tmp_path, capsys, monkeypatch):
    store = tmp_path / "store"
    _full_disk(monkeypatch, lambda path: path.name == "config.json")
    code, _, err = _run(capsys, store)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert re.search(r"no space left on the device writing \S*config\.json; nothing was trained", err), err
    assert RunStore(store).run_ids() == []
    assert [p.name for p in store.iterdir()] == []  # the run folder it made is gone; the root stays


def test_runs_verify_refuses_a_stored_final_model_that_is_not_the_configs_model(tmp_path, capsys, uninterrupted):
    from flcore.api import run_experiment
    from flcore.config import resolve_config

    store = tmp_path / "store"
    cfg = resolve_config(scale="smoke", device="cpu", rounds=2, eval_every=1)
    run_experiment(cfg, store=store)
    run = RunStore(store).run(cfg.run_id())
    code, _, err = run_cli(capsys, "runs", "--store", str(store), "--verify")
    assert code == 0, err
    good = run.load_final_model()
    for state, pattern in [
        ({**good, next(iter(good)): torch.full_like(next(iter(good.values())), math.nan)}, "NaN or infinite"),
        ({k: v.double() for k, v in good.items()}, "is float64"),
        ({f"net.{k}": v for k, v in good.items()}, "not a parameter of the config's model"),
    ]:
        run.save_final_model(state)  # with its digest recorded: only the content is wrong
        code, out, err = run_cli(capsys, "runs", "--store", str(store), "--verify")
        assert code == 3, out + err
        assert re.search(rf"final_model\.pt: .*{pattern}", out + err), out + err
    run.save_final_model(good)
    assert run_cli(capsys, "runs", "--store", str(store), "--verify")[0] == 0



def test_a_full_disk_in_a_batched_sweep_names_the_file_exits_3_and_resumes(tmp_path, capsys, monkeypatch):
    sweep = ["sweep", "--scale", "smoke", "--device", "cpu", "--rounds", "8", "--eval-every", "1",
             "--checkpoint-every", "3", "--seed", "0,1", "--no-progress", "--json", "--workers", "1"]

    def rows(out: str) -> dict:
        return {row["run_id"]: row for row in map(json.loads, out.strip().splitlines())}

    code, out, _ = run_cli(capsys, *sweep, "--store", str(tmp_path / "reference"))
    reference = rows(out)
    assert code == 0 and len(reference) == 2
    seen = []
    state = _full_disk(monkeypatch, lambda path: path.name == "checkpoint.pt" and len(seen.append(path) or seen) == 3)
    code, out, err = run_cli(capsys, *sweep, "--store", str(tmp_path / "store"))
    assert state["full"] and code == 3 and "Traceback" not in err, err
    assert all(re.match(r"no space left on the device writing \S*/checkpoint\.pt", row["error"])
               for row in rows(out).values()), out
    monkeypatch.undo()
    code, out, err = run_cli(capsys, *sweep, "--store", str(tmp_path / "store"))
    assert code == 0, err
    again = rows(out)
    assert {rid: {k: again[rid][k] for k in SUMMARY_KEYS} for rid in again} == {
        rid: {k: reference[rid][k] for k in SUMMARY_KEYS} for rid in reference}
