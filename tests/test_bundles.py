"""Results bundles: finished runs carried from one store to another without pickles, and
bundles that try to write outside the store, carry code or lie about their content
refused with one line, exit 2 and nothing written.  Everything on one smoke run of 4
rounds and one artifact's run."""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import stat
import tarfile
from pathlib import Path

import pytest
import torch
from bundle_source import bundle_source
from cli_runner import run_cli

from flcore.report.provenance import provenance_markdown
from flcore.reproduction.artifacts import runs_for
from flcore.reproduction.runner import ensure_runs, results_frame
from flcore.store import RunStore
from flcore.store import bundle as bundle_module
from flcore.store.bundle import MANIFEST_FILE, MODEL_FILE

ARTIFACT = "fedsam-fig-12"  # one FedAvg run at the smoke scale


def tree_state(root: Path) -> dict | None:
    """Every entry under ``root`` with its type, mode and content (None: no root)."""
    if not os.path.lexists(root):
        return None
    state = {}
    for path in sorted(root.rglob("*")):
        info = os.lstat(path)
        content = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
        state[str(path.relative_to(root))] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), content)
    return state


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A store with one finished smoke run, and its bundle."""
    return bundle_source(tmp_path_factory)


def members_of(path: Path) -> list[tuple[tarfile.TarInfo, bytes]]:
    with tarfile.open(path) as tar:
        return [(m, tar.extractfile(m).read() if m.isreg() else b"") for m in tar.getmembers()]


def write_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def with_manifest(members, manifest: dict | None = None, text: bytes | None = None):
    """``members`` (the manifest first) with the manifest replaced, re-listing every other
    regular member's digest unless ``manifest`` is given."""
    info, old = members[0]
    if text is None:
        if manifest is None:
            manifest = json.loads(old)
            manifest["members"] = {m.name: {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)}
                                   for m, d in members[1:]}
        text = json.dumps(manifest).encode()
    return [(info, text)] + members[1:]


def info(name: str, kind=tarfile.REGTYPE, mode=0o644, target: str = "") -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type, member.mode, member.linkname = kind, mode, target
    return member


def refuses(capsys, bundle: Path, store: Path, pattern: str) -> None:
    before = tree_state(store)
    code, out, err = run_cli(capsys, "bundle", "import", str(bundle), "--store", str(store))
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert re.search(pattern, err), err
    assert "nothing was imported" in err
    assert tree_state(store) == before


@pytest.fixture
def target(tmp_path, source):
    """A store that already holds a run of its own (to show it is left byte for byte)."""
    store_root = tmp_path / "target"
    store = RunStore(store_root)
    config = dict(source[1].config(), seed=7)
    from flcore.store import config_digest

    store.create(config_digest(config)[:16], config)
    return store_root


def test_round_trip_keeps_every_number_and_records_where_the_runs_were_trained(source, tmp_path, capsys):
    _, run, path = source
    names = [m.name for m, _ in members_of(path)]
    rid = run.run_id
    assert names == [MANIFEST_FILE] + [f"{rid}/{n}" for n in ("config.json", "status.json", "summary.json",
                                                               "metrics.jsonl", MODEL_FILE)]
    assert not any(name.endswith(".pt") for name in names)  # no pickle travels
    manifest = json.loads(members_of(path)[0][1])
    assert manifest["format"] == "flcore-bundle" and manifest["format_version"] == 1
    assert manifest["scale"] == "smoke" and manifest["device"] == "NVIDIA H100 80GB HBM3"
    assert manifest["commit"] is None or re.fullmatch(r"[0-9a-f]{40}", manifest["commit"])
    assert manifest["flcore_version"] and manifest["date"]
    assert manifest["members"] == {m.name: {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)}
                                   for m, d in members_of(path)[1:]}
    store = tmp_path / "imported"
    code, out, err = run_cli(capsys, "bundle", "import", str(path), "--store", str(store))
    assert code == 0, err
    assert "imported 1 run(s)" in out
    copy = RunStore(store).run(rid)
    assert copy.config() == run.config()
    assert copy.read_metrics() == run.read_metrics()
    assert copy.summary() == run.summary()
    assert copy.status()["rounds_done"] == run.status()["rounds_done"] == 4
    ours, theirs = run.load_final_model(), copy.load_final_model()
    assert ours.keys() == theirs.keys()
    assert all(torch.equal(ours[k], theirs[k]) and ours[k].dtype == theirs[k].dtype for k in ours)
    provenance = copy.provenance()
    assert provenance["device"] == "NVIDIA H100 80GB HBM3"
    assert provenance["date"] == run.status()["updated"]
    assert provenance["bundle"] == "results.tar"  # the file name, no path of the importing machine
    assert provenance["flcore_version"] and "commit" in provenance
    assert not run.provenance()
    code, out, err = run_cli(capsys, "runs", "--store", str(store), "--verify")
    assert code == 0, out + err
    assert not [p for p in store.iterdir() if p.name.startswith(".")]  # no staging left behind
    # again: the finished run is kept, not replaced
    before = tree_state(store)
    code, out, _ = run_cli(capsys, "bundle", "import", str(path), "--store", str(store))
    assert code == 0 and f"skipped {rid}: already finished" in out
    assert tree_state(store) == before


