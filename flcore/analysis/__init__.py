"""Geometry and analysis toolkit: Hessian spectra, loss landscapes, interpolation
barriers, LPF, flatness discrepancy, CKA, the FedIMA loss decomposition and training-time
probes (docs/design.md section 2: depends on models and data only, never on ``sim``).

Modules, one purpose each:

- :mod:`.hvp`: Hessian-vector products of a model's mean loss over a dataset
  (:class:`DatasetHVP`), and the ``hvp_fn(v) -> H v`` interface every spectral tool takes;
- :mod:`.spectrum`: power iteration with deflation, Lanczos, Hutchinson trace, SLQ density;
- :mod:`.evaluation`: loss/error of many parameter vectors on a dataset (evaluators),
  per-sample losses, outputs, full-dataset gradients;
- :mod:`.landscape`: filter-normalised directions, 1D/2D surfaces, the plane through
  three models;
- :mod:`.interpolation`: linear interpolation and the loss barrier;
- :mod:`.lpf`: Bisla et al.'s LPF and loss-vs-perturbation curves;
- :mod:`.flatness`: rho-ball sharpness and FedGF's flatness discrepancy Delta_F;
- :mod:`.cka`: linear CKA;
- :mod:`.decomposition`: FedIMA's TrainBias, HeterBias, Var, Cov (CKA), Locality;
- :mod:`.probes`: training-time probe functions and :class:`ProbeCallback`;
- :mod:`.io`: a stored run's model and data;

The command ``flcore analyze hessian|landscape|barrier|lpf`` (``flcore.cli.analyze``) and
its figures (``flcore.report.analysis_plots``) are built on these.

All randomness comes from explicit generators (``seed`` ints hashed with a purpose by
:func:`flcore.seeding.generator`, or a ``torch.Generator``); draws are made on the CPU so
CPU and CUDA see the same numbers.
"""
from flcore.analysis.cka import linear_cka, pairwise_cka
from flcore.analysis.decomposition import (
    bias_terms,
    cka_covariance,
    client_global_distance,
    client_outputs,
    ensemble_variance,
    loss_decomposition,
)
from flcore.analysis.evaluation import (
    DatasetEvaluator,
    evaluate_points,
    loss_and_grad,
    model_outputs,
    per_sample_losses,
)
from flcore.analysis.flatness import (
    FlatnessDiscrepancy,
    SharpnessResult,
    ball_ascent,
    flatness_discrepancy,
    flatness_discrepancy_from,
    sharpness,
)
from flcore.analysis.hvp import DatasetHVP, make_hvp, matrix_hvp
from flcore.analysis.interpolation import Interpolation, interpolate, loss_barrier
from flcore.analysis.io import LoadedRun, RunLoadError, client_indices, load_run, split_data
from flcore.analysis.landscape import (
    Landscape1D,
    Landscape2D,
    Plane,
    PlaneLandscape,
    filter_normalize,
    filter_norms,
    grid_points,
    landscape_1d,
    landscape_2d,
    landscapes_on_datasets,
    loss_plane,
    plane_through,
    random_direction,
    random_directions,
    shared_direction_landscapes,
)
from flcore.analysis.lpf import LPFResult, PerturbationCurve, lpf, perturbation_curve
from flcore.analysis.probes import (
    Probe,
    ProbeCallback,
    client_eigenvalue_probe,
    client_top_eigenvalue,
    delta_eps_probe,
    feature_norm_probe,
    feature_norms,
    global_perturbation,
    parameter_norm,
    parameter_norm_probe,
    perturbation_cosine,
    perturbation_drift,
    perturbation_probe,
    server_perturbation_error,
)
from flcore.analysis.spectrum import (
    EigenResult,
    LanczosResult,
    SpectralDensity,
    TraceResult,
    hutchinson_trace,
    lanczos,
    lanczos_eigenvalues,
    power_iteration,
    slq_density,
    top_eigenvalues,
)

__all__ = [
    "DatasetEvaluator",
    "DatasetHVP",
    "EigenResult",
    "FlatnessDiscrepancy",
    "Interpolation",
    "LPFResult",
    "LanczosResult",
    "Landscape1D",
    "Landscape2D",
    "LoadedRun",
    "PerturbationCurve",
    "Plane",
    "PlaneLandscape",
    "Probe",
    "ProbeCallback",
    "RunLoadError",
    "SharpnessResult",
    "SpectralDensity",
    "TraceResult",
    "ball_ascent",
    "bias_terms",
    "cka_covariance",
    "client_eigenvalue_probe",
    "client_global_distance",
    "client_indices",
    "client_outputs",
    "client_top_eigenvalue",
    "delta_eps_probe",
    "ensemble_variance",
    "evaluate_points",
    "feature_norm_probe",
    "feature_norms",
    "filter_normalize",
    "filter_norms",
    "flatness_discrepancy",
    "flatness_discrepancy_from",
    "global_perturbation",
    "grid_points",
    "hutchinson_trace",
    "interpolate",
    "lanczos",
    "lanczos_eigenvalues",
    "landscape_1d",
    "landscape_2d",
    "landscapes_on_datasets",
    "linear_cka",
    "load_run",
    "loss_and_grad",
    "loss_barrier",
    "loss_decomposition",
    "lpf",
    "loss_plane",
    "make_hvp",
    "matrix_hvp",
    "model_outputs",
    "pairwise_cka",
    "parameter_norm",
    "parameter_norm_probe",
    "per_sample_losses",
    "perturbation_cosine",
    "perturbation_curve",
    "perturbation_drift",
    "perturbation_probe",
    "plane_through",
    "power_iteration",
    "random_direction",
    "random_directions",
    "server_perturbation_error",
    "shared_direction_landscapes",
    "sharpness",
    "slq_density",
    "split_data",
    "top_eigenvalues",
]
