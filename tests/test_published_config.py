"""The published values of the configuration pages (FedGF Table 3; FedLESAM Tables 1, 6, 7;
FedIMA Tables 4-7) against the papers' text, and flcore's side of those tables against
hand counts of the method recipes."""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from flcore.reproduction.published import published

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
needs_shared = pytest.mark.skipif(not (SHARED / "papers").is_dir(),
                                  reason="shared/ (papers and reference notes) not beside the repo")


def _paper_rows(paper: str) -> list[list[str]]:
    """Every line of the paper's text as its cells (split at tabs and pipes, tags removed)."""
    text = (SHARED / "papers" / f"{paper}.txt").read_text()
    rows = []
    for line in text.splitlines():
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.split(r"\t|\|", line)]
        rows.append([c for c in cells if c])
    return rows


def _same(a, b) -> bool:
    return str(a).replace(",", "").lower() == str(b).replace(",", "").lower()


def _find_row(rows: list[list[str]], first: str, values: list) -> bool:
    """Whether a line starts with ``first`` (case-insensitive, followed by anything such as
    a venue) and continues with ``values`` in order."""
    for cells in rows:
        if cells and cells[0].lower().startswith(first.lower()) and len(cells) >= len(values) + 1:
            if all(_same(v, c) for v, c in zip(values, cells[1:])):
                return True
    return False


@needs_shared
def test_fedgf_table3_rows_are_in_the_paper():
    rows = _paper_rows("fedgf")
    for row in published("fedgf-table-3").itertuples():
        assert _find_row(rows, row.algorithm, [row.upload, row.download, row.total]), row.algorithm
        assert row.upload + row.download == row.total


@needs_shared
def test_fedlesam_table1_rows_are_in_the_paper():
    rows = _paper_rows("fedlesam")
    table = published("fedlesam-table-1")
    for row in table.itertuples():
        assert _find_row(rows, row.algorithm, [row.base_algorithm, row.minimizing_target]), row.algorithm
    # the check marks were lost: those cells stay empty, with a note
    assert (table["local_perturbation"] == "").all() and (table["extra_computation"] == "").all()
    assert table["note"].str.contains("lost").all()


@needs_shared
def test_fedlesam_table7_is_the_paper_table():
    rows = _paper_rows("fedlesam")
    header = next(c for c in rows if c[:3] == ["FedAvg", "FedSAM", "FedLESAM"])
    table = published("fedlesam-table-7").set_index("algorithm")
    assert list(table.index) == header
    for label, column in (("Stored memory", "stored_memory"), ("Communication", "communication"),
                          ("Backpropagation", "backpropagation")):
        assert _find_row(rows, label, list(table[column])), label


# ---------------------------------------------------------------- flcore's side

def test_transmissions_are_the_recipes_counts():
    from flcore.papers.fedgf.method_costs import transmissions_ours

    ours = transmissions_ours(["FedAvg", "MoFedSAM", "FedGF", "FedSMOO", "FedGAMMA"]).set_index("algorithm")
    # FedAvg: model up, model down; MoFedSAM/FedGF: + momentum / perturbed global model down;
    # FedSMOO (no regulariser): + perturbation both ways; FedGAMMA: + control variate both ways
    assert ours.loc["FedAvg"].tolist() == [1, 1, 2]
    assert ours.loc["MoFedSAM"].tolist() == ours.loc["FedGF"].tolist() == [1, 2, 3]
    assert ours.loc["FedSMOO"].tolist() == ours.loc["FedGAMMA"].tolist() == [2, 2, 4]


def test_the_schematic_methods_take_two_gradient_evaluations_and_differ_in_what_they_send():
    from flcore.papers.fedgf.method_costs import schematic_methods, transmissions_ours

    table = schematic_methods().set_index("method")
    assert list(table.index) == ["MoFedSAM", "FedSMOO", "FedGF"]
    assert table["gradient evaluations per step"].tolist() == [2, 2, 2]  # the SAM ascent and the descent
    # the same totals as Table 3's: momentum / perturbed model down (3), perturbation both ways (4)
    assert table["transmissions per round"].tolist() == transmissions_ours(list(table.index))["total"].tolist() == [
        3, 4, 3]
    one = schematic_methods({"plain": "fedavg"})
    assert one.loc[0, "flcore method"] == "fedavg" and one.loc[0, "transmissions per round"] == 2


