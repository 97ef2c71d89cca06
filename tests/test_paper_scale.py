"""Paper scale for GPU users (issue 27): capped previews that continue, the authors' split
files, the rounded Dirichlet split and the price of a batch before it runs."""
import contextlib
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

from flcore import run_experiment
from flcore.cli.main import main
from flcore.config import resolve_config
from flcore.data import (
    partition_dirichlet,
    partition_dirichlet_rounded,
    read_split_file,
    split_indices,
    write_fake_cifar,
)
from flcore.data.cifar import expected_checksums
from flcore.errors import ConfigError
from flcore.reproduction.artifacts import get_artifact, runs_for
from flcore.reproduction.budget import device_rates
from flcore.reproduction.claims import capped_reason, spread_specs
from flcore.reproduction.pricing import price_runs
from flcore.reproduction.runner import ensure_runs, results_frame
from flcore.sim.round_driver import RoundDriver
from flcore.store import check_run

#: The file takes about two minutes on one core (capped, resumed and paper-scale runs).
pytestmark = pytest.mark.slow

SMOKE = {"scale": "smoke", "method": "fedsam", "rounds": 12, "checkpoint_every": 4, "eval_every": 3, "eval_last": 2}


def _final_model(store, run_id):
    return torch.load(store / run_id / "final_model.pt", weights_only=True)


def _metrics(store, run_id):
    return [json.loads(line) for line in (store / run_id / "metrics.jsonl").read_text().splitlines()
            if line.strip()]


def _same_log(got, want, run_id):
    """Equal metrics logs: every key and round, floats to float32 rounding (rel 1e-5)."""
    assert [sorted(row) for row in got] == [sorted(row) for row in want], run_id
    for a, b in zip(got, want):
        for key, value in b.items():
            if isinstance(value, float) or (isinstance(value, list) and value and isinstance(value[0], float)):
                assert a[key] == pytest.approx(value, rel=1e-5, abs=1e-7), (run_id, a["round"], key)
            else:
                assert a[key] == value, (run_id, a["round"], key)


def _count_rounds(monkeypatch):
    trained = []
    original = RoundDriver.train_round

    def counting(self, members, round):
        trained.extend(round for _ in members)
        return original(self, members, round)

    monkeypatch.setattr(RoundDriver, "train_round", counting)
    return trained


# ----------------------------------------------------------------------------- capped runs

def test_capped_run_keeps_its_id_and_continues_to_the_uninterrupted_result(tmp_path, monkeypatch):
    """A cap stops the run (status capped, checkpoint at the cap, a preview evaluation);
    the same config without the cap continues from the checkpoint, trains only the rest, and
    ends with the log and model of a run never capped."""
    full = run_experiment(SMOKE, tmp_path / "full")
    capped_cfg = resolve_config({**SMOKE, "max_rounds": 5})
    assert capped_cfg.run_id() == full["run_id"], "the cap is not part of the run's identity"
    store = tmp_path / "capped"
    trained = _count_rounds(monkeypatch)
    capped = run_experiment(capped_cfg, store)
    assert capped["status"] == "capped" and capped["rounds_done"] == 5 and trained == list(range(5))
    status = json.loads((store / full["run_id"] / "status.json").read_text())
    assert status["status"] == "capped" and status["rounds_done"] == 5 and status["rounds"] == 12
    assert torch.load(store / full["run_id"] / "checkpoint.pt", weights_only=True)["rounds_done"] == 5
    last = _metrics(store, full["run_id"])[-1]
    assert last["round"] == 5 and last["preview"] is True and "test_accuracy" in last
    assert check_run(_run(store, full["run_id"]), deep=True) == []
    # asking again with the same cap trains nothing
    assert run_experiment(capped_cfg, store)["status"] == "capped" and trained == list(range(5))
    # no cap: continues from round 5
    resumed = run_experiment(SMOKE, store)
    assert trained == list(range(12)), "rounds 0-4 were not trained again"
    assert resumed["status"] == "finished" and resumed["final_accuracy"] == full["final_accuracy"]
    assert _metrics(store, full["run_id"]) == _metrics(tmp_path / "full", full["run_id"])
    for name, tensor in _final_model(tmp_path / "full", full["run_id"]).items():
        assert torch.equal(tensor, _final_model(store, full["run_id"])[name]), name


