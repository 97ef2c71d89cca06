"""Run identity does not move when the configuration is reorganised.

``records/run_identities.json.gz`` holds the canonical config and run id of every run the
smoke and small books planned, and of every method's defaults at each scale, recorded
before the method hyper-parameters moved from flat fields to the parts that declare them.
Each must resolve again to the same canonical config and run id; the book's current plan
must name runs whose ids the current code computes from those same configs.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from flcore.algorithms import METHOD_NAMES
from flcore.config import SCALES, resolve_config, resolve_stored_config

RECORDED = json.loads(gzip.decompress((Path(__file__).parent / "records" / "run_identities.json.gz").read_bytes()))


def test_the_record_covers_both_books_and_every_method_at_every_scale():
    scales = {row["config"]["scale"] for row in RECORDED}
    recorded = {(row["config"]["method"], row["config"]["scale"]) for row in RECORDED}
    assert len(RECORDED) > 1000 and scales == set(SCALES)
    assert {("fedavg", s) for s in SCALES} <= recorded and ("fedgloss-sam", "small") in recorded


@pytest.mark.parametrize("chunk", range(8))
def test_every_recorded_run_keeps_its_canonical_config_and_id(chunk):
    for row in RECORDED[chunk::8]:
        config = resolve_stored_config(row["config"])
        assert json.loads(json.dumps(config.canonical())) == row["config"], row["run_id"]
        assert config.run_id() == row["run_id"]


@pytest.mark.parametrize("scale", SCALES)
def test_every_methods_defaults_keep_their_id(scale):
    recorded = {row["run_id"] for row in RECORDED}
    methods = {row["config"]["method"] for row in RECORDED}  # a method added since has no record
    moved = [m for m in METHOD_NAMES if m in methods and resolve_config(scale=scale, method=m).run_id() not in recorded]
    assert not moved, f"run ids moved at {scale}: {moved}"
