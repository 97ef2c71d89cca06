"""The verdict rules' traps, closed, through a claim's evaluation: each cell asked whether it
learned (per seed, chance + 5 points on the stand-in), a collapsed or diverged seed ranked
worst instead of left out, one pair of runs evidence for one claim only, and claim texts
that name the cells their comparisons use.  Hand-computed seeds throughout."""
from __future__ import annotations

import dataclasses
import hashlib
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
    Seeds,
    all_claims,
    comparison_carriers,
    evaluate,
    evaluate_claims,
    get_claim,
)

MAIN = {"dataset": ["cifar10", "cifar100"], "model": "cnn"}
SMALL_CONFIG = resolve_config({"method": "fedavg", "scale": "small"})
T975_DF2 = 4.302653  # t(0.975, 2)
T975_DF4 = 2.776445  # t(0.975, 4)
THREE = Seeds(3, "a test's three seeds")


def _claim(comparisons=None):
    comparisons = comparisons or (Comparison({"algorithm": "A"}, {"algorithm": "B"}, 70.0, 65.0),)
    return Claim(id="x-claim", paper="fedsam", text="A beats B", quote="", artifacts=("fedsam-table-2",),
                 source="", metric="accuracy", direction="higher", comparisons=comparisons,
                 about={"dataset": "cifar10", "model": "cnn"}, main_setting=MAIN, seeds=THREE)


def _cells(monkeypatch, values: dict[str, dict[int, float]], diverged: dict[str, list[int]] | None = None):
    """Cells ``algorithm -> {seed: value}`` (and the seeds whose run diverged) in place of a store."""
    diverged = diverged or {}

    def fake(claim, cell, scale, seeds, store):
        name = cell["algorithm"]
        got = values.get(name, {})
        gone = list(diverged.get(name, []))
        return CellValues(dict(got), {s: f"{name}-{s}" for s in [*got, *gone]}, [SMALL_CONFIG], "", gone)

    monkeypatch.setattr(claims_module, "cell_values", fake)


# --------------------------------------------------------------------------- learning, per cell and seed

def test_a_collapsed_seed_of_a_learning_cell_ranks_worst(monkeypatch):
    # B collapsed at seed 1 (10 < chance 10 + 5): unstable, that seed ranks worst; A wins the
    # other two: 3 of 3 untied seeds the claim's way, p = 0.25 -- a sign test that three seeds
    # cannot bring under 5 %: cannot decide (the paired t's threshold, 68 points, said nothing either)
    _cells(monkeypatch, {"A": {0: 60.0, 1: 62.0, 2: 61.0}, "B": {0: 55.0, 1: 10.0, 2: 57.0}})
    result = evaluate(_claim(), "small")
    (comparison,) = result["comparisons"]
    assert comparison["verdict"] == "cannot_decide" and comparison["test"] == "sign"
    assert comparison["p"] == pytest.approx(0.25)
    assert comparison["cell_states"]["worse"]["status"] == "unstable"
    assert comparison["cell_states"]["worse"]["collapsed"] == [1]
    assert comparison["cell_states"]["better"]["status"] == "learned"
    assert comparison["seeds"] == [0, 2] and comparison["censored"] == {"better": [], "worse": [1]}
    assert result["verdict"] == "inconclusive"


def test_two_cells_at_chance_are_not_testable_on_the_stand_in_never_a_fail(monkeypatch):
    _cells(monkeypatch, {"A": {0: 10.5, 1: 9.8, 2: 10.1}, "B": {0: 9.9, 1: 10.2, 2: 10.0}})
    result = evaluate(_claim(), "small")
    (comparison,) = result["comparisons"]
    assert comparison["verdict"] == "at_chance" and comparison["p"] is None
    assert result["verdict"] == "at_chance" and "did not learn" in result["reason"]


def test_a_cell_just_above_chance_has_not_learned_and_a_learning_pair_is_decided(monkeypatch):
    # A at 12.0-12.2 and B at 9.9-10.0: below 15 both: not testable on the stand-in, whatever
    # the paired t would say (differences 2, 2.1, 2.3)
    _cells(monkeypatch, {"A": {0: 12.0, 1: 12.1, 2: 12.2}, "B": {0: 10.0, 1: 10.0, 2: 9.9}})
    assert evaluate(_claim(), "small")["comparisons"][0]["verdict"] == "at_chance"
    # the same gap between two learning cells holds
    _cells(monkeypatch, {"A": {0: 62.0, 1: 62.1, 2: 62.2}, "B": {0: 60.0, 1: 60.0, 2: 59.9}})
    (comparison,) = evaluate(_claim(), "small")["comparisons"]
    assert comparison["verdict"] == "holds" and comparison["test"] == "paired t"


def test_fewer_seeds_than_planned_are_indicative(monkeypatch):
    _cells(monkeypatch, {"A": {0: 62.0, 1: 62.1, 2: 62.2}, "B": {0: 60.0, 1: 60.0, 2: 59.9}})
    claim = dataclasses.replace(_claim(), seeds=Seeds(6, "six"))
    (comparison,) = evaluate(claim, "small")["comparisons"]
    assert comparison["verdict"] == "indicative" and comparison["planned"]["seeds"] == 6


