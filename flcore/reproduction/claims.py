"""The papers' headline claims as checkable comparisons, and their verdicts on our runs.

Each paper's claims are data (``<paper folder>/claims.yaml``): the claim in words, the
sentence of the paper that makes it (``quote``), the artifacts whose runs check it, the
metric and which direction is better, what it is *about* (the data set and model, and any
other setting, in flcore's names), and one or more *comparisons* between two cells of a
published table -- ``better`` should beat ``worse`` -- with the numbers the paper prints for
both.  A cell is a set of run labels (``dataset``, ``algorithm``, ``alpha``, ...) as the
artifact's :class:`~flcore.reproduction.artifacts.RunSpec` s carry them, so a cell names the
same runs at every scale.  Nothing is trained here: the runs are read from the store.

**What a scale can test.**  At the ``paper`` scale a comparison is testable when its runs
train what the claim is about (``about``: data set, model, any other config value).  Below
it, the scale's data set (MNIST-1D) with its model stands in for each paper's *main
setting* (``main_setting`` of its ``claims.yaml``: the CIFAR data sets with the paper's
main model), and only for it: a claim about another data set or model of the paper
(FedIMA's Fashion-MNIST or ResNet-18 rows, which the small scale runs as the same MNIST-1D
runs as its CIFAR-10 CNN row) is *not testable here*, never decided on a stand-in.

**A comparison is paired.**  Every random draw of a run derives from ``(seed, purpose,
round, client)``, so two cells at one seed share partition, initialisation, client sampling
and batch order.  A comparison is the per-seed difference ``ours(better) - ours(worse)``
over the seeds both cells ran (signed the claim's way when lower is better), and its
verdict is the paired t test of :mod:`flcore.reproduction.paired`: the two-sided 95 % t
interval on the mean difference,

- *holds* when the interval lies on the claim's side of 0 (the gap exceeds the
  *threshold*, the interval's half-width),
- *fails* when it lies on the other side,
- *absent* when neither, and the 90 % t interval lies inside ``(-margin, +margin)``
  (two one-sided tests, :meth:`~flcore.reproduction.paired.PairedTest.is_absent`): the
  effect, if any, is smaller than the comparison's *margin* (:func:`margin_of`),
- *inconclusive* otherwise, stated with its *minimum detectable effect* (MDE, 80 % power).

**Margins.**  Each comparison has a margin in its units, with its reason
(``flcore claims --json``: ``margin``, ``margin_reason``).  ``claims.yaml`` may state one per
claim or per comparison (the comparison's wins): ``margin: {stand_in: <value in the
stand-in's units, below the paper scale>, paper_fraction: <fraction of the published gap,
at the paper scale>, reason: <why>}``.  Unstated, the paper scale's margin is
:data:`PAPER_MARGIN_FRACTION` of the published gap, and below it the stand-in's margin of the
metric's unit (:data:`STAND_IN_MARGINS`: 1 point of accuracy); a metric without one has no
margin, and its comparisons are never *absent*.

The spread is the standard deviation of the per-seed differences, with ``n - 1`` degrees of
freedom, and only a pair with at least three shared seeds is decided: with fewer its gap is
*indicative* (the reason said), never holds or fails -- a spread borrowed from other pairs,
or from another metric, says nothing about this pair's.  Threshold, MDE and gap are in the
metric's unit (:func:`register_metric`); each decided comparison has its two-sided ``p``, its
95 % interval (``interval_95``) and, where the paper prints a gap, our gap over it with that
interval divided the same way (``size``, :func:`size_of`).

**Censored values.**  A metric whose value may stand for "never reached the target" (rounds
to a target, bits or speed-up to FedAvg's accuracy) registers ``censored``: such a value
ranks worst, two censored values tie, and the comparison is the exact two-sided sign test on
the per-seed signs (:func:`~flcore.reproduction.multiplicity.sign_test`), its ``censored``
seeds per cell named; three seeds cannot reach 5 % (2 x 0.5^3 = 0.25), which its reason says.

**One canonical run per cell and seed** (:func:`canonical_specs`): a cell may exist both
trained in its batch and trained alone (its timed twin), whose float rounding differs; a
claim reads the batched run, as the artifact's tables do, and the timed one only for a timed
metric or a seed with no other run.

**Multiplicity** (:mod:`flcore.reproduction.multiplicity`).  A claim fails when any of its
comparisons fails, so a *fails* must survive Holm's correction over the claim's tested
comparisons (``p_holm``), else it reads *inconclusive* with both p's; a claim holds only when
every comparison holds, an intersection-union test whose level needs no correction.  A claim
whose comparisons disagree -- one fails, another holds, both after Holm -- is *mixed*.  Every
counted comparison's ``q`` is the Benjamini-Hochberg false-discovery value over the whole
book (:func:`evaluate_claims`).

**When a verdict settles** (:mod:`flcore.reproduction.settling`).  An accuracy comparison's
paired gap, interval and verdict at each evaluated round, from the runs' logged evaluations
(``trajectory``), and ``settles_at``, the first round from which that verdict no longer
changes.

Besides these, a comparison may be:

- *fails: neither learns*: an accuracy claim whose two cells both sit at the data set's
  chance level (:func:`flcore.config.chance_accuracy`), each tested on its own seeds: a cell
  is at chance when the two-sided 95 % t interval on its mean (its own seeds' sd, ``n - 1``
  df; :func:`cell_interval`) contains chance.  Never the comparison's threshold: one noisy
  pair must not put a learning cell "at chance".  When only one cell is at chance, a win
  over it is no support: the comparison reads *inconclusive* (``against_chance``);
- *inconclusive* for a flatness claim (a metric registered with ``flatness``: the Hessian's
  top eigenvalue, the LPF loss, the flatness discrepancy) one of whose cells' *accuracies*
  sits at chance, or both, tested as above on the cells' own seeds (their runs' test
  accuracy; with fewer than three seeds the comparison is indicative anyway): the flatness of
  a model that learned nothing ranks nothing -- it is no minimum of the loss the claim is
  about -- so a comparison with it decides nothing either way (unlike an accuracy, where
  failing to learn is itself the evidence); the pages leave such a method out of their
  flatness rankings by the same test;
- *by construction*: the metric follows from the methods' definitions (backpropagations
  per step from the recipes): shown, not counted as evidence;
- *not run at this scale*: the scale does not run a cell, its runs are not in the store,
  its method is not implemented, or the metric is missing from them; or its runs are a
  capped preview (stopped at ``max_rounds``, reason ``"not checked: N of M rounds"``),
  whose numbers never decide a verdict;
- *not testable here*: see above;
- *counted in another claim*: its runs, read in the same metric, are evidence for a claim
  listed earlier (:func:`comparison_carriers`); shown with its numbers, not counted again.

**Diverged runs.**  A run that diverged (status ``diverged``) is left out of every
comparison that reads it, with its seed and cell named (``note``), and the comparison's
``n`` is the seeds left; a cell whose every run diverged decides nothing (inconclusive,
the reason shown).

**Timing.**  A metric registered ``timed`` (seconds per round, and what is computed from
it) is read only from *timed* runs (config ``timed``: trained alone, never batched, so a
run's round times are its own), and its repeats are their seeds: three timed seeds on the
machine that trained the store give the spread, not the rounds of one run.  The timed runs
are trained seed by seed, every method's seed 0 before any seed 1
(:func:`flcore.executors.groups.interleave_timed`), so the two cells of a timing comparison
see the same load of the machine, not one window each.

**Each distinct comparison once.**  Two listed comparisons that name the same runs and
read the same values from them (CIFAR-10 and CIFAR-100 at alpha = 0 below the paper scale)
are one comparison; a claim's verdict rests on its distinct comparisons, with the counts
shown ("3 of 4 comparisons run: 2 hold, 1 inconclusive").  Across claims too: the same
pair of runs in the same metric counts for the first claim of the registry that lists it,
and the others refer to it (*counted in another claim*).

**Verdict of a claim** (:func:`aggregate`), from its distinct comparisons that were run and
are evidence (not by construction), after Holm's correction: *mixed* if one fails and another
holds; else *fails* if any fails; else *fails: neither learns* if
any is; else *absent* if any is (the claim does not hold: one of its effects is not there);
else *holds* if all hold; else *inconclusive*.  With none run: *by construction*
if every run comparison is by construction, *counted in another claim* if its runs are
another claim's evidence, *not testable here* if none is testable, *not run at this scale*
otherwise.

**Later claims against a paper.**  A claim may be made *by* another source than the paper
whose artifact it concerns (``by: {citation, quote, url}`` in that paper's ``claims.yaml``;
``url`` optional): a later paper or a public reproduction that contradicts one of our
papers.  It names the claim it contests (``against``, optional: the contested claim may not
be in the registry when the paper prints no readable number for it), its comparisons may
leave ``published`` out (the later source prints no number for that cell: ``null``), and a
comparison may say which labels its cells have below the paper scale (``stand_in_labels``:
the smaller scales run both CIFAR settings of FedLESAM's protocol as one, labelled
CIFAR-10).  It is tested with the same runs and the same paired rule as every claim, and
is never *counted in another claim*: reading the runs of the claim it contests the other
way is its point, so both verdicts are shown side by side (``flcore claims --json``:
``by`` -- the paper's id or the later source's citation --, ``later_source``, ``against``;
the Claims page and each paper's landing page).

**Seeds where claims need them.**  At the ``small`` scale the cells of the claims whose
metric asks for seeds run :data:`CLAIM_SEEDS` (``flcore reproduce`` and the pages train
them: :func:`claim_specs`); other cells keep the seeds they are asked for.  What fits the
small book's 30 minutes on 2 cores (``flcore.reproduction.budget``): every accuracy claim
and every claim on a metric read from the runs' curves or timings (rounds, transmissions,
bits, speed-up, cost and time ratios, seconds per round) gets three seeds, except the four
appendix ablations whose ``claims.yaml`` says ``one_seed`` (and why) -- save their comparisons
with a cell another claim reads at three seeds, whose other cell gets them too, so that a
page's table and its verdicts read the same runs; the Hessian analyses of stored models keep
one seed.  A claim with one seed is indicative only.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from flcore.config import chance_accuracy
from flcore.config.presets import DEFAULT_DATASET
from flcore.models import default_model_for
from flcore.record_format import CAPPED
from flcore.reproduction.multiplicity import benjamini_hochberg, holm, sign_test
from flcore.reproduction.paired import (
    CONFIDENCE,
    MIN_OWN_SEEDS,
    PairedTest,
    pooled_sd,
    sample_sd,
    t_quantile,
)
from flcore.reproduction.papers import read_yaml
from flcore.reproduction.seed_plan import CAP as SEED_CAP
from flcore.reproduction.seed_plan import Planned, planned
from flcore.reproduction.settling import settles_at, trajectory, window_means
from flcore.reproduction.targets import accuracy_curve
from flcore.store import RunStore, StoreError

#: The verdicts, their words on the pages, and which of them decide a claim.
VERDICT_TEXT = {
    "holds": "holds",
    "fails": "fails",
    "neither_learns": "fails: neither learns",
    "absent": "absent",
    "mixed": "mixed",
    "inconclusive": "inconclusive",
    "indicative": "indicative (fewer than 3 seeds)",
    "by_construction": "by construction",
    "same_runs": "counted in another claim",
    "not_run": "not run at this scale",
    "not_testable": "not testable here",
}
VERDICTS = tuple(VERDICT_TEXT)
#: Comparisons a test decided on their own seeds (the family Holm's correction runs over).
TESTED = ("holds", "fails", "absent", "inconclusive")
DECIDED = ("holds", "fails", "neither_learns", "absent", "mixed")
#: Comparisons that were run (the others: not run, not testable).
RUN = ("holds", "fails", "neither_learns", "absent", "mixed", "inconclusive", "indicative", "by_construction")
#: The level of every test of a comparison (two-sided): its p must be below it.
ALPHA = 1.0 - CONFIDENCE
#: The decision rule in words (the Claims page and every page's verdict table).
RULE_TEXT = (
    "A comparison is *paired*: the per-seed difference of the two cells over the seeds both ran (the same "
    "partition, initialisation, client sampling and batch order at one seed), read from one canonical run per "
    "cell and seed (the run trained in its batch, as the tables read it; the timed twin, trained alone, only "
    "for a timed metric or a seed with no other run). Only a pair with at least 3 shared seeds is decided, on "
    "its own spread: its *threshold* is the half-width of the two-sided 95 % t interval on the mean difference, "
    "t(0.975, n - 1) x sd / sqrt(n), and its p the paired t test's; with fewer seeds the gap is *indicative*, "
    "never holds or fails. It *holds* when the gap exceeds the threshold the paper's way, *fails* when it does "
    "the other way; else it is *absent* when the 90 % t interval, gap +- t(0.95, n - 1) x sd / sqrt(n), lies "
    "inside (-margin, +margin) (two one-sided tests), and *inconclusive* otherwise, stated with its minimum "
    "detectable effect (MDE: the true difference the test finds four times in five, from the noncentral t, "
    "5.65 x sd / sqrt(n) at df 2). A value that never reached its target (rounds, bits, speed-up) is "
    "*censored*: it ranks worst, two censored values tie, and the exact sign test decides (at 3 seeds it "
    "cannot reach 5 %: said so), with the count of censored values shown. A win over a cell whose own 95 % "
    "interval contains chance is no support (inconclusive); *fails: neither learns*: both cells' intervals "
    "contain the data set's chance accuracy. A run that diverged is left out (its seed named, n reduced). "
    "*By construction*: fixed by the methods' definitions, shown, not evidence. *Not testable here*: the claim "
    "is about a data set or model this scale does not run (never decided on a stand-in). Each distinct pair of "
    "runs counts once: within a claim, and across claims (the first claim that lists it counts it; the others "
    "say *counted in another claim*). *Multiplicity*: a claim fails if any of its k comparisons fails, so a "
    "fail must survive Holm's correction over the claim's tested comparisons (else it reads inconclusive); a "
    "claim holds only if every comparison holds, which keeps the 5 % level without correction. A claim is "
    "*mixed* when one comparison fails and another holds, both after Holm; else it *fails* if one fails, "
    "*fails: neither learns* if one does, *absent* if one is (the claim does not hold, shown apart from fails), "
    "*holds* if every comparison run (and not by construction) holds, *inconclusive* otherwise. Each "
    "comparison's p, Holm's p and the Benjamini-Hochberg q over the whole book are in `flcore claims --json`, "
    "and its gap over the published gap, with its 95 % interval, stands beside its verdict.")
#: At the paper scale, a comparison's margin unless its claims.yaml states one: this
#: fraction of the published gap.
PAPER_MARGIN_FRACTION = 0.5
#: Below the paper scale, a comparison's margin (value in the stand-in's units, reason) by
#: its metric's unit, unless its claims.yaml states one.
STAND_IN_MARGINS: dict[str, tuple[float, str]] = {
    "points": (1.0, "1 point of test accuracy on the stand-in: a difference under 1 point is no effect an accuracy "
                    "claim's words (\u201cimproves\u201d, \u201coutperforms\u201d) describe"),
}
#: The most seeds a claim's cell runs at each scale: each comparison's own are planned
#: (:mod:`flcore.reproduction.seed_plan`, :func:`planned_seeds`).
CLAIM_SEEDS = {"smoke": (0,), "small": tuple(range(SEED_CAP)), "paper": (0,)}
#: Seeds of the reference pairs.
SPREAD_SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class Margin:
    """A margin stated in ``claims.yaml`` (module docstring): ``stand_in`` in the stand-in's
    units below the paper scale, ``paper_fraction`` of the published gap at the paper scale
    (either may be None: the default then), and why."""

    stand_in: float | None = None
    paper_fraction: float | None = None
    reason: str = ""


@dataclass(frozen=True)
class Seeds:
    """Seeds stated in ``claims.yaml`` for a claim or a comparison, over the plan
    (:mod:`flcore.reproduction.seed_plan`), and why."""

    n: int
    reason: str


@dataclass(frozen=True)
class By:
    """Who makes a claim when it is not the paper of its artifact (module docstring): the
    citation, the sentence that makes it and, when public, where it is."""

    citation: str
    quote: str
    url: str = ""


@dataclass(frozen=True)
class Comparison:
    """``better`` beats ``worse`` (cells: run labels); the paper's numbers for both (None:
    a later claim's source prints none); ``about``: what it is about where it differs from
    its claim's; ``stand_in_labels``: its cells' labels below the paper scale."""

    better: dict[str, Any]
    worse: dict[str, Any]
    published_better: float | None
    published_worse: float | None
    about: dict[str, Any] = field(default_factory=dict)
    margin: Margin | None = None
    stand_in_labels: dict[str, Any] = field(default_factory=dict)
    seeds: Seeds | None = None  # the seeds it trains at the small scale, over the plan

    @property
    def published_gap(self) -> float | None:
        if self.published_better is None or self.published_worse is None:
            return None
        return self.published_better - self.published_worse

    def cells_at(self, scale: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(better, worse)``: the run labels of its cells at ``scale``."""
        if scale == "paper" or not self.stand_in_labels:
            return self.better, self.worse
        return {**self.better, **self.stand_in_labels}, {**self.worse, **self.stand_in_labels}


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    text: str
    quote: str
    artifacts: tuple[str, ...]
    source: str
    metric: str
    direction: str  # "higher" | "lower"
    comparisons: tuple[Comparison, ...]
    about: dict[str, Any] = field(default_factory=dict)
    main_setting: dict[str, Any] = field(default_factory=dict)
    one_seed: str = ""  # why its cells keep one seed at every scale (the book's time budget)
    margin: Margin | None = None  # its comparisons' unless one states its own
    by: By | None = None  # a later source that makes it (module docstring); None: the paper
    against: str = ""  # the id of the claim it contests, when the registry has it
    seeds: Seeds | None = None  # its comparisons' seeds at the small scale, over the plan

    @property
    def sign(self) -> int:
        return 1 if self.direction == "higher" else -1

    def about_of(self, comparison: Comparison) -> dict[str, Any]:
        return {**self.about, **comparison.about}


