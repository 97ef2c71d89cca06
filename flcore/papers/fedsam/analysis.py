"""The FedSAM paper's analysis artifacts: Hessian spectra, loss surfaces and training-time
records of the ``sam-main`` runs (Table 1; Figs. 1, 2, 4, 5, 7, 12-16).

Every artifact reads CIFAR-100 (``fedsam.sam_main_run`` with the ``CIFAR-100`` label) at
5 clients per round, the paper's main setting (the analysis sections do not say how
many clients per round the analysed runs used).  Two kinds of runs:

- the **final global models** of Table 2's runs (Table 1, Figs. 1, 2a/b, 5, 14, 15): the
  same runs, so these pages train nothing that Table 2 has not;
- **recorded runs** (Figs. 2c/d, 4, 7, 12, 13, 16): the same configurations trained again
  with the training-time probes ``client_lambda_max`` (the top Hessian eigenvalue of each
  of the round's client models on its own data) and ``feature_norms`` (the mean L2 norm
  of the global model's logits on each client's data), every ``PROBE_EVERY`` rounds, and
  a snapshot of the last round's global and client models (the "three local models after
  20k rounds").  A recorded run trains alone and is a new run, so below the ``paper``
  scale only :data:`RECORDED` configurations are trained: FedAvg at the three alphas of
  the CIFAR-100 protocol.  The FedASAM and FedSAM panels of Figs. 4 and 16 are drawn at
  the ``paper`` scale only, and their pages say so.

The claims' metric ``fedsam_lambda_max`` (the top Hessian eigenvalue of a run's final
global model as Table 1 measures it, :func:`flcore.reproduction.run_geometry.lambda_max_of_row`)
is registered here; its ties are decided with its own seed spread on the reference runs.
FedGF's ``lambda_max`` measures the same quantity after another protocol (an extra round of
local training, :mod:`flcore.papers.fedgf.analysis`), hence the separate name.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from flcore.config.scales import scale_defaults
from flcore.papers.fedsam import runs as fedsam
from flcore.report.figure_layout import panel_figure
from flcore.report.geometry_plots import client_heatmap, plane_panel, spectrum_curves
from flcore.report.page import verdict_counts
from flcore.report.tables import ours_values
from flcore.reproduction.artifacts import RunSpec, register_artifacts
from flcore.reproduction.claims import at_chance, register_metric
from flcore.reproduction.run_geometry import (
    client_models_plane,
    geometry_settings,
    hessian_spectrum,
    lambda_max_of_row,
    probe_history,
    settings_rows,
    sharpness_ratio,
    spectrum_of_row,
)
from flcore.reproduction.runner import run_metrics
from flcore.reproduction.stand_in import stand_in_for

if TYPE_CHECKING:
    import pandas as pd

PAPER = fedsam.PAPER
DATASET = "CIFAR-100"
#: Table 1's and Fig. 1's heterogeneity levels (alpha 0 and 1k).
EXTREMES = (0.0, 1000.0)
#: The three CIFAR-100 alphas of the analysis figures.
ALPHAS = fedsam.ALPHAS[DATASET]
#: Fig. 5 and 15's curves.
SPECTRUM_ALGORITHMS = ("FedAvg E=1", "FedAvg E=2", "FedASAM")
#: Fig. 14's three models.
PLANE_ALGORITHMS = ("FedAvg E=1", "FedSAM", "FedASAM")
#: Training-time probes of the recorded runs.
PROBES = ("client_lambda_max", "feature_norms")
#: Rounds between probes: the paper's Fig. 16 shows 6 checkpoints of 20k rounds, its Fig. 7
#: the rounds one by one; we probe 20 times at the paper scale, at the 30 evaluation rounds
#: of the small scale (300 rounds; 150 client eigenvalues on 80 samples each, a few
#: seconds), twice at smoke.
PROBE_EVERY = {"smoke": 2, "small": 10, "paper": 1000}
#: (algorithm, alpha) of every recorded run a figure asks for, and those trained below
#: the paper scale (a recorded run trains alone: the book's budget allows a few).
RECORDED_PAPER = (("FedAvg E=1", 0.0), ("FedAvg E=1", 0.5), ("FedAvg E=1", 1000.0),
                  ("FedASAM", 0.0), ("FedASAM", 1000.0), ("FedSAM", 0.5))
RECORDED = {"smoke": RECORDED_PAPER[:3], "small": RECORDED_PAPER[:3], "paper": RECORDED_PAPER}


def final_model_run(algorithm: str, alpha: float, seed: int, scale: str) -> RunSpec:
    """A Table 2 run of the CIFAR-100 protocol, 5 clients per round."""
    return fedsam.sam_main_run(DATASET, algorithm, alpha, 5, seed, scale)


def recorded_run(algorithm: str, alpha: float, seed: int, scale: str) -> RunSpec:
    """The same configuration trained with the probes and a snapshot of its last round
    (labels: ``record = "probes + last round"``)."""
    rounds = scale_defaults(scale, fedsam.dataset_for(DATASET, scale))["rounds"]
    spec = fedsam.sam_main_run(DATASET, algorithm, alpha, 5, seed, scale, probes=list(PROBES),
                               probe_every=PROBE_EVERY[scale], snapshot_rounds=[rounds])
    return RunSpec({**spec.labels, "record": "probes + last round"}, spec.config)


def recorded_at(scale: str, wanted: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """The (algorithm, alpha) of ``wanted`` that are trained at ``scale``."""
    return [pair for pair in wanted if pair in RECORDED[scale]]


def _recorded(wanted: Sequence[tuple[str, float]]):
    def runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
        return [recorded_run(algorithm, alpha, seed, scale)
                for algorithm, alpha in recorded_at(scale, wanted) for seed in seeds[:1]]
    return runs


def table1_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 1: every Table 2 algorithm at alpha 0 and 1k."""
    return [final_model_run(a.label, alpha, seed, scale)
            for alpha in EXTREMES for a in fedsam.ALGORITHMS for seed in seeds]


