"""Kendall's tau-b and the orderings table, against hand counts; page helpers."""
from __future__ import annotations

import base64
import math

import pandas as pd
import pytest

from flcore.report.ordering import kendall_tau, ordering_table
from flcore.report.page import claims_markdown, csv_link, scale_banner, verdict_counts


def test_kendall_tau_against_hand_counts():
    assert kendall_tau([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    # one swapped neighbour pair: C = 5, D = 1 -> 4 / 6
    assert kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    # a tie in x only: C = 2, D = 0, T_x = 1, T_y = 0 -> 2 / sqrt(3 * 2)
    assert kendall_tau([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))
    assert math.isnan(kendall_tau([1, 1], [2, 2]))
    with pytest.raises(ValueError, match="one length"):
        kendall_tau([1, 2], [1])


def test_kendall_tau_matches_scipy_on_random_rankings():
    stats = pytest.importorskip("scipy.stats")
    import random

    rng = random.Random(0)
    for _ in range(20):
        x = [rng.randint(0, 5) for _ in range(8)]
        y = [rng.randint(0, 5) for _ in range(8)]
        expected = stats.kendalltau(x, y).statistic
        got = kendall_tau(x, y)
        assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected)


def test_ordering_table_per_block_skips_pending_and_missing_cells():
    frame = pd.DataFrame({
        "dataset": ["C10"] * 4 + ["C100"] * 3,
        "alpha": [0.0] * 4 + [0.0] * 3,
        "algorithm": ["A", "B", "C", "D", "A", "B", "C"],
        "paper": [70.0, 65.0, 60.0, 50.0, 30.0, 40.0, 35.0],
        "ours": [9.0, 8.0, 7.0, float("nan"), 1.0, 3.0, 2.0],
        "status": ["finished", "finished", "finished", "pending", "finished", "finished", "diverged"],
    })
    table = ordering_table(frame, ["dataset", "alpha"]).set_index("dataset")
    assert table.loc["C10", "methods"] == 3 and table.loc["C10", "Kendall's \u03c4"] == 1.0
    assert table.loc["C10", "published order"] == "A > B > C"
    assert table.loc["C100", "our order"] == "B > C > A" and table.loc["C100", "Kendall's \u03c4"] == 1.0
    # no usable cell (every method pending or not ranked): an empty table a page can still index
    empty = ordering_table(frame.assign(status="pending"), ["dataset", "alpha"])
    assert empty.empty and list(empty.set_index(["dataset", "alpha"]).columns) == [
        "methods", "published order", "our order", "Kendall's \u03c4"]


def test_csv_link_round_trips_the_frame():
    frame = pd.DataFrame({"algorithm": ["FedSAM", "FedAvg"], "accuracy": [70.16, 65.0]})
    link = csv_link(frame, "t.csv", "ours (CSV)")
    data = link.split("base64,", 1)[1].split('"', 1)[0]
    assert pd.read_csv(__import__("io").StringIO(base64.b64decode(data).decode())).equals(frame)
    assert 'download="t.csv"' in link


def _spec(**config):
    from flcore.planning.spec import RunSpec

    return RunSpec({}, {"method": "fedavg", **config})


def test_scale_banner_reads_the_runs_own_settings():
    # the scale's default is 300 rounds: a page whose runs train 75 must say 75
    specs = [_spec(scale="small", rounds=75, seed=s) for s in (0, 1)]
    paper = [_spec(scale="paper", dataset="cifar100", seed=0)]
    small = scale_banner("small", specs, paper_specs=paper)
    assert "`small`" in small and "2 runs, seeds 0, 1" in small and "**MNIST-1D** (10,000 samples" in small
    assert "100 clients, 5 per round, 75 rounds" in small and "300" not in small
    assert "stands in for the paper's CIFAR-100 with the CIFAR CNN" in small
    # runs that differ: a range; a configuration run with fewer seeds than another: said
    mixed = scale_banner("small", specs + [_spec(scale="small", rounds=3000, alpha=0.5, seed=0)])
    assert "75-3,000 rounds" in mixed and "seeds 0, 1 (1 to 2 per configuration)" in mixed
    assert "3 runs" in mixed
    # a run listed twice (two cells of one run) is one run
    assert "2 runs" in scale_banner("small", specs + specs[:1])
    at_paper = scale_banner("paper", paper + [_spec(scale="paper", dataset="cifar10", model="resnet18gn", seed=0)])
    assert "CIFAR-10 and CIFAR-100 with the CIFAR CNN and ResNet-18 (GroupNorm)" in at_paper and "\u0394" in at_paper
    assert "MNIST-1D" not in at_paper
    none = scale_banner("small", [])
    assert "No run of this page trains at this scale" in none and "rounds" not in none
    config = scale_banner("smoke", specs, cls="config")
    assert "`smoke`" in config and "trains nothing" in config and "MNIST-1D" not in config


def test_finish_page_banner_comes_from_the_artifacts_runs(tmp_path):
    import nbformat

    from flcore.reproduction.artifacts import get_artifact
    from flcore.site.reproduce import finish_page

    cases = {"fedgloss-fig-19": "75 rounds", "fedsam-fig-3": "300-3,000 rounds", "fedima-fig-1": "100 rounds",
             "fedgloss-table-3": "300 rounds"}
    for artifact_id, rounds in cases.items():
        path = tmp_path / f"{artifact_id}.ipynb"
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title\n\nText.")])
        nbformat.write(nb, path)
        finish_page(path, "small", [0], "result", artifact=get_artifact(artifact_id))
        banner = nbformat.read(path, as_version=4).cells[1].source
        assert rounds in banner, (artifact_id, banner)
        assert banner.count("rounds") == 1


def test_the_banner_says_which_seeds_the_claims_read_when_the_page_shows_fewer():
    shown = [_spec(scale="small", alpha=a, seed=0) for a in (0.0, 0.5)]
    more = [_spec(scale="small", alpha=0.0, seed=s) for s in (1, 2)]
    banner = scale_banner("small", shown, claim_seeds=[0, 1, 2])
    assert "2 runs, seed 0." in banner
    assert "The tables and figures show seed 0; the claims' verdicts read seeds 0, 1, 2" in banner
    # a page that shows the claims' seeds says them once, per configuration
    both = scale_banner("small", shown + more, claim_seeds=[0, 1, 2])
    assert "4 runs, seeds 0, 1, 2 (1 to 3 per configuration)" in both and "verdicts read" not in both
    assert "verdicts read" not in scale_banner("small", shown, claim_seeds=[0])
    assert "verdicts read" not in scale_banner("small", shown, cls="config", claim_seeds=[0, 1, 2])


def test_finish_page_states_the_seeds_a_page_shows_and_those_its_claims_read(tmp_path):
    import nbformat

    from flcore.reproduction.artifacts import get_artifact
    from flcore.site.reproduce import finish_page

    def banner(artifact_id, code):
        path = tmp_path / f"{artifact_id}.ipynb"
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell(code)])
        nbformat.write(nb, path)
        finish_page(path, "small", [0], "result", artifact=get_artifact(artifact_id))
        return nbformat.read(path, as_version=4).cells[1].source

    reads = banner("fedsam-table-2", "runs = page.runs()")
    assert "seeds 0, 1, 2, 3, 4, 5 (1 to 6 per configuration)" in reads and "verdicts read" not in reads
    keeps = banner("fedsam-table-2", "specs = artifact.runs(scale, seeds)")
    assert "seed 0." in keeps and "the claims' verdicts read seeds 0, 1, 2, 3, 4, 5" in keeps