def _datasets(value) -> tuple[str, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


def _margin(raw, where: str) -> Margin | None:
    """A ``margin`` mapping of ``claims.yaml`` (module docstring), checked."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not set(raw) <= {"stand_in", "paper_fraction", "reason"}:
        raise ValueError(f"{where}: margin must be a mapping of stand_in, paper_fraction and reason")
    values = {}
    for key in ("stand_in", "paper_fraction"):
        value = raw.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            raise ValueError(f"{where}: margin {key} must be a positive number, got {value!r}")
        values[key] = None if value is None else float(value)
    reason = str(raw.get("reason") or "").strip()
    if not reason:
        raise ValueError(f"{where}: a margin needs its reason")
    return Margin(values["stand_in"], values["paper_fraction"], reason)


def _seeds(raw, where: str) -> Seeds | None:
    """A ``seeds`` mapping of ``claims.yaml`` (``{n: 4, reason: ...}``), checked."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != {"n", "reason"}:
        raise ValueError(f"{where}: seeds must be a mapping of n and reason")
    n, reason = raw["n"], str(raw["reason"] or "").strip()
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 100:
        raise ValueError(f"{where}: seeds n must be a whole number from 1 to 100, got {n!r}")
    if not reason:
        raise ValueError(f"{where}: stated seeds need their reason")
    return Seeds(n, reason)


#: The fields of a claim's ``by`` mapping (module docstring); ``url`` may be left out.
BY_FIELDS = ("citation", "quote", "url")


def _by(raw, where: str) -> By | None:
    """A ``by`` mapping of ``claims.yaml`` (module docstring), checked."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not set(raw) <= set(BY_FIELDS):
        raise ValueError(f"{where}: by must be a mapping of {', '.join(BY_FIELDS)} (url optional), got {raw!r}")
    values = {}
    for key in BY_FIELDS:
        value = raw.get(key, "")
        if not isinstance(value, str) or (key != "url" and not value.strip()):
            raise ValueError(f"{where}: by {key} must be a non-empty string, got {value!r}")
        values[key] = value.strip()
    if values["url"] and not values["url"].startswith("https://"):
        raise ValueError(f"{where}: by url must start with https://, got {values['url']!r}")
    return By(**values)


def _published(raw: dict, by: By | None, where: str) -> tuple[float | None, float | None]:
    """A comparison's published numbers: required of the paper's own claims; a later
    claim's source may print none (``null`` or left out)."""
    published = raw.get("published")
    if published is None and by is not None:
        return None, None
    if not isinstance(published, dict) or not {"better", "worse"} <= set(published):
        raise ValueError(f"{where}: a comparison needs published better and worse numbers")
    values = []
    for key in ("better", "worse"):
        value = published[key]
        if value is None and by is not None:
            values.append(None)
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{where}: published {key} must be a number, got {value!r}")
        else:
            values.append(float(value))
    return values[0], values[1]


def _parse(paper_file: Path) -> list[Claim]:
    data = read_yaml(paper_file)
    paper = data["paper"]
    main = dict(data.get("main_setting") or {})
    if not {"dataset", "model"} <= set(main):
        raise ValueError(f"{paper_file.name}: main_setting needs a dataset and a model")
    out = []
    for raw in data["claims"]:
        if not {"dataset", "model"} <= set(raw.get("about") or {}):
            raise ValueError(f"{paper_file.name}: claim {raw['id']}: 'about' must name a dataset and a model")
        where = f"{paper_file.name}: claim {raw['id']}"
        by = _by(raw.get("by"), where)
        against = raw.get("against") or ""
        if against and (by is None or not isinstance(against, str)):
            raise ValueError(f"{where}: against names the contested claim's id, and only a claim made by a later "
                             "source (by) contests one")
        comparisons = tuple(Comparison(dict(c["better"]), dict(c["worse"]), *_published(c, by, where),
                                       dict(c.get("about") or {}), _margin(c.get("margin"), where),
                                       dict(c.get("stand_in_labels") or {}), _seeds(c.get("seeds"), where))
                            for c in raw["comparisons"])
        direction = raw.get("direction", "higher")
        if direction not in ("higher", "lower"):
            raise ValueError(f"{paper_file.name}: claim {raw['id']}: direction must be higher or lower")
        out.append(Claim(id=raw["id"], paper=paper, text=raw["text"],
                         quote=raw.get("quote", by.quote if by is not None else ""),
                         artifacts=tuple(raw["artifacts"]), source=raw.get("source", ""),
                         metric=raw.get("metric", "accuracy"), direction=direction, comparisons=comparisons,
                         about=dict(raw["about"]), main_setting=main, one_seed=raw.get("one_seed", ""),
                         margin=_margin(raw.get("margin"), where), by=by, against=against,
                         seeds=_seeds(raw.get("seeds"), where)))
    return out


def all_claims() -> tuple[Claim, ...]:
    """Every claim of the registered papers (``<paper folder>/claims.yaml``), in their order."""
    from flcore.reproduction.papers import paper_ids

    return _all_claims(paper_ids())


@lru_cache(maxsize=4)
def _all_claims(papers: tuple[str, ...]) -> tuple[Claim, ...]:
    from flcore.reproduction.papers import get_paper

    claims: list[Claim] = []
    for paper in papers:
        path = get_paper(paper).folder / "claims.yaml"
        if path.is_file():
            claims.extend(_parse(path))
    ids = [c.id for c in claims]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"claim ids used twice: {', '.join(duplicates)}")
    check_against(claims)
    return tuple(claims)