def fig1_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 1: FedAvg and FedASAM at alpha 0 and 1k (first seed)."""
    return [final_model_run(label, alpha, seeds[0], scale) for alpha in EXTREMES for label in ("FedAvg E=1", "FedASAM")]


def fig2_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 2: FedAvg's final global models at the three alphas (a, b) and the recorded
    FedAvg runs at alpha 0 and 1k for their last round's client models (c, d)."""
    return ([final_model_run("FedAvg E=1", alpha, seeds[0], scale) for alpha in ALPHAS]
            + _recorded([("FedAvg E=1", 0.0), ("FedAvg E=1", 1000.0)])(scale, seeds))


def fig5_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    return [final_model_run(label, alpha, seeds[0], scale) for alpha in EXTREMES for label in SPECTRUM_ALGORITHMS]


def fig15_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    return [final_model_run(label, 0.5, seeds[0], scale) for label in SPECTRUM_ALGORITHMS]


def fig14_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    return [final_model_run(label, alpha, seeds[0], scale) for alpha in (0.0, 0.5) for label in PLANE_ALGORITHMS]


FIG4_PANELS = (("FedAvg E=1", 0.0), ("FedASAM", 0.0), ("FedAvg E=1", 1000.0), ("FedASAM", 1000.0))
FIG16_PANELS = (("FedAvg E=1", 0.0), ("FedAvg E=1", 0.5), ("FedAvg E=1", 1000.0), ("FedSAM", 0.5))
FIG7_PANELS = (("FedAvg E=1", 0.0), ("FedAvg E=1", 1000.0))
FIG12_PANELS = (("FedAvg E=1", 0.5),)
FIG13_PANELS = (("FedAvg E=1", 0.0), ("FedAvg E=1", 0.5), ("FedAvg E=1", 1000.0))

# a Hessian analysis of each stored model: the claim keeps one seed and the reference spread
register_metric("fedsam_lambda_max", lambda_max_of_row, "lambda_max", seeded=False, flatness=True)

