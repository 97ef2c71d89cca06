"""The book's generated pages: Coverage, Claims and one landing page per paper.

``flcore book`` writes them after the artifact notebooks ran and before the site is
built, from the inventory (:mod:`flcore.reproduction.inventory`), the claims registry
(:mod:`flcore.reproduction.claims`, verdicts read from the run store at the built scale),
the papers' landing data (each paper's ``paper.yaml``, :mod:`flcore.reproduction.papers`) and the book
manifest (which pages were built, at which scales).  They are build outputs, like the
executed notebooks, and are not kept in the repository:

- ``book/coverage.md``: every one of the 110 tables and figures with its caption and status;
- ``book/claims.md``: every claim of the registry with its verdict;
- ``book/_verdicts/claims.json`` and ``claims.csv``: the verdicts as files, copied to the
  site's root (:mod:`flcore.site.verdict_files`);
- ``book/stand-in.md``: what the smaller scales train instead of the papers' settings, and
  which claims that cannot decide (:mod:`flcore.site.stand_in_page`);
- ``book/<paper>/index.md``: the paper's question, method and protocol, its headline
  claims with their verdicts, and each of its tables and figures with its status.

A page links an artifact only when its executed notebook is in the book.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from flcore.config import DATASET_LABELS
from flcore.report.escaping import page_text
from flcore.report.page import claims_markdown, later_claims_markdown, totals_text
from flcore.reproduction.budget import load_device_rates, read_rows
from flcore.reproduction.claim_plan import plan_claims, price_line, size_text
from flcore.reproduction.claims import (
    DECIDED,
    METRICS,
    RULE_TEXT,
    VERDICT_TEXT,
    all_claims,
    evaluate_claims,
    verdict_totals,
)
from flcore.reproduction.coverage import coverage
from flcore.reproduction.inventory import InventoryEntry, entry, inventory
from flcore.reproduction.paper_registry import get_paper, paper_ids
from flcore.reproduction.plateau import criterion_text, plateau_counts
from flcore.reproduction.settling import settled_shares
from flcore.reproduction.stand_in import stand_in_for
from flcore.site.manifest import load_manifest
from flcore.site.stand_in_page import stand_in_page
from flcore.site.toc import planned_toc, write_toc
from flcore.site.verdict_files import links_html, write_verdict_files
from flcore.site.verdict_map import verdict_map

STATUS_TEXT = {"regenerated": "regenerated", "pending": "pending", "not_regenerable": "not regenerable here"}


def generated_pages() -> list[str]:
    """The pages ``flcore book`` writes (relative to the repository root)."""
    return ["book/coverage.md", "book/claims.md", "book/stand-in.md"] + [f"book/{paper}/index.md"
                                                                          for paper in paper_ids()]


class _Links:
    """Links from a page at ``depth`` folders below ``book/`` to the artifact pages that exist."""

    def __init__(self, root: Path, depth: int):
        self.root = root
        self.prefix = "../" * depth

    def exists(self, artifact_id: str) -> bool:
        item = entry(artifact_id)
        return (self.root / "book" / "artifacts" / item.paper / f"{artifact_id}.ipynb").is_file()

    def artifact(self, artifact_id: str, text: str | None = None) -> str:
        item = entry(artifact_id)
        text = text or item.label  # pages list one paper's artifacts at a time
        if not self.exists(artifact_id):
            return text
        return f"[{text}]({self.prefix}artifacts/{item.paper}/{artifact_id}.ipynb)"


def stand_in(scale: str) -> str:
    """What a page built at ``scale`` trains on, in words: ``"MNIST-1D"`` below the paper
    scale (the scale's stand-in data set), ``"the paper's data"`` at it."""
    return stand_in_for(scale).name


def _status_cell(row: dict) -> str:
    """``"regenerated on MNIST-1D (smoke, small)"``: never "reproduced" for a stand-in."""
    text = STATUS_TEXT[row["status"]]
    if row["status"] == "regenerated":
        if not row["scales_built"]:
            return text + " (not built in this checkout)"
        by_data: dict[str, list[str]] = {}
        for scale in row["scales_built"]:
            by_data.setdefault(stand_in(scale), []).append(scale)
        text += " " + "; ".join(f"on {data} ({', '.join(scales)})" for data, scales in by_data.items())
    elif row["status"] == "not_regenerable":
        text += f": {row['reason']}"
    return text


def _verdicts_cell(row: dict, results: dict[str, dict] | None) -> str:
    """The verdicts of the claims an artifact checks, counted as its page's verdict box counts
    them (``"1 hold, 1 inconclusive; 1 later: 1 fail"``)."""
    if not row["claims"]:
        return ""
    if results is None:
        return str(len(row["claims"]))
    mine = [results[c] for c in row["claims"] if c in results]
    if not mine:
        return str(len(row["claims"]))
    own = [r for r in mine if not r.get("later_source")]
    later = [r for r in mine if r.get("later_source")]
    text = totals_text(verdict_totals(own)) if own else "no claim"  # as the page's verdict box counts them
    if later:
        text += f"; {len(later)} later: {totals_text(verdict_totals(later))}"
    return text


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _inventory_table(rows: list[dict], links: _Links, results: list[dict] | None = None) -> list[str]:
    """One row per artifact: its status and the verdicts of the claims it checks."""
    by_id = None if results is None else {r["id"]: r for r in results}
    lines = ["| artifact | caption | class | status | claims' verdicts |", "|---|---|---|---|---|"]
    for row in rows:
        item = entry(row["id"])
        lines.append(f"| {links.artifact(row['id'], item.label)} | {page_text(row['caption'])} | {row['class']} "
                     f"| {_escape(_status_cell(row))} | {_verdicts_cell(row, by_id)} |")
    return lines


def _counts(rows: list[dict]) -> Counter:
    return Counter(row["status"] for row in rows)


def coverage_page(rows: list[dict], root: Path, scale: str, results: list[dict] | None = None) -> str:
    links = _Links(root, 0)
    counts = _counts(rows)
    built = sum(bool(row["scales_built"]) for row in rows)
    on = ("at the paper scale on the paper's data" if scale == "paper" else
          f"at the {scale} scale on **{stand_in(scale)}**, which stands in for the papers' data: a regenerated page "
          "shows whether an effect appears on the stand-in, not a reproduction of the paper's numbers")
    lines = ["# Coverage", "",
             f"The five papers have **{len(rows)}** tables and figures. flcore regenerates "
             f"**{counts['regenerated']}** of them (**{built}** built in this book, {on}), "
             f"**{counts['pending']}** are pending (regenerable, not written yet) and **{counts['not_regenerable']}** "
             "are not regenerable here: *heavy* ones need data or pretrained weights that cannot be had offline or "
             "through torchvision, *schematic* ones are illustrations without data.", "",
             "The same list as JSON: `flcore reproduce --list --json`.", "",
             "The last column counts the verdicts of the claims each page checks ([Claims](claims.md)).", "",
             "| paper | tables and figures | regenerated | pending | not regenerable |", "|---|---|---|---|---|"]
    for paper in paper_ids():
        mine = [row for row in rows if row["paper"] == paper]
        c = _counts(mine)
        lines.append(
            f"| [{get_paper(paper).name}]({paper}/index.md) | {len(mine)} | {c['regenerated']} | {c['pending']} "
            f"| {c['not_regenerable']} |"
        )
    lines.append(f"| **all** | **{len(rows)}** | **{counts['regenerated']}** | **{counts['pending']}** "
                 f"| **{counts['not_regenerable']}** |")
    for paper in paper_ids():
        lines += ["", f"## {get_paper(paper).name}", ""]
        lines += _inventory_table([row for row in rows if row["paper"] == paper], links, results)
    return "\n".join(lines) + "\n"


def verdict_summary(results: list[dict], scale: str) -> str:
    """The paragraph a Claims or landing page opens with: the claims per verdict, and what the
    scale can and cannot decide (accuracy claims decided of those it runs; claims about what it
    does not run; claims that hold by construction), counted from ``results``."""
    totals = verdict_totals(results)
    corrected = verdict_totals(results, corrected=True)
    accuracy = [r for r in results if r["metric"] in METRICS and METRICS[r["metric"]].accuracy]
    accuracy_run = [r for r in accuracy if r["verdict"] not in ("not_run", "not_testable", "same_runs")]
    accuracy_decided = [r for r in accuracy_run if r["verdict"] in DECIDED]
    lines = [f"**{len(results)} claim{'s' if len(results) != 1 else ''} at the `{scale}` scale: "
             f"{totals_text(totals)}.**"]
    if any(r.get("verdict_corrected") != r["verdict"] for r in results if "verdict_corrected" in r):
        lines.append(f"After the book's correction for its many claims (Benjamini-Hochberg over the claims' p at "
                     f"q = 0.05): {totals_text(corrected)}.")
    elif any("verdict_corrected" in r for r in results):
        lines.append("Every decided claim keeps its verdict after the book's correction for its many claims "
                     "(Benjamini-Hochberg over the claims' p at q = 0.05).")
    if accuracy:
        lines.append(f"Of the {len(accuracy)} accuracy claim{'s' if len(accuracy) != 1 else ''} this scale runs "
                     f"{len(accuracy_run)} and decides {len(accuracy_decided)} (holds, fails or absent); an "
                     "inconclusive one states the smallest gap it could have detected (MDE).")
    else:
        lines.append("No claim here is about accuracy.")
    lines += [f"{totals[verdict]} {sentence}" for verdict, sentence in _UNDECIDED_SENTENCES if totals[verdict]]
    return " ".join(lines)


#: What the landing page says of the claims it does not count as evidence, by verdict.
_UNDECIDED_SENTENCES = (
    ("not_testable", "cannot be decided here: they are about a data set or model this scale does not run, and a "
                     "stand-in never decides them."),
    ("at_chance", "rest on cells that did not learn on the stand-in (most seeds below chance + 5 points): not "
                  "testable on it, never a fail."),
    ("not_run", "rest on cells this scale or this store does not run."),
    ("same_runs", "rest on the same runs as another claim, which counts them: the runs are evidence once."),
    ("by_construction", "follow from the methods' definitions (by construction): shown, not counted as evidence."),
)


def settling_text(results: list[dict], scale: str) -> str:
    """How early the verdicts were reached: over the distinct accuracy comparisons of
    ``results`` with a ``settles_at`` (each counted once), the share whose final paired verdict
    already stood at 10, 25 and 50 % of the rounds (:func:`flcore.reproduction.settling.settled_shares`),
    stated as evidence from the stand-in."""
    comparisons = [c for r in results for c in r["comparisons"] if not c.get("counted_in")]
    shares = settled_shares(comparisons)
    head = ("**When a verdict settles.** Every run logs its test accuracy at each evaluated round, so each "
            "accuracy comparison has a paired gap, interval and verdict at every round, as if its runs had stopped "
            "there (the same last-100-rounds mean, over the rounds done); its `settles_at` "
            f"(`flcore claims --scale {scale} --json`) is the first round from which that verdict no longer "
            "changes, and each claim below shows the gap with its interval against the rounds.")
    if shares is None:
        return head + " No comparison at this scale has every seed's evaluations in the store."
    cells = " | ".join(f"{100 * share:.0f} %" for share in shares["shares"])
    values = " | ".join(f"{100 * value:.0f} %" for value in shares["shares"].values())
    return "\n".join([
        head + f" Over the {shares['n']} comparisons at the `{scale}` scale, the share whose final verdict was "
        "already reached at a share of the rounds:", "",
        f"| rounds done | {cells} |", "|---|" + "---|" * len(shares["shares"]), f"| verdict already final | {values} |",
        "",
        f"This is evidence from the stand-in at the `{scale}` scale for choosing a preview's `--max-rounds`, not a "
        "verdict at the paper scale: a capped preview still decides nothing, and the paper's protocol may settle "
        "later or earlier than MNIST-1D does."])


#: The public function for one comparison, with two worked examples (numbers by hand).
DECIDE_EXAMPLES = """**Your own numbers.** One comparison is one call: \
`flcore.reproduction.verdicts.decide_comparison(a, b, *, better="higher", chance=None, margin, resolution=0.0, \
censored_a=None, censored_b=None, diverged_a=None, diverged_b=None)`, the per-seed values of the two \
cells paired by position (`None` for a seed without one); it returns the verdict, the gap, n, p and the sd (and \
the intervals, the TOST p, the MDE, the cells' states).

```python
from flcore.reproduction.verdicts import decide_comparison

decide_comparison([30, 60, 62], [28, 57.5, 59], chance=10, margin=1).verdict      # 'holds'
decide_comparison([60.4, 60.5, 60.6], [60, 60, 60], margin=1).verdict           # 'negligible'
```

In the first, the differences 2, 2.5 and 3 have mean 2.5 and sd 0.5, so t = 2.5 / (0.5 / sqrt 3) = 8.66 on 2 \
degrees of freedom (p = 0.013): the 95 % interval [1.26, 3.74] lies above 0 and reaches past the margin of 1; \
every seed of both cells is above chance + 5 = 15. In the second, the differences 0.4, 0.5 and 0.6 give the 95 % \
interval [0.25, 0.75] -- significant -- but the 90 % interval [0.33, 0.67] lies inside (-1, 1): an effect too \
small for the claim's words, *negligible*, not *holds*."""


def plateau_text(results: list[dict], scale: str) -> str:
    """The plateau criterion and how many of the accuracy cells the claims read met it
    (:mod:`flcore.reproduction.plateau`)."""
    comparisons = [c for r in results for c in r["comparisons"] if not c.get("counted_in")]
    counts = plateau_counts(comparisons)
    head = (f"**Trained to a plateau?** A claim about accuracy is about where training ends: {criterion_text(1.0)} "
            "(the margin is the comparison's: 1 point on the stand-in). Below the paper scale a comparison with a "
            "cell that has not reached its plateau is *not settled* -- inconclusive, whatever it read at the last "
            "round; at the paper scale the runs keep the paper's rounds.")
    if not counts["cells"]:
        return head + " No accuracy cell at this scale has its evaluations in the store."
    share = 100 * counts["reached"] / counts["cells"]
    return (head + f" At the `{scale}` scale {counts['reached']} of the {counts['cells']} accuracy cells the claims "
            f"read ({share:.0f} %) had reached their plateau; {counts['not_settled']} comparison"
            f"{'s are' if counts['not_settled'] != 1 else ' is'} not settled.")


def _equivalence_text(results: list[dict]) -> str:
    """The *absent* rule in a paragraph, with the first absent comparison of ``results`` worked
    through (or why there is none)."""
    text = ("**Absent, not only inconclusive.** A gap whose 95 % interval contains 0 is not yet *inconclusive*: "
            "each comparison has a *margin* in its units, stated with its reason (on the stand-in 1 point of "
            "accuracy unless the claim states another; at the paper scale half the published gap), and when the "
            "90 % interval on the gap lies inside (-margin, +margin) -- both one-sided tests at 5 % reject an "
            "effect as large as the margin -- the effect is *absent*; a gap whose 95 % interval excludes 0 but whose "
            "90 % interval lies inside the margins is *negligible*. A claim reads absent only when every "
            "comparison it runs is absent or negligible; it is counted apart from the fails, which need the "
            "interval on the wrong side of 0.")
    for result in results:
        for comparison in result["comparisons"]:
            if comparison["verdict"] == "absent":
                low, high = comparison["interval_90"]
                return (text + f" For example, in *{page_text(result['text'])}* ({result['id']}) the gap is "
                        f"{comparison['gap']:+.2f} {comparison['units']} over n = {len(comparison['seeds'])} seeds "
                        f"(sd {comparison['sd']:.2f}): its 95 % half-width {comparison['threshold']:.2f} does not "
                        f"exclude 0, and its 90 % interval [{low:+.2f}, {high:+.2f}] lies inside the margins "
                        f"[{-comparison['margin']:+.2f}, {comparison['margin']:+.2f}], so the effect is absent.")
    return text + " No comparison is absent at this scale."


def paper_prices(root: Path, store) -> tuple[dict[str, str], dict]:
    """Each claim's price at the paper scale in words, with the command that decides it, and the
    book's total (:func:`flcore.reproduction.claim_plan.plan_claims`, priced from the benchmark
    rows under ``root``; runs already in ``store`` are not priced again)."""
    plan = plan_claims("paper", store, load_device_rates(root / "benchmarks" / "results"))
    prices = {row["id"]: price_line(row) + (f"; `{row['decide']}`" if row["decide"] else "")
              for row in plan["claims"]}
    return prices, plan["book"]


def _book_price_text(book: dict) -> str:
    hours = "; ".join(f"{h:,.0f} h on {kind}" for kind, h in book["hours"].items() if h is not None)
    return (f"**What deciding them costs at the paper scale.** Under each claim, the runs that decide it at the "
            f"paper's own protocol on three seeds (its cells x 3 seeds; a run another claim needs too is shown as "
            f"shared), what they add to the run store and the hours on one machine of each kind measured by the "
            f"benchmarks, with the command that trains them and prints the verdict. Every claim together: "
            f"{book['distinct_runs']:,} distinct runs (a shared run once), {book['to_train']:,} not yet in the store"
            + (f", about {hours}" if hours and book["to_train"] else "")
            + f", the store growing by {size_text(book['store_bytes'])}: `flcore claims --scale paper --plan` "
              "(`--json` for scripts).")


def claims_page(results: list[dict], root: Path, scale: str,
                prices: tuple[dict[str, str], dict] | None = None) -> str:
    links = _Links(root, 0)
    lines = ["# Claims", "", verdict_map(results), "", verdict_summary(results, scale), "",
             f"Each paper's headline claims, taken from its abstract, introduction and conclusions, each a comparison "
             f"of cells of a published table with the numbers it rests on, and its verdict on our runs at the "
             f"**{scale}** scale. Gaps, thresholds and MDEs are in each claim's units (the units column).", "",
             "Below the `paper` scale MNIST-1D stands in for each paper's main setting (its CIFAR data sets with "
             "its main model), and for nothing else: a verdict there says whether the *effect* appears on the small "
             "problem, not whether the paper's numbers are reproduced; [The stand-in](stand-in.md) says why it is a "
             "fair test of some claims and which ones it cannot decide.", "",
             "## How a verdict is decided", "", RULE_TEXT, "", _equivalence_text(results), "",
             DECIDE_EXAMPLES, "",
             settling_text(results, scale), "",
             plateau_text(results, scale), "",
             f"The verdicts as files: {links_html(1)} -- the same as `flcore claims --scale {scale} --json` (each "
             "cell's per-seed values included), and one row per comparison.", "",
             f"Timing claims read only *timed* runs (trained alone, never batched); their repeats are three seeds, "
             "each trained again on the same machine, so the spread is the machine's timing noise across runs. "
             f"The same as JSON: `flcore claims --scale {scale} --json`."]
    if prices is not None:
        lines += ["", _book_price_text(prices[1])]
    for paper in paper_ids():
        mine = [r for r in results if r["paper"] == paper]
        lines += ["", f"## {get_paper(paper).name}", "",
                  claims_markdown([r for r in mine if not r.get("later_source")], scale, links.artifact, explain=False,
                                  prices=prices[0] if prices else None, details=True)]
        lines += _later_section(mine, scale, links, "###")
    return "\n".join(lines) + "\n"


def _later_section(results: list[dict], scale: str, links: _Links, heading: str) -> list[str]:
    """Lines of a page's section on the later claims against its paper (none: no lines)."""
    text = later_claims_markdown(results, scale, links.artifact)
    if not text:
        return []
    return ["", f"{heading} Later claims against it", "",
            "Claims made since the paper by other sources about the same comparisons, tested on the same runs "
            "with the same paired rule; each is shown beside the paper's claim it contests, with both verdicts.",
            "", text]


def landing_stand_in(paper: str, scale: str) -> str:
    """The sentence a paper's landing page opens with: what this build's runs train, and,
    below the paper scale, what the stand-in stands in for (the paper's main setting)."""
    main = next((c.main_setting for c in all_claims() if c.paper == paper), {})
    datasets = main.get("dataset", ())
    datasets = [datasets] if isinstance(datasets, str) else list(datasets)
    theirs = " and ".join(DATASET_LABELS.get(d, d) for d in datasets) or "its data"
    if scale == "paper":
        return f"**Built at the `paper` scale**: the paper's protocol on {theirs}, cell by cell against its numbers."
    return (f"**Built at the `{scale}` scale on {stand_in(scale)}**, which stands in for the paper's {theirs} "
            f"with its {main.get('model', 'model')}: the pages and verdicts below say whether the paper's effects "
            f"appear on {stand_in(scale)}, not whether its numbers are reproduced (`--scale paper` on a GPU for that).")


def paper_page(paper: str, rows: list[dict], results: list[dict], root: Path, scale: str) -> str:
    info = get_paper(paper).info
    links = _Links(root, 1)
    mine = [row for row in rows if row["paper"] == paper]
    counts = _counts(mine)
    claims = [r for r in results if r["paper"] == paper]
    lines = [f"# {page_text(get_paper(paper).name)}", "", verdict_map(claims), "",
             f"*{page_text(info['title'])}*, {page_text(info['authors'])}, {page_text(info['venue'])}.", "",
             landing_stand_in(paper, scale), "",
             verdict_summary([r for r in claims if not r.get("later_source")], scale)
             + f" How verdicts are decided: [Claims](../claims.md); every verdict as a file: {links_html(2)}.", "",
             "## The question", "", info["question"].strip(), "", "## The method", "", info["method"].strip(), "",
             "## The protocol", "", info["protocol"].strip(), "",
             "## Headline claims", "",
             claims_markdown([r for r in claims if not r.get("later_source")], scale, links.artifact, explain=False),
             *_later_section(claims, scale, links, "##"), "",
             "## Every table and figure", "",
             f"{len(mine)} tables and figures: {counts['regenerated']} regenerated, {counts['pending']} pending, "
             f"{counts['not_regenerable']} not regenerable here.", ""]
    lines += _inventory_table(mine, links, results)
    return "\n".join(lines) + "\n"


def _plateau_search_rows(root: Path) -> list[dict]:
    """``benchmarks/results/plateau_search.jsonl`` under ``root`` (none in a copy without it)."""
    path = root / "benchmarks" / "results" / "plateau_search.jsonl"
    return read_rows(path) if path.is_file() else []


def write_site_pages(root: Path, scale: str, store=None, seeds=(0,), manifest: dict | None = None) -> list[Path]:
    """Write the generated pages under ``root`` (module docstring) and the papers' part of
    its ``_toc.yml`` (:func:`flcore.site.toc.update_toc`); returns the pages' paths."""
    toc = planned_toc(root)  # checked before any page is written

    manifest = manifest if manifest is not None else load_manifest(root)
    rows = coverage(manifest)
    results = evaluate_claims(scale, store, seeds)
    pages = {"book/coverage.md": coverage_page(rows, root, scale, results),
             "book/claims.md": claims_page(results, root, scale, paper_prices(root, store)),
             "book/stand-in.md": stand_in_page(results, scale, _plateau_search_rows(root))}
    for paper in paper_ids():
        pages[f"book/{paper}/index.md"] = paper_page(paper, rows, results, root, scale)
    written = write_verdict_files(root, results)
    for relative, text in pages.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    write_toc(toc)
    return written


__all__ = ["InventoryEntry", "VERDICT_TEXT", "generated_pages", "inventory", "write_site_pages"]
