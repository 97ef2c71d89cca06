"""Bundles crafted by an adversary, every digest in the manifest right: runs the store's own
checks would never accept, archives cut or malformed anywhere, text that tries to write
into the book, and imports that fail or are killed next to one that succeeds.  Each is
refused with one line and exit 2 and leaves the store as it was; a failure removes only
its own staging folder.  Everything on one smoke run of 4 rounds."""
from __future__ import annotations

import errno
import hashlib
import html
import io
import json
import math
import multiprocessing
import os
import re
import signal
import stat
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pandas as pd
import pytest
import safetensors.torch
import torch
from bundle_source import bundle_source
from cli_runner import run_cli

from flcore.report.provenance import provenance_markdown
from flcore.reproduction.runner import provenance_text
from flcore.store import RunStore, check_run, config_digest
from flcore.store import bundle as bundle_module
from flcore.store.bundle import MANIFEST_FILE, MODEL_FILE
from flcore.store.staging import StagingFolder, is_staging, remove_abandoned

ROOT = Path(__file__).resolve().parents[1]


def tree_state(root: Path) -> dict | None:
    """Every entry under ``root`` with its type and content (None: no root)."""
    if not os.path.lexists(root):
        return None
    state = {}
    for path in sorted(root.rglob("*")):
        info = os.lstat(path)
        state[str(path.relative_to(root))] = (stat.S_IFMT(info.st_mode),
                                              path.read_bytes() if stat.S_ISREG(info.st_mode) else None)
    return state


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A store with one finished smoke run of 4 rounds, and its bundle."""
    return bundle_source(tmp_path_factory)


def read_bundle(path: Path) -> tuple[dict, str, dict[str, bytes]]:
    """(manifest, run id, {file name: bytes}) of a one-run bundle."""
    with tarfile.open(path) as tar:
        members = [(m.name, tar.extractfile(m).read()) for m in tar.getmembers()]
    manifest = json.loads(members[0][1])
    rid = members[1][0].split("/")[0]
    return manifest, rid, {name.split("/", 1)[1]: data for name, data in members[1:]}


def write_bundle(path: Path, manifest: dict, runs: dict[str, dict[str, bytes]]) -> Path:
    """A bundle of ``runs`` whose manifest lists every member's right size and digest."""
    members = [(f"{rid}/{name}", data) for rid, files in runs.items() for name, data in files.items()]
    manifest = {**manifest, "members": {name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
                                        for name, data in members}}
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in [(MANIFEST_FILE, json.dumps(manifest).encode())] + members:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return path


def json_bytes(value) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()


def edited(source, tmp_path: Path, config=None, status=None, summary=None, model=None, manifest=None,
           name: str = "crafted.tar") -> tuple[Path, str]:
    """The source bundle with its run's records edited (each a function of the parsed
    record); the run moved to the folder its edited config hashes to.  (path, run id)"""
    base, rid, files = read_bundle(source[2])
    records = {"config.json": config, "status.json": status, "summary.json": summary}
    for file, edit in records.items():
        if edit is not None:
            files[file] = json_bytes(edit(json.loads(files[file])))
    if model is not None:
        files[MODEL_FILE] = safetensors.torch.save(model(safetensors.torch.load(files[MODEL_FILE])))
    new_rid = config_digest(json.loads(files["config.json"]))[:16]
    base = manifest(dict(base)) if manifest is not None else base
    return write_bundle(tmp_path / name, base, {new_rid: files}), new_rid


def refuses(capsys, bundle: Path, store: Path, pattern: str) -> str:
    before = tree_state(store)
    code, out, err = run_cli(capsys, "bundle", "import", str(bundle), "--store", str(store))
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert re.search(pattern, err), err
    assert "nothing was imported" in err
    assert tree_state(store) == before
    return err


def test_an_edited_bundle_that_is_still_valid_is_imported(source, tmp_path, capsys):
    """The crafting helpers themselves: re-listing the digests of an unchanged run gives a
    bundle that imports and verifies (so each refusal below is the edit's doing)."""
    bundle, rid = edited(source, tmp_path)
    assert rid == source[1].run_id
    code, out, err = run_cli(capsys, "bundle", "import", str(bundle), "--store", str(tmp_path / "s"))
    assert code == 0, err
    assert check_run(RunStore(tmp_path / "s").run(rid), deep=True) == []


def _first(state: dict) -> str:
    return next(iter(state))


