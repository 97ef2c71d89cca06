"""The verdict rules: one comparison of two cells' per-seed values, and one claim from its
comparisons -- the vocabulary, the tests and their words, in one place.

**A comparison** (:func:`decide_comparison`) pairs two cells' values seed by seed (every
random draw of a run derives from its seed, so two methods at one seed share partition,
initialisation, client sampling and batch order) and asks whether the first beats the
second (``better``: which direction is better).  In this order:

1. *Did the cells learn?*  For an accuracy (``chance`` given), a seed has **learned** when
   its accuracy is at least ``chance + learn_margin`` (:data:`LEARN_MARGIN`: 5 points on the
   MNIST-1D stand-in, half of what a 10-class chance level leaves below 20 %).  A cell is
   *learned* when every seed learned, *at chance* when most seeds did not, *unstable*
   otherwise (some seeds collapsed or diverged; named).  A comparison with a cell at chance
   is **not testable on the stand-in** -- never a fail: it says the stand-in did not train.
2. Fewer paired seeds than planned (or than 3) is **indicative** only.
3. *Ranks* when a seed is censored (never reached a target), diverged, or collapsed in an
   otherwise learning cell: that seed ranks worst for its method (two such seeds tie), and
   the exact two-sided sign test decides on the untied seeds.  A sign test that cannot
   reach 5 % at its number of untied seeds (fewer than 6) **cannot decide at n seeds**, and
   is left out of Holm's correction (Tarone): no outcome could make it significant.
4. Otherwise the *paired t test* on the per-seed differences, their standard deviation
   floored at the metric's ``resolution`` (an accuracy on 2,000 test samples moves by 0.05
   points; rounds read on an evaluation grid by its step), so that equal differences give a
   finite, positive p.  The 95 % t interval on the mean difference decides: **holds** when
   it lies on the claim's side of 0, **fails** on the other -- but **negligible** when,
   either way, the 90 % interval lies inside ``(-margin, +margin)``: significant, yet smaller
   than any effect the claim's words describe.  An interval containing 0 reads **absent**
   when the 90 % interval lies inside the margins (two one-sided tests; ``p_tost`` shown),
   else **inconclusive**, with its minimum detectable effect at 80 % power (estimated from
   the same seeds) and the seeds the same spread would need.
5. *Had the cells settled?*  Below the paper scale an accuracy comparison whose cell was
   still moving when its runs stopped (:mod:`flcore.reproduction.plateau`: the cell's mean
   accuracy moved by half the margin or more from the fifth of the rounds before the last
   to the last fifth) is **not settled**: inconclusive, whatever it read at the last round
   (``settled_verdict`` keeps that), since a gap between cells still climbing measures speed.

**A claim** (:func:`claim_verdict`) from its distinct comparisons: a *fails* must survive
Holm's correction over the claim's comparisons that can reach 5 % (else inconclusive).
It **holds** when every comparison it runs holds ("holds: k of K settings run"); **fails**
when one fails; **mixed** when one fails and another holds; **absent** only when every
comparison it runs is absent or negligible; **inconclusive** otherwise.  Comparisons not
testable on the stand-in are counted apart; a claim with nothing else is not testable on
the stand-in.  Its p: the largest of its comparisons' p for *holds* (intersection-union),
the smallest Holm p of its fails for *fails* and *mixed*, the largest TOST p for
*absent*.  Across the book (:func:`correct_claims`) the claims' p go through
Benjamini-Hochberg at q = 0.05; a claim whose q passes keeps its verdict, its comparisons
being then decided at the level the correction leaves (Benjamini-Bogomolov), which a
selected claim's own p already meets; the others read inconclusive after the correction.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from flcore.reproduction.multiplicity import benjamini_hochberg, holm, sign_test
from flcore.reproduction.paired import MIN_OWN_SEEDS, PairedTest, needed_seeds_for, t_cdf

#: Every verdict key and its words, in the order pages list them (comparisons and claims).
VERDICT_TEXT = {
    "holds": "holds",
    "fails": "fails",
    "mixed": "mixed",
    "absent": "absent",
    "negligible": "negligible",
    "inconclusive": "inconclusive",
    "cannot_decide": "cannot decide at its seeds",
    "indicative": "indicative (fewer seeds than planned)",
    "at_chance": "not testable on the stand-in (a cell did not learn)",
    "by_construction": "by construction",
    "same_runs": "counted in another claim",
    "not_run": "not run at this scale",
    "not_testable": "not testable here",
}
VERDICTS = tuple(VERDICT_TEXT)
#: Comparisons whose two-sided test ran on their own seeds and can reach 5 % (Holm's family).
TESTED = ("holds", "fails", "absent", "negligible", "inconclusive")
#: Claims decided either way.
DECIDED = ("holds", "fails", "mixed", "absent")
#: Comparisons that were run (the others: not run, not testable, counted in another claim).
RUN = ("holds", "fails", "mixed", "absent", "negligible", "inconclusive", "cannot_decide", "indicative",
       "at_chance", "by_construction")
#: The level of every test.
ALPHA = 0.05
#: Points of accuracy above chance a seed must reach to have learned, by data set (the
#: stand-in's; a paper's data set its own when it has runs at that scale).
LEARN_MARGIN = {"mnist1d": 5.0}
DEFAULT_LEARN_MARGIN = 5.0


@dataclass(frozen=True)
class CellState:
    """One cell's seeds: ``status`` learned | at_chance | unstable (or ``None`` without a
    chance level), and the positions of its collapsed and diverged seeds."""

    status: str | None
    collapsed: tuple[int, ...] = ()
    diverged: tuple[int, ...] = ()
    seeds: int = 0  # seeds with a value or diverged

    @property
    def divergence_rate(self) -> float:
        """The share of the cell's seeds that diverged."""
        return len(self.diverged) / self.seeds if self.seeds else 0.0


