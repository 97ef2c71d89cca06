"""LPF, the low-pass-filter sharpness of Bisla et al. (AISTATS 2022), and loss-vs-perturbation curves.

LPF is the loss convolved with a Gaussian kernel,
``LPF(w) = E_{eps ~ N(0, sigma^2 I)} [L(w + eps)] ~ (1/M) sum_m L(w + eps_m)``.
Defaults follow Bisla et al.'s reference code (``flat_meas/low_pass.py``): ``sigma = 0.01``,
``M = 100``, i.i.d. noise on every parameter, the loss of the whole dataset given (their
code: the training set) with the model deterministic (flcore models have no dropout or
batch statistics).  The FedGF paper reports LPF (its Table 2) without giving sigma, M or
the data, so we keep Bisla's defaults; the CLI evaluates the training split by default.
As ``sigma -> 0`` LPF tends to ``L(w)``.

:func:`perturbation_curve` is the FedGF paper's Fig. 5 ("loss plots along to
perturbations"): the mean loss at ``w + r * eps`` against the magnitude ``r``.  The paper
does not say how it perturbs; decision: ``kind="gaussian"`` (default) uses
``eps ~ N(0, I)`` (so ``r`` is LPF's sigma and the curve is LPF as a function of sigma),
``kind="direction"`` a random unit vector (``r`` is then the L2 distance from ``w``).

Noise is drawn on the CPU from an explicit generator (``seed`` int or
``torch.Generator``), one draw per sample in order, so results repeat on any device.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from flcore.analysis.evaluation import Evaluator, evaluate_points
from flcore.seeding import generator as derived_generator

__all__ = ["LPFResult", "PerturbationCurve", "lpf", "perturbation_curve"]


@dataclass
class LPFResult:
    """The LPF estimate, its Monte-Carlo standard error and the ``M`` losses."""

    value: float
    std_error: float
    losses: torch.Tensor
    sigma: float

    def to_dict(self) -> dict:
        return {"lpf": self.value, "lpf_std_error": self.std_error, "sigma": self.sigma,
                "m": int(self.losses.numel())}


def _gen(seed, purpose):
    return seed if isinstance(seed, torch.Generator) else derived_generator(int(seed), purpose)


def _noisy_losses(evaluate: Evaluator, w: torch.Tensor, scales: list[float], gen, unit: bool,
                  chunk: int) -> torch.Tensor:
    out = []
    for start in range(0, len(scales), chunk):
        block = scales[start:start + chunk]
        noise = torch.randn(len(block), w.numel(), generator=gen, dtype=torch.float32)
        if unit:
            noise = noise / noise.norm(dim=1, keepdim=True)
        noise = noise.to(device=w.device, dtype=w.dtype)
        s = torch.tensor(block, dtype=w.dtype, device=w.device)[:, None]
        loss, _ = evaluate_points(evaluate, w[None] + s * noise)
        out.append(loss.cpu())
    return torch.cat(out)


def lpf(evaluate: Evaluator, w: torch.Tensor, sigma: float = 0.01, m: int = 100, seed=0,
        chunk: int = 8) -> LPFResult:
    """Monte-Carlo LPF of the evaluator's loss at ``w`` with ``m`` draws of ``N(0, sigma^2 I)``."""
    if sigma < 0 or not math.isfinite(sigma):
        raise ValueError(f"sigma must be a finite number >= 0, got {sigma}")
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    gen = _gen(seed, "analysis/lpf")
    losses = _noisy_losses(evaluate, w, [float(sigma)] * m, gen, unit=False, chunk=chunk)
    std_error = float(losses.std(unbiased=True) / math.sqrt(m)) if m > 1 else math.nan
    return LPFResult(float(losses.mean()), std_error, losses, float(sigma))


@dataclass
class PerturbationCurve:
    """Mean (and std over draws) loss at ``w + r eps`` for each magnitude ``r``."""

    magnitudes: torch.Tensor
    loss: torch.Tensor
    loss_std: torch.Tensor
    kind: str

    def to_dict(self) -> dict:
        return {"magnitudes": self.magnitudes.tolist(), "loss": self.loss.tolist(),
                "loss_std": self.loss_std.tolist(), "kind": self.kind}


def perturbation_curve(evaluate: Evaluator, w: torch.Tensor, magnitudes, samples: int = 10,
                       kind: str = "gaussian", seed=0, chunk: int = 8) -> PerturbationCurve:
    """Loss against perturbation magnitude (see module docstring), ``samples`` draws per
    magnitude."""
    if kind not in ("gaussian", "direction"):
        raise ValueError(f"kind must be 'gaussian' or 'direction', got {kind!r}")
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    mags = torch.as_tensor(magnitudes, dtype=torch.float64).reshape(-1)
    gen = _gen(seed, "analysis/perturbation_curve")
    scales = [float(r) for r in mags for _ in range(samples)]
    losses = _noisy_losses(evaluate, w, scales, gen, unit=(kind == "direction"), chunk=chunk)
    losses = losses.view(mags.numel(), samples)
    std = losses.std(dim=1, unbiased=True) if samples > 1 else torch.zeros(mags.numel(), dtype=torch.float64)
    return PerturbationCurve(mags, losses.mean(dim=1), std, kind)
