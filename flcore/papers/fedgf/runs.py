"""The FedGF paper's artifacts (Lee & Yoon, ICML 2024) as data.

Run group ``gf-main`` of the paper's ``inventory.yaml``: the FedSAM paper's CIFAR CNN protocol (same
CNN, Hsu et al. splits, 100 clients x 500 images, E = 1, B = 64), so every run is built
with :func:`flcore.papers.fedsam.runs.sam_main_run` -- the method name plus data set,
alpha, clients per round, seed and scale, nothing else -- and FedAvg / FedSAM / FedASAM
cells are the FedSAM pages' runs.  Alphas are the Hsu et al. concentrations of the split
files the paper's code uses (CIFAR-10 0 / 0.05 / 100, CIFAR-100 0 / 0.5 / 1000); the paper
prints them divided by the number of classes (0 / 0.005 / 10).

Scales:

- ``paper``: Table 1's full grid (11 algorithms x 3 alphas x 5/10/20 clients x 2 data
  sets, 198 runs) and the static-c ablation at both alphas of Table 5;
- ``small`` / ``smoke``: MNIST-1D for both data sets (so their alpha = 0 runs coincide),
  5 clients per round, one seed, and a reduced grid that keeps the small book's training
  time (:data:`REDUCED_ROWS`): FedAvg, FedSAM and FedASAM in every cell (the FedSAM pages'
  runs, no extra training), FedDyn, MoFedSAM, FedSMOO and FedGF at alpha = 0 (the claims'
  comparisons), MoFedSAM, FedSMOO and FedGF at CIFAR-100's IID alpha (Table 2), the
  static-c runs at alpha = 0 (c = 0.5 and 1) and at CIFAR-100's IID alpha (c = 1).
  FedAvgM, FedProx, SCAFFOLD and FedGAMMA run at the paper scale only.

Table 3 (transmissions per round) is rendered from the method registry; Fig. 3 is a
schematic.  The analyses (Table 2, Figs. 1, 2, 5, 6) read stored runs through
:mod:`flcore.papers.fedgf.analysis`; the claims' metrics ``lambda_max``, ``lpf``,
``flatness_discrepancy`` and ``communication`` are registered here.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from flcore.analysis.probes import Probe
from flcore.analysis.recording import register_probe
from flcore.config.scales import scale_defaults
from flcore.papers.fedgf import analysis
from flcore.papers.fedgf.analysis import finite, global_flatness
from flcore.papers.fedsam import runs as fedsam
from flcore.reproduction.artifacts import RunSpec, no_runs, register_artifacts
from flcore.reproduction.claims import never_reached, register_metric
from flcore.reproduction.stand_in import stand_in_for
from flcore.store import RunStore

PAPER = "fedgf"
#: Table 1's data sets, in its order.
DATASETS = ("CIFAR-10", "CIFAR-100")
ALPHAS = fedsam.ALPHAS
#: The alphas as the paper prints them (Hsu alpha / number of classes).
PAPER_ALPHA = {("CIFAR-10", 0.0): "0", ("CIFAR-10", 0.05): "0.005", ("CIFAR-10", 100.0): "10",
               ("CIFAR-100", 0.0): "0", ("CIFAR-100", 0.5): "0.005", ("CIFAR-100", 1000.0): "10"}
#: Table 1's rows (the paper's names) -> flcore methods.  The paper's FedSMOO runs without
#: its dynamic regulariser (footnote 3).
METHODS = {"FedAvg": "fedavg", "FedAvgM": "fedavgm", "FedProx": "fedprox", "SCAFFOLD": "scaffold",
           "FedDyn": "feddyn", "FedSAM": "fedsam", "FedASAM": "fedasam", "MoFedSAM": "mofedsam",
           "FedGAMMA": "fedgamma", "FedSMOO": "fedsmoo-noreg", "FedGF": "fedgf"}
ALGORITHMS = tuple(METHODS)
#: Table 2's and Fig. 5's methods (FedAvg and the flatness-seeking ones).
FLATNESS_ALGORITHMS = ("FedAvg", "FedSAM", "FedASAM", "MoFedSAM", "FedSMOO", "FedGF")
#: Table 4's methods (FedAvg sets the target).
TABLE4_ALGORITHMS = ("FedAvg", "FedSMOO", "FedGF")
#: Below the paper scale, the algorithms run in each (data set, alpha position) cell -- 0:
#: non-IID, 1: middle, 2: IID -- chosen to keep the small book's training time: FedAvg,
#: FedSAM and FedASAM everywhere (the FedSAM pages' runs), the methods the claims compare
#: at alpha = 0 and, for Table 2's IID column, at CIFAR-100's IID alpha.
_CORE = ("FedAvg", "FedDyn", "FedSAM", "FedASAM", "MoFedSAM", "FedSMOO", "FedGF")
_SAM_PAGES = ("FedAvg", "FedSAM", "FedASAM")
REDUCED_ROWS = {("CIFAR-10", 0): _CORE, ("CIFAR-100", 0): _CORE, ("CIFAR-10", 1): _SAM_PAGES,
                ("CIFAR-100", 1): _SAM_PAGES, ("CIFAR-10", 2): _SAM_PAGES, ("CIFAR-100", 2): FLATNESS_ALGORITHMS}
#: Table 5's static c (c = 0 is the FedSAM run).
STATIC_C = (0.5, 1.0)
#: Below the paper scale, the static c run in each (data set, alpha position) cell.
REDUCED_STATIC_C = {("CIFAR-10", 0): STATIC_C, ("CIFAR-100", 0): STATIC_C, ("CIFAR-100", 2): (1.0,)}
#: Fig. 1's alphas (CIFAR-100 split files of the paper's code), by scale.
#: Below it MNIST-1D stands in for both CIFARs, so the alphas of both data sets' FedSAM runs
#: (the FedSAM pages') make the sweep at no extra training.
#: Fig. 7's alphas (CIFAR-100 split files), by scale.
FIG7_ALPHAS = {"paper": (0.0, 0.5, 5.0, 1000.0), "small": (0.0, 0.5, 1000.0), "smoke": (0.0, 1000.0)}
#: Fig. 7's training-time probes: FedGF's c (for the next round, Eq. 16) and D^r (Eq. 15).
FIG7_PROBES = ("fedgf_c", "fedgf_distance")
#: Fig. 7's runs at the small scale train half the scale's rounds (the window W = 30 lets c
#: settle within a few tens of rounds), to keep the book's training time.
FIG7_ROUNDS_FRACTION = {"paper": 1.0, "small": 0.5, "smoke": 1.0}
FIG1_ALPHAS = {"paper": (0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0, 1000.0), "small": (0.0, 0.05, 0.5, 100.0, 1000.0),
               "smoke": (0.0, 100.0, 1000.0)}


def alphas_for(dataset: str, scale: str) -> tuple[float, ...]:
    """Table 1's alphas of ``dataset`` run at ``scale`` (the smoke scale: the extremes)."""
    return fedsam.alphas_for(dataset, scale)