def check_against(claims: Sequence[Claim]) -> None:
    """A later claim's ``against`` names a claim of ``claims`` made by a paper (one line, else)."""
    own = {c.id for c in claims if c.by is None}
    unknown = sorted(f"{c.id} (against {c.against})" for c in claims if c.against and c.against not in own)
    if unknown:
        raise ValueError(f"later claims against no paper's claim of the registry: {', '.join(unknown)}")


def contested_by(claim_id: str) -> list[Claim]:
    """The later claims against ``claim_id`` (``against``), in the registry's order."""
    return [c for c in all_claims() if c.against == claim_id]


def later_claims(paper: str) -> list[Claim]:
    """The claims about ``paper`` 's artifacts made by a later source (``by``)."""
    return [c for c in all_claims() if c.paper == paper and c.by is not None]


def get_claim(claim_id: str) -> Claim:
    for claim in all_claims():
        if claim.id == claim_id:
            return claim
    raise KeyError(f"unknown claim {claim_id!r}")


def claims_by_artifact() -> dict[str, list[Claim]]:
    out: dict[str, list[Claim]] = {}
    for claim in all_claims():
        for artifact_id in claim.artifacts:
            out.setdefault(artifact_id, []).append(claim)
    return out


# --------------------------------------------------------------------------- metrics

