"""The runs the claims need: each comparison's seeds (planned by
:mod:`flcore.reproduction.seed_plan`, shared by the cells a comparison links), the runs the
claims' seeds add to the artifacts' (:func:`claim_specs`), and a page's runs with the seeds
its claims read (:func:`with_claim_seeds`).

**Seeds where claims need them.**  At the ``small`` scale a comparison of a claim whose
metric asks for seeds trains the seeds its plan gives (3 to 6: :mod:`flcore.reproduction.seed_plan`);
its two cells train the same seeds, so the cells linked by comparisons form groups that
train the most seeds any of their comparisons plans, and a page's table shows each cell
over the seeds every verdict reading it reads.  The claims whose ``claims.yaml`` says
``one_seed`` (and why), and the analyses of stored models, keep one seed -- save a
comparison with a cell another claim trains at more seeds, whose other cell gets them too.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from flcore.reproduction.artifacts import get_artifact
from flcore.reproduction.claim_cells import artifact_runs, canonical_specs, cell_specs, seed_of, untestable_reason
from flcore.reproduction.claim_metrics import METRICS, Metric
from flcore.reproduction.claim_registry import Claim, Comparison, all_claims
from flcore.reproduction.seed_plan import CAP as SEED_CAP
from flcore.reproduction.seed_plan import Planned, planned

#: The most seeds a claim's cell runs at each scale: each comparison's own are planned
#: (:mod:`flcore.reproduction.seed_plan`, :func:`planned_seeds`).
CLAIM_SEEDS = {"smoke": (0,), "small": tuple(range(SEED_CAP)), "paper": (0,)}


def testable_cells(claim: Claim, comparison: Comparison, scale: str, seeds: Sequence[int]) -> list | None:
    """The specs of both cells of ``comparison`` at ``seeds`` when the scale can test it."""
    cells = [cell_specs(claim, cell, scale, seeds)[0] for cell in comparison.cells_at(scale)]
    if not all(cells) or not all(s.available for specs in cells for s in specs):
        return None
    if untestable_reason(claim, comparison, [s.resolve() for specs in cells for s in specs], scale):
        return None
    return cells


def _seeded(claim: Claim) -> Metric | None:
    metric = METRICS.get(claim.metric)
    return None if metric is None or metric.by_construction or not metric.seeded else metric


def planned_seeds(claim: Claim, index: int, scale: str) -> Planned:
    """The seeds ``claim``'s listed comparison ``index`` plans at ``scale``
    (:mod:`flcore.reproduction.seed_plan`)."""
    return planned(claim, index, scale, METRICS.get(claim.metric))


def planned_seed_counts(scale: str) -> dict:
    """``{"cap", "comparisons"}``: the most seeds a comparison plans at ``scale`` and how many
    of the claims' comparisons plan each number of seeds (``{"6": 77, ...}``)."""
    counts: dict[str, int] = {}
    for claim in all_claims():
        for i in range(len(claim.comparisons)):
            n = str(planned_seeds(claim, i, scale).seeds)
            counts[n] = counts.get(n, 0) + 1
    ordered = dict(sorted(counts.items(), key=lambda kv: int(kv[0])))
    return {"cap": len(CLAIM_SEEDS.get(scale, (0,))), "comparisons": ordered}


