"""Paper-vs-ours tables: published value, ours, delta (ours - published).

- :func:`ours_accuracy` turns the per-run rows of :func:`flcore.reproduction.runner.ensure_runs`
  into one accuracy (%) per cell: the mean over seeds of each run's mean test accuracy
  over its last 100 rounds (the FedSAM paper's metric), with the seed spread;
  :func:`ours_values` does the same for any other per-run number (a flatness, rounds to
  a target, seconds per round), and :func:`mean_sd_text` prints such a cell;
- :func:`paper_vs_ours` joins it with the published values;
- :func:`format_comparison` lays the result out like the paper's table, with a
  ``paper / ours / delta`` triple per column (``paper / ours`` below the paper scale).

Cells that have no run are never filled in: a method flcore does not implement yet is
``pending``; a published cell the scale does not run is :data:`NOT_RUN` (the published
value is still shown: every published cell appears on its page); a diverged run is shown
as the papers show one -- at chance accuracy (the FedSAM paper prints 10.00 on CIFAR-10
and 1.00 on CIFAR-100) -- marked with :data:`DIVERGED_MARK`.  A paper cell without a
number (the paper's method did not converge, or the paper has no such cell) shows
:data:`~flcore.report.numbers.MISSING`; :data:`LEGEND` says all of this in one sentence.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from flcore.config import DATASET_FACTS, chance_accuracy
from flcore.report.numbers import MISSING
from flcore.reproduction.published import source

#: A cell whose method flcore does not implement yet.
PENDING = "pending"
#: The status (and the note) of a published cell that this scale does not run.
NOT_RUN = "not run at this scale"
#: How a :data:`NOT_RUN` cell of ours prints in a laid-out table.
NOT_RUN_MARK = "not run"
#: Marks a cell whose run diverged (shown at chance accuracy).
DIVERGED_MARK = "\u2020"  # dagger
#: The legend of a :func:`format_comparison` table.
LEGEND = (f"A paper cell shown {MISSING} has no published number (the paper's method did not converge there; the "
          f"note of the published CSV says why); *{NOT_RUN_MARK}* marks a published cell this scale does not run; "
          f"*{PENDING}* a method flcore does not implement yet; a dagger ({DIVERGED_MARK}) a run of ours that "
          "diverged, shown at chance accuracy.")
#: Statuses of a cell that has a run of ours behind it.
RUN_STATUSES = ("finished", "diverged")
def ours_accuracy(frame: pd.DataFrame, by: Sequence[str], datasets: dict | None = None) -> pd.DataFrame:
    """One row per ``by`` group: ``ours`` (%, mean over seeds), ``ours_std`` (% over seeds,
    NaN for one seed), ``seeds``, ``left_out`` (diverged seeds), ``status`` (finished |
    diverged | pending | failed | new).

    As the claims' verdicts do (:mod:`flcore.reproduction.claims`), a diverged seed is left
    out of the mean and counted in ``left_out``; a group whose every seed diverged counts as
    diverged and shows chance accuracy (``datasets`` maps the paper's dataset label to
    flcore's dataset name for that).
    """
    rows = []
    for key, group in frame.groupby(list(by), sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        statuses = set(group["status"])
        row = dict(zip(by, key))
        acc = pd.to_numeric(group.get("mean_last_100"), errors="coerce") * 100.0
        if "pending" in statuses:
            row.update(ours=np.nan, ours_std=np.nan, seeds=0, status="pending")
        elif "failed" in statuses:
            row.update(ours=np.nan, ours_std=np.nan, seeds=0, status="failed")
        elif statuses == {"diverged"}:
            label = row.get("dataset")
            name = (datasets or {}).get(label, label)
            chance = chance_accuracy(str(name)) if str(name) in DATASET_FACTS else 10.0  # unmapped label: 10 classes
            row.update(ours=chance, ours_std=np.nan, seeds=len(group), status="diverged",
                       diverged_round=pd.to_numeric(group.get("diverged_round"), errors="coerce").min())
        elif statuses <= {"finished", "diverged"}:
            kept = acc[(group["status"] == "finished").to_numpy()]
            row.update(ours=kept.mean(), ours_std=kept.std() if len(kept) > 1 else np.nan, seeds=len(kept),
                       status="finished", left_out=int((group["status"] == "diverged").sum()),
                       diverged_round=pd.to_numeric(group.get("diverged_round"), errors="coerce").min())
        else:
            row.update(ours=np.nan, ours_std=np.nan, seeds=0, status=sorted(statuses)[0])
        rows.append(row)
    return pd.DataFrame(rows)


def ours_values(frame: pd.DataFrame, by: Sequence[str], column: str) -> pd.DataFrame:
    """One row per ``by`` group of any per-run number ``column`` (a flatness, a round count,
    seconds per round): ``ours`` (mean over the finished seeds with a finite value),
    ``ours_std`` (NaN for one seed), ``seeds`` (that n), ``left_out`` (diverged seeds) and
    ``status`` -- the columns :func:`paper_vs_ours` and :func:`format_comparison` read.

    A cell is averaged as a claim's verdict reads it
    (:func:`flcore.reproduction.table_check.printed_cell`): over its finished runs whose value
    is a finite number, a diverged run left out and counted; ``status`` is ``finished`` when
    one run has a value, else the group's first status (``diverged``, ``new``, ...) and the
    cell shows no number -- unlike an accuracy, a flatness has no chance level to show."""
    rows = []
    for key, group in frame.groupby(list(by), sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        values = pd.to_numeric(group[column], errors="coerce") if column in group else pd.Series(np.nan, group.index)
        finite = (group["status"] == "finished").to_numpy() & np.isfinite(values.to_numpy(dtype=float))
        kept = values[finite]
        row = dict(zip(by, key))
        row.update(ours=kept.mean() if len(kept) else np.nan, ours_std=kept.std() if len(kept) > 1 else np.nan,
                   seeds=len(kept), left_out=int((group["status"] == "diverged").sum()),
                   status="finished" if len(kept) else sorted(set(group["status"]))[0])
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, "ours", "ours_std", "seeds", "left_out", "status"])


def mean_sd_text(mean: float, sd: float, n, digits: int = 2, status: str = "finished", never_reached: int = 0) -> str:
    """A cell as the pages print a seed mean: ``"3.14 ± 0.80 (n = 3)"``; ``"3.14"`` for one
    seed; :data:`~flcore.report.numbers.MISSING` without a number.  ``never_reached``: how many
    of the ``n`` runs never reached a target and count at their lower bound (a censored
    value), which makes the mean one too: ``"≥ 412.33 ± 20.10 (n = 3; 1 never reached)"``,
    ``"≥ 310.00 (never reached)"`` for one run."""
    text = _cell(mean, status, digits) + _spread(sd, n, status, digits)
    if not never_reached or pd.isna(mean) or status != "finished":
        return text
    note = f"{int(never_reached)} never reached" if int(n) > 1 else "never reached"
    return "\u2265 " + (f"{text[:-1]}; {note})" if text.endswith(")") else f"{text} ({note})")


def paper_vs_ours(published: pd.DataFrame, ours: pd.DataFrame, keys: Sequence[str],
                  value: str = "accuracy") -> pd.DataFrame:
    """Published ``value`` beside ours for every cell of ``ours`` and every published cell
    (a published cell without a run here has status :data:`NOT_RUN`): columns ``keys``,
    ``paper``, ``ours``, ``delta``, ``status``, ``note``; ours' cells first, in their order,
    then the published cells not run, in the paper's order."""
    pub = published[list(keys) + [value] + (["note"] if "note" in published else [])].rename(
        columns={value: "paper", "note": "paper_note"})
    merged = ours.merge(pub, on=list(keys), how="left")
    run_keys = set(ours[list(keys)].itertuples(index=False, name=None))
    missing = pub[[key not in run_keys for key in pub[list(keys)].itertuples(index=False, name=None)]]
    if len(missing):
        merged = pd.concat([merged, missing.assign(status=NOT_RUN, seeds=0)], ignore_index=True)
    shown = merged["status"].isin(RUN_STATUSES)
    merged["delta"] = (merged["ours"] - merged["paper"]).where(shown)
    notes = []
    for row in merged.itertuples():
        note = []
        if row.status == "pending":
            note.append("method not implemented yet")
        elif row.status == NOT_RUN:
            note.append(NOT_RUN)
        elif row.status == "diverged":
            note.append(f"diverged (round {int(row.diverged_round)}); shown at chance accuracy"
                        if "diverged_round" in merged and not pd.isna(row.diverged_round)
                        else "diverged; shown at chance accuracy")
        elif row.status not in ("finished",):
            note.append(f"run {row.status}")
        left_out = getattr(row, "left_out", 0)
        if row.status == "finished" and not pd.isna(left_out) and left_out:
            note.append(f"{int(left_out)} diverged seed{'s' if left_out > 1 else ''} left out"
                        + (f" (round {int(row.diverged_round)})"
                           if not pd.isna(getattr(row, "diverged_round", np.nan)) else ""))
        if getattr(row, "paper_note", ""):
            note.append(f"paper: {row.paper_note}")
        notes.append("; ".join(note))
    merged["note"] = notes
    columns = list(keys) + ["paper", "ours", "delta", "ours_std", "seeds", "left_out", "status", "note"]
    return merged[[c for c in columns if c in merged]]


def _cell(value: float, status: str, digits: int = 2) -> str:
    if status == "pending":
        return PENDING
    if status == NOT_RUN:
        return NOT_RUN_MARK
    if status == "failed":
        return "failed"
    if pd.isna(value):
        return MISSING
    text = f"{value:.{digits}f}"
    return text + DIVERGED_MARK if status == "diverged" else text


def _spread(sd: float, n, status: str, digits: int = 2) -> str:
    """``" ± 0.80 (n = 3)"`` after a cell's mean over more than one seed (what the claims'
    verdicts read); nothing for one seed or a cell without a number."""
    if status != "finished" or pd.isna(n) or int(n) < 2 or pd.isna(sd):
        return ""
    return f" \u00b1 {sd:.{digits}f} (n = {int(n)})"


def _delta(value: float, digits: int = 2) -> str:
    return MISSING if pd.isna(value) else f"{value:+.{digits}f}"


def format_comparison(comparison: pd.DataFrame, index: Sequence[str], columns: Sequence[str],
                      index_order: dict | None = None, delta: bool = True) -> pd.DataFrame:
    """The comparison as the paper lays it out: rows ``index``, one
    ``paper / ours / delta`` triple of text cells under each ``columns`` combination
    (``paper / ours`` without ``delta``: below the paper scale, where the data sets differ);
    numeric column combinations in increasing order.  A combination that is neither
    published nor run is left blank."""
    table = comparison.copy()
    parts = ("paper ", "ours ", "\u0394") if delta else ("paper ", "ours ")
    table["paper "] = [_cell(v, "finished") for v in table["paper"]]
    spread = table["ours_std"] if "ours_std" in table else pd.Series(np.nan, index=table.index)
    seeds = table["seeds"] if "seeds" in table else pd.Series(1, index=table.index)
    table["ours "] = [_cell(v, s) + _spread(sd, n, s) for v, s, sd, n in zip(table["ours"], table["status"],
                                                                              spread, seeds)]
    table["\u0394"] = [_delta(v) for v in table["delta"]]
    wide = table.pivot_table(index=list(index), columns=list(columns), values=list(parts),
                             aggfunc="first", sort=False)
    wide = wide.reorder_levels(list(range(1, len(columns) + 1)) + [0], axis=1)
    combos = list(dict.fromkeys(tuple(c[:-1]) for c in wide.columns))
    if all(_is_number(v) for combo in combos for v in combo):
        combos.sort(key=lambda combo: tuple(float(v) for v in combo))  # 0, 0.05, 100 as the papers print them
    order = [combo + (part,) for combo in combos for part in parts]
    wide = wide[order]
    wide.columns = wide.columns.set_names([*columns, ""])
    wide = wide.fillna("")
    if index_order:
        for level, values in index_order.items():
            present = [v for v in values if v in wide.index.get_level_values(level)]
            wide = wide.reindex(present, level=level)
    return wide


def run_here(comparison: pd.DataFrame) -> pd.DataFrame:
    """The rows of a :func:`paper_vs_ours` frame that this scale runs (all but the
    :data:`NOT_RUN` published cells): what a caption compares the paper with."""
    return comparison[comparison["status"] != NOT_RUN] if "status" in comparison else comparison


def best_item(frame: pd.DataFrame, column: str, item: str = "algorithm") -> str:
    """The ``item`` of ``frame``'s row with the highest ``column`` (``"none"`` where no row has
    a value)."""
    shown = frame.dropna(subset=[column])
    return shown.loc[shown[column].idxmax(), item] if len(shown) else "none"


def show_accuracy_tables(page, comparison: pd.DataFrame, paper_values: pd.DataFrame, cells: pd.DataFrame,
                         labels: Sequence[str], order: dict, scale: str, focus: dict, focus_text: str) -> None:
    """FedSAM Table 2 and FedGF Table 1: per data set ``labels``, the accuracy by algorithm,
    alpha and clients per round (:func:`format_comparison`, the difference at the ``paper``
    scale only; every published cell, those not run at this scale marked :data:`NOT_RUN_MARK`),
    captioned with the paper's and our best algorithm among the cells run here that match
    ``focus`` (column -> value; ``focus_text`` says which), then the published source."""
    from IPython.display import Markdown, display


    at_paper = scale == "paper"
    for label in labels:
        block = comparison[comparison["dataset"] == label]
        focused = run_here(block[np.logical_and.reduce([block[k] == v for k, v in focus.items()])])
        stand_in = "" if at_paper else f" (ours: MNIST-1D at the {scale} scale)"
        caption = (f"{label}{stand_in}: accuracy (%) by algorithm, alpha and clients per round. {focus_text}, among "
                   f"the cells run here, the paper's best is {best_item(focused, 'paper')}, ours is "
                   f"{best_item(focused, 'ours')}.")
        page.table(block, caption, show=format_comparison(block, ["algorithm"], ["alpha", "clients_per_round"], order,
                                                          delta=at_paper),
                   downloads={"published": paper_values[paper_values["dataset"] == label],
                              "ours": cells[cells["dataset"] == label]})
    display(Markdown(f"Published values: {source(page.artifact_id)['source']}."))


def compare_settings(published: pd.DataFrame, ours: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Hyper-parameter tables: every published column beside flcore's value, and whether
    they agree (``"yes"``, ``"no"``, or the reason flcore has none)."""
    value_columns = [c for c in published.columns if c not in keys and c != "note"]
    merged = published.merge(ours, on=list(keys), how="left", suffixes=(" (paper)", " (flcore)"))
    out = merged[list(keys)].copy()
    for column in value_columns:
        paper, mine = merged[f"{column} (paper)"], merged[f"{column} (flcore)"]
        out[f"{column} (paper)"] = paper
        out[f"{column} (flcore)"] = mine
    verdicts = []
    for _, row in merged.iterrows():
        missing = [str(row[f"{c} (flcore)"]) for c in value_columns if isinstance(row[f"{c} (flcore)"], str)
                   and not _is_number(row[f"{c} (flcore)"]) and not _same(row[f"{c} (paper)"], row[f"{c} (flcore)"])]
        if missing and all(m == missing[0] for m in missing) and missing[0] in ("not in flcore", PENDING):
            verdicts.append(missing[0])
            continue
        differing = [c for c in value_columns if not _same(row[f"{c} (paper)"], row[f"{c} (flcore)"])]
        verdicts.append("yes" if not differing else "no: " + ", ".join(differing))
    out["match"] = verdicts
    if "note" in published:
        out["paper note"] = published["note"].values
    return out


def _is_number(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _same(a, b) -> bool:
    if _is_number(a) and _is_number(b):
        return bool(np.isclose(float(a), float(b), rtol=1e-9, atol=0))
    return str(a).replace(" ", "") == str(b).replace(" ", "")
