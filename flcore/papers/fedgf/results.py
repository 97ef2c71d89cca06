"""The FedGF pages' cells as the claims' verdicts read them: per cell the mean over the
seeds the verdicts read, with its sd and n.

- Table 2: :func:`flatness_runs` reads each run's LPF, lambda_max and Delta_F with the
  claims' metric functions (``lpf``, ``fedgf_lambda_max``, ``flatness_discrepancy``),
  :func:`flatness_comparison` sets their seed means beside the published values, and
  :func:`flattest_learning` ranks the seed means among the methods that learn (a model
  whose accuracy sits at chance can be flat and ranks nothing);
- Table 4: :func:`transmission_cells` averages
  :func:`~flcore.papers.fedgf.analysis.transmissions_table`'s runs per cell, a run that
  never reaches the target counted at its last round + 1 as the ``communication`` metric
  counts it (so such a mean is a lower bound, printed with ``>=`` and the count of
  never-reached seeds), with the FedSMOO / FedGF ratio of the means where every seed of
  both reached; :func:`mean_first_to_target_sentence` says which method needs fewer;
- Fig. 1: :func:`alpha_sweep`, :func:`sweep_means` (printed by :func:`sweep_means_text`) and
  :func:`sweep_figure`, the seeds' mean per alpha with every seed drawn.

The mean is the one :func:`flcore.reproduction.table_check.printed_cell` recomputes
(:func:`flcore.report.ours_values`: the finished runs with a finite value).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from flcore.papers.fedgf.analysis import FIRST, NEITHER, SAME, SECOND, finite, global_flatness
from flcore.report import mean_sd_text, ours_values, paper_vs_ours
from flcore.report.numbers import MISSING
from flcore.report.tables import NOT_RUN_MARK
from flcore.reproduction.claims import METRICS, at_chance, learn_margin_of

#: Table 2's columns -> the claims' metric that reads each (:mod:`flcore.papers.fedgf.runs`).
FLATNESS_METRICS = {"lpf": "lpf", "lambda_max": "fedgf_lambda_max", "flatness_discrepancy": "flatness_discrepancy"}
#: What an undecided mean comparison of :func:`mean_first_to_target` is (never-reached seeds
#: leave the order open).
UNDECIDED = "undecided"


# --------------------------------------------------------------------------- Table 2

def flatness_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per run of ``runs`` (:meth:`~flcore.report.page.Page.runs`'s frame): its
    labels, status, accuracy (%, mean of the last 100 rounds) and, for a finished run, the
    Table 2 columns as the claims read them (:data:`FLATNESS_METRICS`) with the training loss
    and radius of :func:`~flcore.papers.fedgf.analysis.global_flatness` (cached per run)."""
    rows = []
    for row in runs.to_dict("records"):
        finished = row["status"] == "finished"
        extra = global_flatness(row["run_dir"]) if finished else {}
        final = finite(row.get("mean_last_100"))
        rows.append({"algorithm": row["algorithm"], "alpha": row["alpha"], "seed": row["seed"],
                     "status": row["status"], "accuracy": np.nan if final is None else 100.0 * final,
                     **{column: METRICS[metric].function(row) if finished else None
                        for column, metric in FLATNESS_METRICS.items()},
                     "loss": finite(extra.get("loss")), "rho": finite(extra.get("rho"))})
    return pd.DataFrame(rows, columns=["algorithm", "alpha", "seed", "status", "accuracy", *FLATNESS_METRICS,
                                       "loss", "rho"])


def flatness_comparison(per_run: pd.DataFrame, published: pd.DataFrame,
                        keys: Sequence[str] = ("alpha", "algorithm")) -> pd.DataFrame:
    """Per Table 2 column (``metric``) and cell: the published value beside our seed mean
    (:func:`~flcore.report.paper_vs_ours`'s columns: ``paper``, ``ours``, ``ours_std``,
    ``seeds``, ...), the columns in :data:`FLATNESS_METRICS`' order."""
    keys = list(keys)
    blocks = [paper_vs_ours(published, ours_values(per_run, keys, column), keys, value=column).assign(metric=column)
              for column in FLATNESS_METRICS]
    return pd.concat(blocks, ignore_index=True)[["metric", *keys, "paper", "ours", "delta", "ours_std", "seeds",
                                                 "left_out", "status", "note"]]


def at_chance_methods(per_run: pd.DataFrame, chance: float,
                      keys: Sequence[str] = ("alpha", "algorithm")) -> dict[tuple, tuple[float, int]]:
    """The ``keys`` cells of ``per_run`` (:func:`flatness_runs`) whose finished runs did not
    learn: most seeds' accuracy below ``chance`` (%) plus the learn margin
    (:func:`flcore.reproduction.claims.at_chance`, the verdicts' rule), each with its seeds'
    ``(mean accuracy, n)``."""
    out = {}
    finished = per_run[per_run["status"] == "finished"]
    for key, group in finished.groupby(list(keys), sort=False):
        values = [float(v) for v in group["accuracy"] if pd.notna(v)]
        if values and at_chance(values, chance):
            out[key if isinstance(key, tuple) else (key,)] = (sum(values) / len(values), len(values))
    return out


