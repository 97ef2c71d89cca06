"""Tuning as the papers tuned: a validation split held out of the training set, the papers'
grids on seeds no verdict uses, a committed record the presets read and a regenerated part
of it equal to the committed one."""
import json

import pytest
import torch
from cli_runner import run_cli

from flcore.config import resolve_config
from flcore.config import tuned as tuned_module
from flcore.config.presets import tuning_of
from flcore.config.tuned import TuningRecordError, heterogeneity_row, load_record
from flcore.data import hold_out_validation, make_synthetic, validation_count
from flcore.errors import ConfigError
from flcore.reproduction import tuning
from flcore.sim.federated_data import build_federated_data


def test_hold_out_moves_a_fixed_share_of_the_training_set_to_the_evaluation_split():
    data = make_synthetic(50, 7)
    held = hold_out_validation(data, 0.2)
    assert validation_count(50, 0.2) == 10 and held.test_y.shape[0] == 10 and held.train_y.shape[0] == 40
    # every training row lands on exactly one side, and the test set is not read
    rows = {tuple(x.tolist()) for x in data.train_x}
    kept = {tuple(x.tolist()) for x in held.train_x}
    validation = {tuple(x.tolist()) for x in held.test_x}
    assert kept | validation == rows and not kept & validation
    assert not validation & {tuple(x.tolist()) for x in data.test_x}
    # the same examples whatever else happens: the draw has its own seed
    torch.manual_seed(123)
    again = hold_out_validation(data, 0.2)
    assert torch.equal(again.test_x, held.test_x) and torch.equal(again.test_y, held.test_y)
    assert hold_out_validation(data, 0.0) is data


def test_a_validation_run_is_evaluated_on_held_out_training_examples():
    cfg = resolve_config(scale="smoke", method="fedavg", validation=0.25)
    full = build_federated_data(resolve_config(scale="smoke", method="fedavg"), torch.device("cpu"))
    part = build_federated_data(cfg, torch.device("cpu"))
    assert part.test_x.shape[0] == validation_count(full.train_x.shape[0], 0.25)
    assert part.train_x.shape[0] == full.train_x.shape[0] - part.test_x.shape[0]
    training_rows = {tuple(x.tolist()) for x in full.train_x}
    assert all(tuple(x.tolist()) in training_rows for x in part.test_x)


def test_validation_is_checked_and_leaves_every_other_run_id_alone():
    with pytest.raises(ConfigError) as err:
        resolve_config(scale="small", method="fedavg", validation=0.7)
    assert err.value.field == "validation" and "[0, 0.5]" in str(err.value)
    # the default is off and not in the run id: a stored run keeps its id
    assert resolve_config(scale="small", method="fedavg").run_id() == "4d8124ee1eac031b"
    assert resolve_config(scale="small", method="fedavg", validation=0.2).run_id() != "4d8124ee1eac031b"


def test_heterogeneity_rows_follow_table_11s_grouping():
    assert [heterogeneity_row(a) for a in (0, 0.05, 0.5, 1, 100, 1000)] == [
        "pathological", "heterogeneous", "heterogeneous", "homogeneous", "homogeneous", "homogeneous"]
    assert all(heterogeneity_row(alpha) == row for row, alpha in tuning.ROW_ALPHAS.items())


def test_the_choice_is_the_highest_mean_and_the_first_on_a_tie():
    points = [{"values": {"rho": 0.01}, "mean": 50.0}, {"values": {"rho": 0.02}, "mean": 61.5},
              {"values": {"rho": 0.05}, "mean": 61.5}, {"values": {"rho": 0.1}, "mean": 40.0}]
    assert tuning.choose(points)["values"] == {"rho": 0.02}
    asam = next(s for s in tuning.STUDIES if s.name == "asam")
    assert len(asam.points()) == 7 * 4 and asam.points()[:2] == [{"rho": 0.05, "eta": 0.0}, {"rho": 0.05, "eta": 0.01}]


