"""FedIMA's Fashion-MNIST rows at the paper's protocol: priced per device kind, previewed
capped on IDX files (written here, a tiny federation), and its claim testable at the paper
scale only."""
import json

import pytest

import flcore.reproduction.claims as claims_module
from flcore.cli.main import main
from flcore.data import write_fake_fmnist
from flcore.data.checksums import expected_checksums
from flcore.papers.fedima import runs as fedima
from flcore.reproduction.artifacts import runs_for
from flcore.reproduction.claim_cells import artifact_runs
from flcore.reproduction.claims import all_claims, cell_specs, evaluate, untestable_reason
from flcore.reproduction.runner import results_frame

#: Over 30 s as a whole file (``make test-fast`` leaves it out).
pytestmark = pytest.mark.slow

FMNIST_CLAIM = "fedima-ima-improves-all-methods-fmnist"


def _plan(capsys, *args):
    assert main(["reproduce", *args, "--scale", "paper", "--plan", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_plan_prices_the_fmnist_rows_per_device_kind(tmp_path, capsys):
    store = ["--store", str(tmp_path / "runs")]
    plan = _plan(capsys, "fedima-table-1", "fedima-fig-10", "--dataset", "fmnist", *store)
    # Table I: 2 FMNIST rows (shards, Dirichlet) x 8 methods x {FMA, IMA}; Fig. 10: one run per row
    specs = runs_for(["fedima-table-1", "fedima-fig-10"], "paper", [0])
    fmnist = {s.run_id() for s in specs if s.resolve().dataset == "fmnist"}
    assert len(fmnist) == 2 * 8 * 2 + 2 and plan["runs"]["distinct"] == plan["runs"]["to_train"] == len(fmnist)
    for spec in runs_for(["fedima-table-1"], "paper", [0]):
        if spec.resolve().dataset == "fmnist":  # the paper's protocol (Sec. VII-A3, Table VII)
            cfg = spec.resolve()
            assert (cfg.model, cfg.clients, cfg.per_round, cfg.batch_size, cfg.local_epochs, cfg.rounds) == (
                "fmnist_cnn", 100, 10, 50, 5, 300)
    kinds = {k["kind"]: k for k in plan["devices"]}
    assert any(k["device"] == "cpu" for k in kinds.values()) and any(k["device"] == "cuda" for k in kinds.values())
    for kind in kinds.values():
        assert set(kind["by_model"]) <= {"fmnist_cnn on fmnist"}
        if kind["calibrated"]:
            assert kind["hours"] > 0 and kind["by_model"]["fmnist_cnn on fmnist"]["runs"] == len(fmnist)
    # the same runs cost the same inside the whole table's plan
    whole = {k["kind"]: k["by_model"] for k in _plan(capsys, "fedima-table-1", *store)["devices"]}
    filtered = _plan(capsys, "fedima-table-1", "--dataset", "fmnist", *store)
    table = {k["kind"]: k["by_model"] for k in filtered["devices"]}
    assert table == {kind: {m: row for m, row in rows.items() if m == "fmnist_cnn on fmnist"}
                     for kind, rows in whole.items()}
    assert all(rows["fmnist_cnn on fmnist"]["runs"] == 32 for rows in table.values() if rows)
    assert not (tmp_path / "runs").exists(), "--plan trains nothing"


def test_an_unknown_dataset_is_refused_before_anything_runs(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["reproduce", "fedima-table-1", "--scale", "paper", "--dataset", "fashion", "--store", str(tmp_path)])
    assert info.value.code == 2 and "fmnist" in capsys.readouterr().err


@pytest.fixture
def tiny_protocol(monkeypatch):
    """The paper scale's FMNIST rows on a tiny federation: FedAvg with and without IMA only,
    4 clients of 10 images (the full protocol needs the 60,000 released images)."""
    monkeypatch.setattr(fedima, "METHODS", {"FedAvg": "fedavg"})
    monkeypatch.setattr(fedima, "PAPER_PROTOCOL", {**fedima.PAPER_PROTOCOL, "clients": 4, "per_round": 2,
                                                   "samples_per_client": 10, "local_epochs": 1, "batch_size": 5})
    artifact_runs.cache_clear()  # the claims engine caches the artifacts' runs
    yield
    artifact_runs.cache_clear()


def test_a_capped_preview_trains_only_the_fmnist_rows_on_idx_files(tmp_path, capsys, tiny_protocol):
    md5s = write_fake_fmnist(tmp_path / "data", num_train=60, num_test=20, seed=1, layout="idx")
    (tmp_path / "repo" / "notebooks").mkdir(parents=True)
    args = ["reproduce", "fedima-table-1", "--scale", "paper", "--dataset", "fmnist", "--max-rounds", "1",
            "--data-root", str(tmp_path / "data"), "--store", str(tmp_path / "runs"), "--root",
            str(tmp_path / "repo"), "--workers", "1", "--device", "cpu"]
    with expected_checksums("fmnist", md5s):
        code = main(args)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "4 run(s) on fmnist at the paper scale (capped at 1 rounds" in out and "4 finished" in out
    specs = [s for s in runs_for(["fedima-table-1"], "paper", [0]) if s.resolve().dataset == "fmnist"]
    frame = results_frame(specs, tmp_path / "runs")
    assert len(frame) == 4 and set(frame["status"]) == {"capped"} and set(frame["rounds_done"]) == {1}
    assert set(frame["rounds"]) == {300}, "the paper's T, stopped at the cap"
    assert sorted(p.name for p in (tmp_path / "repo").iterdir()) == ["notebooks"], "no page was built"
    # a capped preview decides no verdict: not run (not "not testable")
    claim = next(c for c in all_claims() if c.id == FMNIST_CLAIM)
    result = evaluate(claim, "paper", store=tmp_path / "runs")
    assert result["verdict"] == "not_run" and "1 of 300 rounds" in json.dumps(result)
    # the cap raised continues the same runs from their checkpoints
    with expected_checksums("fmnist", md5s):
        assert main([*args[:-8], "--max-rounds", "2", *args[-8:]]) == 0
    again = results_frame(specs, tmp_path / "runs")
    assert set(again["rounds_done"]) == {2} and list(again["run_id"]) == list(frame["run_id"])


def test_missing_fmnist_files_fail_the_preview_with_the_file_named(tmp_path, capsys, tiny_protocol):
    (tmp_path / "repo" / "notebooks").mkdir(parents=True)
    write_fake_fmnist(tmp_path / "data", num_train=60, num_test=20, seed=1, layout="debian")
    (tmp_path / "data" / "t10k-images-idx3-ubyte.gz").unlink()
    code = main(["reproduce", "fedima-table-1", "--scale", "paper", "--dataset", "fmnist", "--max-rounds", "1",
                 "--data-root", str(tmp_path / "data"), "--store", str(tmp_path / "runs"), "--root",
                 str(tmp_path / "repo"), "--workers", "1", "--device", "cpu"])
    out = capsys.readouterr().out
    assert code == 1 and "4 failed" in out and "missing t10k-images-idx3-ubyte.gz" in out


def _configs(claim, comparison, scale):
    return [s.resolve() for cell in (comparison.better, comparison.worse)
            for s in cell_specs(claim, cell, scale, [0])[0]]


def test_the_fmnist_claim_is_testable_at_paper_and_not_below(monkeypatch):
    claim = next(c for c in all_claims() if c.id == FMNIST_CLAIM)
    for comparison in claim.comparisons:
        paper = _configs(claim, comparison, "paper")
        assert paper and {(c.dataset, c.model) for c in paper} == {("fmnist", "fmnist_cnn")}
        assert untestable_reason(claim, comparison, paper, "paper") == ""
        small = _configs(claim, comparison, "small")
        assert "stand in for cifar10" in untestable_reason(claim, comparison, small, "small")
    # at the paper scale its runs decide it (cells read from a fake store: IMA 3 points up)
    configs = {}

    def fake(claim, cell, scale, seeds, store):
        specs, _ = cell_specs(claim, cell, scale, seeds)
        values = {seed: (83.0 + seed if cell["algorithm"].endswith("+IMA") else 80.0 + 1.1 * seed) for seed in seeds}
        configs[cell["algorithm"]] = [s.resolve() for s in specs]
        return claims_module.CellValues(values, {s: f"{cell['algorithm']}-{s}" for s in seeds},
                                        [s.resolve() for s in specs], "")

    monkeypatch.setattr(claims_module, "cell_values", fake)
    result = evaluate(claim, "paper", seeds=[0, 1, 2])
    assert result["verdict"] == "holds", result
    assert all(c.dataset == "fmnist" for cfgs in configs.values() for c in cfgs)
    assert evaluate(claim, "small", seeds=[0, 1, 2])["verdict"] == "not_testable"
