"""FedIMA Table II from our runs: rounds to the target accuracy per method and IMA start,
as the claims' verdicts read them.

A cell (one method, one IMA start or ``FMA``: without IMA) is the mean over its finished
seeds of the claims' metric ``rounds`` (:data:`flcore.reproduction.claims.METRICS`, registered
in :mod:`flcore.papers.fedima.runs`): the first round the smoothed accuracy reaches the
target, or, for a seed that never reaches it, its last round + 1 -- a censored value, so a
cell with such a seed is a lower bound (printed ``≥``, with how many never reached) and a
cell none of whose seeds reached it prints *not reached* with that bound (its rounds + 1).
The same function and the same runs give the verdicts' cells
(:func:`flcore.reproduction.table_check.printed_cell`), so the table and the verdicts cannot
drift apart.

The speed-up over FMA is the paper's bracket, FMA's mean over the cell's mean, given only
where every seed of both cells reached the target (a censored mean has no ratio).  The
caption's count and the orderings (Kendall's tau per method) read the cells' means.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from flcore.papers.fedima import runs as fedima
from flcore.report import mean_sd_text, ours_values
from flcore.report.numbers import MISSING
from flcore.report.ordering import kendall_tau, mean_tau_text
from flcore.report.page import verdict_counts
from flcore.reproduction.claims import METRICS
from flcore.reproduction.published import published, source
from flcore.reproduction.stand_in import stand_in_for

#: The column of Table II without IMA.
FMA = "FMA"
#: Table II's columns in the paper's order.
COLUMNS = ("150", "200", "250", "300", FMA)
#: A cell none of whose seeds reached the target.
NOT_REACHED = "not reached"
#: The legend under the table.
LEGEND = ("Ours: the mean ± sd over the seeds the verdicts read (n; a cell without n is one seed, seed 0: no "
          "claim compares it); a seed that never reaches the target counts as its last round + 1, as in the "
          "verdicts, so a cell with one is a lower bound (≥, with how many never reached) and a cell where none "
          f"reached it reads *{NOT_REACHED}* with that bound. [×s]: the speed-up over the method without IMA "
          "(FMA), from the means, where every seed of both cells reached the target.")


def column_of(row: dict) -> str:
    """The Table II column of a run: its IMA start (the paper's round) or :data:`FMA`."""
    return str(int(row["ima_start"])) if row.get("ima") else FMA


def per_run(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per run of :func:`flcore.papers.fedima.runs.table2_runs`: ``algorithm``
    (without ``+IMA``), ``ima_start`` (:func:`column_of`), ``seed``, ``status``, ``rounds``
    (the claims' metric; NaN for an unfinished run), ``never`` (its rounds are censored) and
    ``target`` (%, the run's target accuracy)."""
    metric = METRICS["rounds"]
    rows = []
    for row in runs.to_dict("records"):
        finished = row["status"] == "finished" and isinstance(row.get("run_dir"), str)
        value = metric.function(row) if finished else None
        target = fedima.table2_target(row["run_dir"]) if finished else None
        rows.append({"algorithm": row["algorithm"].removesuffix("+IMA"), "ima_start": column_of(row),
                     "seed": row.get("seed"), "status": row["status"],
                     "rounds": np.nan if value is None else float(value),
                     "never": bool(value is not None and metric.censored(row)),
                     "target": np.nan if target is None else 100.0 * target})
    return pd.DataFrame(rows, columns=["algorithm", "ima_start", "seed", "status", "rounds", "never", "target"])


def table2_ours(runs: pd.DataFrame) -> pd.DataFrame:
    """Table II's cells of ours, one row per method and column (module docstring):
    ``rounds`` (mean over the seeds), ``ours_std`` (NaN for one seed), ``seeds`` (n),
    ``not_reached`` (seeds among them that never reached the target), ``left_out``
    (diverged seeds), ``status``, ``speedup`` (NaN where not defined) and ``target`` (%,
    the mean of the runs' targets)."""
    frame = per_run(runs)
    keys = ["algorithm", "ima_start"]
    cells = ours_values(frame, keys, "rounds").rename(columns={"ours": "rounds"})
    if cells.empty:
        return cells.assign(not_reached=[], speedup=[], target=[])
    counted = frame[(frame["status"] == "finished") & np.isfinite(frame["rounds"].to_numpy(dtype=float))]
    never = counted.groupby(keys, sort=False)["never"].sum()
    targets = counted.groupby(keys, sort=False)["target"].mean()
    index = list(cells[keys].itertuples(index=False, name=None))
    cells["not_reached"] = [int(never.get(k, 0)) for k in index]
    cells["target"] = [targets.get(k, np.nan) for k in index]
    reached = (cells["seeds"] > 0) & (cells["not_reached"] == 0)
    fma = cells[(cells["ima_start"] == FMA) & reached].set_index("algorithm")["rounds"]
    cells["speedup"] = [fma[a] / r if ok and a in fma.index and r > 0 else np.nan
                        for a, r, ok in zip(cells["algorithm"], cells["rounds"], reached)]
    return cells


def rounds_text(rounds: float, sd: float, n, not_reached, status: str = "finished") -> str:
    """One cell of ours as the page prints it (module docstring): ``"75.33 ± 2.08 (n = 3)"``,
    ``"≥ 82.00 ± 16.46 (n = 3; 1 not reached)"``, ``"not reached: ≥ 101.00 (n = 3)"``."""
    if status != "finished" or pd.isna(rounds) or not n:
        return mean_sd_text(np.nan, np.nan, 0, status=status)
    n, not_reached = int(n), int(not_reached)
    if not_reached == n:
        return f"{NOT_REACHED}: \u2265 {rounds:.2f}" + (f" (n = {n})" if n > 1 else "")
    if not_reached:
        return f"\u2265 {rounds:.2f} \u00b1 {sd:.2f} (n = {n}; {not_reached} not reached)"
    return mean_sd_text(rounds, sd, n)


def speedup_text(speedup: float) -> str:
    """The speed-up bracket after a cell (nothing where it is not defined)."""
    return "" if pd.isna(speedup) else f" [\u00d7{speedup:.2f}]"


def layout(published: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Table II as the page shows it: one row per method, a ``paper`` and an ``ours`` text
    cell (rounds, then the speed-up) under each column our runs have."""
    paper = published.assign(cell=[(NOT_REACHED if pd.isna(r) else f"{int(r)}") + speedup_text(s)
                                   for r, s in zip(published["rounds"], published["speedup"])])
    ours = cells.assign(cell=[rounds_text(r, sd, n, k, st) + speedup_text(s) for r, sd, n, k, st, s in zip(
        cells["rounds"], cells["ours_std"], cells["seeds"], cells["not_reached"], cells["status"], cells["speedup"])])
    columns = [c for c in COLUMNS if c in set(cells["ima_start"])]
    methods = list(dict.fromkeys(cells["algorithm"]))
    wide = {}
    for column in columns:
        for side, frame in (("paper", paper), ("ours", ours)):
            block = frame[frame["ima_start"].astype(str) == column].set_index("algorithm")["cell"]
            wide[column, side] = [block.get(m, MISSING) for m in methods]
    table = pd.DataFrame(wide, index=pd.Index(methods, name="algorithm"))
    table.columns = table.columns.set_names(["IMA start", ""])
    return table


def sooner(cells: pd.DataFrame) -> tuple[int, int]:
    """(IMA cells that reach the target sooner than their method's FMA cell, IMA cells with a
    number), on the cells' means: a cell with a seed that never reached the target is not
    counted as sooner (its mean is a lower bound)."""
    shown = cells[(cells["status"] == "finished") & (cells["seeds"] > 0)]
    fma = shown[shown["ima_start"] == FMA].set_index("algorithm")["rounds"]
    ima = shown[shown["ima_start"] != FMA]
    faster = sum(1 for a, r, k in zip(ima["algorithm"], ima["rounds"], ima["not_reached"])
                 if k == 0 and a in fma.index and r < fma[a])
    return faster, len(ima)


def target_text(cells: pd.DataFrame, scale: str) -> str:
    """The target accuracy as the caption names it: the paper's 60 %, or below the paper
    scale where FedAvg (FMA) ends, the mean over the seeds' targets."""
    if stand_in_for(scale, "fedima").is_paper:
        return f"the target accuracy is {100 * fedima.TARGET_PAPER:.0f} %"
    fedavg = cells[(cells["algorithm"] == "FedAvg") & (cells["ima_start"] == FMA)]["target"].dropna()
    mean = fedavg.iloc[0] if len(fedavg) else cells["target"].mean()
    if pd.isna(mean):
        return "the target accuracy is where FedAvg ends (no finished FedAvg run yet)"
    return (f"the target accuracy is where FedAvg ends, {mean:.1f} % on average over the seeds (each seed's runs "
            "are measured against its own FedAvg run)")


def orderings(published: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Per method, its columns ranked by rounds to the target (fewest first) in the paper and
    ours (the cells' means, a never-reached seed counted as the verdicts count it), with
    Kendall's tau over the columns both have."""
    rows = []
    shown = cells[(cells["status"] == "finished") & (cells["seeds"] > 0)]
    for algorithm, block in shown.groupby("algorithm", sort=False):
        pub = published[published["algorithm"] == algorithm].dropna(subset=["rounds"])
        pub = pub.assign(ima_start=pub["ima_start"].astype(str)).set_index("ima_start")["rounds"].astype(float)
        mine = block.set_index("ima_start")["rounds"].astype(float)
        common = [c for c in COLUMNS if c in mine.index and c in pub.index]
        tau = kendall_tau([-float(pub[c]) for c in common], [-float(mine[c]) for c in common]) \
            if len(common) > 1 else np.nan
        rows.append({"algorithm": algorithm, "columns": ", ".join(common),
                     "paper (fewest first)": _fewest_first(common, pub),
                     "ours (fewest first)": _fewest_first(common, mine),
                     "Kendall's \u03c4": round(tau, 2) if not pd.isna(tau) else np.nan})
    return pd.DataFrame(rows, columns=["algorithm", "columns", "paper (fewest first)", "ours (fewest first)",
                                       "Kendall's \u03c4"])


def _fewest_first(columns: Sequence[str], rounds: pd.Series) -> str:
    return " < ".join(sorted(columns, key=lambda c: rounds[c]))


def orderings_caption(table: pd.DataFrame) -> str:
    """The orderings table's caption, with the mean Kendall's tau (never ``nan``)."""
    return f"IMA start columns ranked by rounds to the target (the cells' means); mean Kendall's \u03c4 " \
           f"{mean_tau_text(table)}."


def exponential_beats_none(comparison: pd.DataFrame, column: str) -> tuple[int, int]:
    """Table 3's decay comparison: (methods whose ``column`` value with exponential client
    decay exceeds the one with none, methods with both values) in ``comparison`` (columns
    ``algorithm``, ``client_decay`` and ``column``); (0, 0) when either decay is absent."""
    pairs = comparison.pivot_table(index="algorithm", columns="client_decay", values=column, sort=False)
    if not {"exponential", "none"} <= set(pairs.columns):
        return 0, 0
    both = pairs[["exponential", "none"]].dropna()
    return int((both["exponential"] > both["none"]).sum()), len(both)


def show_rounds_to_target(page, runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table II on ``page``: our rounds to the target (:func:`table2_ours`) laid out beside the
    paper's (:func:`layout`), captioned with the target (:func:`target_text`) and how many IMA
    cells reach it sooner than their method without IMA (:func:`sooner`), then the legend and
    the source; returns ``(published, ours)``."""
    paper_values = published(page.artifact_id)
    ours = table2_ours(runs)
    faster, ima_cells = sooner(ours)
    page.table(ours, f"Rounds to the target; {target_text(ours, page.scale)}. {faster} of our {ima_cells} IMA cells "
                     "(seed means) reach it sooner than their method without IMA; in the paper every IMA run does.",
               show=layout(paper_values, ours), downloads={"published": paper_values, "ours": ours})
    page.note(f"{LEGEND} Published values: {source(page.artifact_id)['source']}.")
    return paper_values, ours


def rounds_findings(cells: pd.DataFrame, verdicts: pd.DataFrame, scale: str) -> list[str]:
    """Table II's "What we found": how many of our IMA cells (:func:`table2_ours`) reach the
    target sooner than their method without IMA (:func:`sooner`), and the claims' verdicts
    counted (:func:`flcore.report.page.verdict_counts`)."""
    faster, ima_cells = sooner(cells)
    return [f"At the **{scale}** scale {faster} of our {ima_cells} IMA cells reach the target sooner than "
            f"their method without IMA; {verdict_counts(verdicts)}."]
