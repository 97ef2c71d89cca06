"""Linear centred kernel alignment (CKA) between representations of the same inputs.

``CKA(X, Y) = HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L))`` with linear kernels
``K = X X^T``, ``L = Y Y^T`` for ``X [N, D1]`` and ``Y [N, D2]`` (rows = the same ``N``
inputs; trailing dimensions are flattened).

- ``unbiased=False`` (default): the original estimator of Kornblith et al. (ICML 2019),
  computed in feature space, ``|Y_c^T X_c|_F^2 / (|X_c^T X_c|_F |Y_c^T Y_c|_F)`` with
  column-centred ``X_c, Y_c``: ``O(N D^2)``, no ``N x N`` matrix.
- ``unbiased=True``: the unbiased HSIC estimator (Song et al. 2012, used for CKA by
  Nguyen et al. 2021), which removes the positive bias of the biased estimator for
  small ``N``; needs ``N >= 4`` and forms ``N x N`` Gram matrices.

The FedIMA paper measures its covariance factor with "the CKA similarity" of client
model outputs given the same inputs and cites Kornblith et al. (via a wrong reference
number) without saying linear or kernel, biased or unbiased.  Decision: linear CKA with
Kornblith's (biased) estimator, the one Kornblith et al. define and the common default;
the unbiased estimator is an option.  Both are invariant to orthogonal transforms and
isotropic scaling of either argument and give ``CKA(X, X) = 1``.  Computations are in
float64.
"""
from __future__ import annotations

import torch

__all__ = ["linear_cka", "pairwise_cka"]


def _as_matrix(X: torch.Tensor, name: str) -> torch.Tensor:
    X = torch.as_tensor(X)
    if X.dim() < 2:
        raise ValueError(f"{name} must have shape [N, D...], got {tuple(X.shape)}")
    return X.reshape(X.shape[0], -1).double()


def _unbiased_hsic(K: torch.Tensor, L: torch.Tensor) -> torch.Tensor:
    n = K.shape[0]
    K = K.clone()
    L = L.clone()
    K.fill_diagonal_(0)
    L.fill_diagonal_(0)
    ones_K, ones_L = K.sum(), L.sum()
    term = (K * L).sum() + ones_K * ones_L / ((n - 1) * (n - 2)) - 2.0 / (n - 2) * (K.sum(0) @ L.sum(0))
    return term / (n * (n - 3))


def linear_cka(X: torch.Tensor, Y: torch.Tensor, unbiased: bool = False) -> float:
    """Linear CKA of ``X [N, ...]`` and ``Y [N, ...]`` (see module docstring).

    Returns NaN when either representation is constant over the inputs.
    """
    X, Y = _as_matrix(X, "X"), _as_matrix(Y, "Y")
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X and Y must describe the same inputs, got {X.shape[0]} and {Y.shape[0]} rows")
    Y = Y.to(X.device)
    n = X.shape[0]
    if unbiased:
        if n < 4:
            raise ValueError(f"the unbiased estimator needs at least 4 inputs, got {n}")
        K, L = X @ X.T, Y @ Y.T
        xy, xx, yy = _unbiased_hsic(K, L), _unbiased_hsic(K, K), _unbiased_hsic(L, L)
    else:
        if n < 2:
            raise ValueError(f"CKA needs at least 2 inputs, got {n}")
        Xc, Yc = X - X.mean(0, keepdim=True), Y - Y.mean(0, keepdim=True)
        xy = (Yc.T @ Xc).pow(2).sum()
        xx = (Xc.T @ Xc).pow(2).sum()
        yy = (Yc.T @ Yc).pow(2).sum()
    denom = torch.sqrt(xx * yy)
    if float(denom) == 0.0:
        return float("nan")
    return float(xy / denom)


def pairwise_cka(outputs, unbiased: bool = False) -> torch.Tensor:
    """``[K, K]`` matrix of linear CKA between ``K`` representations of the same inputs
    (``outputs``: a ``[K, N, ...]`` tensor or a list of ``[N, ...]`` tensors)."""
    reps = list(outputs.unbind(0)) if isinstance(outputs, torch.Tensor) else list(outputs)
    k = len(reps)
    out = torch.ones(k, k, dtype=torch.float64)
    for i in range(k):
        for j in range(i + 1, k):
            out[i, j] = out[j, i] = linear_cka(reps[i], reps[j], unbiased=unbiased)
    return out