class _RecordingPage:
    def __init__(self, artifact_id):
        self.artifact_id = artifact_id
        self.tables = []

    def table(self, frame, caption, downloads=None, show=None):
        self.tables.append((frame, caption, downloads))


def test_show_transmissions_counts_the_agreeing_methods_in_its_caption():
    from flcore.papers.fedgf.method_costs import show_transmissions

    page = _RecordingPage("fedgf-table-3")
    table = show_transmissions(page)
    frame, caption, downloads = page.tables[0]
    assert frame is table and set(downloads) == {"published", "flcore"}
    assert f"{(table['match'] == 'yes').sum()} of {len(table)} methods agree" in caption
    assert len(table) == len(downloads["published"]) == len(downloads["flcore"])


def test_client_memory_counts_model_sized_state_and_extra_downloads():
    from flcore.reproduction.method_costs import client_memory

    # model + w_old + c_k (tables) + the server's c (downloaded)
    assert client_memory("fedlesam-s") == 4
    # model + mu_k + lambda_k + s
    assert client_memory("fedsmoo") == 4
    # model + w_old; the [N] participation flag is not model-sized
    assert client_memory("fedlesam") == 2
    assert client_memory("fedavg") == client_memory("fedsam") == 1


def test_table7_differs_from_the_paper_only_where_flcore_communicates_less():
    from flcore.papers.fedlesam.method_costs import relative_costs_ours
    from flcore.report import compare_settings

    paper = published("fedlesam-table-7")
    table = compare_settings(paper, relative_costs_ours(list(paper["algorithm"])), ["algorithm"])
    differing = dict(zip(table["algorithm"], table["match"]))
    assert {k: v for k, v in differing.items() if v != "yes"} == {
        "MoFedSAM": "no: communication",  # 1 up + 2 down = 1.5 x FedAvg (FedGF's Table 3 counts 3)
        "FedLESAM-D": "no: stored_memory, communication",  # FedDyn: no vector beyond the model goes down
    }
    ours = relative_costs_ours(["MoFedSAM"])
    assert ours["communication"].item() == pytest.approx(1.5)


def test_table1_rendered_from_the_parts():
    from flcore.papers.fedlesam.method_costs import summary_ours

    ours = summary_ours(["FedSAM", "FedSMOO", "FedLESAM"]).set_index("algorithm")
    assert ours.loc["FedLESAM"].tolist() == ["FedAvg, Scaffold, FedDyn", "Global Sharpness", "no", "no"]
    assert ours.loc["FedSMOO"].tolist() == ["FedDyn", "Local Sharpness with Correction", "yes", "yes"]
    assert ours.loc["FedSAM", "extra_computation"] == "yes"
    paper = published("fedlesam-table-1").set_index("algorithm")
    full = summary_ours(list(paper.index)).set_index("algorithm")
    pd.testing.assert_series_equal(full["base_algorithm"], paper["base_algorithm"], check_dtype=False)
    pd.testing.assert_series_equal(full["minimizing_target"], paper["minimizing_target"], check_dtype=False)


@needs_shared
def test_table1_marks_read_from_appendix_a_are_quoted_from_the_paper():
    from flcore.papers.fedlesam.method_costs import APPENDIX_A_QUOTES, TABLE1_FROM_APPENDIX_A

    text = re.sub(r"\s+", " ", (SHARED / "papers" / "fedlesam.txt").read_text())
    for quote in APPENDIX_A_QUOTES:
        assert quote in text, quote
    assert set(TABLE1_FROM_APPENDIX_A) == set(published("fedlesam-table-1")["algorithm"])


