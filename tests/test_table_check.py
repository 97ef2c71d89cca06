"""Every claim's gap is the difference of its two cells as the page's table prints them
(:mod:`flcore.reproduction.table_check`), for every claim of the registry at ``smoke`` and
``small``, on a generated store: the runs the book trains (every page's runs, the claims'
seeds and the reference pairs), each finished with values drawn from its run id in every
metric; a run the book does not train is not in it."""
from __future__ import annotations

import argparse
import dataclasses
import hashlib

import pandas as pd
import pytest

from flcore.reproduction import claims as claims_module
from flcore.reproduction import runner, table_check
from flcore.reproduction.artifacts import artifact_ids, get_artifact, runs_for
from flcore.reproduction.claims import METRICS, all_claims, evaluate_claims
from flcore.reproduction.table_check import disagreements


def _draw(run_id: str, at: int) -> float:
    digest = hashlib.sha256(run_id.encode()).digest()
    return int.from_bytes(digest[at:at + 4], "big") / 2 ** 32


@pytest.fixture
def generated_store(monkeypatch):
    """``scale -> diverged``: installs the generated store of ``scale`` (module docstring)
    and every metric read from it (an accuracy from ``mean_last_100``, any other from
    ``value``, 1 to 10), so that every claim the scale can test has a gap; the run ids added
    to ``diverged`` finish as diverged."""
    diverged: set[str] = set()

    def install(scale: str) -> set[str]:
        planned = {s.run_id() for s in runs_for(artifact_ids(), scale) + claims_module.claim_specs(scale)
                   + claims_module.spread_specs(scale) if s.available}

        def frame(specs, store=None):
            rows = []
            for spec in specs:
                run_id = spec.resolve().run_id()
                status = "diverged" if run_id in diverged else "finished" if run_id in planned else "new"
                rows.append({**spec.labels, "status": status, "mean_last_100": 0.2 + 0.6 * _draw(run_id, 0),
                             "value": 1.0 + 9.0 * _draw(run_id, 4)})
            return pd.DataFrame(rows)

        monkeypatch.setattr(runner, "results_frame", frame)
        for name, metric in list(METRICS.items()):
            if metric.by_construction or name == "accuracy":
                continue
            read = (lambda row: 100.0 * row["mean_last_100"]) if metric.accuracy else (lambda row: row.get("value"))
            monkeypatch.setitem(METRICS, name, dataclasses.replace(metric, function=read))
        return diverged

    return install


def _claims_with_a_gap(results) -> set[str]:
    """The claims with a gap read from runs (one by construction reads the methods' definitions)."""
    return {r["id"] for r in results if any(c["gap"] is not None for c in r["comparisons"])
            and not METRICS[r["metric"]].by_construction}


@pytest.mark.parametrize("scale", ["smoke", "small"])
def test_every_claims_gap_is_the_difference_of_its_cells_as_its_page_prints_them(generated_store, scale):
    generated_store(scale)
    results = evaluate_claims(scale)
    check = disagreements(results, scale)
    assert check.failures == []
    with_gap = _claims_with_a_gap(results)
    assert {claim for claim, _ in check.checked} == with_gap  # every claim the scale decides
    assert len(with_gap) >= 40 and len(check.checked) >= 110
    # a claim no scale below the paper's can test has no gap to check: it says why
    untested = [r for r in results if r["id"] not in with_gap]
    assert all(r["reason"] or r["verdict"] == "by_construction" for r in untested)


@pytest.mark.parametrize("scale", ["smoke", "small"])
def test_every_page_that_shows_a_claims_cell_reads_the_seeds_its_verdict_reads(scale):
    # the table check above compares a claim with its first page; a later page (a figure, an
    # appendix table) that draws the same cells from seed 0 alone would still show other runs
    # than the verdict: every page whose cells a claim reads at more seeds reads them too
    from flcore.reproduction.claims import with_claim_seeds

    own = {a: get_artifact(a).runs(scale, (0,)) for a in artifact_ids()}
    more = {a for a, specs in own.items() if len(with_claim_seeds(specs, scale, a)) > len(specs)}
    if scale == "smoke":  # one claim seed: nothing to add
        assert more == set()
    else:
        assert len(more) >= 25
        assert more <= _pages_reading_the_claims_seeds()