register_artifacts(PAPER, {
    "fedsam-table-1": table1_runs,
    "fedsam-fig-1": fig1_runs,
    "fedsam-fig-2": fig2_runs,
    "fedsam-fig-4": _recorded(FIG4_PANELS),
    "fedsam-fig-5": fig5_runs,
    "fedsam-fig-7": _recorded(FIG7_PANELS),
    "fedsam-fig-12": _recorded(FIG12_PANELS),
    "fedsam-fig-13": _recorded(FIG13_PANELS),
    "fedsam-fig-14": fig14_runs,
    "fedsam-fig-15": fig15_runs,
    "fedsam-fig-16": _recorded(FIG16_PANELS),
})


# ----------------------------------------------------------------------------- figure pages

def _data_name(scale: str) -> str:
    return stand_in_for(scale, PAPER).data_name("CIFAR-100")


def _short(algorithm: str) -> str:
    return algorithm.replace(" E=1", "")


#: Table 1's cells: one per dataset, algorithm and alpha (the seeds of a cell are averaged).
TABLE1_KEYS = ["dataset", "algorithm", "alpha"]
#: Table 1's two columns: the top eigenvalue and the ratio lambda_max / lambda_5.
TABLE1_COLUMNS = ("lambda_max", "ratio")


def table1_spectra(runs: pd.DataFrame, device: str = "cpu", data_root: str | None = None) -> pd.DataFrame:
    """One row per run of Table 1 (``runs``: rows of :func:`~flcore.reproduction.runner.results_frame`,
    each run once): :data:`TABLE1_KEYS`, ``seed``, ``status`` and, for a finished run with a
    stored final model, ``lambda_max`` and ``ratio`` (``lambda_max / lambda_5``,
    :func:`~flcore.reproduction.run_geometry.sharpness_ratio`), NaN otherwise.  The spectrum is
    :func:`~flcore.reproduction.run_geometry.spectrum_of_row`'s, the one the claims' metric
    ``fedsam_lambda_max`` reads, so a cell of the page and of the verdict is one cached value."""
    rows = []
    for row in runs.drop_duplicates("run_id").to_dict("records"):
        spectrum = spectrum_of_row(row, device=device, data_root=data_root)
        rows.append({**{key: row[key] for key in TABLE1_KEYS}, "seed": row["seed"], "status": row["status"],
                     "lambda_max": float("nan") if spectrum is None else float(spectrum[0]),
                     "ratio": float("nan") if spectrum is None else sharpness_ratio(spectrum, 5)})
    return pd.DataFrame(rows, columns=[*TABLE1_KEYS, "seed", "status", *TABLE1_COLUMNS])


def table1_cells(spectra: pd.DataFrame, column: str) -> pd.DataFrame:
    """Table 1's cells of ``column`` (one of :data:`TABLE1_COLUMNS`) from
    :func:`table1_spectra`: per cell the mean over its finished seeds, their sd and n
    (:func:`flcore.report.ours_values`), as the claims' verdicts read them."""
    return ours_values(spectra, TABLE1_KEYS, column)


def lowest_learning(cells: pd.DataFrame, runs: pd.DataFrame, chance: float) -> tuple[str, list[str]]:
    """The algorithm with the lowest seed mean ``ours`` among ``cells`` (Table 1's cells at
    one alpha: ``algorithm``, ``alpha``, ``ours``) whose model learns, and the algorithms left
    out for sitting at ``chance`` (%) or below it: a model that learns nothing can be flat, so
    it is not ranked for flatness.  A cell did not learn when most of its seeds' accuracy
    (``runs``: one row per run, ``mean_last_100`` a fraction) sits below chance plus the learn
    margin (:func:`flcore.reproduction.claims.at_chance`, the verdicts' rule).  ``"none"``
    when no cell is left."""
    finished = runs[runs["status"] == "finished"].drop_duplicates("run_id")
    learning, left_out = [], []
    for row in cells.dropna(subset=["ours"]).to_dict("records"):
        mine = finished[(finished["algorithm"] == row["algorithm"]) & (finished["alpha"] == row["alpha"])]
        values = [100.0 * float(v) for v in mine["mean_last_100"] if v is not None and math.isfinite(float(v))]
        below = bool(values) and sum(values) / len(values) <= chance
        (left_out if below or (values and at_chance(values, chance)) else learning).append(row)
    lowest = min(learning, key=lambda row: row["ours"])["algorithm"] if learning else "none"
    return lowest, [row["algorithm"] for row in left_out]