# --------------------------------------------------------------------------- flatness at chance

def _flatness_claim(monkeypatch):
    """A claim that A's model is flatter (lower lambda_max) than B's, on a flatness metric."""
    monkeypatch.setitem(claims_module.METRICS, "x_lambda_max",
                        claims_module.Metric("x_lambda_max", lambda row: None, "lambda_max", seeded=False,
                                             flatness=True))
    comparison = Comparison({"algorithm": "A"}, {"algorithm": "B"}, 20.0, 40.0, seeds=THREE)
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


def test_a_flatness_claim_whose_models_did_not_learn_is_not_decided(monkeypatch):
    claim = _flatness_claim(monkeypatch)
    _flat_cells(monkeypatch, LAMBDAS, {"A": {0: 10.1, 1: 9.9, 2: 10.0}, "B": {0: 10.2, 1: 9.8, 2: 10.3}})
    result = evaluate(claim, "small")
    (comparison,) = result["comparisons"]
    assert comparison["verdict"] == "at_chance" and result["verdict"] == "at_chance"
    assert "flatness of a model that learned nothing" in comparison["reason"]


def test_a_flatness_claim_is_decided_only_when_both_cells_learn(monkeypatch):
    claim = _flatness_claim(monkeypatch)
    _flat_cells(monkeypatch, LAMBDAS, {"A": {0: 60.1, 1: 59.9, 2: 60.0}, "B": {0: 50.2, 1: 49.8, 2: 50.3}})
    (comparison,) = evaluate(claim, "small")["comparisons"]
    assert comparison["verdict"] == "holds"
    # one cell's models did not learn: the gap would hold, and swapped it would fail; neither
    # says anything of a model that learned nothing
    _flat_cells(monkeypatch, LAMBDAS, {"A": {0: 60.1, 1: 59.9, 2: 60.0}, "B": {0: 10.2, 1: 9.8, 2: 10.3}})
    (comparison,) = evaluate(claim, "small")["comparisons"]
    assert comparison["verdict"] == "at_chance" and comparison["reason"].startswith("the worse cell's models")
    _flat_cells(monkeypatch, {"A": LAMBDAS["B"], "B": LAMBDAS["A"]},
                {"A": {0: 10.2, 1: 9.8, 2: 10.3}, "B": {0: 60.1, 1: 59.9, 2: 60.0}})
    (comparison,) = evaluate(claim, "small")["comparisons"]
    assert comparison["verdict"] == "at_chance" and comparison["reason"].startswith("the better cell's models")


def test_one_seed_flatness_cells_are_indicative_whether_or_not_they_learn(monkeypatch):
    claim = _flatness_claim(monkeypatch)
    for accuracy in ({"A": {0: 60.0}, "B": {0: 70.0}},):
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

def test_a_diverged_seed_ranks_worst_for_its_method_never_left_out(monkeypatch):
    # FedGloSS-SAM 60, 62, 61; FedGAMMA 55, (diverged), 57.  Leaving the diverged run out would
    # favour the method that diverged (survivorship); ranked worst, FedGloSS-SAM wins all three:
    # p = 0.25, which three seeds cannot bring under 5 %
    comparison = Comparison({"algorithm": "FedGloSS-SAM"}, {"algorithm": "FedGAMMA"}, 84.4, 70.0)
    _cells(monkeypatch, {"FedGloSS-SAM": {0: 60.0, 1: 62.0, 2: 61.0}, "FedGAMMA": {0: 55.0, 2: 57.0}},
           diverged={"FedGAMMA": [1]})
    result = evaluate(_claim((comparison,)), "small")
    (got,) = result["comparisons"]
    assert got["verdict"] == "cannot_decide" and got["test"] == "sign" and got["p"] == pytest.approx(0.25)
    assert got["seeds"] == [0, 2] and got["gap"] == pytest.approx(4.5)  # the gap over the untied finite seeds
    assert got["cell_states"]["worse"]["diverged"] == [1]
    assert got["cell_states"]["worse"]["divergence_rate"] == pytest.approx(1 / 3, abs=1e-4)
    assert got["note"] == "ranked worst (diverged, collapsed or censored): FedGAMMA: seeds 1"


def test_a_cell_whose_every_run_diverged_did_not_learn(monkeypatch):
    _cells(monkeypatch, {"A": {0: 60.0, 1: 62.0, 2: 61.0}}, diverged={"B": [0, 1, 2]})
    (got,) = evaluate(_claim(), "small")["comparisons"]
    assert got["verdict"] == "at_chance" and got["cell_states"]["worse"]["divergence_rate"] == 1.0


def test_the_store_reader_keeps_diverged_runs_apart_for_every_metric(monkeypatch):
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
    assert set(cell.run_ids) == {0, 1, 2}


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