def at_chance_text(at_chance: dict[tuple, tuple[float, int]], chance: float, dataset: str = "mnist1d") -> str:
    """``" Not ranked, did not learn (most seeds below 15 %: chance 10 % + 5): FedAvg at
    alpha = 0 (mean 10.00 % over 3 seeds)."``, from :func:`at_chance_methods` keyed by
    (alpha, algorithm); empty when none is."""
    if not at_chance:
        return ""
    margin = learn_margin_of(dataset)
    cells = "; ".join(f"{algorithm} at alpha = {alpha:g} (mean {mean:.2f} % over {n} seed{'s' if n != 1 else ''})"
                      for (alpha, algorithm), (mean, n) in sorted(at_chance.items()))
    return (f" Not ranked, did not learn (most seeds below {chance + margin:g} %: chance {chance:g} % + "
            f"{margin:g}): {cells}.")


def flattest_learning(comparison: pd.DataFrame, metric: str, side: str, excluded=frozenset(),
                      keys: Sequence[str] = ("alpha", "algorithm")) -> str:
    """The ``algorithm`` with the lowest ``side`` (``paper`` | ``ours``: ours is the seed mean)
    value of ``metric`` among ``comparison``'s rows (:func:`flatness_comparison`, one alpha)
    whose cell is not in ``excluded`` (the keys of :func:`at_chance_methods`); ``"none"`` without one."""
    rows = comparison[comparison["metric"] == metric].dropna(subset=[side])
    rows = rows[[tuple(r) not in excluded for r in rows[list(keys)].itertuples(index=False, name=None)]]
    return rows.loc[rows[side].idxmin(), "algorithm"] if len(rows) else "none"


# --------------------------------------------------------------------------- Table 4

def transmission_cells(table: pd.DataFrame, keys: Sequence[str] = ("dataset", "alpha", "algorithm"),
                       first: str = "FedGF", second: str = "FedSMOO") -> pd.DataFrame:
    """Table 4's cells from :func:`~flcore.papers.fedgf.analysis.transmissions_table`'s runs:
    per ``keys`` cell the seed mean of ``transmissions`` (never-reached runs counted at their
    last round + 1, as the ``communication`` metric counts them), ``ours_std``, ``seeds``
    (n), ``never_reached`` (seeds that never reached the target), ``runs`` (the cell's run
    ids, sorted) and ``ratio`` (``second`` / ``first`` of the means, on ``second``'s row,
    only where every seed of both reached the target)."""
    keys = list(keys)
    cells = ours_values(table.assign(status="finished"), keys, "transmissions")
    grouped = table.groupby(keys, sort=False)
    never = grouped["reached"].apply(lambda r: int((~r.astype(bool)).sum()))
    runs = grouped["run_id"].apply(lambda r: tuple(sorted(set(r))))
    index = list(cells[keys].itertuples(index=False, name=None))
    cells["never_reached"] = [int(never.get(k, 0)) for k in index]
    cells["runs"] = [runs.get(k, ()) for k in index]
    by = cells.set_index(keys)
    setting = [k for k in keys if k != "algorithm"]
    ratios = []
    for row in cells.to_dict("records"):
        ratio = np.nan
        if row["algorithm"] == second:
            other = tuple(row[k] for k in setting) + (first,)
            if other in by.index:
                mine, theirs = by.loc[tuple(row[k] for k in keys)], by.loc[other]
                if (mine["never_reached"] == 0 and theirs["never_reached"] == 0 and theirs["ours"] > 0
                        and mine["seeds"] > 0 and theirs["seeds"] > 0):
                    ratio = mine["ours"] / theirs["ours"]
        ratios.append(ratio)
    cells["ratio"] = ratios
    return cells


def transmission_text(mean: float, sd: float, n: int, never_reached: int, digits: int = 2) -> str:
    """A Table 4 cell: ``"0.90 ± 0.10 (n = 3)"``; with never-reached seeds the mean is a lower
    bound, ``"≥ 1.23 ± 0.20 (n = 3; 1 never reached)"`` (``"≥ 1.23 (never reached)"`` for one
    seed)."""
    return mean_sd_text(mean, sd, n, digits, never_reached=never_reached)