MODEL_EDITS = {
    "nan": (lambda s: {**s, _first(s): torch.full_like(s[_first(s)], math.nan)}, "NaN or infinite"),
    "inf": (lambda s: {**s, _first(s): s[_first(s)].clone().fill_(math.inf)}, "NaN or infinite"),
    "float64": (lambda s: {k: v.double() for k, v in s.items()}, "is float64, the config's model has float32"),
    "float16": (lambda s: {**s, _first(s): s[_first(s)].half()}, "is float16"),
    "shape": (lambda s: {**s, _first(s): s[_first(s)][:-1].clone()}, "has shape"),
    "another_models_names": (lambda s: {f"module.{k}": v for k, v in s.items()}, "not a parameter of the config's"),
    "missing_tensor": (lambda s: dict(list(s.items())[:-1]), "is missing"),
    "extra_tensor": (lambda s: {**s, "head.extra": torch.zeros(3)}, "not a parameter of the config's"),
    "integer_tensors": (lambda s: {k: v.to(torch.int32) for k, v in s.items()}, "is int32"),
}


@pytest.mark.parametrize("case", list(MODEL_EDITS))
def test_a_final_model_that_is_not_the_configs_model_is_refused(source, tmp_path, capsys, case):
    edit, pattern = MODEL_EDITS[case]
    bundle, rid = edited(source, tmp_path, model=edit)
    err = refuses(capsys, bundle, tmp_path / "new-store", rf"{rid}/{MODEL_FILE}: .*{pattern}")
    assert rid in err


def _with(**changes):
    return lambda record: {**record, **changes}


RECORD_EDITS = {
    # a config that flcore does not accept, or that is not the canonical form it writes
    "unknown_config_key": (dict(config=_with(colour="red")), r"config\.json: not a config flcore accepts.*colour"),
    "invalid_config_value": (dict(config=_with(lr=-1.0)), r"config\.json: not a config flcore accepts.*lr"),
    "unknown_method": (dict(config=_with(method="fedmagic")), r"config\.json: not a config flcore accepts.*method"),
    "non_semantic_key": (dict(config=_with(device="cuda:0")), r"config\.json: not the canonical config.*device"),
    "default_spelled_out": (dict(config=_with(max_rounds=None)),
                            r"config\.json: not the canonical config.*max_rounds"),
    "string_for_number": (dict(config=lambda c: {**c, "lr": str(c["lr"])}),
                          r"config\.json: not (a config flcore accepts|the canonical config)"),
    # scale: the config's against the manifest's
    "manifest_scale": (dict(manifest=_with(scale="paper")), r"config\.json: scale 'smoke', but manifest\.json"),
    "config_scale": (dict(config=_with(scale="small", eval_last_every=5)),
                     r"config\.json: scale 'small', but manifest\.json"),
    # rounds and summary
    "fewer_rounds_than_config": (dict(status=_with(rounds_done=3)), r"status\.json: finished after 3 rounds"),
    "more_rounds_in_config": (dict(config=lambda c: {**c, "rounds": c["rounds"] + 1}),
                              r"status\.json: finished after 4 rounds, the config has 5"),
    "diverged_without_round": (dict(status=_with(status="diverged", diverged_round=None)),
                               r"status\.json: diverged at round None"),
    "summary_accuracy": (dict(summary=lambda s: {**s, "final_accuracy": 0.99}),
                         r"summary\.json: disagrees with metrics\.jsonl"),
    "summary_status": (dict(summary=_with(status="diverged")), r"summary\.json: status 'diverged'"),
    "summary_rounds": (dict(summary=_with(rounds_done=2)), r"summary\.json: rounds_done 2"),
}


@pytest.mark.parametrize("case", list(RECORD_EDITS))
def test_records_the_store_would_never_write_are_refused(source, tmp_path, capsys, case):
    edits, pattern = RECORD_EDITS[case]
    bundle, rid = edited(source, tmp_path, **edits)
    err = refuses(capsys, bundle, tmp_path / "new-store", pattern)
    assert rid in err  # the line names the run


# -- archive faults ----------------------------------------------------------------------------

def _layout(path: Path) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(path) as tar:
        return {m.name: m for m in tar.getmembers()}


