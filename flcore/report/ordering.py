"""Orderings of methods, published against ours, and their rank agreement.

Below the ``paper`` scale the data set is MNIST-1D, not CIFAR, so a difference between
our accuracy and the published one means nothing; what can be compared is the *ordering*
of the methods within one block of a table (one data set, alpha and participation).
:func:`kendall_tau` is Kendall's tau-b (Kendall 1945), which accounts for ties:

    tau_b = (C - D) / sqrt((C + D + T_x) (C + D + T_y))

with C concordant pairs, D discordant pairs, T_x pairs tied only in x and T_y pairs
tied only in y.  1 is the same order, -1 the reverse, 0 no agreement.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b of two equally long sequences (NaN when undefined)."""
    if len(x) != len(y):
        raise ValueError(f"kendall_tau needs sequences of one length, got {len(x)} and {len(y)}")
    concordant = discordant = tied_x = tied_y = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            dx = (x[i] > x[j]) - (x[i] < x[j])
            dy = (y[i] > y[j]) - (y[i] < y[j])
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tied_x += 1
            elif dy == 0:
                tied_y += 1
            elif dx == dy:
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + tied_x) * (concordant + discordant + tied_y))
    return (concordant - discordant) / denominator if denominator else float("nan")


def _order(items: Sequence[str], values: Sequence[float]) -> str:
    ranked = sorted(zip(items, values), key=lambda pair: -pair[1])
    return " > ".join(item for item, _ in ranked)


def ordering_table(comparison: pd.DataFrame, blocks: Sequence[str], item: str = "algorithm",
                   paper: str = "paper", ours: str = "ours") -> pd.DataFrame:
    """One row per block of ``comparison`` (columns ``blocks``): the published order of
    the ``item`` s (best first), ours, the number of methods compared and Kendall's tau.

    Only items with both a published value and a finished (or diverged) run count; with
    none, the table is empty but keeps its columns.
    """
    rows = []
    usable = comparison.dropna(subset=[paper, ours])
    if "status" in usable:
        usable = usable[usable["status"].isin(["finished", "diverged"])]
    for key, block in usable.groupby(list(blocks), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        names = list(block[item])
        published, mine = list(block[paper].astype(float)), list(block[ours].astype(float))
        rows.append({**dict(zip(blocks, key)), "methods": len(names),
                     "published order": _order(names, published), "our order": _order(names, mine),
                     "Kendall's \u03c4": round(kendall_tau(published, mine), 2) if len(names) > 1 else float("nan")})
    columns = [*blocks, "methods", "published order", "our order", "Kendall's \u03c4"]
    return pd.DataFrame(rows, columns=columns)


def mean_tau_text(orderings: pd.DataFrame) -> str:
    """The mean Kendall's tau of :func:`ordering_table` 's blocks as a page prints it
    (``"0.67"``; ``"0.50 over 2 of 3 blocks"`` when some blocks have no tau), or, when no
    block has one, what makes it undefined -- never ``nan``."""
    taus = orderings["Kendall's \u03c4"] if len(orderings) else pd.Series(dtype=float)
    defined = taus.dropna()
    if len(defined) == len(taus) and len(taus):
        return f"{defined.mean():.2f}"
    if len(defined):
        return f"{defined.mean():.2f} over {len(defined)} of {len(taus)} blocks"
    if not len(taus):
        return "undefined (no block has a published value and a run for two methods)"
    return ("undefined (in every block the published or our values tie, or one method is compared: "
            "there is no order to agree on)")


def show_orderings(page, comparison: pd.DataFrame, blocks: Sequence[str], what: str = "methods",
                   item: str = "algorithm") -> float:
    """A table page's orderings (FedSAM Table 2, FedGF Tables 1 and 5, FedGloSS Table 3):
    :func:`ordering_table` of ``comparison`` by ``blocks``, captioned with the mean Kendall's
    tau over the blocks; returns it (NaN: no block)."""
    orderings = ordering_table(comparison, blocks, item=item)
    mean_tau = orderings["Kendall's \u03c4"].mean() if len(orderings) else float("nan")
    page.table(orderings, show=orderings.set_index(list(blocks)) if len(orderings) else orderings,
               caption=f"The {what} ranked by the paper and by our runs; mean Kendall's \u03c4 over the "
                       f"{len(orderings)} blocks: {mean_tau_text(orderings)}.")
    return mean_tau
