"""FedSAM Tables 4-6, 13-17: the run groups share Table 2's runs, the SWA-ablation method
X+swalr reduces as the paper says, and Tables 5 / 16's improvements follow their formulas."""
from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from flcore import resolve_config
from flcore.config import hyperparameters_of, parts_of
from flcore.papers.fedsam import results as results
from flcore.papers.fedsam import runs as fedsam
from flcore.reproduction.artifacts import get_artifact
from flcore.reproduction.published import published
from flcore.sim import Simulation, build_federated_data


def _final_w(**overrides):
    cfg = resolve_config(scale="smoke", rounds=6, **overrides)
    sim = Simulation(cfg, build_federated_data(cfg, torch.device("cpu")), torch.device("cpu"), None)
    sim.run_rounds()
    return sim.w


# ----------------------------------------------------------------------------- X+swalr

@pytest.mark.slow
def test_swalr_is_swa_without_the_average():
    assert parts_of("fedsam+swalr") == ("P1", "C0", "S0", "L1", "L0") and "rho" in hyperparameters_of("fedsam+swalr")
    assert resolve_config(method="fedasam+swalr", scale="paper", dataset="cifar100", alpha=0.0).swa_cycle == 20
    # the global trajectory of X + SWA is X's with the cyclical lr: X+swalr follows it exactly
    swa = _final_w(method="fedavg+swa", swa_start=2, swa_cycle=2)
    swalr = _final_w(method="fedavg+swalr", swa_start=2, swa_cycle=2)
    assert torch.equal(swa, swalr)
    # "using c = 1 and not applying the average brings us back to the standard federated setting"
    assert torch.equal(_final_w(method="fedavg+swalr", swa_start=2, swa_cycle=1), _final_w(method="fedavg"))
    assert not torch.equal(swalr, _final_w(method="fedavg"))


# ----------------------------------------------------------------------------- shared runs

@pytest.mark.parametrize("scale", ["small", "paper"])
def test_cells_shared_with_table2_are_table2_runs(scale):
    table2 = {s.run_id(): s.labels for s in fedsam.table2_runs(scale)}
    t14 = get_artifact("fedsam-table-14").runs(scale, [0])
    for spec in t14:
        plain = (spec.labels["weights_avg"], spec.labels["lr_schedule"]) in (("yes", "cyclical"), ("no", "constant"))
        assert (spec.run_id() in table2) == plain, spec.labels
    t13 = {(s.labels["optimizer"], s.labels["server_lr"], s.labels["alpha"]): s for s in
           get_artifact("fedsam-table-13").runs(scale, [0])}
    assert t13[("SGD", 1.0, 0.0)].run_id() in table2 and t13[("SGD", 0.1, 0.0)].method == "fedopt"
    assert t13[("Adam", 0.01, 0.0)].resolve().server_tau == 0.1
    t15 = {
        (s.labels["dataset"], s.labels["start_fraction"]): s for s in get_artifact("fedsam-table-15").runs(scale, [0])
    }
    assert t15[("CIFAR-100", 0.75)].run_id() in table2
    late, mid = t15[("CIFAR-100", 0.75)].resolve(), t15[("CIFAR-100", 0.5)].resolve()
    assert mid.swa_start == late.rounds // 2 and mid.rounds == late.rounds
    for aid in ("fedsam-table-4", "fedsam-table-17"):
        for spec in get_artifact(aid).runs(scale, [0]):
            assert (spec.run_id() in table2) == (spec.labels["augmentation"] == "none"), spec.labels


