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

from flcore.config import DATASET_LABELS
from flcore.devices import resolve_device
from flcore.report.escaping import link_text, page_text
from flcore.report.numbers import csv_frame, display_frame
from flcore.report.run_settings import (
    models_text,
    names,
    protocol_text,
    run_settings,
    seeds_text,
    span,
)
from flcore.report.run_status import show_run_status
from flcore.report.settling_figure import settling_svg
from flcore.report.style import set_style
from flcore.reproduction.artifacts import get_artifact, settings_table
from flcore.reproduction.claims import (
    CAPPED_PREFIX,
    CAPPED_REASON,
    DECIDED,
    RULE_TEXT,
    VERDICT_TEXT,
    VERDICTS,
    claim_specs,
    evaluate_claims,
    is_capped_reason,
    spread_specs,
    verdict_totals,
    with_claim_seeds,
)
from flcore.reproduction.inventory import artifact_class
from flcore.reproduction.paper_registry import paper_of
from flcore.reproduction.runner import cap_rounds, ensure_runs
from flcore.reproduction.stand_in import StandIn, stand_in_for


def _display(obj, metadata: dict | None = None) -> None:
    from IPython.display import display

    display(obj, metadata=metadata)


def csv_link(frame: pd.DataFrame, filename: str, label: str) -> str:
    """An HTML link that downloads ``frame`` as ``filename`` (CSV, UTF-8), its numbers
    rounded as the page prints them (:func:`flcore.report.numbers.csv_frame`)."""
    data = base64.b64encode(csv_frame(frame).to_csv(index=False).encode("utf-8")).decode("ascii")
    return (f'<a download="{html.escape(filename)}" href="data:text/csv;charset=utf-8;base64,{data}">'
            f"{html.escape(label)}</a>")


def figure_html(fig, alt: str, caption: str) -> str:
    """A PNG of the matplotlib figure ``fig`` with its alt text and caption."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (f'<figure class="flcore-figure"><img src="data:image/png;base64,{data}" alt="{html.escape(alt)}" '
            f'style="max-width:100%"/><figcaption>{caption}</figcaption></figure>')


#: The output metadata key of the capped-preview banner a :class:`Page` shows; the book
#: build (``flcore reproduce``) replaces it by its own, placed below the page's title.
CAPPED_BANNER_KEY = "flcore-capped-banner"

#: Artifact classes whose pages train nothing, so a round cap changes nothing on them.
UNTRAINED_CLASSES = ("config", "heavy", "schematic")

#: The notebook parameters a :class:`Page` takes, by the names of the cell tagged
#: ``parameters`` (``flcore reproduce`` injects them by these names; a page that reads no
#: data declares only some: :meth:`Page.from_parameters` takes those it finds).
PARAMETERS = ("scale", "device", "seeds", "store", "workers", "data_root", "download", "max_rounds")

#: Every artifact notebook's first code cell, ``{requirement}`` being
#: :func:`flcore.report.repository.install_requirement` of the repository URL: it installs
#: flcore when it is missing (Colab), so it cannot import flcore itself.
INSTALL_CELL = """import importlib.util
import subprocess
import sys

