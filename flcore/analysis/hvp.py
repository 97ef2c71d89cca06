"""Hessian-vector products of a model's mean loss over a dataset, on flat parameters.

Every spectral tool in :mod:`flcore.analysis.spectrum` talks to the Hessian only through a
*matrix-vector function* ``hvp_fn(v [P]) -> H v [P]``.  That is the whole interface, so
the same power iteration, Lanczos, Hutchinson and SLQ code runs on

- :class:`DatasetHVP`: the Hessian of the mean cross-entropy of a :class:`~flcore.flat.FlatModel`
  at ``w`` over a whole dataset ``(x, y)``, accumulated over batches (default 1000
  samples), by double backward (default) or forward-over-reverse (``torch.func.jvp`` of
  ``torch.func.grad``);
- :func:`matrix_hvp`: an explicit symmetric matrix (how the tests plug in a Hessian
  with known eigenvalues);
- any callable the caller writes (a quadratic's Hessian, a sub-block, ...).

A matrix-vector function may carry ``dim`` (the vector length), ``device`` and
``dtype`` attributes; the spectral tools read them when they are not given explicitly.

The dataset loss is the mean over all ``N`` samples, ``L(w) = (1/N) sum_i CE_i(w)``: each
batch contributes ``sum_{i in batch} CE_i / N``, so ragged last batches are weighted
exactly.  The data may live on another device than ``w`` (e.g. CPU data, CUDA model);
batches are moved to ``w``'s device as they are used.

Decision (papers silent): the FedSAM/FedGloSS tooling (pytorch-hessian-eigenthings,
PyHessian) averages per-batch HVPs; ours is the exact HVP of the full-dataset mean loss,
which is the same thing when batches are weighted by their sizes.  The model is a pure
function of ``w`` (flcore models have no dropout or batch statistics), so "eval mode"
questions do not arise.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F
from torch.func import grad, jvp

from flcore.flat import FlatModel

__all__ = ["HVPFn", "DatasetHVP", "matrix_hvp", "make_hvp", "iter_batches", "use_channels_last", "HVP_METHODS"]

#: A symmetric linear operator given by its action on a vector: ``v [P] -> H v [P]``.
HVPFn = Callable[[torch.Tensor], torch.Tensor]

HVP_METHODS = ("double_backward", "jvp")


def use_channels_last(x: torch.Tensor, device: torch.device, channels_last: bool | None = None) -> bool:
    """Whether to feed image batches in ``channels_last`` memory format.

    ``None`` (auto): yes for 4-D inputs on a CPU, where oneDNN's convolutions are faster
    that way (CIFAR CNN, 2 cores: a forward pass over 1000 images 0.55 s instead of
    0.92 s, an HVP about 15% faster); no elsewhere.  The logical shapes and the results
    do not change.
    """
    if channels_last is None:
        return x.dim() == 4 and torch.device(device).type == "cpu"
    return bool(channels_last) and x.dim() == 4


def check_dataset(x: torch.Tensor, y: torch.Tensor, batch_size: int) -> None:
    """Clear errors for mismatched, empty or badly batched data, before any compute."""
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x has {x.shape[0]} rows but y has {y.shape[0]}")
    if x.shape[0] == 0:
        raise ValueError("the dataset is empty")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")


def iter_batches(x: torch.Tensor, y: torch.Tensor, batch_size: int,
                 device: torch.device | None = None,
                 channels_last: bool = False) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Consecutive ``(x, y)`` slices of at most ``batch_size`` rows, moved to ``device``
    (and to ``channels_last`` memory format if asked, for 4-D inputs)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    n = x.shape[0]
    for start in range(0, n, batch_size):
        xb, yb = x[start:start + batch_size], y[start:start + batch_size]
        if device is not None:
            xb = xb.to(device, non_blocking=True)
            yb = yb.to(device, non_blocking=True)
        if channels_last and xb.dim() == 4:
            xb = xb.contiguous(memory_format=torch.channels_last)
        yield xb, yb


class DatasetHVP:
    """``v -> H v`` for ``H = Hessian of (1/N) sum_i CE(f(w; x_i), y_i)`` at fixed ``w``.

    Parameters
    ----------
    flat : FlatModel
        The model template.
    w : Tensor [P]
        The point the Hessian is taken at (detached; not modified).
    x, y : Tensor
        Inputs (already normalised) and integer labels.
    batch_size : int
        Samples per forward/backward pass (memory knob, not a statistical one).
    method : {"double_backward", "jvp"}
        ``double_backward``: ``grad(<grad L(w), v>, w)`` with ``create_graph``;
        ``jvp``: ``torch.func.jvp(torch.func.grad(L), (w,), (v,))``.  Both give the same
        product to float rounding; double backward was the faster on a 2-core CPU for the
        CIFAR CNN (6.4 s vs 7.6 s per 1000 samples).

    cache_graph : bool or None
        Double backward only.  Keep each batch's first-order gradient graph between
        products, so a product costs only the second backward (CIFAR CNN, 1000 images,
        2 CPU cores: 3.0 s instead of 4.9 s).  Memory: the graphs of *all* batches at
        once (about 2 GB per 1000 CIFAR images with the CNN).  ``None`` (default): cache
        when the dataset is one batch, where it costs no extra peak memory (e.g. a
        client's 500 samples); pass ``True`` on a large GPU to cache a whole dataset.
        :meth:`release` frees the graphs.
    channels_last : bool or None
        Feed image batches as ``channels_last`` (default: on CPU; see
        :func:`use_channels_last`).

    Attributes ``dim``, ``device``, ``dtype`` describe the vectors it takes;
    ``num_calls`` counts products computed (each is one pass over the dataset).
    """

    def __init__(self, flat: FlatModel, w: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                 batch_size: int = 1000, method: str = "double_backward",
                 cache_graph: bool | None = None, channels_last: bool | None = None):
        if method not in HVP_METHODS:
            raise ValueError(f"unknown HVP method {method!r}; choose one of {', '.join(HVP_METHODS)}")
        check_dataset(x, y, batch_size)
        self.flat = flat
        self.w = w.detach()
        self.x, self.y = x, y
        self.batch_size = int(batch_size)
        self.method = method
        self.n = int(x.shape[0])
        self.dim = int(w.numel())
        self.device = w.device
        self.dtype = w.dtype
        self.num_calls = 0
        self.channels_last = use_channels_last(x, w.device, channels_last)
        self.cache_graph = (self.n <= self.batch_size) if cache_graph is None else bool(cache_graph)
        self.cache_graph = self.cache_graph and method == "double_backward"
        self._graphs: list[tuple[torch.Tensor, torch.Tensor]] | None = None

    def _batches(self):
        return iter_batches(self.x, self.y, self.batch_size, self.device, self.channels_last)

    def release(self) -> None:
        """Free the cached gradient graphs (rebuilt on the next product if caching)."""
        self._graphs = None

    def _batch_loss(self, w: torch.Tensor, xb: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
        # sum over the batch / N: the batch's share of the dataset mean
        return F.cross_entropy(self.flat.forward(w, xb), yb, reduction="sum") / self.n

    def __call__(self, v: torch.Tensor) -> torch.Tensor:
        if v.shape != (self.dim,):
            raise ValueError(f"HVP needs a vector of shape [{self.dim}], got {tuple(v.shape)}")
        v = v.to(device=self.device, dtype=self.dtype)
        out = torch.zeros_like(self.w)
        if self.cache_graph:
            if self._graphs is None:
                self._graphs = [self._gradient_graph(xb, yb) for xb, yb in self._batches()]
            for w_leaf, g in self._graphs:
                out += torch.autograd.grad(g, w_leaf, grad_outputs=v, retain_graph=True)[0]
        else:
            for xb, yb in self._batches():
                out += self._hvp_batch(v, xb, yb)
        self.num_calls += 1
        return out

    def _gradient_graph(self, xb, yb):
        with torch.enable_grad():
            w = self.w.clone().requires_grad_(True)
            (g,) = torch.autograd.grad(self._batch_loss(w, xb, yb), w, create_graph=True)
        return w, g

    def _hvp_batch(self, v, xb, yb) -> torch.Tensor:
        if self.method == "jvp":
            g = grad(lambda w: self._batch_loss(w, xb, yb))
            return jvp(g, (self.w,), (v,))[1].detach()
        with torch.enable_grad():
            w = self.w.clone().requires_grad_(True)
            loss = self._batch_loss(w, xb, yb)
            (g,) = torch.autograd.grad(loss, w, create_graph=True)
            (hv,) = torch.autograd.grad(g, w, grad_outputs=v)
        return hv.detach()


def make_hvp(flat: FlatModel, w: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
             batch_size: int = 1000, method: str = "double_backward", **kwargs) -> DatasetHVP:
    """Shorthand for :class:`DatasetHVP`."""
    return DatasetHVP(flat, w, x, y, batch_size=batch_size, method=method, **kwargs)


def matrix_hvp(H: torch.Tensor) -> HVPFn:
    """The matrix-vector function of an explicit symmetric matrix ``H [P, P]``."""
    if H.dim() != 2 or H.shape[0] != H.shape[1]:
        raise ValueError(f"H must be a square matrix, got shape {tuple(H.shape)}")

    def hvp(v: torch.Tensor) -> torch.Tensor:
        return H @ v.to(device=H.device, dtype=H.dtype)

    hvp.dim = H.shape[0]  # type: ignore[attr-defined]
    hvp.device = H.device  # type: ignore[attr-defined]
    hvp.dtype = H.dtype  # type: ignore[attr-defined]
    return hvp