def test_augmentations_and_centralized_runs():
    cutout = results.aug_run("CIFAR-100", "FedAvg", "Cutout", 0.0, 5, 0, "paper").resolve()
    assert cutout.cutout_size == 8 and cutout.mixup_alpha == 0.0  # the paper's 8x8 (the code: 16)
    assert results.aug_run("CIFAR-10", "FedAvg", "Cutout", 0.0, 5, 0, "paper").resolve().cutout_size == 16
    assert results.aug_run("CIFAR-10", "FedAvg", "Mixup", 0.0, 5, 0, "small").resolve().mixup_alpha == 1.0
    with pytest.raises(ValueError, match="augmentation must be one of"):
        results.augmentation_config("RandAugment", "CIFAR-10", "small")
    central = results.central_run("SAM+SWA", 0, "paper").resolve()
    assert (central.method, central.clients, central.per_round, central.swa_cycle) == ("centralized-sam+swa", 1, 1, 1)
    assert central.dataset == "cifar100"
    mixup = results.central_run("Mixup", 0, "small").resolve()
    assert mixup.method == "centralized-sgd" and mixup.mixup_alpha == 1.0 and mixup.rounds == 5


def test_table6_runs_feddyn_sam_on_cifar10_and_asam_on_cifar100_only():
    specs = get_artifact("fedsam-table-6").runs("paper", [0])
    methods = {(s.labels["dataset"], s.labels["algorithm"], s.labels["swa"]): s.method for s in specs}
    assert methods[("CIFAR-10", "FedDyn+SAM", "yes")] == "feddyn+sam+swa"
    assert methods[("CIFAR-100", "FedDyn+ASAM", "no")] == "feddyn+asam"
    assert ("CIFAR-100", "FedDyn+SAM", "no") not in methods and len(specs) == 2 * 13 * 2 * 2 * 2
    with pytest.raises(ValueError, match="only, not on CIFAR-100"):
        results.sota_run("CIFAR-100", "FedDyn+SAM", False, 0.0, 5, 0, "paper")
    # every published cell has its run at the paper scale
    ours = {(s.labels["dataset"], s.labels["algorithm"], s.labels["swa"], s.labels["alpha"],
             s.labels["clients_per_round"]) for s in specs}
    paper = published("fedsam-table-6")
    assert set(zip(paper["dataset"], paper["algorithm"], paper["swa"], paper["alpha"].astype(float),
                   paper["clients_per_round"])) <= ours


@pytest.mark.parametrize("aid", ["fedsam-table-4", "fedsam-table-17", "fedsam-table-13", "fedsam-table-14",
                                 "fedsam-table-15", "fedsam-table-6"])
def test_every_published_cell_has_a_run_at_the_paper_scale(aid):
    keys = results.TABLE_KEYS[aid]
    ours = {tuple(s.labels[k] for k in keys) for s in get_artifact(aid).runs("paper", [0])}
    paper = results.published_cells(aid)
    missing = [k for k in paper[keys].itertuples(index=False, name=None) if k not in ours]
    assert not missing, missing[:3]


# ----------------------------------------------------------------------------- Tables 5 / 16

def test_improvements_reproduce_table5_from_its_accuracies():
    paper = published("fedsam-table-5")
    cells = paper[["setting", "algorithm", "accuracy"]].rename(columns={"accuracy": "ours"})
    ours = results.improvements(cells).set_index(["setting", "algorithm"])
    for row in paper.itertuples():
        if row.note.startswith("reference"):
            assert math.isnan(ours.loc[(row.setting, row.algorithm), "absolute_improvement"])
            continue
        got = ours.loc[(row.setting, row.algorithm)]
        if row.algorithm == "SAM+SWA" and row.setting == "centralized":
            # the paper's printing error: 55.75 - 52.20 = +3.55 (+6.80 %), printed +0.55 / +1.06
            assert got["absolute_improvement"] == pytest.approx(3.55)
            assert got["relative_improvement"] == pytest.approx(6.80, abs=0.01)
            assert float(row.absolute_improvement) == 0.55
            continue
        assert got["absolute_improvement"] == pytest.approx(float(row.absolute_improvement), abs=0.006)
        assert got["relative_improvement"] == pytest.approx(float(row.relative_improvement), abs=0.006)