def test_the_banner_reads_the_seeds_from_the_verdicts(tmp_path):
    import nbformat

    from flcore.reproduction.artifacts import get_artifact
    from flcore.site.reproduce import finish_page, verdict_seeds

    # FedSAM Table 1's flatness claim keeps one seed, yet its verdict reads the three seeds
    # other claims trained for its cells: the verdicts' own seeds are what the banner says
    results = [{"comparisons": [{"seeds": [0, 1, 2]}, {"seeds": []}]}, {"comparisons": [{"seeds": [0]}]}]
    assert verdict_seeds(results) == [0, 1, 2]
    path = tmp_path / "page.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title")]), path)
    finish_page(path, "small", [0], "result", artifact=get_artifact("fedsam-table-1"),
                claim_seeds=verdict_seeds(results))
    banner = nbformat.read(path, as_version=4).cells[1].source
    assert "The tables and figures show seed 0; the claims' verdicts read seeds 0, 1, 2" in banner


def test_claims_markdown_says_which_seeds_each_claim_reads():
    cells = {"better": {"algorithm": "A"}, "worse": {"algorithm": "B"}}
    row = {"cells": cells, "published": {"gap": 1.0}, "gap": 0.5, "sd": 0.9, "sd_from": "paired seeds",
           "threshold": 1.0, "mde": 1.5, "verdict": "inconclusive", "reason": None}
    results = [{"text": "A beats B", "verdict": "inconclusive", "summary": "1 of 1 comparison run",
                "artifacts": ["p"], "units": "points",
                "comparisons": [{**row, "seeds": [0, 2]}, {**row, "seeds": [1]}]},
               {"text": "C beats D", "verdict": "not_run", "summary": "0 of 1 comparisons run", "artifacts": ["p"],
                "units": "points", "comparisons": [{**row, "seeds": [], "verdict": "not_run"}]}]
    text = claims_markdown(results, "small")
    assert "Checked by p; in points. Its comparisons read seeds 0, 1, 2." in text
    assert "**C beats D**" in text and "C beats D" in text and text.count("Its comparisons read") == 1


