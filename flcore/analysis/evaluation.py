"""Loss and error of many flat parameter vectors on a dataset, in batches.

Landscapes, interpolations and LPF all evaluate a model at many parameter vectors.  They
talk to the data through an *evaluator*: a callable ``W [M, P] -> (loss [M], error [M])``
(float64; ``error`` may be ``None`` for losses without a classification error, like the
quadratics of the tests).  :class:`DatasetEvaluator` is the evaluator of a
:class:`~flcore.flat.FlatModel` on ``(x, y)``: mean cross-entropy and top-1 error.

Several points at once: with ``points_per_pass > 1`` the model is ``torch.func.vmap``-ed
over a chunk of parameter vectors for each data batch (one pass over the data per chunk
instead of per point).  That pays on a GPU, where a single point leaves the device idle;
on a CPU vmap turns convolutions into slower grouped ones (measured: 4 CIFAR-CNN points
on 500 images take 4.3-6.6 s vmapped vs 2.0 s looped on 2 cores), so the default
(``points_per_pass=None``) is 1 on CPU and 8 on CUDA; a chunk that fails under vmap
falls back to the loop.

Also here: per-sample losses, model outputs (logits, probabilities or the ``features``
of flcore's models) and the full-dataset gradient, which the probes, flatness and
decomposition tools need.
"""
from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch.func import functional_call, vmap

from flcore.analysis.hvp import check_dataset, iter_batches, use_channels_last
from flcore.flat import FeatureView, FlatModel

__all__ = [
    "DatasetEvaluator",
    "Evaluator",
    "evaluate_points",
    "loss_and_grad",
    "model_outputs",
    "per_sample_losses",
]

#: ``W [M, P] -> (loss [M], error [M] or None)``.
Evaluator = Callable[[torch.Tensor], "tuple[torch.Tensor, torch.Tensor | None]"]

OUTPUT_KINDS = ("logits", "probs", "features")