@dataclass
class Decision:
    """What :func:`decide_comparison` found (module docstring).  ``gap``: the mean of
    ``a - b`` over the paired seeds (in the values' units, not signed by the claim);
    ``p``: the two-sided test's; ``sd``: the paired differences' (floored at the
    resolution; ``sd_floored`` says when); ``interval_95`` / ``interval_90``: t intervals on
    ``gap``; ``mde``: the effect the paired t test finds four times in five at its seeds
    (estimated from their spread); ``needs``: the seeds
    that spread would need to find ``margin`` (None when it needs more than 400 or has no
    margin); ``seeds``: the positions read; ``cells``: the two :class:`CellState`."""

    verdict: str
    gap: float | None = None
    n: int = 0
    p: float | None = None
    sd: float | None = None
    sd_floored: bool = False
    df: int | None = None
    interval_95: tuple[float, float] | None = None
    interval_90: tuple[float, float] | None = None
    mde: float | None = None
    p_tost: float | None = None
    needs: int | None = None
    test: str | None = None
    seeds: tuple[int, ...] = ()
    reason: str = ""
    cells: dict[str, CellState] = field(default_factory=dict)
    wins: int | None = None
    untied: int | None = None

    @property
    def text(self) -> str:
        if self.verdict == "cannot_decide":
            return f"cannot decide at {self.untied} untied seed{'s' if self.untied != 1 else ''}"
        if self.verdict == "inconclusive" and self.needs is not None and self.needs > self.n:
            return f"inconclusive: needs about {self.needs} seeds"
        return VERDICT_TEXT[self.verdict]


def rule_text() -> str:
    """The verdict rules in words (this module's docstring, its paragraphs joined): what the
    Claims page, ``book/reference/reproducing.md`` and ``flcore claims --help`` show."""
    body = __doc__.split("\n\n", 1)[1]
    text = " ".join(" ".join(line.strip() for line in body.splitlines()).split())
    text = re.sub(r":\w+:`~?(?:[\w.]+\.)?([^`.]+)`", r"`\1`", text)  # Sphinx roles as code spans
    return text.replace("``", "`")


def _flags(values: Sequence, flags) -> list[bool]:
    return [bool(f) for f in flags] if flags is not None else [False] * len(values)


def cell_state(values: Sequence[float | None], chance: float | None, learn_margin: float,
               diverged: Sequence[bool]) -> CellState:
    """A cell's :class:`CellState` over its seeds that have a value or diverged (module
    docstring, step 1); ``status`` None without a chance level."""
    present = [i for i, v in enumerate(values) if v is not None or diverged[i]]
    gone = tuple(i for i in present if diverged[i])
    if chance is None:
        return CellState(None, (), gone, len(present))
    finite = [i for i in present if not diverged[i]]
    low = tuple(i for i in finite if not math.isfinite(values[i]) or values[i] < chance + learn_margin)
    bad = len(low) + len(gone)
    status = "learned" if bad == 0 else ("at_chance" if 2 * bad > len(present) else "unstable")
    return CellState(status, low, gone, len(present))


def tost_p(gap: float, se: float, df: int, margin: float) -> float:
    """p of the two one-sided tests of ``|true difference| >= margin``: the larger of the two
    one-sided p's (the effect is *absent* when it is below 5 %)."""
    if se == 0:
        return 0.0 if abs(gap) < margin else 1.0
    return max(1.0 - t_cdf((gap + margin) / se, df), t_cdf((gap - margin) / se, df))


