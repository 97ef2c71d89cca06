"""Geometry of stored runs: Hessian spectra, loss surfaces and planes through models.

The analysis pages read the models a run stored (its final global model, or the client
models of a snapshot round) and never retrain them.  This module turns the tools of
:mod:`flcore.analysis` into the quantities the pages and the claims need, with the
protocol of each scale in one place (:data:`GEOMETRY`), and caches what is expensive on
disk, so that a spectrum computed for one page (or for a claim's verdict) is read back by
every other page that shows it:

- :func:`hessian_spectrum`: the top-``k`` eigenvalues of the Hessian of the training loss
  at a run's final global model (the FedSAM paper's Table 1, Figs. 5 and 15; the
  ``lambda_max`` metric of the claims is its first entry);
- :func:`random_surface`: the loss on a plane spanned by two filter-normalised random
  directions around a model (Li et al. 2018; the FedSAM paper's Fig. 1);
- :func:`model_plane`: the train loss and the test error on the plane through three
  models (Garipov et al. 2018; the FedSAM paper's Figs. 2, 12-14), for the final global
  models of three runs (:func:`global_models_plane`) or three client models of one
  snapshot round (:func:`client_models_plane`);
- :func:`probe_history`: a training-time probe's per-client record as a long table
  (Figs. 4, 7 and 16).

Protocol decisions (the paper does not state them; App. C.3, C.4):

- The Hessian is that of the mean cross-entropy on a fixed random subset of the training
  set (the same subset for every run on the same data: :func:`flcore.analysis.io.split_data`
  with seed 0).  At the ``paper`` scale it is the paper's method, deflated power iteration
  with at most 20 products per eigenvalue, top 50; below it Lanczos (full
  re-orthogonalisation) gives the same top eigenvalues with far fewer products, and fewer
  of them are kept (10 at ``small``): the page says so.
- Loss surfaces use the training subset for the loss and the test set (a subset below
  ``paper``) for the error; random directions are filter-normalised with biases zeroed
  (Li et al.'s ``ignore='biasbn'``), over ``[-1, 1]^2``.

Cache: ``<cache_dir()>/analysis/<kind>-<key>.npz`` (:func:`flcore.data.cache.cache_dir`),
the key being the SHA-256 of the stored model file(s) and every setting that changes the
result, so a retrained model or another protocol never reads a stale value.

Threads: on a CPU the computations run on one thread (``_one_thread``).  The
MNIST-1D models of the ``small`` scale gain nothing from more, and on a shared machine
competing threads cost an order of magnitude (one ``small`` spectrum on a loaded 2-core
machine: 9-18 s on one thread, 160-240 s on two).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from flcore.analysis.evaluation import DatasetEvaluator
from flcore.analysis.hvp import DatasetHVP
from flcore.analysis.io import load_run
from flcore.analysis.landscape import grid_points, landscape_2d, loss_plane, random_directions
from flcore.analysis.recording import load_snapshot, snapshot_path, snapshot_rounds_of
from flcore.analysis.spectrum import top_eigenvalues
from flcore.cpus import one_torch_thread
from flcore.data.cache import cache_dir, cache_key, load_arrays, save_arrays
from flcore.devices import resolve_device
from flcore.reproduction.lookup import by_scale
from flcore.store.run import CONFIG_FILE, FINAL_MODEL_FILE

__all__ = [
    "GEOMETRY",
    "GeometrySettings",
    "Surface",
    "client_majority_class",
    "client_models_plane",
    "client_spread",
    "geometry_settings",
    "global_models_plane",
    "hessian_spectrum",
    "lambda_max_of_row",
    "model_plane",
    "probe_history",
    "random_surface",
    "sharpness_ratio",
    "spectrum_of_row",
]

CACHE_VERSION = 1


@dataclass(frozen=True)
class GeometrySettings:
    """How the geometry of a stored model is measured at one scale (module docstring).

    ``hessian_samples``/``loss_samples``/``error_samples``: sizes of the training subset
    for the Hessian and the train loss and of the test subset for the error (None: all).
    ``hessian_method``: ``"power"`` (``iters`` products per eigenvalue) or ``"lanczos"``
    (``iters`` steps in all).  ``surface_grid``/``plane_grid``: points per axis.
    """
    hessian_samples: int | None
    hessian_method: str
    top_k: int
    iters: int
    surface_grid: int
    surface_span: float
    plane_grid: int
    loss_samples: int | None
    error_samples: int | None

    def __post_init__(self):
        if self.hessian_method not in ("power", "lanczos"):
            raise ValueError(f"hessian_method must be 'power' or 'lanczos', got {self.hessian_method!r}")
        if self.top_k < 1 or self.iters < 1:
            raise ValueError(f"top_k and iters must be >= 1, got {self.top_k}, {self.iters}")
        if self.hessian_method == "lanczos" and self.iters < self.top_k:
            raise ValueError(f"Lanczos needs iters >= top_k, got {self.iters} < {self.top_k}")


#: The protocol per scale.  ``paper``: App. C.3/C.4 (top 50 by power iteration, 20
#: iterations; N = 21 grid points); the training subset of 5,000 images is ours.
GEOMETRY = {
    "smoke": GeometrySettings(hessian_samples=200, hessian_method="lanczos", top_k=5, iters=15,
                              surface_grid=5, surface_span=1.0, plane_grid=5, loss_samples=200,
                              error_samples=200),
    "small": GeometrySettings(hessian_samples=512, hessian_method="lanczos", top_k=10, iters=30,
                              surface_grid=11, surface_span=1.0, plane_grid=11, loss_samples=2000,
                              error_samples=2000),
    "paper": GeometrySettings(hessian_samples=5000, hessian_method="power", top_k=50, iters=20,
                              surface_grid=21, surface_span=1.0, plane_grid=21, loss_samples=10000,
                              error_samples=None),
}


def geometry_settings(scale: str) -> GeometrySettings:
    return by_scale(GEOMETRY, scale)


# --------------------------------------------------------------------------- cache

def _one_thread(device: str):
    """Run the body on one CPU thread when ``device`` is a CPU (module docstring)."""
    return one_torch_thread(resolve_device(device).type == "cpu")


def _on_one_thread(device: str):
    """Decorator form of :func:`_one_thread`."""
    def wrap(function):
        def run(*args, **kwargs):
            with _one_thread(device):
                return function(*args, **kwargs)
        return run
    return wrap


def _file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _cached(kind: str, params: dict, compute: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """``compute()`` (a dict of arrays), read from the cache when ``params`` were seen."""

    path = cache_dir() / "analysis" / f"{kind}-{cache_key({**params, 'version': CACHE_VERSION})[:40]}.npz"
    hit = load_arrays(path)
    if hit is not None:
        return hit
    arrays = {name: np.asarray(value) for name, value in compute().items()}
    save_arrays(path, arrays)
    return arrays


def _cached_at_final_model(kind: str, run_dir, params: dict, compute, device: str,
                           data_root: str | None) -> dict[str, np.ndarray]:
    """``compute(loaded)`` at the final global model of the run in ``run_dir`` (loaded on
    ``device``, on one CPU thread), cached under ``params`` and the digests of the run's
    final model and config."""
    key = {"model": _file_digest(_final_model_file(run_dir)), "config": _file_digest(Path(run_dir) / "config.json"),
           **params}

    @_on_one_thread(device)
    def at_final_model():
        return compute(load_run(run_dir, device=device, which="final", data_root=data_root))

    return _cached(kind, key, at_final_model)


def _final_model_file(run_dir) -> Path:

    path = Path(run_dir) / FINAL_MODEL_FILE
    if not path.is_file():
        raise FileNotFoundError(f"run {run_dir} has no {FINAL_MODEL_FILE} (is it finished?)")
    return path


def _scale_of(run_dir) -> str:

    config = json.loads((Path(run_dir) / CONFIG_FILE).read_text())
    return config.get("scale") or "small"


# --------------------------------------------------------------------------- Hessian

def hessian_spectrum(run_dir, settings: GeometrySettings | None = None, device: str = "cpu",
                     data_root: str | None = None, seed: int = 0) -> np.ndarray:
    """The top ``settings.top_k`` Hessian eigenvalues (largest first, float64) of the
    training loss at the final global model of the run in ``run_dir`` (cached).

    ``settings`` default to the run's own scale.  ``seed`` drives the start vector.
    """
    settings = settings or geometry_settings(_scale_of(run_dir))
    params = {"samples": settings.hessian_samples, "method": settings.hessian_method, "k": settings.top_k,
              "iters": settings.iters, "seed": seed}

    def compute(loaded):
        x, y = loaded.data("train", settings.hessian_samples, seed=0)
        hvp = DatasetHVP(loaded.flat, loaded.w, x, y, batch_size=min(2048, x.shape[0]))
        tol = 1e-4 if settings.hessian_method == "power" else 0.0
        result = top_eigenvalues(hvp, k=settings.top_k, method=settings.hessian_method, iters=settings.iters,
                                 tol=tol, seed=seed, return_vectors=False)
        values = result.eigenvalues.numpy()
        return {"eigenvalues": np.sort(values)[::-1].copy()}

    return _cached_at_final_model("spectrum", run_dir, params, compute, device, data_root)["eigenvalues"]


def sharpness_ratio(eigenvalues: Sequence[float], j: int = 5) -> float:
    """``lambda_max / lambda_j`` (the FedSAM paper's Table 1 uses ``j = 5``, after Jastrzebski
    et al.); NaN when fewer than ``j`` eigenvalues are given or ``lambda_j`` is 0."""
    values = np.sort(np.asarray(eigenvalues, dtype=float))[::-1]
    if len(values) < j or values[j - 1] == 0:
        return float("nan")
    return float(values[0] / values[j - 1])


def spectrum_of_row(row: dict, device: str = "cpu", data_root: str | None = None) -> np.ndarray | None:
    """:func:`hessian_spectrum` of a finished run's final global model (a row of
    :func:`flcore.reproduction.runner.results_frame`) at the protocol of the run's scale:
    the spectrum the ``lambda_max`` claim metric reads (:func:`lambda_max_of_row`), so a
    page that shows it reads the verdict's cached value; None without a stored final model.
    ``device`` and ``data_root`` change where it is computed, not the result's cache key."""
    run_dir = row.get("run_dir")
    if not run_dir or row.get("status") != "finished" or not (Path(run_dir) / "final_model.pt").is_file():
        return None
    return hessian_spectrum(run_dir, device=device, data_root=data_root)


