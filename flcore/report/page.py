"""The parts every artifact page shows, in one form.

:class:`Page` numbers a page's tables and figures ("Table 1.", "Figure 1."), puts a
caption that states the finding under each, gives every figure alt text that describes
it, offers each table as CSV downloads (published and ours), and ends a result or
analysis page with the verdicts of the paper's claims that its runs check.

Figures and downloads are embedded in the page as data URIs: the built site needs no
server and makes no request beyond its own files.
"""
from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable, Sequence

import pandas as pd

from flcore.config.presets import DEFAULT_DATASET, scale_defaults
from flcore.reproduction.claims import evaluate_claims, is_capped_reason, spread_specs
from flcore.reproduction.runner import ensure_runs

VERDICT_TEXT = {"holds": "holds", "tie": "tie (within seed spread)", "fails": "fails",
                "not_checked": "not checked at this scale"}


def _display(obj) -> None:
    from IPython.display import display

    display(obj)


def csv_link(frame: pd.DataFrame, filename: str, label: str) -> str:
    """An HTML link that downloads ``frame`` as ``filename`` (CSV, UTF-8)."""
    data = base64.b64encode(frame.to_csv(index=False).encode("utf-8")).decode("ascii")
    return (f'<a download="{html.escape(filename)}" href="data:text/csv;charset=utf-8;base64,{data}">'
            f"{html.escape(label)}</a>")