def position(dataset: str, alpha: float) -> int:
    """0, 1 or 2: the alpha's column in the paper's tables."""
    return ALPHAS[dataset].index(float(alpha))


def gf_run(dataset: str, algorithm: str, alpha: float, per_round: int, seed: int, scale: str,
           **extra) -> RunSpec:
    """One run of ``gf-main``: :func:`fedsam.sam_main_run` under the paper's method name."""
    return fedsam.sam_main_run(dataset, fedsam.Algorithm(algorithm, METHODS[algorithm]), alpha, per_round,
                               seed, scale, **extra)


def static_c_run(dataset: str, c: float, alpha: float, seed: int, scale: str) -> RunSpec:
    """A Table 5 run: FedGF with a fixed ``c`` (``fedgf-static-c``), 5 clients per round."""
    spec = fedsam.sam_main_run(dataset, fedsam.Algorithm("FedGF-static-c", "fedgf-static-c"), alpha, 5, seed,
                               scale, fedgf_static_c=float(c))
    return RunSpec({**spec.labels, "c": float(c)}, spec.config)


def algorithms_run(dataset: str, alpha: float, scale: str, algorithms: Sequence[str] = ALGORITHMS) -> list[str]:
    """The ``algorithms`` run in a (data set, alpha) cell at ``scale`` (all at ``paper``)."""
    if stand_in_for(scale, PAPER).is_paper:
        return list(algorithms)
    allowed = REDUCED_ROWS[(dataset, position(dataset, alpha))]
    return [a for a in algorithms if a in allowed]


