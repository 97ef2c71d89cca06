"""A round's random draws for local training, packed on the host and sent to the device in
one transfer.

Every draw of a round (which samples each client's steps read, their crop offsets and
flips, the Mixup and Cutout draws) is made on the CPU from the generators derived from
``(seed, purpose, round, client)`` (:mod:`flcore.sim.sampling`), so CPU and GPU runs,
batched and sequential, resumed and uninterrupted see the same numbers.  They are laid
out as ``[S, K, W]`` tables (steps x clients x batch slots), packed into one host buffer
(pinned on CUDA) and copied to the device once per round without waiting
(:func:`to_device_once`); the steps of the round then only read device tensors.

Shapes: ``W`` is the widest batch of the round, or a fixed ``width`` for the whole run
(the batched engine's static shapes: the last partial batch, 52 of 64 samples at the
papers' 500 samples per client, is padded with zero-weight samples, so every step of a
run has one shape).  A padded slot reads sample ``index = 0`` and has weight 0, which
:meth:`flcore.flat.FlatModel.loss` turns into an exactly zero contribution to the loss
and the gradient.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from flcore.sim.sampling import ClientPlan

#: Byte alignment of the tensors in a packed buffer (the widest element is 8 bytes).
_ALIGN = 8


def to_device_once(tensors: dict[str, torch.Tensor], device) -> dict[str, torch.Tensor]:
    """Host tensors as tensors on ``device``: on the CPU, themselves; elsewhere their bytes
    packed into one host buffer (pinned on CUDA), copied with one non-blocking transfer,
    and viewed back as tensors of their dtypes and shapes."""
    device = torch.device(device)
    if device.type == "cpu":
        return dict(tensors)
    layout, total = [], 0
    for name, tensor in tensors.items():
        nbytes = tensor.numel() * tensor.element_size()
        layout.append((name, total, nbytes, tensor.dtype, tuple(tensor.shape)))
        total += -(-nbytes // _ALIGN) * _ALIGN
    buffer = torch.empty(max(total, _ALIGN), dtype=torch.uint8, pin_memory=device.type == "cuda")
    for (_, start, nbytes, dtype, shape), tensor in zip(layout, tensors.values()):
        if nbytes:
            buffer[start:start + nbytes].view(dtype).view(shape).copy_(tensor)
    moved = buffer.to(device, non_blocking=True)
    return {name: moved[start:start + nbytes].view(dtype).view(shape)
            for name, start, nbytes, dtype, shape in layout}


@dataclass
class RoundDraws:
    """The draws of a round's clients (or a chunk of them) on the device.

    ``index`` ``[S, K, W]``: global training-sample indices; ``weight`` ``[S, K, W]``: 1 on
    real samples, 0 on padding; ``active`` ``[S, K]``: the client has a batch at step s;
    ``crops``: ``(dy, dx, flip)`` ``[S, K, W]`` or None without augmentation;
    ``mix_lam`` ``[S, K]`` and ``mix_perm`` ``[S, K, W]`` (Mixup: lam and the partner of
    each slot; padded slots are their own partners), ``cut_centres`` ``[S, K, W, D]``
    (Cutout) or None; ``num_steps`` ``[K]``; ``client_ids`` ``[K]`` (ids within each
    client's run).  Host-side facts, Python lists read without touching any tensor:
    ``counts`` (real samples of each step and client, ``counts[s][k]``), ``widths`` (per
    step, the width its tensors are cut to: the widest real batch, or ``W`` for static
    shapes) and ``steps`` (the chunk's step count).
    """

    index: torch.Tensor
    weight: torch.Tensor
    active: torch.Tensor
    crops: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None
    mix_lam: torch.Tensor | None
    mix_perm: torch.Tensor | None
    cut_centres: torch.Tensor | None
    cutout_size: int
    num_steps: torch.Tensor
    client_ids: torch.Tensor
    counts: list[list[int]]
    widths: list[int]
    static: bool

    def __len__(self) -> int:
        return len(self.counts[0])

    @property
    def steps(self) -> int:
        return len(self.widths)

    def rows(self, lo: int, hi: int) -> RoundDraws:
        """The draws of clients ``lo:hi`` (views), cut to the steps and widths they use."""
        if lo == 0 and hi == len(self):
            return self
        counts = [row[lo:hi] for row in self.counts]
        steps = max(1, sum(1 for row in counts if any(row)))  # steps are filled from the first on
        counts = counts[:steps]
        widths = self.widths[:steps] if self.static else [max(1, *row) for row in counts]

        def cut(t):
            return None if t is None else t[:steps, lo:hi]

        return replace(self, index=cut(self.index), weight=cut(self.weight), active=cut(self.active),
                       crops=None if self.crops is None else tuple(cut(t) for t in self.crops),
                       mix_lam=cut(self.mix_lam), mix_perm=cut(self.mix_perm), cut_centres=cut(self.cut_centres),
                       num_steps=self.num_steps[lo:hi], client_ids=self.client_ids[lo:hi], counts=counts[:steps],
                       widths=widths)


def stack_plans(plans: list[ClientPlan], device, dtype: torch.dtype, width: int | None = None) -> RoundDraws:
    """The batches and augmentation draws of ``plans`` as :class:`RoundDraws` on
    ``device``, moved in one transfer.  ``width``: pad every step to this many slots
    (static shapes; at least the widest batch); None pads each step only to its own
    widest batch."""
    K = len(plans)
    steps = max(1, max(p.num_steps for p in plans))
    counts = [[p.batches[s].numel() if s < p.num_steps else 0 for p in plans] for s in range(steps)]
    widest = max(1, *(max(row) for row in counts))
    if width is not None and width < widest:
        raise ValueError(f"width {width} is narrower than the round's widest batch ({widest})")
    W = width or widest
    host: dict[str, torch.Tensor] = {
        "index": torch.zeros(steps, K, W, dtype=torch.long),
        "counts": torch.tensor(counts, dtype=torch.long),
        "num_steps": torch.tensor([p.num_steps for p in plans], dtype=torch.long),
        "client_ids": torch.tensor([p.client for p in plans], dtype=torch.long),
    }
    augmented = any(p.crops and p.crops[0] is not None for p in plans)
    if augmented:
        host.update(dy=torch.zeros(steps, K, W, dtype=torch.long), dx=torch.zeros(steps, K, W, dtype=torch.long),
                    flip=torch.zeros(steps, K, W, dtype=torch.bool))
    mixing = any(p.mixups is not None for p in plans)
    if mixing:
        host["mix_lam"] = torch.ones(steps, K, dtype=torch.float64)
        host["mix_perm"] = torch.arange(W).expand(steps, K, W).clone()
    cutting = any(p.cutouts is not None for p in plans)
    cutout_size = next((p.cutout_size for p in plans if p.cutouts is not None), 0)
    if cutting:
        dims = next(p.cutouts[0].shape[1] for p in plans if p.cutouts)
        host["cut_centres"] = torch.zeros(steps, K, W, dims, dtype=torch.long)
    for k, plan in enumerate(plans):
        if not plan.num_steps:
            continue
        step_of, slot_of = _slots(host["counts"][:plan.num_steps, k])
        host["index"][step_of, k, slot_of] = torch.cat(plan.batches)
        if augmented:
            for name, part in zip(("dy", "dx", "flip"), zip(*plan.crops)):
                host[name][step_of, k, slot_of] = torch.cat(part)
        if mixing:
            lams, perms = zip(*plan.mixups)
            host["mix_lam"][:plan.num_steps, k] = torch.stack(lams).to(torch.float64)
            host["mix_perm"][step_of, k, slot_of] = torch.cat(perms)
        if cutting:
            host["cut_centres"][step_of, k, slot_of] = torch.cat(plan.cutouts)
    on_device = to_device_once(host, device)
    counts_dev = on_device["counts"]
    slots = torch.arange(W, device=counts_dev.device)
    weight = (slots < counts_dev.unsqueeze(-1)).to(dtype)
    widths = [W] * steps if width is not None else [max(1, *row) for row in counts]
    return RoundDraws(
        index=on_device["index"], weight=weight, active=counts_dev > 0,
        crops=tuple(on_device[n] for n in ("dy", "dx", "flip")) if augmented else None,
        mix_lam=on_device.get("mix_lam"), mix_perm=on_device.get("mix_perm"),
        cut_centres=on_device.get("cut_centres"), cutout_size=cutout_size,
        num_steps=on_device["num_steps"], client_ids=on_device["client_ids"], counts=counts,
        widths=widths, static=width is not None)


def static_width(batch_size: int, client_sizes: list[int], engine: str, device: torch.device) -> int | None:
    """Batch slots of every local step: with the batched engine on an accelerator, one
    width for the whole run (static shapes: the last partial batch, 52 of 64 samples at the
    papers' 500 samples per client, is padded with zero-weight samples, which leave the
    loss and the gradient unchanged), so a local step has one shape and can be captured;
    None elsewhere: each step is cut to its own widest batch, since on a CPU a new shape
    costs nothing and padding costs compute."""
    if engine != "batched" or device.type == "cpu":
        return None
    return min(batch_size, max(client_sizes))


def _slots(counts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For a client's concatenated batches of ``counts`` samples per step: each sample's
    step and slot."""
    step_of = torch.repeat_interleave(torch.arange(counts.numel()), counts)
    starts = torch.cumsum(counts, 0) - counts
    slot_of = torch.arange(int(counts.sum())) - starts[step_of]
    return step_of, slot_of
