"""Where a page's runs were trained, when some came from a results bundle.

A run imported with ``flcore bundle import`` keeps a provenance record (the device, the
date and the flcore version and commit of the machine that trained it; who trained it is
not recorded).  A page built from a store holding such runs says which of its runs they
are, right below its banner, so a reader can tell them from runs the book's builder
trained.  What the record says (device, date, version, commit) is someone else's text
and is shown as text (:func:`flcore.report.escaping.page_text`).
"""
from __future__ import annotations

import pandas as pd

from flcore.report.escaping import page_text

#: Labels a run is named by first in the list; the page's other labels follow them.
_LABEL_ORDER = ("dataset", "algorithm", "method", "alpha", "clients_per_round", "seed")
#: Columns of a results frame that are results, not labels.
_NOT_LABELS = {"run_id", "status", "run_dir", "rounds_done", "rounds", "capped_at", "mean_last_100",
               "final_accuracy", "diverged_round", "wall_time_s", "provenance", "error"}


def _run_label(row: dict) -> str:
    parts = []
    others = sorted(key for key in row if key not in _NOT_LABELS and key not in _LABEL_ORDER)
    for key in (*_LABEL_ORDER, *others):
        value = row.get(key)
        if value is None or (isinstance(value, float) and pd.isna(value)):
            continue
        if key == "method" and row.get("algorithm") is not None:
            continue
        parts.append(f"{key} {value:g}" if isinstance(value, float) else f"{key} {value}")
    return ", ".join(parts) or str(row.get("run_id"))


def provenance_markdown(frame: pd.DataFrame) -> str | None:
    """A Markdown note listing the runs of ``frame`` (a
    :func:`~flcore.reproduction.runner.results_frame`) that were imported, grouped by where
    they were trained; None when all were trained into this store."""
    if "provenance" not in frame.columns:
        return None
    imported = frame[frame["provenance"].notna()].drop_duplicates("run_id")
    if imported.empty:
        return None
    total = frame["run_id"].dropna().nunique()
    lines = [f"**{len(imported)} of the {total} runs of this page were imported from results bundles** "
             "(`flcore bundle import`); they were trained elsewhere, as listed (device, date, flcore version "
             "and commit; who trained them is not recorded)."
             + (" The other runs were trained for this build." if len(imported) < total else ""), ""]
    lines += ["| trained on | runs |", "|---|---|"]
    for where, group in imported.groupby("provenance", sort=True):
        names = "; ".join(_run_label(row) for row in group.to_dict("records"))
        lines.append(f"| {page_text(where)} | {page_text(names, limit=5000)} |")
    return "\n".join(lines)
