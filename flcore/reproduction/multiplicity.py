"""p-values of the claims' comparisons and their corrections for multiplicity.

- *Within a claim* (Holm's step-down, Holm 1979): a claim fails when any one of its ``k``
  comparisons fails, so each comparison's *fails* must survive the family-wise correction
  over the claim's ``k`` comparisons: with the p-values sorted ``p_(1) <= ... <= p_(k)``,
  the adjusted ``p~_(i) = max_{j <= i} min(1, (k - j + 1) p_(j))``.  A claim *holds* only
  when every comparison holds (an intersection-union test), which keeps its level at the
  per-comparison alpha without correction.
- *Across the book* (Benjamini-Hochberg): the false-discovery q of every counted
  comparison's p (``scipy.stats.false_discovery_control``), published beside it.
- *Censored values* ("never reached the target"): the exact two-sided sign test on the
  per-seed signs (``scipy.stats.binomtest`` at 1/2), ties left out.
"""
from __future__ import annotations

from collections.abc import Sequence


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values of ``pvalues``, in their order (module docstring)."""
    k = len(pvalues)
    order = sorted(range(k), key=lambda i: pvalues[i])
    adjusted = [0.0] * k
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (k - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """The Benjamini-Hochberg q of each of ``pvalues``, in their order."""
    if not pvalues:
        return []
    from scipy.stats import false_discovery_control

    return [float(q) for q in false_discovery_control(list(pvalues), method="bh")]


def sign_test(signs: Sequence[int]) -> tuple[float, int, int]:
    """``(p, wins, n)``: the exact two-sided sign test of per-seed ``signs`` (+1 the claim's
    way, -1 the other, 0 a tie, left out) against 1/2; ``p`` is 1 with no untied seed."""
    wins = sum(1 for s in signs if s > 0)
    n = sum(1 for s in signs if s != 0)
    if n == 0:
        return 1.0, 0, 0
    from scipy.stats import binomtest

    return float(binomtest(wins, n, 0.5).pvalue), wins, n
