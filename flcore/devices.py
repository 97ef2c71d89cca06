"""The device a run or an analysis computes on, from its name in a config or a command."""
from __future__ import annotations

import torch

from flcore.errors import ConfigError, quote


def resolve_device(name: str | torch.device) -> torch.device:
    """``auto`` picks CUDA when available, else the CPU; a ``torch.device`` is returned as it
    is.  A device this machine lacks (CUDA, MPS) or a name torch does not know is a
    :class:`~flcore.errors.ConfigError` naming the field ``device``, before any compute."""
    if isinstance(name, torch.device):
        return name
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError("device", f"got {quote(name)} but CUDA is not available here; allowed values: cpu, auto")
    if name == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("device", "got 'mps' but MPS is not available here; allowed values: cpu, auto")
    try:
        return torch.device(name)
    except RuntimeError:
        raise ConfigError("device", f"got {quote(name)}; allowed values: cpu, auto, cuda, cuda:N, mps") from None
