"""The book's "The stand-in" page: what the smaller scales train instead of the papers'
settings, why that is a fair test of some claims and of which ones it is not.

Written by ``flcore book`` beside the Claims page (:func:`flcore.site.pages.write_site_pages`)
from the same verdicts: the stand-in's data, model and protocol; what each model offers a
claim (:mod:`flcore.models.traits`) against what the claims need; the heterogeneity gap the
stand-in reproduces (the claim ``fedsam-heterogeneity-costs-accuracy``, ours beside the
paper's); how many of the accuracy cells the claims read were at a plateau, and the
comparisons that were not settled; the protocols tried to reach a plateau
(``benchmarks/plateau_search.py``); the claims it cannot decide, with their reasons; and the
hyper-parameters tuned on its own validation data (:mod:`flcore.config.tuned`).
"""
from __future__ import annotations

from flcore.config import DATASET_FACTS, DATASET_LABELS, resolve_config
from flcore.config.tuned import records
from flcore.models import build_model, count_parameters, default_model_for
from flcore.models.traits import MODEL_TRAITS, TRAITS
from flcore.report.escaping import page_text
from flcore.report.page import comparison_cells
from flcore.reproduction.plateau import criterion_text, is_not_settled, plateau_counts
from flcore.reproduction.stand_in import stand_in_for

#: The claim whose comparisons show the heterogeneity gap the stand-in reproduces.
HETEROGENEITY_CLAIM = "fedsam-heterogeneity-costs-accuracy"
#: The papers' models, for the table of what each offers.
PAPERS_MODELS = {"cnn": "the CIFAR CNN of FedSAM, FedGloSS and FedGF", "resnet18gn": "FedLESAM's ResNet-18",
                 "fmnist_cnn": "FedIMA's Fashion-MNIST CNN", "vgg11gn": "FedIMA's VGG-11",
                 "alexnet_gn": "FedIMA's PACS AlexNet"}


def _protocol(scale: str) -> tuple[str, str]:
    """The stand-in's data set label and its protocol in words."""
    dataset = stand_in_for(scale).dataset
    cfg = resolve_config(scale=scale, dataset=dataset, method="fedavg")
    model = default_model_for(dataset)
    shape, classes, _ = DATASET_FACTS[dataset]
    params = count_parameters(build_model(model, shape, classes))
    label = DATASET_LABELS.get(dataset, dataset)
    text = (f"{label} with `{model}` ({params:,} parameters)" +
            f": {cfg.clients} clients, {cfg.per_round} per round, {cfg.rounds} rounds of {cfg.local_epochs} local "
            f"epoch{'s' if cfg.local_epochs != 1 else ''}, batch {cfg.batch_size}, client learning rate {cfg.lr:g}")
    return label, text


def _traits_table(model: str) -> list[str]:
    lines = ["| model | " + " | ".join(TRAITS) + " |", "|---|" + "---|" * len(TRAITS)]
    for name, words in [(model, "the stand-in"), *PAPERS_MODELS.items()]:
        marks = " | ".join("yes" if t in MODEL_TRAITS[name] else "no" for t in TRAITS)
        lines.append(f"| `{name}` ({words}) | {marks} |")
    return lines


def _heterogeneity(results: list[dict]) -> list[str]:
    result = next((r for r in results if r["id"] == HETEROGENEITY_CLAIM), None)
    if result is None:
        return ["The heterogeneity claim is not in this build."]
    unsettled = [c for c in result["comparisons"] if is_not_settled(c)]
    verdict = (f"reads **not settled** here: at the last round it read {unsettled[0].get('settled_verdict')}, but "
               "its cells were still climbing" if unsettled else f"reads **{result['verdict_text']}** here")
    lines = [f"The papers' first observation, *{page_text(result['text'])}*, {verdict} "
             "(gap: the better cell's accuracy minus the worse one's, points):", "",
             "| comparison | gap: paper | gap: ours |", "|---|---|---|"]
    for number, comparison in enumerate(result["comparisons"], 1):
        setting, better, worse = comparison_cells(comparison)
        ours = comparison.get("gap")
        paper = comparison["published"]["gap"]
        lines.append(f"| {number}. {better} beats {worse}" + (f" ({setting})" if setting else "")
                     + f" | {'–' if paper is None else f'{paper:+.2f}'} | {'–' if ours is None else f'{ours:+.2f}'} |")
    return lines


