"""The fault matrix's classes of results bundles, split files, failures beside other work
and full disks (``benchmarks/fault_matrix.py`` runs them beside its other categories).

Every bundle here is crafted as an adversary would, with every digest in its manifest
right, from one finished smoke run (MNIST-1D, 4 rounds).

- ``bundle_content``: a run the store's own checks would never accept -- a final model
  that is not its config's model (NaN, another dtype, shape or model's names), a config
  flcore does not accept or does not write, of another scale than the manifest's, rounds,
  status, summary or log that disagree.  Handled: ``bundle import`` exits 2 with one
  ``flcore: error:`` line naming the run, nothing in the store changes.
- ``bundle_archives``: an archive cut anywhere or without its end blocks, a member
  declared huge and cut short, names with a backslash, NUL, control or non-ASCII
  characters, compressed or foreign files, unreadable members.  Handled: exit 2 with one
  line, no traceback, nothing in the store changes (a new store is not even created).
- ``page_injection``: provenance fields (device, commit, version, date) holding Markdown,
  HTML or script.  Handled: the import succeeds and the page's provenance note, rendered
  as MyST renders Markdown (CommonMark with raw HTML, and tables), shows each field as the
  text it is and adds no element.
- ``split_files``: split files naming one image twice (two spellings of a CIFAR-10 index,
  a CIFAR-100 name in another case, form or with ``./``; within a user or across users)
  and malformed ones.  Handled: ``flcore run`` exits 2 with one line (for a duplicate:
  naming both entries) before anything is written.
- ``failure_cleanup``: a failing import beside a good one into a new store root, an import
  killed mid-way, a failing run or import beside other runs.  Handled: the good run is
  there and intact, nothing is listed that is not a run, a killed import's staging folder
  is removed by the next import, a live one never.
- ``disk_full``: ``ENOSPC`` at each file a run writes.  Handled: one line naming the file,
  exit 3 during training (2 before), and the same command, once space is free, ends equal
  to an uninterrupted run (summary and final model).
"""
from __future__ import annotations

import errno
import gzip
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
import unicodedata
from collections.abc import Callable
from pathlib import Path

import torch

PYTHON = sys.executable
ROOT = Path(__file__).resolve().parents[1]
#: The longest stderr a refused input may print.
MAX_ERROR_CHARS = 1200
SUMMARY_KEYS = ("status", "rounds_done", "final_accuracy", "mean_last_100", "best_accuracy")
RUN_ARGS = ["run", "--scale", "smoke", "--device", "cpu", "--rounds", "8", "--eval-every", "1",
            "--checkpoint-every", "3", "--no-progress", "--json"]


def tree_digest(path: Path) -> str:
    """A digest of every name, kind and content under ``path`` ("absent": no such path)."""
    if not os.path.lexists(path):
        return "absent"
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(dirs + files):
            full = Path(folder) / name
            info = os.lstat(full)
            digest.update(f"{full.relative_to(path)}:{stat.S_IFMT(info.st_mode)}".encode())
            if stat.S_ISREG(info.st_mode):
                digest.update(full.read_bytes())
    return digest.hexdigest()


def one_line(rc: int, err: str, code: int = 2) -> str | None:
    """Why ``(rc, err)`` is not one ``flcore: error:`` line with exit ``code`` (None: it is)."""
    lines = [line for line in err.splitlines() if line.strip()]
    if rc != code:
        return f"exit {rc}, expected {code}: {err[-300:]}"
    if "Traceback" in err or len(lines) != 1 or not lines[0].startswith("flcore: error:"):
        return f"not one error line: {err[-300:]}"
    if len(err) > MAX_ERROR_CHARS:
        return f"an error of {len(err)} characters"
    return None


# --------------------------------------------------------------------------- the source bundle