def static_c_run_at(dataset: str, alpha: float, scale: str) -> tuple[float, ...]:
    """Table 5's static c run in a (data set, alpha) cell at ``scale``."""
    if stand_in_for(scale, PAPER).is_paper:
        return STATIC_C
    return REDUCED_STATIC_C.get((dataset, position(dataset, alpha)), ())


def table1_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 1: every (data set, algorithm, alpha, clients, seed) cell of the scale."""
    return [gf_run(ds, algo, alpha, k, seed, scale)
            for ds in DATASETS for alpha in alphas_for(ds, scale) for algo in algorithms_run(ds, alpha, scale)
            for k in fedsam.CLIENTS_PER_ROUND[scale] for seed in seeds]


def table2_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 2 (and Fig. 5): CIFAR-100, non-IID and IID, FedAvg and the flatness methods,
    5 clients."""
    alphas = ALPHAS["CIFAR-100"]
    return [gf_run("CIFAR-100", algo, alpha, 5, seed, scale) for alpha in (alphas[0], alphas[-1])
            for algo in algorithms_run("CIFAR-100", alpha, scale, FLATNESS_ALGORITHMS) for seed in seeds]


def table4_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 4: FedAvg (the target), FedSMOO and FedGF at every alpha, 5 clients."""
    return [gf_run(ds, algo, alpha, 5, seed, scale) for ds in DATASETS for alpha in alphas_for(ds, scale)
            for algo in algorithms_run(ds, alpha, scale, TABLE4_ALGORITHMS) for seed in seeds]


def table5_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 5: FedSAM (c = 0), FedGF-static-c and FedGF at the non-IID and IID alphas, 5 clients."""
    specs = []
    for ds in DATASETS:
        alphas = ALPHAS[ds]
        for alpha in (alphas[0], alphas[-1]):
            statics = static_c_run_at(ds, alpha, scale)
            if not statics:
                continue
            for seed in seeds:
                specs.append(gf_run(ds, "FedSAM", alpha, 5, seed, scale))
                specs.extend(static_c_run(ds, c, alpha, seed, scale) for c in statics)
                specs.append(gf_run(ds, "FedGF", alpha, 5, seed, scale))
    return specs


def fig1_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 1: FedSAM on CIFAR-100 over an alpha sweep, 5 clients."""
    return [gf_run("CIFAR-100", "FedSAM", alpha, 5, seed, scale) for alpha in FIG1_ALPHAS[scale] for seed in seeds]


def fig2_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 2: FedSAM on CIFAR-100 at alpha = 0."""
    return [gf_run("CIFAR-100", "FedSAM", 0.0, 5, seed, scale) for seed in seeds[:1]]


def fig6_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 6: FedGF on CIFAR-100 at alpha = 0."""
    return [gf_run("CIFAR-100", "FedGF", 0.0, 5, seed, scale) for seed in seeds[:1]]


def fig4_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 4: convergence at alpha = 0 for FedAvg and the flatness methods, 5 clients."""
    return [gf_run(ds, algo, 0.0, 5, seed, scale) for ds in DATASETS
            for algo in algorithms_run(ds, 0.0, scale, FLATNESS_ALGORITHMS) for seed in seeds]