def test_a_diverged_tuning_run_scores_zero_and_its_point_says_so():
    study = tuning.Study("fedgf", "toy", "fedsam", {"rho": (0.01, 0.1)}, "a test grid")
    summaries = {}
    for point, status in (({"rho": 0.01}, "finished"), ({"rho": 0.1}, "diverged")):
        for seed in tuning.TUNING_SEEDS:
            cfg = tuning.tuning_config(study, point, 0.0, seed, "small")
            summaries[cfg.run_id()] = ({"status": "finished", "mean_last_100": 0.125} if status == "finished"
                                       else {"status": "diverged", "mean_last_100": None})
    (row,) = tuning.study_rows(study, summaries, "small", rows=["pathological"])
    finished, diverged = row["points"]
    assert finished["mean"] == 12.5 and "diverged" not in finished
    assert diverged["accuracy"] == {str(s): 0.0 for s in tuning.TUNING_SEEDS}
    assert diverged["diverged"] == list(tuning.TUNING_SEEDS) and row["choice"] == {"rho": 0.01}


def test_no_verdict_seed_is_a_tuning_seed():
    from pathlib import Path

    from flcore.reproduction.book_runs import book_specs
    root = Path(__file__).resolve().parents[1]
    verdict_seeds = {spec.resolve().seed for spec in book_specs("small", root)}
    assert verdict_seeds and not verdict_seeds & set(tuning.TUNING_SEEDS)
    assert all(cfg.seed in tuning.TUNING_SEEDS and cfg.validation == tuning.VALIDATION
               for cfg in tuning.tuning_configs(tuning.STUDIES, "small"))


@pytest.mark.parametrize("paper", tuning.papers_tuned())
def test_each_committed_record_names_its_protocol_and_follows_from_its_numbers(paper):
    record = load_record(paper, "small")
    assert record is not None
    assert record["command"] == f"flcore tune --scale small --paper {paper}" and record["commit"]
    assert record["seeds"] == list(tuning.TUNING_SEEDS) and record["validation"] == tuning.VALIDATION
    assert record["criterion"] == tuning.CRITERION
    studies = {s["name"]: s for s in record["studies"]}
    assert set(studies) == {s.name for s in tuning.studies_of(paper)}
    for study in tuning.studies_of(paper):
        assert studies[study.name]["grid"] == {k: list(v) for k, v in study.grid.items()}
        rows = studies[study.name]["rows"]
        assert [r["row"] for r in rows] == list(tuning.ROW_ALPHAS)
        for row in rows:
            assert [p["values"] for p in row["points"]] == study.points()
            best = tuning.choose(row["points"])
            assert row["choice"] == best["values"]  # the record's choice follows from its numbers
            assert all(p["mean"] == pytest.approx(sum(p["accuracy"].values()) / len(p["accuracy"]), abs=1e-3)
                       for p in row["points"])


def _choice(paper, study, row):
    found = {s["name"]: s for s in load_record(paper, "small")["studies"]}[study]
    return next(r for r in found["rows"] if r["row"] == row)["choice"]


