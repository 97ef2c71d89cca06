"""The cells a claim compares: their runs at a scale and seeds, their per-seed values read
from the store, and what a scale can test.

**Cells.**  A cell is a set of run labels; its runs are those of the first of the claim's
artifacts that runs it (:func:`cell_specs`), one canonical run per seed
(:func:`canonical_specs`: the run trained in its batch, as the artifact's tables read it;
the timed twin, trained alone, only for a timed metric or a seed with no other run).  Its
values (:func:`cell_values`) are the metric of each seed's run: a run that diverged is kept
as *diverged* (ranked worst by the verdicts, never left out), a value that stands for "never
reached the target" as *censored*, a run stopped at a ``max_rounds`` cap makes the whole
cell a preview that decides nothing (``"not checked: N of M rounds"``).

**What a scale can test.**  At the ``paper`` scale a comparison is testable when its runs
train what the claim is about (``about``: data set, model, any other config value).  Below
it, the scale's data set (MNIST-1D) with its model stands in for each paper's *main
setting* (``main_setting`` of its ``claims.yaml``: the CIFAR data sets with the paper's
main model), and only for it: a claim about another data set or model of the paper is *not
testable here*, never decided on a stand-in.  At every scale, a claim that ``needs`` a trait
its runs' model lacks (:mod:`flcore.models.traits`: images, a residual network, ...) is *not
testable here*, with the claim's reason.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from flcore.models.traits import TRAITS, missing_traits
from flcore.record_format import CAPPED
from flcore.reproduction import runner
from flcore.reproduction.artifacts import artifact_ids, get_artifact
from flcore.reproduction.claim_metrics import METRICS, accuracy_points
from flcore.reproduction.claim_registry import Claim, Comparison, datasets_of
from flcore.reproduction.stand_in import stand_in_for
from flcore.reproduction.store_state import resolve_store
from flcore.store import RunStore


def labels_match(labels: dict, cell: dict) -> bool:
    for key, wanted in cell.items():
        have = labels.get(key)
        if isinstance(wanted, (int, float)) and not isinstance(wanted, bool) and isinstance(have, (int, float)):
            if not math.isclose(float(have), float(wanted), rel_tol=1e-9, abs_tol=1e-12):
                return False
        elif have != wanted:
            return False
    return True


@lru_cache(maxsize=256)
def artifact_runs(artifact, scale: str, seeds: tuple[int, ...]) -> tuple:
    """An artifact's runs (cached: every cell of every claim looks them up)."""
    return tuple(artifact.runs(scale, seeds))


def seed_of(spec) -> int:
    return int(spec.labels.get("seed", spec.config.get("seed", 0)))


def cell_specs(claim: Claim, cell: dict, scale: str, seeds: Sequence[int]) -> tuple[list, str]:
    """The specs of ``cell`` at ``scale`` and ``seeds`` (from the first of the claim's
    registered artifacts that runs it; a timed metric's: the timed ones), and why there
    are none."""

    known = set(artifact_ids())
    registered = [a for a in claim.artifacts if a in known]
    if not registered:
        return [], "its artifact has no notebook yet"
    for artifact_id in registered:
        specs = [s for s in artifact_runs(get_artifact(artifact_id), scale, tuple(seeds))
                 if labels_match(s.labels, cell)]
        if specs:
            break
    else:
        return [], f"the {scale} scale does not run this cell"
    metric = METRICS.get(claim.metric)
    if metric is not None and metric.timed:
        specs = [s for s in specs if s.config.get("timed")]
        if not specs:
            return [], "the scale runs this cell without timing it"
    return specs, ""


@dataclass
class CellValues:
    """One cell's value per seed (the run of each seed), or why it has none."""

    values: dict[int, float]
    run_ids: dict[int, str]
    configs: list
    reason: str = ""
    diverged: list[int] = field(default_factory=list)  # seeds whose run diverged: left out
    censored: list[int] = field(default_factory=list)  # seeds whose value is "never reached"
    runs: dict[int, Any] = field(default_factory=dict)  # seed -> its stored run (for its curve)
    accuracy: dict[int, float] = field(default_factory=dict)  # the runs' test accuracy (%) per seed