def _run(store, run_id):
    from flcore.store import RunStore

    return RunStore(store).run(run_id)


def test_capped_runs_decide_no_verdict_and_a_higher_cap_continues(tmp_path):
    """ensure_runs with a cap: the page's frame shows the runs finished at the cap, the
    claims engine's frame (no cap) says "N of M rounds"; a higher cap continues them."""
    specs = runs_for(["fedsam-table-2"], "smoke", [0])[:1]
    frame = ensure_runs(specs, store=tmp_path, max_rounds=1, log=None)
    assert set(frame["status"]) == {"finished"} and set(frame["capped_at"]) == {1}
    plain = results_frame(specs, tmp_path)
    assert set(plain["status"]) == {"capped"}
    rounds = int(plain["rounds"].iloc[0])
    assert rounds > 2 and capped_reason(plain) == f"1 of {rounds} rounds"
    again = ensure_runs(specs, store=tmp_path, max_rounds=2, log=None)
    assert set(again["capped_at"]) == {2} and set(again["run_id"]) == set(frame["run_id"])


def test_max_rounds_env_caps_ensure_runs(tmp_path, monkeypatch):
    """``flcore reproduce --max-rounds`` reaches the notebooks' own ensure_runs calls."""
    monkeypatch.setenv("FLCORE_MAX_ROUNDS", "2")
    frame = ensure_runs(runs_for(["fedsam-table-2"], "smoke", [0])[:1], store=tmp_path, log=None)
    assert list(frame["capped_at"]) == [2]
    monkeypatch.setenv("FLCORE_MAX_ROUNDS", "two")
    with pytest.raises(ValueError, match="FLCORE_MAX_ROUNDS"):
        ensure_runs([], store=tmp_path, log=None)


# ----------------------------------------------------------------------------- split files

def _cifar10_split(labels, users):
    """A split JSON in the FedSAM repository's format over a CIFAR-10 training set."""
    doc = {"users": [], "num_samples": [], "user_data": {}}
    for user, idx in users.items():
        doc["users"].append(user)
        doc["num_samples"].append(len(idx))
        doc["user_data"][user] = {"x": [f"img_{i}_label_{int(labels[i])}.png" for i in idx],
                                  "y": [int(labels[i]) for i in idx]}
    return doc


def _train_labels(root, name="cifar10"):
    import pickle

    folder = root / ("cifar-10-batches-py" if name == "cifar10" else "cifar-100-python")
    files = [f"data_batch_{i}" for i in range(1, 6)] if name == "cifar10" else ["train"]
    labels, names = [], []
    for f in files:
        with open(folder / f, "rb") as handle:  # written by write_fake_cifar in this test
            batch = pickle.load(handle, encoding="latin1")
        labels += batch["labels" if name == "cifar10" else "fine_labels"]
        names += batch["filenames"]
    return np.array(labels), names


@pytest.fixture()
def cifar10(tmp_path):
    md5s = write_fake_cifar(tmp_path / "data", "cifar10", num_train=60, num_test=10)
    labels, _ = _train_labels(tmp_path / "data")
    return tmp_path, md5s, labels


def _write(path, doc):
    path.write_text(json.dumps(doc))
    return path


