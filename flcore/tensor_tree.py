"""Tensors inside plain containers (dicts, lists, tuples), moved as one: a run's server and
client state to the host for a checkpoint and back to its device on resume, and a tensor
file written on the host so that a run trained on a GPU opens on a machine without one."""
from __future__ import annotations

from typing import Any

import torch

__all__ = ["to_device"]


def to_device(tree: Any, device: torch.device | str) -> Any:
    """``tree`` with every tensor in it (in dicts, lists and tuples, at any depth) detached
    and on ``device``; other values as they are."""
    if isinstance(tree, torch.Tensor):
        return tree.detach().to(device)
    if isinstance(tree, dict):
        return {key: to_device(value, device) for key, value in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_device(value, device) for value in tree)
    return tree