def test_larger_federated_gains_on_the_published_table5():
    paper = published("fedsam-table-5")
    table = paper.rename(columns={"relative_improvement": "relative_improvement (ours)"})
    table["relative_improvement (ours)"] = pd.to_numeric(table["relative_improvement (ours)"], errors="coerce")
    larger, compared = results.larger_federated_gains(table)
    assert compared == 7
    assert larger == ["ASAM (alpha=0)", "SWA (alpha=0)", "SAM+SWA (alpha=0)", "ASAM+SWA (alpha=0)"]


def test_published_cells_take_table2_for_table4s_rows_without_augmentation():
    cells = results.published_cells("fedsam-table-4")
    none = cells[cells["augmentation"] == "none"].set_index(["algorithm", "alpha", "clients_per_round"])
    assert none.loc[("FedAvg", 0.0, 5), "accuracy"] == 30.25 and len(none) == 6 * 9
    t14 = results.published_cells("fedsam-table-14")
    assert set(t14["lr_schedule"]) == {"cyclical", "constant"}


def test_best_items_name_the_paper_and_our_best_rows():
    block = pd.DataFrame({"item": ["FedAvg", "FedSAM", "FedASAM"], "paper": [30.0, 35.0, float("nan")],
                          "ours": [float("nan"), 50.0, 60.0]})
    assert results.best_items(block) == ("FedSAM", "FedASAM")
    assert results.best_items(block.assign(paper=float("nan"), ours=float("nan"))) == ("none", "none")


def test_table_findings_by_scale():
    verdicts = pd.DataFrame({"verdict": ["holds", "holds", "fails", "not_run"]})
    smoke = results.table_findings(verdicts, 0.5, "smoke", "MNIST-1D stands in.")
    assert smoke == ["The paper's and our rankings agree with a mean Kendall's \u03c4 of 0.50.",
                     "At the **smoke** scale, of the 4 claims this table checks, 3 are decided at this scale (2 hold, "
                     "1 fail); 1 not run at this scale.", "MNIST-1D stands in.",
                     "The smoke scale trains for a handful of rounds: it proves the code path, not the science."]
    # no ranking (NaN tau) and nothing stands in at the paper scale
    assert results.table_findings(verdicts, float("nan"), "paper", "MNIST-1D stands in.") == [
        smoke[1].replace("**smoke**", "**paper**")]


def test_show_table_findings_checks_the_claims_and_shows_one_paragraph():
    verdicts = pd.DataFrame({"verdict": ["holds", "holds", "fails", "not_run"]})
    page = _RecordingPage("fedsam-table-4", scale="small")
    page.check_claims = lambda: verdicts
    assert results.show_table_findings(page, 0.5) is verdicts
    # the same sentences as table_findings, the stand-in being the tables' with fewer cells
    assert page.notes == [" ".join(results.table_findings(verdicts, 0.5, "small", results.FEWER_CELLS))]
    assert page.notes[0].endswith("with fewer cells than the paper (see the settings).")


def test_each_comparison_layout_uses_the_key_columns_of_its_table_once():
    for artifact_id, (rows, columns, layout) in results.COMPARISON_LAYOUT.items():
        keys = set(results.TABLE_KEYS[artifact_id]) - {"dataset"}
        assert sorted(rows + columns) == sorted(keys), artifact_id
        assert layout.endswith("(columns)") and artifact_id in results.ORDERING


class _RecordingPage:
    """Keeps what a page function shows instead of displaying it."""

    def __init__(self, artifact_id: str, scale: str = "smoke"):
        self.artifact_id = artifact_id
        self.scale = scale
        self.shown = []
        self.notes = []

    def note(self, text):
        self.notes.append(text)

    def table(self, frame, caption, downloads=None, show=None):
        self.shown.append((frame, caption, frame if show is None else show))


def test_heavy_tables_list_their_needs_with_the_reason_last():
    table = results.heavy_needs_table("fedsam-table-7")
    assert list(table["what"]) == list(results.HEAVY_NEEDS["fedsam-table-7"])
    assert table["what"].iloc[-1] == "why"
    assert table["needs"].iloc[-1] == results.HEAVY_NEEDS["fedsam-table-7"]["why"]