def test_claims_markdown_has_one_row_per_comparison_with_its_cells_n_sd_and_source():
    cells = {"better": {"dataset": "CIFAR-10", "alpha": 0.0, "algorithm": "FedGF", "clients_per_round": 5},
             "worse": {"dataset": "CIFAR-10", "alpha": 0.0, "algorithm": "FedASAM", "clients_per_round": 5}}
    paired = {"cells": cells, "published": {"gap": 5.09}, "seeds": [0, 2], "gap": 0.5, "sd": 0.9,
              "sd_from": "reference pairs", "threshold": 1.24, "mde": 1.55, "verdict": "inconclusive",
              "reason": None, "note": "left out: seed 1 of FedASAM (CIFAR-10, alpha = 0.0) diverged (n = 2)"}
    alphas = {"cells": {"better": {"algorithm": "FedSAM", "alpha": 100.0},
                        "worse": {"algorithm": "FedSAM", "alpha": 0.0}},
              "published": {"gap": 15.67}, "seeds": [0, 1, 2], "gap": 3.0, "sd": 0.5, "sd_from": "paired seeds",
              "threshold": 1.24, "mde": 1.55, "verdict": "holds", "reason": None}
    missing = {"cells": cells, "published": {"gap": 2.0}, "seeds": [], "gap": None, "sd": None, "threshold": None,
               "mde": None, "verdict": "not_run", "reason": "its artifact has no notebook yet"}
    results = [{"text": "A beats B", "artifacts": ["fedsam-table-2"], "verdict": "inconclusive", "reason": None,
                "units": "points", "summary": "2 of 2 comparisons run: 1 hold, 1 inconclusive",
                "comparisons": [paired, alphas]},
               {"text": "C beats D", "artifacts": ["fedsam-table-1"], "verdict": "not_run", "units": "lambda_max",
                "reason": "its artifact has no notebook yet",
                "summary": "0 of 1 comparison run; 1 not run at this scale",
                "comparisons": [missing]}]
    text = claims_markdown(results, "small")
    assert ("**A beats B**: **inconclusive** (2 of 2 comparisons run: 1 hold, 1 inconclusive). Checked by "
            "fedsam-table-2; in points.") in text
    header = "| comparison | n | gap: paper / ours | sd (from) | threshold / MDE | verdict |"
    assert text.count(header) == 2
    assert ("| 1. FedGF beats FedASAM (CIFAR-10, alpha 0, 5 clients/round) | 2 | +5.09 / +0.50 | 0.90 (ref. pairs) "
            "| 1.24 / 1.55 | inconclusive |") in text
    assert "| 2. alpha 100 beats alpha 0 (FedSAM) | 3 | +15.67 / +3.00 | 0.50 (paired) | 1.24 / 1.55 | holds |" in text
    assert "- 1: left out: seed 1 of FedASAM (CIFAR-10, alpha = 0.0) diverged (n = 2)." in text
    dash = "\u2013"
    assert (f"| 1. FedGF beats FedASAM (CIFAR-10, alpha 0, 5 clients/round) | {dash} | +2.00 / {dash} | {dash} "
            f"| {dash} / {dash} | not run at this scale |") in text
    assert "- 1: its artifact has no notebook yet." in text
    assert "The 95 % t interval on the mean difference decides" in text  # the decision rule above the tables
    assert "nan" not in text and "None" not in text