def test_split_file_drives_a_run_and_its_digest_not_path_is_the_id(cifar10, capsys):
    tmp_path, md5s, labels = cifar10
    users = {"7": list(range(0, 20)), "3": list(range(20, 39)), "11": list(range(40, 60))}  # image 39 unused
    split = _write(tmp_path / "federated_train_alpha_0.05.json", _cifar10_split(labels, users))
    args = ["run", "--dataset", "cifar10", "--scale", "paper", "--method", "fedavg", "--partition", "file",
            "--split-file", str(split), "--per-round", "2", "--rounds", "2", "--eval-every", "1",
            "--data-root", str(tmp_path / "data"), "--store", str(tmp_path / "runs"), "--no-progress", "--json"]
    with expected_checksums("cifar10", md5s):
        assert main(args) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    config = json.loads((tmp_path / "runs" / summary["run_id"] / "config.json").read_text())
    assert config["clients"] == 3 and config["split_sha256"] == read_split_file(split).sha256
    moved = shutil.copy(split, tmp_path / "elsewhere.json")
    base = {"dataset": "cifar10", "scale": "paper", "partition": "file", "per_round": 2, "method": "fedavg",
            "rounds": 2, "eval_every": 1, "data_root": str(tmp_path / "data")}
    assert resolve_config({**base, "split_file": str(moved)}).run_id() == summary["run_id"]
    users["3"] = list(range(20, 40))
    other = _write(tmp_path / "other.json", _cifar10_split(labels, users))
    assert resolve_config({**base, "split_file": str(other)}).run_id() != summary["run_id"]
    parts = split_indices(read_split_file(split), "cifar10", labels)
    assert [p.tolist() for p in parts] == [list(range(0, 20)), list(range(20, 39)), list(range(40, 60))]


def _out_of_range(doc):
    doc["user_data"]["b"]["x"][0] = "img_99_label_0.png"
    doc["user_data"]["b"]["y"][0] = 0
    return doc


def _first_label_mismatch(labels):
    doc = _cifar10_split(labels, {"a": [0, 1], "b": [2, 3]})
    wrong = (int(labels[3]) + 1) % 10
    doc["user_data"]["b"]["x"][1] = f"img_3_label_{wrong}.png"
    doc["user_data"]["b"]["y"][1] = wrong
    return doc


@pytest.mark.parametrize("edit,message", [
    (lambda d, labels: _first_label_mismatch(labels), "user 'b' entry 1 ('img_3_label_"),
    (lambda d, labels: _out_of_range(d), "index 99 outside 0..59"),
    (lambda d, labels: {**d, "user_data": {**d["user_data"], "b": d["user_data"]["a"]}}, "users must be disjoint"),
    (lambda d, labels: {**d, "num_samples": [2, 3]}, "\"num_samples\" says 3"),
])
def test_bad_split_files_are_refused_before_training(cifar10, capsys, edit, message):
    tmp_path, md5s, labels = cifar10
    doc = edit(_cifar10_split(labels, {"a": [0, 1], "b": [2, 3]}), labels)
    split = _write(tmp_path / "bad.json", doc)
    args = ["run", "--dataset", "cifar10", "--scale", "paper", "--partition", "file", "--split-file", str(split),
            "--per-round", "1", "--rounds", "1", "--data-root", str(tmp_path / "data"),
            "--store", str(tmp_path / "runs"), "--no-progress"]
    with expected_checksums("cifar10", md5s):
        assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not any((tmp_path / "runs").glob("*/metrics.jsonl")), "nothing was trained"


def test_cifar100_split_names_images_by_the_pickles_filenames(tmp_path):
    write_fake_cifar(tmp_path, "cifar100", num_train=30, num_test=5)
    labels, names = _train_labels(tmp_path, "cifar100")
    order = [17, 2, 29, 5]
    doc = {"users": ["u0", "u1"], "num_samples": [2, 2],
           "user_data": {"u0": {"x": [names[i] for i in order[:2]], "y": [int(labels[i]) for i in order[:2]]},
                         "u1": {"x": [names[i] for i in order[2:]], "y": [int(labels[i]) for i in order[2:]]}}}
    split = read_split_file(_write(tmp_path / "split.json", doc))
    assert [p.tolist() for p in split_indices(split, "cifar100", labels, names)] == [[2, 17], [5, 29]]
    doc["user_data"]["u1"]["x"][0] = "cichlid_s_001814.png"
    with pytest.raises(Exception, match="user 'u1' entry 0 .*no CIFAR-100 training image has this name"):
        split_indices(read_split_file(_write(tmp_path / "bad.json", doc)), "cifar100", labels, names)


