"""The artifact registry, the published-value files and the hyper-parameter tables."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from flcore.papers.fedsam import runs as fedsam
from flcore.reproduction.artifacts import artifact_ids, get_artifact, runs_for, settings_table
from flcore.reproduction.paper_registry import paper_of
from flcore.reproduction.published import has_published_values, published, sources

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS_YAML = ROOT.parent / "shared" / "reference" / "artifacts.yaml"
FIRST = ["fedsam-table-2", "fedsam-fig-11", "fedsam-fig-3", "fedsam-table-10", "fedsam-table-11",
         "fedsam-table-12"]


def test_first_artifacts_are_registered():
    assert set(FIRST) <= set(artifact_ids())


@pytest.mark.skipif(not ARTIFACTS_YAML.is_file(), reason="shared/reference/artifacts.yaml not beside the repo")
def test_registered_ids_exist_in_the_inventory():
    inventory = {entry["id"] for entry in yaml.safe_load(ARTIFACTS_YAML.read_text())}
    assert {a for a in artifact_ids() if get_artifact(a).kind != "page"} <= inventory  # pages: the book's own


def test_every_source_file_exists_and_every_artifact_has_a_source():
    for aid, info in sources().items():
        if info["file"] is not None:
            assert (paper_of(aid).published_dir / info["file"]).is_file(), aid
            assert info["paper"] == paper_of(aid).id, aid
        assert info["source"]
    assert {a for a in artifact_ids() if get_artifact(a).kind != "page"} <= set(sources())


def test_table2_published_values_are_complete_and_unique():
    table = published("fedsam-table-2")
    assert len(table) == 2 * 7 * 3 * 3
    keys = ["dataset", "algorithm", "alpha", "clients_per_round"]
    assert not table.duplicated(keys).any()
    assert table["accuracy"].between(1, 100).all()
    assert set(table["algorithm"]) == {a.label for a in fedsam.ALGORITHMS}
    cell = table[(table.dataset == "CIFAR-100") & (table.algorithm == "FedASAM+SWA") & (table.alpha == 0)
                 & (table.clients_per_round == 5)]
    assert cell["accuracy"].item() == pytest.approx(42.01)
    assert not has_published_values("fedsam-fig-11")


def test_table2_grid_per_scale():
    paper = get_artifact("fedsam-table-2").runs("paper", [0])
    assert len(paper) == 126 and len({s.run_id() for s in paper}) == 126
    assert {s.config["dataset"] for s in paper} == {"cifar10", "cifar100"}
    small = get_artifact("fedsam-table-2").runs("small", [0])
    assert {s.config["dataset"] for s in small} == {"mnist1d"}
    assert {s.labels["clients_per_round"] for s in small} == {5}
    # alpha = 0 names the same run for both CIFAR settings at the small scale: 5 alphas x 7 rows
    assert len({s.run_id() for s in small}) == 5 * 7


def test_shared_runs_are_computed_once():
    table2 = {s.run_id() for s in get_artifact("fedsam-table-2").runs("small", [0])}
    fig11 = {s.run_id() for s in get_artifact("fedsam-fig-11").runs("small", [0])}
    fig3 = get_artifact("fedsam-fig-3").runs("small", [0])
    assert fig11 <= table2
    normal = {s.run_id() for s in fig3 if s.labels.get("length") != "long"}
    assert normal <= table2
    union = runs_for(FIRST, "small", [0])
    assert len({s.run_id() for s in union if s.available}) == len([s for s in union if s.available]) == 35 + 1
    long = [s for s in fig3 if s.labels.get("length") == "long"]
    assert long[0].resolve().rounds == 10 * 300


def test_a_run_shared_with_a_page_that_records_more_is_trained_with_that_record():
    # Fig. 3 reads the clients' accuracy of FedAvg runs that Table 2 lists first: whichever page
    # comes first, the union trains the request that records it (the record is not in the run id)
    fig3 = [s for s in get_artifact("fedsam-fig-3").runs("small", [0]) if s.resolve().client_accuracy]
    assert fig3
    for order in (["fedsam-table-2", "fedsam-fig-3"], ["fedsam-fig-3", "fedsam-table-2"]):
        union = {s.run_id(): s for s in runs_for(order, "small", [0]) if s.available}
        assert all(union[s.run_id()].resolve().client_accuracy for s in fig3), order
    # and a run nobody asks to record keeps its first request
    table2 = list(dict.fromkeys(s.run_id() for s in get_artifact("fedsam-table-2").runs("small", [0]) if s.available))
    union = runs_for(["fedsam-table-2", "fedsam-fig-3"], "small", [0])
    assert [s.run_id() for s in union[:len(table2)]] == table2


def test_seeds_multiply_the_runs():
    assert len(get_artifact("fedsam-fig-11").runs("smoke", [0, 1])) == 2 * len(
        get_artifact("fedsam-fig-11").runs("smoke", [0]))


def test_swa_rows_are_pending_until_the_method_is_registered(monkeypatch):
    from flcore.planning import spec

    monkeypatch.setattr(spec, "registered_methods", lambda: ("fedavg", "fedsam", "fedasam"))
    specs = get_artifact("fedsam-table-2").runs("smoke", [0])
    pending = {s.labels["algorithm"] for s in specs if not s.available}
    assert pending == {"FedAvg+SWA", "FedSAM+SWA", "FedASAM+SWA"}
    union = runs_for(["fedsam-table-2"], "smoke")
    waiting = [s for s in union if not s.available]
    assert len(waiting) == 3 * 2 * 2  # 3 SWA rows x 2 datasets x 2 alphas, listed last, never merged
    assert union[-len(waiting):] == waiting


def test_settings_table_lists_what_varies():
    table = settings_table(get_artifact("fedsam-table-2").runs("paper", [0]), by=("dataset", "algorithm"))
    assert table.attrs["common"]["lr"] == 0.01 and table.attrs["common"]["batch_size"] == 64
    fedsam_c10 = table[(table.dataset == "CIFAR-10") & (table.algorithm == "FedSAM")].iloc[0]
    assert fedsam_c10["rho"] == "0.1 / 0.02"
    fedavg = table[(table.dataset == "CIFAR-100") & (table.algorithm == "FedAvg E=2")].iloc[0]
    assert fedavg["local_epochs"] == "2" and fedavg["rho"] == "\u2013"


def test_hyperparameter_tables_match_the_paper_for_cifar():
    from flcore.papers.fedsam.config_tables import table10_ours, table11_ours
    from flcore.report import compare_settings

    t10 = published("fedsam-table-10")
    check = compare_settings(t10, table10_ours(list(t10["dataset"])), ["dataset"]).set_index("dataset")
    assert check.loc["CIFAR-10", "match"] == "yes" and check.loc["CIFAR-100", "match"] == "yes"
    assert check.loc["IDDA", "match"] == "not in flcore"
    t11 = published("fedsam-table-11")
    check = compare_settings(t11, table11_ours(list(zip(t11["dataset"], t11["alpha"]))), ["dataset", "alpha"])
    assert (check[check["dataset"].isin(["CIFAR-10", "CIFAR-100"])]["match"] == "yes").all()


def test_table12_is_pending_without_swa(monkeypatch):
    from flcore.papers.fedsam import config_tables

    monkeypatch.setattr(config_tables, "registered_methods", lambda: ("fedavg",))
    ours = config_tables.table12_ours(["CIFAR-10", "IDDA"])
    assert (ours.iloc[0, 1:] == "pending").all() and (ours.iloc[1, 1:] == "not in flcore").all()


def test_scale_settings_show_the_three_scales():
    from flcore.papers.fedsam.config_tables import scale_settings

    table = scale_settings()
    assert list(table.index) == ["smoke", "small", "paper"]
    assert table.loc["paper", "dataset"] == "cifar10" and table.loc["small", "dataset"] == "mnist1d"
    assert isinstance(table, pd.DataFrame)
