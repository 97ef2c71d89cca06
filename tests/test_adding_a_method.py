"""The book page "Adding a method" (book/reference/adding-a-method.md), run as written: its
three files (a part declaring one hyper-parameter, a recipe, a test) are written into a
temporary folder outside flcore and its commands run there, so the page cannot go stale."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import book_page_code
import pytest

PAGE = book_page_code.ROOT / "book" / "reference" / "adding-a-method.md"

pytestmark = pytest.mark.slow


def test_the_page_is_in_the_table_of_contents_and_gives_three_files():
    assert "file: book/reference/adding-a-method" in (book_page_code.ROOT / "_toc.yml").read_text()
    blocks = book_page_code.page_blocks(PAGE)
    assert set(blocks) == {"toymethod/shrink.py", "toymethod/__init__.py", "test_toymethod.py", "commands"}


def test_a_toy_method_added_as_the_page_says_is_configured_validated_trained_batched_and_catalogued(tmp_path):
    blocks = book_page_code.page_blocks(PAGE)
    book_page_code.write_files(blocks, tmp_path)
    done = book_page_code.run_commands(blocks["commands"], tmp_path)

    def out(part: str) -> str:
        return next(result.stdout for line, result in done.items() if part in line)

    # listed with its declared default, and the parts and traffic read off what it builds
    listed = next(line for line in out("flcore methods").splitlines() if line.startswith("fedshrink"))
    assert "toy_shrink=0.1" in listed and "P0+C99+S0+L0" in listed and "comm 1/1" in listed
    # a bad value: one line naming the field and the allowed range, exit 2, nothing trained
    refused = (tmp_path / "refused.txt").read_text().strip().splitlines()
    assert refused == ["flcore: error: invalid config field 'toy_shrink': got -1.0; must be >= 0"]
    # trained at the smoke scale, under a run id that includes its hyper-parameter
    summary = dict(line.split(": ", 1) for line in out("--toy-shrink 0.5").splitlines())
    assert summary["status"] == "finished"
    run_dir = summary["run_dir"]
    config = json.loads((tmp_path / run_dir / "config.json").read_text())
    assert config["method"] == "fedshrink" and config["toy_shrink"] == 0.5
    # runs differing only in toy_shrink share one batch (it is declared per row)
    assert "one batch: True" in out("group_key")
    # its own test passes: the hand computation, and no shrink equals FedAvg
    assert "2 passed" in out("pytest")
    # the catalog shows it, its hyper-parameter with its default
    catalog = out("method_catalog")
    assert "## `fedshrink`" in catalog and "`toy_shrink` = `0.1`" in catalog


def test_without_the_variable_flcore_knows_no_such_method_and_a_broken_module_is_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(book_page_code.ROOT)}
    plain = subprocess.run([sys.executable, "-m", "flcore", "run", "--method", "fedshrink", "--scale", "smoke"],
                           env=env, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert plain.returncode == 2 and "allowed values" in plain.stderr
    broken = subprocess.run([sys.executable, "-m", "flcore", "methods"], env={**env, "FLCORE_METHODS": "no_such_toy"},
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert broken.returncode == 2 and len(broken.stderr.strip().splitlines()) == 1
    assert "$FLCORE_METHODS names the module 'no_such_toy'" in broken.stderr
