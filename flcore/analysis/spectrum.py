"""Hessian spectra from a matrix-vector function: top-k eigenvalues, trace and density.

All tools take ``hvp_fn(v [P]) -> H v [P]`` (see :mod:`flcore.analysis.hvp`): a
:class:`~flcore.analysis.hvp.DatasetHVP` for a model over a dataset, or any symmetric
operator (the tests use explicit matrices with known spectra).  They never form ``H``.

- :func:`power_iteration`: the top-k eigenpairs by power iteration with (Hotelling)
  deflation, the method of the FedSAM and FedGloSS papers ("stochastic power iteration,
  max 20 iterations", via ``pytorch-hessian-eigenthings``: eigenvalue ``j`` is found by
  power iteration on ``H - sum_{i<j} lambda_i v_i v_i^T``, stopping after ``iters``
  products or when the eigenvalue estimate changes by less than ``tol`` relatively
  (eigenthings' default error threshold 1e-4; ``tol=0`` always runs ``iters``)).  Start
  vectors are Gaussian (eigenthings draws uniform [0, 1) entries, a start with a large
  component along the all-ones vector; a Gaussian start favours no direction).
  Power iteration converges to the eigenvalues of *largest magnitude*; the result is
  sorted by magnitude, largest first, which for a Hessian at a trained model (whose
  dominant eigenvalues are positive) is largest first.
- :func:`lanczos_eigenvalues`: Ritz values of a Lanczos run with full
  re-orthogonalisation; ``which="LA"`` (largest algebraic, default), ``"SA"`` or ``"LM"``.
  Usually needs far fewer products than deflated power iteration for the same k.
- :func:`hutchinson_trace`: ``tr H ~ mean_s z_s^T H z_s`` with Rademacher (default) or
  Gaussian probes; exact for a diagonal ``H`` with Rademacher probes.
- :func:`slq_density`: stochastic Lanczos quadrature (Ghorbani et al. 2019, as in
  PyHessian): per run, the Ritz values of a Lanczos run from a normalised Rademacher
  vector are the nodes and the squared first components of the Ritz vectors the weights;
  :meth:`SpectralDensity.density` smooths them with a Gaussian kernel (PyHessian's
  ``sigma^2 = 1e-5`` by default, expressed as ``sigma``).  Each run's weights sum to 1,
  so the density integrates to 1.

Randomness (start vectors, probes) comes from explicit generators: pass ``seed`` (an
``int``, hashed with the tool's purpose by :func:`flcore.seeding.generator`) or a
``torch.Generator``.  Draws are made on the CPU and moved to the device, so CPU and CUDA
runs start from the same vectors.  Scalars are accumulated in float64.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from flcore.analysis.hvp import HVPFn
from flcore.seeding import generator as derived_generator

__all__ = [
    "EigenResult",
    "LanczosResult",
    "SpectralDensity",
    "TraceResult",
    "hutchinson_trace",
    "lanczos",
    "lanczos_eigenvalues",
    "power_iteration",
    "slq_density",
    "top_eigenvalues",
]

SeedLike = "int | torch.Generator"


# --------------------------------------------------------------------------- helpers

def _generator(seed, purpose: str) -> torch.Generator:
    if isinstance(seed, torch.Generator):
        return seed
    return derived_generator(int(seed), purpose)


def _operator_info(hvp_fn, dim, device, dtype, k: int | None = None):
    """The operator's vector length, device and dtype (given, else its attributes); with
    ``k``, the number of eigenpairs asked for, which may not exceed the length."""
    dim = dim if dim is not None else getattr(hvp_fn, "dim", None)
    if dim is None:
        raise ValueError("the vector length is unknown: pass dim= (or give hvp_fn a .dim attribute)")
    if k is not None and k > dim:
        raise ValueError(f"k={k} exceeds the dimension {dim}")
    device = torch.device(device) if device is not None else getattr(hvp_fn, "device", torch.device("cpu"))
    dtype = dtype if dtype is not None else getattr(hvp_fn, "dtype", torch.float32)
    return int(dim), device, dtype


def _randn(dim, gen, device, dtype) -> torch.Tensor:
    return torch.randn(dim, generator=gen, dtype=torch.float64).to(device=device, dtype=dtype)


def _rademacher(dim, gen, device, dtype) -> torch.Tensor:
    bits = torch.randint(0, 2, (dim,), generator=gen, dtype=torch.int8)
    return (bits.to(torch.float64) * 2 - 1).to(device=device, dtype=dtype)


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.dot(a.double(), b.double())


# --------------------------------------------------------------------------- power iteration

@dataclass
class EigenResult:
    """Eigenvalues (float64, CPU) with their vectors (``[k, P]`` on the operator's
    device, or None) and how many products each took."""

    eigenvalues: torch.Tensor
    eigenvectors: torch.Tensor | None
    iterations: list[int] = field(default_factory=list)
    num_hvps: int = 0

    def to_dict(self) -> dict:
        return {"eigenvalues": self.eigenvalues.tolist(), "iterations": list(self.iterations),
                "num_hvps": int(self.num_hvps)}


def power_iteration(hvp_fn: HVPFn, k: int = 1, iters: int = 20, tol: float = 1e-4, seed=0,
                    dim: int | None = None, device=None, dtype=None,
                    return_vectors: bool = True) -> EigenResult:
    """Top-``k`` eigenpairs (by magnitude) by power iteration with Hotelling deflation.

    Eigenvalue ``j`` runs power iteration on ``H_j = H - sum_{i<j} lambda_i v_i v_i^T``
    from a random Gaussian start orthogonalised against the vectors already found; each
    iteration is ``u = H_j v``, ``lambda = v^T u``, ``v = u / |u|``.  It stops after
    ``iters`` products, or earlier once ``|lambda - lambda_prev| <= tol * |lambda_prev|``
    (``tol=0``: never early).  Total cost: at most ``k * iters`` products.
    """
    if k < 1 or iters < 1:
        raise ValueError(f"k and iters must be >= 1, got k={k}, iters={iters}")
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    dim, device, dtype = _operator_info(hvp_fn, dim, device, dtype, k)
    gen = _generator(seed, "analysis/power_iteration")
    values: list[float] = []
    vectors: list[torch.Tensor] = []
    counts: list[int] = []
    for _ in range(k):
        v = _randn(dim, gen, device, dtype)
        for u in vectors:
            v = v - _dot(u, v).to(dtype) * u
        v = v / v.norm()
        lam_prev = None
        lam = 0.0
        done = 0
        for _ in range(iters):
            hv = hvp_fn(v)
            for lam_i, u in zip(values, vectors):
                hv = hv - (lam_i * _dot(u, v)).to(dtype) * u
            done += 1
            lam = float(_dot(v, hv))
            norm = hv.norm()
            if not torch.isfinite(norm) or float(norm) == 0.0:
                break  # v is in the (deflated) null space: lambda = 0 is exact
            v = hv / norm
            if lam_prev is not None and tol > 0 and abs(lam - lam_prev) <= tol * abs(lam_prev):
                break
            lam_prev = lam
        values.append(lam)
        vectors.append(v)
        counts.append(done)
    order = sorted(range(k), key=lambda i: -abs(values[i]))
    eigenvalues = torch.tensor([values[i] for i in order], dtype=torch.float64)
    eigenvectors = torch.stack([vectors[i] for i in order]) if return_vectors else None
    return EigenResult(eigenvalues, eigenvectors, [counts[i] for i in order], sum(counts))


# --------------------------------------------------------------------------- Lanczos

@dataclass
class LanczosResult:
    """The tridiagonal ``T`` of a Lanczos run (``alphas`` diagonal, ``betas``
    off-diagonal, float64 CPU) and its orthonormal basis ``[m, P]`` (or None)."""

    alphas: torch.Tensor
    betas: torch.Tensor
    basis: torch.Tensor | None

    @property
    def steps(self) -> int:
        return int(self.alphas.numel())

    def tridiagonal(self) -> torch.Tensor:
        T = torch.diag(self.alphas)
        if self.betas.numel():
            T += torch.diag(self.betas, 1) + torch.diag(self.betas, -1)
        return T


def lanczos(hvp_fn: HVPFn, steps: int, seed=0, dim: int | None = None, device=None, dtype=None,
            start: torch.Tensor | None = None, keep_basis: bool = True,
            purpose: str = "analysis/lanczos") -> LanczosResult:
    """``steps`` Lanczos iterations with full re-orthogonalisation (applied twice).

    Starts from ``start`` (normalised) or a Gaussian vector; stops early on an invariant
    subspace (``beta`` below ``1e-10`` times the largest ``|alpha|``/``beta`` seen), so
    ``steps >= dim`` recovers the exact spectrum of a ``dim``-dimensional operator.
    Memory: ``steps`` vectors of length ``P``.
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    dim, device, dtype = _operator_info(hvp_fn, dim, device, dtype)
    steps = min(steps, dim)
    if start is None:
        v = _randn(dim, _generator(seed, purpose), device, dtype)
    else:
        v = start.to(device=device, dtype=dtype).clone()
    v = v / v.norm()
    basis = torch.empty((steps, dim), device=device, dtype=dtype)
    alphas: list[float] = []
    betas: list[float] = []
    scale = 0.0
    for j in range(steps):
        basis[j] = v
        w = hvp_fn(v)
        alpha = float(_dot(v, w))
        alphas.append(alpha)
        Q = basis[:j + 1]
        for _ in range(2):  # full re-orthogonalisation, twice is enough
            w = w - Q.T @ (Q @ w)
        beta = float(w.double().norm())
        scale = max(scale, abs(alpha), beta)
        if j == steps - 1 or beta <= 1e-10 * max(scale, 1e-30):
            break
        betas.append(beta)
        v = w / beta
    m = len(alphas)
    return LanczosResult(torch.tensor(alphas, dtype=torch.float64),
                         torch.tensor(betas[:m - 1], dtype=torch.float64),
                         basis[:m] if keep_basis else None)