def lambda_max_of_row(row: dict) -> float | None:
    """The ``lambda_max`` claim metric: the top Hessian eigenvalue of a finished run's
    final global model (a row of :func:`flcore.reproduction.runner.results_frame`), at the
    protocol of the run's scale (:func:`spectrum_of_row`); None without a stored final model."""
    spectrum = spectrum_of_row(row)
    return None if spectrum is None else float(spectrum[0])


# --------------------------------------------------------------------------- surfaces

@dataclass
class Surface:
    """A 2-D grid of train loss and test error: ``loss[i, j]``/``error[i, j]`` at
    ``(xs[i], ys[j])``; for a plane, ``coords [3, 2]`` are the three models' positions
    and ``model_loss``/``model_error [4]`` their values (then their average's)."""

    xs: np.ndarray
    ys: np.ndarray
    loss: np.ndarray
    error: np.ndarray
    coords: np.ndarray | None = None
    #: train loss and test error at the three models (exact, not read off the grid) and,
    #: as a fourth entry, at their average
    model_loss: np.ndarray | None = None
    model_error: np.ndarray | None = None

    @property
    def mean_coord(self) -> np.ndarray | None:
        return None if self.coords is None else self.coords.mean(0)


def _evaluators(loaded, settings: GeometrySettings):

    x_train, y_train = loaded.data("train", settings.loss_samples, seed=0)
    x_test, y_test = loaded.data("test", settings.error_samples, seed=0)
    return DatasetEvaluator(loaded.flat, x_train, y_train), DatasetEvaluator(loaded.flat, x_test, y_test)


