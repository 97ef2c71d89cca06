"""flcore reproduce: a failing notebook fails only its artifact, the summary and exit
code say so, and the manifest tells ``flcore book`` what is stale."""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("papermill")
pytest.importorskip("ipykernel")

from flcore.cli import reproduce as cli_reproduce  # noqa: E402
from flcore.site import manifest as book_manifest  # noqa: E402
from flcore.site import reproduce  # noqa: E402

#: Over 30 s as a whole file (``make test-fast`` leaves it out).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
GOOD, BAD = "fedsam-table-10", "fedsam-table-11"


def _args(root: Path, store: Path, **changes) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    handlers = cli_reproduce.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["reproduce", "--scale", "smoke", "--root", str(root), "--store", str(store)])
    for key, value in changes.items():
        setattr(args, key, value)
    args.handler = handlers["reproduce"]
    return args


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "repo"
    (root / "notebooks" / "fedsam").mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / "fedsam" / f"{GOOD}.ipynb", root / "notebooks" / "fedsam" / f"{GOOD}.ipynb")
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / "fedsam" / f"{BAD}.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("raise RuntimeError('this notebook is broken on purpose')"))
    nbformat.write(nb, root / "notebooks" / "fedsam" / f"{BAD}.ipynb")
    return root


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_notebook_fails_only_its_artifact(tree, tmp_path, capsys, jobs):
    args = _args(tree, tmp_path / "store", artifacts=[BAD, GOOD], jobs=jobs)
    code = args.handler(args)
    out = capsys.readouterr().out
    assert code == cli_reproduce.EXIT_FAILED
    assert "1 ok, 1 failed, 0 skipped" in out and "this notebook is broken on purpose" in out
    assert (tree / "book/artifacts/fedsam" / f"{GOOD}.ipynb").is_file()
    assert (tree / "book/artifacts/fedsam" / f"{BAD}.ipynb").is_file()  # the error is on the page
    manifest = json.loads((tree / "book/_artifacts.json").read_text())["artifacts"]
    assert manifest[GOOD]["status"] == "ok" and manifest[BAD]["status"] == "failed"
    assert manifest[GOOD]["scale"] == "smoke" and manifest[GOOD]["duration_s"] > 0


def test_notebook_jobs_default_to_the_cores_and_never_exceed_the_notebooks(monkeypatch):
    monkeypatch.setattr(reproduce, "available_cpus", lambda: 4)
    assert reproduce.notebook_jobs(None, 10) == 4
    assert reproduce.notebook_jobs(None, 3) == 3
    assert reproduce.notebook_jobs(1, 10) == 1 and reproduce.notebook_jobs(8, 2) == 2


def test_staleness(tree, tmp_path):
    args = _args(tree, tmp_path / "store")
    results = reproduce.reproduce([GOOD, BAD], args, force=False, log=lambda _: None)
    assert results[GOOD]["status"] == "ok"
    results = reproduce.reproduce([GOOD, BAD], args, force=False, log=lambda _: None)
    assert results[GOOD]["status"] == "skipped" and results[BAD]["status"] == "failed"  # failed is stale
    manifest = book_manifest.load_manifest(tree)
    from flcore.reproduction.artifacts import get_artifact

    artifact = get_artifact(GOOD)
    fingerprint = book_manifest.flcore_fingerprint()
    entry = manifest["artifacts"][GOOD]
    assert book_manifest.stale_reason(artifact, entry, tree, "smoke", [0], fingerprint) is None
    assert book_manifest.stale_reason(artifact, entry, tree, "small", [0], fingerprint) == "built at scale smoke"
    assert book_manifest.stale_reason(artifact, entry, tree, "smoke", [0, 1], fingerprint) == "other seeds"
    assert book_manifest.stale_reason(artifact, entry, tree, "smoke", [0], "other") == "flcore changed"
    import nbformat

    path = tree / artifact.notebook_path
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source += "\n\nEdited."
    nbformat.write(nb, path)
    assert book_manifest.stale_reason(artifact, entry, tree, "smoke", [0], fingerprint) == "notebook changed"
    (tree / artifact.book_path).unlink()
    assert book_manifest.stale_reason(artifact, entry, tree, "smoke", [0], fingerprint) == "output missing"


def test_usage_errors(tmp_path, capsys):
    args = _args(tmp_path, tmp_path / "store", artifacts=["no-such-artifact"])
    assert args.handler(args) == cli_reproduce.EXIT_USAGE
    args = _args(tmp_path, tmp_path / "store", artifacts=[])
    assert args.handler(args) == cli_reproduce.EXIT_USAGE
    assert "known:" in capsys.readouterr().err


def test_register_returns_the_handlers():
    parser = argparse.ArgumentParser()
    handlers = cli_reproduce.register(parser.add_subparsers(dest="command"))
    assert set(handlers) == {"reproduce", "book", "claims"}
    args = parser.parse_args(["book", "--scale", "smoke", "--no-reproduce", "--lax"])
    assert args.scale == "smoke" and args.no_reproduce and args.lax


@pytest.mark.parametrize("text, says", [
    ('{"artifacts": [1, 2', "is not JSON"),
    ("[]", "is not a mapping with a mapping of artifacts"),
    ('{"artifacts": ["fedsam-table-2"]}', "is not a mapping with a mapping of artifacts"),
    ('{"artifacts": {"fedsam-table-2": 5, "fedsam-table-1": {"status": "ok", "scale": "smoke"}}}',
     "entry 'fedsam-table-2' is not a mapping"),
    ('{"artifacts": {"fedsam-table-2": {"status": "ok", "built": ["smoke"]}}}', "fedsam-table-2: built is not a dict"),
])
def test_a_corrupt_manifest_is_read_as_never_built_with_one_warning(tmp_path, capsys, text, says):
    from flcore.reproduction.artifacts import get_artifact
    from flcore.site.manifest import MANIFEST, load_manifest, stale_reason

    (tmp_path / MANIFEST).parent.mkdir(parents=True)
    (tmp_path / MANIFEST).write_text(text)
    manifest = load_manifest(tmp_path)
    warning = capsys.readouterr().err.strip().splitlines()
    assert len(warning) == 1 and warning[0].startswith("flcore: warning: book/_artifacts.json") and says in warning[0]
    assert "fedsam-table-2" not in manifest["artifacts"]
    assert stale_reason(get_artifact("fedsam-table-2"), manifest["artifacts"].get("fedsam-table-2"), tmp_path,
                        "smoke", [0], "x") == "never run"
    kept = manifest["artifacts"].get("fedsam-table-1")
    assert kept is None or kept == {"status": "ok", "scale": "smoke"}


def test_a_corrupt_manifest_gives_no_traceback_on_the_command_line(tmp_path):
    import subprocess
    import sys

    root = tmp_path / "repo"
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    shutil.copy(ROOT / "_toc.yml", root / "_toc.yml")
    (root / "book").mkdir()
    (root / "book" / "_artifacts.json").write_text("[]")
    done = subprocess.run([sys.executable, "-m", "flcore", "reproduce", "--list", "--root", str(root)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "stale: never run" in done.stdout
