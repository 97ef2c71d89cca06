"""The verdict rules' traps, closed: chance tested per cell on its own seeds, diverged runs
left out with their seed named, one pair of runs evidence for one claim only, and claim
texts that name the cells their comparisons use.  Hand-computed seeds throughout."""
from __future__ import annotations

import dataclasses
import hashlib
import math
import re

import pandas as pd
import pytest

from flcore.config import resolve_config
from flcore.reproduction import claims as claims_module
from flcore.reproduction import runner
from flcore.reproduction.claims import (
    RUN,
    CellValues,
    Claim,
    Comparison,
    all_claims,
    cell_interval,
    comparison_carriers,
    evaluate,
    evaluate_claims,
    get_claim,
)

MAIN = {"dataset": ["cifar10", "cifar100"], "model": "cnn"}
SMALL_CONFIG = resolve_config({"method": "fedavg", "scale": "small"})
T975_DF2 = 4.302653  # t(0.975, 2)
T975_DF4 = 2.776445  # t(0.975, 4)


def _claim(comparisons=None):
    comparisons = comparisons or (Comparison({"algorithm": "A"}, {"algorithm": "B"}, 70.0, 65.0),)
    return Claim(id="x-claim", paper="fedsam", text="A beats B", quote="", artifacts=("fedsam-table-2",),
                 source="", metric="accuracy", direction="higher", comparisons=comparisons,
                 about={"dataset": "cifar10", "model": "cnn"}, main_setting=MAIN)


def _cells(monkeypatch, values: dict[str, dict[int, float]], diverged: dict[str, list[int]] | None = None):
    """Cells ``algorithm -> {seed: value}`` (and the seeds whose run diverged) in place of a store."""
    diverged = diverged or {}

    def fake(claim, cell, scale, seeds, store):
        name = cell["algorithm"]
        got = values.get(name, {})
        reason = "" if got else f"every run diverged (seeds {diverged.get(name)})"
        return CellValues(dict(got), {s: f"{name}-{s}" for s in got}, [SMALL_CONFIG], reason,
                          list(diverged.get(name, [])))

    monkeypatch.setattr(claims_module, "cell_values", fake)


# --------------------------------------------------------------------------- chance, per cell

def test_a_learning_cell_is_not_at_chance_because_its_partner_is_noisy(monkeypatch):
    # One seed of B did not learn: differences 5, 52, 4 -> mean 20.33, sd 27.43, threshold
    # 4.303 x 27.43 / sqrt 3 = 68.1.  The old rule (both means within 68 points of chance) read
    # "neither learns"; A's own interval is 61 +- 4.303 x 1 / sqrt 3 = [58.5, 63.5]: it learns.
    _cells(monkeypatch, {"A": {0: 60.0, 1: 62.0, 2: 61.0}, "B": {0: 55.0, 1: 10.0, 2: 57.0}})
    (comparison,) = evaluate(_claim(), "small")["comparisons"]
    diffs = [5.0, 52.0, 4.0]
    mean = sum(diffs) / 3
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 2)
    assert comparison["threshold"] == pytest.approx(T975_DF2 * sd / math.sqrt(3), abs=1e-3)  # 68.14
    assert comparison["threshold"] > 60
    assert comparison["verdict"] == "inconclusive"
    assert comparison["cell_stats"]["better"] == {"mean": 61.0, "sd": 1.0, "n": 3}


def test_two_cells_whose_own_intervals_contain_chance_neither_learn(monkeypatch):
    # A: mean 10.133, sd 0.351 -> 10.133 +- 0.873; B: mean 10.033, sd 0.153 -> 10.033 +- 0.379:
    # both intervals contain MNIST-1D's chance (10 %)
    _cells(monkeypatch, {"A": {0: 10.5, 1: 9.8, 2: 10.1}, "B": {0: 9.9, 1: 10.2, 2: 10.0}})
    (comparison,) = evaluate(_claim(), "small")["comparisons"]
    assert comparison["verdict"] == "neither_learns"
    assert "10.13 \u00b1 0.87" in comparison["reason"] and "10.03 \u00b1 0.38" in comparison["reason"]


