"""Round 4 of the fault matrix (``benchmarks/fault_matrix.py``): the command line's limits, the
book's configuration files, text from a paper's files on the pages, and the caches a verdict
reads.

- ``command_limits``: ``--workers`` above the CPUs, ``--max-rounds`` above the configs' cap,
  ``$FLCORE_MAX_ROUNDS`` that is no positive integer, ``--store`` naming a file (every command
  that takes one): one ``flcore: error:`` line, exit 2, nothing written; a closed standard
  output: exit 141 and no traceback;
- ``book_files``: a ``_config.yml`` that is not YAML, not a mapping or names no GitHub
  repository, and a ``_toc.yml`` that is a link, lacks the papers' part or holds a user's
  chapter inside it: one line, exit 2, before any run trains or any page is written, and
  the link's target untouched;
- ``paper_text``: a claim text, a later claim's citation, quote and URL holding markup,
  rendered through a CommonMark parser: no tag, no link of its own, no extra table cell;
  a paper id that is a path is refused at registration; a package named in
  ``$FLCORE_PAPERS`` that cannot be registered leaves ``flcore --help`` working and makes
  every command one line, exit 2;
- ``paper_files``: a paper package named in ``$FLCORE_PAPERS`` (the guide's toy paper) with one
  wrong data file -- a missing title, an inventory that is a mapping, an id without its kind,
  no ``claims:``, a comparison's ``better:`` that is a string, a built-in claim's id, a
  misspelt key, a published file that is a path, an alias bomb, a file over the bound, a
  link: every command is one line naming the file and the key, exit 2, nothing written;
- ``verdict_caches``: a run's analysis cache edited after it was written is never read
  (``Run.load_analysis`` gives None) and ``flcore runs --verify`` exits 3 naming it; a
  decoded data entry whose arrays are not data is ignored (one warning) and decoded again,
  even with its digest recomputed; a split file with a key given twice is refused.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from fault_bundles import one_line, tree_digest

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ('A <script>alert(1)</script> <img src=x onerror=alert(2)> | cell [CLICK](javascript:alert(3)) '
           '```{raw} html')


def _nothing_written(path: Path, before: str) -> str | None:
    return None if tree_digest(path) == before else f"{path} changed"


def run_command_limits(cat, tmp: Path, cli: Callable) -> None:
    from flcore.cpus import available_cpus

    store = tmp / "limits-store"
    too_many = str(available_cpus() + 1)
    cases = [
        ("--workers above the CPUs (sweep --plan)", ["sweep", "--method", "fedavg", "--plan", "--workers", too_many]),
        ("--workers above the CPUs (reproduce)", ["reproduce", "fedsam-table-2", "--workers", too_many]),
        ("--workers above the CPUs (tune --plan)", ["tune", "--plan", "--workers", too_many]),
        ("--max-rounds above the cap (reproduce --plan)", ["reproduce", "fedsam-table-2", "--plan",
                                                           "--max-rounds", "99999999"]),
        ("--max-rounds above the cap (claims --plan)", ["claims", "--plan", "--max-rounds", "99999999"]),
    ]
    for case, argv in cases:
        before = tree_digest(store)
        rc, _, err = cli([*argv, "--store", str(store)])
        problem = one_line(rc, err) or _nothing_written(store, before)
        cat.record(case, problem is None, problem or "")
    for value in ("abc", "0", "-3", "1e3"):
        os.environ["FLCORE_MAX_ROUNDS"] = value
        try:
            for argv in (["reproduce", "fedsam-table-2", "--plan"], ["claims", "--scale", "smoke", "--plan"]):
                rc, _, err = cli([*argv, "--store", str(store)])
                problem = one_line(rc, err)
                if problem is None and "$FLCORE_MAX_ROUNDS" not in err:
                    problem = f"the line does not name the variable: {err.strip()[:200]}"
                cat.record(f"$FLCORE_MAX_ROUNDS={value} ({argv[0]} --plan)", problem is None, problem or "")
        finally:
            del os.environ["FLCORE_MAX_ROUNDS"]
    a_file = tmp / "a-file"
    a_file.write_text("not a store")
    for argv in (["claims", "--scale", "smoke", "--decide", "fedsam-sam-improves-fedavg"], ["book", "--scale", "smoke"],
                 ["reproduce", "fedsam-table-2", "--scale", "smoke"], ["tune", "--plan"], ["run"], ["sweep"],
                 ["bundle", "import", str(tmp / "none.tar")], ["runs"]):
        rc, _, err = cli([*argv, "--store", str(a_file)])
        problem = one_line(rc, err) or (None if a_file.read_text() == "not a store" else "the file changed")
        cat.record(f"--store naming a file ({' '.join(argv[:2])})", problem is None, problem or "")
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "flcore", "methods"], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=120, cwd=ROOT)
    finally:
        os.close(write_end)
    ok = proc.returncode == 141 and proc.stderr == ""
    cat.record("a closed standard output (flcore methods | head)", ok, f"exit {proc.returncode}: {proc.stderr[-200:]}")


def _book_root(tmp: Path, name: str) -> Path:
    root = tmp / name
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text((ROOT / "_toc.yml").read_text())
    (root / "_config.yml").write_text((ROOT / "_config.yml").read_text())
    return root


def run_book_files(cat, tmp: Path, cli: Callable) -> None:
    configs = [("_config.yml not YAML", "repository: [\n"), ("_config.yml a list", "- a\n- b\n"),
               ("_config.yml naming no GitHub repository", "repository:\n  url: ftp://example.org/x\n"),
               ("_config.yml with a URL that breaks out",
                "repository:\n  url: 'https://github.com/a/b) [x](javascript:1'\n")]
    tocs = [("_toc.yml without the papers' part", "format: jb-book\nroot: book/intro\nparts:\n  - caption: Overview\n"),
            ("_toc.yml with a user's chapter in the papers' part",
             (ROOT / "_toc.yml").read_text().replace("      - file: book/fedsam/index\n",
                                                     "      - file: book/fedsam/index\n      - file: book/my-notes\n"))]
    for number, (case, text) in enumerate(configs + tocs):
        root = _book_root(tmp, f"book-{number}")
        (root / ("_config.yml" if case.startswith("_config") else "_toc.yml")).write_text(text)
        before = tree_digest(root)
        rc, _, err = cli(["book", "--scale", "smoke", "--root", str(root), "--store", str(root / "store")])
        problem = one_line(rc, err) or _nothing_written(root, before)
        cat.record(case, problem is None, problem or "")
    root = _book_root(tmp, "book-link")
    outside = tmp / "outside-toc.yml"
    outside.write_text((root / "_toc.yml").read_text().replace("      - file: book/fedsam/index\n", ""))
    (root / "_toc.yml").unlink()
    (root / "_toc.yml").symlink_to(outside)
    before = tree_digest(outside)
    rc, _, err = cli(["book", "--scale", "smoke", "--root", str(root), "--store", str(root / "store")])
    problem = one_line(rc, err) or _nothing_written(outside, before)
    cat.record("_toc.yml a link to a file outside the repository", problem is None, problem or "")


def run_paper_text(cat, tmp: Path, cli: Callable) -> None:
    import markdown_it

    from flcore.report.page import claims_markdown, later_claims_markdown
    from flcore.reproduction.papers import register_paper

    def render(markdown: str) -> str:
        return markdown_it.MarkdownIt("commonmark").enable("table").render(markdown)

    def inert(html: str) -> str | None:
        for tag in ("<script", "<img", 'href="javascript', "<iframe"):
            if tag in html:
                return f"{tag} reached the page"
        return None

    row = {"cells": {"better": {"algorithm": "A"}, "worse": {"algorithm": "B"}}, "published": {"gap": 1.0},
           "seeds": [0, 1, 2], "gap": 0.5, "sd": 0.1, "sd_from": "paired seeds", "threshold": 0.2, "mde": 0.3,
           "verdict": "holds", "reason": None, "margin": 1.0}
    claim = {"id": "x-hostile", "text": HOSTILE, "artifacts": ["fedsam-table-2"], "verdict": "holds", "reason": None,
             "units": "points", "summary": "1 of 1", "comparisons": [row]}
    html = render(claims_markdown([claim], "small", explain=False))
    body = html.split("<tbody>", 1)[-1]
    problem = inert(html) or (None if all(r.count("<td") == 6 for r in body.split("</tr>")[:-1])
                              else "the text's | added a table cell")
    cat.record("a claim text with markup and a |", problem is None, problem or "")
    for field in ("citation", "quote", "url"):
        source = {"citation": "Someone", "quote": "B beats A", "url": "https://example.org/paper"}
        source[field] = "https://example.com/x) [CLICK](javascript:alert(4)" if field == "url" else HOSTILE
        later = {**claim, "text": "B beats A", "later_source": source, "against": None, "paper": "fedsam"}
        html = render(later_claims_markdown([later], "small"))
        problem = inert(html) or ('a malformed URL became a link' if 'href="https://example.com/x)' in html else None)
        cat.record(f"a later claim's {field} with markup", problem is None, problem or "")
    (tmp / "paper-x").mkdir(exist_ok=True)
    (tmp / "paper-x" / "paper.yaml").write_text("title: T\n")
    for paper_id in ("../../../escape12", "a/b", "UPPER", ""):
        try:
            register_paper(paper_id, "X", tmp / "paper-x")
            ok, detail = False, "registered"
        except ValueError as exc:
            ok, detail = "must match" in str(exc), str(exc)[:200]
        cat.record(f"paper id {paper_id!r}", ok, detail)
    packages = tmp / "external-papers"
    cases = {"raises": "raise RuntimeError('boom')\n", "syntax": "def broken(:\n",
             "collides": ("from pathlib import Path\nfrom flcore.reproduction.papers import register_paper\n"
                          "(Path(__file__).parent / 'paper.yaml').write_text('title: T\\n')\n"
                          "register_paper('fedsam', 'Again', Path(__file__).parent)\n"),
             "missing_package": None}
    for name, code in cases.items():
        if code is not None:
            (packages / name).mkdir(parents=True, exist_ok=True)
            (packages / name / "__init__.py").write_text(code)
        env = {**os.environ, "PYTHONPATH": f"{packages}{os.pathsep}{ROOT}", "FLCORE_PAPERS": name}
        helped = subprocess.run([sys.executable, "-m", "flcore", "--help"], capture_output=True, text=True,
                                env=env, timeout=300, cwd=tmp)
        done = subprocess.run([sys.executable, "-m", "flcore", "runs", "--store", str(tmp / "ext-store")],
                              capture_output=True, text=True, env=env, timeout=300, cwd=tmp)
        problem = one_line(done.returncode, done.stderr) or (None if helped.returncode == 0 else "--help failed")
        what = {"raises": "raises on import", "syntax": "has a syntax error",
                "collides": "registers a built-in paper's id", "missing_package": "is not installed"}[name]
        cat.record(f"$FLCORE_PAPERS naming a package that {what}", problem is None, problem or "")


GUIDE = ROOT / "book" / "reference" / "adding-a-paper.md"
#: (what is wrong, file, old text, new text; None: the file replaced by new): the toy paper's edits.
PAPER_FILE_CASES = [
    ("a missing title", "paper.yaml", 'title: "A toy paper"\n', ""),
    ("an inventory that is a mapping", "inventory.yaml", "- id: toy-table-1\n", "toy-table-1:\n"),
    ("an artifact id without its kind", "inventory.yaml", "- id: toy-table-1", "- id: toy-1"),
    ("claims.yaml without claims:", "claims.yaml", "claims:\n", "claimz:\n"),
    ("a comparison whose better: is a string", "claims.yaml", "- better: {algorithm: FedSAM, alpha: 0.0}",
     "- better: FedSAM"),
    ("a built-in claim's id", "claims.yaml", "id: toy-fedsam-beats-fedavg", "id: fedsam-sam-improves-fedavg"),
    ("a misspelt key", "claims.yaml", "    metric: accuracy", "    metrc: accuracy"),
    ("a published file that is a path", "published/sources.yaml", "file: toy-table-1.csv", "file: ../../x.csv"),
    ("a YAML alias bomb", "paper.yaml", "order: 6", "order: 6\na: &a [x, x, x, x, x, x, x, x, x]\n"
     "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
     "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"),
    ("a claims file over the bound", "claims.yaml", None, "# " + "x" * 2_100_000 + "\n"),
]


def _guide_toy(root: Path) -> Path:
    """The toy paper's package as the guide writes it, in ``root/toy``."""
    import re

    block = re.compile(r"```\{code-block\} \w+\n:caption: `papers/toy/(?P<name>[^`]+)`\n\n(?P<body>.*?)```", re.S)
    for match in block.finditer(GUIDE.read_text()):
        (root / "toy" / match["name"]).parent.mkdir(parents=True, exist_ok=True)
        (root / "toy" / match["name"]).write_text(match["body"])
    return root / "toy"