def random_surface(run_dir, settings: GeometrySettings | None = None, device: str = "cpu",
                   data_root: str | None = None, seed: int = 0) -> Surface:
    """Train loss and test error of the run's final global model on the plane
    ``w + a d1 + b d2`` with filter-normalised random ``d1, d2`` (seed ``seed``) over
    ``[-span, span]^2`` (the FedSAM paper's Fig. 1, after Li et al.; cached)."""

    settings = settings or geometry_settings(_scale_of(run_dir))
    params = {"grid": settings.surface_grid, "span": settings.surface_span, "loss_samples": settings.loss_samples,
              "error_samples": settings.error_samples, "seed": seed}

    def compute(loaded):
        train, test = _evaluators(loaded, settings)
        d1, d2 = random_directions(loaded.flat, loaded.w, 2, seed=seed)
        xs = grid_points(settings.surface_span, settings.surface_grid)
        loss = landscape_2d(train, loaded.w, d1, d2, xs, xs)
        error = landscape_2d(test, loaded.w, d1, d2, xs, xs)
        return {"xs": xs.numpy(), "ys": xs.numpy(), "loss": loss.loss.numpy(), "error": error.error.numpy()}

    data = _cached_at_final_model("surface", run_dir, params, compute, device, data_root)
    return Surface(data["xs"], data["ys"], data["loss"], data["error"])