@lru_cache(maxsize=4)
def _trained_seeds(scale: str) -> dict[str, int]:
    """Seeds trained per claim cell (by the run id of its seed-0 run): a comparison's two
    cells train the same seeds, so the cells linked by comparisons form groups, and each
    group trains the most seeds any of its comparisons plans.  A page's table then shows each
    cell's mean over the seeds every verdict reading it reads."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    wanted: dict[str, int] = {}
    for claim in all_claims():
        if _seeded(claim) is None or claim.one_seed:
            continue
        for i, comparison in enumerate(claim.comparisons):
            keys = _cell_keys(claim, comparison, scale)
            if not keys:
                continue
            for key in keys[1:]:
                parent[root(key)] = root(keys[0])
            n = planned_seeds(claim, i, scale).seeds
            for key in keys:
                wanted[key] = max(wanted.get(key, 1), n)
    most: dict[str, int] = {}
    for key, n in wanted.items():
        most[root(key)] = max(most.get(root(key), 1), n)
    return {key: most[root(key)] for key in wanted}


def _cell_keys(claim: Claim, comparison: Comparison, scale: str) -> list[str]:
    """The run ids of the seed-0 runs a comparison's cells read (none when the scale cannot
    test it): the runs its metric reads (:func:`canonical_specs`), timed or batched."""
    cells = testable_cells(claim, comparison, scale, (0,))
    if cells is None:
        return []
    timed = bool(METRICS[claim.metric].timed) if claim.metric in METRICS else False
    return [canonical_specs(specs, timed)[0].run_id() for specs in cells if specs]


def comparison_seeds(claim: Claim, index: int, scale: str) -> tuple[int, ...]:
    """The seeds a claim's comparison reads at ``scale``: those its cells train (the cells
    linked by comparisons train the most seeds any of them plans), at least its own planned
    ones; a claim that keeps one seed reads the seeds another claim trains its cells at
    (:func:`claim_specs`), up to :data:`CLAIM_SEEDS`."""
    if claim.one_seed or _seeded(claim) is None:
        return tuple(CLAIM_SEEDS.get(scale, (0,)))
    n = planned_seeds(claim, index, scale).seeds
    if len(CLAIM_SEEDS.get(scale, (0,))) <= 1:  # one seed at this scale: nothing links cells
        return tuple(range(n))
    trained = _trained_seeds(scale)
    n = max([n, *(trained.get(key, 1) for key in _cell_keys(claim, claim.comparisons[index], scale))])
    return tuple(range(n))


@lru_cache(maxsize=4)
def _many_seed_runs(scale: str) -> frozenset:
    """The run ids the claims that need seeds read at their planned seeds (every paper)."""
    out = set()
    for claim in all_claims():
        if _seeded(claim) is None or claim.one_seed:
            continue
        for i, comparison in enumerate(claim.comparisons):
            seeds = comparison_seeds(claim, i, scale)
            if len(seeds) <= 1:
                continue
            for specs in testable_cells(claim, comparison, scale, seeds) or []:
                out.update(spec.run_id() for spec in specs)
    return frozenset(out)


def claim_specs(scale: str, artifacts: Iterable[str] | None = None) -> list:
    """The runs the claims' seeds add at ``scale``: every cell of the claims (checked by
    ``artifacts``; default all) whose metric is ``seeded``, at the seeds its comparison plans
    (:func:`planned_seeds`), with the runs its metric reads beside it (``companions``), when
    the scale can test the comparison.  A claim that keeps one seed (``one_seed``, or a metric
    that is not ``seeded``: an analysis of each stored model) gets seeds only for a comparison
    one of whose cells another claim reads at more: both cells then have those seeds, so the
    page's table (one mean per cell) and the verdict (the seeds both cells ran) read the same
    runs, and the analysis of a model the book trains anyway is not left out.  Pending specs
    are left out."""
    if len(CLAIM_SEEDS.get(scale, (0,))) <= 1:
        return []
    wanted = None if artifacts is None else set(artifacts)
    many = _many_seed_runs(scale)
    out: dict[str, Any] = {}
    for claim in all_claims():
        if wanted is not None and not wanted & set(claim.artifacts):
            continue
        metric = METRICS.get(claim.metric)
        if metric is None or metric.by_construction:
            continue
        keeps_one = bool(claim.one_seed) or not metric.seeded
        for i, comparison in enumerate(claim.comparisons):
            seeds = CLAIM_SEEDS[scale] if keeps_one else comparison_seeds(claim, i, scale)
            cells = testable_cells(claim, comparison, scale, seeds)
            if cells is None:
                continue
            if keeps_one:  # the seeds another claim reads either cell at, for both cells
                shared = {seed_of(spec) for specs in cells for spec in specs if spec.run_id() in many}
                if not shared - {0}:
                    continue
                cells = [[spec for spec in specs if seed_of(spec) in shared] for specs in cells]
            for spec in cells[0] + cells[1]:
                for needed in [spec, *(metric.companions(spec) if metric.companions else [])]:
                    out.setdefault(needed.run_id(), needed)
    return list(out.values())


def _cell_of(spec) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in spec.labels.items() if k != "seed"))


def with_claim_seeds(specs: Sequence, scale: str, artifact_id: str) -> list:
    """``specs`` (an artifact page's runs) and, for each of their cells that a claim of the
    page reads at more seeds (:func:`claim_specs`), the runs of those seeds: a table built
    from them shows per cell the mean over the seeds the verdicts read, not seed 0 alone.
    Added per cell and seed, not per run: two cells may name one run (CIFAR-10 and CIFAR-100
    at alpha = 0 below the paper scale), and each row of the table needs it."""

    needed = {spec.run_id() for spec in claim_specs(scale, [artifact_id])}
    if not needed:
        return list(specs)
    out = list(specs)
    cells = {_cell_of(spec) for spec in specs}
    seen = {(_cell_of(spec), seed_of(spec)) for spec in specs}
    for spec in artifact_runs(get_artifact(artifact_id), scale, tuple(CLAIM_SEEDS[scale])):
        key = (_cell_of(spec), seed_of(spec))
        if key[0] in cells and key not in seen and spec.available and spec.run_id() in needed:
            seen.add(key)
            out.append(spec)
    return out
