"""Common corruptions of 1-D signals at five severities: the stand-in for CIFAR-10-C / CIFAR-100-C.

The FedSAM paper (Figs. 6 and 8) tests its CIFAR models on CIFAR-10-C and CIFAR-100-C
(Hendrycks & Dietterich, ICLR 2019): the 10,000 test images altered by 19 corruptions, each
at severities 1 (mild) to 5 (strong).  Below the ``paper`` scale the models are trained on
MNIST-1D, whose inputs are signals of 40 samples, so flcore corrupts the MNIST-1D test
signals itself with the 1-D analogue of every corruption family that has one.

**The unit range.**  CIFAR-C works on images in [0, 1] whose pixels have a standard
deviation of about 0.25.  A signal is mapped to that range first,
``u = (x - mean) / (4 std) + 0.5`` (``mean`` and ``std`` of the *clean test set*, see
:class:`SignalStats`), so the severity ladders of the CIFAR-10-C generator carry over with
the same strength relative to the signal; the result is mapped back.  Unlike images, a
signal is not saturated: nothing is clipped to [0, 1].

**The corruptions** (:data:`CORRUPTIONS`; each a function ``f(u, severity, rng)`` on a
float64 array ``[N, L]`` documented below): the noises (``gaussian_noise``,
``shot_noise``, ``impulse_noise``, ``speckle_noise``), the blurs (``gaussian_blur``,
``defocus_blur``, ``glass_blur``, ``motion_blur``, ``zoom_blur``), the geometric and
digital ones (``elastic_transform``, ``pixelate``, ``jpeg_compression``) and the
photometric ones (``contrast``, ``brightness``, ``fog``): 15 of the 19.  ``saturate``
(colour saturation), ``frost``, ``snow`` and ``spatter`` (overlays of photographed
textures) have no 1-D counterpart and are left out (:data:`NOT_FOR_SIGNALS`).

**Determinism.**  :func:`corrupt` draws from a generator seeded by
``(seed, "corruption/<name>/<severity>")`` (:func:`flcore.seeding.generator`), so the
same signals, corruption, severity and seed give the same array, and each (corruption,
severity) pair has its own stream (CIFAR-C likewise fixes one corrupted copy per pair).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from flcore.seeding import derive_seed

SEVERITIES = (1, 2, 3, 4, 5)
#: CIFAR-C corruptions with no 1-D counterpart (colour, photographed overlays).
NOT_FOR_SIGNALS = ("saturate", "frost", "snow", "spatter")


@dataclass(frozen=True)
class SignalStats:
    """Mean and standard deviation of the clean signals that define the unit range."""

    mean: float
    std: float

    @classmethod
    def of(cls, x) -> SignalStats:
        values = np.asarray(x, dtype=np.float64)
        std = float(values.std())
        if not np.isfinite(std) or std <= 0:
            raise ValueError("the clean signals must have a positive, finite standard deviation")
        return cls(float(values.mean()), std)

    def to_unit(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / (4.0 * self.std) + 0.5

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        return (u - 0.5) * 4.0 * self.std + self.mean


def _ladder(values, severity: int):
    return values[severity - 1]


# --------------------------------------------------------------------------- helpers

def _convolve_rows(u: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Each row convolved with a centred odd-length ``kernel``, edges reflected (as
    CIFAR-C's image filters)."""
    half = len(kernel) // 2
    if half == 0:
        return u * kernel[0]
    padded = np.pad(u, ((0, 0), (half, half)), mode="reflect" if u.shape[1] > half else "edge")
    out = np.zeros_like(u)
    for offset, weight in enumerate(kernel):
        out += weight * padded[:, offset:offset + u.shape[1]]
    return out


def _gaussian_kernel(sigma: float) -> np.ndarray:
    half = max(1, int(np.ceil(4 * sigma)))
    t = np.arange(-half, half + 1, dtype=np.float64)
    kernel = np.exp(-0.5 * (t / sigma) ** 2)
    return kernel / kernel.sum()


