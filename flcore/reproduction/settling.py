"""When a comparison's verdict settles: its paired gap and verdict at every evaluated round.

Every run logs its test accuracy at each evaluated round.  A claim's accuracy is the mean of
the evaluations in the run's last ``min(100, rounds)`` rounds (:func:`flcore.record_format.summarize`);
the same statistic *as if the run had stopped at round r* is the mean of the evaluations in
``(r - window, r]`` (:func:`window_means`), and at the last round it is the run's own value.
At each round every seed of both cells evaluated, the per-seed differences give the paired
gap, its two-sided 95 % t interval and the paired verdict (holds, fails, absent with the
comparison's margin, or inconclusive; :meth:`~flcore.reproduction.paired.PairedTest.decide`)
-- the paired test alone, before the claim's Holm correction and the chance rule.

``settles_at`` is the first evaluated round from which the verdict no longer changes: the
verdict at every later evaluated round is the verdict at the last one.  Its share of the
protocol's rounds is what a preview's ``--max-rounds`` would have needed on the stand-in --
evidence from the stand-in, never a verdict at the paper scale.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from flcore.reproduction.paired import CONFIDENCE, PairedTest, sample_sd, t_quantile

#: The rounds' shares the Claims page reports a settled share at.
SHARES = (0.10, 0.25, 0.50)


def window_means(curve: Sequence[tuple[int, float]], total_rounds: int, window: int = 100) -> dict[int, float]:
    """``{round: mean}``: at each evaluated round ``r`` of ``curve`` (``(round, accuracy)``
    pairs in round order), the mean of the evaluations in ``(r - min(window, total_rounds), r]``,
    times 100 (points)."""
    width = min(window, total_rounds)
    out: dict[int, float] = {}
    for rnd, _ in curve:
        last = [acc for r, acc in curve if rnd - width < r <= rnd]
        out[rnd] = 100.0 * sum(last) / len(last)
    return out


def trajectory(better: Mapping[int, Mapping[int, float]], worse: Mapping[int, Mapping[int, float]],
               sign: int, margin: float | None) -> list[dict]:
    """The paired gap (better - worse, in the metric's units), its 95 % interval and the paired
    verdict at each round that every seed of both cells has a value for (``better`` and
    ``worse``: seed -> {round: value}); at least 2 seeds each, else empty."""
    seeds = sorted(set(better) & set(worse))
    if len(seeds) < 2:
        return []
    rounds = sorted(set.intersection(*(set(better[s]) & set(worse[s]) for s in seeds)))
    points = []
    for rnd in rounds:
        diffs = [better[s][rnd] - worse[s][rnd] for s in seeds]
        gap = sum(diffs) / len(diffs)
        sd = sample_sd(diffs)
        test = PairedTest(gap=sign * gap, sd=sd, n=len(diffs), df=len(diffs) - 1)
        half = t_quantile(0.5 + CONFIDENCE / 2, test.df) * test.se
        points.append({"round": rnd, "gap": gap, "low": gap - half, "high": gap + half,
                       "verdict": test.decide(margin)})
    return points


def settles_at(points: Sequence[dict]) -> int | None:
    """The first round of ``points`` from which the verdict is the last point's (module
    docstring); None without points."""
    if not points:
        return None
    final = points[-1]["verdict"]
    first = points[-1]["round"]
    for point in reversed(points):
        if point["verdict"] != final:
            break
        first = point["round"]
    return first


def settled_shares(comparisons: Sequence[dict], shares: Sequence[float] = SHARES) -> dict | None:
    """``{"n", "shares": {share: fraction}}``: over ``comparisons`` (each with ``settles_at``
    and ``rounds``, the protocol's), the fraction whose final verdict was already reached at
    each share of the rounds (``settles_at <= share x rounds``); None without any."""
    usable = [c for c in comparisons if c.get("settles_at") is not None and c.get("rounds")]
    if not usable:
        return None
    return {"n": len(usable),
            "shares": {share: sum(c["settles_at"] <= share * c["rounds"] + 1e-9 for c in usable) / len(usable)
                       for share in shares}}
