"""The fault matrix's classes of an adversarial store and of unbounded inputs
(``benchmarks/fault_matrix.py`` runs them beside its first six categories).

- ``links_and_special_files``: a name in the store is a symbolic link (to a file or a
  folder outside the store, to ``/dev/zero``), a FIFO, a hard link or a directory where a
  file belongs.  Handled: every listing ends (``runs``, ``runs --json``, ``runs
  --verify``; the risky ones under a time limit), marks the run and keeps
  listing the intact sibling; ``flcore run`` returns the uninterrupted numbers or exits 3
  with the fix; no traceback; nothing outside the store's root changes.
- ``trust_without_proof``: a tensor file or a config that is not the one the run
  wrote (a flipped bit, another run's file, a checkpoint without its stamp, an edited
  ``config.json``, a replaced data cache).  Handled: ``runs --verify`` exits 3 and marks
  the run, ``flcore run`` never exits 0 with other numbers, an analysis refuses the file.
- ``listing_records``: one record of valid JSON of the wrong shape, type, size or depth.
  Handled as a store corruption: the listings end quickly and list every run, the damaged
  one marked.
- ``interruption``: SIGTERM, SIGHUP and Ctrl-C to ``flcore run`` and ``flcore sweep``
  (workers), a run left ``running`` by a killed process, Ctrl-C while a notebook
  executes.  Handled: exit 128 + the signal, one line and no traceback, the runs
  recorded interrupted with no lock held, the rerun equal to an uninterrupted run; the
  page as it was.
- ``read_only_stores``: the store is mounted read-only (a bind mount in a private mount
  namespace; ``chmod`` where that is not allowed).  Handled: lookups of finished runs
  (``run``, ``sweep``, ``runs --verify``, ``analyze``) answer with exit 0; a run that
  needs training exits 2 with one line.
- ``unbounded_inputs``: a value or a file without bounds or with two meanings.  Handled:
  exit 2 with one ``flcore: error:`` line of bounded length within seconds, nothing
  written; ``-0`` and ``0`` one run id.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

PYTHON = sys.executable
BASE = ["--scale", "smoke", "--device", "cpu", "--no-progress"]
STORE_RUN = ["--rounds", "8", "--eval-every", "1", "--checkpoint-every", "3"]
#: A run long enough to be signalled mid-way (every round logged, a checkpoint every 3).
LONG_RUN = ["--rounds", "60", "--eval-every", "1", "--checkpoint-every", "3"]
SUMMARY_KEYS = ("status", "rounds_done", "final_accuracy", "mean_last_100", "best_accuracy")
#: The longest stderr a refused input may print (one line quoting at most 200 characters).
MAX_ERROR_CHARS = 1200


def subprocess_env(extra: dict | None = None) -> dict[str, str]:
    root = Path(__file__).resolve().parents[1]
    return {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1", **(extra or {})}


def flcore_subprocess(argv: list[str], timeout: float = 180, env: dict | None = None,
                      prefix: list[str] | None = None) -> tuple[int, str, str]:
    """``flcore ARGV`` in a child process: (exit status, stdout, stderr); -9 if it ran
    past ``timeout`` (it is killed)."""
    try:
        done = subprocess.run([*(prefix or []), PYTHON, "-m", "flcore", *argv], capture_output=True, text=True,
                              env=env or subprocess_env(), timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return -9, out, f"timed out after {timeout} s"
    return done.returncode, done.stdout, done.stderr


@contextlib.contextmanager
def time_limit(seconds: int):
    """Raise ``TimeoutError`` in this (main) thread after ``seconds``: a command that would
    hang on a FIFO or loop over 10^12 rounds is an unhandled case, not a stuck matrix."""
    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def timed(cli: Callable, seconds: int = 300) -> Callable:
    """``cli`` under :func:`time_limit`."""
    def call(argv):
        with time_limit(seconds):
            return cli(argv)
    return call


def same_numbers(a: dict, b: dict) -> bool:
    return all(a.get(k) == b.get(k) for k in SUMMARY_KEYS)


def last_json(stdout: str):
    return json.loads(stdout.strip().splitlines()[-1])


def tree_digest(path: Path) -> str:
    """A digest of every name, kind and content under ``path`` (links not followed)."""
    digest = hashlib.sha256()
    if not os.path.lexists(path):
        return "absent"
    for folder, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(dirs + files):
            full = Path(folder) / name
            info = os.lstat(full)
            digest.update(f"{full.relative_to(path)}:{stat.S_IFMT(info.st_mode)}".encode())
            if stat.S_ISREG(info.st_mode):
                digest.update(full.read_bytes())
            elif stat.S_ISLNK(info.st_mode):
                digest.update(os.readlink(full).encode())
    return digest.hexdigest()


def _edit_json(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def _flip_bit(path: Path, where: float = 0.5) -> None:
    data = bytearray(path.read_bytes())
    data[int(len(data) * where)] ^= 0x01
    path.write_bytes(bytes(data))


def _replace_line(path: Path, index: int, text: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[index] = text + "\n"
    path.write_text("".join(lines))


def _symlink(target: Path, name: Path) -> None:
    if os.path.lexists(name):
        if name.is_dir() and not name.is_symlink():
            shutil.rmtree(name)
        else:
            name.unlink()
    os.symlink(target, name)


def _fifo(name: Path) -> None:
    name.unlink(missing_ok=True)
    os.mkfifo(name)


class Templates:
    """The stores the cases damage copies of: ``finished`` (the run and an intact sibling
    of seed 1, both finished) and ``interrupted`` (the run stopped after round 5, its
    checkpoint at round 3, beside a copy of the sibling), and the reference summary."""

    def __init__(self, tmp: Path, cli: Callable, make_interrupted: Callable):
        self.tmp = tmp
        self.finished = tmp / "cls-finished"
        rc, out, err = cli(["run", *BASE, *STORE_RUN, "--store", str(self.finished), "--json"])
        assert rc == 0, err
        self.reference = last_json(out)
        rc, out, err = cli(["run", *BASE, *STORE_RUN, "--seed", "1", "--store", str(self.finished), "--json"])
        assert rc == 0, err
        self.other = last_json(out)
        self.interrupted = tmp / "cls-interrupted"
        make_interrupted(self.interrupted)
        shutil.copytree(self.finished / self.other["run_id"], self.interrupted / self.other["run_id"])
        self.run_id, self.other_id = self.reference["run_id"], self.other["run_id"]
        self.counter = 0

    def copy(self, which: str) -> tuple[Path, Path, Path]:
        """(store, run directory, outside folder): a fresh copy of a template and a folder
        outside it whose content must never change."""
        self.counter += 1
        case = self.tmp / f"cls-case-{self.counter}"
        store, outside = case / "store", case / "outside"
        shutil.copytree(self.finished if which == "finished" else self.interrupted, store, symlinks=True)
        outside.mkdir()
        (outside / "victim.txt").write_text("a file of the user's, outside every store\n")
        shutil.copytree(store / self.run_id, outside / "copy-of-run", symlinks=True)
        return store, store / self.run_id, outside


def listing_ok(cli: Callable, store: Path, run_id: str, other_id: str, subprocess_only: bool,
               expect_damaged: bool = True) -> tuple[bool, str]:
    """``runs``, ``runs --json`` and ``runs --verify --json`` end (in time), list both
    runs, keep the sibling intact and mark ``run_id`` (``expect_damaged``)."""
    details = []
    ok = True
    for extra in ([], ["--json"], ["--verify", "--json"]):
        argv = ["runs", "--store", str(store), *extra]
        rc, out, err = timed(cli, 120)(argv) if subprocess_only else cli(argv)
        good = rc in (0, 3) and "Traceback" not in err
        if good and "--json" in extra:
            try:
                records = {r["run_id"]: r for r in json.loads(out)}
                good = (set(records) == {run_id, other_id} and not records[other_id]["damaged"]
                        and (records[run_id]["damaged"] or not expect_damaged or "--verify" not in extra))
                if "--verify" in extra and expect_damaged:
                    good = good and rc == 3 and records[run_id]["damaged"]
            except (ValueError, KeyError, TypeError) as exc:
                good = False
                err += repr(exc)
        ok = ok and good
        if not good:
            details.append(f"{' '.join(extra) or 'plain'}: rc={rc} {err.strip()[-200:]!r}")
    return ok, "; ".join(details)


def run_outcome_ok(cli: Callable, store: Path, reference: dict, subprocess_only: bool = False,
                   argv: list[str] | None = None) -> tuple[bool, str]:
    """``flcore run`` returns the reference numbers, or exits 3 naming the fix; no traceback."""
    argv = argv or ["run", *BASE, *STORE_RUN, "--store", str(store), "--json"]
    rc, out, err = timed(cli, 240)(argv) if subprocess_only else cli(argv)
    if "Traceback" in err:
        return False, f"run rc={rc} traceback {err.strip()[-200:]!r}"
    if rc == 0:
        try:
            return same_numbers(last_json(out), reference), f"run rc=0 numbers {out.strip()[-200:]!r}"
        except (ValueError, IndexError) as exc:
            return False, f"run rc=0 {exc!r}"
    return rc == 3 and "fix:" in err, f"run rc={rc} {err.strip()[-200:]!r}"


# --------------------------------------------------------------------------- links and special files

def run_links(cat, tpl: Templates, cli: Callable) -> None:
    m, s = "metrics.jsonl", "status.json"
    sibling = lambda store: store / tpl.other_id  # noqa: E731
    cases = [
        # (name, template, damage(run_dir, store, outside), listing in a subprocess, marked by the listing)
        ("finished: .lock a link to a file outside", "finished",
         lambda d, st, o: _symlink(o / "victim.txt", d / ".lock"), False, True),
        ("interrupted: .lock a link to a file outside", "interrupted",
         lambda d, st, o: _symlink(o / "victim.txt", d / ".lock"), False, True),
        ("finished: the run directory a link to a folder outside", "finished",
         lambda d, st, o: (shutil.rmtree(d), os.symlink(o / "copy-of-run", d)), False, True),
        ("interrupted: the run directory a link to a folder outside", "interrupted",
         lambda d, st, o: (shutil.rmtree(d), os.symlink(o / "copy-of-run", d)), False, True),
        ("finished: status.json a link to /dev/zero", "finished",
         lambda d, st, o: _symlink(Path("/dev/zero"), d / s), True, True),
        ("finished: metrics.jsonl a FIFO", "finished", lambda d, st, o: _fifo(d / m), True, True),
        ("interrupted: status.json a FIFO", "interrupted", lambda d, st, o: _fifo(d / s), True, True),
        ("finished: summary.json a link to the sibling's", "finished",
         lambda d, st, o: _symlink(sibling(st) / "summary.json", d / "summary.json"), False, True),
        ("interrupted: metrics.jsonl a link to a file outside", "interrupted",
         lambda d, st, o: (shutil.copy(d / m, o / "log.jsonl"), _symlink(o / "log.jsonl", d / m)), False, True),
        ("interrupted: metrics.jsonl a hard link to a file outside", "interrupted",
         lambda d, st, o: (os.link(d / m, o / "hard.jsonl")), False, False),
        ("interrupted: checkpoint.pt a link to the sibling's", "interrupted",
         lambda d, st, o: _symlink(sibling(st) / "checkpoint.pt", d / "checkpoint.pt"), False, True),
        ("finished: final_model.pt a link to a file outside", "finished",
         lambda d, st, o: (shutil.copy(d / "final_model.pt", o / "model.pt"),
                           _symlink(o / "model.pt", d / "final_model.pt")), False, True),
        ("finished: config.json a directory", "finished",
         lambda d, st, o: ((d / "config.json").unlink(), (d / "config.json").mkdir()), False, True),
        ("finished: snapshots a link to a folder outside", "finished",
         lambda d, st, o: os.symlink(o, d / "snapshots"), False, True),
        ("interrupted: a stray temporary file a link to a file outside", "interrupted",
         lambda d, st, o: os.symlink(o / "victim.txt", d / ".status.json.1234.tmp"), False, False),
        ("finished: files.json a link to the sibling's", "finished",
         lambda d, st, o: _symlink(sibling(st) / "files.json", d / "files.json"), False, True),
    ]
    for name, template, damage, risky, marked in cases:
        store, run_dir, outside = tpl.copy(template)
        damage(run_dir, store, outside)
        before = tree_digest(outside)
        try:
            listed, detail = listing_ok(cli, store, tpl.run_id, tpl.other_id, risky, expect_damaged=marked)
            ran, run_detail = run_outcome_ok(cli, store, tpl.reference, subprocess_only=risky)
            untouched = tree_digest(outside) == before
            ok = listed and ran and untouched
            detail = f"listed={listed} {detail} {run_detail} outside untouched={untouched}"
        except Exception as exc:  # noqa: BLE001 - an escaped exception is an unhandled case
            ok, detail = False, repr(exc)
        cat.record(name, ok, detail)


# --------------------------------------------------------------------------- trust without proof

def _restamp(path: Path, source: Path, stamp: dict | None) -> None:
    """Write ``source``'s checkpoint to ``path`` with ``stamp`` as its run-id/config stamp
    (``None``: no stamp at all)."""
    state = torch.load(source, weights_only=True)
    for key in ("run_id", "config_digest"):
        state.pop(key, None)
    if stamp:
        state.update(stamp)
    torch.save(state, path)


def _record_digest(run_dir: Path, name: str) -> None:
    """Forge ``files.json``'s digest of ``name`` to its current content."""
    record = json.loads((run_dir / "files.json").read_text())
    data = (run_dir / name).read_bytes()
    record["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    (run_dir / "files.json").write_text(json.dumps(record))


def run_trust(cat, tpl: Templates, cli: Callable, tmp: Path) -> None:
    def other(store: Path, name: str) -> Path:
        return store / tpl.other_id / name

    def unstamped_other(d: Path, st: Path, forge: bool) -> None:
        _restamp(d / "checkpoint.pt", other(st, "checkpoint.pt"), None)
        if forge:
            _record_digest(d, "checkpoint.pt")

    def restamped_other(d: Path, st: Path) -> None:
        own = torch.load(d / "checkpoint.pt", weights_only=True)
        _restamp(d / "checkpoint.pt", other(st, "checkpoint.pt"),
                 {"run_id": own["run_id"], "config_digest": own["config_digest"]})
        _record_digest(d, "checkpoint.pt")

    def other_method(d: Path, st: Path) -> None:
        config = json.loads((d / "config.json").read_text())
        config["method"] = "fedsam" if config.get("method") != "fedsam" else "fedavg"
        (d / "config.json").write_text(json.dumps(config))

    cases = [
        # (name, template, damage(run_dir, store), the outcome must be refused (never exit 0))
        ("interrupted: the sibling's checkpoint without its stamp", "interrupted",
         lambda d, st: unstamped_other(d, st, False), True),
        ("interrupted: the sibling's checkpoint without its stamp, digest re-recorded", "interrupted",
         lambda d, st: unstamped_other(d, st, True), True),
        ("interrupted: a flipped bit in checkpoint.pt", "interrupted", lambda d, st: _flip_bit(d / "checkpoint.pt"),
         True),
        ("interrupted: files.json deleted", "interrupted", lambda d, st: (d / "files.json").unlink(), True),
        ("interrupted: files.json of the sibling copied in", "interrupted",
         lambda d, st: shutil.copy(other(st, "files.json"), d / "files.json"), True),
        ("finished: a flipped bit in checkpoint.pt", "finished", lambda d, st: _flip_bit(d / "checkpoint.pt"), False),
        ("finished: a flipped bit in final_model.pt", "finished", lambda d, st: _flip_bit(d / "final_model.pt"),
         False),
        ("finished: a flipped bit near the end of final_model.pt", "finished",
         lambda d, st: _flip_bit(d / "final_model.pt", 0.97), False),
        ("finished: the sibling's final_model.pt copied in", "finished",
         lambda d, st: shutil.copy(other(st, "final_model.pt"), d / "final_model.pt"), False),
        ("finished: config.json edited to another method", "finished", other_method, False),
        ("finished: files.json deleted", "finished", lambda d, st: (d / "files.json").unlink(), False),
        ("finished: files.json emptied of entries", "finished",
         lambda d, st: _edit_json(d / "files.json", files={}), False),
    ]
    # a checkpoint restamped with this run's stamp and its digest forged: the stamp and the
    # digest then prove nothing, so this one is left out (a user who forges both holds the store)
    del restamped_other
    for name, template, damage, refuse in cases:
        store, run_dir, outside = tpl.copy(template)
        damage(run_dir, store)
        metrics_before = (run_dir / "metrics.jsonl").read_bytes()
        try:
            listed, detail = listing_ok(cli, store, tpl.run_id, tpl.other_id, False)
            analysis_ok = True
            if "final_model" in name:  # before `flcore run`, which may recompute the model
                rc, _, err = cli(["analyze", "lpf", "--run", str(run_dir), "--device", "cpu", "--which", "final",
                                  "--m", "2", "--samples", "20"])
                analysis_ok = rc != 0 and "not loaded" in err and "Traceback" not in err
            ran, run_detail = run_outcome_ok(cli, store, tpl.reference)
            if refuse:
                rc, _, err = cli(["run", *BASE, *STORE_RUN, "--store", str(store), "--json"])
                ran = ran and rc == 3 and (run_dir / "metrics.jsonl").read_bytes() == metrics_before
            ok = listed and ran and analysis_ok
            detail = f"listed={listed} {detail} {run_detail} analysis refused={analysis_ok}"
        except Exception as exc:  # noqa: BLE001
            ok, detail = False, repr(exc)
        cat.record(name, ok, detail)
    # the MNIST-1D cache replaced by other arrays: rebuilt, the run's numbers unchanged
    import numpy as np

    cache = tmp / "cls-cache"
    env = subprocess_env({"FLCORE_CACHE": str(cache)})
    store = tmp / "cls-cache-store"
    rc, out, err = flcore_subprocess(["run", *BASE, *STORE_RUN, "--store", str(store), "--json"], env=env)
    files = sorted((cache / "datasets").glob("mnist1d-*.npz")) if cache.exists() else []
    ok, detail = False, f"rc={rc} cache files={len(files)} {err.strip()[-200:]!r}"
    if rc == 0 and files:
        with np.load(files[0]) as archive:
            arrays = {k: archive[k] for k in archive.files}
        for key, value in arrays.items():
            if value.dtype.kind == "f" and value.size:
                arrays[key] = np.zeros_like(value)
        np.savez(files[0], **arrays)  # other arrays, the old digest entry kept
        shutil.rmtree(store)
        rc, out, err = flcore_subprocess(["run", *BASE, *STORE_RUN, "--store", str(store), "--json"], env=env)
        ok = rc == 0 and same_numbers(last_json(out), tpl.reference)
        detail = f"rc={rc} {err.strip()[-200:]!r}"
    cat.record("the MNIST-1D cache replaced by other arrays", ok, detail)


# --------------------------------------------------------------------------- one record breaks the listing

def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def run_listing_records(cat, tpl: Templates, cli: Callable) -> None:
    m, s, y = "metrics.jsonl", "status.json", "summary.json"
    cases = [
        # (name, template, damage(run_dir), listing in a subprocess (it could hang))
        ("status.json = [1, 2]", "finished", lambda d: (d / s).write_text("[1, 2]"), False),
        ('summary.json = "ok"', "finished", lambda d: (d / y).write_text('"ok"'), False),
        ("status.json: rounds_done a string", "finished", lambda d: _edit_json(d / s, rounds_done="8"), False),
        ("status.json: status a number", "finished", lambda d: _edit_json(d / s, status=7), False),
        ("status.json: an unknown status", "finished", lambda d: _edit_json(d / s, status="done!"), False),
        ("status.json: rounds_done 10^12", "finished", lambda d: _edit_json(d / s, rounds_done=10**12), True),
        ("status.json: rounds_done -1", "interrupted", lambda d: _edit_json(d / s, rounds_done=-1), False),
        ("status.json: 100,000 nested brackets", "finished", lambda d: (d / s).write_text(_nested(100_000)), True),
        ("status.json: a key given twice", "finished",
         lambda d: (d / s).write_text('{"status": "finished", "status": "running", "rounds_done": 8}'), False),
        ("status.json: NaN where a number belongs", "finished",
         lambda d: (d / s).write_text('{"status": "finished", "rounds_done": NaN}'), False),
        ("status.json: 8 MB of padding", "finished",
         lambda d: (d / s).write_text('{"status": "finished", "rounds_done": 8, "x": "' + "a" * (8 << 20) + '"}'),
         True),
        ("status.json: empty", "interrupted", lambda d: (d / s).write_text(""), False),
        ("summary.json: mean_last_100 a string", "finished",
         lambda d: _edit_json(d / y, mean_last_100="0.9"), False),
        ("summary.json: null", "finished", lambda d: (d / y).write_text("null"), False),
        ("config.json: a list", "finished", lambda d: (d / "config.json").write_text("[1]"), False),
        ("config.json: rounds 10^12", "finished", lambda d: _edit_json(d / "config.json", rounds=10**12), True),
        ("config.json: eval_every 0", "finished", lambda d: _edit_json(d / "config.json", eval_every=0), False),
        ("metrics.jsonl: a metric that is a string", "finished",
         lambda d: _replace_line(d / m, 2, json.dumps({"run_id": d.name, "round": 3, "test_accuracy": "high"})),
         False),
        ("metrics.jsonl: a round that is a string", "finished",
         lambda d: _replace_line(d / m, 2, json.dumps({"run_id": d.name, "round": "3", "test_accuracy": 0.5})),
         False),
        ("metrics.jsonl: a round of 10^12", "finished",
         lambda d: _replace_line(d / m, 7, json.dumps({"run_id": d.name, "round": 10**12, "test_accuracy": 0.5})),
         True),
        ("metrics.jsonl: a row that is a list", "interrupted", lambda d: _replace_line(d / m, 1, "[1, 2, 3]"), False),
        ("metrics.jsonl: a row nested 100,000 deep", "finished",
         lambda d: _replace_line(d / m, 3, _nested(100_000)), True),
        ("metrics.jsonl: an accuracy of 7", "finished",
         lambda d: _replace_line(d / m, 4, json.dumps({"run_id": d.name, "round": 5, "test_accuracy": 7})), False),
        ("files.json: a string", "finished", lambda d: (d / "files.json").write_text('"x"'), False),
        ("files.json: a digest that is a number", "finished",
         lambda d: _edit_json(d / "files.json", files={"final_model.pt": {"sha256": 5, "bytes": 1}}), False),
    ]
    for name, template, damage, risky in cases:
        store, run_dir, outside = tpl.copy(template)
        damage(run_dir)
        started = time.perf_counter()
        try:
            listed, detail = listing_ok(cli, store, tpl.run_id, tpl.other_id, risky)
            ran, run_detail = run_outcome_ok(cli, store, tpl.reference, subprocess_only=risky)
            ok = listed and ran
            detail = f"listed={listed} {detail} {run_detail} ({time.perf_counter() - started:.0f} s)"
        except Exception as exc:  # noqa: BLE001
            ok, detail = False, repr(exc)
        cat.record(name, ok, detail)


# --------------------------------------------------------------------------- interruption

def _wait_rounds(run_dir: Path, rounds: int, proc: subprocess.Popen, limit: float = 180) -> bool:
    deadline = time.time() + limit
    metrics = run_dir / "metrics.jsonl"
    while time.time() < deadline and proc.poll() is None:
        if metrics.exists() and metrics.read_bytes().count(b"\n") >= rounds:
            return True
        time.sleep(0.01)
    return False


def _lock_free(run_dir: Path) -> bool:
    from flcore.store import RunLock

    return not RunLock(run_dir).held()


def run_interruption(cat, tpl: Templates, cli: Callable, tmp: Path) -> None:
    from flcore.store import RunStore, live_status

    reference_store = tmp / "cls-long-reference"
    rc, out, err = cli(["run", *BASE, *LONG_RUN, "--store", str(reference_store), "--json"])
    reference = last_json(out)
    run_id = reference["run_id"]

    for sig, code in (("SIGTERM", 143), ("SIGHUP", 129), ("SIGINT", 130)):
        store = tmp / f"cls-signal-{sig}"
        argv = [PYTHON, "-m", "flcore", "run", *BASE, *LONG_RUN, "--store", str(store), "--json"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env(),
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            reached = _wait_rounds(store / run_id, 10, proc)
            proc.send_signal(getattr(signal, sig))
            _, err = proc.communicate(timeout=120)
            status = json.loads((store / run_id / "status.json").read_text())
            lines = [line for line in err.splitlines() if line.strip()]
            rc2, out2, err2 = cli(["run", *BASE, *LONG_RUN, "--store", str(store), "--json"])
            resumed = rc2 == 0 and same_numbers(last_json(out2), reference)
            ok = (reached and proc.returncode == code and status["status"] == "interrupted" and len(lines) == 1
                  and "Traceback" not in err and resumed)
            detail = f"rc={proc.returncode} status={status['status']} stderr={err[-300:]!r} resumed={resumed}"
        except Exception as exc:  # noqa: BLE001
            proc.kill()
            ok, detail = False, repr(exc)
        cat.record(f"{sig} to flcore run mid-run", ok, detail)

    # a sweep with two workers, signalled mid-way: the parent alone (SIGTERM, as a batch
    # system does) or the whole process group (Ctrl-C in a terminal)
    for sig, group, code in (("SIGTERM", False, 143), ("SIGINT", True, 130), ("SIGHUP", False, 129)):
        store = tmp / f"cls-sweep-{sig}"
        argv = [PYTHON, "-m", "flcore", "sweep", *BASE, *LONG_RUN, "--seed", "0,1", "--workers", "2", "--store",
                str(store)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env(),
                                start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            reached = _wait_rounds(store / run_id, 5, proc)
            if group:
                os.killpg(proc.pid, getattr(signal, sig))
            else:
                proc.send_signal(getattr(signal, sig))
            _, err = proc.communicate(timeout=120)
            time.sleep(1.0)
            runs = RunStore(store)
            states = {rid: runs.run(rid).status()["status"] for rid in runs.run_ids()}
            free = all(_lock_free(runs.run(rid).path) for rid in runs.run_ids())
            lines = [line for line in err.splitlines() if line.strip()]
            ok = (reached and proc.returncode == code and free and "running" not in states.values()
                  and "Traceback" not in err and len(lines) <= 2)
            detail = f"rc={proc.returncode} states={states} locks free={free} stderr={err[-300:]!r}"
        except Exception as exc:  # noqa: BLE001
            ok, detail = False, repr(exc)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        cat.record(f"{sig} to flcore sweep --workers 2 ({'the process group' if group else 'the parent'})", ok,
                   detail)

    # a run left `running` by a process that is gone: shown interrupted, resumed
    store, run_dir, _ = tpl.copy("interrupted")
    _edit_json(run_dir / "status.json", status="running")
    runs = RunStore(store)
    shown = live_status(runs.run(tpl.run_id), "running")
    rc, out, err = cli(["runs", "--store", str(store), "--json"])
    listed = {r["run_id"]: r["status"] for r in json.loads(out)} if rc in (0, 3) else {}
    ran, detail = run_outcome_ok(cli, store, tpl.reference)
    cat.record("a run left `running` with no live lock holder", shown == "interrupted"
               and listed.get(tpl.run_id) == "interrupted" and ran, f"shown={shown} listed={listed} {detail}")

    run_notebook_interruption(cat, tmp)


NOTEBOOK = {
    "cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {"tags": ["parameters"]},
               "outputs": [], "source": "scale = 'smoke'\nseeds = [0]"},
              {"cell_type": "code", "execution_count": None, "id": "c2", "metadata": {}, "outputs": [],
               "source": "import time\nprint('started', flush=True)\ntime.sleep(120)"}],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5,
}

_EXECUTE = """
import sys
from pathlib import Path
from types import SimpleNamespace
from flcore.cli.interrupts import handled
from flcore.site.reproduce import execute_artifact
root = Path(sys.argv[1])
artifact = SimpleNamespace(id="slow", notebook_path="notebooks/slow.ipynb", book_path="book/slow.ipynb",
                           kind="table")
with handled():
    try:
        execute_artifact(artifact, root, {"scale": "smoke", "seeds": [0]}, timeout=None)
    except KeyboardInterrupt:
        print("flcore: interrupted", file=sys.stderr)
        sys.exit(130)
"""


def run_notebook_interruption(cat, tmp: Path) -> None:
    """Ctrl-C and SIGTERM while a notebook executes: the page stays as it was."""
    for sig in ("SIGINT", "SIGTERM"):
        root = tmp / f"cls-book-{sig}"
        (root / "notebooks").mkdir(parents=True)
        (root / "book").mkdir()
        (root / "notebooks" / "slow.ipynb").write_text(json.dumps(NOTEBOOK))
        page = root / "book" / "slow.ipynb"
        page.write_text(json.dumps({**NOTEBOOK, "metadata": {**NOTEBOOK["metadata"], "previous": "page"}}))
        before = page.read_bytes()
        proc = subprocess.Popen([PYTHON, "-c", _EXECUTE, str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=subprocess_env(), start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            deadline = time.time() + 120
            while time.time() < deadline and not list((root / "book").glob(".slow.*")):
                time.sleep(0.1)
            time.sleep(3.0)  # the kernel runs the sleeping cell
            proc.send_signal(getattr(signal, sig))
            _, err = proc.communicate(timeout=120)
            leftovers = [p.name for p in (root / "book").iterdir() if p.name != "slow.ipynb"]
            ok = page.read_bytes() == before and "Traceback" not in err
            detail = f"rc={proc.returncode} page unchanged={page.read_bytes() == before} left={leftovers} " \
                     f"stderr={err[-200:]!r}"
        except Exception as exc:  # noqa: BLE001
            ok, detail = False, repr(exc)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        cat.record(f"{sig} while a notebook executes: the page as it was", ok, detail)


# --------------------------------------------------------------------------- read-only stores

def _read_only_prefix(store: Path) -> tuple[list[str], Callable[[], None]]:
    """The command prefix that runs a command with ``store`` read-only, and an undo."""
    if os.geteuid() == 0 and shutil.which("unshare"):
        probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
        if probe.returncode == 0:
            script = f'mount --bind -o ro "{store}" "{store}" && exec "$@"'
            return ["unshare", "-m", "sh", "-c", script, "sh"], lambda: None
    modes = {}
    for folder, _, files in os.walk(store):
        for path in [folder, *(os.path.join(folder, f) for f in files)]:
            modes[path] = os.stat(path).st_mode
            os.chmod(path, modes[path] & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))

    def undo():
        for path, mode in modes.items():
            os.chmod(path, mode)
    return [], undo


def run_read_only(cat, tpl: Templates, tmp: Path) -> None:
    cases = [
        ("flcore run of a finished run", "finished", ["run", *BASE, *STORE_RUN, "--json"], "same"),
        ("flcore sweep over finished runs", "finished", ["sweep", *BASE, *STORE_RUN, "--seed", "0,1", "--json"],
         "same"),
        ("flcore runs --verify", "finished", ["runs", "--verify", "--json"], 0),
        ("flcore analyze lpf of a finished run", "finished",
         ["analyze", "lpf", "--run", "{run_dir}", "--device", "cpu", "--m", "2", "--samples", "20", "--json"], 0),
        ("flcore run of an interrupted run (needs training)", "interrupted", ["run", *BASE, *STORE_RUN], 2),
        ("flcore run of a new config (needs training)", "finished", ["run", *BASE, *STORE_RUN, "--seed", "2"], 2),
        ("flcore sweep with one point to train", "finished", ["sweep", *BASE, *STORE_RUN, "--seed", "0,2"], 2),
    ]
    for name, template, argv, expect in cases:
        store, run_dir, _ = tpl.copy(template)
        argv = [a.replace("{run_dir}", str(run_dir)) for a in argv]
        if argv[0] != "analyze":
            argv += ["--store", str(store)]
        before = tree_digest(store)
        prefix, undo = _read_only_prefix(store)
        try:
            rc, out, err = flcore_subprocess(argv, timeout=600, prefix=prefix)
        finally:
            undo()
        unchanged = tree_digest(store) == before
        if expect == "same":  # every run's numbers as stored (a sweep prints one line per run)
            try:
                rows = {row["run_id"]: row for row in map(json.loads, out.strip().splitlines())}
                expected = [tpl.reference, *([tpl.other] if argv[0] == "sweep" else [])]
                ok = rc == 0 and len(rows) == len(expected) and all(
                    same_numbers(rows[want["run_id"]], want) for want in expected)
            except (ValueError, KeyError, TypeError):
                ok = False
        elif expect == 2:
            lines = [line for line in err.splitlines() if line.strip()]
            ok = rc == 2 and len(lines) == 1 and "cannot be written" in err
        else:
            ok = rc == expect
        ok = ok and unchanged and "Traceback" not in err
        cat.record(name, ok, f"rc={rc} unchanged={unchanged} stderr={err.strip()[-300:]!r}")


# --------------------------------------------------------------------------- unbounded inputs

ALIAS_BOMB = ("a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
              "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
              "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
              "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\nmethod: [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n")


def run_unbounded(cat, tpl: Templates, cli: Callable, tmp: Path) -> None:
    folder = tmp / "cls-inputs"
    folder.mkdir()
    files = {
        "a YAML alias bomb (410 bytes)": ("bomb.yaml", ALIAS_BOMB),
        "a key twice in YAML": ("twice.yaml", "rounds: 4\nrounds: 8\n"),
        "a key twice in JSON": ("twice.json", '{"rounds": 4, "rounds": 8}'),
        "per_round and per-round in one file": ("spell.yaml", "per_round: 2\nper-round: 3\n"),
        "YAML 1.1 sexagesimal rounds: 1:30": ("sexagesimal.yaml", "rounds: 1:30\n"),
        "YAML 1.1 yes as a number of rounds": ("yes.yaml", "rounds: yes\n"),
        "a YAML anchor and alias": ("alias.yaml", "lr: &x 0.1\nlocal_lr: *x\n"),
        "a config nested 10,000 deep": ("deep.yaml", "rounds: " + "[" * 10_000 + "]" * 10_000 + "\n"),
        "a 2 MB config": ("big.yaml", "# " + "x" * (2 << 20) + "\nrounds: 4\n"),
        "a YAML timestamp as lr": ("date.yaml", "lr: 2001-12-14\n"),
    }
    argvs: list[tuple[str, list[str], str]] = []
    for name, (file, text) in files.items():
        (folder / file).write_text(text)
        argvs.append((name, ["run", "--config", str(folder / file)], "run"))
    os.mkfifo(folder / "fifo.yaml")
    argvs.append(("a FIFO as --config", ["run", "--config", str(folder / "fifo.yaml")], "run"))
    argvs.append(("/dev/zero as --config", ["run", "--config", "/dev/zero"], "run"))
    long = "x" * 1_000_000
    big_list = ",".join(str(i) for i in range(1000))
    run_dir, other_dir = tpl.finished / tpl.run_id, tpl.finished / tpl.other_id
    argvs += [
        ("a 1 MB --method value", ["run", "--method", long], "run"),
        ("a 1 MB --alpha value", ["run", "--alpha", long], "run"),
        ("--alpha 1e400", ["run", "--alpha", "1e400"], "run"),
        ("cutout_size larger than the input", ["run", "--cutout-size", "1000"], "run"),
        ("mixup_alpha past float32's range", ["run", "--mixup-alpha", "1e39"], "run"),
        ("a sweep of 10^9 points", ["sweep", "--seed", big_list, "--rounds", big_list, "--lr",
                                    ",".join(f"0.{i + 1}" for i in range(1000))], "sweep"),
        ("a sweep of 10,000 points (over --max-runs)", ["sweep", "--seed", ",".join(map(str, range(100))),
                                                        "--rounds", ",".join(map(str, range(1, 101)))], "sweep"),
        ("a --rho grid for FedAvg", ["sweep", "--method", "fedavg", "--rho", "0.01,0.05"], "sweep"),
        ("a sweep point the method does not read", ["sweep", "--method", "fedavg,fedsam", "--rho", "0.05"], "sweep"),
        ("sweep --workers -1", ["sweep", "--workers", "-1", "--seed", "0,1"], "sweep"),
        ("sweep --workers 10^9", ["sweep", "--workers", "1000000000"], "sweep"),
        ("sweep --max-runs 0", ["sweep", "--max-runs", "0"], "sweep"),
        ("--store a file", ["run", "--store", str(folder / "twice.yaml")], "store"),
        ("analyze barrier --points 10^9", ["analyze", "barrier", "--run", str(run_dir), "--run-b", str(other_dir),
                                           "--points", "1000000000", "--device", "cpu"], "analyze"),
        ("analyze landscape --grid 10^5 --dim 2", ["analyze", "landscape", "--run", str(run_dir), "--grid", "100000",
                                                  "--dim", "2", "--device", "cpu"], "analyze"),
        ("analyze hessian --top-k above the parameters", ["analyze", "hessian", "--run", str(run_dir), "--top-k",
                                                         "10000000", "--device", "cpu"], "analyze"),
        ("analyze lpf --m 10^12", ["analyze", "lpf", "--run", str(run_dir), "--m", "1000000000000",
                                   "--device", "cpu"], "analyze"),
        ("reproduce --timeout -5", ["reproduce", "fedsam-table-2", "--timeout", "-5"], "reproduce"),
        ("reproduce --seeds -1", ["reproduce", "fedsam-table-2", "--seeds", "-1"], "reproduce"),
        ("reproduce --workers -1", ["reproduce", "fedsam-table-2", "--workers", "-1"], "reproduce"),
        ("reproduce --root without notebooks", ["reproduce", "--all", "--scale", "smoke", "--root", str(folder)],
         "reproduce"),
        ("book --root without notebooks", ["book", "--scale", "smoke", "--root", str(folder)], "reproduce"),
    ]
    for name, argv, kind in argvs:
        store = tmp / f"cls-input-store-{abs(hash(name))}"
        if kind in ("run", "sweep"):
            argv = [argv[0], *BASE, *argv[1:], "--store", str(store)]
        elif kind == "reproduce":
            argv = [*argv, "--store", str(store)]
        started = time.perf_counter()
        rc, _, err = timed(cli, 200)(argv)
        seconds = time.perf_counter() - started
        error_lines = [line for line in err.splitlines()
                       if line.startswith(("flcore: error:", "flcore analyze: error:"))]
        written = store.exists() and any(store.iterdir())
        ok = (rc == 2 and len(error_lines) == 1 and "Traceback" not in err and len(err) <= MAX_ERROR_CHARS
              and not written and seconds < 60)
        cat.record(name, ok, f"rc={rc} {seconds:.1f} s written={written} stderr ({len(err)} chars)="
                             f"{err.strip()[-200:]!r}")
    # one experiment, one run id: -0 and 0, 1e-1 and 0.1
    from flcore import resolve_config

    for a, b in (("-0", "0"), ("-0.0", "0.0"), ("1e-1", "0.1")):
        same = resolve_config(scale="smoke", alpha=a).run_id() == resolve_config(scale="smoke", alpha=b).run_id()
        cat.record(f"--alpha {a} and --alpha {b}: one run id", same, f"same={same}")