def show_recorded_runs(page, runs: pd.DataFrame, scale: str, panels: Sequence[tuple[str, float]]) -> list[str]:
    """Figs. 4 and 16: the table of the figure's recorded runs; returns the panels not trained
    at ``scale`` (named ``"FedASAM at alpha = 0"``; see :data:`RECORDED`)."""
    trained = recorded_at(scale, panels)
    missing = [f"{_short(a)} at alpha = {alpha:g}" for a, alpha in panels if (a, alpha) not in trained]
    page.table(runs[["algorithm", "alpha", "record", "status", "run_id"]],
               f"The recorded runs of the figure (probes every {PROBE_EVERY[scale]} rounds): "
               f"{int((runs['status'] == 'finished').sum())} of {len(runs)} finished"
               + (f"; not trained at the {scale} scale: {', '.join(missing)}." if missing else "."))
    return missing


def client_eigenvalue_row(algorithm: str, alpha: float, history: pd.DataFrame, global_max: float) -> dict:
    """One row of Figs. 4 and 16's table from a ``client_lambda_max`` probe history (columns
    ``round``, ``value``): the clients' mean top eigenvalue at the first and the last probed
    round, its largest value, and the final global model's top eigenvalue (Table 1's measure)."""
    first, last = (history[history["round"] == r]["value"].mean()
                   for r in (history["round"].min(), history["round"].max()))
    return {"algorithm": algorithm, "alpha": alpha, "probed rounds": history["round"].nunique(),
            "client lambda_max (first probe)": first, "client lambda_max (last probe)": last,
            "client lambda_max (largest)": history["value"].max(), "global lambda_max (final model)": global_max}


def show_client_eigenvalues(page, runs: pd.DataFrame, scale: str, store=None, device: str = "cpu",
                            data_root: str | None = None) -> list[dict]:
    """Figs. 4 and 16 (FedSAM paper): one heat-map per finished recorded run of the top Hessian
    eigenvalue of each sampled client's model on its own data (columns: probed rounds), on a
    common colour scale, and the table of :func:`client_eigenvalue_row`; returns its rows."""
    from IPython.display import Markdown, display


    data_name = _data_name(scale)
    histories, rows = {}, []
    for row in runs[runs["status"] == "finished"].to_dict("records"):
        history = probe_history(run_metrics(pd.DataFrame([row]), store=store), "client_lambda_max")
        histories[(row["algorithm"], row["alpha"])] = history
        global_max = float(hessian_spectrum(row["run_dir"], geometry_settings(scale), device=device,
                                            data_root=data_root)[0])
        rows.append(client_eigenvalue_row(row["algorithm"], row["alpha"], history, global_max))
    if not histories:
        display(Markdown("No recorded run is finished: nothing to draw."))
        return rows
    top = max(float(h["value"].max()) for h in histories.values())
    figure, axes = panel_figure(len(histories), 5.0, 3.4)
    for ax, ((algorithm, alpha), history) in zip(axes, histories.items()):
        client_heatmap(ax, history, "slot", title=f"{_short(algorithm)}, alpha = {alpha:g}", vmin=0, vmax=top,
                       label="client lambda_max")
        ax.set_ylabel("sampled client")
    page.figure(figure, f"Top Hessian eigenvalue of each sampled client's model on its own data as rounds pass on "
                        f"{data_name}: " + "; ".join(
                            f"{_short(r['algorithm'])} at alpha = {r['alpha']:g}: at most "
                            f"{r['client lambda_max (largest)']:.1f} for the clients, "
                            f"{r['global lambda_max (final model)']:.1f} for the final global model"
                            for r in rows) + ".",
                alt=f"{len(histories)} heat-maps on {data_name}, probed rounds on the x axis and the round's five "
                    "sampled clients on the y axis, coloured by the top Hessian eigenvalue of the client's model on "
                    "its data; " + "; ".join(
                        f"{r['algorithm']} at alpha = {r['alpha']:g}: mean {r['client lambda_max (first probe)']:.2f} "
                        f"at the first probe and {r['client lambda_max (last probe)']:.2f} at the last"
                        for r in rows) + ".")
    page.table(pd.DataFrame(rows), "The clients' top eigenvalue (mean over the probed round's clients) at the first "
                                   "and the last probe, its largest value, and the final global model's top "
                                   "eigenvalue (Table 1's measure).")
    return rows


