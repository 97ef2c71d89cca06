"""Conversion of run records to strict JSON.

Metrics and summaries come straight from training code, so they hold numpy and torch
scalars and, when a run diverges, NaN or infinity.  ``to_jsonable`` turns such values
into plain Python ones:

- numpy scalars and 0-d tensors become Python numbers; arrays and larger tensors
  become (nested) lists.  float32/float16 values are written as the shortest decimal
  that round-trips in their own precision (float32 ``0.7`` is written ``0.7``, not
  ``0.699999988079071``);
- **non-finite floats (NaN, +inf, -inf) become ``null``**.  Strict JSON has no NaN, and
  ``null`` is readable by every JSON tool (``json.dumps(allow_nan=True)`` would write the
  non-standard token ``NaN``, which ``jq`` and browsers reject).  A NaN metric therefore
  reads back as ``None`` and shows as NaN in a pandas column.  The run's status records
  the divergence itself (``"diverged"``), so the lost distinction between NaN and inf
  does not hide it;
- tuples become lists, paths become strings, enums their values, dataclasses dicts;
- mapping keys become strings the way ``json`` writes them (``1`` -> ``"1"``).

Anything else raises ``TypeError`` naming the type, rather than being written as its
``repr``.
"""
from __future__ import annotations

import dataclasses
import enum
import json
import math
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

import numpy as np
import torch


def to_jsonable(value: Any) -> Any:
    """A copy of ``value`` made of ``dict``, ``list``, ``str``, ``int``, ``float``
    (finite), ``bool`` and ``None`` only; see the module docstring for the rules."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {_key(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        if _is_low_precision_float(value.dtype):
            # str() is the shortest decimal that round-trips in the value's own precision.
            return to_jsonable(float(str(value)))
        return to_jsonable(value.item())
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return to_jsonable(value[()])
        if _is_low_precision_float(value.dtype):
            return [to_jsonable(v) for v in value]
        return to_jsonable(value.tolist())
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        if value.dtype == torch.bfloat16:  # numpy has no bfloat16
            value = value.float()
        return to_jsonable(value.numpy())
    if isinstance(value, PurePath):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    raise TypeError(f"cannot store a value of type {type(value).__name__} as JSON: {value!r}")


def dumps_json(value: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """``json.dumps`` of ``to_jsonable(value)``; never emits NaN/Infinity tokens."""
    return json.dumps(
        to_jsonable(value), indent=indent, sort_keys=sort_keys, allow_nan=False, ensure_ascii=False
    )


def _is_low_precision_float(dtype: np.dtype) -> bool:
    return np.issubdtype(dtype, np.floating) and dtype.itemsize < 8


def _key(key: Any) -> str:
    key = to_jsonable(key)
    return key if isinstance(key, str) else json.dumps(key, allow_nan=False)
