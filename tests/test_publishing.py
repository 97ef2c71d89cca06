"""Publishing the book: one repository URL, the Colab first cell, the Pages workflow.

- The URL lives in ``_config.yml``; the notebooks' install cell, README and the book's
  introduction carry copies that must agree (``python -m flcore.report.repository``).
- The notebooks' first cell, run in a fresh virtual environment against a local clone
  URL, installs flcore, and a notebook then runs at the smoke scale with that install:
  what a Colab user's first cell does.  The environment sees this environment's
  third-party packages (torch is 5 GB: no download in a test) but not flcore itself.
- The GitHub Actions workflow builds with the README's main command and deploys to Pages.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest
import yaml

from flcore.report.repository import (
    URL_PATTERN,
    build_url,
    configured_url,
    install_requirement,
    out_of_sync,
    remote_url,
)

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    """The commands of README's "Set up and go" block."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Set up and go", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_readme_has_two_set_up_commands():
    assert readme_commands() == ["make main", "make test"]


def test_workflow_builds_with_the_readme_main_command_and_deploys_to_pages():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers["push"]["branches"] == ["main"]
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    # the book is built by the README's main command; the only other command is the
    # results-bundle import, which runs only when the workflow is given a bundle
    runs = {step["name"]: step for step in build["steps"] if "run" in step}
    assert list(runs) == ["Import the results bundle", "Build the book"]
    assert runs["Build the book"]["run"].strip() == readme_commands()[0]
    assert runs["Import the results bundle"]["if"] == "${{ inputs.bundle != '' }}"
    uses = {step.get("uses", "").split("@")[0]: step for step in build["steps"]}
    assert uses["actions/upload-pages-artifact"]["with"]["path"] == "_build/html"
    assert uses["actions/cache"]["with"]["path"] == "runs"  # the run store survives between builds
    assert deploy["needs"] == "build"
    assert any(step.get("uses", "").startswith("actions/deploy-pages") for step in deploy["steps"])
    assert workflow["permissions"]["pages"] == "write"


def _copied_url() -> str:
    """The one URL the README and every notebook's install cell hold."""
    found = set(URL_PATTERN.findall((ROOT / "README.md").read_text()))
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        first = next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
        found |= set(URL_PATTERN.findall(first.source))
    assert len(found) == 1, found
    return found.pop()


def test_repository_url_is_set_once_and_copied_everywhere():
    url = _copied_url()
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        first = next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
        assert install_requirement(url) in first.source, path
    if build_url(ROOT) is not None:  # a URL the build knows (the config's or the remote's) is the one copied
        assert out_of_sync(ROOT) == [], "run: python -m flcore.report.repository --write"


def test_the_config_names_no_repository_the_checkout_does_not_back():
    """_config.yml's URL is empty (the build takes the git remote, or hides the buttons) or
    the checkout's own remote: never a placeholder a Colab button would open in vain."""
    assert configured_url(ROOT) in (None, remote_url(ROOT))