@dataclass(frozen=True)
class Metric:
    """A claim's metric: ``function(row)`` reads it from one run's row of
    :func:`~flcore.reproduction.runner.results_frame` (None: missing), in ``unit``.

    ``accuracy``: a test accuracy in points, whose chance level is the data set's;
    ``by_construction``: fixed by the methods' definitions (read without runs);
    ``timed``: read from timed runs only (module docstring); ``seeded``: the claims on
    it run :data:`CLAIM_SEEDS` (a metric that needs an analysis of each stored model may
    keep one seed: indicative only); ``companions``: ``spec -> [RunSpec]``,
    the runs the metric reads besides the cell's own (a ratio to FedAvg's run on the same
    setting and seed), trained with the claims' seeds; ``flatness``: it measures how flat
    the trained model is, which ranks nothing when a model sits at chance accuracy
    (module docstring); ``censored(row)``: whether the run's value stands for "never
    reached the target" (ranked worst, decided by a sign test)."""

    name: str
    function: Callable[[dict], float | None]
    unit: str
    accuracy: bool = False
    by_construction: bool = False
    timed: bool = False
    seeded: bool = True
    companions: Callable[[Any], list] | None = None
    flatness: bool = False
    censored: Callable[[dict], bool] | None = None

    def __call__(self, row: dict) -> float | None:
        return self.function(row)


def _accuracy(row) -> float | None:
    value = row.get("mean_last_100")
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else 100.0 * float(value)


#: metric name -> :class:`Metric`.  Metrics that need an analysis of stored models register
#: here when their artifact exists (``import flcore`` registers them all).
METRICS: dict[str, Metric] = {"accuracy": Metric("accuracy", _accuracy, "points", accuracy=True)}


def register_metric(name: str, function: Callable[[dict], float | None], unit: str, *, accuracy: bool = False,
                    by_construction: bool = False, timed: bool = False, seeded: bool = True,
                    companions: Callable[[Any], list] | None = None,
                    censored: Callable[[dict], bool] | None = None, flatness: bool = False) -> Metric:
    """Register ``function(row)`` as the claims' metric ``name`` (see :class:`Metric`)."""
    METRICS[name] = Metric(name, function, unit, accuracy=accuracy, by_construction=by_construction, timed=timed,
                           seeded=seeded, companions=companions, censored=censored, flatness=flatness)
    return METRICS[name]


def metric_unit(name: str) -> str | None:
    return METRICS[name].unit if name in METRICS else None


# --------------------------------------------------------------------------- reference pairs

#: ``function(scale, seeds) -> [(RunSpec a, RunSpec b)]``: the reference pairs (the same
#: configuration but the method, at one seed), set by the paper that defines them.
_SPREAD_REFERENCE: list[Callable[[str, Sequence[int]], list]] = []


def set_spread_reference(function: Callable[[str, Sequence[int]], list]) -> None:
    """Name the reference pairs (FedSAM - FedAvg at one seed each) whose spread of differences
    pages may show (FedGloSS's Figure 7 tests a one-seed cell against chance with it); no
    claim's verdict borrows it.  The FedSAM paper's package sets them."""
    _SPREAD_REFERENCE[:] = [function]


def reference_pairs(scale: str, seeds: Sequence[int] = SPREAD_SEEDS) -> list[tuple]:
    """The reference pairs ``(a, b)`` of ``scale``: the difference ``a - b`` is measured per seed."""
    return list(_SPREAD_REFERENCE[0](scale, seeds)) if _SPREAD_REFERENCE else []


def spread_specs(scale: str, seeds: Sequence[int] = SPREAD_SEEDS):
    """The runs of the reference pairs (module docstring); none when no paper has set them."""
    out, seen = [], set()
    for a, b in reference_pairs(scale, seeds):
        for spec in (a, b):
            if id(spec) not in seen:
                seen.add(id(spec))
                out.append(spec)
    return out