def fig7_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Fig. 7: FedGF on CIFAR-100 over several alphas, 5 clients, with c and D^r recorded
    after every round (probes :data:`FIG7_PROBES`; recorded runs train alone and are
    distinct from Table 1's runs); label ``rounds`` (shorter at small)."""

    rounds = scale_defaults(scale, fedsam.dataset_for("CIFAR-100", scale))["rounds"]
    extra = {"probes": list(FIG7_PROBES), "probe_every": 1}
    if FIG7_ROUNDS_FRACTION[scale] != 1.0:
        extra["rounds"] = int(rounds * FIG7_ROUNDS_FRACTION[scale])
    specs = [gf_run("CIFAR-100", "FedGF", alpha, 5, seed, scale, **extra)
             for alpha in FIG7_ALPHAS[scale] for seed in seeds[:1]]
    return [RunSpec({**s.labels, "rounds": s.config.get("rounds", rounds)}, s.config) for s in specs]


# --------------------------------------------------------------------------- Fig. 7's probes

def _server_probe(key: str):
    """A probe factory reading FedGF's server state ``fedgf.<key>`` after each round."""

    def factory(sim):
        def read(state):
            value = state["server_state"].get("fedgf", {}).get(key)
            return None if value is None else float(value)
        return Probe(f"fedgf_{key}", read, ("server_state",))
    return factory


def _register_probes() -> None:

    register_probe("fedgf_c", _server_probe("c"))
    register_probe("fedgf_distance", _server_probe("distance"))


_register_probes()


# --------------------------------------------------------------------------- claims' metrics

def _analysis(row: dict, key: str) -> float | None:

    run_dir = row.get("run_dir")
    if not run_dir or row.get("status") != "finished":
        return None
    return finite(global_flatness(run_dir)[key])


def _communication(row: dict) -> float | None:
    """Table 4's cell of a run: transmissions (x10^2) to reach the final accuracy of the
    FedAvg run of the same data set, alpha, clients and seed (same store)."""
    cell = _transmissions(row)
    return None if cell is None else finite(cell["transmissions"])


def _transmissions(row: dict) -> dict | None:
    """:func:`~flcore.papers.fedgf.analysis.transmissions_to_target` of the run against its
    FedAvg run's final accuracy; None when either is not in the store."""
    run_dir = row.get("run_dir")
    if not run_dir or row.get("status") != "finished":
        return None
    scale = json.loads((Path(run_dir) / "config.json").read_text()).get("scale", "small")
    target_spec = gf_run(row["dataset"], "FedAvg", row["alpha"], int(row.get("clients_per_round", 5)),
                         int(row.get("seed", 0)), scale)
    store = RunStore(Path(run_dir).parent)
    target_run = store.run(target_spec.run_id())
    target = target_run.summary().get("mean_last_100") if target_run.exists() else None
    if target is None:
        return None
    metrics = store.metrics(Path(run_dir).name)
    return analysis.transmissions_to_target(metrics, row["method"], float(target))  # looked up per call


# the flatness metrics analyse each stored model: their claims keep one seed (indicative)
register_metric("fedgf_lambda_max", lambda row: _analysis(row, "lambda_max"), "lambda_max", seeded=False, flatness=True)
register_metric("lpf", lambda row: _analysis(row, "lpf"), "LPF loss", seeded=False, flatness=True)
register_metric("flatness_discrepancy", lambda row: _analysis(row, "flatness_discrepancy"), "Delta_F",
                seeded=False, flatness=True)


def _fedavg_target(spec: RunSpec) -> list[RunSpec]:
    """The run :func:`_communication` reads beside a cell's: FedAvg's on the same data set,
    alpha, clients and seed (trained with the claim's runs: ``flcore claims --decide``)."""
    labels = spec.labels
    return [gf_run(labels["dataset"], "FedAvg", labels["alpha"], int(labels.get("clients_per_round", 5)),
                   int(labels.get("seed", 0)), spec.config.get("scale", "small"))]


#: A run that never reached FedAvg's accuracy: its transmissions (counted at its last
#: evaluated round + 1) are censored.
_never_reached = never_reached(lambda row: _transmissions(row), lambda cell: cell["reached"])
register_metric("communication", _communication, "x10^2 transmissions", companions=_fedavg_target,
                censored=_never_reached)


# --------------------------------------------------------------------------- registry (paper order)

register_artifacts(PAPER, {
    "fedgf-table-1": table1_runs,
    "fedgf-table-2": table2_runs,
    "fedgf-table-3": no_runs,
    "fedgf-table-4": table4_runs,
    "fedgf-table-5": table5_runs,
    "fedgf-fig-1": fig1_runs,
    "fedgf-fig-2": fig2_runs,
    "fedgf-fig-3": no_runs,
    "fedgf-fig-4": fig4_runs,
    "fedgf-fig-5": table2_runs,
    "fedgf-fig-6": fig6_runs,
    "fedgf-fig-7": fig7_runs,
})
