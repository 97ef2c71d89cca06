"""The FedLESAM paper's efficiency tables (Tables 5, 8 and 9) from stored runs.

- **rounds** (Tables 5, 9): the first evaluated round at which a run's test accuracy
  reaches the target (:func:`rounds_to_target`).  A run that never reaches it within its
  ``T`` rounds is counted as ``T + eval_every`` (a lower bound, marked ``reached = False``)
  so that a comparison with it can still be decided.
- **communication cost** (Tables 5, 9): rounds x the model-sized vectors a client sends
  and receives per round (:func:`flcore.config.traffic_of`'s uploads plus
  downloads, the units of the paper's Table 7), as a ratio to FedAvg's.
- **computation time** (Tables 5, 9: "computational times of all clients"): rounds x the
  run's measured seconds per training round, as a ratio to FedAvg's.
- **wall-clock seconds per round** (Table 8): the mean time of a run's training rounds
  (:class:`flcore.sim.round_driver.RoundTiming`, recorded in the run's status; a run trained in
  a batch of ``r`` runs records its share, the round's time over ``r``), so all methods are
  timed on the machine that trained them.

Targets: at the ``paper`` scale the paper's 68% and 74%.  Below it the data set is not
CIFAR-10 and fixed accuracies mean nothing; the targets keep the paper's relation to
FedAvg instead -- FedAvg reaches 74% at round 786 of its ~800 (Table 5), i.e. about its
best accuracy -- so "74" is FedAvg's best evaluated accuracy on the same setting and
"68" is 68/74 of it (:func:`target_accuracy`).

Each table cell is the mean over the cell's finished runs -- the seeds the claims' verdicts
read -- with its standard deviation and n (:func:`efficiency_cells`, :func:`seconds_per_round_cells`),
computed by the same functions as the claims' metrics; a time is read from the *timed* runs
only (trained alone), and a count that never reached its target enters the mean at its
lower bound, the cell marked so (:func:`censored_text`).

Rounds to a target and transmissions per round are the shared helpers of
:mod:`flcore.reproduction.targets`.
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from flcore.papers.fedlesam import runs as fedlesam
from flcore.report.ordering import kendall_tau, ordering_table
from flcore.report.tables import mean_sd_text, ours_values
from flcore.reproduction.claims import METRICS
from flcore.reproduction.published import published, source
from flcore.reproduction.stand_in import stand_in_for
from flcore.reproduction.targets import rounds_to_target, transmissions_per_round
from flcore.store import RunStore

__all__ = ["censored_text", "efficiency_cells", "efficiency_table", "rounds_to_target", "run_efficiency",
           "seconds_per_round_cells", "seconds_per_round_runs", "target_accuracy", "timing",
           "transmissions_per_round"]

PAPER_TARGETS = (68, 74)


def target_accuracy(target: float, scale: str, fedavg_curve: list[dict]) -> float:
    """The accuracy (fraction) standing for the paper's ``target`` % at ``scale`` (module docstring)."""
    if stand_in_for(scale, "fedlesam").is_paper:
        return target / 100.0
    accs = [r["test_accuracy"] for r in fedavg_curve if r.get("test_accuracy") is not None]
    if not accs:
        raise ValueError("the FedAvg run has no evaluated round: its targets cannot be set")
    return max(accs) * target / max(PAPER_TARGETS)


@lru_cache(maxsize=512)
def _read_run(run_dir: str) -> tuple[dict, dict, tuple]:
    """(config, status, metric rows) of a stored run (cached: tables read it several times)."""

    path = Path(run_dir)
    run = RunStore(path.parent).run(path.name)
    return run.config(), run.status(), tuple(run.read_metrics())


def timing(run_dir: str) -> dict | None:
    """``{"seconds_per_round", "sd", "rounds", "batch_runs"}`` as the run recorded them
    (a run trained in a batch of ``batch_runs``: its share of each round), or None."""
    _, status, _ = _read_run(str(run_dir))
    if status.get("seconds_per_round") is None:
        return None
    return {"seconds_per_round": float(status["seconds_per_round"]),
            "sd": float(status.get("seconds_per_round_sd") or 0.0), "rounds": int(status["timed_rounds"]),
            "batch_runs": int(status.get("batch_runs") or 1)}