def test_an_unfinished_local_run_is_replaced_by_the_imported_finished_one(source, tmp_path, capsys):
    _, run, path = source
    store = RunStore(tmp_path / "partial")
    partial = store.create(run.run_id, run.config())
    partial.set_status("interrupted", rounds_done=2)
    code, out, err = run_cli(capsys, "bundle", "import", str(path), "--store", str(store.root))
    assert code == 0, err
    assert f"replaced {run.run_id}" in out
    assert store.run(run.run_id).status()["status"] == "finished"
    assert store.run(run.run_id).provenance()["device"] == "NVIDIA H100 80GB HBM3"


def test_a_run_being_trained_in_the_store_is_left_alone(source, tmp_path, capsys):
    from flcore.store import RunLock

    _, run, path = source
    store = RunStore(tmp_path / "busy")
    partial = store.create(run.run_id, run.config())
    with RunLock(partial.path):
        code, out, err = run_cli(capsys, "bundle", "import", str(path), "--store", str(store.root))
    assert code == 0, err
    assert f"skipped {run.run_id}: a process is training it" in out
    assert store.run(run.run_id).status()["status"] == "new" and not store.run(run.run_id).provenance()
    assert not [p for p in store.root.iterdir() if p.name.startswith(".")]


def test_export_never_overwrites_silently_and_names_what_it_leaves_out(source, tmp_path, capsys):
    store, _, _ = source
    out_file = tmp_path / "b.tar"
    out_file.write_bytes(b"precious")
    code, _, err = run_cli(capsys, "bundle", "export", ARTIFACT, "--scale", "smoke", "--store", str(store),
                           "-o", str(out_file))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert out_file.read_bytes() == b"precious"
    assert "nothing to export" in err  # the artifact's runs are not in this store
    code, _, err = run_cli(capsys, "bundle", "export", "no-such-artifact", "--store", str(store), "-o",
                           str(out_file))
    assert code == 2 and "unknown artifact" in err


def test_an_exported_artifact_rebuilds_the_same_rows_without_training(tmp_path, capsys):
    """``flcore reproduce`` on the importing store finds every run of the page (trains
    nothing) and the rows equal the exporting store's, now with their provenance."""
    torch.set_num_threads(1)
    a, b = tmp_path / "A", tmp_path / "B"
    specs = runs_for([ARTIFACT], "smoke")
    ensure_runs(specs, store=a, device="cpu", workers=1, log=lambda _: None)
    bundle = tmp_path / "page.tar"
    code, out, err = run_cli(capsys, "bundle", "export", ARTIFACT, "--scale", "smoke", "--store", str(a),
                             "-o", str(bundle), "--device-name", "NVIDIA H100 80GB HBM3")
    assert code == 0, err
    assert f"exported {len([s for s in specs if s.available])} run(s)" in out
    assert "left out" in out  # the claims' reference runs were not trained into A
    code, _, err = run_cli(capsys, "bundle", "import", str(bundle), "--store", str(b))
    assert code == 0, err

    class NoTraining:
        name = "local"

        def planning_workers(self, n):
            return 1

        def __getattr__(self, name):
            raise AssertionError(f"the importing store trained something ({name})")

    rebuilt = ensure_runs(specs, store=b, device="cpu", executor=NoTraining(), log=lambda _: None)
    original = results_frame(specs, a)
    numbers = ["run_id", "status", "rounds_done", "mean_last_100", "final_accuracy"]
    assert rebuilt[numbers].equals(original[numbers])
    assert original["provenance"].isna().all()
    assert rebuilt["provenance"].str.startswith("NVIDIA H100 80GB HBM3, ").all()
    note = provenance_markdown(rebuilt)
    assert note is not None and f"**{len(rebuilt)} of the {len(rebuilt)} runs" in note
    assert "NVIDIA H100 80GB HBM3" in note and "trained for this build" not in note
    assert provenance_markdown(original) is None


# -- malicious bundles ----------------------------------------------------------------------

def _first_run(members):
    return members[1][0].name.split("/")[0]