def test_fig5_partitions_use_the_per_class_coefficient_and_cover_the_training_set():
    import numpy as np

    from flcore.papers.fedlesam.config_tables import dirichlet_counts, flcore_alpha, pathological_counts, skew_summary

    assert flcore_alpha(0.1, 100) == pytest.approx(10.0) and flcore_alpha(0.6, 10) == pytest.approx(6.0)
    counts = dirichlet_counts("CIFAR-10", 0.1, 200)
    assert counts.shape == (200, 10) and (counts.sum(axis=1) == 250).all()  # 50,000 / 200 each
    assert (counts.sum(axis=0) <= 5000).all() and counts.sum() == 50_000  # no image given twice
    # a smaller coefficient concentrates the clients on fewer classes
    assert skew_summary(counts)["classes held (mean)"] < skew_summary(dirichlet_counts("CIFAR-10", 0.6, 200))[
        "classes held (mean)"]
    shards = pathological_counts("CIFAR-10", 3, 100)
    assert np.median((shards > 0).sum(axis=1)) == 3


def test_skew_summary_by_hand():
    import numpy as np

    from flcore.papers.fedlesam.config_tables import skew_summary

    counts = np.array([[6, 3, 1, 0], [5, 5, 0, 0]])
    s = skew_summary(counts)
    # client 0: shares .6 .3 .1 -> 2 classes for 80%; client 1: .5 .5 -> 2
    assert s["classes held (mean)"] == 2.5 and s["classes for 80% (mean)"] == 2.0
    assert s["largest class share (mean)"] == pytest.approx(0.55)


# ---------------------------------------------------------------- FedIMA (Tables IV-VII)

@needs_shared
def test_fedima_table4_kept_layers_are_in_their_block_rows():
    text = (SHARED / "papers" / "fedima.txt").read_text()
    start = text.index("| Block |")
    region = text[start: text.index("|---", start)]  # the table's rows run over several lines
    parts = re.split(r"\|\s*([1-6])\s*\|", region)
    blocks = {int(number): body for number, body in zip(parts[1::2], parts[2::2])}
    assert sorted(blocks) == [1, 2, 3, 4, 5, 6]
    table = published("fedima-table-4")
    for row in table.itertuples():
        if row.layer == "":
            assert "lost" in row.note
            continue
        assert row.layer in blocks[row.block], row


@needs_shared
def test_fedima_table5_values_and_references_are_in_the_paper():
    text = (SHARED / "papers" / "fedima.txt").read_text()
    table = published("fedima-table-5")
    adam = table[table["method"] == "FedAdam"]["value"].tolist()
    assert table[table["method"] == "FedYogi"]["value"].tolist() == adam
    # the table's only surviving values, in the printed order: "= 0.01", "= 0.9", "= 0.99", "= 0.001"
    printed = re.findall(r"= (0\.\d+)", text)
    assert [float(v) for v in printed] == [float(v) for v in adam]
    assert (table[table["method"].isin(["FedProx", "FedFA", "FedASAM", "FedGMA"])]["value"] == "").all()
    refs = next(c for c in _paper_rows("fedima") if c and c[0] == "Refer")
    norm = [c.replace("\u2019", "'").replace(" ", "") for c in refs[1:]]
    by_method = dict(zip(table["method"], table["reference"].str.replace(" ", "")))
    # columns: FedAvg/FedNova | FedProx/FedFA | FedASAM | FedAdam/FedYogi | FedGMA
    assert [by_method[m] for m in ("FedAvg", "FedProx", "FedASAM", "FedAdam", "FedGMA")] == norm


@needs_shared
def test_fedima_table6_rows_are_in_the_paper():
    rows = _paper_rows("fedima")
    for row in published("fedima-table-6").itertuples():
        values = [row.fl, row.clients, row.participation, row.local_epochs, row.batch_size, row.lr_momentum,
                  row.lr_decay, row.rounds, row.dataset]
        values = [v if not isinstance(v, float) or not v.is_integer() else int(v) for v in values]
        assert _find_row(rows, row.figures, values), row.figures
        assert any(c and c[0] == row.figures and c[-1] == row.model for c in rows), row.figures


