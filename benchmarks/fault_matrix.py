"""The fault matrix: every way a user, a crash or a shared store can turn flcore's inputs
and records against it, tried on tiny runs, each checked for a handled outcome.

    python benchmarks/fault_matrix.py            # table
    python benchmarks/fault_matrix.py --json     # one JSON object (the Reliability page)
    python -m flcore.report.reliability benchmarks/results/fault_matrix.json > book/reliability.md

Categories and what "handled" means for each case:

- ``bad_configs``: ``flcore run`` with a bad value exits 2 with one ``flcore: error:`` line
  naming the field (no traceback) and writes nothing to the store;
- ``kills``: a run killed (SIGKILL) at a random round and run again ends bit-identical
  to an uninterrupted run (summary and final model);
- ``store_corruptions``: after one file of a finished or interrupted run is damaged,
  ``flcore runs --json`` still lists every run and marks the damaged one (``--verify``
  for ``.pt`` files), and ``flcore run`` either returns the uninterrupted run's numbers or
  exits 3 naming the file and the fix -- never exit 0 with other numbers;
- ``data_faults``: bad tensors or CIFAR files raise ``DatasetError`` naming the source or
  the file before any training;
- ``concurrent_runs``: identical ``flcore run`` processes started together all return the
  same record and the log holds each round once; ``--no-wait`` against a held run exits 4;
- ``poisoned_files``: a ``.pt`` file whose pickle runs code when unpickled is refused
  (``flcore run``, ``runs --verify``, ``analyze``, the Python API) and the code never runs;
- ``links_and_special_files``, ``trust_without_proof``, ``listing_records``,
  ``interruption``, ``read_only_stores``, ``unbounded_inputs``: an adversarial store and
  unbounded inputs (``benchmarks/fault_classes.py`` says what each tries and what counts
  as handled);
- ``bundle_content``, ``bundle_archives``, ``page_injection``, ``split_files``,
  ``failure_cleanup``, ``disk_full``: results bundles crafted with every digest right,
  split files naming one image twice, failures beside other work and full disks
  (``benchmarks/fault_bundles.py``);
- ``command_limits``, ``book_files``, ``paper_text``, ``verdict_caches``: the command line's
  limits, the book's configuration files, text from a paper's files on the pages and the
  caches a verdict reads (``benchmarks/fault_round4.py``).  Nothing outside a store's root
  may change in any case.

Everything runs on the CPU at the smoke scale (MNIST-1D, 10 clients) in a temporary
directory; the whole matrix takes a few minutes on two cores.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pickle
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from provenance import git_commit  # noqa: E402

from flcore import resolve_config  # noqa: E402
from flcore.cli.main import main as cli_main  # noqa: E402

PYTHON = sys.executable
BASE = ["--scale", "smoke", "--device", "cpu", "--no-progress"]
#: The run the store faults and kills are tried on: 8 (store) or 40 (kills) rounds, every
#: round evaluated, a checkpoint every 3 rounds.
STORE_RUN = ["--rounds", "8", "--eval-every", "1", "--checkpoint-every", "3"]
KILL_RUN = ["--rounds", "40", "--eval-every", "1", "--checkpoint-every", "3"]
SUMMARY_KEYS = ("status", "rounds_done", "final_accuracy", "mean_last_100", "best_accuracy")


# --------------------------------------------------------------------------- helpers

def cli(argv: list[str]) -> tuple[int, str, str]:
    """``flcore ARGV`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli_main(argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except Exception as exc:  # noqa: BLE001 - an escaped exception is an unhandled case
            import traceback

            traceback.print_exc(file=err)
            rc = -1
            err.write(f"{type(exc).__name__}: {exc}\n")
    return rc, out.getvalue(), err.getvalue()


def subprocess_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}


def summary_of(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def same_numbers(a: dict, b: dict) -> bool:
    return all(a.get(k) == b.get(k) for k in SUMMARY_KEYS)


class Category:
    def __init__(self, name: str):
        self.name, self.tried, self.handled, self.failures = name, 0, 0, []

    def record(self, case: str, ok: bool, detail: str = "") -> None:
        self.tried += 1
        self.handled += bool(ok)
        if not ok:
            self.failures.append(f"{case}: {detail}"[:400])

    def as_dict(self) -> dict:
        return {"tried": self.tried, "handled": self.handled, "failures": self.failures}


# --------------------------------------------------------------------------- bad configs

BAD_CONFIGS: list[tuple[str, list[str]]] = [
    ("cnn on MNIST-1D", ["--model", "cnn"]),
    ("resnet18gn on MNIST-1D", ["--model", "resnet18gn"]),
    ("mnist1d_cnn on CIFAR-10", ["--dataset", "cifar10", "--model", "mnist1d_cnn"]),
    ("num_samples 5", ["--num-samples", "5"]),
    ("num_samples 0", ["--num-samples", "0"]),
    ("num_samples 1e12", ["--num-samples", "1e12"]),
    ("num_samples 2.5", ["--num-samples", "2.5"]),
    ("num_samples abc", ["--num-samples", "abc"]),
    ("samples_per_client 1e9", ["--samples-per-client", "1e9"]),
    ("samples_per_client 0", ["--samples-per-client", "0"]),
    ("clients 1e12", ["--clients", "1e12"]),
    ("clients 0", ["--clients", "0"]),
    ("clients -3", ["--clients", "-3"]),
    ("per_round 0", ["--per-round", "0"]),
    ("per_round > clients", ["--per-round", "11"]),
    ("rounds 1e12", ["--rounds", "1e12"]),
    ("rounds 0", ["--rounds", "0"]),
    ("rounds nan", ["--rounds", "nan"]),
    ("local_steps 1e12", ["--local-steps", "1e12"]),
    ("local_steps 0", ["--local-steps", "0"]),
    ("local_epochs 1e12", ["--local-epochs", "1e12"]),
    ("local_epochs 0", ["--local-epochs", "0"]),
    ("local_epochs with local_steps", ["--local-epochs", "2", "--local-steps", "5"]),
    ("batch_size 1e12", ["--batch-size", "1e12"]),
    ("batch_size 0", ["--batch-size", "0"]),
    ("eval_batch_size 1e12", ["--eval-batch-size", "1e12"]),
    ("eval_last 1e12", ["--eval-last", "1e12"]),
    ("eval_last -1", ["--eval-last", "-1"]),
    ("eval_every 1e12", ["--eval-every", "1e12"]),
    ("eval_every 0", ["--eval-every", "0"]),
    ("checkpoint_every 0", ["--checkpoint-every", "0"]),
    ("swa_start 1e12", ["--method", "centralized-swa", "--swa-start", "1e12"]),
    ("chunk_size 0", ["--chunk-size", "0"]),
    ("chunk_size -4", ["--chunk-size", "-4"]),
    ("classes_per_client 20 of 10 classes", ["--partition", "shards", "--classes-per-client", "20"]),
    ("fedavg with rho", ["--method", "fedavg", "--rho", "0.3"]),
    ("fedsam with mu", ["--method", "fedsam", "--mu", "0.1"]),
    ("samples_per_client with shards", ["--partition", "shards", "--samples-per-client", "10"]),
    ("unknown method", ["--method", "fedfoo"]),
    ("unknown dataset", ["--dataset", "imagenet"]),
    ("unknown partition", ["--partition", "pathological"]),
    ("unknown engine", ["--engine", "jit"]),
    ("unknown device", ["--device", "tpu"]),
    ("unknown scale", ["--scale", "huge"]),
    ("lr 0", ["--lr", "0"]),
    ("lr inf", ["--lr", "inf"]),
    ("momentum 1.5", ["--momentum", "1.5"]),
    ("rho -0.1", ["--method", "fedsam", "--rho", "-0.1"]),
    ("alpha -1", ["--alpha", "-1"]),
    ("seed -1", ["--seed", "-1"]),
    ("unknown flag", ["--learning-rate", "0.1"]),
    ("per_round -1", ["--per-round", "-1"]),
    ("per_round 1e12", ["--per-round", "1e12"]),
    ("rounds -1", ["--rounds", "-1"]),
    ("rounds 2.5", ["--rounds", "2.5"]),
    ("rounds inf", ["--rounds", "inf"]),
    ("local_steps -2", ["--local-steps", "-2"]),
    ("batch_size -1", ["--batch-size", "-1"]),
    ("batch_size 0.5", ["--batch-size", "0.5"]),
    ("eval_batch_size 0", ["--eval-batch-size", "0"]),
    ("eval_every -1", ["--eval-every", "-1"]),
    ("checkpoint_every 1e12", ["--checkpoint-every", "1e12"]),
    ("swa_cycle 0", ["--method", "centralized-swa", "--swa-cycle", "0"]),
    ("swa_cycle 1e12", ["--method", "centralized-swa", "--swa-cycle", "1e12"]),
    ("fedgf_window 0", ["--method", "fedgf", "--fedgf-window", "0"]),
    ("rho inf", ["--method", "fedsam", "--rho", "inf"]),
    ("eta -1", ["--method", "fedasam", "--eta", "-1"]),
    ("lr abc", ["--lr", "abc"]),
    ("weight_decay -1", ["--weight-decay", "-1"]),
    ("momentum 1", ["--momentum", "1"]),
    ("server_lr 0", ["--method", "fedopt", "--server-lr", "0"]),
    ("mu -1", ["--method", "fedprox", "--mu", "-1"]),
    ("alpha nan", ["--alpha", "nan"]),
    ("seed 1.5", ["--seed", "1.5"]),
    ("samples_per_client -5", ["--samples-per-client", "-5"]),
    ("num_samples -1", ["--num-samples", "-1"]),
    ("num_samples 50001 on CIFAR-10", ["--dataset", "cifar10", "--num-samples", "50001"]),
    ("clients 1e12 on CIFAR-10", ["--dataset", "cifar10", "--clients", "1e12"]),
    ("classes_per_client 200 on CIFAR-100", ["--dataset", "cifar100", "--partition", "shards",
                                             "--classes-per-client", "200"]),
    ("classes_per_client with dirichlet", ["--classes-per-client", "2"]),
    ("gloss_dual_scale unknown", ["--method", "fedgloss-sam", "--gloss-dual-scale", "both"]),
    ("swa_phase unknown", ["--method", "centralized-swa", "--swa-phase", "late"]),
    ("mixup_alpha -1", ["--mixup-alpha", "-1"]),
    ("cutout_size -1", ["--cutout-size", "-1"]),
    ("clip_norm 0", ["--clip-norm", "0"]),
    ("lr_decay 0", ["--lr-decay", "0"]),
    ("bias_correction with fedavg", ["--method", "fedavg", "--bias-correction"]),
    ("a value for --download", ["--download", "yes"]),
    ("centralized with clients", ["--method", "centralized-sgd", "--clients", "10"]),
]


def config_files(tmp: Path) -> list[tuple[str, list[str]]]:
    files = {
        "binary --config": (tmp / "cfg.bin", bytes(range(256)) * 4),
        "malformed YAML": (tmp / "bad.yaml", b"method: fedavg\nrounds: [1, 2\nlr: 0.1\n"),
        "YAML list": (tmp / "list.yaml", b"- fedavg\n- 10\n"),
        "unknown key in YAML": (tmp / "key.yaml", b"learning_rate: 0.1\n"),
        "invalid JSON": (tmp / "bad.json", b'{"method": "fedavg",'),
        "bad value in JSON": (tmp / "value.json", b'{"rounds": -5}'),
        "nested value in YAML": (tmp / "nested.yaml", b"rounds: {a: 1}\n"),
        "unknown key in JSON": (tmp / "key.json", b'{"rounds": 4, "epochs": 2}'),
        "a directory as --config": (tmp / "cfgdir", None),
    }
    out = []
    for name, (path, content) in files.items():
        if content is None:
            path.mkdir(exist_ok=True)
        else:
            path.write_bytes(content)
        out.append((name, ["--config", str(path)]))
    out.append(("missing --config", ["--config", str(tmp / "nope.yaml")]))
    return out


def run_bad_configs(tmp: Path) -> Category:
    cat = Category("bad_configs")
    store = tmp / "bad-store"
    for name, argv in BAD_CONFIGS + config_files(tmp):
        rc, _, err = cli(["run", *BASE, "--store", str(store), *argv])
        error_lines = [line for line in err.splitlines() if line.startswith("flcore: error:")]
        written = store.exists() and any(store.iterdir())
        ok = rc == 2 and len(error_lines) == 1 and "Traceback" not in err and not written
        cat.record(name, ok, f"rc={rc} written={written} stderr={err.strip()[-300:]!r}")
    return cat


# --------------------------------------------------------------------------- kills

def run_kills(tmp: Path, count: int, seed: int) -> Category:
    cat = Category("kills")
    rng = random.Random(seed)
    reference_store = tmp / "kill-reference"
    done = subprocess.run([PYTHON, "-m", "flcore", "run", *BASE, *KILL_RUN, "--store", str(reference_store),
                           "--json"], capture_output=True, text=True, env=subprocess_env(), timeout=300)
    reference = summary_of(done.stdout)
    reference_model = torch.load(Path(reference["run_dir"]) / "final_model.pt", weights_only=True)
    for i in range(count):
        kill_round = rng.randint(2, 37)
        store = tmp / f"kill-{i}"
        argv = [PYTHON, "-m", "flcore", "run", *BASE, *KILL_RUN, "--store", str(store), "--json"]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=subprocess_env())
        metrics = store / reference["run_id"] / "metrics.jsonl"
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            if metrics.exists() and metrics.read_bytes().count(b"\n") >= kill_round:
                break
            time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        again = subprocess.run(argv, capture_output=True, text=True, env=subprocess_env(), timeout=300)
        try:
            summary = summary_of(again.stdout)
            model = torch.load(Path(summary["run_dir"]) / "final_model.pt", weights_only=True)
            identical = same_numbers(summary, reference) and all(
                torch.equal(model[k], reference_model[k]) for k in reference_model)
            rows = [json.loads(line)["round"] for line in metrics.read_text().splitlines()]
            ok = again.returncode == 0 and identical and rows == list(range(1, 41))
            detail = f"rc={again.returncode} identical={identical} rows={len(rows)}"
        except Exception as exc:  # noqa: BLE001
            ok, detail = False, f"{exc!r} stderr={again.stderr[-300:]!r}"
        cat.record(f"SIGKILL after round {kill_round}", ok, detail)
    return cat


# --------------------------------------------------------------------------- store corruptions

class _StopAt:
    """A training callback that interrupts the run after round ``at`` (as Ctrl-C would)."""

    def __init__(self, at: int):
        self.at = at

    def on_round_end(self, done, state):
        if done == self.at:
            raise KeyboardInterrupt
        return {}


def _templates(tmp: Path) -> tuple[Path, Path, dict, dict]:
    """A store holding the finished run and a store holding the same run interrupted after
    round 5 (checkpoint at round 3), and the uninterrupted summary."""
    from flcore.api import run_experiment

    finished_store, interrupted_store = tmp / "tpl-finished", tmp / "tpl-interrupted"
    rc, out, err = cli(["run", *BASE, *STORE_RUN, "--store", str(finished_store), "--json"])
    assert rc == 0, err
    reference = summary_of(out)
    # a sibling run that stays intact: the listing must keep showing it
    rc, out, err = cli(["run", *BASE, *STORE_RUN, "--seed", "1", "--store", str(finished_store), "--json"])
    assert rc == 0, err
    other = summary_of(out)
    cfg = resolve_config(scale="smoke", device="cpu", rounds=8, eval_every=1, checkpoint_every=3)
    try:
        run_experiment(cfg, store=interrupted_store, callbacks=(_StopAt(5),))
    except KeyboardInterrupt:
        pass
    return finished_store, interrupted_store, reference, other


def _cut(path: Path, fraction: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])


def _drop_line(path: Path, index: int) -> None:
    lines = path.read_text().splitlines(keepends=True)
    del lines[index]
    path.write_text("".join(lines))


def _garble_line(path: Path, index: int) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[index] = "{\"round\": 3, \"test_acc\n"
    path.write_text("".join(lines))


def _drop_key(path: Path, key: str) -> None:
    with open(path, "rb") as f:
        entry = pickle.load(f, encoding="latin1")
    del entry[key]
    with open(path, "wb") as f:
        pickle.dump(entry, f, protocol=2)


def _edit_json(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def corruptions(other_checkpoint: Path) -> list[tuple[str, str, object, bool]]:
    """(name, template, damage(run_dir), detectable without loading .pt files)."""
    m, s = "metrics.jsonl", "status.json"
    return [
        ("finished: metrics truncated", "finished", lambda d: _cut(d / m, 0.6), True),
        ("finished: metrics torn last line", "finished", lambda d: _cut(d / m, 0.98), True),
        ("finished: metrics emptied", "finished", lambda d: (d / m).write_bytes(b""), True),
        ("finished: metrics duplicated", "finished", lambda d: (d / m).write_bytes((d / m).read_bytes() * 2), True),
        ("finished: a middle row deleted", "finished", lambda d: _drop_line(d / m, 3), True),
        ("finished: a middle row garbled", "finished", lambda d: _garble_line(d / m, 2), True),
        (
            "finished: a row of another run appended",
            "finished",
            lambda d: (d / m).open("a").write('{"run_id": "0123456789abcdef", "round": 9, "test_accuracy": 1.0}\n'),
            True,
        ),
        ("finished: status.json corrupt", "finished", lambda d: (d / s).write_bytes(b"\x00{garbage"), True),
        ("finished: status.json deleted", "finished", lambda d: (d / s).unlink(), False),
        ("finished: status edited to diverged", "finished", lambda d: _edit_json(d / s, status="diverged"), True),
        (
            "finished: summary.json edited",
            "finished",
            lambda d: _edit_json(d / "summary.json", mean_last_100=0.99),
            True,
        ),
        ("finished: summary.json deleted", "finished", lambda d: (d / "summary.json").unlink(), True),
        ("finished: config.json corrupt", "finished", lambda d: (d / "config.json").write_text("{not json"), True),
        ("finished: checkpoint truncated", "finished", lambda d: _cut(d / "checkpoint.pt", 0.5), False),
        (
            "finished: checkpoint of another run",
            "finished",
            lambda d: shutil.copy(other_checkpoint, d / "checkpoint.pt"),
            False,
        ),
        ("finished: final model truncated", "finished", lambda d: _cut(d / "final_model.pt", 0.5), False),
        (
            "finished: stray temporary file",
            "finished",
            lambda d: (d / ".metrics.jsonl.0000.tmp").write_text("partial"),
            False,
        ),
        ("interrupted: status edited to finished", "interrupted", lambda d: _edit_json(d / s, status="finished"), True),
        ("interrupted: status.json corrupt", "interrupted", lambda d: (d / s).write_text("[1, 2"), True),
        ("interrupted: checkpoint truncated", "interrupted", lambda d: _cut(d / "checkpoint.pt", 0.5), False),
        (
            "interrupted: checkpoint of another run",
            "interrupted",
            lambda d: shutil.copy(other_checkpoint, d / "checkpoint.pt"),
            False,
        ),
        (
            "interrupted: metrics duplicated",
            "interrupted",
            lambda d: (d / m).write_bytes((d / m).read_bytes() * 2),
            False,
        ),
        ("interrupted: torn last line", "interrupted", lambda d: _cut(d / m, 0.97), False),
        ("interrupted: a row before the checkpoint deleted", "interrupted", lambda d: _drop_line(d / m, 1), True),
        ("interrupted: metrics emptied", "interrupted", lambda d: (d / m).write_bytes(b""), True),
    ]


def run_store_corruptions(tmp: Path) -> Category:
    cat = Category("store_corruptions")
    finished_store, interrupted_store, reference, other = _templates(tmp)
    run_id = reference["run_id"]
    other_checkpoint = Path(other["run_dir"]) / "checkpoint.pt"
    for i, (name, template, damage, cheap) in enumerate(corruptions(other_checkpoint)):
        store = tmp / f"corrupt-{i}"
        shutil.copytree(finished_store if template == "finished" else interrupted_store, store)
        if template == "interrupted":  # add the intact sibling
            shutil.copytree(Path(other["run_dir"]), store / other["run_id"])
        run_dir = store / run_id
        damage(run_dir)
        metrics_before = (run_dir / "metrics.jsonl").read_bytes() if (run_dir / "metrics.jsonl").exists() else b""
        # 1. the listing survives and marks the damage
        listing_args = ["runs", "--store", str(store), "--json"] + ([] if cheap else ["--verify"])
        rc_list, out, err = cli(listing_args)
        try:
            records = {r["run_id"]: r for r in json.loads(out)}
            listed = set(records) == {run_id, other["run_id"]} and not records[other["run_id"]]["damaged"]
            intact_damage = name.endswith(("stray temporary file", "status.json deleted"))
            marked = records[run_id]["damaged"] or intact_damage or template == "interrupted" and not cheap
        except Exception as exc:  # noqa: BLE001
            listed, marked = False, False
            err += repr(exc)
        # 2. run it: the right numbers, or exit 3 naming the file and the fix
        rc, out, err_run = cli(["run", *BASE, *STORE_RUN, "--store", str(store), "--json"])
        if rc == 0:
            result = summary_of(out)
            outcome_ok = same_numbers(result, reference)
            if not name.startswith("finished: checkpoint"):
                # repaired for good; a finished run's damaged checkpoint (needed only to
                # resume) stays reported by --verify, its numbers being intact
                rc_v, _, _ = cli(["runs", "--store", str(store), "--verify", "--json"])
                outcome_ok = outcome_ok and rc_v == 0
        else:
            message = err_run.strip().splitlines()[-1] if err_run.strip() else ""
            outcome_ok = rc == 3 and "fix:" in message and "Traceback" not in err_run
            if "of another run" in name or "truncated" in name and "checkpoint" in name:
                # a refused checkpoint must not cost the log anything
                now = (run_dir / "metrics.jsonl").read_bytes() if (run_dir / "metrics.jsonl").exists() else b""
                outcome_ok = outcome_ok and now == metrics_before
        ok = rc_list in (0, 3) and listed and marked and outcome_ok
        cat.record(name, ok, f"list rc={rc_list} listed={listed} marked={marked} run rc={rc} "
                             f"stderr={err_run.strip()[-300:]!r}")
    return cat


# --------------------------------------------------------------------------- data faults

def run_data_faults(tmp: Path) -> Category:
    from flcore.data import DatasetError, load_dataset, write_fake_cifar
    from flcore.data.datasets import Dataset

    cat = Category("data_faults")
    x = torch.rand(20, 3, 32, 32)
    y = torch.randint(0, 10, (20,))

    def dataset(**changes):
        args = dict(name="user", train_x=x, train_y=y, test_x=x[:5], test_y=y[:5], num_classes=10,
                    mean=(0.5,) * 3, std=(0.25,) * 3, augment=True)
        args.update(changes)
        return Dataset(**args)

    bad_y = y.clone()
    bad_y[3] = 10
    neg_y = y.clone()
    neg_y[0] = -1
    nan_x = x.clone()
    nan_x[0, 0, 0, 0] = float("nan")
    tensor_cases = [
        ("label 10 of 10 classes", dict(train_y=bad_y), "train_y"),
        ("negative label", dict(test_y=neg_y[:5]), "test_y"),
        ("float labels", dict(train_y=y.float()), "train_y"),
        ("float64 pixels", dict(train_x=x.double()), "train_x"),
        ("uint8 pixels", dict(train_x=(x * 255).to(torch.uint8)), "train_x"),
        ("pixels in 0..255", dict(train_x=x * 255), "train_x"),
        ("NaN pixel", dict(train_x=nan_x), "train_x"),
        ("2-d labels", dict(train_y=y[:, None]), "train_y"),
        ("rows differ", dict(train_y=y[:10]), "train"),
        ("test shape differs", dict(test_x=torch.rand(5, 3, 28, 28)), "shape"),
        ("infinite pixel", dict(test_x=torch.full((5, 3, 32, 32), float("inf"))), "test_x"),
        ("negative pixels", dict(train_x=x - 0.5), "train_x"),
        ("no examples", dict(train_x=x[:0], train_y=y[:0]), "train"),
        ("bool labels", dict(train_y=y > 4), "train_y"),
        ("labels of 100 classes for 10", dict(train_y=torch.randint(0, 100, (20,))), "train_y"),
        ("mean/std of 1 channel for 3", dict(mean=(0.5,), std=(0.25,)), "channel"),
    ]
    for name, changes, needle in tensor_cases:
        try:
            dataset(**changes)
            cat.record(f"tensors: {name}", False, "accepted")
        except (DatasetError, TypeError, ValueError) as exc:
            cat.record(f"tensors: {name}", needle in str(exc) and "\n" not in str(exc), str(exc))

    def cifar_case(name: str, damage, needle: str, recompute_md5: bool = True) -> None:
        root = tmp / f"cifar-{len(cat.failures)}-{cat.tried}"
        md5s = write_fake_cifar(root, "cifar10", num_train=50, num_test=10)
        folder = root / "cifar-10-batches-py"
        damage(folder)
        if recompute_md5:
            from flcore.data.cifar_format import file_md5

            md5s = {f: file_md5(folder / f) if (folder / f).exists() else md5 for f, md5 in md5s.items()}
        try:
            load_dataset("cifar10", root, checksums=md5s)
            cat.record(f"CIFAR files: {name}", False, "accepted")
        except DatasetError as exc:
            cat.record(f"CIFAR files: {name}", needle in str(exc), str(exc))

    def rewrite(folder: Path, file: str, **changes) -> None:
        with open(folder / file, "rb") as f:
            entry = pickle.load(f, encoding="latin1")
        entry.update(changes)
        with open(folder / file, "wb") as f:
            pickle.dump(entry, f, protocol=2)

    import numpy as np

    cifar_case("data of 3071 bytes per image", lambda f: rewrite(
        f, "data_batch_3", data=np.zeros((10, 3071), dtype=np.uint8)), "data_batch_3")
    cifar_case("label 10 in the test batch", lambda f: rewrite(f, "test_batch", labels=[10] * 10), "test_batch")
    cifar_case("negative label", lambda f: rewrite(f, "data_batch_1", labels=[-1] * 10), "data_batch_1")
    cifar_case("fewer labels than images", lambda f: rewrite(f, "data_batch_2", labels=[1] * 3), "data_batch_2")
    cifar_case("float pixels", lambda f: rewrite(
        f, "data_batch_4", data=np.zeros((10, 3072), dtype=np.float64)), "data_batch_4")
    cifar_case("a batch that is not a pickle", lambda f: (f / "data_batch_5").write_bytes(b"not a pickle"),
               "data_batch_5")
    cifar_case("checksum mismatch", lambda f: _cut(f / "data_batch_2", 0.5), "data_batch_2", recompute_md5=False)
    cifar_case("a missing batch", lambda f: (f / "data_batch_4").unlink(), "data_batch_4", recompute_md5=False)
    cifar_case("a batch that is a list", lambda f: (f / "data_batch_1").write_bytes(pickle.dumps([1, 2, 3])),
               "data_batch_1")
    cifar_case("labels missing", lambda f: _drop_key(f / "test_batch", "labels"), "test_batch")
    # the command line: missing CIFAR files exit 2 before a run directory is written
    store = tmp / "data-store"
    rc, _, err = cli(["run", "--scale", "smoke", "--dataset", "cifar10", "--data-root", str(tmp / "nowhere"),
                      "--store", str(store), "--no-progress", "--device", "cpu"])
    cat.record("CLI: CIFAR missing", rc == 2 and "CIFAR-10 not found" in err and not any(store.glob("*")),
               f"rc={rc} {err[-200:]!r}")
    return cat


# --------------------------------------------------------------------------- concurrency

def run_concurrency(tmp: Path) -> Category:
    from flcore.store import RunLock

    cat = Category("concurrent_runs")
    for n in (2, 3):
        store = tmp / f"concurrent-{n}"
        argv = [PYTHON, "-m", "flcore", "run", *BASE, *KILL_RUN, "--store", str(store), "--json"]
        procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=subprocess_env()) for _ in range(n)]
        outs = [p.communicate(timeout=600) for p in procs]
        try:
            summaries = [summary_of(o) for o, _ in outs]
            rows = [json.loads(line)["round"]
                    for line in (Path(summaries[0]["run_dir"]) / "metrics.jsonl").read_text().splitlines()]
            ok = (all(p.returncode == 0 for p in procs) and all(same_numbers(s, summaries[0]) for s in summaries)
                  and rows == list(range(1, 41)))
            detail = f"rcs={[p.returncode for p in procs]} rows={len(rows)}"
        except Exception as exc:  # noqa: BLE001
            ok, detail = False, f"{exc!r} {[e[-200:] for _, e in outs]}"
        cat.record(f"{n} identical runs started together", ok, detail)
    # --no-wait against a run another process is training
    store = tmp / "concurrent-held"
    cfg = resolve_config(scale="smoke", device="cpu", rounds=40, eval_every=1, checkpoint_every=3)
    lock = RunLock(store / cfg.run_id())
    lock.acquire()
    try:
        done = subprocess.run([PYTHON, "-m", "flcore", "run", *BASE, *KILL_RUN, "--store", str(store), "--no-wait"],
                              capture_output=True, text=True, env=subprocess_env(), timeout=300)
    finally:
        lock.release()
    cat.record("--no-wait while another process trains", done.returncode == 4 and "--wait" in done.stderr,
               f"rc={done.returncode} {done.stderr[-200:]!r}")
    return cat


# --------------------------------------------------------------------------- poisoned files

class _Payload:
    """Unpickling this runs ``touch <marker>``."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def run_poisoned(tmp: Path) -> Category:
    from flcore.store import Run, StoreError

    cat = Category("poisoned_files")
    marker = tmp / "PAYLOAD_RAN"
    store = tmp / "poison-store"
    rc, out, err = cli(["run", *BASE, *STORE_RUN, "--store", str(store), "--json"])
    run_dir = Path(summary_of(out)["run_dir"])

    def poison(file: str) -> None:
        state = torch.load(run_dir / file, weights_only=True)
        state["extra"] = _Payload(marker)
        torch.save(state, run_dir / file)

    def case(name: str, file: str, action) -> None:
        saved = (run_dir / file).read_bytes()
        poison(file)
        marker.unlink(missing_ok=True)
        try:
            refused, detail = action()
        except Exception as exc:  # noqa: BLE001
            refused, detail = False, repr(exc)
        ran = marker.exists()
        cat.record(name, refused and not ran, f"payload ran={ran} {detail}")
        (run_dir / file).write_bytes(saved)

    def run_resume():
        _edit_json(run_dir / "status.json", status="interrupted", rounds_done=6)
        rc, _, err = cli(["run", *BASE, *STORE_RUN, "--store", str(store)])
        return rc == 3 and "checkpoint.pt" in err and "fix:" in err, f"rc={rc} {err[-200:]!r}"

    def verify():
        rc, out, err = cli(["runs", "--store", str(store), "--verify", "--json"])
        return rc == 3 and json.loads(out)[0]["damaged"], f"rc={rc}"

    def analyze(which: str):
        def go():
            rc, _, err = cli(["analyze", "lpf", "--run", str(run_dir), "--device", "cpu", "--which", which,
                              "--m", "2", "--samples", "20"])
            return rc == 2 and "not loaded" in err, f"rc={rc} {err[-200:]!r}"
        return go

    def api(which: str):
        def go():
            run = Run(run_dir, run_dir.name)
            try:
                run.load_checkpoint() if which == "checkpoint" else run.load_final_model()
            except StoreError as exc:
                return "not loaded" in str(exc), str(exc)[:200]
            return False, "loaded"
        return go

    case("checkpoint.pt on resume (flcore run)", "checkpoint.pt", run_resume)
    case("checkpoint.pt under flcore runs --verify", "checkpoint.pt", verify)
    case("final_model.pt under flcore runs --verify", "final_model.pt", verify)
    case("final_model.pt through flcore analyze lpf", "final_model.pt", analyze("final"))
    case("checkpoint.pt through flcore analyze lpf --which checkpoint", "checkpoint.pt", analyze("checkpoint"))
    case("checkpoint.pt through Run.load_checkpoint", "checkpoint.pt", api("checkpoint"))
    case("final_model.pt through Run.load_final_model", "final_model.pt", api("final"))
    return cat


# --------------------------------------------------------------------------- main

CATEGORIES = ("bad_configs", "kills", "store_corruptions", "data_faults", "concurrent_runs", "poisoned_files",
              "links_and_special_files", "trust_without_proof", "listing_records", "interruption",
              "read_only_stores", "unbounded_inputs", "bundle_content", "bundle_archives", "page_injection",
              "split_files", "failure_cleanup", "disk_full", "command_limits", "book_files", "paper_text",
              "verdict_caches", "paper_files")
#: The categories of ``benchmarks/fault_bundles.py``.
BUNDLE_CATEGORIES = CATEGORIES[12:18]
#: The categories of ``benchmarks/fault_round4.py``.
ROUND4_CATEGORIES = CATEGORIES[18:]


def _make_interrupted(store: Path) -> None:
    """``store`` holding the store run interrupted after round 5 (checkpoint at round 3)."""
    from flcore.api import run_experiment

    cfg = resolve_config(scale="smoke", device="cpu", rounds=8, eval_every=1, checkpoint_every=3)
    try:
        run_experiment(cfg, store=store, callbacks=(_StopAt(5),))
    except KeyboardInterrupt:
        pass


def _class_runner(tmp: Path, name: str, templates: dict):
    """A runner of one of :mod:`fault_classes`' categories (the templates built once)."""
    def go() -> Category:
        import fault_classes  # read when the first class runs: the six first categories take minutes

        if "tpl" not in templates:
            templates["tpl"] = fault_classes.Templates(tmp, cli, _make_interrupted)
        tpl, cat = templates["tpl"], Category(name)
        {"links_and_special_files": lambda: fault_classes.run_links(cat, tpl, cli),
         "trust_without_proof": lambda: fault_classes.run_trust(cat, tpl, cli, tmp),
         "listing_records": lambda: fault_classes.run_listing_records(cat, tpl, cli),
         "interruption": lambda: fault_classes.run_interruption(cat, tpl, cli, tmp),
         "read_only_stores": lambda: fault_classes.run_read_only(cat, tpl, tmp),
         "unbounded_inputs": lambda: fault_classes.run_unbounded(cat, tpl, cli, tmp)}[name]()
        return cat
    return go


def _bundle_runner(tmp: Path, name: str, templates: dict):
    """A runner of one of :mod:`fault_bundles`' categories (the source bundle built once)."""
    def go() -> Category:
        import fault_bundles

        cat = Category(name)
        if name in ("split_files", "disk_full"):
            {"split_files": fault_bundles.run_split_files, "disk_full": fault_bundles.run_disk_full}[name](
                cat, tmp, cli)
            return cat
        if "bundle" not in templates:
            templates["bundle"] = fault_bundles.Source(tmp, cli)
        src = templates["bundle"]
        {"bundle_content": fault_bundles.run_bundle_content, "bundle_archives": fault_bundles.run_bundle_archives,
         "page_injection": fault_bundles.run_page_injection,
         "failure_cleanup": fault_bundles.run_failure_cleanup}[name](cat, src, cli)
        return cat
    return go


def _round4_runner(tmp: Path, name: str):
    """A runner of one of :mod:`fault_round4`'s categories."""
    def go() -> Category:
        import fault_round4

        cat = Category(name)
        getattr(fault_round4, f"run_{name}")(cat, tmp, cli)
        return cat
    return go


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--kills", type=int, default=11, help="random kill rounds to try (default 11)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill rounds")
    parser.add_argument("--only", default=",".join(CATEGORIES), help="comma list of categories")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    started = time.perf_counter()
    results = {}
    with tempfile.TemporaryDirectory(prefix="flcore-faults-") as tmp_name:
        tmp = Path(tmp_name)
        runners = {
            "bad_configs": lambda: run_bad_configs(tmp),
            "kills": lambda: run_kills(tmp, args.kills, args.seed),
            "store_corruptions": lambda: run_store_corruptions(tmp),
            "data_faults": lambda: run_data_faults(tmp),
            "concurrent_runs": lambda: run_concurrency(tmp),
            "poisoned_files": lambda: run_poisoned(tmp),
        }
        templates: dict = {}
        runners.update({name: _class_runner(tmp, name, templates) for name in CATEGORIES[6:12]})
        runners.update({name: _bundle_runner(tmp, name, templates) for name in BUNDLE_CATEGORIES})
        runners.update({name: _round4_runner(tmp, name) for name in ROUND4_CATEGORIES})
        for name in args.only.split(","):
            t0 = time.perf_counter()
            cat = runners[name]()
            results[name] = {**cat.as_dict(), "seconds": round(time.perf_counter() - t0, 1)}
            if not args.json:
                print(f"{name:<18} tried {cat.tried:>3}  handled {cat.handled:>3}  "
                      f"({results[name]['seconds']} s)", flush=True)
                for failure in cat.failures:
                    print(f"    UNHANDLED {failure}")
    report = {
        "categories": results,
        "tried": sum(c["tried"] for c in results.values()),
        "handled": sum(c["handled"] for c in results.values()),
        "seconds": round(time.perf_counter() - started, 1),
        "torch_version": torch.__version__,
        "python": sys.version.split()[0],
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "commit": git_commit(),
    }
    if args.json:
        print(json.dumps(report, indent=1))
    return 0 if report["tried"] == report["handled"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