def _resample(u: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Rows of ``u`` read at fractional ``positions`` (linear interpolation, edges held)."""
    length = u.shape[1]
    positions = np.clip(positions, 0, length - 1)
    lo = np.floor(positions).astype(int)
    hi = np.minimum(lo + 1, length - 1)
    frac = positions - lo
    if positions.ndim == 1:
        return u[:, lo] * (1 - frac) + u[:, hi] * frac
    rows = np.arange(u.shape[0])[:, None]
    return u[rows, lo] * (1 - frac) + u[rows, hi] * frac


def _dct_matrix(n: int) -> np.ndarray:
    """The orthonormal DCT-II matrix (``coefficients = D @ block``)."""
    k = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    matrix = np.cos(np.pi * (2 * i + 1) * k / (2 * n)) * np.sqrt(2.0 / n)
    matrix[0] /= np.sqrt(2.0)
    return matrix


# --------------------------------------------------------------------------- noises

def gaussian_noise(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Additive white noise of standard deviation c = 0.04, 0.06, 0.08, 0.09, 0.10 (the
    CIFAR-10-C ladder; 0.16-0.40 signal standard deviations)."""
    c = _ladder((0.04, 0.06, 0.08, 0.09, 0.10), severity)
    return u + rng.normal(0.0, c, size=u.shape)


def shot_noise(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Poisson (photon) noise: ``Poisson(c u) / c`` with c = 500, 250, 100, 75, 50 (the
    CIFAR-10-C ladder); the part of the signal below 0 has no photons and is kept as is."""
    c = _ladder((500, 250, 100, 75, 50), severity)
    positive = np.maximum(u, 0.0)
    return rng.poisson(positive * c) / c + (u - positive)


def impulse_noise(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Salt and pepper: a fraction 0.01, 0.02, 0.03, 0.05, 0.07 of the samples (the CIFAR-10-C
    ladder) set to 0 or 1 (mean -/+ 2 std), with equal odds."""
    amount = _ladder((0.01, 0.02, 0.03, 0.05, 0.07), severity)
    out = u.copy()
    hit = rng.random(u.shape) < amount
    out[hit] = (rng.random(int(hit.sum())) < 0.5).astype(np.float64)
    return out


def speckle_noise(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Multiplicative noise ``u + u N(0, c^2)``, c = 0.06, 0.10, 0.12, 0.16, 0.20 (the CIFAR-10-C
    ladder)."""
    c = _ladder((0.06, 0.10, 0.12, 0.16, 0.20), severity)
    return u + u * rng.normal(0.0, c, size=u.shape)


# --------------------------------------------------------------------------- blurs

def gaussian_blur(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Gaussian filter of sigma = 0.4, 0.6, 0.7, 0.8, 1.0 samples (the CIFAR-10-C ladder in
    pixels)."""
    sigma = _ladder((0.4, 0.6, 0.7, 0.8, 1.0), severity)
    return _convolve_rows(u, _gaussian_kernel(sigma))


def defocus_blur(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """A 1-D "disk": a box of radius r = 0.3, 0.4, 0.5, 1, 1.5 samples with soft edges
    (weight ``clip(r + 0.5 - |i|, 0, 1)``), then a Gaussian of sigma 0.4, 0.5, 0.6, 0.2, 0.1
    against aliasing (the CIFAR-10-C (radius, alias blur) pairs)."""
    radius, alias = _ladder(((0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1.0, 0.2), (1.5, 0.1)), severity)
    half = int(np.ceil(radius + 0.5))
    t = np.arange(-half, half + 1, dtype=np.float64)
    box = np.clip(radius + 0.5 - np.abs(t), 0.0, 1.0)
    blurred = _convolve_rows(u, box / box.sum())
    return _convolve_rows(blurred, _gaussian_kernel(alias))


def glass_blur(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Gaussian blur (sigma), then ``iterations`` sweeps swapping each sample with a random
    one at most ``max_delta`` away, then the blur again; (sigma, max_delta, iterations) =
    (0.05, 1, 1), (0.25, 1, 1), (0.4, 1, 1), (0.25, 1, 2), (0.4, 1, 2) (the CIFAR-10-C
    ladder)."""
    sigma, max_delta, iterations = _ladder(((0.05, 1, 1), (0.25, 1, 1), (0.4, 1, 1), (0.25, 1, 2),
                                            (0.4, 1, 2)), severity)
    out = _convolve_rows(u, _gaussian_kernel(sigma))
    length = u.shape[1]
    rows = np.arange(u.shape[0])
    for _ in range(iterations):
        for i in range(length - max_delta - 1, max_delta - 1, -1):
            j = i + rng.integers(-max_delta, max_delta + 1, size=u.shape[0])
            left, right = out[rows, i].copy(), out[rows, j].copy()
            out[rows, i], out[rows, j] = right, left
    return _convolve_rows(out, _gaussian_kernel(sigma))


def motion_blur(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """A one-sided (trailing) Gaussian kernel of sigma = 1, 1.5, 2, 2.5, 3 samples (the
    CIFAR-10-C motion sigmas), the signal smeared in one random direction per signal."""
    sigma = _ladder((1.0, 1.5, 2.0, 2.5, 3.0), severity)
    half = int(np.ceil(3 * sigma))
    t = np.arange(-half, half + 1, dtype=np.float64)
    trailing = np.where(t >= 0, np.exp(-0.5 * (t / sigma) ** 2), 0.0)
    trailing /= trailing.sum()
    forward = _convolve_rows(u, trailing)
    backward = _convolve_rows(u, trailing[::-1])
    direction = rng.random(u.shape[0]) < 0.5
    return np.where(direction[:, None], forward, backward)


def zoom_blur(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """The mean of the signal and copies zoomed about its centre by 1.01, 1.02, ... up to
    1.05, 1.10, 1.15, 1.20, 1.25 (the CIFAR-10-C zoom factors)."""
    top = _ladder((1.06, 1.11, 1.16, 1.21, 1.26), severity)
    zooms = np.arange(1.0, top, 0.01)[1:]
    centre = (u.shape[1] - 1) / 2
    t = np.arange(u.shape[1], dtype=np.float64)
    total = u.copy()
    for z in zooms:
        total += _resample(u, centre + (t - centre) / z)
    return total / (len(zooms) + 1)


# --------------------------------------------------------------------------- geometric and digital

def elastic_transform(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Each signal read at ``t + d(t)``, with ``d`` a smooth random displacement (white noise
    smoothed by a Gaussian of sigma 3 samples, scaled to a largest shift of 0.5, 1, 1.5, 2,
    2.5 samples).  The ladder is ours: CIFAR-C's image version mixes an affine warp in."""
    amplitude = _ladder((0.5, 1.0, 1.5, 2.0, 2.5), severity)
    noise = rng.uniform(-1.0, 1.0, size=u.shape)
    smooth = _convolve_rows(noise, _gaussian_kernel(3.0))
    peak = np.abs(smooth).max(axis=1, keepdims=True)
    displacement = amplitude * smooth / np.where(peak > 0, peak, 1.0)
    return _resample(u, np.arange(u.shape[1])[None, :] + displacement)


def pixelate(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Resampled to a fraction c = 0.95, 0.9, 0.85, 0.75, 0.65 of its length (box averages)
    and back with nearest-neighbour steps (the CIFAR-10-C ladder)."""
    c = _ladder((0.95, 0.90, 0.85, 0.75, 0.65), severity)
    length = u.shape[1]
    coarse = max(1, int(round(length * c)))
    cells = np.minimum(((np.arange(length) + 0.5) * coarse / length).astype(int), coarse - 1)
    membership = np.zeros((length, coarse))
    membership[np.arange(length), cells] = 1.0
    means = (u @ membership) / membership.sum(axis=0)
    return means[:, cells]


#: First row of the JPEG standard's luminance quantization table (Annex K).
_JPEG_LUMINANCE_ROW = np.array([16, 11, 10, 16, 24, 40, 51, 61], dtype=np.float64)


def jpeg_compression(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """JPEG's lossy step in 1-D: blocks of 8 samples, their DCT-II quantized with the JPEG
    luminance steps (first table row) scaled for quality 80, 65, 58, 50, 40 (the CIFAR-10-C
    ladder) on the 0-255 scale, as libjpeg scales them (``5000 / q`` below 50, else
    ``200 - 2 q``); a last partial block is padded by repeating its last sample."""
    quality = _ladder((80, 65, 58, 50, 40), severity)
    scale = 5000.0 / quality if quality < 50 else 200.0 - 2.0 * quality
    steps = np.maximum(np.floor((_JPEG_LUMINANCE_ROW * scale + 50.0) / 100.0), 1.0)
    length = u.shape[1]
    blocks = -(-length // 8)
    padded = np.pad(u * 255.0 - 128.0, ((0, 0), (0, blocks * 8 - length)), mode="edge")
    dct = _dct_matrix(8)
    coefficients = padded.reshape(u.shape[0], blocks, 8) @ dct.T
    quantized = np.round(coefficients / steps) * steps
    restored = (quantized @ dct).reshape(u.shape[0], blocks * 8)[:, :length]
    return (restored + 128.0) / 255.0


# --------------------------------------------------------------------------- photometric

def contrast(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Deviations from each signal's mean scaled by c = 0.75, 0.5, 0.4, 0.3, 0.15 (the
    CIFAR-10-C ladder)."""
    c = _ladder((0.75, 0.5, 0.4, 0.3, 0.15), severity)
    mean = u.mean(axis=1, keepdims=True)
    return (u - mean) * c + mean


def brightness(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """An offset of c = 0.05, 0.1, 0.15, 0.2, 0.3 (the CIFAR-10-C ladder, added there to the
    HSV value)."""
    return u + _ladder((0.05, 0.1, 0.15, 0.2, 0.3), severity)


def _fractal_1d(length: int, decay: float, rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` 1-D midpoint-displacement ("plasma") fractals in [0, 1]: each halving of the
    segments adds noise ``decay`` times weaker."""
    size = 1
    while size + 1 < length:
        size *= 2
    out = np.zeros((count, size + 1))
    out[:, [0, -1]] = rng.uniform(-1.0, 1.0, size=(count, 2))
    step, amplitude = size, 1.0
    while step > 1:
        half = step // 2
        mids = np.arange(half, size, step)
        out[:, mids] = 0.5 * (out[:, mids - half] + out[:, mids + half]) + rng.uniform(
            -amplitude, amplitude, size=(count, len(mids)))
        step, amplitude = half, amplitude / decay
    out = out[:, :length]
    out -= out.min(axis=1, keepdims=True)
    span = out.max(axis=1, keepdims=True)
    return out / np.where(span > 0, span, 1.0)


def fog(u: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Low-frequency haze: ``(u + c f) m / (m + c)`` with ``f`` a plasma fractal of decay d
    and ``m`` the signal's maximum; (c, d) = (0.2, 3), (0.5, 3), (0.75, 2.5), (1, 2),
    (1.5, 1.75) (the CIFAR-10-C ladder)."""
    c, decay = _ladder(((0.2, 3.0), (0.5, 3.0), (0.75, 2.5), (1.0, 2.0), (1.5, 1.75)), severity)
    haze = _fractal_1d(u.shape[1], decay, rng, u.shape[0])
    peak = u.max(axis=1, keepdims=True)
    return (u + c * haze) * peak / (peak + c)


#: The 15 corruptions, grouped as in CIFAR-C (noise, blur, weather/photometric, digital).
CORRUPTIONS: dict[str, Callable[[np.ndarray, int, np.random.Generator], np.ndarray]] = {
    "gaussian_noise": gaussian_noise, "shot_noise": shot_noise, "impulse_noise": impulse_noise,
    "speckle_noise": speckle_noise, "gaussian_blur": gaussian_blur, "defocus_blur": defocus_blur,
    "glass_blur": glass_blur, "motion_blur": motion_blur, "zoom_blur": zoom_blur, "fog": fog,
    "brightness": brightness, "contrast": contrast, "elastic_transform": elastic_transform,
    "pixelate": pixelate, "jpeg_compression": jpeg_compression,
}


def corrupt(x, corruption: str, severity: int, seed: int = 0, stats: SignalStats | None = None) -> torch.Tensor:
    """``x`` (signals ``[N, L]``, tensor or array) with ``corruption`` at ``severity`` (1-5).

    ``stats`` fixes the unit range (default: :meth:`SignalStats.of` ``x``); pass the clean
    test set's statistics when corrupting a subset so it gets the same transform.  Returns a
    float32 tensor of ``x``'s shape; the same arguments give the same result.
    """
    if corruption not in CORRUPTIONS:
        hint = " (an image corruption with no 1-D counterpart)" if corruption in NOT_FOR_SIGNALS else ""
        raise ValueError(f"unknown corruption {corruption!r}{hint}; allowed: {', '.join(CORRUPTIONS)}")
    if severity not in SEVERITIES:
        raise ValueError(f"severity must be one of 1, 2, 3, 4, 5, got {severity!r}")
    values = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
    values = values.astype(np.float64)
    if values.ndim != 2 or values.shape[1] < 2:
        raise ValueError(f"expected signals [N, L] with L >= 2, got shape {tuple(values.shape)}")
    stats = stats or SignalStats.of(values)
    rng = np.random.default_rng(derive_seed(seed, f"corruption/{corruption}/{severity}"))
    out = stats.from_unit(CORRUPTIONS[corruption](stats.to_unit(values), severity, rng))
    return torch.from_numpy(out.astype(np.float32))
