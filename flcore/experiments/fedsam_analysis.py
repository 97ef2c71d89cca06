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
global model as Table 1 measures it, :func:`flcore.experiments.run_geometry.lambda_max_of_row`)
is registered here; its ties are decided with its own seed spread on the reference runs.
FedGF's ``lambda_max`` measures the same quantity after another protocol (an extra round of
local training, :mod:`flcore.experiments.fedgf_analysis`), hence the separate name.
"""
from __future__ import annotations

from collections.abc import Sequence

from . import fedsam
from .artifacts import Artifact, RunSpec, register_artifact
from .claims import register_metric
from .presets import scale_defaults
from .run_geometry import lambda_max_of_row

PAPER = "fedsam"
DATASET = "CIFAR-100"
#: Table 1's and Fig. 1's heterogeneity levels (alpha 0 and 1k).
EXTREMES = (0.0, 1000.0)
#: The three CIFAR-100 alphas of the analysis figures.
ALPHAS = (0.0, 0.5, 1000.0)
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

register_metric("fedsam_lambda_max", lambda_max_of_row)

for _id, _kind, _title, _runs in (
    ("fedsam-table-1", "table", "Table 1: top Hessian eigenvalue of the global model", table1_runs),
    ("fedsam-fig-1", "figure", "Figure 1: loss landscapes of the global model", fig1_runs),
    ("fedsam-fig-2", "figure", "Figure 2: where the global and the local models converge", fig2_runs),
    ("fedsam-fig-4", "figure", "Figure 4: top Hessian eigenvalue of each client's model as rounds pass",
     _recorded(FIG4_PANELS)),
    ("fedsam-fig-5", "figure", "Figure 5: Hessian spectra of the global model", fig5_runs),
    ("fedsam-fig-7", "figure", "Figure 7: the global model's output norm on each client's data", _recorded(FIG7_PANELS)),
    ("fedsam-fig-12", "figure", "Figure 12: test error around three local models at alpha = 0.5",
     _recorded(FIG12_PANELS)),
    ("fedsam-fig-13", "figure", "Figure 13: train loss around three local models", _recorded(FIG13_PANELS)),
    ("fedsam-fig-14", "figure", "Figure 14: FedAvg, FedSAM and FedASAM in one plane", fig14_runs),
    ("fedsam-fig-15", "figure", "Figure 15: Hessian spectra of the global model at alpha = 0.5", fig15_runs),
    ("fedsam-fig-16", "figure", "Figure 16: top Hessian eigenvalue of each client's model, all settings",
     _recorded(FIG16_PANELS)),
):
    register_artifact(Artifact(_id, PAPER, _kind, _title, _runs))
