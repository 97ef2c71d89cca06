"""The leading run axis: per-run values of the runs of a group as one batch of rows.

A group of R runs (:mod:`flcore.sim.round_driver`) trains the ``R*K`` clients of a round
as one computation.  Its inputs are merged here: values equal in every run stay as they
are (so a group of one run passes its run's own values through untouched), model-sized
vectors ``[P]`` become rows ``[R*K, P]``, numbers become ``[R*K, 1]`` columns, client
procedures whose float fields differ become one procedure with per-row columns, and the
runs' training sets one set with an offset per run.  :func:`slice_parts` cuts the merged
procedure back to the rows of one chunk.
"""
from __future__ import annotations

import dataclasses

import torch

from flcore.sim.federated_data import FederatedData
from flcore.sim.round_draws import to_device_once
from flcore.sim.sampling import ClientPlan


def _column(values: list, rows_per_run: list[int], device, dtype) -> torch.Tensor:
    """One value per run -> a ``[sum(rows), 1]`` column, each run's value repeated on its
    rows: built on the host, sent without waiting (:func:`to_device_once`)."""
    host = torch.tensor(values, dtype=dtype).repeat_interleave(torch.tensor(rows_per_run)).unsqueeze(-1)
    return to_device_once({"column": host}, device)["column"]


def repeat_rows(stacked: torch.Tensor, rows_per_run: list[int]) -> torch.Tensor:
    """Row ``i`` of ``stacked`` repeated ``rows_per_run[i]`` times (no host-to-device copy
    of the counts, unlike ``repeat_interleave`` with a tensor of repeats)."""
    if len(set(rows_per_run)) == 1:
        return stacked.repeat_interleave(rows_per_run[0], dim=0)
    return torch.cat([stacked[i:i + 1].expand(r, *stacked.shape[1:]) for i, r in enumerate(rows_per_run)])


def _equal(a, b) -> bool:
    """Equality that looks into tensors, tuples and dataclass parts (whose fields may be tensors)."""
    if a is b:
        return True
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and a.dtype == b.dtype and torch.equal(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if dataclasses.is_dataclass(a) and not isinstance(a, type):  # compare=False fields (a model template) skipped
        return type(a) is type(b) and all(_equal(getattr(a, f.name), getattr(b, f.name))
                                          for f in dataclasses.fields(a) if f.compare)
    return a == b


def _same(values: list) -> bool:
    return all(_equal(values[0], v) for v in values[1:])


def merge_per_run(values: list, rows_per_run: list[int], like: torch.Tensor):
    """Per-run values of one input -> one value for the whole batch of rows.

    Equal values stay as they are; model-sized vectors ``[P]`` become rows ``[R*K, P]``;
    scalars (Python numbers or 0-d tensors) become a ``[R*K, 1]`` column.  Tensors are
    compared by identity only: comparing their values would read them back from the
    device in every round.
    """
    first = values[0]
    if all(v is first for v in values) or (not isinstance(first, torch.Tensor) and _same(values)):
        return first
    if isinstance(first, torch.Tensor) and first.dim() == 1 and first.numel() == like.shape[-1]:
        return repeat_rows(torch.stack(values), rows_per_run)
    if isinstance(first, torch.Tensor) and first.dim() == 0:
        return repeat_rows(torch.stack(values).to(like.dtype), rows_per_run).unsqueeze(-1)
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        return _column([float(v) for v in values], rows_per_run, like.device, like.dtype)
    raise ValueError(f"cannot batch per-run values of type {type(first).__name__} and shape "
                     f"{getattr(first, 'shape', None)} across runs")


def merge_parts(parts: list, rows_per_run: list[int], like: torch.Tensor):
    """The runs' client procedures (equal up to numeric fields) as one procedure whose
    differing float fields are per-row columns."""
    first = parts[0]
    if _same(parts):
        return first
    if not dataclasses.is_dataclass(first) or any(type(p) is not type(first) for p in parts):
        raise ValueError(f"runs with different client parts ({type(first).__name__}) cannot share a batch")
    changes = {}
    for f in dataclasses.fields(first):
        values = [getattr(p, f.name) for p in parts]
        if not f.compare or _same(values):  # a model template (compare=False): the runs share the model
            continue
        if isinstance(values[0], tuple):
            changes[f.name] = tuple(merge_parts(list(vs), rows_per_run, like) for vs in zip(*values))
        elif dataclasses.is_dataclass(values[0]):
            changes[f.name] = merge_parts(values, rows_per_run, like)
        else:
            changes[f.name] = merge_per_run(values, rows_per_run, like)
    return dataclasses.replace(first, **changes)


def concat_data(datas: list[FederatedData]) -> tuple[FederatedData, list[int]]:
    """The runs' training sets as one (identical sets are stored once) and each run's
    offset into it.  Only what local training reads is kept (no test set, no clients)."""
    unique: list[FederatedData] = []
    offsets_of: dict[int, int] = {}
    position = 0
    for data in datas:
        match = next((u for u in unique if u.train_x.shape == data.train_x.shape
                      and torch.equal(u.train_x, data.train_x) and torch.equal(u.train_y, data.train_y)), None)
        if match is None:
            unique.append(data)
            offsets_of[id(data)] = position
            position += data.train_x.shape[0]
        else:
            offsets_of[id(data)] = offsets_of[id(match)]
    first = datas[0]
    merged = FederatedData(
        train_x=torch.cat([u.train_x for u in unique]) if len(unique) > 1 else first.train_x,
        train_y=torch.cat([u.train_y for u in unique]) if len(unique) > 1 else first.train_y,
        test_x=first.test_x[:0], test_y=first.test_y[:0], client_indices=[],
        num_classes=first.num_classes, augment=first.augment, mean=first.mean, std=first.std)
    if len(unique) == 1 and "_prepared" in first.__dict__:  # the same set: share its prepared copy
        merged.__dict__["_prepared"] = first.__dict__["_prepared"]
    return merged, [offsets_of[id(d)] for d in datas]


def shift_plan(plan: ClientPlan, offset: int) -> ClientPlan:
    if offset == 0:
        return plan
    return dataclasses.replace(plan, batches=[b + offset for b in plan.batches])


def slice_parts(part, lo: int, hi: int, total: int):
    """A merged client procedure restricted to rows ``lo:hi`` (its per-row columns cut)."""
    if lo == 0 and hi == total:
        return part
    if isinstance(part, tuple):
        return tuple(slice_parts(p, lo, hi, total) for p in part)
    if not dataclasses.is_dataclass(part):
        return part
    changes = {}
    for f in dataclasses.fields(part):
        value = getattr(part, f.name)
        if isinstance(value, torch.Tensor) and value.dim() == 2 and value.shape == (total, 1):
            changes[f.name] = value[lo:hi]
        elif isinstance(value, tuple) or dataclasses.is_dataclass(value):
            changes[f.name] = slice_parts(value, lo, hi, total)
    return dataclasses.replace(part, **changes) if changes else part
