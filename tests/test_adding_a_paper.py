"""The book page "Adding a paper" (book/reference/adding-a-paper.md), run as
written: its files are written into a temporary folder and its commands run there, so the
page cannot go stale.  The toy paper must reach the registry, the command line's choices,
the executed page, the claims and the book's table of contents without an edit outside
its folder."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import book_page_code
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "reference" / "adding-a-paper.md"

pytestmark = pytest.mark.slow


def page_blocks() -> dict[str, str]:
    return book_page_code.page_blocks(PAGE)


def test_the_page_is_in_the_table_of_contents():
    assert "file: book/reference/adding-a-paper" in (ROOT / "_toc.yml").read_text()


def test_the_page_gives_every_file_of_the_skeleton_and_its_commands():
    blocks = page_blocks()
    files = {name for name in blocks if name != "commands"}
    assert files == {"papers/toy/__init__.py", "papers/toy/paper.yaml", "papers/toy/inventory.yaml",
                     "papers/toy/claims.yaml", "papers/toy/runs.py", "papers/toy/published/toy-table-1.csv",
                     "papers/toy/published/sources.yaml", "notebooks/toy/toy-table-1.py"}
    assert blocks["commands"].strip()


def test_a_toy_paper_added_as_the_page_says_builds_its_page(tmp_path):
    book_page_code.write_files(page_blocks(), tmp_path)
    (tmp_path / "book").mkdir()
    shutil.copy(ROOT / "_toc.yml", tmp_path / "_toc.yml")

    done = book_page_code.run_commands(page_blocks()["commands"], tmp_path)
    listing = next(r.stdout for line, r in done.items() if "--list" in line)
    claims = next(r.stdout for line, r in done.items() if line.startswith("flcore claims"))

    # the registry lists the artifact
    assert re.search(r"^toy-table-1 +regenerated", listing, re.M), listing
    # the executed notebook: no error, its table numbered, the claim's verdict shown
    executed = json.loads((tmp_path / "book" / "artifacts" / "toy" / "toy-table-1.ipynb").read_text())
    outputs = [o for c in executed["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    shown = json.dumps(outputs)
    assert "**Table 1.** Test accuracy (%)" in shown
    assert "FedSAM beats FedAvg by 5 points" in shown
    assert "The smoke scale trains for a handful of rounds" in shown  # page.findings at smoke
    # the claim is evaluated from the runs the page trained: a verdict, not "no runs"
    assert "toy-fedsam-beats-fedavg" in claims and "1 the papers' own claims at the smoke scale" in claims
    # the command line's choices come from the registry
    assert "toy" in subprocess.run([sys.executable, "-m", "flcore", "claims", "--help"], capture_output=True,
                                   text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": f"{tmp_path / 'papers'}"
                                   f"{os.pathsep}{ROOT}", "FLCORE_PAPERS": "toy"}).stdout
    # the table of contents and the landing page are generated with the paper
    toc = yaml.safe_load((tmp_path / "_toc.yml").read_text())
    papers = next(part for part in toc["parts"] if part["caption"] == "The papers")
    toy = papers["chapters"][-1]
    assert toy == {"file": "book/toy/index", "sections": [{"file": "book/artifacts/toy/toy-table-1"}]}
    assert [c["file"] for c in papers["chapters"][:-1]] == [f"book/{p}/index" for p in
                                                              ("fedsam", "fedgloss", "fedgf", "fedlesam", "fedima")]
    landing = (tmp_path / "book" / "toy" / "index.md").read_text()
    assert landing.startswith("# Toy") and "Does FedSAM beat FedAvg" in landing


SWITCH = 'from flcore.reproduction.stand_in import register_stand_in\nregister_stand_in("toy", "smoke", "fmnist")\n'
#: Run in a process of its own with the toy paper registered: its runs and its page's words
#: at the smoke scale, and one of its runs trained on Fashion-MNIST files written here.
SWITCHED = r"""
import json, sys
from flcore.data import write_fake_fmnist
from flcore.data.checksums import expected_checksums
from flcore.report.page import Page, scale_banner
from flcore.reproduction.artifacts import get_artifact
from flcore.reproduction.runner import ensure_runs

specs = get_artifact("toy-table-1").runs("smoke", [0])
banner = scale_banner("smoke", specs, paper_specs=get_artifact("toy-table-1").runs("paper", [0]))
page = Page("toy-table-1", scale="smoke", seeds=[0])
md5s = write_fake_fmnist(sys.argv[1] + "/data", num_train=200, num_test=40, seed=1, layout="idx")
with expected_checksums("fmnist", md5s):
    frame = ensure_runs(specs[:1], store=sys.argv[1] + "/runs", device="cpu", workers=1,
                        data_root=sys.argv[1] + "/data")
print(json.dumps({"datasets": sorted({s.resolve().dataset for s in specs}),
                  "models": sorted({s.resolve().model for s in specs}), "banner": banner,
                  "caption": page.stand_in.data_name("CIFAR-10"), "status": list(frame["status"])}))
"""


def test_one_line_switches_the_toy_papers_stand_in_and_its_page_says_so(tmp_path):
    import json

    for name, body in page_blocks().items():
        if name.startswith("papers/"):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(body)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path / 'papers'}{os.pathsep}{ROOT}", "FLCORE_PAPERS": "toy",
           "OMP_NUM_THREADS": "1"}

    def switched() -> dict:
        done = subprocess.run([sys.executable, "-c", SWITCHED, str(tmp_path)], env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    before = switched()
    assert before["datasets"] == ["mnist1d"] and before["models"] == ["mnist1d_cnn"]
    assert before["caption"] == "MNIST-1D (smoke scale, standing in for CIFAR-10)"
    init = tmp_path / "papers" / "toy" / "__init__.py"
    init.write_text(init.read_text().replace("register_paper(", SWITCH + "register_paper(", 1))
    after = switched()
    assert after["datasets"] == ["fmnist"] and after["models"] == ["fmnist_cnn"]
    assert after["caption"] == "Fashion-MNIST (smoke scale, standing in for CIFAR-10)"
    assert "**Fashion-MNIST** with the Fashion-MNIST CNN stands in for the paper's CIFAR-10" in after["banner"]
    assert after["status"] == ["finished"]