def _end_of_members(path: Path) -> int:
    last = list(_layout(path).values())[-1]
    return last.offset_data + -(-last.size // 512) * 512


@pytest.mark.parametrize("where", ["empty", "manifest_header", "manifest_data", "config_header", "model_data",
                                   "model_last_byte", "no_end_blocks", "one_end_block", "garbage_end",
                                   "broken_header_checksum", "gzip", "not_a_tar"])
def test_a_cut_or_damaged_archive_is_one_line(source, tmp_path, capsys, where):
    data = source[2].read_bytes()
    members = _layout(source[2])
    rid = source[1].run_id
    model = members[f"{rid}/{MODEL_FILE}"]
    end = _end_of_members(source[2])
    if where == "gzip":
        import gzip

        changed = gzip.compress(data)
    elif where == "not_a_tar":
        changed = b"PK\x03\x04" + os.urandom(3000)
    elif where == "garbage_end":
        changed = data[:end] + b"x" * 1024
    elif where == "broken_header_checksum":
        header = members[f"{rid}/status.json"].offset
        changed = bytearray(data)
        changed[header + 148:header + 156] = b"0000000\0"  # a wrong checksum in a later header
        changed = bytes(changed)
    else:
        cut = {"empty": 0, "manifest_header": 300, "manifest_data": members[MANIFEST_FILE].offset_data + 10,
               "config_header": members[f"{rid}/config.json"].offset + 100,
               "model_data": model.offset_data + model.size // 2, "model_last_byte": model.offset_data + model.size - 1,
               "no_end_blocks": end, "one_end_block": end + 512}[where]
        changed = data[:cut]
    bundle = tmp_path / "damaged.tar"
    bundle.write_bytes(changed)
    refuses(capsys, bundle, tmp_path / "new-store", r"damaged|truncated|not an uncompressed tar|end-of-archive")


def test_an_archive_ending_exactly_after_its_end_blocks_is_complete(source, tmp_path, capsys):
    """tarfile pads an archive to 10 kB records; only the two end blocks are needed."""
    data = source[2].read_bytes()
    bundle = tmp_path / "short.tar"
    bundle.write_bytes(data[:_end_of_members(source[2]) + 1024])
    code, _, err = run_cli(capsys, "bundle", "import", str(bundle), "--store", str(tmp_path / "s"))
    assert code == 0, err


def _raw_member(name: str, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.mode = size, 0o644
    return info.tobuf(format=tarfile.PAX_FORMAT)


def test_a_member_declared_huge_and_cut_short_is_refused_before_it_is_read(source, tmp_path, capsys):
    """A model declared 2 GB (the manifest agrees) of which the archive holds 100 bytes."""
    manifest, rid, files = read_bundle(source[2])
    huge = 2 << 30
    names = [f"{rid}/{n}" for n in files]
    manifest["members"] = {f"{rid}/{n}": {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)}
                           for n, d in files.items()}
    manifest["members"][f"{rid}/{MODEL_FILE}"] = {"sha256": "ab" * 32, "bytes": huge}
    out = io.BytesIO()
    text = json.dumps(manifest).encode()
    out.write(_raw_member(MANIFEST_FILE, len(text)) + text + bytes(-len(text) % 512))
    for name in names[:-1]:
        data = files[name.split("/", 1)[1]]
        out.write(_raw_member(name, len(data)) + data + bytes(-len(data) % 512))
    out.write(_raw_member(names[-1], huge) + files[MODEL_FILE][:100])
    bundle = tmp_path / "huge.tar"
    bundle.write_bytes(out.getvalue())
    refuses(capsys, bundle, tmp_path / "new-store", rf"{MODEL_FILE}'?: declares {huge} bytes.*truncated")


@pytest.mark.parametrize("name,pattern", [
    ("{rid}\\config.json", "backslash"),
    ("{rid}/config.json\x00.txt", "NUL|unknown file name|damaged"),
    ("{rid}/config\n.json", "control character"),
    ("{rid}/config\x1b[2J.json", "control character"),
    ("{rid}/c\u043enfig.json", "non-ASCII"),
    ("{rid}//config.json", "not under a run-id folder|unknown file name"),
    ("./{rid}/config.json", "not under a run-id folder"),
])
def test_member_names_with_odd_characters_are_refused(source, tmp_path, capsys, name, pattern):
    manifest, rid, files = read_bundle(source[2])
    odd = name.format(rid=rid)
    members = [(odd if n == "config.json" else f"{rid}/{n}", d) for n, d in files.items()]
    manifest["members"] = {m: {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)} for m, d in members}
    bundle = tmp_path / "odd.tar"
    with tarfile.open(bundle, "w", format=tarfile.PAX_FORMAT) as tar:
        for member, data in [(MANIFEST_FILE, json.dumps(manifest).encode())] + members:
            info = tarfile.TarInfo(member)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    refuses(capsys, bundle, tmp_path / "new-store", pattern)


