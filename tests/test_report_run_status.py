"""The runs table of an artifact page counts distinct runs, and its caption counts what
the table shows."""
from __future__ import annotations

import pandas as pd

from flcore.report.run_status import run_status_caption, run_status_table, show_run_status

# ----------------------------------------------------------------------------- runs table

def _runs():
    # FedLESAM Table 5: every run read at two targets; a pending spec has no run id
    rows = [{"run_id": f"r{i}", "status": "finished", "target": t} for i in range(6) for t in (68, 74)]
    rows += [{"run_id": "r6", "status": "diverged", "target": t} for t in (68, 74)]
    rows += [{"run_id": None, "status": "pending", "target": 68}]
    return pd.DataFrame(rows)


def test_run_status_counts_distinct_runs_and_the_caption_counts_the_table():
    table = run_status_table(_runs())
    assert list(table["status"]) == ["finished", "diverged", "pending"]
    assert list(table["runs"]) == [6, 1, 1] and list(table["cells"]) == [12, 2, 1]
    caption = run_status_caption(table, "table", "small")
    assert caption == ("8 distinct runs make this table at the small scale, by status; they fill its 15 cells "
                       "(a run can fill several).")
    assert str(table["runs"].sum()) in caption and str(table["cells"].sum()) in caption


def test_run_status_without_shared_runs_has_no_cells_column():
    runs = _runs().drop_duplicates("run_id")
    table = run_status_table(runs)
    assert "cells" not in table and int(table["runs"].sum()) == len(runs)
    assert run_status_caption(table, "figure", "smoke") == ("8 distinct runs make this figure at the smoke scale, "
                                                            "by status.")
    one = run_status_table(runs.iloc[:1])
    assert run_status_caption(one, "figure", "smoke") == "1 run makes this figure at the smoke scale, by status."


def test_show_run_status_puts_table_and_caption_on_the_page():
    class Recording:
        shown = []

        def table(self, frame, caption, downloads=None, show=None):
            self.shown.append((frame, caption))

    page = Recording()
    table = show_run_status(page, _runs(), "small", "table")
    frame, caption = page.shown[0]
    assert frame.equals(table) and caption.startswith(f"{int(table['runs'].sum())} distinct runs")
