"""Local training of the clients of one round, one at a time or batched.

Both paths run the same :class:`flcore.algorithms.LocalUpdate` on a ``[K, P]`` tensor of
client models.  ``sequential`` runs chunks of one client and differentiates with a plain
loop (least overhead on a CPU); ``batched`` runs all clients of the round (or chunks of
``chunk_size``) through one ``vmap`` computation per step (the GPU lever).  Clients with
fewer steps than the longest are masked, not dropped; a step's batch is padded only to the
widest real batch of that step, with zero sample weights on the padding.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from flcore.algorithms import Batch, RoundContext
from flcore.data.mixing import apply_cutout, mix
from flcore.sim.sampling import ClientPlan


@dataclass
class ChunkBatches:
    """Every step's batch of a chunk of clients, built on the host in one go and moved to
    the device in one transfer per tensor (pinned, asynchronous on CUDA), so a round's
    steps issue no host-to-device copies and wait on nothing.

    ``index``, ``weight`` and the crop draws are ``[S, K, W]`` with ``W`` the widest batch
    of any step; ``widths[s]`` is the widest real batch of step ``s``, to which that
    step's tensors are cut (so a step pads only to its own widest batch); ``active`` is
    ``[S, K]``.
    """

    index: torch.Tensor
    weight: torch.Tensor
    active: torch.Tensor
    crops: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None
    widths: list[int]


def stack_plans(plans: list[ClientPlan], device, dtype: torch.dtype) -> ChunkBatches:
    """The batches of ``plans`` as :class:`ChunkBatches` on ``device``."""
    steps = max(p.num_steps for p in plans)
    widths = [max((p.batches[s].numel() for p in plans if s < p.num_steps), default=1)
              for s in range(steps)]
    K, W = len(plans), max(widths)
    index = torch.zeros(steps, K, W, dtype=torch.long)
    weight = torch.zeros(steps, K, W, dtype=dtype)
    active = torch.zeros(steps, K, dtype=torch.bool)
    augmented = any(plan.crops[0] is not None for plan in plans if plan.num_steps)
    crops = tuple(torch.zeros(steps, K, W, dtype=dt) for dt in (torch.long, torch.long, torch.bool)) \
        if augmented else None
    for k, plan in enumerate(plans):
        for s, batch in enumerate(plan.batches):
            n = batch.numel()
            index[s, k, :n] = batch
            weight[s, k, :n] = 1.0
            active[s, k] = True
            if crops is not None:
                for dst, src in zip(crops, plan.crops[s]):
                    dst[s, k, :n] = src

    def move(t: torch.Tensor) -> torch.Tensor:
        if torch.device(device).type == "cuda":
            return t.pin_memory().to(device, non_blocking=True)
        return t.to(device)

    return ChunkBatches(index=move(index), weight=move(weight), active=move(active),
                        crops=None if crops is None else tuple(move(t) for t in crops), widths=widths)


def _step_batch(data, plans: list[ClientPlan], batches: ChunkBatches, step: int) -> Batch:
    width = batches.widths[step]
    index = batches.index[step, :, :width]
    crops = None if batches.crops is None else tuple(t[step, :, :width] for t in batches.crops)
    x = data.train_inputs(index, crops)
    y = data.train_y[index]
    if plans[0].cutouts is not None or plans[0].mixups is not None:
        x, y = _mix_and_cut(data, plans, step, x, y)
    return Batch(x=x, y=y, weight=batches.weight[step, :, :width], active=batches.active[step])


def _mix_and_cut(data, plans, step, x, y):
    """Cutout (after normalisation) then Mixup with soft targets, client by client on the
    real samples of the step (``flcore.data.mixing``)."""
    xs, ys = [], []
    mixing = plans[0].mixups is not None
    for k, plan in enumerate(plans):
        xk, yk = x[k], y[k]
        if mixing:
            yk = F.one_hot(yk, data.num_classes).to(xk.dtype)
        if step < plan.num_steps:
            n = plan.batches[step].numel()
            real_x, real_y = xk[:n], y[k, :n]
            if plan.cutouts is not None:
                real_x = apply_cutout(real_x, plan.cutouts[step], plan.cutout_size)
            if mixing:
                lam, perm = plan.mixups[step]
                real_x, soft = mix(real_x, real_y, data.num_classes, lam, perm)
                yk = torch.cat([soft, yk[n:]])
            xk = torch.cat([real_x, xk[n:]])
        xs.append(xk)
        ys.append(yk)
    return torch.stack(xs), torch.stack(ys)


def train_chunk(client_update, data, start: torch.Tensor, plans: list[ClientPlan], round: int,
                lr: float, grad_fn, client_state: dict | None = None, broadcast: dict | None = None,
                global_model: torch.Tensor | None = None, weight_mask=None) -> dict:
    """Run the local procedure for the clients of ``plans`` from ``start`` ``[P]`` (or one
    start per client, ``[K, P]``, when the chunk mixes clients of several runs).

    ``client_state`` holds the rows of these clients (name -> ``[K, ...]``); the returned
    dict has the uploads (``model``, ``train_loss``, ``steps`` and the parts' extras) and
    ``client_state``, the updated rows.
    """
    K = len(plans)
    starts = start.clone() if start.dim() == 2 else start.unsqueeze(0).expand(K, -1).clone()
    ctx = RoundContext(
        round=round, lr=lr, start=starts,
        client_ids=torch.tensor([p.client for p in plans]),
        grad_fn=grad_fn, client_state=client_state or {}, broadcast=broadcast or {},
        global_model=start if global_model is None else global_model,
        num_steps=torch.tensor([p.num_steps for p in plans], device=start.device),
        weight_mask=weight_mask,
    )
    scratch = client_update.begin(ctx)
    batches = stack_plans(plans, start.device, data.train_x.dtype)
    W = starts
    for step in range(len(batches.widths)):
        W = client_update.step(W, _step_batch(data, plans, batches, step), ctx, scratch)
    return client_update.end(W, ctx, scratch)


def train_round(client_update, data, start, plans, round, lr, flat, engine: str,
                chunk_size: int | None = None, client_state: dict | None = None,
                broadcast: dict | None = None, global_model=None):
    """All clients of a round.  Returns ``(uploads, state_rows)``: the uploads stacked over
    clients (``[K, ...]``, in the order of ``plans``) and the clients' updated state rows.

    ``client_state`` is the full per-client state (name -> ``[N, ...]``); the rows of each
    chunk's clients are gathered before and returned after local training.
    """
    client_state = client_state or {}
    if engine == "sequential":
        chunks = [[p] for p in plans]
        grad_fn = flat.grad_fn(batched=False)
    else:
        size = chunk_size or len(plans)
        chunks = [plans[i:i + size] for i in range(0, len(plans), size)]
        grad_fn = flat.grad_fn(batched=True)
    outputs = []
    for chunk in chunks:
        ids = torch.tensor([p.client for p in chunk], device=start.device)
        rows = {name: table[ids] for name, table in client_state.items()}
        outputs.append(train_chunk(client_update, data, start, chunk, round, lr, grad_fn, rows,
                                   broadcast, global_model, flat.weight_mask))
    uploads = {key: torch.cat([o[key] for o in outputs]) for key in outputs[0] if key != "client_state"}
    state_rows = {name: torch.cat([o["client_state"][name] for o in outputs])
                  for name in outputs[0]["client_state"]}
    return uploads, state_rows