def _untestable(results: list[dict]) -> list[str]:
    rows = [r for r in results if r["verdict"] == "not_testable"]
    if not rows:
        return ["Every claim of the registry can be run on the stand-in at this scale."]
    lines = ["| claim | why not here |", "|---|---|"]
    for result in rows:
        reasons = "; ".join(dict.fromkeys(c["reason"] for c in result["comparisons"] if c.get("reason")))
        why = page_text(reasons or result.get("reason") or "")
        lines.append(f"| {page_text(result['text'])} (`{result['id']}`) | {why} |")
    return lines


def _not_settled(results: list[dict]) -> list[str]:
    rows = []
    for result in results:
        for number, comparison in enumerate(result["comparisons"], 1):
            if is_not_settled(comparison) and not comparison.get("counted_in"):
                setting, better, worse = comparison_cells(comparison)
                moved = " / ".join(f"{comparison['plateau'][s]['change']:+.2f}" for s in ("better", "worse"))
                rows.append(f"| `{result['id']}` {number}: {better} beats {worse}"
                            + (f" ({setting})" if setting else "")
                            + f" | {moved} | {comparison.get('settled_verdict', '')} |")
    if not rows:
        return []
    return ["", "| comparison not settled | last fifth moved: better / worse (points) | read at the last round |",
            "|---|---|---|", *rows]


def _search(rows: list[dict]) -> list[str]:
    """The protocols ``benchmarks/plateau_search.py`` tried (its latest row per candidate)."""
    latest = {row["candidate"]: row for row in rows if row.get("benchmark") == "plateau_search"}
    if not latest:
        return []
    cells = next(iter(latest.values()))["cells"]
    heads = " | ".join(f"{c['method']}, alpha {c['alpha']:g}" for c in cells)
    lines = ["", "### Is there a protocol that reaches it?", "",
             "`python benchmarks/plateau_search.py` trains FedAvg and FedSAM at the two heterogeneity extremes "
             "the claims read on three seeds under candidate protocols (each the stand-in's, a few fields changed) "
             "and applies the criterion above. Cost: client steps per run against today's protocol, the factor by "
             "which the book's training would grow; each cell: its accuracy over the last fifth of the rounds "
             "(the change over that fifth).", "",
             f"| protocol | cost | at a plateau | {heads} | commit |", "|---|---|---|" + "---|" * len(cells) + "---|"]
    for name, row in latest.items():
        values = " | ".join(f"{c['accuracy']:.1f} % ({c['change']:+.2f})" for c in row["cells"])
        lines.append(f"| {page_text(name)} | x{row['cost']:g} | {row['reached']} of {row['cells_total']} | {values} "
                     f"| {page_text(str(row.get('commit')))} |")
    within = [row for row in latest.values() if row["cost"] <= 1]
    best = max((row["reached"] for row in within), default=0)
    beyond = [row for row in latest.values() if row["cost"] > 1]
    further = "; ".join(f"{page_text(r['candidate'])} (x{r['cost']:g}) brings {r['reached']}" for r in beyond)
    lines += ["", f"Within the book's budget (cost x1 or less) at most {best} of the {len(cells)} cells reach a "
              "plateau" + (f"; {further}" if further else "")
              + ". A decaying learning rate flattens the curves by stopping the training, not by finishing it: its "
              "cells end lower. Until a protocol reaches the papers' plateau on this hardware, a comparison with a "
              "climbing cell reads *not settled* rather than a verdict on final accuracy."]
    return lines


def _paper_value(method: str, field: str, dataset: str, alpha: float):
    return getattr(resolve_config(scale="paper", dataset=dataset, method=method, alpha=alpha), field)