def test_a_cell_just_above_chance_with_a_tight_interval_learns_but_beating_chance_is_no_support(monkeypatch):
    # A: 12.1 +- 4.303 x 0.1 / sqrt 3 = [11.85, 12.35], which excludes 10: A learns (a little);
    # differences 2.0, 2.1, 2.3 would hold, but B: 9.967 +- 4.303 x 0.0577 / sqrt 3 = [9.82, 10.11]
    # contains chance: a win over a cell that does not learn is no support
    _cells(monkeypatch, {"A": {0: 12.0, 1: 12.1, 2: 12.2}, "B": {0: 10.0, 1: 10.0, 2: 9.9}})
    result = evaluate(_claim(), "small")
    (comparison,) = result["comparisons"]
    assert comparison["verdict"] == "inconclusive" and comparison["against_chance"] == "worse"
    assert "9.97 \u00b1 0.14" in comparison["reason"] and "no support" in comparison["reason"]
    assert result["verdict"] == "inconclusive"
    # the same gap over a learning B holds
    _cells(monkeypatch, {"A": {0: 62.0, 1: 62.1, 2: 62.2}, "B": {0: 60.0, 1: 60.0, 2: 59.9}})
    assert evaluate(_claim(), "small")["comparisons"][0]["verdict"] == "holds"


def test_cell_interval_uses_own_seeds_from_three_else_the_reference_spread():
    mean, half = cell_interval([60.0, 62.0, 61.0], None)
    assert mean == pytest.approx(61.0) and half == pytest.approx(T975_DF2 / math.sqrt(3), abs=1e-5)
    mean, half = cell_interval([60.0, 62.0], {"sd": 1.0, "df": 4})
    assert mean == pytest.approx(61.0) and half == pytest.approx(T975_DF4 / math.sqrt(2), abs=1e-5)
    assert cell_interval([60.0], None) is None and cell_interval([], {"sd": 1.0, "df": 4}) is None


# --------------------------------------------------------------------------- flatness at chance

def _flatness_claim(monkeypatch):
    """A claim that A's model is flatter (lower lambda_max) than B's, on a flatness metric."""
    monkeypatch.setitem(claims_module.METRICS, "x_lambda_max",
                        claims_module.Metric("x_lambda_max", lambda row: None, "lambda_max", seeded=False,
                                             flatness=True))
    comparison = Comparison({"algorithm": "A"}, {"algorithm": "B"}, 20.0, 40.0)
    return Claim(id="x-flatter", paper="fedsam", text="A is flatter than B", quote="", artifacts=("fedsam-table-2",),
                 source="", metric="x_lambda_max", direction="lower", comparisons=(comparison,),
                 about={"dataset": "cifar10", "model": "cnn"}, main_setting=MAIN)


def _flat_cells(monkeypatch, values, accuracy):
    def fake(claim, cell, scale, seeds, store):
        name = cell["algorithm"]
        return CellValues(dict(values[name]), {s: f"{name}-{s}" for s in values[name]}, [SMALL_CONFIG],
                          accuracy=dict(accuracy[name]))

    monkeypatch.setattr(claims_module, "cell_values", fake)


LAMBDAS = {"A": {0: 20.0, 1: 21.0, 2: 19.0}, "B": {0: 40.0, 1: 42.0, 2: 41.0}}  # A flatter by 21, sd 1


def test_a_flatness_claim_whose_two_cells_sit_at_chance_is_not_decided(monkeypatch):
    # accuracies: A 10.1, 9.9, 10.0 (10.0 +- 4.303 x 0.1 / sqrt 3 = +-0.25) and B 10.2, 9.8, 10.3
    # (10.1 +- 0.66): both contain MNIST-1D's chance, 10 %.  The lambda gap, 21 +- 2.5, would hold.
    claim = _flatness_claim(monkeypatch)
    _flat_cells(monkeypatch, LAMBDAS, {"A": {0: 10.1, 1: 9.9, 2: 10.0}, "B": {0: 10.2, 1: 9.8, 2: 10.3}})
    result = evaluate(claim, "small")
    (comparison,) = result["comparisons"]
    assert comparison["gap"] == pytest.approx(-21.0) and comparison["threshold"] < 21.0
    assert comparison["verdict"] == "inconclusive" and result["verdict"] == "inconclusive"
    assert comparison["reason"] == ("both cells' accuracies sit at chance (10%): 10.00 \u00b1 0.25 and 10.10 "
                                    "\u00b1 0.66 (n = 3): the flatness of models that learned nothing ranks nothing")


