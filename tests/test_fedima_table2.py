"""FedIMA Table II from our runs (:mod:`flcore.papers.fedima.results`): per cell the mean,
sd and n of the rounds to the target over the seeds the verdicts read, a never-reached seed
counted as the claims' metric counts it (last round + 1) and said so, the speed-up only where
every seed of both cells reached the target, and the caption's count and orderings on the
means -- checked by hand on a store of hand-made curves."""
from __future__ import annotations

import math
import statistics

import pandas as pd
import pytest

from flcore.papers.fedima import results
from flcore.papers.fedima import runs as fedima
from flcore.reproduction import runner
from flcore.reproduction.claims import get_claim
from flcore.reproduction.table_check import printed_cell
from flcore.store import RunStore

SEEDS = (0, 1, 2)
NEVER = fedima.ROUNDS["small"] + 1  # a run that never reaches the target: its last round + 1


def _curve(k: int | None) -> list[float]:
    """An accuracy curve whose 5-round smoothing first reaches 0.5 at round ``k + 3`` (0.0
    for ``k`` rounds, then 1.0: three of the last five at 1.0); ``None``: it never does."""
    return [0.0] * 15 if k is None else [0.0] * k + [1.0] * 10


#: (algorithm, IMA start or None) -> per seed the ``k`` of :func:`_curve` (None: never
#: reached; "diverged": the run diverged).  FedAvg FMA ends at 0.5 (the target).
PLAN = {("FedProx", None): (9, 12, 15),          # 12, 15, 18 rounds
        ("FedProx", 150): (3, 6, None),          # 6, 9, never (101)
        ("FedProx", 300): (2, 5, 8),             # 5, 8, 11
        ("FedAvg", 150): (None, None, None),     # never
        ("FedAvg", 300): (2, 4, "diverged")}     # 5, 7


@pytest.fixture
def table_runs(tmp_path, monkeypatch):
    """The runs frame of Table II's small runs at the claims' three seeds, the runs of
    :data:`PLAN` (and FedAvg FMA, 10 rounds for every seed) written to a store, every
    other run new; :func:`flcore.reproduction.runner.results_frame` reads the same frame."""
    store = RunStore(tmp_path)
    written: dict[str, dict] = {}

    def write(spec, accuracies, status="finished"):
        cfg = spec.resolve()
        run = store.create(cfg.run_id(), cfg.canonical())
        run.append_metrics([{"round": r, "test_accuracy": a} for r, a in enumerate(accuracies, start=1)])
        written[cfg.run_id()] = {"status": status, "run_dir": str(run.path)}

    for seed in SEEDS:
        write(fedima.ima_run(fedima.MAIN, "FedAvg", False, "small", seed), [0.1] * 5 + [0.5] * 10)  # 10 rounds
        for (algorithm, start), ks in PLAN.items():
            spec = fedima.ima_run(fedima.MAIN, algorithm, start is not None, "small", seed, ima_start=start)
            k = ks[seed]
            write(spec, _curve(None if k == "diverged" else k), "diverged" if k == "diverged" else "finished")

    def frame(specs, store=None):
        rows = []
        for spec in specs:
            rid = spec.resolve().run_id()
            rows.append({**spec.labels, "run_id": rid, **written.get(rid, {"status": "new", "run_dir": None})})
        return pd.DataFrame(rows)

    monkeypatch.setattr(runner, "results_frame", frame)
    fedima._metrics_of.cache_clear()
    specs = fedima.table2_runs("small", SEEDS)
    yield specs, frame(specs)
    fedima._metrics_of.cache_clear()


def _cell(cells, algorithm, column):
    return cells.set_index(["algorithm", "ima_start"]).loc[algorithm, column]


def test_each_cell_is_the_mean_sd_and_n_over_the_seeds(table_runs):
    _, runs = table_runs
    cells = results.table2_ours(runs)
    fma = _cell(cells, "FedProx", "FMA")
    assert (fma["rounds"], fma["ours_std"], fma["seeds"], fma["not_reached"]) == (15.0, 3.0, 3, 0)
    early = _cell(cells, "FedProx", "150")  # 6, 9 and a seed that never reached it, counted at 101
    assert early["rounds"] == pytest.approx((6 + 9 + NEVER) / 3)
    assert early["ours_std"] == pytest.approx(statistics.stdev([6, 9, NEVER]))
    assert (early["seeds"], early["not_reached"]) == (3, 1)
    late = _cell(cells, "FedAvg", "300")  # the diverged seed is left out, as the verdicts leave it
    assert (late["rounds"], late["seeds"], late["left_out"]) == (6.0, 2, 1)
    assert late["ours_std"] == pytest.approx(math.sqrt(2))
    assert _cell(cells, "FedAvg", "FMA")["target"] == pytest.approx(50.0)
    assert "where FedAvg ends, 50.0 %" in results.target_text(cells, "small")
    assert results.target_text(cells, "paper") == "the target accuracy is 60 %"
    # a cell of runs the store does not hold has no number
    assert _cell(cells, "FedYogi", "150")["status"] == "new" and _cell(cells, "FedYogi", "150")["seeds"] == 0