def decide_comparison(a: Sequence[float | None], b: Sequence[float | None], *, better: str = "higher",
                      chance: float | None = None, margin: float | None, resolution: float = 0.0,
                      censored_a: Sequence[bool] | None = None, censored_b: Sequence[bool] | None = None,
                      diverged_a: Sequence[bool] | None = None, diverged_b: Sequence[bool] | None = None,
                      planned: int = MIN_OWN_SEEDS, learn_margin: float = DEFAULT_LEARN_MARGIN,
                      names: tuple[str, str] = ("a", "b")) -> Decision:
    """Whether ``a`` beats ``b`` (module docstring): per-seed values paired by position
    (``None``: a seed without a value; a diverged seed may have none), ``better`` the
    direction of the metric, ``chance`` its chance level when it is an accuracy, ``margin``
    the smallest effect the claim describes, ``resolution`` the values' step, ``censored_*``
    and ``diverged_*`` per-seed flags, ``planned`` the seeds the comparison planned, ``names``
    what the reasons call the two cells."""
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower', got {better!r}")
    if len(a) != len(b):
        raise ValueError(f"a and b pair seeds by position: {len(a)} and {len(b)} values")
    sign = 1.0 if better == "higher" else -1.0
    cens_a, cens_b = _flags(a, censored_a), _flags(b, censored_b)
    div_a, div_b = _flags(a, diverged_a), _flags(b, diverged_b)
    cells = {"a": cell_state(a, chance, learn_margin, div_a), "b": cell_state(b, chance, learn_margin, div_b)}
    seeds = tuple(i for i in range(len(a)) if (a[i] is not None or div_a[i]) and (b[i] is not None or div_b[i]))
    out = Decision("indicative", n=len(seeds), seeds=seeds, cells=cells)
    label = dict(zip(("a", "b"), names))
    sleeping = [label[side] for side, cell in cells.items() if cell.status == "at_chance"]
    if sleeping:
        out.verdict = "at_chance"
        out.reason = (f"{' and '.join(sleeping)} did not learn: most seeds below chance + {learn_margin:g} "
                      f"({chance + learn_margin:g})")
        return out
    if len(seeds) < max(MIN_OWN_SEEDS, planned):
        out.reason = (f"{len(seeds)} paired seed{'s' if len(seeds) != 1 else ''} of {max(MIN_OWN_SEEDS, planned)} "
                      "planned: the gap is indicative only")
        finite = [a[i] - b[i] for i in seeds if a[i] is not None and b[i] is not None]
        out.gap = sum(finite) / len(finite) if finite else None
        return out
    worst = {"a": {i for i in seeds if cens_a[i] or div_a[i] or i in cells["a"].collapsed},
             "b": {i for i in seeds if cens_b[i] or div_b[i] or i in cells["b"].collapsed}}
    if worst["a"] or worst["b"]:
        return _ranked(a, b, sign, seeds, worst, out, label)
    diffs = [a[i] - b[i] for i in seeds]
    gap = sum(diffs) / len(diffs)
    raw_sd = math.sqrt(sum((d - gap) ** 2 for d in diffs) / (len(diffs) - 1))
    sd = max(raw_sd, resolution)
    test = PairedTest(gap=sign * gap, sd=sd, n=len(seeds), df=len(seeds) - 1)
    if test.se == 0:  # equal differences and no resolution: no spread to test against
        out.gap, out.reason = gap, "the differences are all equal and the metric states no resolution"
        return out
    h95, h90 = test.threshold, test.equivalence_half_width
    out.gap, out.sd, out.sd_floored, out.df, out.test = gap, sd, sd > raw_sd, test.df, "paired t"
    out.p, out.interval_95, out.interval_90 = test.p_value, (gap - h95, gap + h95), (gap - h90, gap + h90)
    out.mde = test.mde
    inside = margin is not None and margin > 0 and abs(gap) + h90 < margin
    if margin is not None and margin > 0:
        out.p_tost = tost_p(gap, test.se, test.df, margin)
        out.needs = needed_seeds_for(sd, margin)
    if abs(gap) > h95:
        out.verdict = "negligible" if inside else ("holds" if sign * gap > 0 else "fails")
    elif inside:
        out.verdict = "absent"
    else:
        out.verdict = "inconclusive"
    return out