def _tuned(scale: str, dataset: str) -> list[str]:
    """The section on tuning: the records' choices beside the papers' CIFAR values."""
    found = records(scale, dataset)
    if not found:
        return ["## Not tuned", "",
                "No tuning record exists for this scale: each method runs with the hyper-parameters its paper sets "
                "for CIFAR, not values tuned on the stand-in's own validation data."]
    lines = ["## Tuned on its own validation data", "",
             "Where a paper tuned a hyper-parameter on its data, the stand-in runs the paper's grid on its own "
             "validation split and the verdict runs use the choice (`flcore tune --scale "
             f"{scale} --plan` prices the sweep; `tuned` in `flcore claims --json` names, for each comparison, the "
             "values its runs took and where from). The split is a fixed share of the training set, never the test "
             "set; the tuning seeds are seeds no verdict run uses."]
    for record in found:
        seeds = ", ".join(f"{int(s)}" for s in record["seeds"])
        command = str(record["command"]).replace("`", "").replace("\n", " ")
        lines += ["", f"**{page_text(record['paper'])}** (`{command}`, commit "
                      f"{page_text(str(record['commit'])[:12])}): {float(record['validation']):g} of the "
                      f"training set held out, seeds {seeds}; criterion: {page_text(record['criterion'])}.", "",
                  "| study | row (tuned at alpha) | grid | chosen | validation accuracy | grid points diverged "
                  "| the paper scale's CIFAR-10 / CIFAR-100 value |", "|---|---|---|---|---|---|---|"]
        for study in record["studies"]:
            fields = list(study["fields"])
            grid = "; ".join(f"{page_text(k)} {{{', '.join(f'{float(v):g}' for v in study['grid'][k])}}}"
                             for k in fields)
            for row in study["rows"]:
                best = max(row["points"], key=lambda p: p["mean"])
                chosen = ", ".join(f"{page_text(k)} {float(row['choice'][k]):g}" for k in fields)
                paper = ", ".join(
                    f"{page_text(k)} " + " / ".join(f"{_paper_value(study['method'], k, ds, row['alpha']):g}"
                                                    for ds in ("cifar10", "cifar100")) for k in fields)
                method = str(study["method"]).replace("`", "")
                diverged = sum(1 for p in row["points"] if p.get("diverged"))
                lines.append(f"| {page_text(study['name'])} (`{method}`) | {row['row']} ({float(row['alpha']):g}) "
                             f"| {grid} | {chosen} | {float(best['mean']):.2f} % | {diverged} of {len(row['points'])} "
                             f"| {paper} |")
    lines += ["", "A grid point whose run diverged on a tuning seed scores 0 on that seed, so it is chosen only "
              "where every point diverges."]
    return lines


def stand_in_page(results: list[dict], scale: str, search_rows: list[dict] = ()) -> str:
    """The page (module docstring); ``results``: :func:`flcore.reproduction.claims.evaluate_claims`;
    ``search_rows``: the rows of ``benchmarks/results/plateau_search.jsonl``."""
    if scale == "paper":
        return ("# The stand-in\n\nThis book was built at the `paper` scale: every run trains the paper's own data "
                "and model, and no stand-in is used.\n")
    label, protocol = _protocol(scale)
    model = default_model_for(stand_in_for(scale).dataset)
    comparisons = [c for r in results for c in r["comparisons"] if not c.get("counted_in")]
    counts = plateau_counts(comparisons)
    if counts["cells"]:
        plateau = (f"{counts['reached']} of the {counts['cells']} accuracy cells the claims read at this scale had "
                   f"reached it; {counts['not_settled']} comparison{'s' if counts['not_settled'] != 1 else ''} read "
                   "*not settled* (inconclusive, whatever the last round read).")
    else:
        plateau = "No accuracy cell at this scale has its evaluations in the store."
    lines = [
        "# The stand-in", "",
        f"Below the `paper` scale every paper's main setting -- its CIFAR data sets with its main model -- is run "
        f"on {label} instead: {protocol}. The federated protocol is the papers' (Dirichlet label skew over the "
        "clients, partial participation, the methods' own client and server updates); only the data, the model "
        "and the length of training are smaller, so that each comparison gets the seeds its spread needs on a "
        "2-core machine.", "",
        "## Why it is a fair test of some claims", "",
        f"{label} is a 10-class problem that a small convolutional network learns to well above chance and that "
        "label skew makes harder, as it makes CIFAR harder: the papers' claims about federated optimisation "
        "(heterogeneity, flatness, averaging, server optimisers) are claims about that mechanism, and the "
        "stand-in has it.", "", *_heterogeneity(results), "",
        "## What it offers, and what it cannot", "",
        "A claim declares what its runs must offer (`needs` in its paper's `claims.yaml`, with the paper's words "
        "as the reason); a claim about another data set or model than the paper's main setting (`about`) is "
        "not run on the stand-in either. The models and what they offer:", "", *_traits_table(model), "",
        "The claims this scale cannot decide, and why:", "", *_untestable(results), "",
        "## Trained to a plateau", "",
        f"{criterion_text(1.0)[0].upper()}{criterion_text(1.0)[1:]}, the stand-in's margin being 1 point. {plateau}",
        *_not_settled(results), *_search(list(search_rows)), "",
        *_tuned(scale, stand_in_for(scale).dataset), "",
        f"The verdicts themselves: [Claims](claims.md); the same as JSON: `flcore claims --scale {scale} --json`.",
    ]
    return "\n".join(lines) + "\n"