def reference_spread(scale: str, store=None, metric: str = "accuracy") -> dict | None:
    """``{"sd", "df", "pairs", "runs"}``: the pooled standard deviation (and its degrees of
    freedom) of the per-seed differences of the reference pairs' ``metric``, pooled over
    the pairs' configurations (one group per configuration, its seeds the values; a
    configuration whose differences are all equal is left out); None when no configuration
    has two seeds with differing values."""
    from flcore.reproduction.runner import results_frame

    if metric not in METRICS or METRICS[metric].by_construction:
        return None
    pairs = reference_pairs(scale)
    if not pairs:
        return None
    frame_a = results_frame([a for a, _ in pairs], store).to_dict("records")
    frame_b = results_frame([b for _, b in pairs], store).to_dict("records")
    groups: dict[tuple, list[float]] = {}
    for (a, _), row_a, row_b in zip(pairs, frame_a, frame_b):
        if row_a["status"] != "finished" or row_b["status"] != "finished":
            continue
        va, vb = METRICS[metric].function(row_a), METRICS[metric].function(row_b)
        if va is None or vb is None or not math.isfinite(va - vb):
            continue
        key = tuple(sorted((k, repr(v)) for k, v in a.labels.items() if k != "seed"))
        groups.setdefault(key, []).append(float(va - vb))
    # a configuration whose differences are all equal (the metric cannot vary there: neither
    # run reaches a target, both stay at one count) says nothing about the spread
    used = [g for g in groups.values() if len(g) >= 2 and max(g) - min(g) > 0]
    pooled = pooled_sd(used)
    if pooled is None:
        return None
    return {"sd": pooled[0], "df": pooled[1], "pairs": len(used), "runs": 2 * sum(len(g) for g in used)}


# --------------------------------------------------------------------------- cells

def _matches(labels: dict, cell: dict) -> bool:
    for key, wanted in cell.items():
        have = labels.get(key)
        if isinstance(wanted, (int, float)) and not isinstance(wanted, bool) and isinstance(have, (int, float)):
            if not math.isclose(float(have), float(wanted), rel_tol=1e-9, abs_tol=1e-12):
                return False
        elif have != wanted:
            return False
    return True


@lru_cache(maxsize=256)
def _artifact_runs(artifact, scale: str, seeds: tuple[int, ...]) -> tuple:
    """An artifact's runs (cached: every cell of every claim looks them up)."""
    return tuple(artifact.runs(scale, seeds))


def _seed_of(spec) -> int:
    return int(spec.labels.get("seed", spec.config.get("seed", 0)))


def cell_specs(claim: Claim, cell: dict, scale: str, seeds: Sequence[int]) -> tuple[list, str]:
    """The specs of ``cell`` at ``scale`` and ``seeds`` (from the first of the claim's
    registered artifacts that runs it; a timed metric's: the timed ones), and why there
    are none."""
    from flcore.reproduction.artifacts import artifact_ids, get_artifact

    known = set(artifact_ids())
    registered = [a for a in claim.artifacts if a in known]
    if not registered:
        return [], "its artifact has no notebook yet"
    for artifact_id in registered:
        specs = [s for s in _artifact_runs(get_artifact(artifact_id), scale, tuple(seeds)) if _matches(s.labels, cell)]
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
        seed = _seed_of(spec)
        have = by_seed.get(seed)
        if have is None or (not timed and have.config.get("timed") and not spec.config.get("timed")):
            by_seed[seed] = spec
    return [by_seed[s] for s in sorted(by_seed)]


def cell_values(claim: Claim, cell: dict, scale: str, seeds: Sequence[int], store) -> CellValues:
    from flcore.reproduction.runner import resolve_store, results_frame

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
    run_ids = {_seed_of(s): c.run_id() for s, c in zip(specs, configs)}
    if metric.by_construction:
        values = {_seed_of(s): metric.function({**s.labels, "method": s.method}) for s in specs}
        return CellValues({k: float(v) for k, v in values.items() if v is not None}, run_ids, configs)
    frame = results_frame(specs, store)
    capped = capped_reason(frame)
    if capped is not None:  # a preview's runs decide nothing, whatever their numbers
        return CellValues({}, run_ids, configs, f"{CAPPED_PREFIX}{capped}")
    values, diverged, censored, runs, accuracy = {}, [], [], {}, {}
    stored = None
    for spec, row in zip(specs, frame.to_dict("records")):
        if row["status"] == "diverged":  # left out, said so (module docstring)
            diverged.append(_seed_of(spec))
        elif row["status"] == "finished":
            value = metric.function(row)
            if value is not None and metric.censored is not None and metric.censored(row):
                censored.append(_seed_of(spec))  # ranked worst whatever its number (infinite bits)
                values[_seed_of(spec)] = float(value)
            elif value is not None and math.isfinite(float(value)):
                values[_seed_of(spec)] = float(value)
            if _seed_of(spec) in values and row.get("run_id"):
                stored = stored or RunStore(resolve_store(store))
                runs[_seed_of(spec)] = stored.run(row["run_id"])
            learned = _accuracy(row)
            if _seed_of(spec) in values and learned is not None and math.isfinite(learned):
                accuracy[_seed_of(spec)] = learned
    if not values:
        statuses = set(frame["status"])
        if diverged:
            reason = f"every run diverged ({_seeds_text(diverged)})"
        elif "finished" in statuses:
            reason = f"the metric {claim.metric} is missing from its runs"
        else:
            reason = "its runs are not in the store"
        return CellValues({}, run_ids, configs, reason, diverged)
    return CellValues(values, {s: run_ids[s] for s in values}, configs, diverged=diverged, censored=censored,
                      runs=runs, accuracy=accuracy)


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


def untestable_reason(claim: Claim, comparison: Comparison, configs: Iterable, scale: str) -> str:
    """Why the runs (``configs``) of ``comparison`` cannot test it at ``scale`` (module
    docstring), or ``""`` when they can."""
    about = claim.about_of(comparison)
    wanted_datasets = _datasets(about["dataset"])
    main_datasets = _datasets(claim.main_setting.get("dataset", ()))
    stand_in = None
    if scale != "paper":
        dataset = DEFAULT_DATASET[scale]
        stand_in = (dataset, default_model_for(dataset))
    for cfg in configs:
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


# --------------------------------------------------------------------------- one comparison

def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values)


def _round(value: float | None, digits: int = 4) -> float | None:
    """``value`` rounded; None for None and for a value that is not finite (JSON has none)."""
    return None if value is None or not math.isfinite(float(value)) else round(float(value), digits)


def cell_interval(values: Sequence[float], spread: dict | None) -> tuple[float, float] | None:
    """``(mean, half-width)`` of the two-sided 95 % t interval on a cell's mean over its
    seeds' ``values``: with at least :data:`~flcore.reproduction.paired.MIN_OWN_SEEDS` seeds
    their own sd on ``n - 1`` df, else the reference pairs' ``spread`` (sd and df); None
    when neither is there."""
    n = len(values)
    if n == 0:
        return None
    mean = _mean(values)
    if n >= MIN_OWN_SEEDS:
        sd, df = sample_sd(values), n - 1
    elif spread is not None:
        sd, df = spread["sd"], spread["df"]
    else:
        return None
    return mean, t_quantile(0.5 + CONFIDENCE / 2, df) * sd / math.sqrt(n)


def at_chance(values: Sequence[float], chance: float, spread: dict | None) -> bool | None:
    """Whether a cell whose seeds scored ``values`` (accuracy, %) sits at ``chance``: the 95 %
    interval on its mean (:func:`cell_interval`) contains it; None when the interval cannot
    be had (fewer than three seeds and no reference spread)."""
    interval = cell_interval(values, spread)
    if interval is None:
        return None
    mean, half = interval
    return mean - half <= chance <= mean + half