def transmissions_comparison(published: pd.DataFrame, cells: pd.DataFrame,
                             keys: Sequence[str] = ("dataset", "alpha", "algorithm")) -> pd.DataFrame:
    """Table 4 paper beside ours, one row per cell of either (sorted by ``keys``): the
    published transmissions and ratio, our cell (:func:`transmission_text`;
    :data:`~flcore.report.tables.NOT_RUN_MARK` for a published cell without a run here), our
    ratio (:func:`transmission_cells`), n and the seeds that never reached the target."""
    keys = list(keys)
    pub = published[keys + ["transmissions", "ratio"]].rename(columns={"transmissions": "paper",
                                                                       "ratio": "paper: FedSMOO / FedGF"})
    merged = pub.merge(cells, on=keys, how="outer")
    merged["ours"] = [NOT_RUN_MARK if pd.isna(n) else transmission_text(m, s, n, r) if n else MISSING
                      for m, s, n, r in zip(merged["ours"], merged["ours_std"], merged["seeds"],
                                            merged["never_reached"].fillna(0).astype(int))]
    merged["ours: FedSMOO / FedGF"] = [MISSING if pd.isna(r) else f"{r:.2f}" for r in merged["ratio"]]
    merged["n"] = merged["seeds"].fillna(0).astype(int)
    merged["never reached"] = merged["never_reached"].fillna(0).astype(int)
    columns = keys + ["paper", "paper: FedSMOO / FedGF", "ours", "ours: FedSMOO / FedGF", "n", "never reached"]
    return merged.sort_values(keys)[columns].reset_index(drop=True)


def mean_first_to_target(cells: pd.DataFrame, first: str = "FedGF", second: str = "FedSMOO",
                         keys: Sequence[str] = ("dataset", "alpha")) -> pd.DataFrame:
    """Which method needs fewer transmissions on the seeds' means of :func:`transmission_cells`,
    once per distinct pair of cells (two settings that are the same runs count once, both
    listed).  A mean with never-reached seeds is a lower bound: against a mean over seeds
    that all reached it decides when it is larger, or when none of its seeds reached (it then
    ranks worst, as the verdict ranks a censored value)
    (:data:`~flcore.papers.fedgf.analysis.FIRST` / ``SECOND``); ``NEITHER`` when no seed of
    either reached, :data:`UNDECIDED` otherwise (some seeds reached, the bound below the other
    mean, or never-reached seeds on both sides)."""
    keys = list(keys)
    pairs: dict[tuple, dict] = {}
    for key, block in cells.groupby(keys, sort=False):
        by = block.set_index("algorithm")
        if first not in by.index or second not in by.index:
            continue
        a, b = by.loc[first], by.loc[second]
        if not a["seeds"] or not b["seeds"]:
            continue
        setting = ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{v}" for k, v in zip(keys, key))
        pair = (a["runs"], b["runs"])
        if pair in pairs:
            pairs[pair]["settings"] += f"; {setting}"
            continue
        a_all, b_all = a["never_reached"] == 0, b["never_reached"] == 0
        a_none, b_none = a["never_reached"] == a["seeds"], b["never_reached"] == b["seeds"]
        if a_none and b_none:
            outcome = NEITHER
        elif a_all and b_all:
            outcome = FIRST if a["ours"] < b["ours"] else SECOND if b["ours"] < a["ours"] else SAME
        elif a_all and (b_none or a["ours"] < b["ours"]):  # b's mean is a lower bound: above a's, or b ranks worst
            outcome = FIRST
        elif b_all and (a_none or b["ours"] < a["ours"]):
            outcome = SECOND
        else:
            outcome = UNDECIDED
        pairs[pair] = {"settings": setting, f"{first} (x10^2)": transmission_text(a["ours"], a["ours_std"], a["seeds"],
                                                                                   a["never_reached"]),
                       f"{second} (x10^2)": transmission_text(b["ours"], b["ours_std"], b["seeds"],
                                                               b["never_reached"]),
                       "outcome": outcome}
    return pd.DataFrame(list(pairs.values()),
                        columns=["settings", f"{first} (x10^2)", f"{second} (x10^2)", "outcome"])


def mean_first_to_target_sentence(pairs: pd.DataFrame, first: str = "FedGF", second: str = "FedSMOO") -> str:
    """``"FedGF needs fewer transmissions than FedSMOO on the seeds' means in 1 of 2 distinct
    settings ...; ..."``: the counts of :func:`mean_first_to_target`'s ``pairs``."""
    counts = pairs["outcome"].value_counts()
    text = (f"{first} needs fewer transmissions than {second} on the seeds' means in {counts.get(FIRST, 0)} of "
            f"{len(pairs)} distinct setting{'s' if len(pairs) != 1 else ''} (settings that are the same runs count "
            "once)")
    others = [f"{second} needs fewer in {counts[SECOND]}" if counts.get(SECOND) else "",
              f"both need as many in {counts[SAME]}" if counts.get(SAME) else "",
              f"no seed of either reaches the target in {counts[NEITHER]}" if counts.get(NEITHER) else "",
              f"never-reached seeds leave {counts[UNDECIDED]} undecided" if counts.get(UNDECIDED) else ""]
    others = [o for o in others if o]
    return text + ("; " + ", ".join(others) if others else "") + "."