def canonical_specs(specs: Sequence, timed: bool) -> list:
    """One run per seed of a cell (module docstring: one canonical run per cell and seed): a
    timed metric reads the timed run; any other metric the run trained in its batch, as the
    artifact's tables read it, and the timed twin (trained alone, whose float rounding
    differs) only for a seed that has no other; among equals the first listed."""
    by_seed: dict[int, Any] = {}
    for spec in specs:
        seed = seed_of(spec)
        have = by_seed.get(seed)
        if have is None or (not timed and have.config.get("timed") and not spec.config.get("timed")):
            by_seed[seed] = spec
    return [by_seed[s] for s in sorted(by_seed)]


def cell_values(claim: Claim, cell: dict, scale: str, seeds: Sequence[int], store) -> CellValues:

    specs, reason = cell_specs(claim, cell, scale, seeds)
    if not specs:
        return CellValues({}, {}, [], reason)
    if not all(s.available for s in specs):
        return CellValues({}, {}, [], "a method is not implemented yet")
    metric = METRICS.get(claim.metric)
    if metric is None:
        return CellValues({}, {}, [], f"the metric {claim.metric} is not computed yet")
    specs = canonical_specs(specs, metric.timed)
    configs = [s.resolve() for s in specs]
    run_ids = {seed_of(s): c.run_id() for s, c in zip(specs, configs)}
    if metric.by_construction:
        values = {seed_of(s): metric.function({**s.labels, "method": s.method}) for s in specs}
        return CellValues({k: float(v) for k, v in values.items() if v is not None}, run_ids, configs)
    frame = runner.results_frame(specs, store)
    capped = capped_reason(frame)
    if capped is not None:  # a preview's runs decide nothing, whatever their numbers
        return CellValues({}, run_ids, configs, f"{CAPPED_PREFIX}{capped}")
    values, diverged, censored, runs, accuracy = {}, [], [], {}, {}
    stored = None
    for spec, row in zip(specs, frame.to_dict("records")):
        if row["status"] == "diverged":  # ranked worst by the verdicts (flcore.reproduction.verdicts)
            diverged.append(seed_of(spec))
        elif row["status"] == "finished":
            value = metric.function(row)
            if value is not None and metric.censored is not None and metric.censored(row):
                censored.append(seed_of(spec))  # ranked worst whatever its number (infinite bits)
                values[seed_of(spec)] = float(value)
            elif value is not None and math.isfinite(float(value)):
                values[seed_of(spec)] = float(value)
            if seed_of(spec) in values and row.get("run_id"):
                stored = stored or RunStore(resolve_store(store))
                runs[seed_of(spec)] = stored.run(row["run_id"])
            learned = accuracy_points(row)
            if seed_of(spec) in values and learned is not None and math.isfinite(learned):
                accuracy[seed_of(spec)] = learned
    if not values and not diverged:
        statuses = set(frame["status"])
        if "finished" in statuses:
            reason = f"the metric {claim.metric} is missing from its runs"
        else:
            reason = "its runs are not in the store"
        return CellValues({}, run_ids, configs, reason, diverged)
    return CellValues(values, {s: run_ids[s] for s in [*values, *diverged]}, configs, diverged=diverged,
                      censored=censored, runs=runs, accuracy=accuracy)


def _seeds_text(seeds: Iterable[int]) -> str:
    seeds = sorted(seeds)
    return f"seed{'s' if len(seeds) != 1 else ''} {', '.join(str(s) for s in seeds)}"


def cell_text(cell: dict) -> str:
    """A cell in words: ``"FedGAMMA (CIFAR-10, alpha = 0.05, clients_per_round = 5)"``."""
    rest = [f"{k} = {v}" if k != "dataset" else str(v) for k, v in cell.items() if k != "algorithm"]
    name = str(cell.get("algorithm", ""))
    return f"{name} ({', '.join(rest)})" if name and rest else name or ", ".join(rest)


# --------------------------------------------------------------------------- capped previews

