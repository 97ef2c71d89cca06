"""Tensors in Flower messages, and the record names flcore's strategy and client share.

Flower's ``ArrayRecord`` stores each array as NumPy's ``.npy`` bytes (never pickled), so
a tensor crosses a message bit for bit, in its own dtype (float64 stays float64; the
client-state flags stay bool).
"""
from __future__ import annotations

import torch
from flwr.app import ArrayRecord

#: ``ConfigRecord`` of a training message: the federation's name, the 0-based flcore
#: round, the client learning rate and whether it is a probe pass.
CONFIG = "flcore.config"
#: ``ArrayRecord`` of a training message: ``start`` (the point the clients start from),
#: ``global_model`` (only when it differs from ``start``: FedGloSS) and the vectors the
#: server part broadcasts, under their own names (``scaffold_c``, ``fedgf_perturbed``...).
SENT = "flcore.sent"
#: ``ArrayRecord`` of a training reply: the client's uploads (``model``, ``train_loss``,
#: ``steps`` and the parts' extra vectors).
UPLOADS = "flcore.uploads"
#: ``MetricRecord`` of a training reply (``num-examples``, ``train_loss``).
METRICS = "flcore.metrics"
START, GLOBAL_MODEL = "start", "global_model"


def state_key(federation: str) -> str:
    """The ``Context.state`` key of a node's client state for ``federation``."""
    return f"flcore.client_state.{federation}"


def to_record(tensors: dict[str, torch.Tensor]) -> ArrayRecord:
    """Named tensors as an ``ArrayRecord`` (copied to the CPU)."""
    return ArrayRecord({name: t.detach().cpu().contiguous() for name, t in tensors.items()})


def from_record(record: ArrayRecord, device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """An ``ArrayRecord`` as named tensors on ``device``."""
    return {name: t.to(device) for name, t in record.to_torch_state_dict().items()}