def _cell_stats(values: Sequence[float]) -> dict:
    """A cell's mean, sd (None below two seeds) and n over the seeds a comparison reads."""
    return {"mean": _round(_mean(values)), "sd": _round(sample_sd(values)) if len(values) >= 2 else None,
            "n": len(values)}


def margin_of(claim: Claim, comparison: Comparison, scale: str) -> tuple[float | None, str]:
    """``(margin, reason)`` of ``comparison`` at ``scale`` in its units (module docstring:
    the comparison's ``claims.yaml`` margin, else its claim's, else the default); ``None``
    with the reason when it has none (then it is never *absent*)."""
    stated = comparison.margin or claim.margin
    metric = METRICS.get(claim.metric)
    unit = metric.unit if metric else ""
    if scale == "paper":
        fraction = stated.paper_fraction if stated and stated.paper_fraction is not None else None
        reason = stated.reason if fraction is not None else (
            f"{PAPER_MARGIN_FRACTION:g} of the published gap: an effect under half the paper's is not the effect "
            "it reports")
        fraction = PAPER_MARGIN_FRACTION if fraction is None else fraction
        if comparison.published_gap is None:
            return None, "the later claim's source prints no numbers for this comparison: no margin"
        margin = fraction * abs(comparison.published_gap)
        if margin <= 0:
            return None, "the published gap is 0: no margin"
        return margin, f"{reason} ({fraction:g} x {abs(comparison.published_gap):g} {unit})".rstrip()
    if stated and stated.stand_in is not None:
        return stated.stand_in, stated.reason
    if unit in STAND_IN_MARGINS:
        return STAND_IN_MARGINS[unit]
    return None, f"no margin stated for {unit or 'this metric'} on the stand-in"


def compare(claim: Claim, comparison: Comparison, hi: CellValues, lo: CellValues, scale: str) -> dict:
    """The verdict of one comparison from its two cells' values (module docstring); the
    fields of ``flcore claims --json``'s comparisons."""
    metric = METRICS.get(claim.metric)
    margin, margin_reason = margin_of(claim, comparison, scale)
    out: dict[str, Any] = {
        "cells": {"better": comparison.better, "worse": comparison.worse},
        "published": {"better": comparison.published_better, "worse": comparison.published_worse,
                      "gap": _round(comparison.published_gap)},
        "seeds": [], "better": None, "worse": None, "gap": None, "sd": None, "sd_from": None, "df": None,
        "threshold": None, "mde": None, "units": metric.unit if metric else None, "verdict": "not_run",
        "margin": _round(margin), "margin_reason": margin_reason, "interval_90": None, "interval_95": None,
        "test": None, "p": None, "p_holm": None, "q": None, "size": None, "censored": None, "settles_at": None,
        "reason": hi.reason or lo.reason or None,
        "run_ids": {"better": sorted(set(hi.run_ids.values())), "worse": sorted(set(lo.run_ids.values()))},
        "cell_stats": None, "left_out": {"better": sorted(hi.diverged), "worse": sorted(lo.diverged)},
        "note": None,
    }
    if hi.configs and lo.configs:
        reason = untestable_reason(claim, comparison, hi.configs + lo.configs, scale)
        if reason:
            out.update(verdict="not_testable", reason=reason)
            return out
    if not hi.values or not lo.values:
        for side, cell in (("better", hi), ("worse", lo)):
            if not cell.values and cell.diverged:  # runs exist but none can be read: nothing decided
                out.update(verdict="inconclusive",
                           reason=f"every run of the {side} cell, {cell_text(getattr(comparison, side))}, diverged "
                                  f"({_seeds_text(cell.diverged)})")
        return out
    seeds = sorted(set(hi.values) & set(lo.values))
    if not seeds:
        out["reason"] = "the two cells share no seed"
        return out
    diffs = [hi.values[s] - lo.values[s] for s in seeds]
    gap = _mean(diffs)
    out.update(seeds=seeds, better=_round(_mean(hi.values[s] for s in seeds)),
               worse=_round(_mean(lo.values[s] for s in seeds)), gap=_round(gap), reason=None,
               run_ids={"better": [hi.run_ids[s] for s in seeds], "worse": [lo.run_ids[s] for s in seeds]},
               cell_stats={"better": _cell_stats([hi.values[s] for s in seeds]),
                           "worse": _cell_stats([lo.values[s] for s in seeds])})
    left = [f"{_seeds_text(cell.diverged)} of {cell_text(getattr(comparison, side))}"
            for side, cell in (("better", hi), ("worse", lo)) if cell.diverged]
    if left:
        out["note"] = f"left out: {'; '.join(left)} diverged (n = {len(seeds)})"
    if metric.by_construction:
        out["verdict"] = "by_construction" if claim.sign * gap > 0 else "fails"
        out["reason"] = "follows from the methods' definitions: not evidence"
        return out
    if len(seeds) < MIN_OWN_SEEDS:  # a spread borrowed from other pairs says nothing of this pair's
        out.update(verdict="indicative",
                   reason=f"{len(seeds)} shared seed{'s' if len(seeds) != 1 else ''}: a verdict needs at least "
                          f"{MIN_OWN_SEEDS}, each pair judged on its own spread; the gap is indicative only")
        return out
    censored = {side: sorted(s for s in seeds if s in cell.censored) for side, cell in (("better", hi), ("worse", lo))}
    if censored["better"] or censored["worse"]:
        out.update(_censored_test(claim, hi, lo, seeds, censored))
        return out
    test = PairedTest(gap=claim.sign * gap, sd=sample_sd(diffs), n=len(seeds), df=len(seeds) - 1)
    half90, half95 = test.equivalence_half_width, test.threshold
    out.update(sd=_round(test.sd), sd_from="paired seeds", df=test.df, threshold=_round(half95),
               mde=_round(test.mde), interval_90=[_round(gap - half90), _round(gap + half90)],
               interval_95=[_round(gap - half95), _round(gap + half95)], test="paired t", p=_round(test.p_value, 6),
               size=size_of(gap, half95, comparison.published_gap), verdict=test.decide(margin))
    if claim.metric == "accuracy":
        out.update(_settling(claim, hi, lo, seeds, margin))
    if metric.accuracy:
        chance = chance_accuracy(hi.configs[0].dataset)
        cells = {side: [cell.values[s] for s in seeds] for side, cell in (("better", hi), ("worse", lo))}
        sleeping = [side for side, values in cells.items() if at_chance(values, chance, None)]
        if len(sleeping) == 2:
            (mean_hi, half_hi), (mean_lo, half_lo) = (cell_interval(values, None) for values in cells.values())
            out.update(verdict="neither_learns",
                       reason=f"both cells' 95 % intervals contain chance ({chance:.0f}%): {mean_hi:.2f} "
                              f"\u00b1 {half_hi:.2f} and {mean_lo:.2f} \u00b1 {half_lo:.2f} (n = {len(seeds)})")
        elif sleeping and out["verdict"] == "holds":
            (side,) = sleeping
            mean, half = cell_interval(cells[side], None)
            out.update(verdict="inconclusive", against_chance=side,
                       reason=f"the {side} cell sits at chance ({chance:.0f}%: {mean:.2f} \u00b1 {half:.2f}): a win "
                              "over a cell that does not learn is no support")
    elif metric.flatness and out["verdict"] != "indicative":
        reason = _flatness_at_chance(hi, lo, seeds)
        if reason:
            out.update(verdict="inconclusive", reason=reason)
    return out