def test_changing_the_url_in_config_rewrites_every_copy(tmp_path):
    for name in ("README.md", "_config.yml"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    (tmp_path / "book").mkdir()
    shutil.copy(ROOT / "book" / "intro.md", tmp_path / "book" / "intro.md")
    # a notebook that links to another repository (a paper's official code) keeps that link
    other = tmp_path / "notebooks" / "fedsam" / "fedsam-table-2.py"
    other.write_text(other.read_text() + "\n# The official code: https://github.com/debcaldarola/fedsam\n")
    config = yaml.safe_load((tmp_path / "_config.yml").read_text())
    config["repository"]["url"] = "https://github.com/lab/fork"
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    stale = out_of_sync(tmp_path)
    notebooks = len(list((tmp_path / "notebooks").rglob("*.py"))) + len(list((tmp_path / "notebooks").rglob("*.ipynb")))
    holds_a_copy = [name for name in ("README.md", "book/intro.md")
                    if URL_PATTERN.search((tmp_path / name).read_text())]
    assert len(stale) == notebooks + len(holds_a_copy) and "book/intro.md" in holds_a_copy
    out_of_sync(tmp_path, write=True)
    assert out_of_sync(tmp_path) == []
    assert "flcore @ git+https://github.com/lab/fork" in (tmp_path / "notebooks/fedsam/fedsam-table-2.py").read_text()
    assert "https://github.com/debcaldarola/fedsam" in other.read_text()
    assert "[flcore](https://github.com/lab/fork)" in (tmp_path / "book" / "intro.md").read_text()


def _clone_of_the_working_tree(tmp_path: Path) -> Path:
    """A git repository holding the working tree's files (committed or not)."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    repo = tmp_path / "repo"
    for name in files:
        if (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run(git + ["init", "-q"], cwd=repo, check=True)
    subprocess.run(git + ["add", "-A"], cwd=repo, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "snapshot"], cwd=repo, check=True)
    return repo


def _fresh_venv_with_third_party_packages(tmp_path: Path) -> Path:
    """A new virtual environment that sees this one's packages except flcore."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    farm = tmp_path / "third-party"
    farm.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if "flcore" not in entry.name.lower() and not entry.name.endswith(".pth"):
            (farm / entry.name).symlink_to(entry)
    (site / "third_party.pth").write_text(str(farm) + "\n")
    return python


@pytest.mark.slow
@pytest.mark.extended
def test_colab_first_cell_installs_from_a_clone_and_runs_a_notebook(tmp_path):
    repo = _clone_of_the_working_tree(tmp_path)
    python = _fresh_venv_with_third_party_packages(tmp_path)
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    assert subprocess.run([str(python), "-c", "import flcore"], cwd=tmp_path, env=clean,
                          capture_output=True).returncode != 0

    notebook = repo / "notebooks" / "fedsam" / "fedsam-fig-11.ipynb"
    first = next(c for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code").source
    cell = first.replace(_copied_url(), f"file://{repo}")  # the clone stands in for the public URL
    assert f"git+file://{repo}" in cell
    # pip as Colab has it, offline: the build uses the installed setuptools, nothing is fetched
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "PYTHONNOUSERSITE": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([str(python), "-c", cell], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    where = subprocess.run([str(python), "-c", "import flcore; print(flcore.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert str(tmp_path / "venv") in where and str(ROOT) not in where

    work = tmp_path / "colab"
    work.mkdir()
    env["FLCORE_STORE"] = str(work / "runs")
    executed = subprocess.run([str(python), "-m", "papermill", str(notebook), str(work / "out.ipynb"), "-p", "scale",
                               "smoke", "--cwd", str(work), "-k", "python3"], env=env, capture_output=True,
                              text=True, timeout=900)
    assert executed.returncode == 0, executed.stdout[-3000:] + executed.stderr[-3000:]
    out = nbformat.read(work / "out.ipynb", as_version=4)
    assert any(o.get("output_type") == "display_data" for c in out.cells if c.cell_type == "code"
               for o in c.get("outputs", []))
    assert (work / "runs").is_dir() and any((work / "runs").iterdir())


def _import_step() -> tuple[dict, str]:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
    triggers = workflow.get("on", workflow.get(True))
    step = next(s for s in workflow["jobs"]["build"]["steps"] if s.get("name") == "Import the results bundle")
    return triggers["workflow_dispatch"]["inputs"]["bundle"], step


def test_workflow_imports_a_bundle_given_as_a_path_and_refuses_other_schemes(tmp_path):
    """The import step's script, run as the runner would (``make venv`` a no-op here and
    ``.venv/bin/flcore`` this checkout's CLI): a path in the repository is imported into
    ``runs``; a non-https URL and a bundle that does not check out stop the build (exit 2)."""
    from flcore.store.bundle import export_bundle

    bundle_input, step = _import_step()
    assert bundle_input["required"] is False and bundle_input["default"] == ""
    assert step["env"]["BUNDLE"] == "${{ inputs.bundle }}"  # never spliced into the script's text
    build = next(s for s in yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())["jobs"]
                 ["build"]["steps"] if s.get("name") == "Build the book")
    assert "--prefer-scale paper" in build["env"]["BOOK_FLAGS"]
    assert "$(BOOK_FLAGS)" in (ROOT / "Makefile").read_text()
    repo = tmp_path / "repo"
    (repo / ".venv" / "bin").mkdir(parents=True)
    flcore = repo / ".venv" / "bin" / "flcore"
    flcore.write_text(f"#!/bin/sh\nexec {sys.executable} -m flcore \"$@\"\n")
    flcore.chmod(0o755)
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "make").write_text("#!/bin/sh\nexit 0\n")
    (fake_bin / "make").chmod(0o755)
    export_bundle([], repo / "results.tar", scale="paper", device="NVIDIA H100 80GB HBM3")

    def step_with(bundle: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "BUNDLE": bundle, "RUNNER_TEMP": str(tmp_path), "PYTHONPATH": str(ROOT),
               "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}"}
        return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=env, capture_output=True, text=True,
                              timeout=120)

    done = step_with("results.tar")
    assert done.returncode == 0, done.stderr
    assert "imported 0 run(s) into runs" in done.stdout
    refused = step_with("ftp://example.org/results.tar")
    assert refused.returncode == 2 and "only https://" in refused.stderr
    (repo / "bad.tar").write_bytes(b"not a tar archive")
    bad = step_with("bad.tar")
    assert bad.returncode == 2 and "not an uncompressed tar archive" in bad.stderr