def run_paper_files(cat, tmp: Path, cli: Callable) -> None:
    cases = [*PAPER_FILE_CASES, ("claims.yaml a link out of the package", "claims.yaml", None, "link")]
    for number, (what, name, old, new) in enumerate(cases):
        root = tmp / f"paper-files-{number}"
        path = _guide_toy(root) / name
        if new == "link":
            (root / "elsewhere.yaml").write_text(path.read_text())
            path.unlink()
            path.symlink_to(root / "elsewhere.yaml")
        elif old is None:
            path.write_text(new)
        else:
            path.write_text(path.read_text().replace(old, new, 1))
        env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{ROOT}", "FLCORE_PAPERS": "toy"}
        done = subprocess.run([sys.executable, "-m", "flcore", "runs", "--store", str(root / "store")],
                              capture_output=True, text=True, env=env, timeout=300, cwd=root)
        problem = one_line(done.returncode, done.stderr)
        if problem is None and f"toy: {name}" not in done.stderr:
            problem = f"the line does not name toy: {name}: {done.stderr.strip()[:200]}"
        if problem is None and (root / "store").exists():
            problem = "the store was written"
        cat.record(f"a paper package with {what}", problem is None, problem or "")


def run_verdict_caches(cat, tmp: Path, cli: Callable) -> None:
    from flcore.api import run_experiment
    from flcore.config import resolve_config
    from flcore.data import DatasetError, read_split_file
    from flcore.store import RunStore

    store = tmp / "cache-store"
    cfg = resolve_config(scale="smoke", device="cpu", rounds=2, eval_every=1, eval_last=1)
    run_experiment(cfg, store=store)
    run = RunStore(store).run(cfg.run_id())
    run.save_analysis("fedgf", {"key": {"flatness_discrepancy": 0.5}})
    path = run.path / "analysis" / "fedgf.json"
    for case, text in [("made-up numbers", json.dumps({"key": {"flatness_discrepancy": 123.0}})),
                       ("a key given twice", '{"key": 1, "key": 2}'), ("not JSON", "{"),
                       ("a list", "[]")]:
        run.save_analysis("fedgf", {"key": {"flatness_discrepancy": 0.5}})
        path.write_text(text)
        rc, out, _ = cli(["runs", "--store", str(store), "--verify"])
        ok = run.load_analysis("fedgf") is None and rc == 3 and "analysis/fedgf.json" in out
        cat.record(f"an analysis cache edited: {case}", ok, f"exit {rc}, loaded {run.load_analysis('fedgf')!r}")
    run.save_analysis("fedgf", {"key": {"flatness_discrepancy": 0.5}})
    rc, _, _ = cli(["runs", "--store", str(store), "--verify"])
    cat.record("the cache as written passes --verify", rc == 0, f"exit {rc}")
    import warnings

    import numpy as np

    from flcore.data import write_fake_fmnist
    from flcore.data.cache import cache_dir, read_decoded, write_decoded
    from flcore.data.fmnist import load_fmnist

    os.environ["FLCORE_CACHE"] = str(tmp / "decoded-cache")
    try:
        md5s = write_fake_fmnist(tmp / "fmnist", num_train=23, num_test=7, seed=3)
        first = load_fmnist(tmp / "fmnist", checksums=md5s)
        for case, change in [("a missing train_y", lambda a: a.pop("train_y")),
                             ("a label of 200", lambda a: a.__setitem__("train_y", a["train_y"] * 0 + 200)),
                             ("images of another shape", lambda a: a.__setitem__("test_x", a["test_x"][:, :14]))]:
            (path,) = sorted((cache_dir() / "decoded").glob("*.arrays"))
            arrays, sources = read_decoded(path)
            arrays = dict(arrays)
            change(arrays)
            write_decoded(path, arrays, sources)  # its own digest recomputed
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    again = load_fmnist(tmp / "fmnist", checksums=md5s)
                    ok = (np.array_equal(again.train_y.numpy(), first.train_y.numpy())
                          and any("not data" in str(w.message) for w in caught))
                    detail = "loaded the entry" if not ok else ""
                except Exception as exc:  # noqa: BLE001 - an escaped exception is an unhandled case
                    ok, detail = False, f"{type(exc).__name__}: {exc}"[:200]
            cat.record(f"a decoded Fashion-MNIST entry with {case}, its digest recomputed", ok, detail)
    finally:
        del os.environ["FLCORE_CACHE"]
    split = tmp / "dup-key.json"
    split.write_text('{"users": ["a"], "num_samples": [1], "user_data": {"a": {"x": ["img_1_label_1.png"], '
                     '"y": [1]}, "a": {"x": ["img_2_label_2.png"], "y": [2]}}}')
    try:
        read_split_file(split)
        ok, detail = False, "accepted"
    except DatasetError as exc:
        ok, detail = "given twice" in str(exc), str(exc)[:200]
    cat.record("a split file with a key given twice", ok, detail)