def test_published_only_pages_show_the_papers_layout():
    page = _RecordingPage("fedsam-table-8")
    results.show_published_only(page, "mIoU", index=["split", "algorithm"], columns="column", values="miou")
    frame, caption, shown = page.shown[0]
    assert caption == "mIoU" and frame.equals(published("fedsam-table-8"))
    row = frame.iloc[0]
    assert shown.loc[(row["split"], row["algorithm"]), row["column"]] == pytest.approx(row["miou"])
    assert list(shown.index.names) == ["split", "algorithm"]
    # without a layout the values are shown as published
    flat = _RecordingPage("fedsam-table-7")
    results.show_published_only(flat, "as published")
    assert flat.shown[0][2] is flat.shown[0][0]


def test_improvement_table_shows_each_cells_seed_mean_with_its_spread():
    rows = [("centralized", "SGD", s, "finished", acc) for s, acc in enumerate((0.50, 0.52, 0.57))]
    rows += [("centralized", "Mixup", 0, "finished", 0.60), ("centralized", "Mixup", 1, "finished", 0.62),
             ("centralized", "Mixup", 2, "diverged", float("nan"))]
    runs = pd.DataFrame(rows, columns=["setting", "algorithm", "seed", "status", "mean_last_100"])
    table = results.improvement_comparison("fedsam-table-16", runs, "small").set_index(["setting", "algorithm"])
    sgd, mixup = table.loc[("centralized", "SGD")], table.loc[("centralized", "Mixup")]
    # SGD: (50 + 52 + 57) / 3 = 53, sd sqrt((9 + 1 + 16) / 2) = sqrt(13); Mixup: the diverged seed left out
    assert sgd["accuracy (ours)"] == pytest.approx(53.0) and sgd["n (ours)"] == 3
    assert sgd["accuracy sd (ours)"] == pytest.approx(math.sqrt(13.0))
    assert mixup["accuracy (ours)"] == pytest.approx(61.0) and mixup["n (ours)"] == 2
    assert mixup["accuracy sd (ours)"] == pytest.approx(math.sqrt(2.0))
    assert "1 diverged seed left out" in mixup["note"]
    # the improvements are differences of the means, not of seed 0's values (60 - 50)
    assert mixup["absolute_improvement (ours)"] == pytest.approx(8.0)
    assert mixup["relative_improvement (ours)"] == pytest.approx(800.0 / 53.0)
    shown = results.improvement_display(table.reset_index()).set_index(["setting", "algorithm"])
    assert shown.loc[("centralized", "SGD"), "accuracy (ours)"] == "53.00 \u00b1 3.61 (n = 3)"
    assert shown.loc[("centralized", "Mixup"), "accuracy (ours)"] == "61.00 \u00b1 1.41 (n = 2)"
    assert "n (ours)" not in shown
    # a setting this scale does not run: no number of ours, and its note says so
    assert shown.loc[("alpha=0.5", "FedAvg"), "accuracy (ours)"] == results.mean_sd_text(
        float("nan"), float("nan"), float("nan"))
    assert table.loc[("alpha=0.5", "FedAvg"), "note"].startswith(results.NOT_RUN)


def test_panel_name_and_best_values():
    from types import SimpleNamespace

    paper = SimpleNamespace(is_paper=True, name="CIFAR-10")
    small = SimpleNamespace(is_paper=False, name="MNIST-1D")
    assert results.panel_name(paper, "CIFAR-10", "paper") == "CIFAR-10-C"
    assert results.panel_name(small, "CIFAR-100", "small") == "MNIST-1D, CIFAR-100 alphas (small scale)"
    points = pd.DataFrame({"panel": ["a", "a", "a", "b"], "alpha": [0.0, 0.0, 1.0, 0.0],
                           "value": [0.01, 0.1, 0.05, 2.0], "accuracy (%)": [30.0, 35.0, 40.0, 20.0]})
    assert results.best_values(points, "a", [0.0, 1.0, 5.0]) == {0.0: 0.1, 1.0: 0.05}
    assert results.best_values(points, "b", [0.0]) == {0.0: 2.0}