def client_eigenvalue_findings(rows: Sequence[dict], missing: Sequence[str], scale: str) -> list[str]:
    """The sentences of Figs. 4 and 16's "What we found" from :func:`show_client_eigenvalues`'s rows."""
    lines = [f"{_short(r['algorithm'])} at alpha = {r['alpha']:g}: the clients' top eigenvalue goes from "
             f"{r['client lambda_max (first probe)']:.2f} to {r['client lambda_max (last probe)']:.2f} (mean over "
             f"the round's clients), the final global model's is {r['global lambda_max (final model)']:.2f}."
             for r in rows]
    if missing:
        lines.append(f"Not drawn at the {scale} scale (recorded runs train alone; the book's budget): "
                     + ", ".join(missing) + ".")
    return lines


def _plane_column(field: str) -> str:
    return "train loss" if field == "loss" else "test error (%)"


def client_planes(runs: pd.DataFrame, settings, device: str = "cpu", data_root: str | None = None) -> dict:
    """Figs. 2 (c, d), 12 and 13 of the FedSAM paper: per finished recorded run of ``runs``, its
    alpha -> (the plane through three clients' models after the last round's local training,
    :func:`~flcore.reproduction.run_geometry.client_models_plane`, and those clients' ids)."""

    return {row["alpha"]: client_models_plane(row["run_dir"], settings=settings, device=device, data_root=data_root)
            for row in runs[runs["status"] == "finished"].to_dict("records")}


def client_plane_rows(surface, ids: Sequence[int]) -> list[dict]:
    """The train loss and test error (%) at the three clients' models of a plane of
    :func:`client_planes` and at their average (``"their average"``), one row per model."""
    return [{"model": name, "train loss": loss, "test error (%)": 100 * error}
            for name, loss, error in zip([f"client {i}" for i in ids] + ["their average"], surface.model_loss,
                                         surface.model_error)]


def draw_client_planes(planes: dict, field: str, title):
    """One panel of ``field`` (``"loss"`` or ``"error"``) per plane of :func:`client_planes`, by
    increasing alpha, the clients marked; ``title(index, alpha)`` names the panel. Returns the figure."""


    figure, axes = panel_figure(len(planes), 5.0, 4.2)
    for index, (ax, (alpha, (surface, ids))) in enumerate(zip(axes, sorted(planes.items()))):
        plane_panel(ax, surface, field, [f"client {i}" for i in ids], title=title(index, alpha))
    return figure


def show_client_planes(page, runs: pd.DataFrame, scale: str, field: str, device: str = "cpu",
                       data_root: str | None = None) -> pd.DataFrame:
    """Figs. 12 (``field="error"``, test error) and 13 (``field="loss"``, train loss) of the
    FedSAM paper: per finished recorded run, ``field`` on the plane through three clients' models
    after the last round's local training (their average marked), the values at the models and
    the measurement settings; returns the values (one row per alpha and model)."""
    from IPython.display import Markdown, display


    settings = geometry_settings(scale)
    data_name = _data_name(scale)
    what = "train loss" if field == "loss" else "test error"
    column = _plane_column(field)
    planes = client_planes(runs, settings, device, data_root)
    rows = [{"alpha": alpha, **r} for alpha, (surface, ids) in planes.items() for r in client_plane_rows(surface, ids)]
    values = pd.DataFrame(rows)
    if planes:
        figure = draw_client_planes(planes, field, lambda index, alpha: f"{what}, alpha = {alpha:g}")
        clients = values[values["model"] != "their average"].groupby("alpha")[column].mean()
        average = values[values["model"] == "their average"].set_index("alpha")[column]
        per_alpha = "; ".join(f"alpha = {a:g}: {clients[a]:.3g} at the clients on average, {average[a]:.3g} at "
                              "their average" for a in clients.index)
        per_model = "; ".join(f"alpha = {r['alpha']:g}, {r['model']}: {what} {r[column]:.3g}" for r in rows)
        page.figure(figure, f"{what.capitalize()} on the plane through three clients' models after the last round "
                            f"on {data_name}: {per_alpha}.",
                    alt=f"{len(planes)} filled contour plots of the {what} on {data_name} on the plane through "
                        f"three client models of the last round, one per alpha; {per_model}.")
    else:
        display(Markdown("No recorded run is finished: nothing to draw."))
    page.table(values, "Train loss and test error at the three clients' models and at their average (evaluated at "
                       "the models themselves).")
    page.table(pd.DataFrame(settings_rows(settings)), f"Measurement settings at the {scale} scale (plane_grid points "
                                                      "per axis).")
    return values