def run_efficiency(run_dir: str, fedavg_dir: str, target: float) -> dict[str, Any]:
    """Rounds, cost and compute time of the run at ``run_dir`` to the paper's ``target`` %,
    beside FedAvg's (``fedavg_dir``), with their ratios (module docstring)."""
    cfg, _, curve = _read_run(str(run_dir))
    fcfg, _, fcurve = _read_run(str(fedavg_dir))
    acc = target_accuracy(target, cfg["scale"], list(fcurve))

    def reach(c, curve_rows):
        r = rounds_to_target(list(curve_rows), acc)
        return (r, True) if r is not None else (int(c["rounds"]) + int(c["eval_every"]), False)

    rounds, reached = reach(cfg, curve)
    f_rounds, f_reached = reach(fcfg, fcurve)
    comm, f_comm = transmissions_per_round(cfg["method"]), transmissions_per_round(fcfg["method"])
    t, ft = timing(run_dir), timing(fedavg_dir)
    out = {"target_accuracy": acc, "rounds": rounds, "reached": reached, "rounds_ratio": rounds / f_rounds,
           "cost": rounds * comm, "cost_ratio": rounds * comm / (f_rounds * f_comm),
           "fedavg_rounds": f_rounds, "fedavg_reached": f_reached, "compute_s": None, "compute_ratio": None}
    if t is not None and ft is not None:
        out["compute_s"] = rounds * t["seconds_per_round"]
        out["compute_ratio"] = out["compute_s"] / (f_rounds * ft["seconds_per_round"])
    # standard errors: rounds are known to one evaluation interval (uniform quantisation)
    q = int(cfg["eval_every"]) / math.sqrt(12.0)
    rel_rounds = math.hypot(q / rounds, q / f_rounds)
    out["rounds_sigma"] = q
    out["cost_ratio_sigma"] = out["cost_ratio"] * rel_rounds
    if out["compute_ratio"] is not None:
        rel_t = math.hypot(t["sd"] / math.sqrt(t["rounds"]) / t["seconds_per_round"],
                           ft["sd"] / math.sqrt(ft["rounds"]) / ft["seconds_per_round"])
        out["compute_ratio_sigma"] = out["compute_ratio"] * math.hypot(rel_rounds, rel_t)
    return out


def fedavg_dir_of(row: dict) -> str:
    """The run directory of FedAvg on the same setting as the efficiency-table ``row``."""
    cfg, _, _ = _read_run(str(row["run_dir"]))
    spec = fedlesam.lesam_run(row["dataset"], "FedAvg", row["split"], row["population"], row["seed"], cfg["scale"])
    return str(Path(row["run_dir"]).parent / spec.run_id())


