"""Loss landscapes: filter-normalised random directions, 1D/2D grids, the plane through
three models.

Random directions (Li et al. 2018, ``tomgoldstein/loss-landscape``)
--------------------------------------------------------------------
:func:`random_direction` draws ``d ~ N(0, I)`` (CPU generator, moved to the device) and
:func:`filter_normalize` rescales it filter by filter: for every parameter tensor with
two or more dimensions, each *filter* (a slice along dim 0: a conv output channel, a
row of a linear weight) of ``d`` gets the norm of the same filter of ``w``,
``d_f <- d_f * |w_f| / (|d_f| + 1e-10)``.  One-dimensional tensors (biases, GroupNorm
affine parameters) are set to zero, as Li et al. do with ``ignore='biasbn'``, the
setting of their paper's figures (``one_d="norm"`` instead gives them the norm of the
whole tensor).  ``normalization="layer"`` (per tensor), ``"model"`` (whole vector) and
``"none"`` are there for comparison.  Li et al. do not orthogonalise the two directions
(random high-dimensional vectors are nearly orthogonal); neither do we.

Surfaces: ``L(w + a d1 + b d2)`` on a grid (default ``a, b`` in ``[-1, 1]`` with 21
points each, the FedGloSS paper's range and the FedSAM paper's resolution).  The
returned arrays are indexed ``[i, j]`` = point ``(xs[i], ys[j])``; plotting with
``contour(xs, ys, Z)`` needs ``Z.T`` (the helpers in :mod:`flcore.report.analysis_plots` do
that).  A client's model on its own data and on the global data (FedGloSS Figs. 2, 5,
10, 11) is :func:`landscapes_on_datasets` with the same directions and two evaluators.

The plane through three models (Garipov et al. 2018, the FedSAM paper App. C.3, FedIMA)
------------------------------------------------------------------------------------------
``u = t2 - t1``, ``v = (t3 - t1) - <t3 - t1, u>/|u|^2 u``, ``u^ = u/|u|``, ``v^ = v/|v|``;
point ``(x, y)`` is ``P = t1 + x u^ + y v^`` (``t1`` at the origin, ``t2`` on the x
axis).  The models' coordinates are ``(0, 0)``, ``(|u|, 0)`` and ``(<t3 - t1, u^>, |v|)``,
their mean the mean of those.  Grid extent (not stated by the papers): Garipov's code's
default margin of 0.2, i.e. each axis spans the three models' range extended by 20% of
that range on both sides; the grid is ``grid x grid`` points (default 21, the FedSAM
paper's N).

Grids are evaluated through an evaluator ``W [M, P] -> (loss [M], error [M])``
(:class:`flcore.analysis.evaluation.DatasetEvaluator` for a model on data), in chunks of
points so that memory stays at ``chunk x P``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from flcore.analysis.evaluation import Evaluator, evaluate_points
from flcore.flat import FlatModel
from flcore.seeding import generator as derived_generator

__all__ = [
    "Landscape1D",
    "Landscape2D",
    "Plane",
    "PlaneLandscape",
    "filter_normalize",
    "filter_norms",
    "grid_points",
    "landscape_1d",
    "landscape_2d",
    "landscapes_on_datasets",
    "loss_plane",
    "plane_through",
    "random_direction",
    "random_directions",
    "shared_direction_landscapes",
]

NORMALIZATIONS = ("filter", "layer", "model", "none")
_EPS = 1e-10


# --------------------------------------------------------------------------- directions

def _segments(flat: FlatModel):
    for name, shape, start in zip(flat.names, flat.shapes, flat.offsets):
        yield name, shape, start, start + shape.numel()


def filter_norms(flat: FlatModel, v: torch.Tensor) -> dict[str, torch.Tensor]:
    """Per-filter L2 norms of ``v`` for every parameter tensor: ``[shape[0]]`` for tensors
    with 2+ dimensions, a single norm ``[1]`` for 1-D tensors."""
    out = {}
    for name, shape, a, b in _segments(flat):
        seg = v[a:b]
        out[name] = seg.view(shape[0], -1).norm(dim=1) if len(shape) >= 2 else seg.norm().reshape(1)
    return out


def filter_normalize(flat: FlatModel, direction: torch.Tensor, w: torch.Tensor,
                     normalization: str = "filter", one_d: str = "zero") -> torch.Tensor:
    """``direction`` rescaled to the scale of ``w`` (a new tensor; see module docstring).

    ``normalization``: ``"filter"`` (Li et al.), ``"layer"``, ``"model"`` or ``"none"``;
    ``one_d``: ``"zero"`` (Li et al.'s ``ignore='biasbn'``) or ``"norm"`` (match the
    whole tensor's norm) for 1-D tensors under ``filter``/``layer``.
    """
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {', '.join(NORMALIZATIONS)}, got {normalization!r}")
    if one_d not in ("zero", "norm"):
        raise ValueError(f"one_d must be 'zero' or 'norm', got {one_d!r}")
    if direction.shape != w.shape or direction.shape != (flat.num_params,):
        raise ValueError(f"direction and w must both have shape [{flat.num_params}]")
    if normalization == "none":
        return direction.clone()
    if normalization == "model":
        return direction * (w.norm() / (direction.norm() + _EPS))
    out = torch.empty_like(direction)
    for _, shape, a, b in _segments(flat):
        d, p = direction[a:b], w[a:b]
        if len(shape) < 2:
            out[a:b] = 0.0 if one_d == "zero" else d * (p.norm() / (d.norm() + _EPS))
        elif normalization == "layer":
            out[a:b] = d * (p.norm() / (d.norm() + _EPS))
        else:
            d2, p2 = d.view(shape[0], -1), p.view(shape[0], -1)
            scale = p2.norm(dim=1, keepdim=True) / (d2.norm(dim=1, keepdim=True) + _EPS)
            out[a:b] = (d2 * scale).reshape(-1)
    return out


def random_direction(flat: FlatModel, w: torch.Tensor, seed=0, index: int = 0,
                     normalization: str = "filter", one_d: str = "zero") -> torch.Tensor:
    """A normalised random direction at ``w``.  ``seed`` (int, hashed with ``index``) or a
    ``torch.Generator``; direction ``index`` of a seed is the same whatever else is drawn."""
    gen = (
        seed if isinstance(seed, torch.Generator) else derived_generator(int(seed), "analysis/direction", client=index)
    )
    d = torch.randn(flat.num_params, generator=gen, dtype=torch.float32).to(device=w.device, dtype=w.dtype)
    return filter_normalize(flat, d, w, normalization=normalization, one_d=one_d)


def random_directions(flat: FlatModel, w: torch.Tensor, num: int = 2, seed=0,
                      normalization: str = "filter", one_d: str = "zero") -> torch.Tensor:
    """``num`` independent normalised random directions ``[num, P]`` (indices 0..num-1)."""
    return torch.stack([random_direction(flat, w, seed, i, normalization, one_d) for i in range(num)])


# --------------------------------------------------------------------------- grids

def grid_points(span: float = 1.0, num: int = 21, center: float = 0.0) -> torch.Tensor:
    """``num`` evenly spaced coordinates in ``[center - span, center + span]`` (float64)."""
    if num < 1:
        raise ValueError(f"num must be >= 1, got {num}")
    if num == 1:
        return torch.tensor([center], dtype=torch.float64)
    return torch.linspace(center - span, center + span, num, dtype=torch.float64)


@dataclass
class Landscape1D:
    """``loss[i]``/``error[i]`` at ``w + alphas[i] d`` (float64, CPU; error may be None)."""

    alphas: torch.Tensor
    loss: torch.Tensor
    error: torch.Tensor | None

    def to_dict(self) -> dict:
        return {"alphas": self.alphas.tolist(), "loss": self.loss.tolist(),
                "error": None if self.error is None else self.error.tolist()}


@dataclass
class Landscape2D:
    """``loss[i, j]``/``error[i, j]`` at grid point ``(xs[i], ys[j])`` (float64, CPU)."""

    xs: torch.Tensor
    ys: torch.Tensor
    loss: torch.Tensor
    error: torch.Tensor | None

    def to_dict(self) -> dict:
        return {"xs": self.xs.tolist(), "ys": self.ys.tolist(), "loss": self.loss.tolist(),
                "error": None if self.error is None else self.error.tolist()}


def _as_coords(values, name: str) -> torch.Tensor:
    t = torch.as_tensor(values, dtype=torch.float64).reshape(-1)
    if t.numel() == 0:
        raise ValueError(f"{name} is empty")
    return t


def _evaluate_combinations(evaluate: Evaluator, origin: torch.Tensor, basis: torch.Tensor,
                           coords: torch.Tensor, chunk: int):
    """Loss/error at ``origin + coords[m] @ basis`` for every row of ``coords [M, D]``."""
    basis = basis.to(origin.dtype)
    losses, errors = [], []
    for start in range(0, coords.shape[0], chunk):
        c = coords[start:start + chunk].to(device=origin.device, dtype=origin.dtype)
        W = origin[None] + c @ basis
        loss, error = evaluate_points(evaluate, W)
        losses.append(loss.cpu())
        errors.append(None if error is None else error.cpu())
    loss = torch.cat(losses)
    error = None if any(e is None for e in errors) else torch.cat(errors)
    return loss, error


def landscape_1d(evaluate: Evaluator, w: torch.Tensor, direction: torch.Tensor,
                 alphas=None, chunk: int = 16) -> Landscape1D:
    """``L(w + a d)`` for ``a`` in ``alphas`` (default 21 points in ``[-1, 1]``)."""
    alphas = grid_points() if alphas is None else _as_coords(alphas, "alphas")
    loss, error = _evaluate_combinations(evaluate, w, direction[None], alphas[:, None], chunk)
    return Landscape1D(alphas, loss, error)


def landscape_2d(evaluate: Evaluator, w: torch.Tensor, d1: torch.Tensor, d2: torch.Tensor,
                 xs=None, ys=None, chunk: int = 16) -> Landscape2D:
    """``L(w + a d1 + b d2)`` on the grid ``xs x ys`` (default 21 x 21 in ``[-1, 1]^2``)."""
    xs = grid_points() if xs is None else _as_coords(xs, "xs")
    ys = grid_points() if ys is None else _as_coords(ys, "ys")
    coords = torch.cartesian_prod(xs, ys).reshape(-1, 2)
    loss, error = _evaluate_combinations(evaluate, w, torch.stack([d1, d2]), coords, chunk)
    shape = (xs.numel(), ys.numel())
    return Landscape2D(xs, ys, loss.view(shape), None if error is None else error.view(shape))


def landscapes_on_datasets(evaluators: dict, w: torch.Tensor, d1: torch.Tensor, d2: torch.Tensor,
                           xs=None, ys=None, chunk: int = 16) -> dict:
    """The same surface (same ``w``, directions and grid) under several evaluators, e.g.
    ``{"local": client_evaluator, "global": global_evaluator}`` for a client's model on
    its own data and on the global data (FedGloSS Figs. 2, 5, 10, 11)."""
    return {name: landscape_2d(ev, w, d1, d2, xs, ys, chunk) for name, ev in evaluators.items()}


def shared_direction_landscapes(evaluate: Evaluator, flat: FlatModel, models: dict, seed=0, xs=None, ys=None,
                                normalization: str = "filter", one_d: str = "zero",
                                chunk: int = 16) -> dict:
    """Surfaces of several models along *shared* random directions: ``{name: Landscape2D}``.

    Every model gets the same two Gaussian draws (directions 0 and 1 of ``seed``), each
    rescaled to that model's own filters (:func:`filter_normalize`), as Li et al. compare
    the minima of different optimizers: the same random plane, scaled per model, so the
    surfaces are comparable in shape (the FedGloSS paper's Figs. 1, 6, 12-14: FedGloSS as a
    net over another method's solid surface).  ``models``: ``{name: w [P]}``; ``evaluate``:
    one evaluator (the same data) for all of them.
    """
    if not models:
        raise ValueError("models is empty")
    out = {}
    for name, w in models.items():
        d1, d2 = random_directions(flat, w, 2, seed, normalization, one_d)
        out[name] = landscape_2d(evaluate, w, d1, d2, xs, ys, chunk)
    return out


# --------------------------------------------------------------------------- plane

@dataclass
class Plane:
    """The plane ``origin + x u + y v`` through three models (``u``, ``v`` orthonormal).

    ``coords [3, 2]`` (float64, CPU) are the three models' coordinates.
    """

    origin: torch.Tensor
    u: torch.Tensor
    v: torch.Tensor
    coords: torch.Tensor

    def point(self, x: float, y: float) -> torch.Tensor:
        return self.origin + float(x) * self.u + float(y) * self.v

    def points(self, xy: torch.Tensor) -> torch.Tensor:
        xy = torch.as_tensor(xy, dtype=self.origin.dtype, device=self.origin.device)
        return self.origin[None] + xy @ torch.stack([self.u, self.v])

    def project(self, w: torch.Tensor) -> torch.Tensor:
        """Coordinates ``(x, y)`` of the orthogonal projection of ``w`` onto the plane."""
        d = (w - self.origin).double()
        return torch.stack([d @ self.u.double(), d @ self.v.double()]).cpu()

    @property
    def mean_coord(self) -> torch.Tensor:
        """Coordinates of the three models' average (FedIMA's white cross)."""
        return self.coords.mean(0)


def plane_through(w1: torch.Tensor, w2: torch.Tensor, w3: torch.Tensor) -> Plane:
    """The Garipov plane through ``w1`` (origin), ``w2`` (on the x axis) and ``w3``."""
    u = (w2 - w1).double()
    r = (w3 - w1).double()
    u_norm = u.norm()
    if float(u_norm) == 0.0:
        raise ValueError("w1 and w2 are equal: they do not define a plane")
    v = r - (r @ u) / (u_norm ** 2) * u
    v_norm = v.norm()
    if float(v_norm) <= 1e-12 * float(max(u_norm, r.norm())):
        raise ValueError("the three models are collinear: they do not define a plane")
    u_hat, v_hat = u / u_norm, v / v_norm
    coords = torch.tensor([[0.0, 0.0], [float(u_norm), 0.0], [float(r @ u_hat), float(v_norm)]],
                          dtype=torch.float64)
    return Plane(w1.clone(), u_hat.to(w1.dtype), v_hat.to(w1.dtype), coords)


@dataclass
class PlaneLandscape(Landscape2D):
    """A :class:`Landscape2D` on a :class:`Plane`, with the models' coordinates."""

    plane: Plane | None = None

    @property
    def coords(self) -> torch.Tensor:
        return self.plane.coords

    @property
    def mean_coord(self) -> torch.Tensor:
        return self.plane.mean_coord

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["model_coords"] = self.plane.coords.tolist()
        out["mean_coord"] = self.plane.mean_coord.tolist()
        return out


def _plane_axis(values: torch.Tensor, margin: float, num: int) -> torch.Tensor:
    lo, hi = float(values.min()), float(values.max())
    width = hi - lo
    return torch.linspace(lo - margin * width, hi + margin * width, num, dtype=torch.float64)


def loss_plane(evaluate: Evaluator, w1: torch.Tensor, w2: torch.Tensor, w3: torch.Tensor,
               grid: int = 21, margin: float = 0.2, xs=None, ys=None, chunk: int = 16) -> PlaneLandscape:
    """Loss/error on the plane through three models (see module docstring).

    ``xs``/``ys`` (plane coordinates) override the default ``grid x grid`` extent.
    """
    if grid < 2 and (xs is None or ys is None):
        raise ValueError(f"grid must be >= 2, got {grid}")
    if margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    plane = plane_through(w1, w2, w3)
    xs = _plane_axis(plane.coords[:, 0], margin, grid) if xs is None else _as_coords(xs, "xs")
    ys = _plane_axis(plane.coords[:, 1], margin, grid) if ys is None else _as_coords(ys, "ys")
    surface = landscape_2d(evaluate, plane.origin, plane.u, plane.v, xs, ys, chunk)
    return PlaneLandscape(surface.xs, surface.ys, surface.loss, surface.error, plane=plane)