def test_a_read_error_and_a_safetensors_error_are_one_line(source, tmp_path, capsys, monkeypatch):
    manifest, rid, files = read_bundle(source[2])
    header = json.dumps({"w": {"dtype": "F32", "shape": [1000], "data_offsets": [0, 4000]}}).encode()
    files[MODEL_FILE] = len(header).to_bytes(8, "little") + header + bytes(16)  # offsets past the data
    refuses(capsys, write_bundle(tmp_path / "st.tar", manifest, {rid: files}), tmp_path / "a",
            rf"{MODEL_FILE}: not a valid safetensors file")

    def failing(self, member):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(tarfile.TarFile, "extractfile", failing)
    refuses(capsys, source[2], tmp_path / "b", r"unreadable \(\[Errno 5\] Input/output error\)")


# -- what a bundle's text can do to a page -------------------------------------------------------

HOSTILE = {"device": "**H100** <script>alert('x')</script> [docs](javascript:alert(1)) | # cell\n<img src=x>",
           "commit": "<b>c</b>`x`_y_*z*", "flcore_version": "1.0 <iframe src=//e>",
           "date": "2026-01-01<style>"}


def test_provenance_from_a_bundle_is_shown_as_text_on_the_page(source, tmp_path, capsys):
    """A bundle whose provenance fields hold Markdown, HTML and script tags: the page's
    Markdown, rendered as MyST renders it (CommonMark with raw HTML, and tables), shows
    each field as the text it is and adds no element."""
    from markdown_it import MarkdownIt

    bundle, rid = edited(source, tmp_path, manifest=lambda m: {**m, **HOSTILE})
    code, _, err = run_cli(capsys, "bundle", "import", str(bundle), "--store", str(tmp_path / "s"))
    assert code == 0, err
    record = RunStore(tmp_path / "s").run(rid).provenance()
    assert record["device"] == HOSTILE["device"]
    shown = provenance_text(record)
    frame = pd.DataFrame([{"run_id": rid, "dataset": "mnist1d", "method": "fedavg <u>x</u>", "provenance": shown},
                          {"run_id": "0" * 16, "dataset": "mnist1d", "method": "fedsam", "provenance": None}])
    note = provenance_markdown(frame)
    page = MarkdownIt("commonmark").enable("table").render(note)
    tags = set(re.findall(r"<\s*([a-zA-Z]+)", page))
    assert tags <= {"p", "strong", "code", "table", "thead", "tbody", "tr", "th", "td"}, tags
    assert page.count("<tr>") == 2 and page.count("<strong>") == 1  # the note's own bold, one row of runs
    cells = re.findall(r"<td>(.*?)</td>", page, flags=re.S)
    assert html.unescape(cells[0]) == " ".join(shown.split("\n"))  # the text, its line break a space
    assert html.unescape(cells[1]) == "dataset mnist1d, method fedavg <u>x</u>"


# -- failures remove only their own work -------------------------------------------------------

def _import_in_child(bundle: str, store: str, fail: bool, staged, good_done, queue) -> None:
    """``flcore bundle import`` in a forked process; the failing one fails while staging,
    after the good one has put its run in the store."""
    from flcore.cli.main import main

    if fail:
        original = bundle_module._stage_run

        def stage_then_fail(stage, *args, **kwargs):
            original(stage, *args, **kwargs)
            staged.set()
            good_done.wait(120)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(stage))

        bundle_module._stage_run = stage_then_fail
    else:
        staged.wait(120)
    sink = io.StringIO()
    sys.stderr = sys.stdout = sink
    code = main(["bundle", "import", bundle, "--store", store])
    if not fail:
        good_done.set()
    queue.put((fail, code, sink.getvalue()))