def test_an_absent_comparison_says_its_90_interval_and_margin_below_the_table():
    row = {"cells": {"better": {"algorithm": "FedSAM"}, "worse": {"algorithm": "FedAvg"}},
           "published": {"gap": 5.16}, "seeds": [0, 1, 2], "gap": 0.03, "sd": 0.15, "sd_from": "paired seeds",
           "threshold": 0.38, "mde": 0.49, "verdict": "absent", "reason": None, "margin": 1.0,
           "margin_reason": "1 point", "interval_90": [-0.2242, 0.2908]}
    result = {"text": "A beats B", "artifacts": ["fedsam-table-2"], "verdict": "absent", "reason": None,
              "units": "points", "summary": "1 of 1 comparison run: 1 absent", "comparisons": [row]}
    text = claims_markdown([result], "small")
    assert "**A beats B**: **absent** (1 of 1 comparison run: 1 absent)" in text
    assert "| 0.38 / 0.49 | absent |" in text
    assert ("- 1: absent: the 90 % interval [-0.22, +0.29] lies inside the margins [-1.00, +1.00] "
            "(1 point).") in text


def test_a_gap_on_fewer_seeds_than_its_cells_says_which_seed_was_left_out_and_why():
    row = {"cells": {"better": {"algorithm": "FedSpeed"}, "worse": {"algorithm": "FedAvg"}},
           "published": {"gap": 5.0}, "seeds": [0, 1], "gap": 12.04, "sd": 1.0, "sd_from": "paired seeds",
           "threshold": 9.0, "mde": 11.0, "verdict": "inconclusive", "reason": None, "margin": 1.0,
           "left_out": {"better": [2], "worse": [3]},
           "per_seed": {"better": [{"seed": 0, "value": 20.0, "flag": None}, {"seed": 1, "value": 21.0, "flag": None},
                                   {"seed": 2, "value": None, "flag": "diverged"}],
                        "worse": [{"seed": 0, "value": 8.0, "flag": None}, {"seed": 1, "value": 9.0, "flag": None},
                                  {"seed": 3, "value": 9.5, "flag": None}]}}
    result = {"text": "A beats B", "artifacts": ["fedgloss-table-3"], "verdict": "inconclusive", "reason": None,
              "units": "points", "summary": "1 of 1 comparison run: 1 inconclusive", "comparisons": [row]}
    text = claims_markdown([result], "small")
    assert ("- 1: the gap pairs seeds 0, 1; left out: seed 2 of FedSpeed (diverged); seed 3 of FedAvg "
            "(no run of the other cell to pair).") in text
    row.pop("left_out")
    assert "the gap pairs" not in claims_markdown([result], "small")


