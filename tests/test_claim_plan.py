"""``flcore claims --plan`` and ``flcore claims --decide``: what deciding a claim costs, and
deciding one end to end (:mod:`flcore.reproduction.claim_plan`, :mod:`flcore.cli.claim_commands`)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import flcore  # noqa: F401 - registers the papers' artifacts and metrics
from flcore.cli.main import main
from flcore.papers.fedsam.runs import sam_main_run
from flcore.reproduction.artifacts import ARTIFACTS, Artifact
from flcore.reproduction.budget import load_device_rates
from flcore.reproduction.claim_plan import claim_runs, plan_claims
from flcore.reproduction.claims import Claim, Comparison, all_claims, evaluate_claims
from flcore.reproduction.pricing import price_runs, run_store_bytes
from flcore.reproduction.runner import ensure_runs
from flcore.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
RATES = load_device_rates(ROOT / "benchmarks" / "results")
ARTIFACT = "test-claim-plan"
SETTING = {"dataset": ["cifar10", "cifar100"], "model": "cnn"}


def _runs(scale, seeds=(0,)):
    return [sam_main_run("CIFAR-10", algorithm, 0.0, 5, seed, scale)
            for algorithm in ("FedAvg E=1", "FedSAM", "FedASAM") for seed in seeds]


def _claim(claim_id: str, better: str, worse: str) -> Claim:
    return Claim(id=claim_id, paper="fedsam", text=f"{better} beats {worse}", quote="", artifacts=(ARTIFACT,),
                 source="a test", metric="accuracy", direction="higher",
                 comparisons=(Comparison({"algorithm": better, "alpha": 0.0}, {"algorithm": worse, "alpha": 0.0},
                                         70.0, 65.0),),
                 about=dict(SETTING), main_setting=dict(SETTING))


@pytest.fixture
def two_claims(monkeypatch):
    """Two claims of one test artifact that share FedAvg's cell: FedSAM > FedAvg and FedASAM > FedAvg."""
    monkeypatch.setitem(ARTIFACTS, ARTIFACT, Artifact(ARTIFACT, "fedsam", _runs, page_title="a test table"))
    return [_claim("test-sam", "FedSAM", "FedAvg E=1"), _claim("test-asam", "FedASAM", "FedAvg E=1")]


def test_a_run_two_claims_need_is_counted_once_and_shown_shared(two_claims, tmp_path):
    """Hand count: each claim needs its 2 cells x 3 seeds = 6 runs, 3 of them (FedAvg's) the
    other claim's too; the paper and the book need 3 + 3 + 3 = 9 distinct runs, and the store
    grows by the bytes of those 9 runs, FedAvg's counted once."""
    plan = plan_claims("smoke", tmp_path / "store", RATES, claims=two_claims)
    sam, asam = plan["claims"]
    fedavg = {spec.run_id() for spec in _runs("smoke", (0, 1, 2))[:3]}
    assert (sam["distinct_runs"], sam["shared_runs"], sam["shared_with"]) == (6, 3, {"test-asam": 3})
    assert (asam["distinct_runs"], asam["shared_runs"], asam["shared_with"]) == (6, 3, {"test-sam": 3})
    assert set(sam["run_ids"]) & set(asam["run_ids"]) == fedavg
    assert sam["decide"] == "flcore claims --decide test-sam --scale smoke"
    every = {spec.run_id(): spec.resolve() for spec in _runs("smoke", (0, 1, 2))}
    assert len(every) == 9
    for total in (plan["book"], plan["papers"]["fedsam"]):
        assert (total["claims"], total["distinct_runs"], total["to_train"]) == (2, 9, 9)
        assert total["store_bytes"] == sum(run_store_bytes(cfg) for cfg in every.values())
        assert total["store_bytes"] == sam["store_bytes"] + asam["store_bytes"] - sum(
            run_store_bytes(every[rid]) for rid in fedavg)
    # the price is reproduce --plan's: its pricing of the 9 runs, hours per device kind included
    assert plan["book"]["price"] == price_runs(_runs("smoke", (0, 1, 2)), tmp_path / "store", RATES)
    assert plan["book"]["hours"] == {k["kind"]: k["hours"] for k in plan["book"]["price"]["devices"]}
    assert all(k["priced_runs"] == 9 for k in plan["book"]["price"]["devices"] if k["calibrated"])


def test_a_finished_run_is_not_priced_again(two_claims, tmp_path):
    """A claim's price counts only what is not in the store yet (reproduce --plan's rule)."""
    store = tmp_path / "store"
    frame = ensure_runs(_runs("smoke", (0,))[:1], store, workers=1, log=None)  # FedAvg, seed 0: both claims'
    assert list(frame["status"]) == ["finished"]
    plan = plan_claims("smoke", store, RATES, claims=two_claims)
    assert [row["to_train"] for row in plan["claims"]] == [5, 5]
    assert (plan["book"]["distinct_runs"], plan["book"]["to_train"]) == (9, 8)