def client_plane_findings(values: pd.DataFrame, field: str) -> list[str]:
    """Figs. 12 and 13's "What we found": per alpha, the range of ``field`` over the three
    clients' models and its value at their average (rows of :func:`show_client_planes`)."""
    what = "train loss" if field == "loss" else "test error"
    column = _plane_column(field)
    lines = []
    for alpha, block in (values.groupby("alpha") if len(values) else ()):
        spread = block[block["model"] != "their average"][column]
        lines.append(f"alpha = {alpha:g}: the three clients' {what} ranges from {spread.min():.3g} to "
                     f"{spread.max():.3g}; at their average it is "
                     f"{block[block['model'] == 'their average'][column].iloc[0]:.3g}.")
    return lines


def spectrum_table(spectra: dict) -> pd.DataFrame:
    """Figs. 5 and 15's table: one row per (algorithm, alpha) of ``spectra`` with its
    eigenvalues ``lambda_1`` (largest) .. ``lambda_k``."""
    return pd.DataFrame([{"algorithm": label, "alpha": alpha,
                          **{f"lambda_{i + 1}": v for i, v in enumerate(values)}}
                         for (label, alpha), values in spectra.items()])


def show_spectra(page, runs: pd.DataFrame, scale: str, device: str = "cpu",
                 data_root: str | None = None) -> pd.DataFrame:
    """Figs. 5 and 15 of the FedSAM paper: the top Hessian eigenvalues of the finished runs'
    global models, one panel per alpha and one line per algorithm of
    :data:`SPECTRUM_ALGORITHMS`; then the eigenvalues (:func:`spectrum_table`, returned) and
    the measurement settings as tables."""

    settings = geometry_settings(scale)
    data_name = _data_name(scale)
    finished = runs[runs["status"] == "finished"]
    alphas = sorted(finished["alpha"].unique())
    spectra = {(row["algorithm"], row["alpha"]): hessian_spectrum(row["run_dir"], settings, device=device,
                                                                  data_root=data_root)
               for row in finished.to_dict("records")}
    figure, axes = panel_figure(max(1, len(alphas)), 5.0, 3.6)
    for ax, alpha in zip(axes, alphas):
        spectrum_curves(ax, {label: spectra[(label, alpha)] for label in SPECTRUM_ALGORITHMS
                             if (label, alpha) in spectra}, title=f"alpha = {alpha:g}")
    table = spectrum_table(spectra)

    def flattest(alpha):
        block = table[table["alpha"] == alpha]
        return block.loc[block["lambda_1"].idxmin(), "algorithm"] if len(block) else "none"

    page.figure(figure, f"Top {settings.top_k} Hessian eigenvalues of the global model on {data_name}: the lowest "
                        "spectrum is " + ", ".join(f"{flattest(a)}'s at alpha = {a:g}" for a in alphas) + ".",
                alt=f"{len(alphas)} line charts of the top {settings.top_k} Hessian eigenvalues against their index "
                    f"on {data_name}, one line per algorithm; " + "; ".join(
                        f"alpha = {r['alpha']:g}, {r['algorithm']}: from {r['lambda_1']:.2f} down to "
                        f"{r[f'lambda_{settings.top_k}']:.2f}" for r in table.to_dict("records")) + ".")
    page.table(table, f"The eigenvalues drawn (largest first), {settings.hessian_method} on "
                      f"{settings.hessian_samples or 'all'} training samples.")
    page.table(pd.DataFrame(settings_rows(settings)), f"Measurement settings at the {scale} scale.")
    return table