# --------------------------------------------------------------------------- Fig. 1

def alpha_sweep(runs: pd.DataFrame) -> pd.DataFrame:
    """Fig. 1's runs, one row per finished run: alpha, seed, accuracy (%, mean of the last
    100 rounds), Delta_F of the final global model as the claims read it
    (``flatness_discrepancy``), run id; sorted by alpha and seed."""
    rows = [{"alpha": row["alpha"], "seed": row["seed"], "accuracy": 100.0 * float(row["mean_last_100"]),
             "flatness_discrepancy": METRICS["flatness_discrepancy"].function(row), "run_id": row["run_id"]}
            for row in runs[runs["status"] == "finished"].to_dict("records")]
    return pd.DataFrame(rows, columns=["alpha", "seed", "accuracy", "flatness_discrepancy", "run_id"]).sort_values(
        ["alpha", "seed"], ignore_index=True)


def sweep_means(sweep: pd.DataFrame) -> pd.DataFrame:
    """Per alpha of :func:`alpha_sweep`: the seeds' mean, sd and n of the accuracy and of
    Delta_F (``accuracy``, ``accuracy sd``, ``flatness_discrepancy``, ... ``n``)."""
    rows = []
    for alpha, group in sweep.assign(status="finished").groupby("alpha", sort=True):
        row = {"alpha": alpha}
        for column in ("accuracy", "flatness_discrepancy"):
            cell = ours_values(group, ["alpha"], column).iloc[0]
            row.update({column: cell["ours"], f"{column} sd": cell["ours_std"], f"{column} n": int(cell["seeds"])})
        rows.append(row)
    return pd.DataFrame(rows, columns=["alpha", "accuracy", "accuracy sd", "accuracy n", "flatness_discrepancy",
                                       "flatness_discrepancy sd", "flatness_discrepancy n"])


def sweep_means_text(means: pd.DataFrame) -> pd.DataFrame:
    """:func:`sweep_means` as the page prints it, indexed by alpha: ``"61.20 ± 1.30 (n = 3)"``
    per cell (Delta_F to three decimals)."""
    return pd.DataFrame({
        "accuracy (%)": [mean_sd_text(m, s, n) for m, s, n in zip(means["accuracy"], means["accuracy sd"],
                                                                  means["accuracy n"])],
        "Delta_F": [mean_sd_text(m, s, n, digits=3) for m, s, n in zip(
            means["flatness_discrepancy"], means["flatness_discrepancy sd"], means["flatness_discrepancy n"])]},
        index=pd.Index(means["alpha"], name="alpha"))


def sweep_figure(sweep: pd.DataFrame, color: str):
    """Fig. 1: FedSAM's accuracy (left axis, ``color``) and Delta_F (right axis, grey,
    dashed) against alpha (evenly spaced, in increasing order), each the seeds' mean with
    every seed drawn as a dot."""
    import matplotlib.pyplot as plt

    means = sweep_means(sweep)
    position = {alpha: i for i, alpha in enumerate(means["alpha"])}
    fig, ax = plt.subplots(figsize=(6, 3.6))
    twin = ax.twinx()
    twin.grid(False)  # one grid, the accuracy axis's
    for axis, column, style, label in ((ax, "accuracy", {"color": color, "marker": "o"}, "accuracy"),
                                       (twin, "flatness_discrepancy", {"color": "0.3", "marker": "s",
                                                                       "linestyle": "--"}, "Delta_F")):
        axis.plot(list(position.values()), means[column], label=f"{label} (mean over seeds)", **style)
        seeds = sweep.dropna(subset=[column])
        axis.scatter([position[a] for a in seeds["alpha"]], seeds[column], s=10, color=style["color"], alpha=0.6,
                     zorder=3)
    ax.set_xticks(list(position.values()), [f"{a:g}" for a in position])
    ax.set_xlabel("Dirichlet alpha (left: more heterogeneous)")
    ax.set_ylabel("test accuracy (%)")
    twin.set_ylabel("flatness discrepancy Delta_F")
    ax.legend(handles=ax.get_lines() + twin.get_lines(), loc="center right", fontsize=8)
    return fig


def best_c(cells: pd.DataFrame, column: str) -> str:
    """The ``c`` of the row with the highest ``column`` (``paper`` or ``ours``) among the rows
    of ``cells`` that have a value there; ``"none"`` when no row has one."""
    shown = cells.dropna(subset=[column])
    return shown.loc[shown[column].idxmax(), "c"] if len(shown) else "none"