def test_a_notebook_reads_the_claims_seeds_through_the_pages_runs():
    assert table_check.code_reads_claim_seeds("runs = page.runs()")
    assert table_check.code_reads_claim_seeds('runs = page.train("figure")')
    assert not table_check.code_reads_claim_seeds("runs = ensure_runs(page.artifact.runs(scale, seeds))")


def _pages_reading_the_claims_seeds() -> set[str]:
    return {a for a in artifact_ids() if table_check.reads_claim_seeds(get_artifact(a))}


def _without_the_claims_seeds(monkeypatch, page: str) -> None:
    """``page``'s notebook builds its tables from seed 0 alone (as before it read the claims' seeds)."""
    reads = table_check.reads_claim_seeds
    monkeypatch.setattr(table_check, "reads_claim_seeds",
                        lambda artifact, root=table_check.ROOT: artifact.id != page and reads(artifact, root))


def test_a_page_whose_table_reads_other_runs_than_its_verdict_fails(generated_store, monkeypatch):
    # FedSAM Table 2 reads the claims' three seeds; built from seed 0 alone, its cells are not
    # the verdicts' and every FedSAM accuracy claim it prints is named
    generated_store("small")
    results = evaluate_claims("small", papers=["fedsam"])
    assert disagreements(results, "small").failures == []
    _without_the_claims_seeds(monkeypatch, "fedsam-table-2")
    failures = disagreements(results, "small").failures
    named = {line.split(",")[0] for line in failures}
    on_table_2 = {c.id for c in all_claims() if c.paper == "fedsam" and c.artifacts[0] == "fedsam-table-2"
                  and METRICS[c.metric].accuracy}
    assert on_table_2 and on_table_2 & named
    assert all("they read other runs" in line for line in failures)
    # and at smoke, where every page and verdict read seed 0, nothing changes
    generated_store("smoke")
    assert disagreements(evaluate_claims("smoke", papers=["fedsam"]), "smoke").failures == []


def test_a_comparison_with_a_diverged_seed_is_checked_on_the_seeds_both_cells_finished(generated_store):
    diverged = generated_store("small")
    claim = claims_module.get_claim("fedsam-sam-improves-fedavg")
    cell = claim.comparisons[0].worse
    (spec,) = [s for s in claims_module.cell_specs(claim, cell, "small", (1,))[0] if s.labels["seed"] == 1]
    diverged.add(spec.resolve().run_id())
    result = claims_module.evaluate(claim, "small")
    first = next(c for c in result["comparisons"] if 0 in c["listed"])
    assert first["seeds"] == [0, 2, 3, 4, 5] and first["left_out"]["worse"] == [1]
    check = disagreements([result], "small")
    assert check.failures == [] and (claim.id, 0) in check.left_out


def test_the_book_build_fails_when_a_table_and_its_verdict_disagree(generated_store, monkeypatch, capsys, tmp_path):
    from flcore.cli import reproduce as cli

    generated_store("small")
    monkeypatch.setattr(cli, "evaluate_claims", lambda scale, store, seeds: evaluate_claims(scale, papers=["fedsam"]))
    args = argparse.Namespace(scale="small", store=str(tmp_path), seeds=[0], root=str(table_check.ROOT))
    assert cli.tables_agree_with_verdicts(args) is True
    _without_the_claims_seeds(monkeypatch, "fedsam-table-2")
    assert cli.tables_agree_with_verdicts(args) is False
    assert "flcore: error: a table and its verdict read different runs: fedsam-" in capsys.readouterr().err