@pytest.mark.parametrize("attempt", range(3))
def test_a_failing_import_never_removes_a_concurrent_good_one(source, tmp_path, attempt):
    """Two imports into a new store root: the failing one creates the root and stages,
    the good one imports meanwhile, then the failing one fails.  The good run stays."""
    ctx = multiprocessing.get_context("fork")
    staged, good_done, queue = ctx.Event(), ctx.Event(), ctx.Queue()
    store = tmp_path / "new-root"
    procs = [ctx.Process(target=_import_in_child, args=(str(source[2]), str(store), fail, staged, good_done, queue))
             for fail in (True, False)]
    try:
        for proc in procs:
            proc.start()
        results = {fail: (code, text) for fail, code, text in (queue.get(timeout=240) for _ in procs)}
    finally:
        for proc in procs:
            proc.join(60)
            if proc.is_alive():
                proc.kill()
    assert results[False][0] == 0, results[False][1]
    assert results[True][0] == 2 and "nothing was imported" in results[True][1], results[True][1]
    run = RunStore(store).run(source[1].run_id)
    assert RunStore(store).run_ids() == [run.run_id]
    assert check_run(run, deep=True) == []
    assert not [p.name for p in store.iterdir() if p.name.startswith(".")]  # both staging folders gone


_KILLED_IMPORT = """
import sys, time
from pathlib import Path
from flcore.store import bundle
original = bundle._stage_run
def stage_and_hang(stage, *args, **kwargs):
    run = original(stage, *args, **kwargs)
    Path(sys.argv[3]).write_text(str(stage))
    time.sleep(300)
bundle._stage_run = stage_and_hang
from flcore.cli.main import main
main(["bundle", "import", sys.argv[1], "--store", sys.argv[2]])
"""


def test_an_import_killed_mid_way_leaves_nothing_listed_and_the_next_one_cleans_up(source, tmp_path, capsys):
    store, marker = tmp_path / "store", tmp_path / "staged"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_IMPORT, str(source[2]), str(store), str(marker)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 120
        while not marker.exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert marker.exists(), proc.communicate(timeout=10)
        stage = Path(marker.read_text())
        assert stage.parent == store and is_staging(stage.name)
        assert (stage / source[1].run_id / "config.json").exists()  # a whole run staged
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert stage.is_dir()  # left behind by the kill ...
    code, out, err = run_cli(capsys, "runs", "--store", str(store), "--json")
    assert code == 0, err
    assert out.strip() in ("", "[]") and RunStore(store).run_ids() == []  # ... never listed as a run
    code, out, err = run_cli(capsys, "bundle", "import", str(source[2]), "--store", str(store))
    assert code == 0, err
    assert not stage.exists()  # the next import removed it
    assert RunStore(store).run_ids() == [source[1].run_id]
    assert not [p.name for p in store.iterdir() if p.name.startswith(".")]


def test_a_live_staging_folder_is_never_taken_for_an_abandoned_one(tmp_path):
    with StagingFolder(tmp_path, "bundle") as live:
        (live / "work").write_text("x")
        abandoned = tmp_path / f".staging-bundle-{'0' * 32}"
        abandoned.mkdir()
        (abandoned / "half-written").write_text("y")
        other = tmp_path / ".staging-notes"  # not a staging folder's name: never touched
        other.mkdir()
        assert remove_abandoned(tmp_path) == [abandoned]
        assert (live / "work").read_text() == "x" and other.is_dir()
    assert not live.exists() and other.is_dir()
    with pytest.raises(RuntimeError), StagingFolder(tmp_path, "bundle") as failed:
        (failed / "partial").write_text("z")
        raise RuntimeError("boom")
    assert not failed.exists() and tmp_path.is_dir()  # its own folder only, never the root


def test_a_waiter_on_a_run_folder_removed_by_its_holder_locks_the_new_one(tmp_path):
    """A call that recorded nothing removes its run folder (lock file included) while it
    holds the lock; a process that was waiting on that lock must not then hold a lock on
    a file that is gone, beside a third process holding the new one."""
    import threading

    from flcore.store import RunBusyError, RunLock

    run_dir = tmp_path / "0123456789abcdef"
    first, second, third = RunLock(run_dir), RunLock(run_dir), RunLock(run_dir)
    first.acquire()
    got = threading.Event()
    waiter = threading.Thread(target=lambda: (second.acquire(wait=True), got.set()), daemon=True)
    waiter.start()
    time.sleep(0.3)
    assert not got.is_set()
    os.unlink(first.path)
    os.rmdir(run_dir)
    first.release()
    waiter.join(10)
    assert got.is_set() and run_dir.is_dir()
    with pytest.raises(RunBusyError):
        third.acquire(wait=False)  # the waiter holds the lock file that is there
    second.release()
    third.acquire(wait=False)
    third.release()