def _flatness_at_chance(hi: CellValues, lo: CellValues, seeds: Sequence[int]) -> str | None:
    """Why a flatness comparison decides nothing when the test accuracies of one cell's runs at
    ``seeds``, or both cells', sit at their data set's chance (:func:`at_chance`, on the
    cell's own seeds); None when both learn, or an accuracy or interval cannot be had."""
    chance = chance_accuracy(hi.configs[0].dataset)
    sleeping = []
    for side, cell in (("better", hi), ("worse", lo)):
        values = [cell.accuracy[s] for s in seeds if s in cell.accuracy]
        if len(values) == len(seeds) and at_chance(values, chance, None):
            mean, half = cell_interval(values, None)
            sleeping.append((side, f"{mean:.2f} \u00b1 {half:.2f}"))
    if len(sleeping) == 2:
        return (f"both cells' accuracies sit at chance ({chance:.0f}%): {sleeping[0][1]} and {sleeping[1][1]} "
                f"(n = {len(seeds)}): the flatness of models that learned nothing ranks nothing")
    if sleeping:
        (side, shown), = sleeping
        return (f"the {side} cell's accuracy sits at chance ({chance:.0f}%: {shown}, n = {len(seeds)}): the "
                "flatness of a model that learned nothing ranks nothing, either way")
    return None


def _settling(claim: Claim, hi: CellValues, lo: CellValues, seeds: Sequence[int], margin: float | None) -> dict:
    """``settles_at``, the protocol's ``rounds`` and the ``trajectory`` (gap, 95 % interval and
    paired verdict per evaluated round) of an accuracy comparison, from the runs' logged
    evaluations (:mod:`flcore.reproduction.settling`); nothing when a run's log is not there."""
    curves = []
    for cell in (hi, lo):
        if not all(s in cell.runs for s in seeds):
            return {}
        total = int(cell.configs[0].rounds)
        try:
            curves.append({s: window_means(accuracy_curve(cell.runs[s].read_metrics()), total) for s in seeds})
        except StoreError as exc:
            return {"settles_reason": str(exc).splitlines()[0][:200]}
    points = trajectory(curves[0], curves[1], claim.sign, margin)
    return {"settles_at": settles_at(points), "rounds": int(hi.configs[0].rounds),
            "trajectory": [{"round": p["round"], "gap": _round(p["gap"], 3), "low": _round(p["low"], 3),
                            "high": _round(p["high"], 3), "verdict": p["verdict"]} for p in points]}


def size_of(gap: float, half_width: float, published_gap: float) -> dict | None:
    """``{"ratio", "interval"}``: our gap over the published gap, with the 95 % interval on
    our gap divided the same way; None when the source prints no gap (0 or None: a later
    claim without numbers)."""
    if not published_gap or not math.isfinite(gap):
        return None
    ends = sorted(((gap - half_width) / published_gap, (gap + half_width) / published_gap))
    return {"ratio": _round(gap / published_gap), "interval": [_round(ends[0]), _round(ends[1])]}


def _censored_test(claim: Claim, hi: CellValues, lo: CellValues, seeds: Sequence[int], censored: dict) -> dict:
    """The sign test of a comparison with censored values (module docstring): a censored
    value ranks worst, two censored values tie, and the two-sided exact sign test decides."""
    def ranked(cell: CellValues, seed: int) -> float:
        return -claim.sign * math.inf if seed in cell.censored else cell.values[seed]

    signs = []
    for seed in seeds:
        a, b = ranked(hi, seed), ranked(lo, seed)
        d = 0.0 if a == b else claim.sign * (a - b)
        signs.append((d > 0) - (d < 0))
    p, wins, n = sign_test(signs)
    losses = n - wins
    verdict = "inconclusive"
    if p < ALPHA:
        verdict = "holds" if wins > losses else "fails"
    count = len(censored["better"]) + len(censored["worse"])
    reason = (f"{count} of {2 * len(seeds)} values censored (never reached the target: ranked worst); sign test: "
              f"{wins} of {n} untied seeds the claim's way, p = {p:.3g}")
    if n == 0 or 2 * 0.5 ** n >= ALPHA:
        reason += f" (with {n} untied seeds a sign test cannot reach {ALPHA:.0%}: 6 are needed)"
    return {"verdict": verdict, "test": "sign", "p": _round(p, 6), "censored": censored, "reason": reason,
            "gap": None if not all(math.isfinite(v) for v in (hi.values[s] - lo.values[s] for s in seeds))
            else _round(_mean(hi.values[s] - lo.values[s] for s in seeds))}


# --------------------------------------------------------------------------- a claim

def _distinct_key(result: dict, hi: CellValues, lo: CellValues):
    """Two listed comparisons are one when they name the same runs and read the same values
    (None -- never merged -- while a cell has no value)."""
    if not hi.values or not lo.values:
        return None
    return (tuple(sorted(hi.run_ids.items())), tuple(sorted(lo.run_ids.items())),
            tuple(sorted(hi.values.items())), tuple(sorted(lo.values.items())))


def aggregate(verdicts: Sequence[str], significant_holds: bool = False) -> str:
    """A claim's verdict from its distinct comparisons' (module docstring);
    ``significant_holds``: one of them holds even after Holm's correction (with a *fails*,
    the claim is *mixed*)."""
    ran = [v for v in verdicts if v in RUN]
    evidence = [v for v in ran if v != "by_construction"]
    if not evidence:
        if ran:
            return "by_construction"
        if "same_runs" in verdicts:
            return "same_runs"
        return "not_testable" if verdicts and all(v == "not_testable" for v in verdicts) else "not_run"
    if "fails" in evidence:
        return "mixed" if significant_holds and "holds" in evidence else "fails"
    if "neither_learns" in evidence:
        return "neither_learns"
    if "absent" in evidence:
        return "absent"
    if all(v == "holds" for v in evidence):
        return "holds"
    return "inconclusive"


