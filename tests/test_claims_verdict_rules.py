"""The verdict rules' traps, closed: chance tested per cell on its own seeds, diverged runs
left out with their seed named, one pair of runs evidence for one claim only, and claim
texts that name the cells their comparisons use.  Hand-computed seeds throughout."""
from __future__ import annotations

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

    monkeypatch.setattr(claims_module, "_cell_values", fake)


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
    cell = claims_module._cell_values(claim, fedgamma, "small", (0, 1, 2), None)
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


# --------------------------------------------------------------------------- tables and verdicts agree

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def _pages_reading_the_claims_seeds() -> set[str]:
    """The artifact pages whose notebook builds its tables from the seeds the verdicts read."""
    return {path.stem for path in (ROOT / "notebooks").rglob("*.py") if "with_claim_seeds(" in path.read_text()}


def _fake_runs(monkeypatch):
    """Every run finished with an accuracy drawn from its run id; rows carry the spec's labels."""
    def frame(specs, store=None):
        rows = []
        for spec in specs:
            digest = hashlib.sha256(spec.resolve().run_id().encode()).digest()
            rows.append({**spec.labels, "status": "finished",
                         "mean_last_100": 0.2 + 0.6 * int.from_bytes(digest[:4], "big") / 2 ** 32})
        return pd.DataFrame(rows)

    monkeypatch.setattr(runner, "results_frame", frame)


@pytest.mark.parametrize("scale", ["smoke", "small"])
def test_every_claims_gap_is_the_difference_of_its_cells_as_the_table_prints_them(monkeypatch, scale):
    """A page whose table and verdict read different runs cannot be built: for every accuracy
    comparison the verdicts decide, the gap equals the difference of the two cells as the
    page's table prints them (mean over the page's runs of the cell, 2 decimals), to the
    printed precision.  At ``smoke`` every page (one seed everywhere); at ``small`` the pages
    that read the claims' seeds (:func:`flcore.reproduction.claims.with_claim_seeds`) and
    those whose claims keep one seed."""
    from flcore.report import ours_accuracy
    from flcore.reproduction.artifacts import artifact_ids, get_artifact
    from flcore.reproduction.claims import METRICS, _matches, claim_specs, with_claim_seeds

    _fake_runs(monkeypatch)
    pages = set(artifact_ids())
    if scale == "small":
        pages = _pages_reading_the_claims_seeds() | {a for a in pages if not claim_specs(scale, [a])}
    assert {"fedsam-table-2", "fedgf-table-1", "fedgloss-table-3", "fedsam-table-6", "fedsam-table-4"} <= pages
    checked = 0
    for result in evaluate_claims(scale):
        claim = get_claim(result["id"])
        if not METRICS[claim.metric].accuracy:
            continue
        for comparison in result["comparisons"]:
            if comparison["gap"] is None:
                continue
            listed = claim.comparisons[comparison["listed"][0]]
            printed = {}
            for side in ("better", "worse"):
                cell = getattr(listed, side)
                page = next(a for a in claim.artifacts if a in artifact_ids()
                            and any(_matches(s.labels, cell) for s in get_artifact(a).runs(scale, (0,))))
                if page not in pages:
                    break
                specs = with_claim_seeds(get_artifact(page).runs(scale, (0,)), scale, page)
                frame = runner.results_frame(specs)
                rows = frame[[_matches(labels, cell) for labels in frame.to_dict("records")]]
                (mean,) = ours_accuracy(rows, list(cell))["ours"]
                printed[side] = round(float(mean), 2)
            else:
                shown = round(printed["better"] - printed["worse"], 2)
                assert abs(shown - round(comparison["gap"], 2)) <= 0.01 + 1e-9, (result["id"], comparison["cells"])
                checked += 1
    assert checked >= (40 if scale == "smoke" else 30), checked
