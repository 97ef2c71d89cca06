"""The measurable factors of the FedIMA loss decomposition (Zhou et al., Theorem 1, Figs. 2-4).

FedIMA splits the expected loss of the FMA (averaged) model ``w_g`` on the global dataset
``D`` into client-side factors (p_k = n_k / n):

- **TrainBias** = ``sum_k p_k E_{(x,y) in D_k} l(w_k; x, y)``: client ``k``'s model on its
  own data (Fig. 2);
- **HeterBias** = ``sum_k p_k E_{(x,y) in D \\ D_k} l(w_k; x, y)``: client ``k``'s model on
  the global data it does not hold ("catastrophic forgetting", Fig. 2);
- **Var**: sensitivity of the client models' outputs; it shrinks as more client models
  are averaged (Fig. 4);
- **Cov**: correlation of client models' outputs on the same inputs, measured with CKA
  (Fig. 4);
- **Locality** = ``max_k |w_k - w_g|_2`` (Fig. 3; also the mean, and FedGF's D^r uses the
  same distances).

The paper released no code for this and leaves its measurement protocol open (the loss,
train or test data, how Var is estimated, the CKA type and representation, the model
Locality is measured against), and its theory's ``f_bar_k`` (the mean output over client
``k``'s solution subspace) cannot be measured from one model per client.  Decisions:

- loss ``l``: cross-entropy by default (the loss the figures' "test loss" means);
  ``loss="mse"`` gives the theorem's squared error between softmax outputs and one-hot
  labels;
- ``D`` is the data passed with ``client_indices`` into it (the union of the clients'
  training sets reproduces the paper; ``D \\ D_k`` is every sample of ``D`` not indexed by
  client ``k``);
- **Var**: the mean client variance ``V = sum_k p_k E_x |f_k(x) - f_bar(x)|^2`` around
  the weighted ensemble ``f_bar = sum_k p_k f_k``, and the variance of an ``M``-model
  average, ``Var(M) = E_x E_S |mean_{k in S} f_k(x) - f_bar(x)|^2`` over subsets ``S``
  of ``M`` clients (all of them when few, else random ones from an explicit generator;
  a subset's average uses the weights renormalised over it), which falls with ``M`` as
  in Fig. 4 (exactly ``V (K - M) / (M (K - 1))`` for equal weights);
- **Cov**: the ``p_k p_j``-weighted mean of the pairwise linear CKA (:mod:`.cka`)
  between client models' outputs on the same inputs, over pairs ``k != j``;
- outputs ``f``: softmax probabilities by default (the theorem's regression targets are
  one-hot labels), logits or ``features`` on request.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import torch

from flcore.analysis.cka import pairwise_cka
from flcore.analysis.evaluation import model_outputs, per_sample_losses
from flcore.flat import FlatModel
from flcore.seeding import generator as derived_generator

__all__ = [
    "bias_terms",
    "cka_covariance",
    "client_global_distance",
    "client_outputs",
    "ensemble_variance",
    "loss_decomposition",
]


def _as_stack(models) -> torch.Tensor:
    if isinstance(models, torch.Tensor):
        if models.dim() != 2:
            raise ValueError(f"client models must be [K, P], got {tuple(models.shape)}")
        return models
    return torch.stack(list(models))


def _weights(weights, k: int, default: Sequence[float] | None = None) -> torch.Tensor:
    if weights is None:
        weights = default if default is not None else [1.0] * k
    p = torch.as_tensor(weights, dtype=torch.float64).reshape(-1)
    if p.numel() != k or (p < 0).any() or float(p.sum()) <= 0:
        raise ValueError(f"weights must be {k} non-negative numbers, not all zero")
    return p / p.sum()


def client_global_distance(client_models, w_global: torch.Tensor) -> dict:
    """``|w_k - w_g|_2`` per client (``distances``, float64 CPU), their ``max``
    (FedIMA's Locality) and ``mean``."""
    W = _as_stack(client_models)
    d = (W - w_global[None]).double().norm(dim=1).cpu()
    return {"distances": d, "max": float(d.max()), "mean": float(d.mean())}


def bias_terms(flat: FlatModel, client_models, x: torch.Tensor, y: torch.Tensor,
               client_indices: Sequence[torch.Tensor], weights=None, loss: str = "ce",
               batch_size: int = 1000) -> dict:
    """TrainBias and HeterBias (see module docstring).

    ``client_indices[k]``: indices of client ``k``'s samples in ``x``; ``weights``:
    ``p_k`` (default: the clients' sample counts), normalised.  One pass of each client
    model over ``x``.  Returns ``train_bias``, ``heter_bias`` and the per-client
    ``train_loss``/``heter_loss`` (float64 CPU tensors).
    """
    W = _as_stack(client_models)
    if W.shape[0] != len(client_indices):
        raise ValueError(f"{W.shape[0]} client models but {len(client_indices)} index sets")
    n = x.shape[0]
    p = _weights(weights, W.shape[0], [int(torch.as_tensor(i).numel()) for i in client_indices])
    own, other = [], []
    for w_k, idx in zip(W, client_indices):
        losses, _ = per_sample_losses(flat, w_k, x, y, batch_size, loss=loss)
        mask = torch.zeros(n, dtype=torch.bool, device=losses.device)
        mask[torch.as_tensor(idx, device=losses.device).long()] = True
        if not mask.any():
            raise ValueError("a client has no samples")
        own.append(losses[mask].mean())
        other.append(losses[~mask].mean() if (~mask).any() else torch.tensor(float("nan"), dtype=torch.float64))
    own_t, other_t = torch.stack(own).cpu(), torch.stack(other).cpu()
    return {"train_bias": float((p * own_t).sum()), "heter_bias": float((p * other_t).sum()),
            "train_loss": own_t, "heter_loss": other_t, "weights": p}


def client_outputs(flat: FlatModel, client_models, x: torch.Tensor, kind: str = "probs",
                   batch_size: int = 1000) -> torch.Tensor:
    """Outputs ``[K, N, D]`` of every client model on the same inputs ``x``."""
    W = _as_stack(client_models)
    return torch.stack([model_outputs(flat, w_k, x, kind, batch_size) for w_k in W])


def ensemble_variance(outputs: torch.Tensor, weights=None, subset_sizes: Sequence[int] | None = None,
                      num_subsets: int = 20, seed=0) -> dict:
    """Output variance of the client models (see module docstring).

    ``outputs [K, N, D]``.  Returns ``variance`` (the weighted mean client variance ``V``)
    and ``variance_by_m`` (``{M: Var(M)}`` for ``M`` in ``subset_sizes``, default
    ``1..K``; every subset of size ``M`` when there are at most ``num_subsets`` of them,
    else ``num_subsets`` random ones).  A subset averages its models with the weights
    renormalised over the subset, so ``M = K`` gives 0.
    """
    F_ = outputs.double()
    k = F_.shape[0]
    p = _weights(weights, k).to(F_.device)
    f_bar = torch.einsum("k,knd->nd", p, F_)
    per_client = (F_ - f_bar[None]).pow(2).sum(-1).mean(-1)  # [K]
    variance = float((p * per_client).sum())
    sizes = list(range(1, k + 1)) if subset_sizes is None else [int(m) for m in subset_sizes]
    gen = seed if isinstance(seed, torch.Generator) else derived_generator(int(seed), "analysis/ensemble_variance")
    by_m = {}
    for m in sizes:
        if not 1 <= m <= k:
            raise ValueError(f"subset size {m} is not in 1..{k}")
        if math.comb(k, m) <= num_subsets:  # few enough: every subset, exactly
            subsets = [torch.tensor(c) for c in itertools.combinations(range(k), m)]
        else:
            subsets = [torch.randperm(k, generator=gen)[:m] for _ in range(num_subsets)]
        vals = []
        for s in subsets:
            s = s.to(F_.device)
            f_s = torch.einsum("k,knd->nd", p[s] / p[s].sum(), F_[s])
            vals.append((f_s - f_bar).pow(2).sum(-1).mean())
        by_m[m] = float(torch.stack(vals).mean())
    return {"variance": variance, "per_client_variance": per_client.cpu(), "variance_by_m": by_m}


def cka_covariance(outputs, weights=None, unbiased: bool = False) -> dict:
    """The CKA covariance factor: ``sum_{k != j} p_k p_j CKA_kj / sum_{k != j} p_k p_j``
    and the matrix ``cka [K, K]``."""
    C = pairwise_cka(outputs, unbiased=unbiased)
    k = C.shape[0]
    if k < 2:
        raise ValueError("the covariance factor needs at least 2 client models")
    p = _weights(weights, k)
    pair = p[:, None] * p[None, :]
    pair.fill_diagonal_(0)
    return {"covariance": float((pair * C).sum() / pair.sum()), "cka": C}


def loss_decomposition(flat: FlatModel, client_models, w_global: torch.Tensor, x: torch.Tensor,
                       y: torch.Tensor, client_indices: Sequence[torch.Tensor], weights=None,
                       loss: str = "ce", output: str = "probs", subset_sizes=None,
                       num_subsets: int = 20, seed=0, batch_size: int = 1000,
                       output_samples: int | None = 2000) -> dict:
    """All measurable FedIMA factors in one call (see module docstring).

    Returns ``train_bias``, ``heter_bias``, ``variance``, ``variance_by_m``,
    ``covariance`` (CKA), ``locality`` (max distance), ``mean_distance`` and
    ``global_loss`` (the global model's loss on ``x``).  Var and Cov use the first
    ``output_samples`` inputs of ``x`` (``None``: all).
    """
    W = _as_stack(client_models)
    bias = bias_terms(flat, W, x, y, client_indices, weights, loss, batch_size)
    p = bias["weights"]
    xs = x if output_samples is None else x[:output_samples]
    outs = client_outputs(flat, W, xs, output, batch_size)
    var = ensemble_variance(outs, p, subset_sizes, num_subsets, seed)
    cov = cka_covariance(outs, p) if W.shape[0] > 1 else {"covariance": float("nan")}
    dist = client_global_distance(W, w_global)
    g_loss, _ = per_sample_losses(flat, w_global, x, y, batch_size, loss=loss)
    return {
        "train_bias": bias["train_bias"],
        "heter_bias": bias["heter_bias"],
        "variance": var["variance"],
        "variance_by_m": var["variance_by_m"],
        "covariance": cov["covariance"],
        "locality": dist["max"],
        "mean_distance": dist["mean"],
        "global_loss": float(g_loss.mean()),
    }