def test_partition_file_needs_a_split_file():
    with pytest.raises(ConfigError, match="split_file"):
        resolve_config({"dataset": "cifar10", "scale": "paper", "partition": "file"})


# ----------------------------------------------------------------------------- Dirichlet

def _cifar_labels(classes):
    return np.repeat(np.arange(classes), 50_000 // classes)


def _classes_per_client(parts, labels):
    return float(np.mean([len(np.unique(labels[p])) for p in parts]))


def test_rounded_dirichlet_is_a_partition_with_the_priors_counts():
    """Every client gets exactly 500 distinct images, and at alpha = inf (the prior is the
    class proportions) exactly 50 of each CIFAR-10 class: the rounded expected counts."""
    labels = _cifar_labels(10)
    for alpha in (0.05, float("inf")):
        parts = partition_dirichlet_rounded(labels, 100, alpha, samples_per_client=500, seed=1)
        flat = np.concatenate(parts)
        assert all(len(p) == 500 for p in parts) and len(np.unique(flat)) == len(flat) == 50_000
    assert all(np.bincount(labels[p], minlength=10).tolist() == [50] * 10 for p in parts)


def test_rounded_dirichlet_statistics_match_the_published_cifar10_split():
    """Classes per client at CIFAR-10 alpha = 0.05 over seeds 0-4: the published split file
    has 1.32; the rounded split's mean is within two seed standard deviations of it."""
    labels = _cifar_labels(10)
    values = [_classes_per_client(partition_dirichlet_rounded(labels, 100, 0.05, 500, seed=s), labels)
              for s in range(5)]
    assert abs(np.mean(values) - 1.32) <= 2 * np.std(values, ddof=1) + 0.05
    # and it is a different split from the multinomial one (a new partition name, new run ids)
    assert any(not np.array_equal(a, b) for a, b in zip(partition_dirichlet(labels, 100, 0.05, 500, seed=0),
                                                         partition_dirichlet_rounded(labels, 100, 0.05, 500, seed=0)))


# ----------------------------------------------------------------------------- the price

ROWS = {"sweep_time": [
    {"engine": "one-at-a-time", "device": "cpu", "machine": "CPU, 2 cores", "seconds": 10.0, "cost": 1000.0,
     "workers": 2, "date": "2026-01-01", "model": "mnist1d_cnn"},
    {"engine": "batched", "device": "cpu", "machine": "CPU, 2 cores", "seconds": 5.0, "cost": 1000.0,
     "workers": 2, "group_runs": 8, "date": "2026-01-01", "model": "mnist1d_cnn"},
]}


def test_plan_prices_distinct_unfinished_runs_per_device_kind(tmp_path):
    specs = runs_for(["fedsam-table-2"], "smoke", [0])
    rates = device_rates(ROWS)
    plan = price_runs(specs + specs[:3], tmp_path, rates, device="cpu")
    distinct = plan["runs"]["distinct"]
    assert plan["runs"]["requested"] == len(specs) + 3 and plan["runs"]["to_train"] == distinct
    cpu = next(k for k in plan["devices"] if k["kind"] == "CPU, 2 cores")
    assert cpu["calibrated"] and cpu["hours"] > 0 and cpu["priced_runs"] == distinct
    gpu = [k for k in plan["devices"] if k["device"] == "cuda"]
    assert gpu and all(not k["calibrated"] and k["hours"] is None and "uncalibrated" in k["note"] for k in gpu)
    # where the hours go: every priced run in one model's row, the rows adding up to the work
    assert sum(m["runs"] for m in cpu["by_model"].values()) == distinct
    assert set(cpu["by_model"]) == {f"{s.resolve().model} on {s.resolve().dataset}" for s in specs}
    assert all(m["worker_hours"] > 0 and not m["priced_from_flops"] for m in cpu["by_model"].values())
    assert sum(m["worker_hours"] for m in cpu["by_model"].values()) >= cpu["hours"] - 0.01  # 2 workers share them
    assert all(k["by_model"] == {} for k in gpu)
    assert not tmp_path.joinpath("x").exists() and list(tmp_path.iterdir()) == [], "nothing was written"
    # a finished run is skipped; the rest cost less
    ensure_runs(specs[:1], store=tmp_path, log=None)
    after = price_runs(specs, tmp_path, rates, device="cpu")
    assert after["runs"]["finished"] == 1 and after["runs"]["to_train"] == distinct - 1
    assert next(k for k in after["devices"] if k["kind"] == "CPU, 2 cores")["hours"] <= cpu["hours"]


def test_reproduce_paper_plan_json_prints_totals_per_device_kind(tmp_path, capsys):
    """(``--all`` prices every artifact the same way; two keep the test short.)"""
    code = main(["reproduce", "fedsam-table-2", "fedsam-table-4", "--scale", "paper", "--plan", "--json",
                 "--store", str(tmp_path / "runs")])
    assert code == 0
    plan = json.loads(capsys.readouterr().out)
    table_2 = {s.run_id() for s in runs_for(["fedsam-table-2"], "paper", [0])}
    assert plan["scale"] == "paper" and plan["runs"]["distinct"] == plan["runs"]["to_train"] >= len(table_2) > 100
    assert plan["devices"] and all("hours" in k and "calibrated" in k for k in plan["devices"])
    assert not (tmp_path / "runs").exists(), "--plan trains nothing and writes nothing"


def test_official_split_statistics_come_from_the_file(tmp_path):
    from flcore.reproduction.splits import official_split, split_summary

    labels = np.array([0, 0, 1, 2, 2, 2, 3, 9])
    doc = _cifar10_split(labels, {"5": [0, 1, 2], "9": [3, 4, 5, 6, 7]})
    split = official_split(_write(tmp_path / "federated_train_alpha_0.05.json", doc), "cifar10", 0.05)
    assert split.counts.tolist() == [[2, 1] + [0] * 8, [0, 0, 3, 1, 0, 0, 0, 0, 0, 1]]
    assert split.classes_per_client.tolist() == [2, 3] and split.labels_from.startswith("split file")
    assert len(split_summary([split])) == 1


# ----------------------------------------------------------------------------- a notebook in Colab

ROOT = Path(__file__).resolve().parents[1]
#: three FedAvg runs of up to 8 rounds at the smoke scale, a checkpoint every 2 rounds
COLAB_NOTEBOOK = "fedsam-fig-3"


def _papermill(tmp_path, name: str, store: Path, *params: str) -> subprocess.Popen:
    """The notebook executed as a Colab user runs it: papermill, the store a parameter, one
    worker (runs train in the kernel) and one thread (the same sums in every process)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env.pop("FLCORE_MAX_ROUNDS", None)
    env.pop("FLCORE_STORE", None)
    notebook = ROOT / get_artifact(COLAB_NOTEBOOK).notebook_path
    argv = [sys.executable, "-m", "papermill", str(notebook), str(tmp_path / name), "--no-progress-bar",
            "-p", "store", str(store), "-p", "device", "cpu", "-p", "workers", "1", *params]
    return subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _finish(proc: subprocess.Popen) -> None:
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]


def _disconnect(proc: subprocess.Popen) -> None:
    """A lost Colab runtime: papermill, its kernel (which leads a session of its own) and
    everything the kernel started are killed at once."""
    kernels = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == proc.pid:
                kernels.append(os.getpgid(int(entry.name)))
        except (OSError, ValueError, IndexError):
            continue
    for group in {*kernels, proc.pid}:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
    proc.wait(timeout=60)


def _statuses(store: Path) -> dict[str, dict]:
    out = {}
    for path in store.glob("*/status.json"):
        with contextlib.suppress(OSError, ValueError):
            out[path.parent.name] = json.loads(path.read_text())
    return out


def _markdown_outputs(path: Path) -> list[tuple[dict, str]]:
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    return [(out.get("metadata", {}), out.get("data", {}).get("text/markdown", ""))
            for cell in notebook.cells if cell.cell_type == "code" for out in cell.get("outputs", [])]


def _checkpointed_round(run_dir: Path) -> int:
    """The round a run resumes from: its checkpoint's (0 without one)."""
    checkpoint = run_dir / "checkpoint.pt"
    return torch.load(checkpoint, weights_only=True)["rounds_done"] if checkpoint.is_file() else 0


@pytest.mark.slow
def test_a_notebook_capped_then_disconnected_continues_each_run_from_its_checkpoint(tmp_path):
    """Colab on a Drive store: ``-p max_rounds 1`` stops every run at round 1 and the page
    says so first; the uncapped rerun, killed (runtime lost) once a run has checkpointed a
    later round, and rerun again, finishes every run from its last checkpoint -- rounds
    trained once -- with the metrics and model of a run never stopped."""
    pytest.importorskip("papermill")
    from flcore.report.page import CAPPED_BANNER_KEY, capped_banner

    store = tmp_path / "drive"
    specs = [s for s in runs_for([COLAB_NOTEBOOK], "smoke", [0]) if s.available]
    ids = {s.run_id(): s for s in specs}
    rounds = {rid: s.resolve().rounds for rid, s in ids.items()}
    assert len(ids) == 3 and max(rounds.values()) == 8

    _finish(_papermill(tmp_path, "capped.ipynb", store, "-p", "max_rounds", "1"))
    outputs = _markdown_outputs(tmp_path / "capped.ipynb")
    assert [text for meta, text in outputs if CAPPED_BANNER_KEY in meta] == [capped_banner(1)]
    assert any("**not checked: 1 of 4 rounds**" in text for _, text in outputs), "claims decide nothing"
    capped = _statuses(store)
    assert set(ids) <= set(capped) and {(s["status"], s["rounds_done"]) for s in capped.values()} == {("capped", 1)}

    running = _papermill(tmp_path, "lost.ipynb", store)
    deadline = time.time() + 240
    while not any(s["status"] == "running" and s["rounds_done"] >= 2 for s in _statuses(store).values()):
        assert running.poll() is None and time.time() < deadline, "no run checkpointed a round before the end"
        time.sleep(0.005)
    _disconnect(running)
    before = _statuses(store)
    # A run resumes from its checkpoint.  Its status may lag one checkpoint behind: the
    # runtime can be lost between writing the checkpoint and updating the status.
    starts = {rid: _checkpointed_round(store / rid) for rid, s in before.items() if s["status"] != "finished"}
    killed = {rid: at for rid, at in starts.items() if at >= 2}
    assert killed, before
    for rid, at in killed.items():
        assert before[rid]["status"] == "running" and 1 <= before[rid]["rounds_done"] <= at, before[rid]

    _finish(_papermill(tmp_path, "rerun.ipynb", store))
    after = _statuses(store)
    assert {after[rid]["status"] for rid in ids} == {"finished"}
    assert not any(CAPPED_BANNER_KEY in meta for meta, _ in _markdown_outputs(tmp_path / "rerun.ipynb"))
    for rid, status in after.items():
        total = json.loads((store / rid / "config.json").read_text())["rounds"]
        # trained in the last session: the rounds after its checkpoint (the cap's, or the lost session's)
        start = starts.get(rid)
        assert status["timed_rounds"] == total - (1 if start is None else start), rid
    reference = tmp_path / "uninterrupted"
    for rid in killed:
        spec = ids.get(rid) or next(s for s in spread_specs("smoke") if s.run_id() == rid)
        ensure_runs([spec], store=reference, device="cpu", workers=1, log=None)
        # the same log and weights, to float32 rounding: the rerun trained the run batched
        # with others, the reference alone (flcore.sim.multi_run: batched equals sequential)
        _same_log(_metrics(store, rid), _metrics(reference, rid), rid)
        for name, tensor in _final_model(reference, rid).items():
            assert torch.allclose(tensor, _final_model(store, rid)[name], rtol=1e-5, atol=1e-5), (rid, name)


def test_data_split_pages_show_the_authors_split_files_beside_flcores(tmp_path, monkeypatch):
    """A data-split page given ``split_files`` shows each file's statistics, read from its
    labels, right before flcore's split of the same data set and alpha; without files it
    says how to give them; a data set flcore does not split is refused in one line."""
    from flcore.report.split_files import NO_SPLIT_FILES, show_official_splits
    from flcore.reproduction.splits import Split, official_splits

    labels = np.array([0, 0, 1, 2, 2, 2, 3, 9])
    path = _write(tmp_path / "federated_train_alpha_0.05.json",
                  _cifar10_split(labels, {"5": [0, 1, 2], "9": [3, 4, 5, 6, 7]}))
    one_class = np.zeros((4, 10), dtype=np.int64)
    one_class[np.arange(4), [0, 1, 2, 3]] = 500
    ours = [Split("cifar10", alpha, one_class, 10_000, "CIFAR class counts") for alpha in (0.0, 0.05, 100.0)]
    tables, shown = [], []
    monkeypatch.setattr("IPython.display.display", shown.append)

    class Recording:
        def table(self, frame, caption):
            tables.append((frame, caption))

    official = show_official_splits(Recording(), {"cifar10": {0.05: str(path)}}, ours)
    assert [s.classes_per_client.tolist() for s in official] == [[2, 3]]
    (frame, caption), = tables
    assert frame["labels"].tolist() == ["split file federated_train_alpha_0.05.json", "CIFAR class counts"]
    assert frame["alpha"].tolist() == [0.05, 0.05] and frame["clients"].tolist() == [2, 4]
    assert frame["mean_classes_per_client"].tolist() == [2.5, 1.0]
    assert frame["images_per_client"].tolist() == ["3\u20135", "500"] and frame["train_samples"].tolist() == [8, 2000]
    assert ("CIFAR-10 alpha = 0.05: 2.50 classes per client in the file (2 clients, 8 images) against 1.00 in "
            "flcore's split") in caption
    assert show_official_splits(Recording(), None, ours) == [] and len(tables) == 1
    assert shown[-1].data == NO_SPLIT_FILES and "split_files" in NO_SPLIT_FILES
    with pytest.raises(ValueError, match="data set 'mnist' is not one of cifar10, cifar100"):
        official_splits({"mnist": {0.5: str(path)}})
    with pytest.raises(ValueError, match="alpha 'low' is not a number"):
        official_splits({"cifar10": {"low": str(path)}})


def test_a_capped_page_built_by_reproduce_says_so_once_below_its_title(tmp_path):
    """``flcore reproduce --max-rounds`` passes the cap as the notebook's parameter: the
    banner the notebook's Page showed gives way to the page's own, right below the title."""
    import nbformat

    from flcore.report.page import CAPPED_BANNER_KEY, capped_banner
    from flcore.site.reproduce import finish_page

    shown = nbformat.v4.new_output("display_data", data={"text/markdown": capped_banner(3)},
                                   metadata={CAPPED_BANNER_KEY: True})
    table = nbformat.v4.new_output("display_data", data={"text/markdown": "**Table 1.** Runs."})
    cells = [nbformat.v4.new_markdown_cell("# Title\n\nText."), nbformat.v4.new_code_cell("page = Page(...)"),
             nbformat.v4.new_code_cell("page.table(...)")]
    cells[1].outputs, cells[2].outputs = [shown], [table]
    path = tmp_path / "fedsam-fig-3.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    finish_page(path, "smoke", [0], "result", artifact=get_artifact("fedsam-fig-3"), max_rounds=3)
    page = nbformat.read(path, as_version=4)
    assert page.cells[1].source.startswith(capped_banner(3))
    assert nbformat.writes(page).count("A capped preview") == 1
    code = [c for c in page.cells if c.cell_type == "code"]
    assert code[0].outputs == [] and "remove-cell" in code[0].metadata["tags"]
    assert code[1].outputs == [table] and "hide-input" in code[1].metadata["tags"]


def test_a_pages_max_rounds_caps_the_notebooks_runs_and_a_training_page_says_so(monkeypatch):
    from flcore.report.page import CAPPED_BANNER_KEY, Page, capped_banner
    from flcore.reproduction.runner import default_max_rounds

    shown = []  # conftest starts every test without a cap and removes the one this test sets
    monkeypatch.setattr("IPython.display.display", lambda obj, metadata=None: shown.append((obj.data, metadata)))
    Page("fedsam-table-9", max_rounds=2)  # a config page: trains nothing, so no banner
    assert default_max_rounds() == 2 and shown == []
    Page("fedsam-fig-3", max_rounds=1)
    assert default_max_rounds() == 1 and shown == [(capped_banner(1), {CAPPED_BANNER_KEY: True})]
    Page("fedsam-fig-3")  # None: the cap the process has (flcore reproduce's) stays
    assert default_max_rounds() == 1 and len(shown) == 1
    for bad in (0, 2.5, True, "3"):
        with pytest.raises(ValueError, match="max_rounds: expected a positive integer"):
            Page("fedsam-fig-3", max_rounds=bad)


@pytest.mark.parametrize("method,dataset", [("adabest+asam", "cifar10"), ("feddyn", "cifar100"), ("fedsmoo", "fmnist")])
def test_plan_sizes_models_and_state_as_built_without_building_them(method, dataset):
    """The plan's memory and store estimates count parameters on the meta device and the
    state tables on a probe model: the same numbers as the model built for training."""
    from flcore.algorithms import get_method
    from flcore.config import DATASET_FACTS
    from flcore.flat import FlatModel
    from flcore.models import build_model
    from flcore.planning.planner import bytes_per_run, model_parameters
    from flcore.reproduction.pricing import run_store_bytes

    cfg = resolve_config(method=method, dataset=dataset, scale="paper")
    shape, classes, _ = DATASET_FACTS[dataset]
    flat = FlatModel(build_model(cfg.model, shape, classes))
    kinds = list(get_method(method).build_client(cfg, flat).client_state_spec().values())
    tables = sum(kind in ("zeros", "model") for kind in kinds)
    assert tables >= 1 and model_parameters(cfg.model, dataset) == flat.num_params
    activations = cfg.batch_size * int(np.prod(shape)) * 4 * 64
    assert bytes_per_run(cfg) == (cfg.per_round * (12 * flat.num_params * 4 + activations)
                                  + tables * flat.num_params * 4 * cfg.clients)
    server = get_method(method).build_server(cfg).init(torch.zeros(flat.num_params), cfg.clients)

    def floats(tree):
        return sum(map(floats, tree.values())) if isinstance(tree, dict) else getattr(tree, "numel", int)()

    server_floats = floats(server)
    client_floats = sum(flat.num_params if kind in ("zeros", "model") else 1 for kind in kinds) * cfg.clients
    evaluations = sum(1 for r in range(1, cfg.rounds + 1)
                      if r % cfg.eval_every == 0 or r > cfg.rounds - cfg.eval_last or r == cfg.rounds)
    expected = (4 * flat.num_params * (2 + len(cfg.snapshot_rounds) * (1 + cfg.per_round))
                + 4 * (server_floats + client_floats) + 160 * evaluations
                + 20 * cfg.clients * (cfg.rounds // cfg.eval_every + 1) + 2048)
    assert run_store_bytes(cfg) == expected