def test_verdict_counts_count_each_verdict():
    verdicts = pd.DataFrame({"verdict": ["holds", "fails", "holds", "not_testable", "inconclusive"]})
    assert verdict_counts(verdicts) == ("of the 5 claims this table checks, 3 are decided at this scale (2 hold, "
                                        "1 fail); 1 inconclusive, 1 not testable here")
    assert verdict_counts(verdicts.iloc[:0], "figure") == (
        "of the 0 claims this figure checks, 0 are decided at this scale")
    assert verdict_counts(verdicts, at="").startswith("of the 5 claims this table checks, 3 are decided (2 hold")
    assert verdict_counts(verdicts.iloc[:1], at="at the paper scale") == (
        "of the 1 claim this table checks, 1 is decided at the paper scale (1 hold)")


class _RecordingPage:
    artifact_id = "fedsam-table-2"

    def __init__(self):
        self.shown = []

    def table(self, frame, caption, downloads=None, show=None):
        self.shown.append((frame, caption, show))


def test_show_orderings_captions_the_mean_tau_over_the_blocks():
    from flcore.report.ordering import show_orderings

    comparison = pd.DataFrame({"alpha": [0, 0, 0, 1, 1], "algorithm": ["A", "B", "C", "A", "B"],
                               "paper": [3.0, 2.0, 1.0, 1.0, 2.0], "ours": [3.0, 2.0, 1.0, 2.0, 1.0]})
    page = _RecordingPage()
    assert show_orderings(page, comparison, ["alpha"]) == pytest.approx(0.0)  # taus 1 and -1
    frame, caption, shown = page.shown[0]
    assert list(frame["Kendall's \u03c4"]) == [1.0, -1.0] and list(shown.index) == [0, 1]
    assert caption == "The methods ranked by the paper and by our runs; mean Kendall's \u03c4 over the 2 blocks: 0.00."
    empty = show_orderings(page, comparison.iloc[:0], ["alpha"], what="c values")
    assert empty != empty and page.shown[1][1].startswith("The c values ranked")
    assert "undefined (no block" in page.shown[1][1] and "nan" not in page.shown[1][1]


def test_ranking_findings_by_scale():
    from flcore.report.page import SMOKE_NOTE, ranking_findings

    verdicts = pd.DataFrame({"verdict": ["holds", "inconclusive"]})
    smoke = ranking_findings(verdicts, 0.25, "smoke", "MNIST-1D stands in.")
    assert smoke == ["At the **smoke** scale the paper's and our rankings agree with a mean Kendall's \u03c4 of 0.25; "
                     "of the 2 claims this table checks, 1 is decided at this scale (1 hold); 1 inconclusive.",
                     "MNIST-1D stands in.", SMOKE_NOTE]
    assert ranking_findings(verdicts, 0.25, "paper", "MNIST-1D stands in.") == [
        smoke[0].replace("**smoke**", "**paper**")]


def test_mean_tau_says_what_is_undefined_instead_of_printing_nan():
    from flcore.report.ordering import mean_tau_text

    # FedGloSS Table 9: the paper prints 84.8 % for FedGloSS-SAM with and without ADMM, so
    # the published values tie in the only block and tau-b is undefined (0 / 0)
    comparison = pd.DataFrame({"dataset": ["CIFAR-10"] * 2, "alpha": [100.0] * 2,
                               "algorithm": ["FedGloSS-SAM", "FedGloSS-SAM w/o ADMM"],
                               "paper": [84.8, 84.8], "ours": [61.0, 59.5]})
    orderings = ordering_table(comparison, ["dataset", "alpha"])
    text = mean_tau_text(orderings)
    assert "nan" not in text.lower() and text.startswith("undefined") and "tie" in text
    assert mean_tau_text(ordering_table(comparison.iloc[:0], ["dataset", "alpha"])).startswith("undefined")
    # one block defined (tau 1), one not: the mean over the defined one, said so
    two = pd.concat([comparison, comparison.assign(alpha=0.0, paper=[70.0, 60.0])])
    assert mean_tau_text(ordering_table(two, ["dataset", "alpha"])) == "1.00 over 1 of 2 blocks"
    assert mean_tau_text(ordering_table(two[two["alpha"] == 0.0], ["dataset", "alpha"])) == "1.00"