def test_a_flatness_claim_is_decided_only_when_both_cells_learn(monkeypatch):
    claim = _flatness_claim(monkeypatch)
    _flat_cells(monkeypatch, LAMBDAS, {"A": {0: 60.1, 1: 59.9, 2: 60.0}, "B": {0: 50.2, 1: 49.8, 2: 50.3}})
    (comparison,) = evaluate(claim, "small")["comparisons"]
    assert comparison["verdict"] == "holds" and comparison["reason"] is None
    # one cell at chance (B: 10.1 +- 0.66 contains 10 %): the gap, 21 +- 2.5, would hold, and
    # with the lambdas swapped it would fail; neither says anything of a model that learned nothing
    _flat_cells(monkeypatch, LAMBDAS, {"A": {0: 60.1, 1: 59.9, 2: 60.0}, "B": {0: 10.2, 1: 9.8, 2: 10.3}})
    (comparison,) = evaluate(claim, "small")["comparisons"]
    assert comparison["verdict"] == "inconclusive"
    assert comparison["reason"] == ("the worse cell's accuracy sits at chance (10%: 10.10 \u00b1 0.66, n = 3): the "
                                    "flatness of a model that learned nothing ranks nothing, either way")
    _flat_cells(monkeypatch, {"A": LAMBDAS["B"], "B": LAMBDAS["A"]},
                {"A": {0: 10.2, 1: 9.8, 2: 10.3}, "B": {0: 60.1, 1: 59.9, 2: 60.0}})
    (comparison,) = evaluate(claim, "small")["comparisons"]
    assert comparison["verdict"] == "inconclusive" and comparison["reason"].startswith("the better cell's accuracy")


def test_one_seed_flatness_cells_are_indicative_whether_or_not_they_learn(monkeypatch):
    # one seed each: no spread of their own, none borrowed (the accuracy pairs' or lambda's):
    # the comparison is indicative, at chance (10.5 and 11.0) or not (60 and 70)
    claim = _flatness_claim(monkeypatch)
    for accuracy in ({"A": {0: 10.5}, "B": {0: 11.0}}, {"A": {0: 60.0}, "B": {0: 70.0}}):
        _flat_cells(monkeypatch, {"A": {0: 20.0}, "B": {0: 40.0}}, accuracy)
        (comparison,) = evaluate(claim, "small")["comparisons"]
        assert comparison["verdict"] == "indicative", comparison


def test_the_flatness_metrics_are_registered_as_such():
    from flcore.reproduction.claims import METRICS

    flat = {name for name, metric in METRICS.items() if metric.flatness}
    assert flat == {"fedsam_lambda_max", "fedgloss_lambda_max", "client_lambda_max", "fedgf_lambda_max", "lpf",
                    "flatness_discrepancy"}
    assert all(m.unit in ("lambda_max", "LPF loss", "Delta_F") for n, m in METRICS.items() if n in flat)


def test_the_store_reader_keeps_each_seeds_accuracy_beside_its_flatness(monkeypatch):
    claim = get_claim("fedgf-flattest-global-model-lambda")
    cell = claim.comparisons[0].better

    def frame(specs, store=None):
        return pd.DataFrame([{"status": "finished", "mean_last_100": 0.101 + 0.01 * spec.labels["seed"],
                              "run_dir": None} for spec in specs])

    monkeypatch.setattr(runner, "results_frame", frame)
    monkeypatch.setitem(claims_module.METRICS, claim.metric,
                        dataclasses.replace(claims_module.METRICS[claim.metric], function=lambda row: 5.0))
    got = claims_module.cell_values(claim, cell, "small", (0,), None)
    assert got.values == {0: 5.0} and got.accuracy == pytest.approx({0: 10.1})


# --------------------------------------------------------------------------- diverged runs

def test_a_diverged_seed_is_left_out_with_its_reason_and_n_reduced(monkeypatch):
    # FedGloSS-SAM 60, 62, 61; FedGAMMA 55, (diverged), 57.  Counting the diverged run at chance
    # (10) made the differences 5, 52, 4 and the verdict "fails: neither learns".  Left out: seeds
    # 0 and 2, differences 5 and 4 -> gap 4.5 on two seeds: indicative, never decided on a
    # spread borrowed from other pairs (the reference pairs' sd 1 on 4 df once made it hold).
    comparison = Comparison({"algorithm": "FedGloSS-SAM"}, {"algorithm": "FedGAMMA"}, 84.4, 70.0)
    _cells(monkeypatch, {"FedGloSS-SAM": {0: 60.0, 1: 62.0, 2: 61.0}, "FedGAMMA": {0: 55.0, 2: 57.0}},
           diverged={"FedGAMMA": [1]})
    result = evaluate(_claim((comparison,)), "small")
    (got,) = result["comparisons"]
    assert got["seeds"] == [0, 2] and got["gap"] == pytest.approx(4.5)
    assert got["sd"] is None and got["threshold"] is None and got["p"] is None
    assert got["verdict"] == "indicative" and result["verdict"] == "inconclusive"
    assert got["reason"].startswith("2 shared seeds: a verdict needs at least 3")
    assert got["left_out"] == {"better": [], "worse": [1]}
    assert got["note"] == "left out: seed 1 of FedGAMMA diverged (n = 2)"
    assert got["cell_stats"]["better"] == {"mean": 60.5, "sd": pytest.approx(0.7071, abs=1e-4), "n": 2}


