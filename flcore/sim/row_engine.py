"""The ``rows`` engine: local steps and evaluations of every row of a round through a
model's row kernel (:mod:`flcore.models.row_kernels`).

A round of R runs x K clients is ``R*K`` rows of flat parameters.  Under ``rows`` the
gradient of every row's minibatch is one call of the kernel (a dozen batched matmuls,
whatever the rows), and the evaluations of the runs of a group that evaluate after the
same round are one forward pass of all their models on the test set they share.  The
numbers are the per-row loop's (``sequential``, the reference) to float rounding.

FedFA's anchor loss (a ``Batch`` with ``anchors``) is not in the kernels: those steps
take the ``vmap`` gradient.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from flcore.errors import ConfigError
from flcore.models.row_kernels import RowKernel, row_kernel

__all__ = ["ROW_KERNEL_MODELS", "evaluate_rows", "kernel_of", "row_grad_fn"]

#: The named models with a row kernel (:func:`flcore.models.row_kernels.row_kernel`).
ROW_KERNEL_MODELS = frozenset({"mnist1d_cnn", "mnist1d_mlp"})


def kernel_of(flat) -> RowKernel:
    """The row kernel of a :class:`~flcore.flat.FlatModel`'s module; a config error naming
    the engine when it has none."""
    kernel = row_kernel(flat.module)
    if kernel is None:
        raise ConfigError("engine", f"'rows' needs a model with a row kernel ({', '.join(sorted(ROW_KERNEL_MODELS))});"
                          f" got {type(flat.module).__name__}; allowed values here: auto, sequential, batched")
    return kernel


def row_grad_fn(flat, kernel: RowKernel):
    """``(W [K, P], batch) -> (loss [K], grad [K, P])`` through ``kernel``; a batch with
    FedFA's anchors takes the ``vmap`` gradient of ``flat``."""
    fallback = None

    def rows_grad(W, batch):
        nonlocal fallback
        if batch.anchors is not None:
            if fallback is None:
                fallback = flat.grad_fn(batched=True)
            return fallback(W, batch)
        return kernel.loss_and_grad(W, batch.x, batch.y, batch.weight)
    return rows_grad


#: Samples x rows of one evaluation pass on a CPU: 3,000 keeps the MNIST-1D CNN's largest
#: activation (about 3 MB) in a core's cache (measured on 2 cores: six runs' evaluation on
#: 2,000 samples in 31 ms a pass of 500 samples each, 53 ms in one pass of 2,000).
EVAL_SAMPLE_ROWS = 3000


def evaluate_rows(kernel: RowKernel, W: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                  batch_size: int = 2000) -> tuple[torch.Tensor, torch.Tensor]:
    """Accuracy and mean cross-entropy ``[R]`` (float64) of every row of ``W [R, P]`` on one
    test set ``(x [N, L], y [N])``, in batches of ``batch_size`` samples: the numbers of
    :meth:`flcore.flat.FlatModel.evaluate` for each row."""
    R = W.shape[0]
    correct = torch.zeros(R, dtype=torch.float64, device=W.device)
    loss_sum = torch.zeros(R, dtype=torch.float64, device=W.device)
    if W.device.type == "cpu":  # activations that stay in the core's cache: a third of the time
        batch_size = max(1, min(batch_size, EVAL_SAMPLE_ROWS // R))
    for start in range(0, x.shape[0], batch_size):
        xb, yb = x[start:start + batch_size], y[start:start + batch_size]
        logits = kernel.logits(W, xb.unsqueeze(0).expand(R, *xb.shape))  # [R, n, C]
        target = yb.unsqueeze(0).expand(R, -1)
        loss_sum += F.cross_entropy(logits.transpose(1, 2), target, reduction="none").sum(1).double()
        correct += (logits.argmax(dim=-1) == target).sum(1).double()
    n = max(x.shape[0], 1)
    return correct / n, loss_sum / n
