"""The paired t test the claims' verdicts use, and Student's t distribution it needs.

A comparison of two cells that share seeds is *paired*: every random draw derives from
``(seed, purpose, round, client)``, so two methods at one seed share their partition,
initialisation, client sampling and batch order, and their per-seed difference is far
less noisy than two independent runs.  With ``n`` per-seed differences ``d_s`` (signed so
that a positive difference goes the claim's way), their mean ``d``, a standard deviation
``sd`` with ``df`` degrees of freedom and ``se = sd / sqrt(n)``:

- the two-sided 95 % t interval on the mean paired difference is ``d +- t(0.975, df) se``;
  its half-width is the comparison's *threshold*;
- the *minimum detectable effect* (MDE) at 80 % power is the true mean difference ``delta``
  that the test finds (the interval excludes 0) four times in five: under ``delta`` the
  statistic ``d / se`` follows the noncentral t with ``df`` degrees of freedom and
  noncentrality ``delta / se``, so the power is
  ``P(T' > t(0.975, df)) + P(T' < -t(0.975, df))``, solved for 80 % exactly.  (The common
  shortcut ``(t(0.975, df) + t(0.80, df)) se`` gives 77 % at df 2.)

- *equivalence* (two one-sided tests at 5 % each): with a *margin* ``m > 0`` in the
  comparison's units, the effect is *absent* when the 90 % t interval
  ``d +- t(0.95, df) se`` lies inside ``(-m, +m)`` -- both one-sided tests reject a true
  difference of ``-m`` or less and of ``+m`` or more.  An interval that excludes 0 decides
  first (holds or fails), so *absent* is only said of a gap the 95 % interval cannot tell
  from 0.

``sd`` comes from the pair's own differences (``df = n - 1``), and only a pair with at least
:data:`MIN_OWN_SEEDS` shared seeds is decided: a spread borrowed from other pairs (or
another metric) says nothing about this pair's.

Student's t distribution and its noncentral form are ``scipy.stats.t`` and ``scipy.stats.nct``.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

#: Two-sided confidence of the interval, and the power the MDE is stated at.
CONFIDENCE = 0.95
POWER = 0.80
#: Each one-sided test of the equivalence verdict (its interval: 1 - 2 x 0.05 = 90 %).
EQUIVALENCE_ALPHA = 0.05
#: A pair with fewer shared seeds is not decided (*indicative*).
MIN_OWN_SEEDS = 3


def _stats():
    # scipy.stats takes about half a second to import and every flcore command imports this
    # module; only the claims' verdicts need it
    from scipy import stats

    return stats


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0, got {df}")
    return float(_stats().t.cdf(t, df))


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (``0 < p < 1``)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0, got {df}")
    return float(_stats().t.ppf(p, df))


def power_of_effect(noncentrality: float, df: float) -> float:
    """Power of the two-sided :data:`CONFIDENCE` t test on ``df`` degrees of freedom when the
    true mean difference is ``noncentrality`` standard errors."""
    critical = t_quantile(0.5 + CONFIDENCE / 2, df)
    nct = _stats().nct
    # P(T' < -c) as the upper tail of the mirrored noncentrality: scipy's lower tail returns
    # nan far from the centre
    return float(nct.sf(critical, df, noncentrality) + nct.sf(critical, df, -noncentrality))


@lru_cache(maxsize=1024)
def detectable_noncentrality(df: float, power: float = POWER) -> float:
    """The noncentrality (true mean difference in standard errors) the two-sided test finds
    with probability ``power``: the root of :func:`power_of_effect` on ``df`` (cached: a
    seed search asks for every ``df`` up to its limit, for every comparison)."""
    if not 1.0 - CONFIDENCE < power < 1.0:
        raise ValueError(f"power must be in ({1.0 - CONFIDENCE:g}, 1), got {power}")
    from scipy.optimize import brentq

    upper = t_quantile(0.5 + CONFIDENCE / 2, df) + t_quantile(power, df)
    while power_of_effect(upper, df) < power:
        upper *= 2.0
    return float(brentq(lambda nc: power_of_effect(nc, df) - power, 0.0, upper, xtol=1e-10))


def needed_seeds_for(sd: float, effect: float, power: float = POWER, limit: int = 400) -> int | None:
    """The fewest seeds ``n >= 2`` whose two-sided paired t test finds a true mean difference
    of ``effect`` with probability ``power`` when the differences' sd is ``sd`` (noncentral
    t on ``n - 1`` degrees of freedom); None when more than ``limit`` are needed."""
    if effect <= 0:
        return None
    if sd <= 0:
        return 2
    for n in range(2, limit + 1):
        if detectable_noncentrality(n - 1, power) * sd / math.sqrt(n) <= effect:
            return n
    return None


def sample_sd(values: Sequence[float]) -> float:
    """The standard deviation of ``values`` with ``len - 1`` degrees of freedom."""
    n = len(values)
    if n < 2:
        raise ValueError("a standard deviation needs at least two values")
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


def pooled_sd(groups: Sequence[Sequence[float]]) -> tuple[float, int] | None:
    """``(sd, df)``: the pooled standard deviation of several groups of differences
    (``sqrt(sum (n_i - 1) s_i^2 / sum (n_i - 1))``, ``df = sum (n_i - 1)``) over the groups
    with at least two values; None when there is none."""
    usable = [list(g) for g in groups if len(g) >= 2]
    if not usable:
        return None
    df = sum(len(g) - 1 for g in usable)
    return math.sqrt(sum((len(g) - 1) * sample_sd(g) ** 2 for g in usable) / df), df


@dataclass(frozen=True)
class PairedTest:
    """The paired t test of ``n`` differences with mean ``gap`` (signed the claim's way)
    and standard deviation ``sd`` on ``df`` degrees of freedom (module docstring)."""

    gap: float
    sd: float
    n: int
    df: float

    @property
    def se(self) -> float:
        return self.sd / math.sqrt(self.n)

    @property
    def threshold(self) -> float:
        """Half-width of the two-sided :data:`CONFIDENCE` interval on the mean difference."""
        return t_quantile(0.5 + CONFIDENCE / 2, self.df) * self.se

    def power(self, effect: float) -> float:
        """The probability that the two-sided test finds a true mean difference ``effect``
        (noncentral t, module docstring)."""
        return power_of_effect(effect / self.se, self.df) if self.se > 0 else float(effect != 0)

    @property
    def mde(self) -> float:
        """Minimum detectable effect at ``POWER`` (80 %) for the two-sided test, from the
        noncentral t (module docstring)."""
        return detectable_noncentrality(self.df) * self.se

    @property
    def equivalence_half_width(self) -> float:
        """Half-width of the 90 % interval of the two one-sided tests, ``t(0.95, df) se``."""
        return t_quantile(1.0 - EQUIVALENCE_ALPHA, self.df) * self.se

    def is_absent(self, margin: float | None) -> bool:
        """Whether the 90 % interval lies strictly inside ``(-margin, +margin)`` (two one-sided
        tests); never without a positive margin."""
        if margin is None or margin <= 0:
            return False
        return abs(self.gap) + self.equivalence_half_width < margin

    @property
    def p_value(self) -> float:
        """Two-sided p of the paired t test of a zero mean difference, ``2 P(T > |gap| / se)``."""
        if self.se == 0:
            return 0.0 if self.gap != 0 else 1.0
        return float(2.0 * _stats().t.sf(abs(self.gap) / self.se, self.df))

    def decide(self, margin: float | None = None) -> str:
        """``holds`` when the 95 % interval lies above 0, ``fails`` when below, else
        ``absent`` when the 90 % interval lies inside ``(-margin, +margin)``, else
        ``inconclusive``."""
        if self.gap > self.threshold:
            return "holds"
        if self.gap < -self.threshold:
            return "fails"
        return "absent" if self.is_absent(margin) else "inconclusive"