def lanczos_eigenvalues(hvp_fn: HVPFn, k: int = 1, iters: int | None = None, which: str = "LA",
                        seed=0, dim: int | None = None, device=None, dtype=None,
                        return_vectors: bool = False) -> EigenResult:
    """Top-``k`` Ritz pairs of a Lanczos run of ``iters`` steps (default ``max(3k, 30)``).

    ``which``: ``"LA"`` largest algebraic (default), ``"SA"`` smallest algebraic,
    ``"LM"`` largest magnitude; eigenvalues are returned in that order (``LA``: largest
    first).
    """
    if which not in ("LA", "SA", "LM"):
        raise ValueError(f"which must be 'LA', 'SA' or 'LM', got {which!r}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    dim, device, dtype = _operator_info(hvp_fn, dim, device, dtype, k)
    iters = max(3 * k, 30) if iters is None else int(iters)
    if iters < k:
        raise ValueError(f"iters ({iters}) must be >= k ({k})")
    result = lanczos(hvp_fn, iters, seed=seed, dim=dim, device=device, dtype=dtype,
                     keep_basis=True)
    theta, S = torch.linalg.eigh(result.tridiagonal())
    key = {"LA": -theta, "SA": theta, "LM": -theta.abs()}[which]
    order = torch.argsort(key, stable=True)[:k]
    vectors = None
    if return_vectors:
        vectors = (S[:, order].T.to(device=device, dtype=dtype) @ result.basis)
    return EigenResult(theta[order].clone(), vectors, [result.steps] * int(order.numel()), result.steps)


def top_eigenvalues(hvp_fn: HVPFn, k: int = 5, method: str = "power", iters: int = 20,
                    tol: float = 1e-4, seed=0, **kwargs) -> EigenResult:
    """``method="power"``: :func:`power_iteration` (``iters`` per eigenvalue);
    ``"lanczos"``: :func:`lanczos_eigenvalues` (``iters`` Lanczos steps in all, at least
    ``k``)."""
    if method == "power":
        return power_iteration(hvp_fn, k=k, iters=iters, tol=tol, seed=seed, **kwargs)
    if method == "lanczos":
        return lanczos_eigenvalues(hvp_fn, k=k, iters=max(iters, k), seed=seed, **kwargs)
    raise ValueError(f"unknown method {method!r}; choose 'power' or 'lanczos'")


# --------------------------------------------------------------------------- trace

@dataclass
class TraceResult:
    """Hutchinson estimate of ``tr H`` with its standard error and the per-probe values."""

    trace: float
    std_error: float
    estimates: torch.Tensor

    def to_dict(self) -> dict:
        return {"trace": self.trace, "trace_std_error": self.std_error,
                "trace_samples": int(self.estimates.numel())}


def hutchinson_trace(hvp_fn: HVPFn, samples: int = 100, distribution: str = "rademacher", seed=0,
                     dim: int | None = None, device=None, dtype=None) -> TraceResult:
    """``tr H ~ (1/S) sum_s z_s^T H z_s`` with ``S = samples`` probes ``z_s``.

    Rademacher probes (entries +-1, the default, as in PyHessian) have the smallest
    variance among i.i.d. probes, and make the estimate exact when ``H`` is diagonal;
    ``distribution="gaussian"`` uses standard normal probes.
    """
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if distribution not in ("rademacher", "gaussian"):
        raise ValueError(f"distribution must be 'rademacher' or 'gaussian', got {distribution!r}")
    dim, device, dtype = _operator_info(hvp_fn, dim, device, dtype)
    gen = _generator(seed, "analysis/hutchinson")
    draw = _rademacher if distribution == "rademacher" else _randn
    values = []
    for _ in range(samples):
        z = draw(dim, gen, device, dtype)
        values.append(_dot(z, hvp_fn(z)))
    estimates = torch.stack(values).cpu()
    std_error = float(estimates.std(unbiased=True) / math.sqrt(samples)) if samples > 1 else math.nan
    return TraceResult(float(estimates.mean()), std_error, estimates)


# --------------------------------------------------------------------------- density

@dataclass
class SpectralDensity:
    """Stochastic Lanczos quadrature nodes and weights, one row per run (float64, CPU).

    Each run's weights sum to 1; the density is their average, smoothed by a Gaussian.
    """

    nodes: torch.Tensor
    weights: torch.Tensor

    def density(self, grid: torch.Tensor, sigma: float | None = None) -> torch.Tensor:
        """The smoothed density on ``grid`` (1-D): ``(1/R) sum_r sum_j w_rj N(t; node_rj, sigma^2)``.

        ``sigma`` defaults to PyHessian's ``sqrt(1e-5)`` times the spectrum's width (at
        least 1e-3 of it), so the result does not depend on the Hessian's scale.
        """
        grid = torch.as_tensor(grid, dtype=torch.float64)
        if sigma is None:
            width = float(self.nodes.max() - self.nodes.min()) or 1.0
            sigma = max(math.sqrt(1e-5), 1e-3) * width
        if sigma <= 0:
            raise ValueError(f"sigma must be > 0, got {sigma}")
        diff = grid[:, None, None] - self.nodes[None]
        kernel = torch.exp(-0.5 * (diff / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))
        return (kernel * self.weights[None]).sum(-1).mean(-1)

    def grid(self, num: int = 1000, margin: float = 0.01, sigma: float | None = None) -> torch.Tensor:
        """An even grid covering the nodes plus ``margin`` of their range and 5 sigma."""
        lo, hi = float(self.nodes.min()), float(self.nodes.max())
        width = (hi - lo) or 1.0
        pad = margin * width + 5 * (sigma if sigma is not None else max(math.sqrt(1e-5), 1e-3) * width)
        return torch.linspace(lo - pad, hi + pad, num, dtype=torch.float64)


def slq_density(hvp_fn: HVPFn, runs: int = 1, iters: int = 90, seed=0, dim: int | None = None,
                device=None, dtype=None) -> SpectralDensity:
    """Stochastic Lanczos quadrature: ``runs`` Lanczos runs of ``iters`` steps (PyHessian:
    1 run, 90 steps) from normalised Rademacher vectors."""
    if runs < 1 or iters < 1:
        raise ValueError(f"runs and iters must be >= 1, got runs={runs}, iters={iters}")
    dim, device, dtype = _operator_info(hvp_fn, dim, device, dtype)
    gen = _generator(seed, "analysis/slq")
    steps = min(iters, dim)
    nodes = torch.zeros(runs, steps, dtype=torch.float64)
    weights = torch.zeros(runs, steps, dtype=torch.float64)
    for r in range(runs):
        start = _rademacher(dim, gen, device, dtype)
        result = lanczos(hvp_fn, steps, dim=dim, device=device, dtype=dtype, start=start,
                         keep_basis=False)
        theta, S = torch.linalg.eigh(result.tridiagonal())
        m = theta.numel()
        # an early stop (invariant subspace) leaves fewer nodes: pad with zero weight
        nodes[r, :m] = theta
        nodes[r, m:] = theta[-1] if m else 0.0
        weights[r, :m] = S[0] ** 2
    return SpectralDensity(nodes, weights)