def model_plane(loaded, models: Sequence[torch.Tensor], settings: GeometrySettings) -> Surface:
    """Train loss and test error on the plane through the three ``models`` (flat vectors
    of ``loaded``'s architecture; the first at the origin, the second on the x axis), on
    a ``plane_grid``-point grid with Garipov's 20% margin (not cached; see the callers)."""

    if len(models) != 3:
        raise ValueError(f"a plane needs three models, got {len(models)}")
    w1, w2, w3 = (m.to(loaded.w.device, loaded.w.dtype) for m in models)
    train, test = _evaluators(loaded, settings)
    loss = loss_plane(train, w1, w2, w3, grid=settings.plane_grid)
    error = loss_plane(test, w1, w2, w3, xs=loss.xs, ys=loss.ys)
    points = torch.stack([w1, w2, w3, (w1 + w2 + w3) / 3])
    return Surface(loss.xs.numpy(), loss.ys.numpy(), loss.loss.numpy(), error.error.numpy(),
                   loss.plane.coords.numpy(), train(points)[0].cpu().numpy(), test(points)[1].cpu().numpy())


def _surface_arrays(surface: Surface) -> dict[str, np.ndarray]:
    return {"xs": surface.xs, "ys": surface.ys, "loss": surface.loss, "error": surface.error,
            "coords": surface.coords, "model_loss": surface.model_loss, "model_error": surface.model_error}


def _surface_of(data: dict) -> Surface:
    return Surface(data["xs"], data["ys"], data["loss"], data["error"], data["coords"], data["model_loss"],
                   data["model_error"])


def global_models_plane(run_dirs: Sequence, settings: GeometrySettings | None = None, device: str = "cpu",
                        data_root: str | None = None) -> Surface:
    """The plane through the final global models of three runs on the same data and
    model (FedSAM paper Figs. 2a/b and 14; cached).  Their data sets must be the same:
    the loss is measured on the first run's."""

    if len(run_dirs) != 3:
        raise ValueError(f"a plane needs three runs, got {len(run_dirs)}")
    settings = settings or geometry_settings(_scale_of(run_dirs[0]))
    params = {"models": [_file_digest(_final_model_file(d)) for d in run_dirs],
              "config": _file_digest(Path(run_dirs[0]) / "config.json"),
              "grid": settings.plane_grid, "loss_samples": settings.loss_samples,
              "error_samples": settings.error_samples}

    @_on_one_thread(device)
    def compute():
        first = load_run(run_dirs[0], device=device, which="final", data_root=data_root)
        models = [first.w]
        for run_dir in run_dirs[1:]:
            other = load_run(run_dir, device=device, which="final", data_root=data_root, dataset=first.dataset)
            _same_data(first, other)
            models.append(other.w)
        return _surface_arrays(model_plane(first, models, settings))

    return _surface_of(_cached("plane", params, compute))


def _same_data(a, b) -> None:
    keys = ("dataset", "num_samples", "model")
    mismatch = [k for k in keys if getattr(a.config, k, None) != getattr(b.config, k, None)]
    if mismatch:
        raise ValueError(f"runs {a.path.name} and {b.path.name} differ in {', '.join(mismatch)}: "
                         "their models do not share one loss surface")


