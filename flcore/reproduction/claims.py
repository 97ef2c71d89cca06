"""The papers' headline claims as checkable comparisons, and their verdicts on our runs.

A claim (:mod:`flcore.reproduction.claim_registry`: each paper's ``claims.yaml``) compares
cells of a published table -- ``better`` should beat ``worse`` -- in a metric
(:mod:`flcore.reproduction.claim_metrics`).  At a scale, each comparison reads its two
cells' runs from the store at the seeds it reads (:mod:`flcore.reproduction.claim_specs`,
planned by :mod:`flcore.reproduction.seed_plan`; :mod:`flcore.reproduction.claim_cells`), is
decided by the rules of :mod:`flcore.reproduction.verdicts` (through
:mod:`flcore.reproduction.claim_compare`: margins, learning, the gap against the paper's),
and the claim's verdict comes from its distinct comparisons.  Nothing is trained here.

**Each distinct comparison once.**  Two listed comparisons that name the same runs and read
the same values from them (CIFAR-10 and CIFAR-100 at alpha = 0 below the paper scale) are
one comparison; a claim's verdict rests on its distinct comparisons, with the counts shown
("3 of 4 comparisons run: 2 hold, 1 inconclusive").  Across claims too: the same pair of
runs in the same metric counts for the first claim of the registry that lists it, and the
others refer to it (*counted in another claim*).  A claim made by a later source (``by``) is
never counted in another claim: reading the runs of the claim it contests the other way is
its point.

**Across the book** (:func:`evaluate_claims`): the claims' p go through Benjamini-Hochberg
(:func:`flcore.reproduction.verdicts.correct_claims`); each claim keeps ``verdict`` (at 5 %,
Holm within the claim) and gets ``verdict_corrected`` and its ``q``, and the headline
counts are given both ways (:func:`headline_counts`).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from flcore.reproduction.claim_cells import (  # noqa: F401  (the claims' cells, read from here too)
    CAPPED_PREFIX,
    CAPPED_REASON,
    CellValues,
    canonical_specs,
    capped_reason,
    cell_specs,
    cell_text,
    cell_values,
    is_capped_reason,
    labels_match,
    seed_of,
    untestable_reason,
)
from flcore.reproduction.claim_compare import (  # noqa: F401
    PAPER_MARGIN_FRACTION,
    STAND_IN_MARGINS,
    at_chance,
    compare,
    learn_margin_of,
    margin_of,
    size_of,
)
from flcore.reproduction.claim_metrics import (  # noqa: F401
    METRICS,
    SPREAD_SEEDS,
    Metric,
    metric_unit,
    never_reached,
    reference_pairs,
    reference_spread,
    register_metric,
    resolution_of,
    set_spread_reference,
    spread_specs,
)
from flcore.reproduction.claim_registry import (  # noqa: F401
    BY_FIELDS,
    By,
    Claim,
    Comparison,
    Margin,
    Seeds,
    all_claims,
    check_against,
    claims_by_artifact,
    contested_by,
    get_claim,
    later_claims,
)
from flcore.reproduction.claim_specs import (  # noqa: F401
    CLAIM_SEEDS,
    claim_specs,
    comparison_seeds,
    planned_seed_counts,
    planned_seeds,
    testable_cells,
    with_claim_seeds,
)
from flcore.reproduction.verdicts import (  # noqa: F401
    ALPHA,
    DECIDED,
    RUN,
    TESTED,
    VERDICT_TEXT,
    VERDICTS,
    claim_verdict,
    correct_claims,
    correct_within_claim,
    decide_comparison,
    rule_text,
)

#: The decision rule in words (the Claims page and every page's verdict table).
RULE_TEXT = rule_text()


def _distinct_key(result: dict, hi: CellValues, lo: CellValues):
    """Two listed comparisons are one when they name the same runs and read the same values
    (None -- never merged -- while a cell has no value)."""
    if not hi.values or not lo.values:
        return None
    return (tuple(sorted(hi.run_ids.items())), tuple(sorted(lo.run_ids.items())),
            tuple(sorted(hi.values.items())), tuple(sorted(lo.values.items())))


#: How a count of comparisons reads, per verdict.
_COUNT_WORDS = {"holds": "hold", "fails": "fail", "absent": "absent", "negligible": "negligible",
                "inconclusive": "inconclusive", "cannot_decide": "cannot decide at their seeds",
                "indicative": "indicative (fewer seeds than planned)",
                "at_chance": "not testable on the stand-in", "by_construction": "by construction"}


def counts_text(counts: dict) -> str:
    """``"3 of 4 comparisons run: 2 hold, 1 inconclusive"`` from a claim's ``counts``."""
    parts = [f"{counts[v]} {_COUNT_WORDS[v]}" for v in RUN if counts.get(v) and v in _COUNT_WORDS]
    text = f"{counts['run']} of {counts['distinct']} comparison{'s' if counts['distinct'] != 1 else ''} run"
    text += (": " + ", ".join(parts)) if parts else ""
    rest = [f"{counts[v]} {VERDICT_TEXT[v]}" for v in ("same_runs", "not_testable", "not_run") if counts.get(v)]
    if rest:
        text += "; " + ", ".join(rest)
    if counts["listed"] != counts["distinct"]:
        text += f" ({counts['listed']} listed, {counts['listed'] - counts['distinct']} the same runs as another)"
    return text