class Source:
    """One finished smoke run in a store, its bundle, and its files parsed."""

    def __init__(self, tmp: Path, cli: Callable) -> None:
        from flcore.api import run_experiment
        from flcore.config import resolve_config
        from flcore.store import RunStore
        from flcore.store.bundle import export_bundle

        self.tmp = tmp / "bundles"
        self.tmp.mkdir(exist_ok=True)
        store = self.tmp / "source"
        summary = run_experiment(resolve_config(scale="smoke", device="cpu", rounds=4, eval_every=1), store=store)
        self.run = RunStore(store).run(Path(summary["run_dir"]).name)
        self.bundle = self.tmp / "results.tar"
        export_bundle([self.run], self.bundle, scale="smoke", device="NVIDIA H100 80GB HBM3")
        with tarfile.open(self.bundle) as tar:
            members = [(m.name, tar.extractfile(m).read()) for m in tar.getmembers()]
        self.manifest = json.loads(members[0][1])
        self.rid = members[1][0].split("/")[0]
        self.files = {name.split("/", 1)[1]: data for name, data in members[1:]}
        self.count = 0

    def path(self, name: str) -> Path:
        self.count += 1
        return self.tmp / f"{self.count:03d}-{name}"

    def write(self, name: str, manifest: dict, runs: dict[str, dict[str, bytes]]) -> Path:
        """A bundle of ``runs`` whose manifest lists every member's size and digest."""
        members = [(f"{rid}/{file}", data) for rid, files in runs.items() for file, data in files.items()]
        manifest = {**manifest, "members": {n: {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)}
                                            for n, d in members}}
        return raw_tar(self.path(name), [("manifest.json", json.dumps(manifest).encode())] + members)

    def edited(self, name: str, config=None, status=None, summary=None, metrics=None, model=None, manifest=None,
               drop: tuple[str, ...] = ()) -> tuple[Path, str]:
        """The run with its records edited, moved to the folder its config hashes to."""
        import safetensors.torch

        from flcore.store import config_digest

        files = dict(self.files)
        for file, edit in (("config.json", config), ("status.json", status), ("summary.json", summary)):
            if edit is not None:
                files[file] = (json.dumps(edit(json.loads(files[file])), indent=2, sort_keys=True) + "\n").encode()
        if metrics is not None:
            files["metrics.jsonl"] = metrics(files["metrics.jsonl"])
        if model is not None:
            files["final_model.safetensors"] = safetensors.torch.save(
                model(safetensors.torch.load(files["final_model.safetensors"])))
        for file in drop:
            files.pop(file)
        rid = config_digest(json.loads(files["config.json"]))[:16]
        base = manifest(dict(self.manifest)) if manifest is not None else self.manifest
        return self.write(name, base, {rid: files}), rid


