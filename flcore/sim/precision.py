"""The arithmetic a run trains and evaluates in: the config field ``precision``.

PyTorch runs cuDNN convolutions in TF32 by default on NVIDIA GPUs (``torch.backends.cudnn.conv.fp32_precision``
is ``"tf32"`` out of the box), so an unmarked float32 run on a GPU silently multiplies in 10-bit
mantissas.  flcore makes the choice explicit:

- ``fp32`` (the default): IEEE float32 everywhere; TF32 is switched off for matmuls and
  convolutions while a run's local training and evaluation run, and the previous settings
  are restored after.  The numbers a float32 test checks on the CPU are then the numbers a
  GPU gives, to float32 rounding (not to TF32's 1e-3).
- ``tf32``: TF32 matmuls and convolutions on CUDA (no effect on the CPU).
- ``bf16``: the forward and backward passes of local training and evaluation run under
  ``torch.autocast(dtype=torch.bfloat16)``; the parameters, optimizer and server stay in
  their own dtype (float32, or float64 which autocast leaves alone).

The default is ``fp32`` until measurements on an accelerator decide otherwise; a run's
config records its precision, and the run id includes it only when it is not ``fp32``
(so the ids of stored runs stay).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

__all__ = ["precision_mode"]


@contextlib.contextmanager
def precision_mode(precision: str, device: torch.device | str) -> Iterator[None]:
    """Run the body in ``precision`` (``fp32`` | ``tf32`` | ``bf16``) on ``device``."""
    if precision not in ("fp32", "tf32", "bf16"):
        raise ValueError(f"precision: got {precision!r}; allowed values: fp32, tf32, bf16")
    device = torch.device(device)
    matmul, conv = torch.backends.cuda.matmul, torch.backends.cudnn.conv
    saved = (matmul.fp32_precision, conv.fp32_precision)
    mode = "tf32" if precision == "tf32" else "ieee"
    matmul.fp32_precision = mode
    conv.fp32_precision = mode
    try:
        if precision == "bf16":
            with torch.autocast(device.type, dtype=torch.bfloat16):
                yield
        else:
            yield
    finally:
        matmul.fp32_precision, conv.fp32_precision = saved