def efficiency_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per finished run and target of a Tables 5/9 ``results_frame`` (``case``,
    ``target``, ``algorithm``, ``seed``, ``timed``: whether it trained alone): rounds, cost
    and compute time to the target, and their ratios to FedAvg (:func:`run_efficiency`, what
    the claims' metrics read)."""
    rows = []
    for row in frame.to_dict("records"):
        if row["status"] != "finished":
            continue
        values = run_efficiency(row["run_dir"], fedavg_dir_of(row), row["target"])
        timed = bool(_read_run(str(row["run_dir"]))[0].get("timed"))
        rows.append({"case": row["case"], "target": row["target"], "algorithm": row["algorithm"],
                     "seed": row.get("seed"), "timed": timed, **values})
    return pd.DataFrame(rows)


#: A Tables 5/9 cell: one per case, target and method.
CELL_KEYS = ("case", "target", "algorithm")
#: The per-run numbers a cell averages; the claims read ``rounds`` (lesam_rounds),
#: ``cost_ratio`` (communication_cost_ratio) and ``compute_ratio`` (compute_time_ratio).
CELL_COLUMNS = ("rounds", "rounds_ratio", "cost_ratio", "compute_ratio")
#: The columns read from timed runs only (a time: flcore.reproduction.claims' ``timed`` metrics).
TIMED_COLUMNS = ("compute_ratio",)


def efficiency_cells(per_run: pd.DataFrame) -> pd.DataFrame:
    """One row per :data:`CELL_KEYS` cell of :func:`efficiency_table`'s runs: for each of
    :data:`CELL_COLUMNS` the mean over the cell's runs with a finite value (``<column>``),
    their standard deviation (``<column>_sd``, NaN for one run), their number (``<column>_n``)
    and how many of them never reached the target (``<column>_never``: their values are
    lower bounds, in the mean as the claims' verdicts count them); a column of
    :data:`TIMED_COLUMNS` reads the timed runs only.  ``target_accuracy``: the mean target
    (below the paper scale each seed's FedAvg sets its own)."""
    keys = list(CELL_KEYS)
    if not len(per_run):
        return pd.DataFrame(columns=[*keys, "target_accuracy", *(f"{c}{s}" for c in CELL_COLUMNS
                                                                   for s in ("", "_sd", "_n", "_never"))])
    runs = per_run.assign(status="finished")
    cells = runs.groupby(keys, sort=False)["target_accuracy"].mean().reset_index()
    for column in CELL_COLUMNS:
        read = runs[runs["timed"].astype(bool)] if column in TIMED_COLUMNS else runs
        values = ours_values(read, keys, column)
        with_value = read[pd.to_numeric(read[column], errors="coerce").notna()]
        never = (~with_value["reached"].astype(bool)).groupby([with_value[k] for k in keys], sort=False).sum()
        values = values.rename(columns={"ours": column, "ours_std": f"{column}_sd", "seeds": f"{column}_n"})
        values[f"{column}_never"] = [int(never.get(tuple(row), 0)) for row in values[keys].itertuples(index=False)]
        cells = cells.merge(values[[*keys, column, f"{column}_sd", f"{column}_n", f"{column}_never"]], on=keys,
                            how="left")
    return cells


def censored_text(mean: float, sd: float, n, never: int = 0, digits: int = 2) -> str:
    """A cell as the pages print it (:func:`flcore.report.tables.mean_sd_text`), marked when
    ``never`` of its ``n`` runs never reached the target: ``"≥ 412.33 ± 20.10 (n = 3; 1 never
    reached)"`` -- the mean counts those runs at their lower bound."""
    return mean_sd_text(mean, sd, n, digits, never_reached=never)


def cell_texts(cells: pd.DataFrame, column: str) -> list[str]:
    """:func:`censored_text` of ``column`` for every row of :func:`efficiency_cells`."""
    return [censored_text(row[column], row[f"{column}_sd"], row[f"{column}_n"], row[f"{column}_never"])
            for row in cells.to_dict("records")]


# ----------------------------------------------------------------------------- pages (Tables 5 and 9)

#: The columns of our efficiency cells that the pages of Tables 5 and 9 show, and their headers.
SHOWN_COLUMNS = {"rounds": "rounds", "rounds_ratio": "rounds ratio", "cost_ratio": "cost ratio",
                 "compute_ratio": "compute-time ratio (timed runs)"}
#: The SAM-based methods whose computation time Tables 5 and 9 compare with FedLESAM-S's.
SAM_BASED = ("FedSAM", "MoFedSAM", "FedGAMMA", "FedSMOO")


def compute_finding(ours: pd.DataFrame) -> str:
    """Tables 5 and 9: FedLESAM-S's computation time to the 68 target as a ratio to FedAvg's,
    beside the range of the SAM-based methods' (rows of :func:`efficiency_table`)."""
    ratio = ours.set_index(["target", "algorithm"])["compute_ratio"] if len(ours) else pd.Series(dtype=float)
    sam_like = [ratio.get((68, a)) for a in SAM_BASED]
    sam_like = [v for v in sam_like if v is not None and pd.notna(v)]
    if not sam_like:
        return "no computation times are recorded (runs trained in a batch record none)"
    return (f"to the 68 target FedLESAM-S takes {ratio.get((68, 'FedLESAM-S'), float('nan')):.2f}x FedAvg's "
            f"computation time, the SAM-based methods {min(sam_like):.2f}-{max(sam_like):.2f}x")


def efficiency_shown(cells: pd.DataFrame) -> pd.DataFrame:
    """:func:`efficiency_cells` as the pages show them: per target and method the mean target
    accuracy (%) and each of :data:`SHOWN_COLUMNS` as ``mean ± sd (n)`` (:func:`censored_text`)."""
    shown = pd.DataFrame({"target": cells["target"], "algorithm": cells["algorithm"],
                          "target accuracy (%)": [f"{100.0 * v:.2f}" for v in cells["target_accuracy"]]})
    for column, header in SHOWN_COLUMNS.items():
        shown[header] = cell_texts(cells, column)
    return shown


def show_efficiency(page, runs: pd.DataFrame, scale: str) -> pd.DataFrame:
    """Tables 5 and 9: our rounds, cost and computation time to each target as ratios to
    FedAvg, each cell the mean over its seeds (:func:`efficiency_cells`), captioned with
    :func:`compute_finding`; returns the cells."""
    per_run = efficiency_table(runs)
    cells = efficiency_cells(per_run)
    never = int((~per_run["reached"].astype(bool)).sum()) if len(per_run) else 0
    page.table(cells, f"Ours at the {scale} scale, mean \u00b1 sd (n) over each cell's seeds, the seeds the "
                      f"verdicts read (computation time: the timed runs, trained alone); {never} of the "
                      f"{len(per_run)} (run, target) pairs never reached the target (counted at the run's rounds + "
                      f"one evaluation interval, a lower bound: \u2265). Seed means: {compute_finding(cells)}.",
               show=efficiency_shown(cells), downloads={"cells": cells, "runs": per_run})
    return cells


def _numeric_ratios(paper: pd.DataFrame) -> pd.DataFrame:
    paper = paper.copy()
    for column in ("rounds_ratio", "cost_ratio", "compute_time_ratio"):
        paper[column] = pd.to_numeric(paper[column], errors="coerce")
    return paper


def efficiency_beside_published(paper: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """Tables 5 and 9: the published ratios to FedAvg (rounds, cost, computation time) with
    ours beside them, one row per published (algorithm, target); suffixes `` paper`` / `` ours``."""
    paper = _numeric_ratios(paper)
    mine = ["algorithm", "target", "rounds_ratio", "cost_ratio", "compute_ratio"]
    return paper[["algorithm", "target", "rounds_ratio", "cost_ratio", "compute_time_ratio"]].merge(
        ours[mine] if len(ours) else pd.DataFrame(columns=mine), on=["algorithm", "target"], how="left",
        suffixes=(" paper", " ours"))


def beside_published_shown(merged: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """:func:`efficiency_beside_published` as the pages show it: our ratios as
    ``mean ± sd (n)`` (:func:`censored_text`) of :func:`efficiency_cells`, each column named
    ``<ratio> paper`` or ``<ratio> ours``."""
    shown = merged.copy()
    texts = {}
    if len(cells):
        keys = list(zip(cells["algorithm"], cells["target"]))
        texts = {column: dict(zip(keys, cell_texts(cells, column)))
                 for column in ("rounds_ratio", "cost_ratio", "compute_ratio")}
    for column, ours in (("rounds_ratio", "rounds_ratio ours"), ("cost_ratio", "cost_ratio ours"),
                         ("compute_ratio", "compute_ratio")):
        shown[ours] = [texts.get(column, {}).get(key, mean_sd_text(float("nan"), float("nan"), 0))
                       for key in zip(shown["algorithm"], shown["target"])]
    return shown.rename(columns={"compute_time_ratio": "compute_ratio paper", "compute_ratio": "compute_ratio ours"})


def efficiency_orderings(merged: pd.DataFrame) -> pd.DataFrame:
    """The methods from cheapest to most expensive in rounds, communication cost and
    computation time per target, the paper's and ours, with Kendall's tau
    (:func:`flcore.report.ordering.ordering_table`), from :func:`efficiency_beside_published`."""

    orders = []
    for paper_col, our_col, what in (("rounds_ratio paper", "rounds_ratio ours", "rounds"),
                                     ("cost_ratio paper", "cost_ratio ours", "communication cost"),
                                     ("compute_time_ratio", "compute_ratio", "computation time")):
        frame = pd.DataFrame({"target": merged["target"], "algorithm": merged["algorithm"], "what": what,
                              "paper": -merged[paper_col], "ours": -pd.to_numeric(merged[our_col], errors="coerce")})
        orders.append(ordering_table(frame, ["what", "target"]))
    return pd.concat(orders, ignore_index=True)


def show_published_beside_ours(page, ours: pd.DataFrame) -> float:
    """Tables 5 and 9: the published ratios beside ours and the orderings they give; returns
    the mean Kendall's tau over the blocks."""
    from IPython.display import Markdown, display


    paper = _numeric_ratios(published(page.artifact_id))
    merged = efficiency_beside_published(paper, ours)
    page.table(merged, "Ratios to FedAvg, the paper's beside ours (1 = FedAvg; ours: mean \u00b1 sd (n) over the "
                       "seeds the verdicts read).", show=beside_published_shown(merged, ours),
               downloads={"published": paper, "ours": ours})
    orderings = efficiency_orderings(merged)
    mean_tau = orderings["Kendall's \u03c4"].mean() if len(orderings) else float("nan")
    agreement = (f"mean Kendall's \u03c4 over the {len(orderings)} blocks: {mean_tau:.2f}" if pd.notna(mean_tau)
                 else "no block has two of our methods to order yet")
    page.table(orderings, f"The methods from cheapest to most expensive, by the paper and by our runs; {agreement}.")
    display(Markdown(f"Published values: {source(page.artifact_id)['source']}."))
    return mean_tau


# ----------------------------------------------------------------------------- page (Table 8)

def seconds_per_round_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per run of a Table 8 ``results_frame``: ``algorithm``, ``seed``, ``status``,
    ``timed`` (trained alone, the runs the claims read) and ``seconds_per_round`` -- the
    claims' metric ``wallclock_seconds_per_round`` of the run (None for a run trained in a
    batch, whose record is a share of a shared round)."""
    seconds = METRICS["wallclock_seconds_per_round"].function
    rows = []
    for row in frame.to_dict("records"):
        finished = row["status"] == "finished"
        timed = finished and bool(_read_run(str(row["run_dir"]))[0].get("timed"))
        rows.append({"algorithm": row["algorithm"], "seed": row.get("seed"), "status": row["status"], "timed": timed,
                     "seconds_per_round": seconds(row) if timed else None})
    return pd.DataFrame(rows, columns=["algorithm", "seed", "status", "timed", "seconds_per_round"])


def seconds_per_round_cells(per_run: pd.DataFrame) -> pd.DataFrame:
    """Per method of :func:`seconds_per_round_runs`: the mean seconds per round over its timed
    runs (``ours``), their sd and n (``ours_std``, ``seeds``; :func:`flcore.report.tables.ours_values`),
    what the claims' verdicts read, and the ratio of the mean to FedAvg's (``ratio``)."""
    cells = ours_values(per_run[per_run["timed"].astype(bool)], ["algorithm"], "seconds_per_round")
    fedavg = cells.set_index("algorithm")["ours"].get("FedAvg", float("nan"))
    cells["ratio"] = cells["ours"] / fedavg if fedavg and pd.notna(fedavg) else float("nan")
    return cells


def seconds_beside_published(paper: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Table 8: per published method its seconds per round and the ratio to FedAvg's, the
    paper's beside ours (:func:`seconds_per_round_cells`); columns ``algorithm``,
    ``paper (s)``, ``ours (s)``, ``ours sd (s)``, ``n``, ``paper ratio``, ``ours ratio``."""
    paper = paper[["algorithm", "seconds_per_round"]].rename(columns={"seconds_per_round": "paper (s)"})
    paper["paper (s)"] = pd.to_numeric(paper["paper (s)"], errors="coerce")
    fedavg = paper.set_index("algorithm")["paper (s)"].get("FedAvg", float("nan"))
    paper["paper ratio"] = paper["paper (s)"] / fedavg
    ours = cells.rename(columns={"ours": "ours (s)", "ours_std": "ours sd (s)", "seeds": "n", "ratio": "ours ratio"})
    return paper.merge(ours[["algorithm", "ours (s)", "ours sd (s)", "n", "ours ratio"]], on="algorithm", how="left")


def seconds_digits(seconds: pd.Series) -> int:
    """Decimals that print the smallest of ``seconds`` with three significant digits (two at
    least): a small model's round takes hundredths of a second, which two decimals would
    flatten to one number."""
    values = pd.to_numeric(seconds, errors="coerce")
    values = values[values > 0]
    return 2 if not len(values) else max(2, 2 - math.floor(math.log10(float(values.min()))))


def show_seconds_per_round(page, runs: pd.DataFrame, scale: str) -> pd.DataFrame:
    """Table 8: seconds per round and the ratio to FedAvg, the paper's beside ours (each ours
    the mean ``± sd (n)`` over the method's timed runs), captioned with FedLESAM's ratio, the
    SAM-based methods' range and Kendall's tau of the two ratio columns; returns the table."""
    from IPython.display import Markdown, display

    per_run = seconds_per_round_runs(runs)
    table = seconds_beside_published(published(page.artifact_id), seconds_per_round_cells(per_run))
    shown = table.dropna(subset=["ours ratio"])
    tau = kendall_tau(list(-shown["paper ratio"]), list(-shown["ours ratio"])) if len(shown) > 1 else float("nan")
    ratio = table.set_index("algorithm")["ours ratio"]
    sam_like = ratio.reindex(list(SAM_BASED))
    left = int((per_run["status"] == "finished").sum() - per_run["seconds_per_round"].notna().sum())
    single = list(table.loc[table["n"] == 1, "algorithm"])
    digits = seconds_digits(table["ours (s)"])
    view = table[["algorithm", "paper (s)"]].assign(**{
        "ours (s)": [mean_sd_text(m, sd, n, digits) for m, sd, n in zip(table["ours (s)"], table["ours sd (s)"],
                                                                          table["n"].fillna(0))],
        "paper ratio": [f"{v:.2f}" for v in table["paper ratio"]],
        "ours ratio": [mean_sd_text(v, float("nan"), 1) for v in table["ours ratio"]]})
    if pd.notna(ratio.get("FedLESAM")) and sam_like.notna().any():
        finding = (f"ours, FedLESAM takes {ratio['FedLESAM']:.2f}x FedAvg's round time and the SAM-based methods "
                   f"{sam_like.min():.2f}-{sam_like.max():.2f}x (paper: 1.03x and 1.26-1.47x)")
    else:
        finding = "ours are not all timed yet (paper: FedLESAM 1.03x, the SAM-based methods 1.26-1.47x)"
    agreement = (f"; the orders of the two ratio columns agree with Kendall's \u03c4 = {tau:.2f}" if pd.notna(tau)
                 else "")
    page.table(table, f"Seconds per round, ours the mean \u00b1 sd (n) over each method's timed runs (trained alone; "
                      f"the seeds the verdicts read), and the ratio to FedAvg's mean: {finding}{agreement}."
                      + (f" {left} finished runs have no time of their own (trained in a batch) and are left out."
                         if left else "")
                      + (f" One timed run (no verdict reads more, so no spread): {', '.join(single)}."
                         if single else ""),
               show=view, downloads={"table": table, "runs": per_run})
    stand_in = stand_in_for(scale, "fedlesam")
    display(Markdown(f"Published values: {source(page.artifact_id)['source']}. Ours were measured on the machine "
                     f"that trained the runs, at the {scale} scale" + ("" if stand_in.is_paper else
                     f" ({stand_in.name} stands in for CIFAR-10: the model is smaller, so the fixed costs of a round "
                     "weigh more)") + "."))
    return table