class DatasetEvaluator:
    """Mean cross-entropy and top-1 error (``1 - accuracy``) of parameter vectors on
    ``(x, y)``.  ``__call__(W [M, P])`` returns two float64 tensors ``[M]`` on the
    parameters' device; ``evaluate(w [P])`` returns two 0-d tensors.

    ``points_per_pass``: parameter vectors evaluated together with ``vmap`` (default: 1
    on CPU, 8 on CUDA; see the module docstring).  ``channels_last``: feed image batches
    in that memory format (default: on CPU, see
    :func:`flcore.analysis.hvp.use_channels_last`).
    """

    def __init__(self, flat: FlatModel, x: torch.Tensor, y: torch.Tensor, batch_size: int = 1000,
                 points_per_pass: int | None = None, channels_last: bool | None = None):
        check_dataset(x, y, batch_size)
        if points_per_pass is not None and points_per_pass < 1:
            raise ValueError(f"points_per_pass must be >= 1, got {points_per_pass}")
        self.flat, self.x, self.y = flat, x, y
        self.batch_size = int(batch_size)
        self.points_per_pass = points_per_pass
        self.channels_last = channels_last
        self.n = int(x.shape[0])
        self.num_points = 0

    def _chunk(self, device: torch.device) -> int:
        if self.points_per_pass is not None:
            return self.points_per_pass
        return 8 if device.type == "cuda" else 1

    @torch.no_grad()
    def __call__(self, W: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if W.dim() == 1:
            W = W[None]
        M = W.shape[0]
        device = W.device
        losses = torch.zeros(M, dtype=torch.float64, device=device)
        errors = torch.zeros(M, dtype=torch.float64, device=device)
        chunk = self._chunk(device)
        for start in range(0, M, chunk):
            stop = min(start + chunk, M)
            if stop - start > 1:
                try:
                    losses[start:stop], errors[start:stop] = self._vmapped(W[start:stop])
                    continue
                except RuntimeError:  # an op without a batching rule: loop instead
                    pass
            for m in range(start, stop):
                losses[m], errors[m] = self._single(W[m])
        self.num_points += M
        return losses, errors

    def evaluate(self, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        loss, error = self(w[None])
        return loss[0], error[0]

    def _batches(self, device: torch.device):
        cl = use_channels_last(self.x, device, self.channels_last)
        return iter_batches(self.x, self.y, self.batch_size, device, cl)

    def _single(self, w: torch.Tensor):
        loss_sum = torch.zeros((), dtype=torch.float64, device=w.device)
        wrong = torch.zeros((), dtype=torch.float64, device=w.device)
        for xb, yb in self._batches(w.device):
            logits = self.flat.forward(w, xb)
            loss_sum += F.cross_entropy(logits, yb, reduction="sum").double()
            wrong += (logits.argmax(dim=1) != yb).sum().double()
        return loss_sum / self.n, wrong / self.n

    def _vmapped(self, W: torch.Tensor):
        forward = vmap(self.flat.forward, in_dims=(0, None))
        loss_sum = torch.zeros(W.shape[0], dtype=torch.float64, device=W.device)
        wrong = torch.zeros(W.shape[0], dtype=torch.float64, device=W.device)
        for xb, yb in self._batches(W.device):
            logits = forward(W, xb)  # [m, B, C]
            m, b, c = logits.shape
            ce = F.cross_entropy(logits.reshape(m * b, c), yb.repeat(m), reduction="none")
            loss_sum += ce.view(m, b).sum(1).double()
            wrong += (logits.argmax(dim=2) != yb[None]).sum(1).double()
        return loss_sum / self.n, wrong / self.n


def evaluate_points(evaluate: Evaluator, W: torch.Tensor, chunk: int | None = None):
    """Apply an evaluator to ``W [M, P]`` in chunks of ``chunk`` rows (default all),
    returning ``(loss [M], error [M] or None)`` as float64."""
    if W.dim() == 1:
        W = W[None]
    chunk = W.shape[0] if chunk is None else max(1, int(chunk))
    losses, errors = [], []
    for start in range(0, W.shape[0], chunk):
        out = evaluate(W[start:start + chunk])
        loss, error = out if isinstance(out, tuple) else (out, None)
        losses.append(torch.as_tensor(loss).double().reshape(-1))
        errors.append(None if error is None else torch.as_tensor(error).double().reshape(-1))
    loss = torch.cat(losses)
    error = None if any(e is None for e in errors) else torch.cat(errors)
    return loss, error


def loss_and_grad(flat: FlatModel, w: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                  batch_size: int = 1000) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean cross-entropy over all of ``(x, y)`` at ``w`` and its gradient ``[P]``
    (exact: batch sums divided by ``N``)."""
    n = x.shape[0]
    if n == 0:
        raise ValueError("the dataset is empty")
    grad = torch.zeros_like(w)
    loss = torch.zeros((), dtype=torch.float64, device=w.device)
    for xb, yb in iter_batches(x, y, batch_size, w.device, use_channels_last(x, w.device)):
        with torch.enable_grad():
            wg = w.detach().clone().requires_grad_(True)
            batch_loss = F.cross_entropy(flat.forward(wg, xb), yb, reduction="sum") / n
            (g,) = torch.autograd.grad(batch_loss, wg)
        grad += g
        loss += batch_loss.detach().double()
    return loss, grad


@torch.no_grad()
def per_sample_losses(flat: FlatModel, w: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                      batch_size: int = 1000, loss: str = "ce") -> tuple[torch.Tensor, torch.Tensor]:
    """Per-sample loss ``[N]`` and correctness ``[N]`` (bool) of ``w`` on ``(x, y)``.

    ``loss="ce"``: cross-entropy; ``"mse"``: squared error between the softmax
    probabilities and the one-hot label (the loss of the FedIMA decomposition's theory).
    """
    if loss not in ("ce", "mse"):
        raise ValueError(f"loss must be 'ce' or 'mse', got {loss!r}")
    out_loss, out_correct = [], []
    for xb, yb in iter_batches(x, y, batch_size, w.device, use_channels_last(x, w.device)):
        logits = flat.forward(w, xb)
        if loss == "ce":
            values = F.cross_entropy(logits, yb, reduction="none")
        else:
            probs = logits.softmax(dim=1)
            values = (probs - F.one_hot(yb, probs.shape[1]).to(probs.dtype)).pow(2).sum(1)
        out_loss.append(values.double())
        out_correct.append(logits.argmax(dim=1) == yb)
    return torch.cat(out_loss), torch.cat(out_correct)


@torch.no_grad()
def model_outputs(flat: FlatModel, w: torch.Tensor, x: torch.Tensor, kind: str = "logits",
                  batch_size: int = 1000) -> torch.Tensor:
    """The model's outputs ``[N, D]`` at ``w`` on ``x``: ``"logits"``, ``"probs"``
    (softmax) or ``"features"`` (the model's ``features(x)``: the CIFAR CNN's 192-d
    penultimate activations)."""
    if kind not in OUTPUT_KINDS:
        raise ValueError(f"kind must be one of {', '.join(OUTPUT_KINDS)}, got {kind!r}")
    if kind == "features":
        if not hasattr(flat.module, "features"):
            raise ValueError(f"{type(flat.module).__name__} has no features() method")
        view = FeatureView(flat.module)
        params = {f"inner.{name}": t for name, t in flat.unflatten(w).items()}

        def run(xb):
            return functional_call(view, params, (xb,))
    else:
        def run(xb):
            return flat.forward(w, xb)
    outs = []
    cl = use_channels_last(x, w.device)
    for start in range(0, x.shape[0], batch_size):
        xb = x[start:start + batch_size].to(w.device, non_blocking=True)
        out = run(xb.contiguous(memory_format=torch.channels_last) if cl else xb)
        outs.append(out.softmax(dim=1) if kind == "probs" else out)
    return torch.cat(outs).reshape(x.shape[0], -1)