def test_ranking_findings_never_print_nan():
    from flcore.report.page import ranking_findings

    verdicts = pd.DataFrame([{"verdict": "holds"}])
    (first, *_) = ranking_findings(verdicts, float("nan"), "small", "MNIST-1D stands in.")
    assert "nan" not in first and "undefined" in first


def _claim_row(verdict, text="A beats B", reason=None):
    return {"id": f"x-{verdict}", "text": text, "verdict": verdict, "reason": reason}


@pytest.mark.parametrize("verdicts, expected", [
    (["holds", "not_testable"], "holds"),
    (["holds", "inconclusive"], "inconclusive"),
    (["holds", "inconclusive", "at_chance"], "inconclusive"),
    (["holds", "at_chance"], "holds"),
    (["mixed", "holds"], "fails"),
    (["fails", "holds"], "fails"),
    (["holds", "absent", "inconclusive"], "absent"),
    (["absent", "fails"], "fails"),
    (["not_testable", "by_construction", "same_runs", "not_run"], "not testable"),
    ([], "not testable"),
])
def test_a_pages_verdict_from_its_claims(verdicts, expected):
    from flcore.report.page import page_verdict

    assert page_verdict([_claim_row(v) for v in verdicts]) == expected


def test_the_verdict_box_names_the_verdict_and_its_reason_in_one_line():
    from flcore.report.page import verdict_box

    box = verdict_box([_claim_row("holds"), _claim_row("fails", "FedGF beats FedSAM at alpha = 0")], "small")
    head, cls, reason, end = box.split("\n")
    # the title counts the claims by verdict (the worst alone would hide the hold)
    assert head == ":::{admonition} Verdicts at the small scale: 1 hold, 1 fail" and cls == ":class: flcore-verdict"
    assert reason.startswith("Of the 2 claims this page checks: 1 hold, 1 fail (the worst verdict: "
                             "\u201cFedGF beats FedSAM at alpha \\= 0\u201d fails).") and end == ":::"
    none = verdict_box([], "smoke")
    assert none.split("\n")[0].endswith(": no claim") and "No headline claim" in none
    assert "at the end of the page" not in none  # there is nothing there to read
    capped = verdict_box([_claim_row("not_run", reason="not checked: 5 of 300 rounds")], "small")
    assert "A capped preview: its 1 claim is not checked" in capped
    away = verdict_box([_claim_row("not_testable", reason="about fmnist with fmnist_cnn")], "small")
    assert away.split("\n")[0].endswith(": 1 not testable here") and "about fmnist with fmnist_cnn" in away


def test_finish_page_puts_the_verdict_box_under_the_banner_before_the_tables(tmp_path):
    import nbformat

    from flcore.reproduction.artifacts import get_artifact
    from flcore.site.reproduce import finish_page

    path = tmp_path / "page.ipynb"
    table = nbformat.v4.new_code_cell("show()", outputs=[nbformat.v4.new_output("stream", text="Table 1.\n")])
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title\n\nText."), table]), path)
    for _ in range(2):  # built again: one box, the new one
        finish_page(path, "small", [0], "result", artifact=get_artifact("fedsam-table-2"), verdict=":::{admonition} V")
    cells = nbformat.read(path, as_version=4).cells
    assert [c.metadata.get("tags", [None])[0] for c in cells[:3]] == [None, "flcore-banner", "flcore-verdict"]
    assert cells[2].source == ":::{admonition} V" and sum("flcore-verdict" in c.metadata.get("tags", [])
                                                           for c in cells) == 1
    assert cells[3].source == "Text." and cells[4].cell_type == "code"
