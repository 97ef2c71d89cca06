"""What deciding each claim costs: the runs it needs and their price (``flcore claims --plan``).

A claim is decided by the runs of its comparisons' cells (:func:`flcore.reproduction.claims.cell_specs`)
at the seeds asked for -- :data:`DECIDE_SEEDS` unless told, the fewest that give a paired
comparison its own spread -- with the runs its metric reads beside each cell's (``companions``:
FedAvg's run on the same setting for a ratio to FedAvg).  A comparison the scale cannot test
(about another data set or model, a method not implemented yet) needs no run and is listed
with its reason; a claim by construction needs none.

A run two claims need is one run: :func:`plan_claims` counts it once in every total and
shows it, per claim, as *shared* (with which claims).  Each claim, each paper's claims
together and the book's are priced by :func:`flcore.reproduction.pricing.price_runs` -- the
pricing of ``flcore reproduce --plan``: runs already finished in the store are skipped, the
store growth is estimated per run, the hours per device kind come from the benchmark rows --
so a claim's price is what ``flcore claims --decide`` would train on its own, and a total is
the price of the union of its claims' runs (never the sum of their prices, which would count
a shared run twice).  Nothing trains, nothing is written.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from flcore.planning.spec import RunSpec
from flcore.reproduction.budget import DeviceRates
from flcore.reproduction.claims import METRICS, Claim, all_claims, cell_specs, untestable_reason
from flcore.reproduction.pricing import _size, price_runs

#: The seeds a claim is decided on unless told: three, the fewest with which a paired
#: comparison has its own spread (``n - 1 = 2`` degrees of freedom).
DECIDE_SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class ClaimRuns:
    """The distinct runs that decide ``claim`` (``specs``, each once, and their ``run_ids``)
    and, for each listed comparison that needs none here, why (``unpriced``)."""

    claim: Claim
    specs: tuple[RunSpec, ...]
    unpriced: tuple[str, ...] = ()
    run_ids: tuple[str, ...] = ()  # the specs' run ids, in their order


def claim_runs(claim: Claim, scale: str, seeds: Sequence[int] = DECIDE_SEEDS) -> ClaimRuns:
    """The runs that decide ``claim`` at ``scale`` and ``seeds`` (module docstring)."""
    metric = METRICS.get(claim.metric)
    if metric is None:
        return ClaimRuns(claim, (), (f"the metric {claim.metric} is not computed yet",))
    if metric.by_construction:
        return ClaimRuns(claim, (), ("by construction: the methods' definitions decide it, no run",))
    found: dict[str, RunSpec] = {}
    unpriced: list[str] = []
    for number, comparison in enumerate(claim.comparisons, 1):
        cells = []
        for cell in (comparison.better, comparison.worse):
            specs, reason = cell_specs(claim, cell, scale, seeds)
            if not specs:
                unpriced.append(f"comparison {number}: {reason}")
                break
            if not all(spec.available for spec in specs):
                unpriced.append(f"comparison {number}: a method is not implemented yet")
                break
            cells.append(specs)
        else:
            reason = untestable_reason(claim, comparison, [s.resolve() for specs in cells for s in specs], scale)
            if reason:
                unpriced.append(f"comparison {number}: {reason}")
                continue
            for spec in cells[0] + cells[1]:
                for needed in [spec, *(metric.companions(spec) if metric.companions else [])]:
                    found.setdefault(needed.run_id(), needed)
    return ClaimRuns(claim, tuple(found.values()), tuple(unpriced), tuple(found))


def _hours(price: dict[str, Any]) -> dict[str, float | None]:
    return {kind["kind"]: kind["hours"] for kind in price["devices"]}


def _priced(specs: Sequence[RunSpec], store, rates: dict[str, DeviceRates], max_rounds: int | None,
            device: str) -> dict[str, Any]:
    """``to_train``, ``store_bytes``, ``hours`` (by device kind) and the whole ``price``
    (:func:`~flcore.reproduction.pricing.price_runs`) of ``specs``."""
    price = price_runs(specs, store, rates, max_rounds=max_rounds, device=device)
    return {"to_train": price["runs"]["to_train"], "store_bytes": price["store_bytes"], "hours": _hours(price),
            "price": price}


def plan_claims(scale: str, store, rates: dict[str, DeviceRates], seeds: Sequence[int] = DECIDE_SEEDS,
                papers: Iterable[str] | None = None, max_rounds: int | None = None, device: str = "auto",
                claims: Sequence[Claim] | None = None) -> dict[str, Any]:
    """The plan of ``flcore claims --plan`` (module docstring) as a JSON-ready dict.

    ``claims`` (default: every claim of the registry, or of ``papers``) is a list of one
    object per claim: ``id``, ``paper``, ``text``, ``decide`` (the command that trains and
    decides it), ``distinct_runs`` (the runs it needs, each once), ``shared_runs`` (how many
    of them another claim of the plan needs too), ``shared_with`` (``{claim id: runs in
    common}``), ``run_ids``, ``unpriced`` (why a listed comparison needs no run here),
    ``to_train`` (its runs not yet finished in the store), ``store_bytes`` (what they add to
    the store), ``hours`` (``{device kind: hours on one machine of that kind}``, None where
    the kind has no benchmark rows) and ``price`` (the full price of ``flcore reproduce
    --plan --json``: runs, groups, hours and by-model split per device kind).  ``papers``
    maps each paper to the same fields for the union of its claims' runs (``claims``: how
    many, ``distinct_runs``: a run shared by two of its claims counted once), and ``book``
    gives them for every claim of the plan."""
    if claims is None:
        wanted = None if papers is None else set(papers)
        claims = [c for c in all_claims() if wanted is None or c.paper in wanted]
    seeds = tuple(seeds)
    needs = [claim_runs(claim, scale, seeds) for claim in claims]
    users: dict[str, list[str]] = {}
    for item in needs:
        for rid in item.run_ids:
            users.setdefault(rid, []).append(item.claim.id)
    seed_flag = ",".join(str(s) for s in seeds)
    rows = []
    for item in needs:
        ids = item.run_ids
        shared_with: dict[str, int] = {}
        for rid in ids:
            for other in users[rid]:
                if other != item.claim.id:
                    shared_with[other] = shared_with.get(other, 0) + 1
        command = f"flcore claims --decide {item.claim.id} --scale {scale}"
        if seeds != DECIDE_SEEDS:
            command += f" --seeds {seed_flag}"
        rows.append({"id": item.claim.id, "paper": item.claim.paper, "text": item.claim.text,
                     "decide": command if ids else None, "distinct_runs": len(ids),
                     "shared_runs": sum(len(users[rid]) > 1 for rid in ids), "shared_with": shared_with,
                     "run_ids": list(ids), "unpriced": list(item.unpriced),
                     **_priced(item.specs, store, rates, max_rounds, device)})
    by_paper: dict[str, dict[str, Any]] = {}
    for paper in dict.fromkeys(item.claim.paper for item in needs):
        mine = [item for item in needs if item.claim.paper == paper]
        by_paper[paper] = _total(mine, store, rates, max_rounds, device)
    return {"scale": scale, "seeds": list(seeds), "max_rounds": max_rounds, "claims": rows, "papers": by_paper,
            "book": _total(needs, store, rates, max_rounds, device)}


def _total(needs: Sequence[ClaimRuns], store, rates, max_rounds, device) -> dict[str, Any]:
    union: dict[str, RunSpec] = {}
    for item in needs:
        for spec, rid in zip(item.specs, item.run_ids):
            union.setdefault(rid, spec)
    return {"claims": len(needs), "distinct_runs": len(union),
            **_priced(list(union.values()), store, rates, max_rounds, device)}


def price_line(row: dict[str, Any]) -> str:
    """A claim's price in words (the Claims page): ``"12 runs (6 shared with 4 other claims),
    about 51.5 h on CPU, 2 cores; 1.4 h on NVIDIA H100 80GB HBM3, the store grows by 120.3 MB"``
    (the claims sharing runs named when they are at most two)."""
    if not row["distinct_runs"]:
        return "no run to train" + (f" ({row['unpriced'][0]})" if row["unpriced"] else "")
    text = f"{row['distinct_runs']} run{'s' if row['distinct_runs'] != 1 else ''}"
    if row["shared_runs"]:
        others = sorted(row["shared_with"])
        named = ", ".join(others) if len(others) <= 2 else f"{len(others)} other claims"
        text += f" ({row['shared_runs']} shared with {named})"
    if row["to_train"] != row["distinct_runs"]:
        text += f", {row['to_train']} still to train"
    hours = [f"{h:,.1f} h on {kind}" for kind, h in row["hours"].items() if h is not None]
    if hours and row["to_train"]:
        text += ", about " + "; ".join(hours)
    if row["store_bytes"]:
        text += f", the store grows by {size_text(row['store_bytes'])}"
    return text



def size_text(n: int) -> str:
    """``"1.2 GB"``: a byte count as ``--plan`` prints it (decimal units)."""
    return _size(n)