def raw_tar(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return path


def refused(cli: Callable, bundle: Path, store: Path, must_name: str | None = None) -> str | None:
    """Why importing ``bundle`` into ``store`` was not refused as it must be (None: it was)."""
    before = tree_digest(store)
    rc, _, err = cli(["bundle", "import", str(bundle), "--store", str(store)])
    problem = one_line(rc, err)
    if problem is None and must_name is not None and must_name not in err:
        problem = f"the line does not name {must_name}: {err.strip()[:300]}"
    if problem is None and tree_digest(store) != before:
        problem = "the store changed"
    return problem


# --------------------------------------------------------------------------- bundle_content

def _first(state: dict) -> str:
    return next(iter(state))


def _set(**changes):
    return lambda record: {**record, **changes}


def _drop_metrics_row(data: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    return b"".join(lines[:1] + lines[2:])


def _foreign_row(data: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    row = json.loads(lines[1])
    row["run_id"] = "ffffffffffffffff"
    return b"".join(lines[:1] + [(json.dumps(row) + "\n").encode()] + lines[2:])


CONTENT_CASES: list[tuple[str, dict]] = [
    ("final model all NaN", dict(model=lambda s: {k: torch.full_like(v, math.nan) for k, v in s.items()})),
    ("one tensor +inf", dict(model=lambda s: {**s, _first(s): s[_first(s)].clone().fill_(math.inf)})),
    ("one value NaN", dict(model=lambda s: {**s, _first(s): s[_first(s)].clone().view(-1).index_fill(
        0, torch.tensor([0]), math.nan).view_as(s[_first(s)])})),
    ("float64 model", dict(model=lambda s: {k: v.double() for k, v in s.items()})),
    ("bfloat16 tensor", dict(model=lambda s: {**s, _first(s): s[_first(s)].bfloat16()})),
    ("int32 tensors", dict(model=lambda s: {k: v.to(torch.int32) for k, v in s.items()})),
    ("a transposed weight", dict(model=lambda s: {**s, **{k: v.t().contiguous() for k, v in s.items()
                                                           if v.dim() == 2 and v.shape[0] != v.shape[1]}})),
    ("a tensor cut short", dict(model=lambda s: {**s, _first(s): s[_first(s)][:-1].clone()})),
    ("another model's names", dict(model=lambda s: {f"module.{k}": v for k, v in s.items()})),
    ("a ResNet's names", dict(model=lambda s: {"conv1.weight": torch.zeros(64, 3, 7, 7), "fc.weight":
                                                torch.zeros(10, 512), "fc.bias": torch.zeros(10)})),
    ("a tensor missing", dict(model=lambda s: dict(list(s.items())[:-1]))),
    ("a tensor too many", dict(model=lambda s: {**s, "head.extra": torch.zeros(3)})),
    ("config: unknown key", dict(config=_set(colour="red"))),
    ("config: negative lr", dict(config=_set(lr=-1.0))),
    ("config: unknown method", dict(config=_set(method="fedmagic"))),
    ("config: unknown model", dict(config=_set(model="vit_huge"))),
    ("config: a model that cannot take the data", dict(config=_set(model="resnet18gn"))),
    ("config: a non-semantic key", dict(config=_set(device="cuda:0"))),
    ("config: a default spelled out", dict(config=_set(max_rounds=None))),
    ("config: a number as a string", dict(config=lambda c: {**c, "lr": str(c["lr"])})),
    ("config: clients beyond the data", dict(config=_set(clients=10 ** 9))),
    ("manifest scale paper, config smoke", dict(manifest=_set(scale="paper"))),
    ("config scale small, manifest smoke", dict(config=_set(scale="small"))),
    ("finished before its rounds", dict(status=_set(rounds_done=3))),
    ("config rounds beyond the record", dict(config=lambda c: {**c, "rounds": c["rounds"] + 1})),
    ("finished with a diverged round", dict(status=_set(diverged_round=2))),
    ("diverged without its round", dict(status=_set(status="diverged", diverged_round=None))),
    ("diverged with a final model", dict(status=_set(status="diverged", diverged_round=4))),
    ("running, not finished", dict(status=_set(status="running"))),
    ("summary accuracy edited", dict(summary=lambda s: {**s, "final_accuracy": 0.99})),
    ("summary mean edited", dict(summary=lambda s: {**s, "mean_last_100": 0.5})),
    ("summary status diverged", dict(summary=_set(status="diverged"))),
    ("summary rounds 2", dict(summary=_set(rounds_done=2))),
    ("log missing a round", dict(metrics=_drop_metrics_row)),
    ("log row of another run", dict(metrics=_foreign_row)),
    ("a finished run without its model", dict(drop=("final_model.safetensors",))),
]


def run_bundle_content(cat, src: Source, cli: Callable) -> None:
    for case, edits in CONTENT_CASES:
        bundle, rid = src.edited("content.tar", **edits)
        problem = refused(cli, bundle, src.tmp / "content-store", must_name=rid)
        cat.record(case, problem is None, problem or "")


# --------------------------------------------------------------------------- bundle_archives

def _layout(path: Path) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(path) as tar:
        return {m.name: m for m in tar.getmembers()}


def _header(name: str, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.mode = size, 0o644
    return info.tobuf(format=tarfile.PAX_FORMAT)


def _declared_huge(src: Source) -> bytes:
    """The model declared 2 GB (the manifest agrees), 100 bytes of it in the archive."""
    huge = 2 << 30
    members = {f"{src.rid}/{n}": {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)}
               for n, d in src.files.items()}
    members[f"{src.rid}/final_model.safetensors"] = {"sha256": "ab" * 32, "bytes": huge}
    text = json.dumps({**src.manifest, "members": members}).encode()
    out = _header("manifest.json", len(text)) + text + bytes(-len(text) % 512)
    for name, data in list(src.files.items())[:-1]:
        out += _header(f"{src.rid}/{name}", len(data)) + data + bytes(-len(data) % 512)
    return out + _header(f"{src.rid}/final_model.safetensors", huge) + src.files["final_model.safetensors"][:100]


def _odd_name(src: Source, odd: str) -> Path:
    members = [(odd.format(rid=src.rid) if n == "config.json" else f"{src.rid}/{n}", d) for n, d in src.files.items()]
    manifest = {**src.manifest, "members": {m: {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)}
                                            for m, d in members}}
    return raw_tar(src.path("odd.tar"), [("manifest.json", json.dumps(manifest).encode())] + members)


def run_bundle_archives(cat, src: Source, cli: Callable) -> None:
    data = src.bundle.read_bytes()
    members = _layout(src.bundle)
    model = members[f"{src.rid}/final_model.safetensors"]
    last = list(members.values())[-1]
    end = last.offset_data + -(-last.size // 512) * 512
    cuts = {"empty file": 0, "inside the manifest's header": 300,
            "inside the manifest": members["manifest.json"].offset_data + 10,
            "inside a JSON member": members[f"{src.rid}/summary.json"].offset_data + 5,
            "inside a later header": members[f"{src.rid}/config.json"].offset + 100,
            "half the model": model.offset_data + model.size // 2,
            "the model's last byte": model.offset_data + model.size - 1,
            "no end blocks": end, "one end block": end + 512, "half an end block": end + 700}
    cases: list[tuple[str, Callable[[], Path]]] = []
    for case, cut in cuts.items():
        cases.append((f"cut: {case}", lambda cut=cut: _bytes(src, data[:cut])))
    broken = bytearray(data)
    header = members[f"{src.rid}/status.json"].offset
    broken[header + 148:header + 156] = b"0000000\0"
    garbled_size = bytearray(data)
    garbled_size[header + 124:header + 136] = b"zzzzzzzzzzz\0"
    cases += [
        ("garbage instead of end blocks", lambda: _bytes(src, data[:end] + b"x" * 1024)),
        ("a later header's checksum wrong", lambda: _bytes(src, bytes(broken))),
        ("a size field that is not a number", lambda: _bytes(src, bytes(garbled_size))),
        ("gzip-compressed", lambda: _bytes(src, gzip.compress(data))),
        ("random bytes", lambda: _bytes(src, os.urandom(4096))),
        ("a zip file", lambda: _bytes(src, b"PK\x03\x04" + os.urandom(2000))),
        ("a member declared 2 GB, cut short", lambda: _bytes(src, _declared_huge(src))),
        ("a directory as the bundle", lambda: _folder(src)),
        ("a FIFO as the bundle", lambda: _fifo(src)),
    ]
    for case, odd in [("backslash", "{rid}\\config.json"), ("NUL", "{rid}/config.json\x00.txt"),
                      ("newline", "{rid}/config\n.json"), ("escape sequence", "{rid}/config\x1b[2J.json"),
                      ("DEL", "{rid}/config\x7f.json"), ("non-ASCII", "{rid}/c\u043enfig.json"),
                      ("right-to-left mark", "{rid}/\u202econfig.json"), ("leading ./", "./{rid}/config.json"),
                      ("double slash", "{rid}//config.json"), ("trailing slash", "{rid}/config.json/"),
                      ("301 characters", "{rid}/" + "a" * 284), ("Windows drive", "C:{rid}/config.json")]:
        cases.append((f"member name: {case}", lambda odd=odd: _odd_name(src, odd)))
    for case, make in cases:
        try:
            bundle = make()
        except Exception as exc:  # noqa: BLE001 - the case could not be built here
            cat.record(case, False, f"not built: {exc}")
            continue
        problem = refused(cli, bundle, src.tmp / f"archive-store-{src.count}")
        cat.record(case, problem is None, problem or "")
    _unreadable(cat, src, cli)


def _bytes(src: Source, data: bytes) -> Path:
    path = src.path("archive.tar")
    path.write_bytes(data)
    return path


def _folder(src: Source) -> Path:
    path = src.path("folder.tar")
    path.mkdir()
    return path


def _fifo(src: Source) -> Path:
    path = src.path("fifo.tar")
    os.mkfifo(path)
    return path


def _unreadable(cat, src: Source, cli: Callable) -> None:
    """An I/O error while a member is read, and one while a header is read."""
    for case, target in [("EIO reading a member", "extractfile"), ("EIO reading a header", "next")]:
        original = getattr(tarfile.TarFile, target)

        def failing(self, *args, original=original, target=target):
            if target == "next" and self.offset == 0:
                return original(self, *args)
            raise OSError(errno.EIO, os.strerror(errno.EIO))

        setattr(tarfile.TarFile, target, failing)
        try:
            problem = refused(cli, src.bundle, src.tmp / f"eio-store-{target}")
        finally:
            setattr(tarfile.TarFile, target, original)
        cat.record(case, problem is None, problem or "")


# --------------------------------------------------------------------------- page_injection

PAYLOADS = [
    ("script tag", "<script>alert(1)</script>"),
    ("bold and a link", "**H100** [docs](javascript:alert(1))"),
    ("a table break", "H100 | x |\n|---|\n| injected"),
    ("an image with onerror", "<img src=x onerror=alert(1)>"),
    ("an autolink", "<javascript:alert(1)> http://e.example"),
    ("an HTML entity", "&lt;script&gt; &amp; &#60;b&#62;"),
    ("code and emphasis", "`x` _y_ *z* ~~s~~"),
    ("a heading and a rule", "# Title\n---\n> quote"),
]
ALLOWED_TAGS = {"p", "strong", "code", "table", "thead", "tbody", "tr", "th", "td"}


def run_page_injection(cat, src: Source, cli: Callable) -> None:
    import pandas as pd
    from markdown_it import MarkdownIt

    from flcore.report.provenance import provenance_markdown
    from flcore.reproduction.runner import provenance_text
    from flcore.store import RunStore

    render = MarkdownIt("commonmark").enable("table").render
    for field in ("device", "commit", "flcore_version", "date"):
        for case, payload in PAYLOADS:
            name = f"{field}: {case}"
            if field == "date":  # the run's own date is the status record's
                bundle, rid = src.edited("page.tar", status=_set(updated=payload[:64]))
            else:
                bundle, rid = src.edited("page.tar", manifest=_set(**{field: payload[:64]}))
            store = src.path("page-store")
            rc, _, err = cli(["bundle", "import", str(bundle), "--store", str(store)])
            if rc != 0:
                cat.record(name, False, f"import exit {rc}: {err[-200:]}")
                continue
            shown = provenance_text(RunStore(store).run(rid).provenance())
            frame = pd.DataFrame([{"run_id": rid, "dataset": "mnist1d", "method": "fedavg", "provenance": shown},
                                  {"run_id": "0" * 16, "dataset": "mnist1d", "method": "fedsam", "provenance": None}])
            page = render(provenance_markdown(frame))
            tags = set(re.findall(r"<\s*/?\s*([a-zA-Z]+)", page))
            cells = re.findall(r"<td>(.*?)</td>", page, flags=re.S)
            problem = None
            if not tags <= ALLOWED_TAGS:
                problem = f"the page gained elements {sorted(tags - ALLOWED_TAGS)}"
            elif page.count("<tr>") != 2 or page.count("<strong>") != 1:
                problem = "the table or the note changed shape"
            elif html.unescape(cells[0]) != " ".join(shown.split("\n")):
                problem = f"the field is not shown as itself: {cells[0][:200]!r}"
            cat.record(name, problem is None, problem or "")


# --------------------------------------------------------------------------- split_files

def _split_doc(users: dict[str, list[tuple[str, int]]]) -> dict:
    return {"users": list(users), "num_samples": [len(v) for v in users.values()],
            "user_data": {u: {"x": [x for x, _ in v], "y": [y for _, y in v]} for u, v in users.items()}}


def _dup(first: str, second: str, label: int, across: bool, dataset: str) -> tuple[dict, tuple[str, str], str]:
    other = ("img_30_label_0.png", 0) if dataset == "cifar10" else ("pear_s_000030.png", 61)
    if across:
        users = {"a": [(first, label), other], "b": [(second, label)]}
    else:
        users = {"a": [(first, label), other, (second, label)], "b": [("img_31_label_1.png", 1)
                                                                       if dataset == "cifar10"
                                                                       else ("pear_s_000031.png", 61)]}
    return _split_doc(users), (first, second), dataset


def _split_cases() -> list[tuple[str, object, tuple[str, str] | None, str]]:
    cases: list[tuple[str, object, tuple[str, str] | None, str]] = []
    for across in (True, False):
        where = "across users" if across else "within a user"
        for first, second in [("img_1_label_1.png", "img_0001_label_1.png"),
                              ("img_12_label_2.png", "img_000012_label_2.png"),
                              ("img_0_label_0.png", "img_00000_label_0.png"),
                              ("img_5_label_5.png", "img_5_label_6.png"),
                              ("img_7_label_7.png", "img_7_label_7.png")]:
            doc, names, dataset = _dup(first, second, int(first.split("_")[3].split(".")[0]), across, "cifar10")
            cases.append((f"CIFAR-10 {first} and {second} {where}", doc, names, dataset))
        for second in ["APPLE_S_000007.png", "./apple_s_000007.png", " apple_s_000007.png ",
                       "apple_s_000007.PNG", "apple_s_000007.png"]:
            doc, names, dataset = _dup("apple_s_000007.png", second, 0, across, "cifar100")
            cases.append((f"CIFAR-100 apple_s_000007.png and {second!r} {where}", doc, names, dataset))
    nfc = "caf\u00e9_s_000001.png"
    doc, names, dataset = _dup(nfc, unicodedata.normalize("NFD", nfc), 0, True, "cifar100")
    cases.append(("CIFAR-100 one name in NFC and NFD", doc, names, dataset))
    base = _split_doc({"a": [("img_1_label_1.png", 1)], "b": [("img_2_label_2.png", 2)]})
    malformed = [
        ("not JSON", b"{users: 1"), ("a list", [1, 2]),
        ("a user listed twice", {**base, "users": ["a", "a"], "num_samples": [1, 1]}),
        ("num_samples off", {**base, "num_samples": [1, 2]}),
        ("x not a list", {**base, "user_data": {**base["user_data"], "a": {"x": "img", "y": [1]}}}),
        ("y not integers", {**base, "user_data": {**base["user_data"], "a": {"x": ["img_1_label_1.png"],
                                                                             "y": [1.5]}}}),
        ("a user without data", {**base, "user_data": {"a": base["user_data"]["a"]}}),
        ("labels and images of different lengths", {**base, "user_data": {**base["user_data"], "a": {
            "x": ["img_1_label_1.png"], "y": [1, 2]}}}),
        ("no users", {**base, "users": [], "num_samples": []}),
    ]
    cases += [(f"malformed: {name}", doc, None, "cifar10") for name, doc in malformed]
    return cases


def run_split_files(cat, tmp: Path, cli: Callable) -> None:
    folder = tmp / "splits"
    folder.mkdir(exist_ok=True)
    for index, (case, doc, names, dataset) in enumerate(_split_cases()):
        path = folder / f"split-{index}.json"
        path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
        store = folder / f"store-{index}"
        rc, _, err = cli(["run", "--dataset", dataset, "--scale", "paper", "--partition", "file", "--split-file",
                          str(path), "--rounds", "1", "--per-round", "1", "--data-root", str(folder / "no-data"),
                          "--store", str(store), "--no-progress"])
        problem = one_line(rc, err)
        if problem is None and names is not None and not all(repr(n)[1:-1] in err for n in names):
            problem = f"the line does not name both entries: {err.strip()[:300]}"
        if problem is None and os.path.lexists(store):
            problem = "something was written to the store"
        cat.record(case, problem is None, problem or "")
    for case, make in [("a FIFO as the split file", os.mkfifo),
                       ("a 100 MB split file", lambda p: os.truncate(open(p, "wb").name, 100 << 20))]:
        path = folder / f"odd-{len(case)}.json"
        make(path)
        rc, _, err = cli(["run", "--dataset", "cifar10", "--scale", "paper", "--partition", "file", "--split-file",
                          str(path), "--rounds", "1", "--per-round", "1", "--store", str(folder / "odd-store"),
                          "--no-progress"])
        problem = one_line(rc, err)
        cat.record(case, problem is None, problem or "")


# --------------------------------------------------------------------------- failure_cleanup

def _child_import(bundle: str, store: str, role: str, staged, good_done, queue) -> None:
    """``flcore bundle import`` in a forked process.  ``role``: "good"; "failing" (fails
    while staging, once the good one has put its run in the store); "refused" (a bundle
    the checks refuse)."""
    from flcore.cli.main import main
    from flcore.store import bundle as bundle_module

    if role == "failing":
        original = bundle_module._stage_run

        def stage_then_fail(stage, *args, **kwargs):
            original(stage, *args, **kwargs)
            staged.set()
            good_done.wait(120)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(stage))

        bundle_module._stage_run = stage_then_fail
    elif role == "good":
        staged.wait(120)
    sys.stdout = sys.stderr = io.StringIO()
    code = main(["bundle", "import", bundle, "--store", store])
    if role == "good":
        good_done.set()
    queue.put((role, code))


def _concurrent(src: Source, store: Path, refused_bundle: Path | None) -> str | None:
    """A good import and a failing (or refused) one into ``store``, a new root, at once."""
    from flcore.store import RunStore, check_run

    ctx = multiprocessing.get_context("fork")
    staged, good_done, queue = ctx.Event(), ctx.Event(), ctx.Queue()
    if refused_bundle is not None:
        staged.set()  # a refused bundle stages nothing: both start together
        jobs = [(str(refused_bundle), "refused"), (str(src.bundle), "good")]
    else:
        jobs = [(str(src.bundle), "failing"), (str(src.bundle), "good")]
    procs = [ctx.Process(target=_child_import, args=(bundle, str(store), role, staged, good_done, queue))
             for bundle, role in jobs]
    try:
        for proc in procs:
            proc.start()
        codes = dict(queue.get(timeout=240) for _ in procs)
    except Exception as exc:  # noqa: BLE001
        return f"the imports did not finish: {exc}"
    finally:
        for proc in procs:
            proc.join(60)
            if proc.is_alive():
                proc.kill()
    runs = RunStore(store)
    if codes.get("good") != 0 or codes.get(jobs[0][1]) != 2:
        return f"exit statuses {codes}"
    if runs.run_ids() != [src.rid] or check_run(runs.run(src.rid), deep=True):
        return f"the good run is not there intact: {runs.run_ids()}"
    if [p.name for p in store.iterdir() if p.name.startswith(".")]:
        return "a staging folder was left behind"
    return None


_KILLED_IMPORT = """
import sys, time
from pathlib import Path
from flcore.store import bundle
original = bundle._stage_run
def stage_and_hang(stage, *args, **kwargs):
    original(stage, *args, **kwargs)
    Path(sys.argv[3]).write_text(str(stage))
    time.sleep(300)
bundle._stage_run = stage_and_hang
from flcore.cli.main import main
main(["bundle", "import", sys.argv[1], "--store", sys.argv[2]])
"""


def _killed_import(src: Source, cli: Callable, store: Path) -> str | None:
    from flcore.store import RunStore

    marker = src.path("staged")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([PYTHON, "-c", _KILLED_IMPORT, str(src.bundle), str(store), str(marker)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while not marker.exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        if not marker.exists():
            return "the import did not reach its staging"
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    stage = Path(marker.read_text())
    if not stage.is_dir():
        return "no staging folder was left to clean"
    rc, out, err = cli(["runs", "--store", str(store), "--json"])
    if rc != 0 or out.strip() not in ("", "[]") or RunStore(store).run_ids():
        return f"the killed import's folder is listed: exit {rc}, {out.strip()[:200]}"
    rc, _, err = cli(["runs", "--store", str(store), "--verify"])
    if rc != 0:
        return f"runs --verify exit {rc}: {err[-200:]}"
    rc, _, err = cli(["bundle", "import", str(src.bundle), "--store", str(store)])
    if rc != 0:
        return f"the next import exit {rc}: {err[-200:]}"
    if stage.exists():
        return "the next import left the abandoned staging folder"
    return None if RunStore(store).run_ids() == [src.rid] else "the next import did not import"


def run_failure_cleanup(cat, src: Source, cli: Callable) -> None:
    from flcore.store.staging import StagingFolder

    for attempt in range(3):
        problem = _concurrent(src, src.path("concurrent-root"), None)
        cat.record(f"a failing import beside a good one into a new root (#{attempt + 1})", problem is None,
                   problem or "")
    nan_bundle, _ = src.edited("nan.tar", model=lambda s: {k: torch.full_like(v, math.nan) for k, v in s.items()})
    for attempt in range(2):
        problem = _concurrent(src, src.path("refused-root"), nan_bundle)
        cat.record(f"a refused import started with a good one into a new root (#{attempt + 1})", problem is None,
                   problem or "")
    for attempt in range(2):
        problem = _killed_import(src, cli, src.path("killed-root"))
        cat.record(f"an import killed while staging, then listed and imported again (#{attempt + 1})",
                   problem is None, problem or "")
    # a live staging folder (this process holds it) is never taken for an abandoned one
    store = src.path("live-root")
    with StagingFolder(store, "bundle") as live:
        (live / "work").write_text("in progress")
        rc, _, err = cli(["bundle", "import", str(src.bundle), "--store", str(store)])
        ok = rc == 0 and (live / "work").read_text() == "in progress"
    cat.record("an import beside another process's live staging folder", ok and not live.exists(),
               f"exit {rc}: {err[-200:]}")
    # a refused import and a run that fails before recording, in a store with runs of its own
    before = tree_digest(store)
    problem = refused(cli, nan_bundle, store)
    cat.record("a refused import into a store with runs", problem is None, problem or "")
    cat.record("... leaves every run as it was", tree_digest(store) == before, "the store changed")


# --------------------------------------------------------------------------- disk_full

class _FullDisk:
    """Every store write fails with ENOSPC from the first one ``trigger`` picks on (the
    disk stays full until :meth:`free`), as a failing ``write()`` fails: naming no file."""

    def __init__(self, trigger: Callable[[Path, str], bool]) -> None:
        from flcore.store import atomic
        from flcore.store import run as run_module

        self.atomic, self.run_module, self.trigger, self.full = atomic, run_module, trigger, False
        self.replace, self.append = atomic._replace_atomically, run_module.append_jsonl

    def __enter__(self):
        def replace(path, write, before_replace=None):
            if self.full or self.trigger(Path(path), "replace"):
                self.full = True

                def write(f):
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return self.replace(path, write, before_replace)

        def append(path, rows, root=None, **options):  # options: append_jsonl's own (durable)
            if self.full or self.trigger(Path(path), json.dumps(rows)):
                self.full = True
                with open(path, "ab") as f:  # half a line reaches the disk
                    f.write(b'{"round": 9')
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
            return self.append(path, rows, root, **options)

        self.atomic._replace_atomically, self.run_module.append_jsonl = replace, append
        return self

    def __exit__(self, *exc) -> None:
        self.atomic._replace_atomically, self.run_module.append_jsonl = self.replace, self.append


def _nth(name: str, n: int) -> Callable[[Path, str], bool]:
    seen = []

    def trigger(path: Path, what: str) -> bool:
        if path.name == name:
            seen.append(what)
        return len(seen) == n
    return trigger


def _round_row(r: int) -> Callable[[Path, str], bool]:
    return lambda path, what: path.name == "metrics.jsonl" and f'"round": {r},' in what


def run_disk_full(cat, tmp: Path, cli: Callable) -> None:
    from flcore.store import RunStore

    folder = tmp / "disk-full"
    folder.mkdir(exist_ok=True)
    rc, out, err = cli([*RUN_ARGS, "--store", str(folder / "reference")])
    reference = json.loads(out.strip().splitlines()[-1])
    ref_model = RunStore(folder / "reference").run(reference["run_id"]).load_final_model()
    cases = [
        ("config.json, before training", _nth("config.json", 1), 2, "config.json"),
        ("status.json, when training starts", _nth("status.json", 1), 3, "status.json"),
        ("metrics.jsonl, round 1", _round_row(1), 3, "metrics.jsonl"),
        ("metrics.jsonl, round 5 (a torn line)", _round_row(5), 3, "metrics.jsonl"),
        ("metrics.jsonl, the last round", _round_row(8), 3, "metrics.jsonl"),
        ("checkpoint.pt, round 3", _nth("checkpoint.pt", 1), 3, "checkpoint.pt"),
        ("checkpoint.pt, round 6", _nth("checkpoint.pt", 2), 3, "checkpoint.pt"),
        ("files.json, round 6", _nth("files.json", 3), 3, "files.json"),
        ("checkpoint.pt, at the end", _nth("checkpoint.pt", 3), 3, "checkpoint.pt"),
        ("final_model.pt", _nth("final_model.pt", 1), 3, "final_model.pt"),
        ("summary.json", _nth("summary.json", 1), 3, "summary.json"),
        ("status.json, finished", _nth("status.json", 4), 3, "status.json"),
    ]
    for index, (case, trigger, code, name) in enumerate(cases):
        store = folder / f"store-{index}"
        with _FullDisk(trigger) as disk:
            rc, _, err = cli([*RUN_ARGS, "--store", str(store)])
        problem = None if disk.full else "the full disk was never reached"
        problem = problem or one_line(rc, err, code)
        if problem is None and not re.search(rf"no space left on the device writing \S*{re.escape(name)}", err):
            problem = f"the line does not name {name}: {err.strip()[:300]}"
        if problem is None:  # space freed: the same command resumes
            rc, out, err = cli([*RUN_ARGS, "--store", str(store)])
            if rc != 0:
                problem = f"the rerun exit {rc}: {err[-300:]}"
            else:
                again = json.loads(out.strip().splitlines()[-1])
                model = RunStore(store).run(again["run_id"]).load_final_model()
                if any(again[k] != reference[k] for k in SUMMARY_KEYS) or not all(
                        torch.equal(model[k], ref_model[k]) for k in ref_model):
                    problem = "the resumed run differs from the uninterrupted one"
        cat.record(f"ENOSPC at {case}", problem is None, problem or "")
    _sweep_disk_full(cat, folder, cli)


SWEEP_ARGS = ["sweep", "--scale", "smoke", "--device", "cpu", "--rounds", "8", "--eval-every", "1",
              "--checkpoint-every", "3", "--seed", "0,1", "--no-progress", "--json", "--workers", "1"]


def _sweep_disk_full(cat, folder: Path, cli: Callable) -> None:
    """A batched sweep of two runs meets a full disk at a checkpoint: exit 3, each run's
    row names the file, and the same command then ends equal to an uninterrupted sweep."""
    def rows(out: str) -> dict:
        return {row["run_id"]: row for row in map(json.loads, out.strip().splitlines())}

    rc, out, err = cli([*SWEEP_ARGS, "--store", str(folder / "sweep-reference")])
    reference = rows(out)
    store = folder / "sweep"
    with _FullDisk(_nth("checkpoint.pt", 3)) as disk:
        rc, out, err = cli([*SWEEP_ARGS, "--store", str(store)])
    problem = None if disk.full else "the full disk was never reached"
    if problem is None and (rc != 3 or "Traceback" in err):
        problem = f"exit {rc}: {err[-300:]}"
    if problem is None and not all("no space left on the device writing" in str(r.get("error")) and
                                   "checkpoint.pt" in str(r.get("error")) for r in rows(out).values()):
        problem = f"a row does not name the file: {out[-300:]}"
    if problem is None:
        rc, out, err = cli([*SWEEP_ARGS, "--store", str(store)])
        again = rows(out) if rc == 0 else {}
        if rc != 0 or again.keys() != reference.keys() or any(
                again[rid][k] != reference[rid][k] for rid in reference for k in SUMMARY_KEYS):
            problem = f"the resumed sweep differs from the uninterrupted one (exit {rc})"
    cat.record("ENOSPC at a checkpoint of a batched sweep", problem is None, problem or "")