def _comparison_runs(claim: Claim, comparison: Comparison, scale: str, seeds: tuple[int, ...]):
    """``(metric, {better run ids, worse run ids})`` of a comparison the scale can test, read
    from its cells' specs (no store); None when a cell has no available run or the scale
    cannot test it."""
    cells = [cell_specs(claim, cell, scale, seeds)[0] for cell in comparison.cells_at(scale)]
    if not all(cells) or not all(s.available for specs in cells for s in specs):
        return None
    configs = [[s.resolve() for s in specs] for specs in cells]
    if untestable_reason(claim, comparison, configs[0] + configs[1], scale):
        return None
    return claim.metric, frozenset(tuple(sorted(c.run_id() for c in cfgs)) for cfgs in configs)


@lru_cache(maxsize=8)
def comparison_carriers(scale: str, seeds: tuple[int, ...]) -> dict:
    """``(metric, runs) -> claim id``: the first claim of the registry whose comparison reads
    those runs in that metric at ``scale`` -- the one claim they are evidence for (module
    docstring: each distinct comparison once, across claims too)."""
    out: dict = {}
    for claim in all_claims():
        if METRICS.get(claim.metric) is None or METRICS[claim.metric].by_construction or claim.by is not None:
            continue
        for comparison in claim.comparisons:
            key = _comparison_runs(claim, comparison, scale, seeds)
            if key is not None:
                out.setdefault(key, claim.id)
    return out


def _carrier(claim: Claim, comparison: Comparison, scale: str, seeds: tuple[int, ...]) -> str | None:
    """The claim listed earlier that counts ``comparison``'s runs, if one does."""
    if claim not in all_claims() or claim.by is not None:  # a later claim reads them too (module docstring)
        return None
    key = _comparison_runs(claim, comparison, scale, seeds)
    carrier = comparison_carriers(scale, seeds).get(key) if key is not None else None
    return carrier if carrier != claim.id else None