def figure_html(fig, alt: str, caption: str) -> str:
    """A PNG of the matplotlib figure ``fig`` with its alt text and caption."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (f'<figure class="flcore-figure"><img src="data:image/png;base64,{data}" alt="{html.escape(alt)}" '
            f'style="max-width:100%"/><figcaption>{caption}</figcaption></figure>')


class Page:
    """Numbered tables and figures of one artifact page (see module docstring)."""

    def __init__(self, artifact_id: str):
        self.artifact_id = artifact_id
        self.tables = 0
        self.figures = 0

    def table(self, frame: pd.DataFrame, caption: str, downloads: dict[str, pd.DataFrame] | None = None,
              show: pd.DataFrame | None = None) -> None:
        """Show ``show`` (default ``frame``) under "Table N. caption", with CSV links for
        ``downloads`` (name -> frame; default ``{"table": frame}``)."""
        from IPython.display import HTML, Markdown

        self.tables += 1
        _display(Markdown(f"**Table {self.tables}.** {caption}"))
        _display(frame if show is None else show)
        links = [csv_link(data.reset_index() if _has_named_index(data) else data,
                          f"{self.artifact_id}-table-{self.tables}-{name}.csv", f"{name} (CSV)")
                 for name, data in (downloads or {"table": frame}).items()]
        _display(HTML("Download: " + " \u00b7 ".join(links)))

    def figure(self, fig, caption: str, alt: str) -> None:
        """Show ``fig`` under "Figure N. caption" with ``alt`` as its alt text, then close it."""
        import matplotlib.pyplot as plt
        from IPython.display import HTML

        self.figures += 1
        _display(HTML(figure_html(fig, alt, f"<strong>Figure {self.figures}.</strong> {html.escape(caption)}")))
        plt.close(fig)

    def check_claims(self, scale: str, store=None, seeds: Sequence[int] = (0,), ensure_spread: bool = True,
                     device: str = "auto", workers: int | None = None,
                     max_rounds: int | None = None) -> pd.DataFrame:
        """The verdicts of the claims this artifact checks (one row per claim, the fields
        of ``flcore claims --json``), kept for :meth:`show_claims`.

        With ``ensure_spread`` the reference runs that measure the seed-to-seed spread are
        trained first when missing (a few runs; the tie rule needs them), capped at
        ``max_rounds`` like the page's own runs (a capped run decides no verdict).
        """

        if ensure_spread:
            ensure_runs(spread_specs(scale), store=store, device=device, workers=workers, log=None,
                        max_rounds=max_rounds)
        self.scale = scale
        self.claim_results = evaluate_claims(scale, store, seeds, artifact=self.artifact_id)
        return pd.DataFrame(self.claim_results, columns=["id", "paper", "text", "artifacts", "verdict", "published",
                                                          "ours", "metric", "direction", "source", "scale", "sigma",
                                                          "reason"])

    def show_claims(self) -> None:
        """The claims' verdicts as a table (call :meth:`check_claims` first); a result or
        analysis page ends with it."""
        from IPython.display import Markdown

        _display(Markdown(claims_markdown(self.claim_results, self.scale)))

def verdict_counts(verdicts: pd.DataFrame, what: str = "table", at: str = "at this scale") -> str:
    """``"of the 4 claims this table checks, 2 hold, 1 are ties, 0 fail and 1 are not checked at
    this scale"``: the verdicts of :meth:`Page.check_claims` counted for a page's findings
    (``at``: what follows "not checked"; ``""`` ends the sentence there)."""
    counts = verdicts["verdict"].value_counts()
    return (f"of the {len(verdicts)} claims this {what} checks, {counts.get('holds', 0)} hold, {counts.get('tie', 0)} "
            f"are ties, {counts.get('fails', 0)} fail and {counts.get('not_checked', 0)} are not checked"
            + (f" {at}" if at else ""))


#: The sentence a page's findings end with at the ``smoke`` scale.
SMOKE_NOTE = "The smoke scale trains for a handful of rounds: it proves the code path, not the science."


def ranking_findings(verdicts: pd.DataFrame, mean_tau: float, scale: str, stand_in: str) -> list[str]:
    """The "What we found" sentences of a table page that ranks the methods beside the paper
    (FedSAM Table 2, FedGF Table 1, FedGloSS Table 3): the rankings' mean Kendall's tau and
    :func:`verdict_counts`, ``stand_in`` (what differs below the ``paper`` scale) and, at
    ``smoke``, :data:`SMOKE_NOTE`."""
    lines = [f"At the **{scale}** scale the paper's and our rankings agree with a mean Kendall's \u03c4 of "
             f"{mean_tau:.2f}; {verdict_counts(verdicts)}."]
    if scale != "paper":
        lines.append(stand_in)
    if scale == "smoke":
        lines.append(SMOKE_NOTE)
    return lines


def _has_named_index(frame: pd.DataFrame) -> bool:
    return any(name is not None for name in frame.index.names)


def _gap_text(entries: list, key: str = "gap") -> str:
    parts = [("\u2013" if e is None else f"{e[key]:+.2f}") for e in entries]
    return ", ".join(parts)


def claims_markdown(results: list[dict], scale: str, link: Callable[[str], str] | None = None,
                    explain: bool = True) -> str:
    """A Markdown table of claim verdicts (rows of :func:`flcore.reproduction.claims.evaluate`);
    ``link`` turns an artifact id into the text shown for it (default: the id); ``explain``
    puts the verdict rule above the table."""
    if not results:
        return "No claim of the registry is checked by this page."
    lines = [f"Verdicts at the **{scale}** scale. A claim *holds* when every comparison it rests on goes the "
             "paper's way by more than twice the standard error of the gap (the seed-to-seed spread, measured), "
             "is a *tie* when a gap is within that, and *fails* when one goes the other way.", ""] if explain else []
    lines += ["| claim | published gap | our gap | verdict | checked by |", "|---|---|---|---|---|"]
    for result in results:
        checked_by = ", ".join((link or str)(a) for a in result["artifacts"])
        verdict = VERDICT_TEXT[result["verdict"]]
        if result["verdict"] == "not_checked" and is_capped_reason(result.get("reason")):
            verdict = f"not checked: {result['reason']}"  # a capped preview's runs
        elif result["verdict"] == "not_checked" and result.get("reason"):
            verdict += f" ({result['reason']})"
        lines.append(f"| {result['text']} | {_gap_text(result['published'])} | {_gap_text(result['ours'])} "
                     f"| **{verdict}** | {checked_by} |")
    return "\n".join(lines)



def scale_banner(scale: str, seeds: Sequence[int], built: str | None = None, cls: str = "result",
                 max_rounds: int | None = None) -> str:
    """The first lines of an artifact page: the scale and data set it was built at
    (``cls``: the artifact's class; ``config``, ``heavy`` and ``schematic`` pages train nothing
    and say so); for a page built from runs capped at ``max_rounds``, that it is a preview."""
    text = _scale_text(scale, seeds, built, cls)
    if max_rounds is not None and cls not in ("config", "heavy", "schematic"):
        text = capped_banner(max_rounds) + " " + text
    return text


def capped_banner(max_rounds: int) -> str:
    """The sentence a page built from capped runs starts with."""
    return (f"**A capped preview: every run stopped at round {max_rounds:,}** (or its last round, if sooner), "
            "not at the end of its protocol; the numbers below are the runs' at that round, and the claims are "
            "not checked (\"not checked: N of M rounds\"). Rerun without the cap (`--max-rounds`, notebook "
            "parameter `max_rounds = None`) to continue every run from its checkpoint to the full protocol.")


def _scale_text(scale: str, seeds: Sequence[int], built: str | None, cls: str) -> str:

    when = f" on {built}" if built else ""
    seeds_text = ", ".join(str(s) for s in seeds)
    if cls == "config":
        return (f"**Built at the `{scale}` scale**{when}. This page trains nothing: it renders the paper's "
                "settings from flcore's own configuration (the `paper`-scale presets, the method registry, the "
                "partitions flcore generates for the paper's data sets) beside the published values, so it is the "
                "same at every scale.")
    if cls == "heavy":
        return (f"**Built at the `{scale}` scale**{when}. This page trains nothing: it shows the published numbers "
                "and what the experiment needs that cannot be had offline or through torchvision, so flcore does not "
                "regenerate it (the Coverage page lists it as not regenerable).")
    if cls == "schematic":
        return (f"**Built at the `{scale}` scale**{when}. This page trains nothing: the paper's figure is an "
                "illustration without data, described here in words and linked to the methods it depicts.")
    if scale == "paper":
        return (f"**Built at the `paper` scale**{when}, seeds {seeds_text}: the paper's data sets (CIFAR-10 / "
                "CIFAR-100 through torchvision) and its protocol. Published and our numbers are compared cell by "
                "cell (\u0394 = ours \u2212 paper).")
    dataset = DEFAULT_DATASET[scale]
    d = scale_defaults(scale, dataset)
    return (f"**Built at the `{scale}` scale**{when}, seeds {seeds_text}: **MNIST-1D** ({d['num_samples']:,} "
            f"samples generated locally) stands in for the paper's CIFAR-10 / CIFAR-100; {d['clients']} clients, "
            f"{d['per_round']} per round, {d['rounds']} rounds. At this scale our *orderings* of the methods are "
            "compared with the paper's, not the numbers. Rerun at the paper's scale: `--scale paper` on a GPU.")