#: What a comparison's reason starts with when its runs stopped at a ``max_rounds`` cap.
CAPPED_PREFIX = "not checked: "
#: ``"not checked: 500 of 10000 rounds"``: the reason a comparison on runs stopped at a
#: ``max_rounds`` cap is not run (:func:`capped_reason`, after :data:`CAPPED_PREFIX`).
CAPPED_REASON = re.compile(rf"(?:{CAPPED_PREFIX})?\d+ of \d+ rounds")


def capped_reason(frame) -> str | None:
    """``"N of M rounds"`` when runs of a cell stopped at a ``max_rounds`` cap (status
    ``capped``: a preview, N the fewest rounds any of them has done, M their protocol's):
    such runs never decide a verdict, whatever their numbers (the comparison is
    ``not_run``, its reason ``"not checked: N of M rounds"``).  None otherwise."""
    capped = frame[frame["status"] == CAPPED]
    if capped.empty:
        return None
    return f"{int(capped['rounds_done'].min())} of {int(capped['rounds'].max())} rounds"


def is_capped_reason(reason: str | None) -> bool:
    """Whether a claim's or comparison's ``reason`` is (or, joined with others by ``"; "``,
    includes) a capped preview's (:func:`capped_reason`)."""
    return bool(reason) and any(CAPPED_REASON.fullmatch(part) for part in reason.split("; "))


# --------------------------------------------------------------------------- what a scale can test

def _same(have, wanted) -> bool:
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool) and isinstance(have, (int, float)):
        return math.isclose(float(have), float(wanted), rel_tol=1e-9, abs_tol=1e-12)
    return have == wanted


def unmet_needs(claim: Claim, dataset: str, model: str, scale: str) -> str:
    """Why runs of ``model`` on ``dataset`` cannot test ``claim``: the traits it ``needs``
    that the model lacks (:mod:`flcore.models.traits`), or ``""``."""
    missing = missing_traits(claim.needs, model)
    if not missing:
        return ""
    return (f"needs {' and '.join(TRAITS[n] for n in missing)} ({claim.needs_reason}); the {scale} scale runs "
            f"{dataset} with {model}")


def stand_in_needs(claim: Claim, scale: str) -> str:
    """:func:`unmet_needs` for the scale's stand-in (its data set and model below the paper
    scale), for a comparison with no runs at ``scale``: the claim's needs decide it even so."""
    stand_in = stand_in_for(scale, claim.paper)
    if stand_in.is_paper or not claim.needs:
        return ""
    return unmet_needs(claim, stand_in.dataset, stand_in.model, scale)


def untestable_reason(claim: Claim, comparison: Comparison, configs: Iterable, scale: str) -> str:
    """Why the runs (``configs``) of ``comparison`` cannot test it at ``scale`` (module
    docstring: what a scale can test), or ``""`` when they can."""
    about = claim.about_of(comparison)
    wanted_datasets = datasets_of(about["dataset"])
    main_datasets = datasets_of(claim.main_setting.get("dataset", ()))
    ours = stand_in_for(scale, claim.paper)
    stand_in = None if ours.is_paper else (ours.dataset, ours.model)
    for cfg in configs:
        unmet = unmet_needs(claim, cfg.dataset, cfg.model, scale)
        if unmet:
            return unmet
        if stand_in is not None and (cfg.dataset, cfg.model) == stand_in:
            stands_for_main = (set(wanted_datasets) <= set(main_datasets)
                               and about["model"] == claim.main_setting.get("model"))
            if not stands_for_main:
                return (f"about {'/'.join(wanted_datasets)} with {about['model']}; the {scale} scale's "
                        f"{cfg.dataset} runs stand in for {'/'.join(main_datasets)} with "
                        f"{claim.main_setting.get('model')} only")
        elif cfg.dataset not in wanted_datasets or cfg.model != about["model"]:
            return (f"about {'/'.join(wanted_datasets)} with {about['model']}; the {scale} scale runs "
                    f"{cfg.dataset} with {cfg.model}")
        for key, wanted in about.items():
            if key in ("dataset", "model"):
                continue
            if not _same(getattr(cfg, key, None), wanted):
                return f"about {key} = {wanted}; the {scale} scale runs {key} = {getattr(cfg, key, None)}"
    return ""