@pytest.mark.parametrize("case", ["traversal", "absolute", "symlink", "hardlink", "device", "fifo", "executable",
                                  "pickle", "unknown", "pickle_as_safetensors", "bad_safetensors"])
def test_members_that_are_not_plain_known_files_are_refused(source, target, tmp_path, capsys, case):
    members = members_of(source[2])
    rid = _first_run(members)
    extra = {
        "traversal": (info("../outside.json"), b"{}"),
        "absolute": (info("/tmp/outside.json"), b"{}"),
        "symlink": (info(f"{rid}/config.json", tarfile.SYMTYPE, target="/etc/passwd"), b""),
        "hardlink": (info(f"{rid}/config.json", tarfile.LNKTYPE, target="/etc/passwd"), b""),
        "device": (info(f"{rid}/config.json", tarfile.CHRTYPE), b""),
        "fifo": (info(f"{rid}/config.json", tarfile.FIFOTYPE), b""),
        "pickle": (info(f"{rid}/final_model.pt"), torch_bytes()),
        "unknown": (info(f"{rid}/notes.txt"), b"hello"),
    }
    expected = {"traversal": r"'\.\.'", "absolute": "absolute path", "symlink": "symbolic link",
                "hardlink": "hard link", "device": "a device", "fifo": "a FIFO", "executable": "executable",
                "pickle": "pickle", "unknown": "unknown file name",
                "pickle_as_safetensors": "safetensors (header|file)", "bad_safetensors": "not a valid safetensors"}
    if case == "executable":
        members[1][0].mode = 0o755
    elif case in ("pickle_as_safetensors", "bad_safetensors"):
        index = next(i for i, (m, _) in enumerate(members) if m.name.endswith(MODEL_FILE))
        data = torch_bytes() if case == "pickle_as_safetensors" else (2).to_bytes(8, "little") + b"{]"
        members[index] = (members[index][0], data)
    elif case in ("symlink", "hardlink", "device", "fifo"):
        members[1] = extra[case]  # in place of the run's config.json
    else:
        members.insert(2, extra[case])  # listed in the manifest, at its place
    bundle = write_tar(tmp_path / "evil.tar", with_manifest(members))
    refuses(capsys, bundle, target, expected[case])
    refuses(capsys, bundle, tmp_path / "new-store", expected[case])  # and nothing is created


def torch_bytes() -> bytes:
    buffer = io.BytesIO()
    torch.save({"w": torch.zeros(2)}, buffer)
    return buffer.getvalue()


def test_content_that_does_not_match_the_manifest_is_refused(source, target, tmp_path, capsys):
    members = members_of(source[2])
    index = next(i for i, (m, _) in enumerate(members) if m.name.endswith("metrics.jsonl"))
    data = bytearray(members[index][1])
    data[data.index(b'"test_accuracy": ') + 18] ^= 1  # one digit of an accuracy, same size
    members[index] = (members[index][0], bytes(data))
    refuses(capsys, write_tar(tmp_path / "changed.tar", members), target, r"metrics\.jsonl.*SHA-256")


def test_an_oversize_member_is_refused(source, target, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(bundle_module, "MAX_MODEL_BYTES", 1000)
    refuses(capsys, source[2], target, rf"{MODEL_FILE}.* more than the 1000 allowed")


@pytest.mark.parametrize("case", ["missing", "duplicate_keys", "wrong_schema", "not_json"])
def test_a_manifest_that_is_missing_or_malformed_is_refused(source, target, tmp_path, capsys, case):
    members = members_of(source[2])
    manifest = json.loads(members[0][1])
    if case == "missing":
        changed, pattern = members[1:], "manifest.json: missing"
    elif case == "duplicate_keys":
        text = json.dumps(manifest)[:-1] + ', "device": "elsewhere"}'
        changed, pattern = with_manifest(members, text=text.encode()), "given twice"
    elif case == "wrong_schema":
        manifest["format_version"] = 2
        changed, pattern = with_manifest(members, manifest), "format_version"
    else:
        changed, pattern = with_manifest(members, text=b"\x80 not json"), "not valid JSON"
    refuses(capsys, write_tar(tmp_path / "manifest.tar", changed), target, pattern)


def test_a_run_folder_that_is_not_its_configs_run_id_is_refused(source, target, tmp_path, capsys):
    members = members_of(source[2])
    rid = _first_run(members)
    other = "0123456789abcdef"
    for member, _ in members[1:]:
        member.name = member.name.replace(rid, other)
    refuses(capsys, write_tar(tmp_path / "renamed.tar", with_manifest(members)), target,
            f"hashes to run id {rid}, not to its folder's {other}")
