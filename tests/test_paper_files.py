"""A paper's data files are checked against their schema when the paper registers
(flcore.reproduction.paper_files): each hostile or careless file below is one line naming the
folder, the file and the key, before anything reads it; flcore's own papers pass the same
check; through ``$FLCORE_PAPERS`` the line reaches the command line, exit 2, nothing written."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from flcore.reproduction.claim_registry import all_claims
from flcore.reproduction.inventory import inventory
from flcore.reproduction.paper_files import check_paper_files
from flcore.reproduction.paper_registry import PAPERS
from flcore.reproduction.paper_yaml import MAX_FILE_BYTES, PaperFileError, read_yaml

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "reference" / "adding-a-paper.md"
BLOCK = re.compile(r"```\{code-block\} \w+\n:caption: `papers/toy/(?P<name>[^`]+)`\n\n(?P<body>.*?)```", re.S)


def _toy(root: Path) -> Path:
    """The toy paper's package as the page "Adding a paper" writes it, in ``root/toy``."""
    folder = root / "toy"
    for match in BLOCK.finditer(PAGE.read_text()):
        (folder / match["name"]).parent.mkdir(parents=True, exist_ok=True)
        (folder / match["name"]).write_text(match["body"])
    return folder


def _check(folder: Path) -> None:
    check_paper_files("toy", folder, {item.id for item in inventory()}, {claim.id for claim in all_claims()},
                      list(PAPERS))


def test_flcores_own_papers_pass_the_check_against_each_other():
    for paper_id, paper in PAPERS.items():
        check_paper_files(paper_id, paper.folder, {i.id for i in inventory() if i.paper != paper_id},
                          {c.id for c in all_claims() if c.paper != paper_id}, [p for p in PAPERS if p != paper_id])


def test_the_toy_paper_of_the_guide_passes(tmp_path):
    _check(_toy(tmp_path))


def _edit(folder: Path, name: str, old: str, new: str) -> None:
    path = folder / name
    assert old in path.read_text(), (name, old)
    path.write_text(path.read_text().replace(old, new, 1))


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b]\n"

CASES = {  # name: (file, old text, new text, the line says)
    "missing title": ("paper.yaml", 'title: "A toy paper"\n', "", "toy: paper.yaml: misses title"),
    "empty caption": ("inventory.yaml", "caption: Test accuracy of FedAvg and FedSAM on CIFAR-10, alpha = 0",
                      "caption: ''", "toy: inventory.yaml: toy-table-1.caption: must be a non-empty string"),
    "inventory a mapping": ("inventory.yaml", "- id: toy-table-1\n", "toy-table-1:\n",
                            "toy: inventory.yaml: must be a non-empty list of tables and figures, got dict"),
    "id without its kind": ("inventory.yaml", "- id: toy-table-1", "- id: toy-1",
                            "toy: inventory.yaml: entry 0.id: 'toy-1' must read toy-table-N or toy-fig-N"),
    "kind against the id": ("inventory.yaml", "kind: table", "kind: figure",
                            "toy: inventory.yaml: toy-table-1.kind: is figure, but the id says table"),
    "no claims key": ("claims.yaml", "claims:\n", "claimz:\n", "toy: claims.yaml: misses claims"),
    "better a string": ("claims.yaml", "- better: {algorithm: FedSAM, alpha: 0.0}", "- better: FedSAM",
                        "toy: claims.yaml: toy-fedsam-beats-fedavg.comparisons[0].better: must be a mapping"),
    "a built-in claim id": ("claims.yaml", "id: toy-fedsam-beats-fedavg", "id: fedsam-sam-improves-fedavg",
                            "toy: claims.yaml: fedsam-sam-improves-fedavg: this id is used twice"),
    "a misspelt key": ("claims.yaml", "    metric: accuracy", "    metrc: accuracy",
                       "toy: claims.yaml: claims[0]: unknown key 'metrc'"),
    "another paper's artifact": ("claims.yaml", "artifacts: [toy-table-1]", "artifacts: [fedsam-table-2]",
                                 "toy: claims.yaml: toy-fedsam-beats-fedavg.artifacts: 'fedsam-table-2'"),
    "a direction": ("claims.yaml", "direction: higher", "direction: up",
                    "toy: claims.yaml: claims.yaml: claim toy-fedsam-beats-fedavg: direction must be higher"),
    "a path as the published file": ("published/sources.yaml", "file: toy-table-1.csv", "file: ../../etc/passwd",
                                     "toy: published/sources.yaml: toy-table-1.file: must be a file name"),
    "an alias bomb": ("paper.yaml", "order: 6", f"order: 6\n{BOMB}",
                      "toy: paper.yaml: line 3: YAML anchors and aliases (&name, *name) are refused"),
    "invalid YAML": ("claims.yaml", "claims:\n", "claims: [\n", "toy: claims.yaml: not valid YAML"),
    "builds on an unknown paper": ("paper.yaml", "order: 6", "order: 6\nbuilds_on: [fedsum]",
                                   "toy: paper.yaml: builds_on: must be a list of papers registered before it"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_wrong_file_is_one_line_naming_the_file_and_the_key(tmp_path, case):
    assert "fedsam-sam-improves-fedavg" in {c.id for c in all_claims()}
    name, old, new, says = CASES[case]
    folder = _toy(tmp_path)
    _edit(folder, name, old, new)
    with pytest.raises(PaperFileError) as raised:
        _check(folder)
    line = str(raised.value)
    assert "\n" not in line and line.startswith(says), line


def test_an_oversized_or_linked_file_is_refused_before_it_is_parsed(tmp_path):
    folder = _toy(tmp_path)
    big = tmp_path / "big.yaml"
    big.write_text("x: " + "y" * MAX_FILE_BYTES)
    with pytest.raises(PaperFileError, match=r"^big.yaml: over 2,000,000 bytes$"):
        read_yaml(big)
    (folder / "claims.yaml").unlink()
    (folder / "claims.yaml").symlink_to(big)
    with pytest.raises(PaperFileError, match=r"^toy: claims.yaml: not a regular file$"):
        _check(folder)


def test_through_flcore_papers_the_line_reaches_the_command_line_and_nothing_is_written(tmp_path):
    folder = _toy(tmp_path)
    _edit(folder, "claims.yaml", "- better: {algorithm: FedSAM, alpha: 0.0}", "- better: FedSAM")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}", "FLCORE_PAPERS": "toy"}
    done = subprocess.run([sys.executable, "-m", "flcore", "runs", "--store", str(tmp_path / "store")],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("flcore: error: $FLCORE_PAPERS names the package 'toy'")
    assert "toy: claims.yaml: toy-fedsam-beats-fedavg.comparisons[0].better: must be a mapping" in lines[0]
    assert not (tmp_path / "store").exists()
