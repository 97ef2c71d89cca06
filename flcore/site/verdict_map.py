"""The verdict map: every claim of a page on one screen, at the top of Claims and of each
paper's landing page.

One block of raw HTML (MyST passes it through): a line of tallies apart for the papers' own
claims, the later claims of other sources and the book's own questions
(:func:`flcore.reproduction.claims.headline_counts`), then per paper one row of small
cells, one per claim: its short name (the id without the paper's prefix), its verdict as a
word in a coloured cell (readable without colour), and its effect -- for a claim of one
comparison run, our gap with its 95 % interval beside the paper's gap; for several, the
comparisons' verdicts counted.  Each cell links to the claim's block on the page
(:func:`claim_anchor`).  Its style sheet comes with it: the site has none of its own.
"""
from __future__ import annotations

import html
from collections.abc import Callable, Sequence

from flcore.reproduction.claims import VERDICT_TEXT, headline_counts
from flcore.reproduction.paper_registry import get_paper, paper_ids
from flcore.reproduction.plateau import NOT_SETTLED, is_not_settled

#: Background colour per verdict (the word is always printed too).
COLOURS = {"holds": "#d4edda", "fails": "#f8d7da", "mixed": "#fde2c8", "absent": "#d6e4f0",
           "negligible": "#d6e4f0", "inconclusive": "#eeeeee", "cannot_decide": "#eeeeee", "indicative": "#eeeeee",
           "at_chance": "#f7f7f7", "by_construction": "#f7f7f7", "same_runs": "#f7f7f7", "not_run": "#ffffff",
           "not_testable": "#ffffff"}
#: The map's groups and their names, in the order they are tallied.
GROUPS = {"papers": "the papers' own claims", "later": "later claims by other sources",
          "book": "the book's own questions"}
STYLE = ("<style>.verdict-map a{display:inline-block;width:8.3em;margin:1px;padding:0 3px;border:1px solid #bbb;"
         "border-radius:3px;font-size:10px;line-height:1.25;vertical-align:top;color:#111;text-decoration:none;"
         "overflow:hidden;white-space:nowrap;text-overflow:ellipsis}"
         ".verdict-map .vm-paper{display:inline-block;width:5.4em;font-size:10px;font-weight:bold;vertical-align:top;"
         "overflow:hidden;text-overflow:ellipsis}"
         ".verdict-map .vm-cells{display:inline-block;max-width:calc(100% - 5.8em)}"
         ".verdict-map p{font-size:11px;line-height:1.3;margin:0 0 3px 0}</style>")


def claim_anchor(claim_id: str) -> str:
    """The HTML id of a claim's block on a page (:func:`flcore.report.page.claims_markdown`)."""
    return f"claim-{claim_id}"


def short_name(result: dict) -> str:
    """The claim's id without its paper's prefix: ``"sam-improves-fedavg"``."""
    prefix = f"{result['paper']}-"
    return result["id"][len(prefix):] if result["id"].startswith(prefix) else result["id"]


def effect_text(result: dict) -> str:
    """A claim's effect in a few characters (module docstring)."""
    ran = [c for c in result["comparisons"] if c.get("gap") is not None and not c.get("counted_in")]
    if len(ran) == 1:
        comparison = ran[0]
        text = f"{comparison['gap']:+.2f}"
        if comparison.get("interval_95"):
            low, high = comparison["interval_95"]
            text += f" [{low:+.1f}, {high:+.1f}]"
        paper = comparison["published"]["gap"]
        return text + (f" · paper {paper:+.2f}" if paper is not None else "")
    if not ran:
        return ""
    words: dict[str, int] = {}
    for comparison in ran:
        word = NOT_SETTLED if is_not_settled(comparison) else VERDICT_TEXT[comparison["verdict"]]
        words[word] = words.get(word, 0) + 1
    return ", ".join(f"{n} {word}" for word, n in words.items())


def _cell(result: dict, href: Callable[[str], str]) -> str:
    verdict = result["verdict"]
    word = VERDICT_TEXT[verdict]
    effect = effect_text(result)
    title = html.escape(f"{result['text']} -- {word}" + (f"; {effect}" if effect else ""), quote=True)
    return (f'<a href="{html.escape(href(result["id"]), quote=True)}" title="{title}" '
            f'style="background:{COLOURS.get(verdict, "#ffffff")}">'
            f'{html.escape(short_name(result))}<br><b>{html.escape(word)}</b>'
            + (f" {html.escape(effect)}" if effect else "") + "</a>")


def _tallies(results: Sequence[dict]) -> str:
    parts = []
    for group, counts in headline_counts(results).items():
        totals = counts["uncorrected"]
        n = sum(totals.values())
        if not n:
            continue
        words = ", ".join(f"{k} {VERDICT_TEXT[v]}" for v, k in totals.items() if k)
        parts.append(f"<b>{n} {GROUPS[group]}</b>: {html.escape(words)}")
    return "; ".join(parts)


def verdict_map(results: Sequence[dict], href: Callable[[str], str] | None = None) -> str:
    """The map's HTML for ``results`` (:func:`~flcore.reproduction.claims.evaluate` rows),
    grouped by paper in the registry's order; ``href`` maps a claim id to its link (default:
    the anchor of its block on the same page)."""
    href = href or (lambda claim_id: f"#{claim_anchor(claim_id)}")
    if not results:
        return ""
    rows = []
    for paper in paper_ids():
        mine = [r for r in results if r["paper"] == paper]
        if not mine:
            continue
        cells = "".join(_cell(r, href) for r in mine)
        name = get_paper(paper).name.split(" / ")[0]  # "FedSAM / FedASAM / SWA" -> "FedSAM"
        rows.append(f'<div><span class="vm-paper">{html.escape(name)}</span>'
                    f'<span class="vm-cells">{cells}</span></div>')
    return (f'<div class="verdict-map" style="margin:0 0 1em 0">{STYLE}\n<p>{_tallies(results)}. '
            "Each cell: the claim, its verdict, our gap with its 95 % interval beside the paper's (or its "
            "comparisons' verdicts); hover for the claim's words, click for its block.</p>\n"
            + "\n".join(rows) + "\n</div>")