def client_models_plane(run_dir, round: int | None = None, clients: Sequence[int] = (0, 1, 2),
                        settings: GeometrySettings | None = None, device: str = "cpu",
                        data_root: str | None = None) -> tuple[Surface, list[int]]:
    """The plane through three client models of a snapshot round of one run (the round's
    ``clients``-th sampled clients after local training; default round: the last
    snapshot).  Returns the surface and the clients' ids (FedSAM paper Figs. 2c/d, 12,
    13; cached)."""

    if len(clients) != 3:
        raise ValueError(f"a plane needs three clients, got {len(clients)}")
    if round is None:
        rounds = snapshot_rounds_of(run_dir)
        if not rounds:
            raise FileNotFoundError(f"run {run_dir} saved no snapshot (set snapshot_rounds in its config)")
        round = rounds[-1]
    settings = settings or geometry_settings(_scale_of(run_dir))
    snapshot = load_snapshot(run_dir, round)
    available = int(snapshot["client_models"].shape[0])
    if max(clients) >= available or min(clients) < 0:
        raise ValueError(f"clients must be positions 0..{available - 1} of the round's {available} clients, "
                         f"got {list(clients)}")
    ids = [int(snapshot["client_ids"][c]) for c in clients]
    params = {"snapshot": _file_digest(snapshot_path(run_dir, round)), "clients": list(clients),
              "config": _file_digest(Path(run_dir) / "config.json"), "grid": settings.plane_grid,
              "loss_samples": settings.loss_samples, "error_samples": settings.error_samples}

    @_on_one_thread(device)
    def compute():
        loaded = load_run(run_dir, device=device, which="auto", data_root=data_root)
        models = [snapshot["client_models"][c] for c in clients]
        return _surface_arrays(model_plane(loaded, models, settings))

    return _surface_of(_cached("client-plane", params, compute)), ids


# --------------------------------------------------------------------------- probes

def probe_history(metrics: pd.DataFrame, name: str) -> pd.DataFrame:
    """Long table ``round, slot, client, value`` of a per-client probe in a run's
    metric rows (empty when the run did not record it).

    Two record shapes: a list over *all* clients (``feature_norms``: slot = client id),
    or ``name.values`` with the round's client ids in ``name.clients``
    (``client_lambda_max``: slot = position among the round's sampled clients).
    """
    columns = ["round", "slot", "client", "value"]
    if metrics is None or len(metrics) == 0:
        return pd.DataFrame(columns=columns)
    rows = []
    if f"{name}.values" in metrics.columns:
        ids_column = metrics[f"{name}.clients"] if f"{name}.clients" in metrics.columns else None
        for i, (round_, values) in enumerate(zip(metrics["round"], metrics[f"{name}.values"])):
            if not isinstance(values, (list, tuple)):
                continue
            ids = ids_column.iloc[i] if ids_column is not None else list(range(len(values)))
            rows.extend((int(round_), slot, int(client), _number(v))
                        for slot, (client, v) in enumerate(zip(ids, values)))
    elif name in metrics.columns:
        for round_, values in zip(metrics["round"], metrics[name]):
            if not isinstance(values, (list, tuple)):
                continue
            rows.extend((int(round_), client, client, _number(v)) for client, v in enumerate(values))
    return pd.DataFrame(rows, columns=columns)


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def with_settings(scale: str, **changes) -> GeometrySettings:
    """The scale's settings with some fields changed (e.g. fewer eigenvalues)."""
    return replace(geometry_settings(scale), **changes)


def settings_rows(settings: GeometrySettings) -> list[dict]:
    """The settings as ``setting, value`` rows for a page's table."""
    return [{"setting": key, "value": "all" if value is None else value} for key, value in asdict(settings).items()]


def client_majority_class(run_dir, data_root: str | None = None) -> np.ndarray:
    """The most frequent label of each client's training data in a run's partition
    (``[clients]``; -1 for an empty client): at alpha = 0 a client's only class."""

    loaded = load_run(run_dir, device="cpu", which="auto", data_root=data_root)
    labels = loaded.dataset.train_y
    out = []
    for indices in loaded.client_indices():
        out.append(int(torch.bincount(labels[indices]).argmax()) if len(indices) else -1)
    return np.asarray(out)


def client_spread(history: pd.DataFrame) -> float:
    """Mean over recorded rounds of the coefficient of variation (std / mean) of a
    per-client probe across clients: how unevenly the model treats the clients."""
    if history.empty:
        return float("nan")
    per_round = history.groupby("round")["value"].agg(lambda v: v.std(ddof=0) / v.mean() if v.mean() else np.nan)
    return float(per_round.mean())
