"""A capped paper-scale page end to end (issue 27): ``flcore reproduce fedsam-table-2 --scale
paper --max-rounds 1`` on CIFAR-10 and CIFAR-100 files written in the real format (50,000
training images each, as the paper's federation of 100 clients x 500 images needs), the
page executed by papermill, and a higher cap that continues the runs from their checkpoints.

It trains every run of the table and its claims for one round (about 130 runs of the
paper's CNN), which costs minutes on two cores: the extended tier.  The capped-and-continued
path itself is checked on every run of the suite at the smoke scale (``test_paper_scale.py``).
"""
from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import pytest
import torch

from flcore.cli.main import main
from flcore.data import write_fake_cifar
from flcore.data.cifar import expected_checksums
from flcore.report.page import capped_banner
from flcore.reproduction.artifacts import runs_for
from flcore.reproduction.runner import ensure_runs
from flcore.sim.round_driver import RoundDriver

pytestmark = pytest.mark.extended

ROOT = Path(__file__).resolve().parents[1]
ARTIFACT = "fedsam-table-2"


def _statuses(store: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in store.glob("*/status.json")}


def test_a_capped_paper_scale_table_runs_end_to_end_on_cifar_files_and_a_higher_cap_continues(
        tmp_path, capsys, monkeypatch):
    pytest.importorskip("papermill")
    data = tmp_path / "data"
    md5s = {name: write_fake_cifar(data, name, num_train=50_000, num_test=500) for name in ("cifar10", "cifar100")}
    root = tmp_path / "repo"
    (root / "notebooks" / "fedsam").mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / "fedsam" / f"{ARTIFACT}.ipynb", root / "notebooks" / "fedsam")
    store = tmp_path / "runs"
    checksums = contextlib.ExitStack()
    for name, digests in md5s.items():
        checksums.enter_context(expected_checksums(name, digests))

    # --workers 1 trains in this process, where the fake files' md5s are the expected ones
    with checksums:
        code = main(["reproduce", ARTIFACT, "--scale", "paper", "--max-rounds", "1", "--workers", "1",
                     "--data-root", str(data), "--store", str(store), "--root", str(root), "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1 ok, 0 failed" in out

    specs = [s for s in runs_for([ARTIFACT], "paper", [0]) if s.available]
    table_ids = {s.run_id(data_root=str(data)) for s in specs}
    statuses = _statuses(store)
    assert table_ids <= set(statuses), "every cell of the table has a run"
    assert {(s["status"], s["rounds_done"]) for s in statuses.values()} == {("capped", 1)}
    assert {s["rounds"] for s in statuses.values()} == {10_000, 20_000}, "the runs keep the paper's protocol"

    import nbformat

    page = nbformat.read(root / "book" / "artifacts" / "fedsam" / f"{ARTIFACT}.ipynb", as_version=4)
    text = nbformat.writes(page)
    assert '"output_type": "error"' not in text
    assert page.cells[1].source.startswith(capped_banner(1)), "the page says so right below its title"
    assert text.count("A capped preview") == 1
    assert "not checked: 1 of 10000 rounds" in text
    for verdict in ("**holds**", "**fails**", "**inconclusive**"):
        assert verdict not in text, "a one-round preview decides no claim"

    # a higher cap continues two of the runs from their checkpoints: only round 2 trains
    trained = []
    original = RoundDriver.train_round

    def counting(self, members, round):
        trained.extend((self.sims[m].cfg.run_id(), round) for m in members)
        return original(self, members, round)

    monkeypatch.setattr(RoundDriver, "train_round", counting)
    chosen = [next(s for s in specs if s.resolve().dataset == name and s.method == "fedsam") for name in md5s]
    checksums = contextlib.ExitStack()
    for name, digests in md5s.items():
        checksums.enter_context(expected_checksums(name, digests))
    with checksums:
        frame = ensure_runs(chosen, store=store, device="cpu", workers=1, data_root=str(data),
                            max_rounds=2, log=None)
    ids = [s.run_id(data_root=str(data)) for s in chosen]
    assert list(frame["run_id"]) == ids and list(frame["capped_at"]) == [2, 2]
    assert sorted(trained) == sorted((rid, 1) for rid in ids), "round 0 was not trained again"
    after = _statuses(store)
    for rid in ids:
        assert (after[rid]["status"], after[rid]["rounds_done"], after[rid]["timed_rounds"]) == ("capped", 2, 1)
        assert torch.load(store / rid / "checkpoint.pt", weights_only=True)["rounds_done"] == 2