@needs_shared
def test_fedima_table7_rows_are_in_the_paper_joined_per_dataset():
    rows = _paper_rows("fedima")
    table = published("fedima-table-7")
    columns = ["clients", "participation", "local_epochs", "batch_size", "lr_momentum", "lr_decay", "rounds",
               "window", "ima_lr_decay", "ima_start", "model"]
    joined = ("rounds", "ima_start", "model")  # the paper writes one value per setting in these cells
    for dataset, group in table.groupby("dataset", sort=False):
        values = []
        for column in columns:
            cells = [str(v) for v in group[column]]
            values.append(",".join(cells) if column in joined else cells[0])
            if column not in joined:
                assert len(set(cells)) == 1, (dataset, column)
        assert _find_row(rows, dataset, values), dataset


def test_fedima_layers_are_read_from_the_built_models():
    from flcore.models import build_model
    from flcore.papers.fedima.config_tables import layer_list, model_summary

    cnn = layer_list(build_model("cnn", (3, 32, 32), 10))
    assert cnn == ["Conv(3,64,5)", "Conv(64,64,5)", "FC(1600,384)", "FC(384,192)", "FC(192,10)"]
    summary = model_summary().set_index(["paper model", "dataset"])
    assert summary.loc[("CNN", "CIFAR-10"), "parameters"] == 797_962  # the FedSAM/FedGF CNN's documented count
    assert summary.loc[("ResNet18", "CIFAR-100"), "FC layers"] == "FC(512,100)"
    assert summary.loc[("ResNet18", "CIFAR-10"), "normalisation"] == "GN(2)"
    # the registry's counts of FedIMA's own networks (closed forms in tests/test_models.py)
    assert summary.loc[("CNN", "FMNIST"), ["flcore model", "parameters"]].tolist() == ["fmnist_cnn", 274_026]
    assert summary.loc[("VGG11", "CIFAR-100"), "FC layers"] == "FC(512,128) \u2192 FC(128,100)"
    assert summary.loc[("VGG11", "CIFAR-10"), ["conv layers", "normalisation"]].tolist() == [8, "GN(2)"]
    assert summary.loc[("AlexNet", "PACS"), ["flcore model", "normalisation", "parameters"]].tolist() == [
        "alexnet_gn", "GN(32)", 12_438_599]


def test_fedima_table4_finds_the_kept_layers_of_fedimas_own_networks():
    from flcore.papers.fedima.config_tables import table4_ours

    ours = table4_ours(published("fedima-table-4")).set_index(["model", "block"])
    assert ours.loc[("FMNIST (CNN)", 4), ["flcore model", "in flcore"]].tolist() == ["fmnist_cnn", "yes"]
    assert ours.loc[("FMNIST (CNN)", 5), "in flcore"] == "yes"
    assert ours.loc[("CIFAR-10/100 (VGG11)", 2), ["flcore model", "in flcore"]].tolist() == ["vgg11gn", "yes"]
    assert ours.loc[("CIFAR-10/100 (CNN)", 4), "in flcore"] == "no"  # flcore's CNN is FedSAM's, 384-192
    # the PACS AlexNet is the official code's: the printed FC(4096,512) and FC(512,10) are not its layers
    assert ours.loc[("PACS (AlexNet)", 2), ["flcore model", "in flcore"]].tolist() == ["alexnet_gn", "no"]
    assert ours.loc[("PACS (AlexNet)", 3), "in flcore"] == "no"
    assert ours.loc[("Digit Five (CNN)", 5), "in flcore"] == "not in flcore"