def test_the_presets_read_the_records():
    # a study of a method's parts: every method with that step, at its row
    asam = _choice("fedsam", "asam", "homogeneous")
    cfg = resolve_config(scale="small", method="fedasam", alpha=1000)
    assert (cfg.rho, cfg.eta) == (asam["rho"], asam["eta"])
    sam = _choice("fedsam", "sam", "pathological")
    assert resolve_config(scale="small", method="fedsam", alpha=0).rho == sam["rho"]
    assert resolve_config(scale="small", method="fedgf", alpha=0).rho == sam["rho"]
    # a value the method's own paper sets wins over a study of its parts; the paper scale keeps Table 11
    assert resolve_config(scale="small", method="fedlesam", alpha=0).rho == 0.01
    assert resolve_config(scale="paper", dataset="cifar10", method="fedasam", alpha=0).rho == 0.7
    # a study of the method itself wins over everything: FedSpeed's rho is its own study's, not SAM's
    speed = _choice("fedgloss", "fedspeed", "heterogeneous")
    cfg_speed = resolve_config(scale="small", method="fedspeed", alpha=0.05)
    assert (cfg_speed.rho, cfg_speed.fedspeed_alpha, cfg_speed.fedspeed_lambda) == (
        speed["rho"], speed["fedspeed_alpha"], speed["fedspeed_lambda"])
    smoo = _choice("fedgloss", "fedsmoo", "pathological")
    cfg_smoo = resolve_config(scale="small", method="fedsmoo", alpha=0)
    assert (cfg_smoo.rho, cfg_smoo.smoo_beta) == (smoo["rho"], smoo["smoo_beta"])
    assert resolve_config(scale="small", method="fedprox", alpha=100).mu == _choice("fedgloss", "fedprox",
                                                                                     "homogeneous")["mu"]
    # and a run says where its values came from
    (item,) = [i for i in tuning_of(cfg) if i["field"] == "rho"]
    assert item["value"] == asam["rho"] and item["source"].startswith("tuned: flcore/config/tuning/fedsam-small.json")
    assert item["grid"] == [0.05, 0.1, 0.2, 0.5, 0.7, 1.0, 2.0]
    own = resolve_config(scale="small", method="fedasam", alpha=1000, rho=3.0)
    assert [i["source"] for i in tuning_of(own) if i["field"] == "rho"] == ["set by the run (not the tuned value)"]
    lesam = resolve_config(scale="small", method="fedlesam", alpha=0)
    assert all(i["source"] == "the method's own paper sets it (not tuned here)" for i in tuning_of(lesam))
    # a study shared by a method's variants names only the fields each variant reads
    assert {i["field"] for i in tuning_of(resolve_config(scale="small", method="fedgf-static-c", alpha=0))} == {"rho"}
    assert "rho" not in {i["field"] for i in tuning_of(resolve_config(scale="small", method="fedgloss-sgd", alpha=0))}
    speed_items = {i["field"]: i for i in tuning_of(cfg_speed)}
    assert speed_items["rho"]["source"].startswith("tuned: flcore/config/tuning/fedgloss-small.json")


def test_a_record_that_cannot_be_trusted_is_one_error(tmp_path, monkeypatch):
    monkeypatch.setattr(tuned_module, "tuning_dir", lambda: tmp_path)
    tuned_module.forget_records()
    try:
        (tmp_path / "fedsam-small.json").write_text('{"paper": "fedsam", "paper": "x"}')
        with pytest.raises(TuningRecordError, match="given twice"):
            load_record("fedsam", "small")
        tuned_module.forget_records()
        (tmp_path / "fedsam-small.json").write_text(json.dumps({"paper": "fedsam"}))
        with pytest.raises(TuningRecordError, match="expected an object with"):
            load_record("fedsam", "small")
    finally:
        tuned_module.forget_records()


def test_tune_plan_prices_the_sweep_and_trains_nothing(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "tune", "--scale", "small", "--plan", "--store", str(tmp_path / "store"))
    runs = len(tuning.tuning_configs(tuning.STUDIES, "small"))
    assert code == 0 and f"{runs} runs requested" in out and "Nothing was trained." in out
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").iterdir())
    code, _, err = run_cli(capsys, "tune", "--paper", "nope", "--plan")
    assert code == 2 and "--paper" in err


@pytest.mark.slow
@pytest.mark.parametrize("paper", tuning.papers_tuned())
def test_a_regenerated_part_of_the_record_equals_the_committed_one(tmp_path, paper):
    """One grid point of each study at one row, on the first tuning seed, trained again."""
    from flcore.planning.sweep import run_sweep

    studies = {s["name"]: s for s in load_record(paper, "small")["studies"]}
    configs, expected = [], []
    for study in tuning.studies_of(paper):
        row = next(r for r in studies[study.name]["rows"] if r["row"] == "pathological")
        point = row["points"][len(row["points"]) // 2]
        configs.append(tuning.tuning_config(study, point["values"], row["alpha"], tuning.TUNING_SEEDS[0], "small"))
        expected.append(point["accuracy"][str(tuning.TUNING_SEEDS[0])])
    summaries = run_sweep(configs, str(tmp_path), progress=False)
    assert [tuning.score(s) for s in summaries] == pytest.approx(expected, abs=1e-6)