def test_the_speedup_is_read_from_the_means_where_every_seed_reached(table_runs):
    _, runs = table_runs
    cells = results.table2_ours(runs)
    assert _cell(cells, "FedProx", "300")["speedup"] == pytest.approx(15 / 8)
    assert _cell(cells, "FedAvg", "300")["speedup"] == pytest.approx(10 / 6)
    assert _cell(cells, "FedProx", "FMA")["speedup"] == pytest.approx(1.0)
    assert math.isnan(_cell(cells, "FedProx", "150")["speedup"])  # a censored mean has no ratio
    assert math.isnan(_cell(cells, "FedAvg", "150")["speedup"])


def test_cells_print_the_never_reached_seeds(table_runs):
    _, runs = table_runs
    cells = results.table2_ours(runs)
    shown = results.layout(fedima_published(), cells)
    assert shown.loc["FedProx", ("300", "ours")] == "8.00 \u00b1 3.00 (n = 3) [\u00d71.88]"
    assert shown.loc["FedProx", ("150", "ours")] == (f"\u2265 {(6 + 9 + NEVER) / 3:.2f} \u00b1 "
                                                    f"{statistics.stdev([6, 9, NEVER]):.2f} (n = 3; 1 not reached)")
    assert shown.loc["FedAvg", ("150", "ours")] == f"not reached: \u2265 {NEVER:.2f} (n = 3)"
    assert shown.loc["FedAvg", ("FMA", "ours")] == "10.00 \u00b1 0.00 (n = 3) [\u00d71.00]"
    assert shown.loc["FedProx", ("150", "paper")] == "201 [\u00d71.96]"
    assert list(dict.fromkeys(c for c, _ in shown.columns)) == ["150", "300", "FMA"]
    assert results.rounds_text(7.0, float("nan"), 1, 1) == "not reached: \u2265 7.00"


def test_caption_count_and_orderings_read_the_cells_means(table_runs):
    _, runs = table_runs
    cells = results.table2_ours(runs)
    # of the four IMA cells with a number, FedProx 300 (8 < 15) and FedAvg 300 (6 < 10) are
    # sooner; FedProx 150 has a never-reached seed and FedAvg 150 never reached it
    assert results.sooner(cells) == (2, 4)
    orderings = results.orderings(fedima_published(), cells).set_index("algorithm")
    # FedProx: ours 300 (8) < FMA (15) < 150 (38.67, a lower bound); the paper 150 < 300 < FMA
    assert orderings.loc["FedProx", "ours (fewest first)"] == "300 < FMA < 150"
    assert orderings.loc["FedProx", "paper (fewest first)"] == "150 < 300 < FMA"
    assert orderings.loc["FedProx", "Kendall's \u03c4"] == pytest.approx(-1 / 3, abs=0.005)
    assert "nan" not in results.orderings_caption(orderings)


def test_the_table_prints_the_cells_the_verdicts_read(table_runs):
    specs, runs = table_runs
    cells = results.table2_ours(runs)
    claim = get_claim("fedima-early-ima-halves-rounds")
    fedprox = [c for c in claim.comparisons if c.better["algorithm"] == "FedProx+IMA"]
    assert len(fedprox) == 2  # 150 against FMA (a never-reached seed in 150) and against 300
    for comparison in fedprox:
        for cell in (comparison.better, comparison.worse):
            algorithm = cell["algorithm"].removesuffix("+IMA")
            column = str(cell["ima_start"]) if "ima_start" in cell else "FMA"
            assert printed_cell(claim, cell, specs) == round(_cell(cells, algorithm, column)["rounds"], 2)


def fedima_published():
    from flcore.reproduction.published import published

    return published("fedima-table-2")


class _RecordingPage:
    def __init__(self, artifact_id, scale):
        self.artifact_id, self.scale = artifact_id, scale
        self.tables, self.notes = [], []

    def table(self, frame, caption, downloads=None, show=None):
        self.tables.append((frame, caption, downloads, show))

    def note(self, text):
        self.notes.append(text)


def test_show_rounds_to_target_captions_the_sooner_count_and_the_findings_repeat_it(table_runs):
    _, runs = table_runs
    page = _RecordingPage("fedima-table-2", "small")
    paper, cells = results.show_rounds_to_target(page, runs)
    frame, caption, downloads, show = page.tables[0]
    assert frame is cells and downloads == {"published": paper, "ours": cells}
    assert show.equals(results.layout(paper, cells))
    # two of the four IMA cells with a number are sooner (test above)
    assert "2 of our 4 IMA cells (seed means) reach it sooner" in caption
    assert page.notes == [f"{results.LEGEND} Published values: "
                          f"{fedima_published_source()}."]
    verdicts = pd.DataFrame({"verdict": ["holds", "fails"]})
    assert results.rounds_findings(cells, verdicts, "small") == [
        "At the **small** scale 2 of our 4 IMA cells reach the target sooner than their method without IMA; of the 2 "
        "claims this table checks, 2 are decided at this scale (1 hold, 1 fail)."]


def fedima_published_source():
    from flcore.reproduction.published import source

    return source("fedima-table-2")["source"]