def test_fedima_comparisons_mark_absent_data_and_agree_on_the_ima_fields():
    from flcore.papers.fedima.config_tables import columns_agreeing, compare_table5, compare_table7

    t7 = compare_table7(published("fedima-table-7")).set_index("setting")
    assert t7.loc["PACS (AlexNet w/ GN)", ["match", "flcore model"]].tolist() == ["yes", "alexnet_gn"]
    assert t7.loc["PACS (AlexNet w/ GN)", ["clients (flcore)", "participation (flcore)"]].tolist() == [80, 0.2]
    assert t7.loc["CIFAR-100 (VGG11)", "flcore model"] == "vgg11gn"
    assert t7.loc["FMNIST (CNN)", "flcore model"] == "fmnist_cnn"
    # the values the result runs use (fedima.ima_run at the paper scale), which are FedIMA's
    assert set(t7["match"]) == {"yes", "not in flcore"}
    assert t7.loc["CIFAR-100 (VGG11)", ["rounds (flcore)", "ima_start (flcore)"]].tolist() == [300, 225]
    agree, differ = columns_agreeing(t7.reset_index())
    assert {"window", "ima_lr_decay", "lr_decay"} <= set(agree)
    # the IMA start is 0.75 T on both sides, so it differs exactly where T does
    assert ("ima_start" in differ) == ("rounds" in differ)
    from flcore.papers.fedima.config_tables import compare_table6

    t6 = compare_table6(published("fedima-table-6")).set_index("figures")
    # the analysis runs' settings (fedima_analysis.vis_run), FedIMA's protocol, not flcore's preset
    assert t6.loc["Figure 1, 9", "match"] == "yes" and t6.loc["Figure 2, 3,4", "lr_decay (flcore)"] == "0/0.01"
    assert t6.loc["Figure 8, 9", "match"] == "no: rounds"  # one 400-round run serves Fig. 8's 200
    assert t6.loc["Figure 10", "flcore dataset"] == "cifar10, fmnist"  # Fig. 10 runs FMNIST's CNN too
    assert t6.loc["Figure 5", "flcore dataset"] == "cifar10"
    t5 = compare_table5(published("fedima-table-5")).set_index(["method", "hyperparameter"])
    assert t5.loc[("FedASAM", "rho"), "match"] == "paper value lost"
    assert t5.loc[("FedAdam", "tau"), "match"] == "yes"


@needs_shared
def test_fedlesam_table6_rows_are_in_the_paper():
    rows = _paper_rows("fedlesam")
    for row in published("fedlesam-table-6").itertuples():
        assert row.image_size == "" and ("33232" in row.note or "3224224" in row.note)
        assert _find_row(rows, row.dataset, [f"{row.total_images:,}", row.classes, row.domains]), row.dataset
    text = (SHARED / "papers" / "fedlesam.txt").read_text()
    assert "CIFAR10 | 60,000 | 10 | - | 33232 |" in text  # the garbled size the note describes


def test_dataset_statistics_counts_what_the_loader_returns(tmp_path):
    from flcore.data import write_fake_cifar
    from flcore.papers.fedlesam.config_tables import compare_statistics, dataset_statistics

    md5s = write_fake_cifar(tmp_path, "cifar10", num_train=100, num_test=20)
    ours = dataset_statistics(["CIFAR10", "OfficeHome"], root=str(tmp_path), checksums={"cifar10": md5s})
    assert ours.iloc[0].tolist() == ["CIFAR10", 120, 10, "-", "3x32x32"]
    assert ours.iloc[1, 1:].tolist() == ["not in flcore"] * 4
    table = compare_statistics(published("fedlesam-table-6").iloc[:1], ours.iloc[:1])
    assert table["match"].item() == "no: total_images"  # 120 fake images, not 60,000; the lost size is not compared
    missing = dataset_statistics(["CIFAR100"], root=str(tmp_path / "nowhere"))
    assert compare_statistics(published("fedlesam-table-6").iloc[1:2].reset_index(drop=True),
                              missing)["match"].item().startswith("not checked")


