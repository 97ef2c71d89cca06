"""The "runs" table at the top of an artifact page, and its caption computed from it.

An artifact lists one run spec per *cell* it shows, and two cells may name one run (both
CIFAR labels map to MNIST-1D below the paper scale, so their alpha = 0 cells are the same
runs; FedLESAM's Table 5 reads each run at two targets).  The table counts *distinct runs*
per status and, where cells outnumber runs, the cells too; the caption's numbers are the
table's column sums, so the sentence and the table cannot disagree.
"""
from __future__ import annotations

import pandas as pd

#: Order of the statuses in the table (others follow, alphabetically).
STATUS_ORDER = ("finished", "diverged", "failed", "pending", "new")


def run_keys(runs: pd.DataFrame) -> pd.Series:
    """One key per distinct run: its run id; a row without one (a *pending* spec, never
    run) counts as a run of its own."""
    ids = runs["run_id"] if "run_id" in runs else pd.Series([None] * len(runs), index=runs.index)
    return pd.Series([run_id if isinstance(run_id, str) and run_id else f"row-{i}"
                      for i, run_id in zip(range(len(runs)), ids)], index=runs.index)


def run_status_table(runs: pd.DataFrame) -> pd.DataFrame:
    """``status``, ``runs`` (distinct runs with that status) and, when some run makes
    more than one cell, ``cells`` (rows of ``runs``: the table's or figure's cells)."""
    keys = run_keys(runs)
    frame = pd.DataFrame({"status": runs["status"].astype(str).values, "key": keys.values})
    table = frame.groupby("status").agg(runs=("key", "nunique"), cells=("key", "size")).reset_index()
    rank = {status: i for i, status in enumerate(STATUS_ORDER)}
    table = table.sort_values("status", key=lambda s: s.map(lambda v: (rank.get(v, len(rank)), v)))
    table = table.reset_index(drop=True)
    if (table["cells"] == table["runs"]).all():
        table = table.drop(columns="cells")
    return table


def run_status_caption(table: pd.DataFrame, what: str, scale: str) -> str:
    """The caption of :func:`run_status_table`'s ``table``: ``"7 distinct runs make this
    table at the small scale, by status; they fill its 14 cells (a run can fill several)."``"""
    runs = int(table["runs"].sum()) if len(table) else 0
    noun = "run makes" if runs == 1 else "distinct runs make"
    text = f"{runs} {noun} this {what} at the {scale} scale, by status"
    if "cells" in table:
        text += f"; they fill its {int(table['cells'].sum())} cells (a run can fill several)"
    return text + "."


def show_run_status(page, runs: pd.DataFrame, scale: str, what: str = "table") -> pd.DataFrame:
    """:func:`run_status_table` of ``runs`` on ``page`` under :func:`run_status_caption`;
    returns the table."""
    table = run_status_table(runs)
    page.table(table, run_status_caption(table, what, scale))
    return table
