"""Local training of a chunk of clients, one at a time or batched.

:func:`train_chunk` runs a :class:`flcore.algorithms.LocalUpdate` on a ``[K, P]`` tensor
of client models; the round driver (:mod:`flcore.sim.round_driver`) cuts a round into
chunks.  ``sequential`` runs chunks of one client and differentiates with a plain loop
(least overhead on a CPU); ``batched`` runs all clients of the round (or chunks of
``chunk_size``) through one ``vmap`` computation per step (the GPU lever).  Clients with
fewer steps than the longest are masked, not dropped.

A round waits on the host only at its edges.  Its draws arrive on the device in one
transfer (:mod:`flcore.sim.round_draws`); the inputs of every step and client are then
gathered, augmented (crop and flip, Cutout, Mixup) and normalised as batched tensor
operations over the steps of a chunk at once (:func:`step_inputs`), and each local step
is one region of device work that reads no value back: the shape of its tensors is
fixed for the run under the batched engine (static shapes), so it can be captured.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from flcore.algorithms import Batch, RoundContext
from flcore.data.mixing import apply_cutout
from flcore.sim.round_draws import RoundDraws, stack_plans
from flcore.sim.sampling import ClientPlan

__all__ = ["RoundDraws", "stack_plans", "step_inputs", "train_chunk"]

#: Most bytes of step inputs built at once: the steps of a chunk are gathered and
#: augmented together up to this size, in groups of steps beyond it (PACS's 224x224
#: images), so memory stays bounded whatever the chunk.
INPUT_BYTES = 256 << 20


def step_inputs(data, draws: RoundDraws, steps: range, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """The inputs and targets of ``steps`` for every client of ``draws``, at once:
    ``x [s, K, W, ...]`` and ``y [s, K, W]`` (``[s, K, W, C]`` soft targets with Mixup).

    Crop and flip are read from the prepared set (:meth:`flcore.sim.federated_data.FederatedData.train_inputs`),
    then Cutout (after normalisation) and Mixup with soft targets, each one tensor
    operation over all slots: on the real samples the numbers are those of
    :func:`flcore.data.mixing.apply_cutout` and :func:`flcore.data.mixing.mix` applied
    client by client; padded slots (weight 0) are their own Mixup partners.
    """
    index = draws.index[steps.start:steps.stop]
    crops = None if draws.crops is None else tuple(t[steps.start:steps.stop] for t in draws.crops)
    x = data.train_inputs(index, crops, dtype)
    y = data.train_y[index]
    if draws.cut_centres is not None:
        centres = draws.cut_centres[steps.start:steps.stop]
        flat = x.reshape(-1, *x.shape[3:])
        x = apply_cutout(flat, centres.reshape(-1, centres.shape[-1]), draws.cutout_size).reshape(x.shape)
    if draws.mix_perm is not None:
        perm = draws.mix_perm[steps.start:steps.stop]
        lam = draws.mix_lam[steps.start:steps.stop].to(x.dtype)
        s_idx = torch.arange(perm.shape[0], device=perm.device)[:, None, None]
        k_idx = torch.arange(perm.shape[1], device=perm.device)[None, :, None]
        lam_x = lam.reshape(*lam.shape, *([1] * (x.dim() - 2)))
        x = lam_x * x + (1 - lam_x) * x[s_idx, k_idx, perm]
        onehot = F.one_hot(y, data.num_classes).to(x.dtype)
        lam_y = lam[..., None, None]
        y = lam_y * onehot + (1 - lam_y) * onehot[s_idx, k_idx, perm]
    return x, y


def _step_groups(draws: RoundDraws, data, dtype: torch.dtype) -> list[range]:
    """The steps of ``draws`` in groups whose inputs fit in :data:`INPUT_BYTES`."""
    per_sample = torch.Size(data.input_shape).numel() * torch.empty((), dtype=dtype).element_size()
    per_step = max(1, len(draws) * max(draws.widths) * per_sample)
    size = max(1, INPUT_BYTES // per_step)
    return [range(lo, min(lo + size, draws.steps)) for lo in range(0, draws.steps, size)]


def train_chunk(client_update, data, start: torch.Tensor, draws: RoundDraws | list[ClientPlan], round: int,
                lr: float, grad_fn, client_state: dict | None = None, broadcast: dict | None = None,
                global_model: torch.Tensor | None = None, weight_mask=None, step_graphs=None) -> dict:
    """Run the local procedure for the clients of ``draws`` (or of their plans) from
    ``start`` ``[P]`` (or one start per client, ``[K, P]``, when the chunk mixes clients of
    several runs).

    ``client_state`` holds the rows of these clients (name -> ``[K, ...]``); the returned
    dict has the uploads (``model``, ``train_loss``, ``steps`` and the parts' extras) and
    ``client_state``, the updated rows.  ``step_graphs`` (a
    :class:`~flcore.sim.cuda_graphs.StepGraphs`) replays the steps from CUDA graphs where
    they apply (static shapes on a GPU).
    """
    if not isinstance(draws, RoundDraws):
        draws = stack_plans(draws, start.device, start.dtype)
    K = len(draws)
    starts = start.clone() if start.dim() == 2 else start.unsqueeze(0).expand(K, -1).clone()
    ctx = RoundContext(
        round=round, lr=lr, start=starts, client_ids=draws.client_ids,
        grad_fn=grad_fn, client_state=client_state or {}, broadcast=broadcast or {},
        global_model=start if global_model is None else global_model,
        num_steps=draws.num_steps, weight_mask=weight_mask,
    )
    scratch = client_update.begin(ctx)
    W = starts
    for group in _step_groups(draws, data, start.dtype):
        xs, ys = step_inputs(data, draws, group, start.dtype)
        for i, step in enumerate(group):
            width = draws.widths[step]
            batch = Batch(x=xs[i, :, :width], y=ys[i, :, :width], weight=draws.weight[step, :, :width],
                          active=draws.active[step])
            if step_graphs is not None and draws.static:
                W = step_graphs.step(client_update, W, batch, ctx, scratch)
            else:
                W = client_update.step(W, batch, ctx, scratch)
    return client_update.end(W, ctx, scratch)