def test_fedima_table5_caption_counts_by_hand():
    from flcore.papers.fedima.config_tables import table5_caption

    paper = pd.DataFrame({"value": ["0.01", "", "0.1", "0.9"]})
    table = pd.DataFrame({"method": ["FedProx", "FedProx", "FedDyn", "FedAvgM"],
                          "hyperparameter": ["mu", "none", "alpha", "beta"],
                          "value (paper)": ["0.01", "", "0.1", "0.9"], "value (flcore)": ["0.01", "-", "0.01", "0.9"],
                          "match": ["yes", "paper value lost", "no: value", "yes"]})
    assert table5_caption(paper, table) == (
        "The baselines' hyper-parameters, the paper's beside flcore's paper preset: 2 of 3 readable values agree "
        "(FedProx, FedAvgM exactly); FedDyn alpha (0.1 in the paper, 0.01 in flcore) differ; 1 values were lost "
        "in the text.")


def test_fedima_table7_caption_counts_by_hand():
    from flcore.papers.fedima.config_tables import table7_caption

    table = pd.DataFrame({"setting": ["a", "b", "c"], "rounds (paper)": ["200", "100", "100"],
                          "rounds (flcore)": ["200", "100", None], "ima_start (paper)": ["150", "75", "75"],
                          "ima_start (flcore)": ["150", "75", None],
                          "match": ["yes", "no: rounds", "not in flcore"]})
    assert table7_caption(table) == (
        "The test experiments' settings beside what flcore's FedAvg+IMA result runs use: ima_start agree in every "
        "setting flcore has (both start IMA at 0.75 T); rounds differ; 1 of 3 settings use a data set flcore does "
        "not have.")
    table.loc[0, "ima_start (flcore)"] = "100"
    assert "(both start" not in table7_caption(table)


def test_fedima_show_tables_5_and_7_give_the_published_and_flcore_downloads():
    from flcore.papers.fedima.config_tables import show_table5, show_table7, table5_caption, table7_caption

    for show, artifact_id in ((show_table5, "fedima-table-5"), (show_table7, "fedima-table-7")):
        page = _RecordingPage(artifact_id)
        table = show(page)
        frame, caption, downloads = page.tables[0]
        assert frame is table and set(downloads) == {"published", "flcore"}
        assert caption == (table5_caption(downloads["published"], table) if artifact_id.endswith("5")
                           else table7_caption(table))


def test_fedlesam_statistics_caption_counts_by_hand():
    from flcore.papers.fedlesam.config_tables import statistics_caption

    table = pd.DataFrame({"dataset": ["CIFAR10", "CIFAR100", "OfficeHome", "DomainNet"],
                          "match": ["yes", "not checked: no CIFAR files", "not in flcore", "not in flcore"]})
    assert statistics_caption(table, "d") == (
        "The data sets' statistics, the paper's beside what flcore's loader holds: 1 of the 1 data sets flcore "
        "loaded agree in images, classes and domains; 1 not checked (no CIFAR files under `d`); 2 of 4 "
        "(OfficeHome, DomainNet) are not in flcore.")
    none_loaded = table.assign(match=["not checked: x", "not checked: x", "not in flcore", "not in flcore"])
    assert "no row is checked; 2 of 4" in statistics_caption(none_loaded)


def test_fedlesam_show_statistics_and_relative_costs_caption_what_they_show(tmp_path):
    from flcore.papers.fedlesam.config_tables import TABLE3_NEEDS, show_statistics, statistics_caption
    from flcore.papers.fedlesam.method_costs import show_relative_costs

    page = _RecordingPage("fedlesam-table-6")
    table = show_statistics(page, root=str(tmp_path))  # no CIFAR files there: nothing is checked
    frame, caption, downloads = page.tables[0]
    assert frame is table and caption == statistics_caption(table, str(tmp_path))
    assert not table["match"].str.startswith("yes").any() and set(downloads) == {"published", "flcore"}
    page = _RecordingPage("fedlesam-table-7")
    table = show_relative_costs(page)
    caption = page.tables[0][1]
    differ = table.loc[table["match"] != "yes", "algorithm"]
    assert f"{len(table) - len(differ)} of {len(table)} methods agree; {', '.join(differ)} communicate less" in caption
    assert TABLE3_NEEDS["item"].tolist() == ["data", "model", "clients", "training"]
    assert TABLE3_NEEDS["available here"].str.startswith("no:").sum() == 2  # data and model: offline
