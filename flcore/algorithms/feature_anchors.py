"""FedFA, federated learning with feature anchors (Zhou, Zhang & Tsang, IEEE TMC 2023), as
run by the FedIMA paper's code (docs/algorithms.md 3.10, part C7).

Client, round t (all clients of a chunk at once, ``[K, ...]``):

- round 0: cross-entropy only; from round 1 the loss adds
  ``lam (1/C) sum_c sum_{i: y_i = c} ||phi(x_i) - A_c||^2 / n_c`` with the server's anchors
  ``A`` (``flcore.flat.anchor_term``);
- after every SGD step, when ``t > T/4``: one Adam step (torch defaults: lr 1e-3, betas
  (0.9, 0.999), eps 1e-8, state kept within the round) on the classifier only, with the C
  anchors as inputs and labels 0..C-1 ("classifier calibration"); the gradient of that
  mean cross-entropy of a linear head is written in closed form;
- local anchors: per epoch, the mean over batches of the per-batch class-mean features;
  then ``a_c <- m_a a_c + (1 - m_a) mean_c`` for the classes present, starting from the
  received ``A``; the client uploads its anchors and which classes it updated.

Server: the model is averaged (FMA); each class's anchor is the sample-weighted mean over
the participants that updated it, the others keep their value.  Initial anchors are C
distinct standard basis vectors of R^d (C <= d) or random unit vectors.

Decision (neither the paper nor the code needs it, because their server knows d): the
server initialises its anchors after round 0, from the feature size the clients upload;
round 0 has no anchor loss either way, and the clients' round-0 local anchors start from
their first epoch's class means instead of from the initial anchors.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch.func import vmap

from flcore.algorithms.hyperparameters import Hyperparameter, declares
from flcore.algorithms.part_ids import part_id
from flcore.algorithms.server import ServerRound
from flcore.seeding import generator

FA_LAMBDA = Hyperparameter("fa_lambda", "float", 0.1, "FedFA anchor-loss weight lambda", low=0)
FA_MOMENTUM = Hyperparameter("fa_momentum", "float", 0.5, "FedFA local-anchor EMA momentum m_a", low=0, high=1)

ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8


def initial_anchors(num_classes: int, dim: int, seed: int, dtype=torch.float32) -> torch.Tensor:
    """C distinct rows of the identity of R^d (C <= d), else C random unit vectors."""
    gen = generator(seed, "fedfa-anchors")
    if num_classes <= dim:
        rows = torch.randperm(dim, generator=gen)[:num_classes]
        return torch.eye(dim, dtype=dtype)[rows]
    vectors = torch.randn(num_classes, dim, generator=gen, dtype=dtype)
    return vectors / vectors.norm(dim=1, keepdim=True)


def calibration_grad(head_w: torch.Tensor, head_b: torch.Tensor, anchors: torch.Tensor):
    """Gradient of the mean cross-entropy of a linear head on inputs ``anchors [C, d]``
    with labels 0..C-1, batched over clients: ``head_w [K, C, d]``, ``head_b [K, C]``."""
    num_classes = anchors.shape[0]
    logits = torch.einsum("cd,kod->kco", anchors, head_w) + head_b[:, None, :]  # [K, C, C]
    err = (torch.softmax(logits, dim=-1) - torch.eye(num_classes, dtype=logits.dtype,
                                                     device=logits.device)) / num_classes
    return torch.einsum("kco,cd->kod", err, anchors), err.sum(dim=1)


@declares(FA_LAMBDA, FA_MOMENTUM)
@part_id("C7")
@dataclass(frozen=True)
class FeatureAnchorClient:
    """C7: the anchor loss, the classifier calibration and the local anchors (module
    docstring).  ``calibrate_after``: calibration runs in rounds ``t > calibrate_after``."""

    #: The anchors are one ``[C, d]`` matrix read for the whole chunk of clients, so the
    #: runs of a method with this part train alone (:func:`flcore.sim.multi_run.run_batchable`).
    trains_alone: ClassVar[bool] = True

    flat: object = field(compare=False, repr=False)
    lam: float
    momentum: float
    epochs: int
    calibrate_after: int
    calibration_lr: float = 1e-3

    def __call__(self, W, g, ctx, scratch, batch):
        return g

    def _shapes(self):
        _, w_shape, _ = self.flat.head
        return w_shape[0], w_shape[1]

    def begin(self, ctx, scratch):
        K = ctx.start.shape[0]
        C, d = self._shapes()
        dtype, device = ctx.start.dtype, ctx.start.device
        anchors = ctx.broadcast.get("fa_anchors")
        scratch["fa_local"] = (anchors.expand(K, C, d).clone() if anchors is not None
                               else torch.zeros(K, C, d, dtype=dtype, device=device))
        scratch["fa_has"] = torch.full((K, C), anchors is not None, device=device)
        scratch["fa_updated"] = torch.zeros(K, C, dtype=torch.bool, device=device)
        scratch["fa_sum"] = torch.zeros(K, C, d, dtype=dtype, device=device)
        scratch["fa_n"] = torch.zeros(K, C, dtype=dtype, device=device)
        scratch["fa_step"] = torch.zeros(K, dtype=torch.long, device=device)
        size = C * d + C
        scratch["fa_m"] = torch.zeros(K, size, dtype=dtype, device=device)
        scratch["fa_v"] = torch.zeros(K, size, dtype=dtype, device=device)
        scratch["fa_t"] = torch.zeros(K, dtype=dtype, device=device)

    def prepare(self, W, batch, ctx, scratch):
        C, _ = self._shapes()
        with torch.no_grad():
            feats = vmap(self.flat.features)(W, batch.x)  # [K, B, d]
            onehot = F.one_hot(batch.y, C).to(feats.dtype) * batch.weight[..., None]  # [K, B, C]
            counts = onehot.sum(dim=1)  # [K, C]
            means = onehot.transpose(1, 2) @ feats / counts.clamp_min(1.0)[..., None]
            present = (counts > 0).to(feats.dtype)
            scratch["fa_sum"] = scratch["fa_sum"] + means * present[..., None]
            scratch["fa_n"] = scratch["fa_n"] + present
        anchors = ctx.broadcast.get("fa_anchors")
        if anchors is None or ctx.round == 0:
            return batch
        K = W.shape[0]
        return dataclasses.replace(batch, anchors=anchors.expand(K, *anchors.shape), anchor_weight=self.lam)

    def after_step(self, W, W_new, batch, ctx, scratch):
        active = batch.active
        scratch["fa_step"] = scratch["fa_step"] + active.long()
        self._epoch_end(ctx, scratch, active)
        anchors = ctx.broadcast.get("fa_anchors")
        if anchors is None or ctx.round <= self.calibrate_after:
            return W_new
        return self._calibrate(W_new, anchors, scratch, active)

    def _epoch_end(self, ctx, scratch, active):
        per_epoch = (ctx.num_steps // max(self.epochs, 1)).clamp_min(1)
        done = active & (scratch["fa_step"] % per_epoch == 0)
        seen = (scratch["fa_n"] > 0) & done[:, None]  # [K, C]
        mean = scratch["fa_sum"] / scratch["fa_n"].clamp_min(1.0)[..., None]
        moved = torch.where(scratch["fa_has"][..., None],
                            self.momentum * scratch["fa_local"] + (1 - self.momentum) * mean, mean)
        scratch["fa_local"] = torch.where(seen[..., None], moved, scratch["fa_local"])
        scratch["fa_has"] = scratch["fa_has"] | seen
        scratch["fa_updated"] = scratch["fa_updated"] | seen
        reset = done[:, None]
        scratch["fa_sum"] = torch.where(reset[..., None], torch.zeros_like(scratch["fa_sum"]), scratch["fa_sum"])
        scratch["fa_n"] = torch.where(reset, torch.zeros_like(scratch["fa_n"]), scratch["fa_n"])

    def _calibrate(self, W, anchors, scratch, active):
        w_slice, w_shape, b_slice = self.flat.head
        C, d = w_shape
        head_w = W[:, w_slice].reshape(-1, C, d)
        head_b = W[:, b_slice]
        gw, gb = calibration_grad(head_w, head_b, anchors)
        grad = torch.cat([gw.reshape(-1, C * d), gb], dim=1)
        b1, b2 = ADAM_BETAS
        mask = active[:, None]
        m = torch.where(mask, b1 * scratch["fa_m"] + (1 - b1) * grad, scratch["fa_m"])
        v = torch.where(mask, b2 * scratch["fa_v"] + (1 - b2) * grad * grad, scratch["fa_v"])
        t = scratch["fa_t"] + active.to(W.dtype)
        scratch["fa_m"], scratch["fa_v"], scratch["fa_t"] = m, v, t
        tt = t.clamp_min(1.0)[:, None]
        update = self.calibration_lr * (m / (1 - b1 ** tt)) / ((v / (1 - b2 ** tt)).sqrt() + ADAM_EPS)
        update = torch.where(mask, update, torch.zeros_like(update))
        W = W.clone()
        W[:, w_slice] = W[:, w_slice] - update[:, :C * d]
        W[:, b_slice] = W[:, b_slice] - update[:, C * d:]
        return W

    def end(self, W, ctx, scratch, out):
        out["fa_anchors"] = scratch["fa_local"]
        out["fa_updated"] = scratch["fa_updated"]


@dataclass(frozen=True)
class FeatureAnchorServer:
    """The server's class anchors: broadcast from round 1, updated per class as the
    sample-weighted mean of the participants that updated that class."""

    lazy_state = {"anchors": "[C, d]"}  # created after the first round, from the uploads
    state_meanings = {
        "anchors": "the class feature anchors [C, d] (FedFA, Zhou et al. 2023), set after the first round"}

    seed: int
    name: str = "fedfa"

    def init(self, w, num_clients):
        return {}

    def broadcast(self, w, start, sent, state, round):
        if "anchors" in state:
            sent["fa_anchors"] = state["anchors"]
        return start

    def after(self, rnd: ServerRound, w_new, state):
        local, updated = rnd.uploads["fa_anchors"], rnd.uploads["fa_updated"]
        if "anchors" not in state:
            C, d = local.shape[1:]
            state["anchors"] = initial_anchors(C, d, self.seed, local.dtype).to(local.device)
        weights = rnd.counts.to(local.dtype)[:, None] * updated.to(local.dtype)  # [K, C]
        total = weights.sum(dim=0)
        mean = torch.einsum("kc,kcd->cd", weights, local) / total.clamp_min(1e-12)[:, None]
        state["anchors"] = torch.where((total > 0)[:, None], mean, state["anchors"])
        return w_new