def _ranked(a, b, sign: float, seeds: tuple[int, ...], worst: dict, out: Decision, label: dict) -> Decision:
    """The sign test with the censored, diverged and collapsed seeds ranked worst (module
    docstring, step 3)."""
    signs = []
    for i in seeds:
        bad_a, bad_b = i in worst["a"], i in worst["b"]
        if bad_a or bad_b:
            signs.append(0 if bad_a and bad_b else (-1 if bad_a else 1))
        else:
            d = sign * (a[i] - b[i])
            signs.append((d > 0) - (d < 0))
    p, wins, untied = sign_test(signs)
    finite = [a[i] - b[i] for i in seeds if a[i] is not None and b[i] is not None
              and math.isfinite(a[i] - b[i]) and i not in worst["a"] | worst["b"]]
    out.gap = sum(finite) / len(finite) if finite else None
    out.test, out.p, out.wins, out.untied = "sign", p, wins, untied
    ranked = ", ".join(f"{label[side]}: seed{'s' if len(v) != 1 else ''} {', '.join(str(s) for s in sorted(v))}"
                       for side, v in worst.items() if v)
    out.reason = (f"ranked worst (censored, diverged or collapsed): {ranked}; sign test: {wins} of {untied} untied "
                  f"seeds the claim's way, p = {p:.3g}")
    if untied == 0 or 2 * 0.5 ** untied >= ALPHA:
        out.verdict = "cannot_decide"
        out.reason += f"; with {untied} untied seeds a sign test cannot reach 5 % (6 are needed)"
    elif p < ALPHA:
        out.verdict = "holds" if 2 * wins > untied else "fails"
    else:
        out.verdict = "inconclusive"
    return out


def correct_within_claim(comparisons: list[dict]) -> None:
    """Holm's correction over a claim's comparisons that can reach 5 % (``p`` given, verdict
    in :data:`TESTED`): each gets ``p_holm``; a *fails* whose ``p_holm`` is not below 5 %
    turns *inconclusive*, its reason said."""
    family = [c for c in comparisons if c.get("p") is not None and c["verdict"] in TESTED]
    for comparison, adjusted in zip(family, holm([c["p"] for c in family])):
        comparison["p_holm"] = adjusted
        if comparison["verdict"] == "fails" and adjusted >= ALPHA:
            comparison.update(verdict="inconclusive",
                              reason=f"fails at p = {comparison['p']:.3g} but not after Holm's correction over the "
                                     f"claim's {len(family)} comparisons that can reach 5 % (p = {adjusted:.3g})")


def claim_verdict(comparisons: Sequence[dict]) -> tuple[str, float | None]:
    """A claim's verdict and p from its distinct comparisons, after
    :func:`correct_within_claim` (module docstring)."""
    verdicts = [c["verdict"] for c in comparisons]
    evidence = [c for c in comparisons if c["verdict"] in RUN and c["verdict"] not in ("by_construction", "at_chance")]
    if not evidence:
        if any(v == "at_chance" for v in verdicts):
            return "at_chance", None
        if any(v == "by_construction" for v in verdicts):
            return "by_construction", None
        if "same_runs" in verdicts:
            return "same_runs", None
        return ("not_testable" if verdicts and all(v == "not_testable" for v in verdicts) else "not_run"), None
    kinds = [c["verdict"] for c in evidence]
    fails = [c for c in evidence if c["verdict"] == "fails"]
    if fails:
        p = min(c.get("p_holm", c["p"]) for c in fails)
        return ("mixed" if "holds" in kinds else "fails"), p
    if all(k == "holds" for k in kinds):
        return "holds", max(c["p"] for c in evidence)
    if all(k in ("absent", "negligible") for k in kinds):
        return "absent", max(c.get("p_tost") or 1.0 for c in evidence)
    return "inconclusive", None


def correct_claims(results: list[dict], q: float = ALPHA) -> None:
    """Benjamini-Hochberg over the claims that ran (module docstring): each gets ``q`` and
    ``verdict_corrected`` (its verdict when ``q`` passes, else inconclusive); a claim without
    a decision enters the family with p = 1."""
    family = [r for r in results if r["verdict"] in RUN and r["verdict"] not in ("by_construction", "at_chance")]
    qs = benjamini_hochberg([r.get("p") if r.get("p") is not None else 1.0 for r in family])
    for result, value in zip(family, qs):
        result["q"] = value
        keep = result["verdict"] in DECIDED and value < q
        result["verdict_corrected"] = result["verdict"] if keep or result["verdict"] not in DECIDED else "inconclusive"
    for result in results:
        result.setdefault("q", None)
        result.setdefault("verdict_corrected", result["verdict"])


if __name__ == "__main__":
    print(rule_text())