def test_a_claim_by_construction_or_untestable_needs_no_run():
    by_construction = next(c for c in all_claims() if c.metric == "backprops_per_step")
    assert claim_runs(by_construction, "paper").specs == ()
    assert "by construction" in claim_runs(by_construction, "paper").unpriced[0]


def test_plan_json_prices_every_claim_and_its_totals_are_the_union(tmp_path, capsys):
    """``--plan --json``: one object with the documented fields; a claim's run ids are its
    ``distinct_runs``, its ``shared_runs`` those another claim lists too, each paper's and the
    book's ``distinct_runs`` the size of the union of its claims' run ids."""
    store = tmp_path / "store"
    assert main(["claims", "--scale", "smoke", "--plan", "--json", "--paper", "fedsam", "fedima",
                 "--store", str(store), "--root", str(ROOT)]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert not store.exists()  # --plan writes nothing
    assert set(plan) == {"scale", "seeds", "max_rounds", "claims", "papers", "book"}
    assert (plan["scale"], plan["seeds"], plan["max_rounds"]) == ("smoke", [0, 1, 2], None)
    ids = [c.id for c in all_claims() if c.paper in ("fedsam", "fedima")]
    assert [row["id"] for row in plan["claims"]] == ids
    fields = {"id", "paper", "text", "decide", "distinct_runs", "shared_runs", "shared_with", "run_ids", "unpriced",
              "to_train", "store_bytes", "hours", "price"}
    owners: dict[str, set] = {}
    for row in plan["claims"]:
        assert set(row) == fields
        assert len(row["run_ids"]) == len(set(row["run_ids"])) == row["distinct_runs"]
        for rid in row["run_ids"]:
            owners.setdefault(rid, set()).add(row["id"])
        assert set(row["hours"]) == {k["kind"] for k in row["price"]["devices"]}
        assert row["price"]["runs"]["distinct"] == row["distinct_runs"]
    for row in plan["claims"]:
        assert row["shared_runs"] == sum(len(owners[rid]) > 1 for rid in row["run_ids"])
        assert sum(row["shared_with"].values()) == sum(len(owners[rid]) - 1 for rid in row["run_ids"])
    for paper in ("fedsam", "fedima"):
        mine = {rid for row in plan["claims"] if row["paper"] == paper for rid in row["run_ids"]}
        total = plan["papers"][paper]
        assert set(total) == {"claims", "distinct_runs", "to_train", "store_bytes", "hours", "price"}
        assert total["distinct_runs"] == total["to_train"] == len(mine)
    assert plan["book"]["distinct_runs"] == len(owners) == sum(p["distinct_runs"] for p in plan["papers"].values())
    assert plan["book"]["store_bytes"] == sum(p["store_bytes"] for p in plan["papers"].values())


@pytest.mark.parametrize("argv, says", [
    (["--decide", "no-such-claim"], "unknown claim; allowed values: fedsam-heterogeneity-costs-accuracy"),
    (["--decide", "fedsam-sam-improves-fedavg", "--seeds", "0,-1"], "seeds are whole numbers >= 0"),
    (["--decide", "fedsam-sam-improves-fedavg", "--seeds", "0,one"], "expected whole numbers >= 0"),
    (["--decide", "fedsam-sam-improves-fedavg", "--seeds", "0,1,1"], "seed 1 given twice"),
    (["--decide", "fedsam-sam-improves-fedavg", "--plan"], "give --plan or --decide CLAIM_ID, not both"),
    (["--max-rounds", "3"], "--max-rounds goes with --plan or --decide"),
])
def test_bad_input_is_one_line_and_exit_2_before_any_compute(argv, says, tmp_path, capsys):
    store = tmp_path / "store"
    try:
        code = main(["claims", "--scale", "smoke", "--store", str(store), *argv])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and says in err
    assert not store.exists()


@pytest.mark.slow
def test_decide_trains_one_claim_and_prints_its_verdict_a_capped_preview_continuing(tmp_path, capsys):
    """``--decide`` at the smoke scale: a capped preview first (not checked, runs stopped at the
    cap), then the same command without the cap continues those runs to the end and prints
    the verdict the store gives; a third call trains nothing."""
    claim = "fedsam-sam-improves-fedavg"
    store = tmp_path / "store"
    argv = ["claims", "--decide", claim, "--scale", "smoke", "--store", str(store), "--workers", "1",
            "--root", str(ROOT)]
    assert main(argv + ["--max-rounds", "2"]) == 0
    preview = capsys.readouterr().out
    assert "6 run(s) on seeds 0, 1, 2 at the smoke scale, capped at 2 rounds" in preview
    assert f"{claim}: 6 capped" in preview
    verdict_line = next(line for line in preview.splitlines() if line.startswith(claim + "  "))
    assert "not checked: 2 of" in verdict_line and "holds" not in verdict_line and "fails" not in verdict_line
    runs = RunStore(store)
    ids = claim_runs(next(c for c in all_claims() if c.id == claim), "smoke").run_ids
    assert all(runs.run(rid).status()["status"] == "capped" for rid in ids)

    assert main(argv) == 0
    out = capsys.readouterr().out
    assert all(runs.run(rid).status()["status"] == "finished" for rid in ids)
    assert all(runs.run(rid).status()["rounds_done"] == runs.run(rid).config()["rounds"] for rid in ids)
    verdict = next(r for r in evaluate_claims("smoke", store, [0, 1, 2]) if r["id"] == claim)
    assert verdict["verdict"] != "not_run"
    lines = [line for line in out.splitlines() if line.startswith(claim + "  ")]
    assert len(lines) == 1 and verdict["summary"] in lines[0]
    assert out.rstrip().endswith(f"1 the papers' own claims at the smoke scale: 1 {_verdict_text(verdict['verdict'])}")

    assert main(argv) == 0
    again = capsys.readouterr().out
    assert "training" not in again and f"{claim}: 6 finished" in again


def _verdict_text(verdict: str) -> str:
    from flcore.reproduction.claims import VERDICT_TEXT

    return VERDICT_TEXT[verdict]


def _result(claim_id: str) -> dict:
    return {"id": claim_id, "paper": "fedsam", "text": f"claim {claim_id}", "artifacts": ["fedsam-table-2"],
            "verdict": "holds", "metric": "accuracy", "units": "points", "reason": None,
            "summary": "1 of 1 comparison run", "comparisons": [
                {"cells": {"better": {"algorithm": "A"}, "worse": {"algorithm": "B"}}, "published": {"gap": 5.0},
                 "verdict": "holds", "gap": 3.0, "units": "points", "seeds": [0, 1, 2], "sd": 0.5,
                 "sd_from": "paired seeds", "threshold": 1.24, "mde": 2.0, "reason": None}]}


def test_the_claims_page_prices_each_claim_on_a_line_under_its_verdict_not_in_a_column(two_claims, tmp_path):
    """Beside each verdict, the claim's price (its runs, the shared ones, the store growth, the
    command that decides it); the comparison table keeps its six columns (the verdict in view at
    1280 px); above the claims, the book's total to decide every claim."""
    from flcore.reproduction.claim_plan import price_line
    from flcore.site.pages import claims_page

    plan = plan_claims("smoke", tmp_path / "store", RATES, claims=two_claims)
    prices = {row["id"]: price_line(row) + f"; `{row['decide']}`" for row in plan["claims"]}
    page = claims_page([_result("test-sam"), _result("test-asam")], tmp_path, "small", (prices, plan["book"]))
    from flcore.report.escaping import page_text
    blocks = page.split(f"**{page_text('claim test-sam')}**: **holds**")[1]
    lead, price, table = blocks.split("\n\n")[:3]
    assert price.startswith("*To decide it at the paper scale:* 6 runs (3 shared with test-asam), ")
    assert "the store grows by " in price and price.endswith("`flcore claims --decide test-sam --scale smoke`.")
    assert table.splitlines()[0].count("|") == 7 and table.splitlines()[0].rstrip().endswith("| verdict |")
    assert "Every claim together: 9 distinct runs (a shared run once), 9 not yet in the store" in page


@pytest.mark.slow
def test_every_claim_has_its_paper_scale_price_on_the_claims_page(tmp_path):
    from flcore.site.pages import paper_prices

    prices, book = paper_prices(ROOT, tmp_path / "store")
    assert set(prices) == {c.id for c in all_claims()}
    with_runs = [text for text in prices.values() if "`flcore claims --decide " in text]
    assert len(with_runs) >= len(prices) - 3 and all(" on NVIDIA" in text for text in with_runs)
    assert book["distinct_runs"] == book["to_train"] > max(int(t.split(" run")[0]) for t in with_runs)



def _fedgf_target(spec):
    from flcore.papers.fedgf.runs import gf_run

    labels = spec.labels
    return gf_run(labels["dataset"], "FedAvg", labels["alpha"], labels["clients_per_round"], labels["seed"], "paper")


def _fedgloss_reference(spec):
    from flcore.papers.fedgloss.results import reference_spec

    return reference_spec(spec.labels, "paper", spec.labels["seed"])


@pytest.mark.parametrize("metric, read", [("communication", _fedgf_target), ("relative_bits", _fedgloss_reference),
                                          ("speedup", _fedgloss_reference)])
def test_a_claim_needs_the_runs_its_metric_reads_beside_its_cells(metric, read):
    """A metric that reads FedAvg's run on the same setting and seed (FedGF's transmissions to
    FedAvg's accuracy, FedGloSS's bits and speed-up to it) makes that run one of the claim's:
    ``--decide`` must train it, or the metric has nothing to read."""
    from flcore.reproduction.claims import cell_specs

    claim = next(c for c in all_claims() if c.metric == metric)
    needed = set(claim_runs(claim, "paper").run_ids)
    cells = [spec for comparison in claim.comparisons for cell in (comparison.better, comparison.worse)
             for spec in cell_specs(claim, cell, "paper", (0, 1, 2))[0]]
    assert {s.labels["seed"] for s in cells} == {0, 1, 2}
    reads = {read(spec).run_id() for spec in cells}
    assert reads <= needed
    assert {read(spec).method for spec in cells} == {"fedavg"}
