"""The book's page "Since these papers" (flcore.papers.fedsam.since): the newer methods
are read from recipes_since.SINCE_METHODS when the runs are asked for; FedSAM's and
FedAvg's runs are Table 2's own (nothing trained twice); the page's questions are decided
by the claims' paired rule; its notebook runs at the smoke scale."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from flcore.algorithms import METHODS, recipes_since
from flcore.papers.fedsam import pages as since
from flcore.papers.fedsam import runs as fedsam
from flcore.report.escaping import page_text
from flcore.reproduction.claims import CLAIM_SEEDS, RUN, all_claims, evaluate

ROOT = Path(__file__).resolve().parents[1]


def test_since_methods_are_the_newer_recipes_in_their_order():
    assert recipes_since.SINCE_METHODS == tuple(m.name for m in recipes_since.RECIPES)
    assert all(name in METHODS for name in recipes_since.SINCE_METHODS)
    assert [a.label for a in since.newer_algorithms()][:4] == ["WIMA", "FedSWA", "FedMoSWA", "FedNSAM"]


@pytest.mark.parametrize("scale", ["smoke", "small"])
def test_the_baselines_are_table_2s_runs_and_only_the_newer_methods_are_added(scale):
    seeds = CLAIM_SEEDS[scale]
    page = since.since_runs(scale)
    table2 = {s.run_id() for s in fedsam.table2_runs(scale, CLAIM_SEEDS["small"])}
    baselines = [s for s in page if s.labels["algorithm"] in since.BASELINES]
    newer = [s for s in page if s.labels["algorithm"] not in since.BASELINES]
    assert len(baselines) == 2 * len(since.ALPHAS) * len(seeds)
    # every baseline run at an alpha Table 2 runs at this scale is Table 2's (at small: both alphas)
    shared = [s for s in baselines if s.labels["alpha"] in fedsam.alphas_for("CIFAR-10", scale)]
    assert len(shared) == (len(baselines) if scale == "small" else len(baselines) // 2)
    assert all(s.run_id() in table2 for s in shared)
    assert len(newer) == len(recipes_since.SINCE_METHODS) * len(since.ALPHAS) * len(seeds)
    assert not {s.run_id() for s in newer} & table2
    # a newer method's run is FedAvg's configuration but for the method
    fedavg = next(s for s in baselines if s.labels["algorithm"] == "FedAvg E=1")
    twin = next(s for s in newer if (s.labels["alpha"], s.labels["seed"]) == (fedavg.labels["alpha"],
                                                                              fedavg.labels["seed"]))
    assert {k: v for k, v in twin.config.items() if k != "method"} == \
        {k: v for k, v in fedavg.config.items() if k != "method"}


def test_at_small_the_table_2_baselines_are_trained_at_the_claims_seeds_for_a_claim_already():
    from flcore.reproduction.claims import claim_specs

    claims_runs = {s.run_id() for s in claim_specs("small", ["fedsam-table-2"])}
    baselines = [s for s in since.since_runs("small") if s.labels["algorithm"] in since.BASELINES]
    assert {s.labels["seed"] for s in baselines} == set(CLAIM_SEEDS["small"])
    assert all(s.run_id() in claims_runs for s in baselines)


def test_a_method_added_to_since_methods_is_on_the_page_without_a_change(monkeypatch):
    monkeypatch.setattr(recipes_since, "SINCE_METHODS", (*recipes_since.SINCE_METHODS, "fedavgm"))
    assert since.newer_algorithms()[-1].method == "fedavgm"
    assert {s.config["method"] for s in since.since_runs("smoke")} >= {"fedavgm", *recipes_since.SINCE_METHODS}
    assert {c.id for c in since.page_claims()} >= {"since-fedavgm-beats-fedsam", "since-fedavgm-beats-fedavg"}


def test_the_pages_questions_are_decided_by_the_paired_rule_and_are_not_registry_claims(monkeypatch):
    import hashlib

    import pandas as pd

    from flcore.reproduction import runner

    def frame(specs, store=None):  # every run finished, its accuracy fixed by its run id
        return pd.DataFrame([{"status": "finished", "mean_last_100": 0.2 + 0.6 * hashlib.sha256(
            s.resolve().run_id().encode()).digest()[0] / 255} for s in specs])

    monkeypatch.setattr(runner, "results_frame", frame)
    questions = since.page_claims()
    assert len(questions) == 2 * len(recipes_since.SINCE_METHODS)
    assert not {c.id for c in questions} & {c.id for c in all_claims()}
    for claim in questions:
        result = evaluate(claim, "small", None, (0,))
        assert result["verdict"] in RUN and result["counts"]["run"] == len(since.ALPHAS)
        for comparison in result["comparisons"]:
            assert comparison["seeds"] == list(CLAIM_SEEDS["small"]) and comparison["published"]["gap"] is None
            assert comparison["gap"] == pytest.approx(comparison["better"] - comparison["worse"], abs=1e-3)


def test_the_pages_verdict_box_counts_its_own_questions(monkeypatch):
    """No registry claim rests on the page, so its box reads its own questions' verdicts (the
    box the book build writes: flcore.site.reproduce), not "decides nothing"."""
    from flcore.report.page import verdict_box
    from flcore.reproduction.artifacts import get_artifact

    artifact = get_artifact("since-these-papers")
    assert artifact.kind == "page" and artifact.questions is since.page_claims
    assert "decides nothing" in verdict_box([], "small")
    results = [{"id": "q", "text": "X beats Y", "verdict": "fails", "comparisons": [], "reason": None}]
    box = verdict_box(results, "small")
    assert "fails" in box and "Of the 1 claim this page checks" in box and "decides nothing" not in box


@pytest.mark.slow
def test_the_pages_notebook_runs_at_the_smoke_scale(tmp_path):
    import nbformat
    import papermill

    out = tmp_path / "since.ipynb"
    env_before = os.environ.get("FLCORE_STORE")
    os.environ["FLCORE_STORE"] = str(tmp_path / "store")
    try:
        papermill.execute_notebook(str(ROOT / "notebooks" / "fedsam" / "since-these-papers.ipynb"), str(out),
                                   parameters={"scale": "smoke", "workers": 1}, kernel_name="python3",
                                   cwd=str(ROOT), progress_bar=False)
    finally:
        if env_before is None:
            os.environ.pop("FLCORE_STORE", None)
        else:
            os.environ["FLCORE_STORE"] = env_before
    shown = "\n".join(str(o.get("data", {}).get("text/markdown", "")) for c in nbformat.read(out, 4).cells
                      if c.cell_type == "code" for o in c.get("outputs", []))
    n = len(recipes_since.SINCE_METHODS)
    assert f"of the {2 * n} questions ({n} newer methods against FedSAM and FedAvg)" in shown
    for label in ("WIMA", "FedSWA", "FedMoSWA", "FedNSAM"):
        assert page_text(f"{label} is more accurate than FedSAM at alpha = 0 and 0.05") in shown