def spectrum_findings(table: pd.DataFrame, top_k: int) -> list[str]:
    """Figs. 5 and 15's "What we found": per alpha, how many of FedASAM's top ``top_k``
    eigenvalues lie below FedAvg's (the paper: all of them)."""
    lines = []
    names = [f"lambda_{i + 1}" for i in range(top_k)]
    for alpha in sorted(table["alpha"].unique()) if len(table) else ():
        block = table[table["alpha"] == alpha].set_index("algorithm")
        if {"FedAvg E=1", "FedASAM"} <= set(block.index):
            below = int((block.loc["FedASAM", names].values < block.loc["FedAvg E=1", names].values).sum())
            lines.append(f"alpha = {alpha:g}: {below} of FedASAM's top {top_k} eigenvalues lie below FedAvg's "
                         f"(the paper: all of them).")
    return lines


def loss_rise(surface) -> tuple[float, float]:
    """Figure 1's flatness of one random surface: the mean train loss over the grid minus the
    loss at the model (the grid's centre), and that centre loss: ``(rise, centre)``."""
    centre = surface.loss[len(surface.xs) // 2, len(surface.ys) // 2]
    return float(surface.loss.mean() - centre), float(centre)


def lowest_model(values: pd.DataFrame, alpha: float, column: str) -> str:
    """The ``model`` with the lowest ``column`` among the rows of ``values`` at ``alpha``;
    ``"none"`` when there is no such row."""
    block = values[values["alpha"] == alpha]
    return block.loc[block[column].idxmin(), "model"] if len(block) else "none"


def client_accuracy_spread(history: pd.DataFrame) -> tuple[float, float] | None:
    """How unevenly the global model treats the clients (Figure 3), from a per-client accuracy
    history (``round, client, accuracy``, fractions): the standard deviation across clients at
    the last recorded round and the mean over clients of the mean absolute change between
    consecutive records, both in points; None for an empty history."""
    if history.empty:
        return None
    last = history[history["round"] == history["round"].max()]["accuracy"]
    swing = history.sort_values("round").groupby("client")["accuracy"].agg(lambda s: s.diff().abs().mean()).mean()
    return float(last.std() * 100), float(swing * 100)


def table1_findings(lam: pd.Series, mean_tau: float, verdicts: pd.DataFrame, scale: str) -> list[str]:
    """Table 1's "What we found": our lambda_max at alpha = 0 of FedAvg, FedSAM and FedASAM
    (``lam``: indexed by ``(algorithm, alpha)``; NaN where missing) beside the paper's, the
    rankings' mean Kendall's tau, and the claim's verdict (or the claims' counted)."""
    def value(algorithm):
        return lam.get((algorithm, 0.0), float("nan"))

    lines = [f"At the **{scale}** scale, alpha = 0: lambda_max is {value('FedAvg E=1'):.2f} with FedAvg, "
             f"{value('FedSAM'):.2f} with FedSAM and {value('FedASAM'):.2f} with FedASAM (paper: 93.46, "
             f"70.29, 30.11). The rankings agree with a mean Kendall's \u03c4 of {mean_tau:.2f}."]
    if len(verdicts) == 1:
        lines.append(f"The claim this table checks: **{verdicts['verdict'].iloc[0].replace('_', ' ')}**; a tie is "
                     "decided with the seed-to-seed spread of lambda_max itself, measured on the reference runs.")
    else:
        counted = verdict_counts(verdicts, at="")
        lines.append(f"{counted[0].upper()}{counted[1:]}; ties are decided with the seed-to-seed spread of lambda_max "
                     "itself, measured on the reference runs.")
    return lines