def evaluate(claim: Claim, scale: str, store=None, seeds: Sequence[int] = (0,)) -> dict:
    """The claim's verdict at ``scale`` from the runs in ``store`` (module docstring).

    Returns the fields of ``flcore claims --json``: ``id``, ``paper`` (whose artifact it
    concerns), ``by`` (who makes it: that paper's id, or a later source's citation),
    ``later_source`` (None, or the later source's ``citation``, ``quote`` and ``url``),
    ``against`` (the claim it contests, or None), ``text``, ``artifacts``, ``metric``,
    ``units``, ``direction``, ``source``, ``scale``, ``verdict``, ``verdict_text``, ``p``
    (the claim's: :func:`~flcore.reproduction.verdicts.claim_verdict`), ``counts`` (per
    verdict, with ``listed``, ``distinct`` and ``run``), ``summary`` (the counts in words),
    ``comparisons`` (the distinct ones: :func:`~flcore.reproduction.claim_compare.compare`'s
    fields, with ``listed`` -- the indices of the listed comparisons it stands for --,
    ``planned`` -- its planned seeds and why -- and, for one *counted in another claim*,
    ``counted_in`` and ``verdict_there``) and ``reason`` (why none was run, when none was, or
    which claim counts its runs); :func:`evaluate_claims` adds ``q`` and ``verdict_corrected``.
    """
    asked = set(seeds)
    distinct: list[dict] = []
    index_of: dict[Any, int] = {}
    for i, comparison in enumerate(claim.comparisons):
        plan = planned_seeds(claim, i, scale)
        read = sorted(asked | set(comparison_seeds(claim, i, scale)))
        better, worse = comparison.cells_at(scale)
        hi = cell_values(claim, better, scale, read, store)
        lo = cell_values(claim, worse, scale, read, store)
        result = compare(claim, comparison, hi, lo, scale, planned=plan.seeds)
        result["planned"] = {"seeds": plan.seeds, "reason": plan.reason, "paired_sd": plan.paired_sd,
                             "needed": plan.needed, "read": len(read)}
        key = _distinct_key(result, hi, lo)
        if key is not None and key in index_of:
            distinct[index_of[key]]["listed"].append(i)
            continue
        result["listed"] = [i]
        if key is not None:
            index_of[key] = len(distinct)
        if result["verdict"] in RUN and result["verdict"] != "by_construction":
            carrier = _carrier(claim, comparison, scale, tuple(read))
            if carrier is not None:
                result.update(counted_in=carrier, verdict_there=result["verdict"], verdict="same_runs",
                              reason=f"the same runs as a comparison of {carrier}, which counts them")
        distinct.append(result)
    correct_within_claim(distinct)
    for comparison in distinct:
        comparison["p_holm"] = None if comparison.get("p_holm") is None else round(comparison["p_holm"], 6)
    verdicts = [c["verdict"] for c in distinct]
    counts = {v: verdicts.count(v) for v in VERDICTS}
    counts.update(listed=len(claim.comparisons), distinct=len(distinct), run=sum(v in RUN for v in verdicts))
    verdict, p = claim_verdict(distinct)
    reasons = [c["reason"] for c in distinct if c["verdict"] not in RUN and c["reason"]]
    if verdict == "same_runs":
        carriers = sorted({c["counted_in"] for c in distinct if c.get("counted_in")})
        reasons = [f"its runs are evidence for {', '.join(carriers)}"]
    if verdict == "at_chance":
        reasons = [c["reason"] for c in distinct if c["verdict"] == "at_chance" and c["reason"]]
    evidence = [c for c in distinct if c["verdict"] in RUN and c["verdict"] not in ("by_construction", "at_chance")]
    text = VERDICT_TEXT[verdict]
    if verdict == "holds":
        text = f"holds: {len(evidence)} of {len(distinct)} settings run"
    later = None if claim.by is None else {"citation": claim.by.citation, "quote": claim.by.quote,
                                           "url": claim.by.url or None}
    return {"id": claim.id, "paper": claim.paper, "by": claim.paper if later is None else claim.by.citation,
            "later_source": later, "against": claim.against or None,
            "text": claim.text, "artifacts": list(claim.artifacts),
            "metric": claim.metric, "units": metric_unit(claim.metric), "direction": claim.direction,
            "source": claim.source, "scale": scale, "verdict": verdict, "verdict_text": text,
            "p": None if p is None else round(p, 6), "counts": counts,
            "summary": counts_text(counts), "comparisons": distinct,
            "reason": ("; ".join(dict.fromkeys(reasons)) if verdict in ("not_run", "not_testable", "same_runs",
                                                                         "at_chance") else None)}


def evaluate_claims(scale: str, store=None, seeds: Sequence[int] = (0,), papers: Iterable[str] | None = None,
                    artifact: str | None = None) -> list[dict]:
    """:func:`evaluate` for every claim (of ``papers``, or checked by ``artifact``); for every
    claim of the book (neither given), the book-level correction
    (:func:`~flcore.reproduction.verdicts.correct_claims`): each claim's ``q`` and
    ``verdict_corrected`` -- a subset gets none, its q would not be the book's."""
    wanted = set(papers) if papers else None
    out = []
    for claim in all_claims():
        if wanted is not None and claim.paper not in wanted:
            continue
        if artifact is not None and artifact not in claim.artifacts:
            continue
        out.append(evaluate(claim, scale, store, seeds))
    if wanted is not None or artifact is not None:
        return out
    correct_claims(out)
    for result in out:
        result["q"] = None if result["q"] is None else round(result["q"], 6)
    return out


def verdict_totals(results: Sequence[dict], corrected: bool = False) -> dict[str, int]:
    """How many claims of ``results`` have each verdict (``corrected``: after the book's
    correction, where the results have one)."""
    key = "verdict_corrected" if corrected else "verdict"
    return {v: sum(r.get(key, r["verdict"]) == v for r in results) for v in VERDICTS}


def headline_counts(results: Sequence[dict]) -> dict[str, dict[str, int]]:
    """``{"papers", "later", "book"}`` (the papers' own claims, later claims by other
    sources, the book's own questions) -> ``{"uncorrected": totals, "corrected": totals}``."""
    groups = {"papers": [r for r in results if not r.get("later_source") and not r.get("question")],
              "later": [r for r in results if r.get("later_source")],
              "book": [r for r in results if r.get("question")]}
    return {name: {"uncorrected": verdict_totals(rs), "corrected": verdict_totals(rs, corrected=True)}
            for name, rs in groups.items()}