def counts_text(counts: dict) -> str:
    """``"3 of 4 comparisons run: 2 hold, 1 inconclusive"`` from a claim's ``counts``."""
    words = {"holds": "hold", "fails": "fail", "neither_learns": "fail (neither learns)", "absent": "absent",
             "inconclusive": "inconclusive", "indicative": "indicative (fewer than 3 seeds)",
             "by_construction": "by construction"}
    parts = [f"{counts[v]} {words[v]}" for v in RUN if counts.get(v)]
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
    ``against`` (the claim it contests, or None), ``text``, ``artifacts``,
    ``metric``, ``units``, ``direction``, ``source``, ``scale``, ``verdict``, ``counts`` (per
    verdict, with ``listed``, ``distinct`` and ``run``), ``summary`` (the counts in words),
    ``comparisons`` (the distinct ones, each with ``cells``, ``seeds``, ``gap``, ``sd``,
    ``threshold``, ``mde``, ``margin`` with ``margin_reason`` and ``interval_90`` -- the
    equivalence test's --, ``units``, ``verdict``, ``listed`` -- the indices of the listed
    comparisons it stands for --, ``published``, ``cell_stats`` -- each cell's mean, sd and
    n over the seeds read --, ``left_out`` -- the seeds of diverged runs per cell --,
    ``note``, ``test`` (paired t or sign), ``p``, ``p_holm``, ``q`` (from
    :func:`evaluate_claims`), ``interval_95``, ``size``, ``censored``, ``against_chance``,
    ``settles_at``, ``rounds`` and ``trajectory`` and, for one *counted in another claim*,
    ``counted_in`` and ``verdict_there``) and ``reason`` (why
    none was run, when none was, or which claim counts its runs).
    """
    asked = set(seeds)
    distinct: list[dict] = []
    index_of: dict[Any, int] = {}
    for i, comparison in enumerate(claim.comparisons):
        plan = planned_seeds(claim, i, scale)
        seeds = sorted(asked | set(comparison_seeds(claim, i, scale)))
        better, worse = comparison.cells_at(scale)
        hi = cell_values(claim, better, scale, seeds, store)
        lo = cell_values(claim, worse, scale, seeds, store)
        result = compare(claim, comparison, hi, lo, scale)
        result["planned"] = {"seeds": plan.seeds, "reason": plan.reason, "paired_sd": plan.paired_sd,
                             "needed": plan.needed}
        key = _distinct_key(result, hi, lo)
        if key is not None and key in index_of:
            distinct[index_of[key]]["listed"].append(i)
            continue
        result["listed"] = [i]
        if key is not None:
            index_of[key] = len(distinct)
        if result["verdict"] in RUN and result["verdict"] != "by_construction":
            carrier = _carrier(claim, comparison, scale, tuple(seeds))
            if carrier is not None:
                result.update(counted_in=carrier, verdict_there=result["verdict"], verdict="same_runs",
                              reason=f"the same runs as a comparison of {carrier}, which counts them")
        distinct.append(result)
    significant_holds = correct_within_claim(distinct)
    verdicts = [c["verdict"] for c in distinct]
    counts = {v: verdicts.count(v) for v in VERDICTS}
    counts.update(listed=len(claim.comparisons), distinct=len(distinct), run=sum(v in RUN for v in verdicts))
    verdict = aggregate(verdicts, significant_holds)
    reasons = [c["reason"] for c in distinct if c["verdict"] not in RUN and c["reason"]]
    if verdict == "same_runs":
        carriers = sorted({c["counted_in"] for c in distinct if c.get("counted_in")})
        reasons = [f"its runs are evidence for {', '.join(carriers)}"]
    later = None if claim.by is None else {"citation": claim.by.citation, "quote": claim.by.quote,
                                           "url": claim.by.url or None}
    return {"id": claim.id, "paper": claim.paper, "by": claim.paper if later is None else claim.by.citation,
            "later_source": later, "against": claim.against or None,
            "text": claim.text, "artifacts": list(claim.artifacts),
            "metric": claim.metric, "units": metric_unit(claim.metric), "direction": claim.direction,
            "source": claim.source, "scale": scale, "verdict": verdict, "counts": counts,
            "summary": counts_text(counts), "comparisons": distinct,
            "reason": ("; ".join(dict.fromkeys(reasons)) if verdict in ("not_run", "not_testable", "same_runs")
                       else None)}


def correct_within_claim(comparisons: list[dict]) -> bool:
    """Holm's correction over a claim's counted comparisons that have a p (module docstring:
    multiplicity): each gets ``p_holm``; a *fails* whose ``p_holm`` is not below
    :data:`ALPHA` turns *inconclusive*, its reason said.  Returns whether a *holds* survives
    the correction too (then a surviving *fails* makes the claim *mixed*)."""
    family = [c for c in comparisons if c.get("p") is not None and c["verdict"] in TESTED]
    significant_holds = False
    for comparison, adjusted in zip(family, holm([c["p"] for c in family])):
        comparison["p_holm"] = _round(adjusted, 6)
        if comparison["verdict"] == "fails" and adjusted >= ALPHA:
            comparison.update(verdict="inconclusive",
                              reason=f"fails at p = {comparison['p']:.3g} but not after Holm's correction over the "
                                     f"claim's {len(family)} comparisons (p = {adjusted:.3g})")
        significant_holds |= comparison["verdict"] == "holds" and adjusted < ALPHA
    return significant_holds


def evaluate_claims(scale: str, store=None, seeds: Sequence[int] = (0,), papers: Iterable[str] | None = None,
                    artifact: str | None = None) -> list[dict]:
    """:func:`evaluate` for every claim (of ``papers``, or checked by ``artifact``); for every
    claim of the book (neither given), each counted comparison with its Benjamini-Hochberg
    ``q`` over all of them -- a subset gets none, its q would not be the book's."""
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
    tested = [c for r in out for c in r["comparisons"] if c.get("p") is not None and c["verdict"] != "same_runs"]
    for comparison, q in zip(tested, benjamini_hochberg([c["p"] for c in tested])):
        comparison["q"] = _round(q, 6)
    return out


def verdict_totals(results: Sequence[dict]) -> dict[str, int]:
    """How many claims of ``results`` have each verdict."""
    return {v: sum(r["verdict"] == v for r in results) for v in VERDICTS}


# --------------------------------------------------------------------------- the runs claims need

def _testable_cells(claim: Claim, comparison: Comparison, scale: str, seeds: Sequence[int]) -> list | None:
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
    cells = _testable_cells(claim, comparison, scale, (0,))
    if cells is None:
        return []
    timed = bool(METRICS[claim.metric].timed) if claim.metric in METRICS else False
    return [canonical_specs(specs, timed)[0].run_id() for specs in cells if specs]


def comparison_seeds(claim: Claim, index: int, scale: str) -> tuple[int, ...]:
    """The seeds a claim's comparison reads at ``scale``: those its cells train
    (:func:`_trained_seeds`), at least its own planned ones; a claim that keeps one seed reads
    the seeds another claim trains its cells at (:func:`claim_specs`), up to
    :data:`CLAIM_SEEDS`."""
    if claim.one_seed or _seeded(claim) is None:
        return tuple(CLAIM_SEEDS.get(scale, (0,)))
    n = planned_seeds(claim, index, scale).seeds
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
            for specs in _testable_cells(claim, comparison, scale, seeds) or []:
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
            cells = _testable_cells(claim, comparison, scale, seeds)
            if cells is None:
                continue
            if keeps_one:  # the seeds another claim reads either cell at, for both cells
                shared = {_seed_of(spec) for specs in cells for spec in specs if spec.run_id() in many}
                if not shared - {0}:
                    continue
                cells = [[spec for spec in specs if _seed_of(spec) in shared] for specs in cells]
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
    from flcore.reproduction.artifacts import get_artifact

    needed = {spec.run_id() for spec in claim_specs(scale, [artifact_id])}
    if not needed:
        return list(specs)
    out = list(specs)
    cells = {_cell_of(spec) for spec in specs}
    seen = {(_cell_of(spec), _seed_of(spec)) for spec in specs}
    for spec in _artifact_runs(get_artifact(artifact_id), scale, tuple(CLAIM_SEEDS[scale])):
        key = (_cell_of(spec), _seed_of(spec))
        if key[0] in cells and key not in seen and spec.available and spec.run_id() in needed:
            seen.add(key)
            out.append(spec)
    return out
