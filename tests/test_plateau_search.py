"""benchmarks/plateau_search.py: a cell's plateau summary by hand, and one candidate's row
from real (short) runs whose numbers the store's curves give back."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import plateau_search  # noqa: E402


def test_cell_summary_by_hand():
    # 10 rounds: the fifth before is rounds 7-8, the last fifth rounds 9-10.  Seed A climbs
    # from 50 % to 60 % there (+10 points), seed B stays at 70 %: the cell moved +5 points,
    # ten times the 0.5-point tolerance, and its last-fifth mean is (60 + 70) / 2.
    climbing = [(r, 0.6 if r > 8 else 0.5) for r in range(1, 11)]
    flat = [(r, 0.7) for r in range(1, 11)]
    assert plateau_search.cell_summary([climbing, flat], 10) == {"accuracy": 65.0, "change": 5.0, "reached": False}
    # a drift of 0.4 points over the fifth is below the tolerance
    drifting = [(r, 0.704 if r > 8 else 0.7) for r in range(1, 11)]
    assert plateau_search.cell_summary([flat, drifting], 10) == {"accuracy": 70.2, "change": 0.2, "reached": True}


@pytest.mark.slow
def test_candidate_row_matches_its_runs(tmp_path):
    row = plateau_search.run_candidate("lr decay 0.99 a round", {"lr_decay": 0.99}, str(tmp_path), seeds=1, rounds=10)
    assert row["rounds"] == 10 and row["lr_decay"] == 0.99 and row["cost"] == pytest.approx(10 / 300, abs=0.01)
    assert [(c["method"], c["alpha"]) for c in row["cells"]] == [
        ("fedavg", 0.0), ("fedavg", 100.0), ("fedsam", 0.0), ("fedsam", 100.0)]
    assert row["reached"] == sum(bool(c["reached"]) for c in row["cells"]) and row["cells_total"] == 4
    # every cell's numbers come back from its run's curve in the store
    from flcore.config import resolve_config
    from flcore.store import RunStore
    for cell in row["cells"]:
        cfg = resolve_config(scale="small", dataset="mnist1d", method=cell["method"], alpha=cell["alpha"], seed=0,
                             rounds=10, lr_decay=0.99)
        curve = plateau_search._curve(RunStore(str(tmp_path)).run(cfg.run_id()))
        assert curve and max(r for r, _ in curve) == 10
        assert cell == {"method": cell["method"], "alpha": cell["alpha"], **plateau_search.cell_summary([curve], 10)}