def test_a_cell_whose_every_run_diverged_is_inconclusive_with_the_reason(monkeypatch):
    _cells(monkeypatch, {"A": {0: 60.0, 1: 62.0, 2: 61.0}}, diverged={"B": [0, 1, 2]})
    result = evaluate(_claim(), "small")
    (got,) = result["comparisons"]
    assert got["verdict"] == "inconclusive" and got["mde"] is None
    assert got["reason"] == "every run of the worse cell, B, diverged (seeds 0, 1, 2)"


def test_the_store_reader_leaves_diverged_runs_out_for_every_metric(monkeypatch):
    claim = get_claim("fedgloss-sam-beats-sam-methods")
    fedgamma = next(c.worse for c in claim.comparisons if c.worse["algorithm"] == "FedGAMMA")

    def frame(specs, store=None):
        rows = []
        for spec in specs:
            seed = spec.labels["seed"]
            rows.append({"status": "diverged", "mean_last_100": float("nan")} if seed == 1 else
                        {"status": "finished", "mean_last_100": 0.55 + 0.01 * seed})
        return pd.DataFrame(rows)

    monkeypatch.setattr(runner, "results_frame", frame)
    cell = claims_module.cell_values(claim, fedgamma, "small", (0, 1, 2), None)
    assert cell.values == pytest.approx({0: 55.0, 2: 57.0}) and cell.diverged == [1]
    assert set(cell.run_ids) == {0, 2}


# --------------------------------------------------------------------------- one claim per pair of runs

def _fake_store(monkeypatch):
    """Every run finished with an accuracy drawn from its run id (fixed, distinct per run)."""
    def frame(specs, store=None):
        rows = []
        for spec in specs:
            digest = hashlib.sha256(spec.resolve().run_id().encode()).digest()
            rows.append({"status": "finished", "mean_last_100": 0.2 + 0.6 * digest[0] / 255})
        return pd.DataFrame(rows)

    monkeypatch.setattr(runner, "results_frame", frame)


@pytest.mark.parametrize("scale", ["smoke", "small"])
def test_the_same_runs_are_evidence_for_one_claim_only(monkeypatch, scale):
    _fake_store(monkeypatch)
    counted: dict = {}
    results = evaluate_claims(scale)
    for result in results:
        if result["later_source"] is not None:  # a later claim reads its contested claim's runs the other way
            continue
        for comparison in result["comparisons"]:
            if comparison["verdict"] not in RUN or comparison["verdict"] == "by_construction":
                continue
            key = (result["metric"], frozenset((tuple(comparison["run_ids"]["better"]),
                                                tuple(comparison["run_ids"]["worse"]))))
            assert key not in counted, f"{result['id']} counts the runs of {counted.get(key)} again"
            counted[key] = result["id"]
    # FedGF's CIFAR-10 and CIFAR-100 alpha = 0 claims are one set of MNIST-1D runs below the
    # paper scale: the CIFAR-10 claim carries them, the CIFAR-100 claim refers to it
    by_id = {r["id"]: r for r in results}
    cifar100 = by_id["fedgf-beats-all-non-iid-cifar100"]
    assert cifar100["verdict"] == "same_runs"
    assert cifar100["reason"] == "its runs are evidence for fedgf-beats-all-non-iid-cifar10"
    assert all(c["counted_in"] == "fedgf-beats-all-non-iid-cifar10" for c in cifar100["comparisons"])
    assert by_id["fedgf-beats-all-non-iid-cifar10"]["verdict"] in RUN


def test_at_the_paper_scale_the_two_data_sets_are_their_own_runs():
    carriers = set(comparison_carriers("paper", (0,)).values())
    assert {"fedgf-beats-all-non-iid-cifar10", "fedgf-beats-all-non-iid-cifar100"} <= carriers


# --------------------------------------------------------------------------- texts name their cells

def test_a_claims_text_names_the_alpha_its_comparisons_use():
    # "at alpha = 0" means every cell at alpha 0, or, for a text that sets it against the
    # homogeneous (IID) split, the homogeneous alphas beside it (100 / 1000)
    for claim in all_claims():
        named = {float(a) for a in re.findall(r"alpha = ([\d.]+)", claim.text)}
        if len(named) != 1:
            continue
        used = {float(cell["alpha"]) for c in claim.comparisons for cell in (c.better, c.worse) if "alpha" in cell}
        against_iid = re.search(r"\bIID\b|homogeneous", claim.text)
        extra = {a for a in used - named if a >= 100} if against_iid else set()
        assert used - extra == named, f"{claim.id}: text names alpha {named}, comparisons use {sorted(used)}"