if importlib.util.find_spec("flcore") is None:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "{requirement}"])"""

#: The statement that makes every artifact notebook's page from its parameters (the first
#: statement after the imports of the cell that follows the parameters cell).
PAGE_STATEMENT = 'page = Page.from_parameters("{artifact_id}", globals())'


class Page:
    """One artifact page: it owns the notebook's parameters (scale, seeds, store, device,
    workers, data folder, round cap), trains the page's runs, numbers its tables and figures
    and ends with the verdicts of the paper's claims (see module docstring).

    A notebook is a header of prose plus a few calls on it::

        page = Page.from_parameters("fedsam-fig-3", globals())  # PAGE_STATEMENT
        runs = page.train()               # the artifact's runs, trained when missing, and their status
        ...                               # page.table(...), page.figure(...)
        verdicts = page.check_claims()    # the claims this artifact checks
        page.findings(lines)              # "What we found" (plus the smoke-scale note)
        page.show_claims()

    ``max_rounds`` is the notebook's parameter of that name: when given, every run the
    notebook trains from here on stops at that round (a capped preview that a later run with
    a higher cap, or none, continues from its checkpoint:
    :func:`flcore.reproduction.runner.cap_rounds`), and a page that trains says so
    (:func:`capped_banner`).
    """

    def __init__(self, artifact_id: str, max_rounds: int | None = None, *, scale: str = "smoke",
                 seeds: Sequence[int] = (0,), store=None, device: str = "auto", workers: int | None = None,
                 data_root: str | None = None, download: bool | None = None):
        self.artifact_id = artifact_id
        self.tables = 0
        self.figures = 0
        self.max_rounds = max_rounds
        self.scale = scale
        self.seeds = list(seeds)
        self.store = store
        self.device = device
        self.workers = workers
        self.data_root = data_root
        self.download = download
        cap_rounds(max_rounds)
        if max_rounds is not None and artifact_class(artifact_id) not in UNTRAINED_CLASSES:
            from IPython.display import Markdown

            _display(Markdown(capped_banner(max_rounds)), metadata={CAPPED_BANNER_KEY: True})

    @classmethod
    def from_parameters(cls, artifact_id: str, namespace: dict) -> Page:
        """The page of ``artifact_id`` made from the notebook's parameters: the names of
        :data:`PARAMETERS` that ``namespace`` (the notebook's ``globals()``) holds, the others
        left at their defaults. It applies the book's style first
        (:func:`flcore.report.style.set_style`), so every page draws and prints alike."""
        set_style()
        return cls(artifact_id, **{name: namespace[name] for name in PARAMETERS if name in namespace})

    @property
    def artifact(self):
        """The page's artifact (:func:`flcore.reproduction.artifacts.get_artifact`)."""
        return get_artifact(self.artifact_id)

    @property
    def stand_in(self) -> StandIn:
        """What the page's runs train for the paper's data sets at its scale: their names on
        the page, which labels are distinct runs (:mod:`flcore.reproduction.stand_in`)."""
        return stand_in_for(self.scale, paper_of(self.artifact_id).id)

    def specs(self) -> list:
        """The artifact's runs at the page's scale and seeds, plus the seeds its claims'
        verdicts read where they plan more (:func:`flcore.reproduction.claims.with_claim_seeds`)."""
        return with_claim_seeds(get_artifact(self.artifact_id).runs(self.scale, self.seeds), self.scale,
                                self.artifact_id)

    def runs(self, specs: Sequence | None = None) -> pd.DataFrame:
        """The runs of ``specs`` (default: :meth:`specs`, the artifact's own and the seeds its
        claims read), trained in the page's store on its device when missing
        (:func:`flcore.reproduction.runner.ensure_runs`): one row per run."""
        if specs is None:
            specs = self.specs()
        return ensure_runs(specs, store=self.store, device=self.device, workers=self.workers,
                           data_root=self.data_root, download=self.download)

    def train(self, what: str | None = None) -> pd.DataFrame:
        """The page's runs (:meth:`runs` of :meth:`specs`, trained when missing) after the
        table of their status (:meth:`run_status`; ``what`` the page makes); returns the runs."""
        runs = self.runs()
        self.run_status(runs, what)
        return runs

    def runs_table(self, runs: pd.DataFrame, columns: Sequence[str], caption: str,
                   distinct: Sequence[str] | None = None) -> pd.DataFrame:
        """Show the ``columns`` of ``runs`` (the first row of each ``distinct`` group when given)
        under ``caption``, in which ``{finished}`` and ``{total}`` become the number of finished
        runs and of all ``runs``; returns the table shown."""
        finished = int((runs["status"] == "finished").sum())
        shown = (runs.drop_duplicates(list(distinct)) if distinct else runs)[list(columns)]
        self.table(shown, caption.replace("{finished}", str(finished)).replace("{total}", str(len(runs))))
        return shown

    @property
    def analysis_device(self) -> str:
        """The device the page's analyses of trained models run on: its ``device`` parameter
        resolved (:func:`flcore.devices.resolve_device`; ``auto``: CUDA when there is one)."""
        return str(resolve_device(self.device))

    def note(self, text: str) -> None:
        """Show ``text`` (Markdown) on the page, as it is."""
        from IPython.display import Markdown

        _display(Markdown(text))

    def run_status(self, runs: pd.DataFrame, what: str | None = None) -> pd.DataFrame:
        """The table of ``runs``' distinct runs per status under its caption
        (:func:`flcore.report.run_status.show_run_status`; ``what`` the page makes, default
        the artifact's kind); returns the table."""
        return show_run_status(self, runs, self.scale, self.artifact.kind if what is None else what)

    def settings(self, whose: str, by: Sequence[str] = ("algorithm",),
                 grid: Sequence[str] = ("alpha", "per_round", "seed"), specs: Sequence | None = None) -> pd.DataFrame:
        """The table of what differs between the runs of ``specs`` (default: :meth:`specs`), one
        row per ``by`` group (:func:`flcore.reproduction.artifacts.settings_table`), captioned
        "What differs between ``whose`` runs; every run shares ..." with the settings common to
        all; returns it."""
        settings = settings_table(self.specs() if specs is None else specs, by=by, grid=grid)
        common = ", ".join(f"`{k}` = {v}" for k, v in settings.attrs["common"].items())
        self.table(settings, f"What differs between {whose} runs; every run shares {common}.")
        return settings

    def findings(self, lines: Sequence[str], sep: str = " ", empty: str = "") -> None:
        """Show the "What we found" sentences ``lines`` joined by ``sep``, ending at the
        ``smoke`` scale with :data:`SMOKE_NOTE` (the smoke scale proves the code path only);
        ``empty`` when there is nothing to say."""
        from IPython.display import Markdown

        shown = list(lines) + ([SMOKE_NOTE] if self.scale == "smoke" else [])
        _display(Markdown(sep.join(shown) or empty))

    def table(self, frame: pd.DataFrame, caption: str, downloads: dict[str, pd.DataFrame] | None = None,
              show: pd.DataFrame | None = None) -> None:
        """Show ``show`` (default ``frame``) under "Table N. caption", with CSV links for
        ``downloads`` (name -> frame; default ``{"table": frame}``).  Numbers and missing
        values print by one rule (:mod:`flcore.report.numbers`), in the table and its CSVs."""
        from IPython.display import HTML, Markdown

        self.tables += 1
        _display(Markdown(f"**Table {self.tables}.** {caption}"))
        _display(display_frame(frame if show is None else show))
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

    def check_claims(self, scale: str | None = None, store=None, seeds: Sequence[int] | None = None,
                     ensure_spread: bool = True, device: str | None = None, workers: int | None = None,
                     max_rounds: int | None = None) -> pd.DataFrame:
        """The verdicts of the claims this artifact checks (one row per claim, the fields
        of ``flcore claims --json``), kept for :meth:`show_claims`; the frame returned holds
        the paper's own claims (a later claim against one is shown, not counted in the page's
        findings).  ``scale``, ``store``, ``seeds``, ``device`` and ``workers`` default to the page's.

        With ``ensure_spread`` the runs the verdicts rest on are trained first when missing:
        the claims' extra seeds of this artifact's cells and the reference pairs whose
        spread decides comparisons with too few seeds, capped at ``max_rounds`` like the
        page's own runs (a capped run decides no verdict).
        """
        scale = self.scale if scale is None else scale
        store = self.store if store is None else store
        seeds = self.seeds if seeds is None else seeds
        device = self.device if device is None else device
        workers = self.workers if workers is None else workers
        if ensure_spread:
            needed = claim_specs(scale, [self.artifact_id]) + spread_specs(scale)
            ensure_runs(needed, store=store, device=device, workers=workers, log=None, max_rounds=max_rounds)
        self.scale = scale
        self.claim_results = evaluate_claims(scale, store, seeds, artifact=self.artifact_id)
        own = [r for r in self.claim_results if not r.get("later_source")]  # later claims: shown, not counted
        return pd.DataFrame(own, columns=["id", "paper", "text", "artifacts", "verdict", "counts",
                                                          "summary", "comparisons", "metric", "units", "direction",
                                                          "source", "scale", "spread", "reason"])

    def show_claims(self) -> None:
        """The claims' verdicts as a table (checked by :meth:`check_claims` with its defaults
        when the page has not checked them yet); a result or analysis page ends with it."""
        from IPython.display import Markdown

        if not hasattr(self, "claim_results"):
            self.check_claims()

        _display(Markdown(claims_markdown(self.claim_results, self.scale)))


def totals_text(totals: dict[str, int]) -> str:
    """``"2 hold, 1 inconclusive, 1 not testable here"``: claims per verdict (zeros left out)."""
    words = {"holds": "hold", "fails": "fail"}
    parts = [f"{totals[v]} {words.get(v, VERDICT_TEXT[v])}" for v in VERDICTS if totals.get(v)]
    return ", ".join(parts) if parts else "none"


def verdict_counts(verdicts: pd.DataFrame, what: str = "table", at: str = "at this scale") -> str:
    """``"of the 4 claims this table checks, 2 are decided at this scale (1 hold, 1 fail); 1
    inconclusive, 1 not testable here"``: the verdicts of :meth:`Page.check_claims` counted
    for a page's findings (``at``: what follows "decided"; ``""`` leaves it out)."""
    totals = verdict_totals(verdicts.to_dict("records"))
    decided = {v: totals[v] for v in DECIDED if totals[v]}
    rest = {v: totals[v] for v in VERDICTS if v not in DECIDED and totals[v]}
    text = (f"of the {len(verdicts)} claim{'s' if len(verdicts) != 1 else ''} this {what} checks, "
            f"{sum(decided.values())} {'is' if sum(decided.values()) == 1 else 'are'} decided"
            + (f" {at}" if at else ""))
    if decided:
        text += f" ({totals_text(decided)})"
    if rest:
        text += f"; {totals_text(rest)}"
    return text


#: The sentence a page's findings end with at the ``smoke`` scale.
SMOKE_NOTE = "The smoke scale trains for a handful of rounds: it proves the code path, not the science."


def ranking_findings(verdicts: pd.DataFrame, mean_tau: float, scale: str, stand_in: str) -> list[str]:
    """The "What we found" sentences of a table page that ranks the methods beside the paper
    (FedSAM Table 2, FedGF Table 1, FedGloSS Table 3): the rankings' mean Kendall's tau and
    :func:`verdict_counts`, ``stand_in`` (what differs below the ``paper`` scale) and, at
    ``smoke``, :data:`SMOKE_NOTE`."""
    agreement = (f"the paper's and our rankings agree with a mean Kendall's \u03c4 of {mean_tau:.2f}"
                 if mean_tau == mean_tau else
                 "the paper's and our rankings cannot be compared (Kendall's \u03c4 is undefined: no block ranks two "
                 "methods without ties)")
    lines = [f"At the **{scale}** scale {agreement}; {verdict_counts(verdicts)}."]
    if scale != "paper":
        lines.append(stand_in)
    if scale == "smoke":
        lines.append(SMOKE_NOTE)
    return lines


def _has_named_index(frame: pd.DataFrame) -> bool:
    return any(name is not None for name in frame.index.names)


def _number(value, digits: int = 2) -> str:
    return "\u2013" if value is None else f"{value:+.{digits}f}"


def _comparison_cell(comparison: dict, key: str) -> str:
    """One distinct comparison's ``key`` (``gap``, ``threshold``, ``mde``) as printed."""
    value = comparison.get(key)
    if value is None:
        return "\u2013"
    return f"{value:+.2f}" if key == "gap" else f"{value:.2f}"


def _label(key: str, value) -> str:
    """A cell label as the tables print it: ``"alpha 0"``, ``"5 clients/round"``, ``"CIFAR-10"``."""
    if key in ("dataset", "algorithm", "model", "block"):
        return str(value)
    if key == "clients_per_round":
        return f"{value:g} clients/round" if isinstance(value, (int, float)) else f"{value} clients/round"
    return f"{key} {value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else f"{key} {value}"


def _dataset_id(label) -> str:
    """flcore's name of the data set a cell label names: ``"CIFAR-100"`` -> ``"cifar100"``,
    ``"FMNIST"`` or ``"Fashion-MNIST"`` -> ``"fmnist"``."""
    return str(label).lower().replace("-", "").replace("fashionmnist", "fmnist")


def comparison_cells(comparison: dict) -> tuple[str, str, str]:
    """``(setting, better, worse)`` of a comparison in words: the labels both cells share
    (the setting), then what differs (``"FedGF"`` / ``"FedASAM"``; ``"FedSAM, alpha 100"``).
    Where its runs train another data set than the label names (``runs_on``: the stand-in),
    the setting names both: ``"MNIST-1D, alpha 0.5 (for CIFAR-100, alpha 0.5)"``."""
    better, worse = comparison["cells"]["better"], comparison["cells"]["worse"]
    shared = {k: v for k, v in better.items() if k in worse and worse[k] == v}
    setting = ", ".join(_label(k, v) for k, v in shared.items())
    trained = (comparison.get("runs_on") or {}).get("dataset")
    ours = DATASET_LABELS.get(trained)
    if ours and "dataset" in shared and _dataset_id(shared["dataset"]) != trained:  # a stand-in, and for what
        setting = ", ".join([ours, *(_label(k, v) for k, v in shared.items() if k != "dataset")]) + f" (for {setting})"

    def own(cell):
        return ", ".join(_label(k, v) for k, v in cell.items() if k not in shared) or "(same cell)"

    return setting, own(better), own(worse)


def _sd_text(comparison: dict) -> str:
    if comparison.get("sd") is None:
        return "\u2013"
    source = {"paired seeds": "paired", "reference pairs": "ref. pairs"}.get(comparison.get("sd_from"),
                                                                           comparison.get("sd_from") or "")
    return f"{comparison['sd']:.2f} ({source})"


def _absent_text(comparison: dict) -> str:
    """Why a comparison is *absent*: its 90 % interval inside its margin, and the margin's reason."""
    low, high = comparison["interval_90"]
    margin = comparison["margin"]
    return (f"absent: the 90 % interval [{low:+.2f}, {high:+.2f}] lies inside the margins [{-margin:+.2f}, "
            f"{margin:+.2f}] ({comparison['margin_reason']})")


def left_out_text(comparison: dict) -> str:
    """Which seeds a comparison's gap leaves out of the seeds its cells show, and why (a seed's
    flag: diverged, collapsed, censored; or no run of the other cell to pair it with)."""
    left = comparison.get("left_out") or {}
    if not any(left.get(side) for side in ("better", "worse")):
        return ""
    _, better, worse = comparison_cells(comparison)
    parts = []
    for side, name in (("better", better), ("worse", worse)):
        flags = {row["seed"]: row["flag"] for row in (comparison.get("per_seed") or {}).get(side) or []}
        for seed in left.get(side) or []:
            parts.append(f"seed {seed} of {name} ({flags.get(seed) or 'no run of the other cell to pair'})")
    used = ", ".join(str(s) for s in comparison.get("seeds") or []) or "none"
    return f"the gap pairs seeds {used}; left out: {'; '.join(parts)}"


def _comparison_verdict(comparison: dict) -> str:
    if comparison.get("counted_in"):
        return f"counted in {comparison['counted_in']}"
    if comparison["verdict"] == "not_run" and is_capped_reason(comparison.get("reason")):
        return "not checked"
    size = comparison.get("size")
    words = comparison.get("verdict_text") or VERDICT_TEXT[comparison["verdict"]]
    if size and size.get("ratio") is None:
        return f"{words}; {size['note']}"
    if size:  # our gap over the published one, beside the verdict
        low, high = size["interval"]
        gap = {"relative": "relative gap", "run length": "gap as a share of its run"}.get(size.get("basis"), "gap")
        return f"{words}; {size['ratio']:.2f} x paper's {gap} [{low:.2f}, {high:.2f}]"
    return words


def _tests_text(comparisons: Sequence[dict]) -> str:
    """Each tested comparison's p (its test), Holm's p within the claim, the book's q and the
    round its verdict settled at: ``"1. t p 0.009, Holm 0.018, q 0.027, settled at round 120 of 300"``."""
    parts = []
    for number, comparison in enumerate(comparisons, 1):
        if comparison.get("p") is None or comparison.get("counted_in"):
            continue
        text = f"{number}. {'sign test' if comparison.get('test') == 'sign' else 't'} p {comparison['p']:.3g}"
        if comparison.get("p_holm") is not None:
            text += f", Holm {comparison['p_holm']:.3g}"
        if comparison.get("q") is not None:
            text += f", q {comparison['q']:.3g}"
        if comparison.get("settles_at") is not None:
            text += f", settled at round {comparison['settles_at']} of {comparison['rounds']}"
        plateau = comparison.get("plateau") or {}
        if all((plateau.get(side) or {}).get("change") is not None for side in ("better", "worse")):
            text += (f", last fifth moved {plateau['better']['change']:+.2f} / {plateau['worse']['change']:+.2f} "
                     f"points (plateau below {plateau['better']['tolerance']:g})")
        parts.append(text)
    return "; ".join(parts)


def _seed_values(rows: Sequence[dict] | None) -> str:
    """``"0: 71.20, 1: diverged, 2: 10.10 (collapsed)"``: a cell's per-seed values and flags."""
    parts = []
    for row in rows or []:
        value = "diverged" if row["value"] is None else f"{row['value']:.2f}"
        flag = f" ({row['flag']})" if row["flag"] and row["flag"] != "diverged" else ""
        parts.append(f"{row['seed']}: {value}{flag}")
    return ", ".join(parts) or "\u2013"


def _per_seed_lines(comparisons: Sequence[dict]) -> list[str]:
    """A table of every comparison's per-seed values (``per_seed``), one row per comparison
    run, with the number of seeds each cell has ("1 seed"); none when no comparison ran."""
    rows = []
    for number, comparison in enumerate(comparisons, 1):
        per_seed = comparison.get("per_seed") or {}
        if comparison.get("counted_in") or not (per_seed.get("better") or per_seed.get("worse")):
            continue
        _, better, worse = comparison_cells(comparison)
        counts = [len(per_seed.get(side) or []) for side in ("better", "worse")]
        rows.append(f"| {number}. {better} | {_seed_values(per_seed.get('better'))} | {worse} "
                    f"| {_seed_values(per_seed.get('worse'))} | {' / '.join(_seeds_word(n) for n in counts)} |")
    if not rows:
        return []
    return ["| better cell | its seeds | worse cell | its seeds | seeds |", "|---|---|---|---|---|", *rows]


def _seeds_word(n: int) -> str:
    return f"{n} seed{'s' if n != 1 else ''}"


def claims_markdown(results: list[dict], scale: str, link: Callable[[str], str] | None = None,
                   explain: bool = True, prices: dict[str, str] | None = None, details: bool = False) -> str:
    """The claims' verdicts (rows of :func:`flcore.reproduction.claims.evaluate`), one block
    per claim: the claim, its verdict with its counts, the pages that check it and its
    units, then one row per distinct comparison -- its two cells and their shared setting,
    the seeds shared (n), the published and our gap, the sd with its source (paired seeds or
    the reference pairs), the threshold (95 %) and the MDE (80 %), and its verdict; six
    columns, so that the verdict is in view at 1280 px -- and below the table what a row
    needs said (diverged runs left out, why one is not run); ``link`` turns an artifact id
    into the text shown for it (default: the id); ``explain`` puts the decision rule above;
    ``prices``: claim id -> its price at the paper scale in words, a line under its verdict
    (not a column: the verdict column stays in view);
    ``details`` adds each comparison's p, Holm's p, q and settling round, and the claim's
    settling figure (:func:`~flcore.report.settling_figure.settling_svg`)."""
    if not results:
        return "No claim of the registry is checked by this page."
    lines = [f"Verdicts at the **{scale}** scale. {RULE_TEXT}", ""] if explain else []
    for result in results:
        checked_by = ", ".join((link or str)(a) for a in result["artifacts"])
        if result["verdict"] == "not_run" and is_capped_reason(result.get("reason")):
            verdict = f"**not checked: {_capped_text(result['reason'])}** ({result['summary']})"  # a capped preview
            others = [part for part in result["reason"].split("; ") if not CAPPED_REASON.fullmatch(part)]
            if others:
                verdict += f"; {'; '.join(others)}"
        else:
            verdict = f"**{result.get('verdict_text') or VERDICT_TEXT[result['verdict']]}** ({result['summary']})"
            corrected = result.get("verdict_corrected")
            if corrected and corrected != result["verdict"]:
                verdict += f"; {VERDICT_TEXT[corrected]} after the book's correction (q = {result['q']:.3g})"
            if result.get("reason"):
                verdict += f"; {result['reason']}"
        units = result.get("units") or ""
        read = sorted({seed for comparison in result["comparisons"] for seed in comparison.get("seeds") or []})
        seeds = f" Its comparisons read seed{'s' if len(read) > 1 else ''} {', '.join(map(str, read))}." if read else ""
        anchor = f'<a id="claim-{result["id"]}"></a>' if result.get("id") else ""
        lines += [f'{anchor}**{page_text(result["text"])}**: {verdict}. Checked by {checked_by}'
                  + (f"; in {units}." if units else ".")
                  + seeds,
                  *([_later_source_text(result)] if result.get("later_source") else []),
                  ""]
        if prices and result["id"] in prices:
            lines += [f"*To decide it at the paper scale:* {prices[result['id']]}.", ""]
        lines += ["| comparison | n | gap: paper / ours | sd (from) | threshold / MDE | verdict |",
                  "|---|---|---|---|---|---|"]
        notes: dict[str, list[str]] = {}  # what is said -> the rows it is said of
        for number, comparison in enumerate(result["comparisons"], 1):
            setting, better, worse = comparison_cells(comparison)
            seeds = comparison.get("seeds") or []
            cells = f"{number}. {better} beats {worse}" + (f" ({setting})" if setting else "")
            lines.append(f"| {cells} | {len(seeds) or chr(0x2013)} "
                         f"| {_number(comparison['published']['gap'])} / {_comparison_cell(comparison, 'gap')} "
                         f"| {_sd_text(comparison)} | {_comparison_cell(comparison, 'threshold')} / "
                         f"{_comparison_cell(comparison, 'mde')} | {_comparison_verdict(comparison)} |")
            said = [comparison.get("note")] + ([comparison.get("reason")] if comparison.get("reason") else [])
            if comparison["verdict"] == "absent":
                said.append(_absent_text(comparison))
            said.append(left_out_text(comparison))
            said = [text for text in said if text and not CAPPED_REASON.fullmatch(text)]
            if said:
                notes.setdefault("; ".join(dict.fromkeys(said)), []).append(str(number))
        lines += [""] + [f"- {', '.join(numbers)}: {text}." for text, numbers in notes.items()]
        lines += [""] if notes else []
        tests = _tests_text(result["comparisons"]) if details else ""
        if tests:
            lines += [f"Tests: {tests}.", ""]
        seeds_table = _per_seed_lines(result["comparisons"]) if details else []
        if seeds_table:
            lines += ["<details><summary>Every seed</summary>", "", *seeds_table, "", "</details>", ""]
        figure = settling_svg(result["comparisons"], f"{result['id']}: gap and 95 % interval by round") \
            if details else ""
        if figure:
            lines += ["The gap (line) and its 95 % interval (band) at each evaluated round, as if the runs had "
                      "stopped there; dotted: the round the verdict settles at.", "", figure, ""]
    return "\n".join(lines).rstrip() + "\n"


def _later_source_text(result: dict) -> str:
    """Who makes a later claim, in its words, and what it contests."""
    source = result["later_source"]
    cited = link_text(source["citation"], source.get("url"))
    against = f" Against {page_text(result['against'])}." if result.get("against") else ""
    return f"A later claim, by {cited}: “{page_text(source['quote'], limit=2000)}”{against}"


def later_claims_markdown(results: list[dict], scale: str, link: Callable[[str], str] | None = None) -> str:
    """The later claims among ``results`` (``later_source`` set) beside the claims they
    contest: a table of each later claim, who makes it, its verdict, the paper's claim it
    contests and that claim's verdict (both decided by the same rule on the same runs), then
    each later claim's comparisons (:func:`claims_markdown`); empty when there is none."""
    later = [r for r in results if r.get("later_source")]
    if not later:
        return ""
    by_id = {r["id"]: r for r in results}
    lines = ["| later claim | by | its verdict | the paper's claim it contests | that claim's verdict |",
             "|---|---|---|---|---|"]
    for result in later:
        contested = by_id.get(result.get("against") or "")
        theirs = ((f"{page_text(contested['text'])} ({contested['id']})", f"**{VERDICT_TEXT[contested['verdict']]}**")
                  if contested else ("none in the registry", "\u2013"))
        lines.append(f"| {page_text(result['text'])} | {page_text(result['later_source']['citation'])} "
                     f"| **{VERDICT_TEXT[result['verdict']]}** | {theirs[0]} | {theirs[1]} |")
    return "\n".join(lines) + "\n\n" + claims_markdown(later, scale, link, explain=False)


#: A page's verdict, from the verdicts of the claims its runs check (:func:`page_verdict`).
PAGE_VERDICTS = ("holds", "fails", "absent", "inconclusive", "not testable")


def page_verdict(results: Sequence[dict]) -> str:
    """One verdict for a page from its claims' (rows of
    :func:`flcore.reproduction.claims.evaluate`): *fails* when one fails (or is mixed), else
    *absent* when one is (an effect it claims is not there), else *inconclusive* when one is,
    else *holds* when one holds, else *not testable* (no claim, or none decided here: about
    another data set or model, a stand-in cell that did not learn, not run, by construction,
    counted in another claim, a capped preview).  A later claim against the
    paper (``later_source``) is shown on the page, not counted in its verdict."""
    verdicts = {r["verdict"] for r in results if not r.get("later_source")}
    if verdicts & {"fails", "mixed"}:
        return "fails"
    if "absent" in verdicts:
        return "absent"
    if "inconclusive" in verdicts:
        return "inconclusive"
    return "holds" if "holds" in verdicts else "not testable"


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "\u2026"


def verdict_box(results: Sequence[dict], scale: str, what: str = "page") -> str:
    """The box an artifact page opens with (MyST admonition, before its tables): the page's
    claims counted by verdict in its title ("no claim" when it checks none), then the claim
    behind the worst verdict (:func:`page_verdict`) or why none is decided, and the later
    claims against the paper that the page shows, counted apart -- so that the box, the
    page's claims section and Coverage count the same claims."""
    own = [r for r in results if not r.get("later_source")]
    later = [r for r in results if r.get("later_source")]
    verdict = page_verdict(own)
    n = len(own)
    title = totals_text(verdict_totals(list(own))) if n else "no claim"
    if not n:
        reason = ("no headline claim of the paper rests on this page's runs: it shows the paper's numbers and "
                  "ours, and decides nothing")
    elif all(r["verdict"] == "not_run" and is_capped_reason(r.get("reason")) for r in own):
        reason = f"a capped preview: its {n} claim{'s are' if n != 1 else ' is'} not checked"
    else:
        counts = totals_text(verdict_totals(list(own)))
        reason = f"of the {n} claim{'s' if n != 1 else ''} this {what} checks: {counts}"
        named = [r for r in own if r["verdict"] in (("fails", "mixed") if verdict == "fails"
                                                    else ("absent",) if verdict == "absent"
                                                    else ("inconclusive",) if verdict == "inconclusive"
                                                    else ("holds",))]
        if named and verdict != "not testable":
            which = "the worst verdict" if len(own) > 1 else "the verdict"
            quoted = page_text(_short(named[0]["text"]))
            reason += f" ({which}: \u201c{quoted}\u201d {VERDICT_TEXT[named[0]['verdict']]})"
        elif verdict == "not testable":
            reasons = [r["reason"] for r in own if r.get("reason")]
            if reasons:
                reason += f"; {_short(reasons[0], 160)}"
    if later:
        reason += (f"; and {len(later)} later claim{'s' if len(later) != 1 else ''} by other sources against the "
                   f"paper: {totals_text(verdict_totals(later))}")
    end = " The claims and their comparisons are at the end of the page." if own or later else ""
    return (f":::{{admonition}} Verdicts at the {scale} scale: {title}\n:class: flcore-verdict\n"
            f"{reason[0].upper() + reason[1:]}.{end}\n:::")


def _capped_text(reason: str) -> str:
    """``"5 of 12 rounds"`` from a capped claim's reason (several: the fewest rounds done)."""
    parts = [part.removeprefix(CAPPED_PREFIX) for part in reason.split("; ") if CAPPED_REASON.fullmatch(part)]
    return min(parts, key=lambda part: int(part.split(" ", 1)[0]))


def scale_banner(scale: str, specs: Sequence = (), built: str | None = None, cls: str = "result",
                 paper_specs: Sequence = (), max_rounds: int | None = None, claim_seeds: Sequence[int] = ()) -> str:
    """The first lines of an artifact page: the scale it was built at and what its runs are
    -- data set, model, clients, rounds and seeds read from the runs' own resolved configs
    (``specs``: the artifact's ``runs(scale, seeds)``; :mod:`flcore.report.run_settings`),
    with what they stand in for below the paper scale (``paper_specs``: its runs at the
    ``paper`` scale).  ``cls`` is the artifact's class: ``config``, ``heavy`` and
    ``schematic`` pages train nothing and say so.  For a page built from runs capped at
    ``max_rounds``, the banner first says that it is a preview (:func:`capped_banner`).
    ``claim_seeds``: the seeds the verdicts of the page's claims read; where they are not
    the ones ``specs`` show, the banner says so."""
    text = _scale_text(scale, specs, built, cls, paper_specs)
    if cls not in UNTRAINED_CLASSES:
        text += _claim_seeds_text(specs, claim_seeds)
    if max_rounds is not None and cls not in UNTRAINED_CLASSES:
        text = capped_banner(max_rounds) + " " + text
    return text


def _claim_seeds_text(specs: Sequence, claim_seeds: Sequence[int]) -> str:
    """``" The tables and figures show seed 0; the claims' verdicts read seeds 0, 1, 2 ..."``
    when the claims read seeds the page's runs (``specs``) do not show; else ``""``."""
    shown = run_settings(specs)
    if shown is None or set(claim_seeds) <= set(shown.seeds):
        return ""
    read = sorted(set(claim_seeds))
    return (f" The tables and figures show {seeds_text(shown)}; the claims' verdicts read "
            f"seed{'s' if len(read) > 1 else ''} {', '.join(map(str, read))} (each claim below says which).")


def capped_banner(max_rounds: int) -> str:
    """The sentence a page built from capped runs starts with."""
    return (f"**A capped preview: every run stopped at round {max_rounds:,}** (or its last round, if sooner), "
            "not at the end of its protocol; the numbers below are the runs' at that round, and the claims are "
            "not checked (\"not checked: N of M rounds\"). Rerun without the cap (`--max-rounds`, notebook "
            "parameter `max_rounds = None`) to continue every run from its checkpoint to the full protocol.")


def _scale_text(scale: str, specs: Sequence, built: str | None, cls: str, paper_specs: Sequence) -> str:

    when = f" on {built}" if built else ""
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
    settings = run_settings(specs)
    if settings is None:
        return (f"**Built at the `{scale}` scale**{when}. No run of this page trains at this scale; "
                "`--scale paper` runs it on a GPU.")
    runs = f"{settings.runs} run{'s' if settings.runs > 1 else ''}"
    data = names(settings.datasets, DATASET_LABELS)
    if scale == "paper":
        return (f"**Built at the `paper` scale**{when}: {runs}, {seeds_text(settings)}, on {data} with "
                f"{models_text(settings)}; {protocol_text(settings)}. Published and our numbers are compared cell by "
                "cell (\u0394 = ours \u2212 paper).")
    data = f"**{data}**" + (f" ({span(settings.num_samples)} samples generated locally)" if settings.num_samples
                            else "")
    paper = run_settings(paper_specs)
    stands_in = (f"the paper's {names(paper.datasets, DATASET_LABELS)} with {models_text(paper)}" if paper is not None
                 else "the paper's data and model")
    return (f"**Built at the `{scale}` scale**{when}: {runs}, {seeds_text(settings)}. {data} with "
            f"{models_text(settings)} stands in for {stands_in}; {protocol_text(settings)}. At this scale our "
            "*orderings* of the methods are compared with the paper's, not the numbers. Rerun at the paper's scale: "
            "`--scale paper` on a GPU.")
