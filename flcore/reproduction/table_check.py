"""Tables and verdicts read the same runs: for every comparison a claim decides, the gap it
reports is the difference of its two cells as the page's table prints them.

The page of a cell is the one whose runs the verdict reads (:func:`~flcore.reproduction.claims.cell_specs`:
the claim's first artifact that runs it).  That page's table shows, per cell, the mean of
the claim's metric over the runs it reads -- its runs at the page's seeds, with the
claims' seeds of its cells where its notebook reads them
(:meth:`flcore.report.page.Page.specs`) -- leaving diverged runs out, as
:func:`flcore.report.ours_accuracy` does, and prints it to :data:`PRINTED_DIGITS` decimals.
:func:`disagreements` recomputes those two printed numbers and names every comparison whose
gap is not their difference to the printed precision: a page whose table reads other runs
than its verdict (seed 0 beside a three-seed verdict) is caught, by the tests on a
generated store and by the book build on the real one (``flcore book`` fails).

Every page whose cells a claim reads at more seeds reads them too (its notebook trains the
page's own runs, ``page.runs()``; the tests check every page, not only a claim's first), so
no page shows seed 0 beside a three-seed verdict.

A comparison with a diverged run left out reads only the seeds both cells finished (its
note says so, with n), while the table prints each cell over its own finished seeds: such a
comparison is checked on those seeds and counted apart (``left_out``).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from flcore.reproduction import runner
from flcore.reproduction.artifacts import artifact_ids, get_artifact
from flcore.reproduction.claims import (
    METRICS,
    get_claim,
    labels_match,
    seed_of,
    with_claim_seeds,
)

#: Decimals the pages print a cell's mean and a gap with (:func:`flcore.report.tables.format_comparison`).
PRINTED_DIGITS = 2
#: What in a notebook's code says its tables read the claims' seeds: the page's own runs
#: (``page.runs()``, ``page.train()`` or ``page.specs()``: :meth:`flcore.report.page.Page.specs` adds them), or
#: the claims' seeds added by hand.
READS_CLAIM_SEEDS = ("page.runs()", "page.train(", "page.specs()", "with_claim_seeds(")
# The repository root (holds notebooks/); not documented: its value is this machine's path.
ROOT = Path(__file__).resolve().parents[2]


def code_reads_claim_seeds(code: str) -> bool:
    """Whether notebook ``code`` builds its tables from the seeds the verdicts read
    (:data:`READS_CLAIM_SEEDS`)."""
    return any(marker in code for marker in READS_CLAIM_SEEDS)


def reads_claim_seeds(artifact, root: Path | None = None) -> bool:
    """Whether ``artifact``'s notebook builds its tables from the seeds the verdicts read
    (``root``: the repository, default: the repository this module is in)."""
    path = Path(root or ROOT) / artifact.notebook_path
    return path.is_file() and code_reads_claim_seeds(path.read_text(encoding="utf-8"))


def page_specs(artifact, scale: str, seeds: Sequence[int] = (0,), root: Path | None = None) -> list:
    """The runs ``artifact``'s page reads at ``scale``: its runs at ``seeds`` and, where its
    notebook reads them, the claims' seeds of its cells."""
    specs = list(artifact.runs(scale, tuple(seeds)))
    return with_claim_seeds(specs, scale, artifact.id) if reads_claim_seeds(artifact, root) else specs


@dataclass
class TableCheck:
    """What :func:`disagreements` compared: ``checked`` comparisons (claim id, index),
    those among them with a diverged run left out, and the ``failures`` in words."""

    checked: list[tuple[str, int]] = field(default_factory=list)
    left_out: list[tuple[str, int]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def _page_of(claim, cell: dict, scale: str):

    known = set(artifact_ids())
    for artifact_id in claim.artifacts:
        if artifact_id in known and any(labels_match(s.labels, cell)
                                        for s in get_artifact(artifact_id).runs(scale, (0,))):
            return get_artifact(artifact_id)
    return None


def printed_cell(claim, cell: dict, specs: Sequence, store=None, only_seeds: Sequence[int] | None = None,
                 digits: int = PRINTED_DIGITS) -> float | None:
    """The mean of ``claim``'s metric over the finished runs of ``specs`` in ``cell`` (each
    run once; a timed metric's timed runs), rounded as the page prints it; None when none
    has a value.  ``only_seeds``: read those seeds only."""

    metric = METRICS[claim.metric]
    mine: dict[str, object] = {}
    for spec in specs:
        if not labels_match(spec.labels, cell) or (metric.timed and not spec.config.get("timed")):
            continue
        if only_seeds is not None and seed_of(spec) not in only_seeds:
            continue
        mine.setdefault(spec.resolve().run_id(), spec)
    if not mine:
        return None
    values = []
    for row in runner.results_frame(list(mine.values()), store).to_dict("records"):
        if row["status"] == "finished":
            value = metric.function(row)
            if value is not None and math.isfinite(float(value)):
                values.append(float(value))
    return round(sum(values) / len(values), digits) if values else None


def disagreements(results: Sequence[dict], scale: str, store=None, seeds: Sequence[int] = (0,),
                  root: Path | None = None) -> TableCheck:
    """For every comparison of ``results`` (:func:`~flcore.reproduction.claims.evaluate`'s)
    with a gap, its two cells as their page prints them and whether the gap is their
    difference to :data:`PRINTED_DIGITS` decimals (module docstring)."""
    check = TableCheck()
    tolerance = 10 ** -PRINTED_DIGITS + 1e-9  # two roundings of the same numbers
    pages: dict[str, list] = {}
    for result in results:
        claim = get_claim(result["id"])
        metric = METRICS.get(claim.metric)
        if metric is None or metric.by_construction:
            continue
        for comparison in result["comparisons"]:
            if comparison.get("gap") is None:
                continue
            listed = claim.comparisons[comparison["listed"][0]]
            left = any(comparison.get("left_out", {}).values())
            only = comparison["seeds"] if left else None
            printed = {}
            for side, cell in zip(("better", "worse"), listed.cells_at(scale)):
                page = _page_of(claim, cell, scale)
                if page is None:
                    break
                if page.id not in pages:
                    pages[page.id] = page_specs(page, scale, seeds, root)
                printed[side] = printed_cell(claim, cell, pages[page.id], store, only)
            key = (claim.id, comparison["listed"][0])
            check.checked.append(key)
            if left:
                check.left_out.append(key)
            if len(printed) < 2 or None in printed.values():
                check.failures.append(f"{claim.id}, comparison {key[1] + 1}: a cell is not on its page's table")
                continue
            shown = round(printed["better"] - printed["worse"], PRINTED_DIGITS)
            if abs(shown - round(comparison["gap"], PRINTED_DIGITS)) > tolerance:
                check.failures.append(
                    f"{claim.id}, comparison {key[1] + 1}: the gap is {comparison['gap']:+.{PRINTED_DIGITS}f} but the "
                    f"page's table prints {printed['better']:.{PRINTED_DIGITS}f} and "
                    f"{printed['worse']:.{PRINTED_DIGITS}f} ({shown:+.{PRINTED_DIGITS}f}): they read other runs")
    return check

