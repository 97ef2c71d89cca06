"""The small MNIST-1D networks for many parameter vectors at once, as batched matmuls.

A federated round trains R runs x K clients: ``R*K`` *rows*, each a flat parameter
vector ``W[i]`` (:mod:`flcore.flat`) with its own minibatch.  On a CPU neither a loop
over the rows (one small forward and backward each, bound by the framework's per-call
cost) nor ``vmap`` (grouped convolutions, slow there) keeps the cores busy.  A
:class:`RowKernel` evaluates all rows as one computation: every ``Conv1d`` is an
*im2col* (the input's windows copied into a ``[rows, B*T_out, k*C_in]`` matrix) and one
batched matmul against the rows' own weights, every ``Linear`` one batched matmul, and
the backward pass is written out by hand -- the transposed matmuls, the ReLU masks and
the windows' gradients added back (*col2im*) -- so a step of all rows costs about a
dozen matmuls and as many elementwise passes, whatever the number of rows.

Layouts: activations are kept channels-last (``[rows, B, T, C]``), where a convolution
window of ``k`` time steps is ``k*C`` consecutive numbers, so the im2col copy reads
contiguous blocks; the weights are reordered from PyTorch's ``[C_out, C_in, k]`` to
``[C_out, k, C_in]`` on the fly (a few thousand numbers a row), and the gradients back.
The flattening before the classifier keeps PyTorch's channel-major order
(``torch.flatten`` of ``[N, C, T]``), so parameters mean what they mean in the module.

The loss is :meth:`flcore.flat.FlatModel.loss`'s weighted mean cross-entropy
``sum_i a_i CE_i / max(sum_i a_i, 1)`` with hard (class index) or soft (Mixup) targets;
for soft targets ``y`` the gradient of ``-sum_c y_c log p_c`` with respect to the logits
is ``p * sum_c y_c - y``.  Every number equals the module's own forward and autograd
backward to float rounding (``tests/test_row_kernels.py``; the engines' equality tests).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from flcore.models.mnist1d import MNIST1DCNN, MNIST1DMLP

__all__ = ["ConvLayer", "LinearLayer", "RowKernel", "row_kernel", "weighted_cross_entropy_rows"]

_threshold_backward = torch.ops.aten.threshold_backward
#: Numbers of one block of window gradients worked on at once (1 MB of float32: a core's cache).
CACHE_FLOATS = 1 << 18


def weighted_cross_entropy_rows(logits: torch.Tensor, y: torch.Tensor, weight: torch.Tensor
                                ) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row: the weighted mean cross-entropy of ``logits [R, B, C]`` against ``y``
    (``[R, B]`` class indices or ``[R, B, C]`` soft targets) with sample weights
    ``weight [R, B]``, and its gradient with respect to the logits (module docstring)."""
    logp = logits.log_softmax(-1)
    scale = weight / weight.sum(-1, keepdim=True).clamp_min(1.0)
    if y.is_floating_point():
        loss = -((logp * y).sum(-1) * scale).sum(-1)
        d_logits = logp.exp().mul_(y.sum(-1, keepdim=True)).sub_(y)
    else:
        picked = logp.gather(-1, y.unsqueeze(-1)).squeeze(-1)
        loss = -(picked * scale).sum(-1)
        d_logits = logp.exp()
        d_logits.scatter_add_(-1, y.unsqueeze(-1), torch.full(y.shape + (1,), -1.0, dtype=logits.dtype,
                                                              device=logits.device))
    return loss, d_logits.mul_(scale.unsqueeze(-1))


@dataclass(frozen=True)
class ConvLayer:
    """One ``Conv1d`` + ReLU: where its weight and bias sit in the flat vector, its shape."""

    weight_at: int
    bias_at: int
    c_out: int
    c_in: int
    kernel: int
    stride: int
    padding: int

    def out_len(self, length: int) -> int:
        return (length + 2 * self.padding - self.kernel) // self.stride + 1


@dataclass(frozen=True)
class LinearLayer:
    """One ``Linear``: where its weight and bias sit in the flat vector, its shape."""

    weight_at: int
    bias_at: int
    out_features: int
    in_features: int


class RowKernel:
    """Forward and backward of one network for every row of ``W [R, P]`` at once.

    ``convs`` (each followed by a ReLU) run on ``[R, B, T]`` signals, then the flattened
    features go through ``linears`` (a ReLU between two of them, none after the last).
    Built by :func:`row_kernel` from a module it knows; parameters are addressed in the
    module's ``named_parameters`` order, the order of :class:`flcore.flat.FlatModel`.
    """

    def __init__(self, convs: tuple[ConvLayer, ...], linears: tuple[LinearLayer, ...], num_params: int):
        self.convs = convs
        self.linears = linears
        self.num_params = num_params
        self._padded: dict[tuple, torch.Tensor] = {}

    def _padded_input(self, layer: int, shape: tuple[int, int, int, int], pad: int, like: torch.Tensor) -> torch.Tensor:
        """A ``[R, B, T + 2 pad, C]`` buffer for convolution ``layer``'s input whose padding is
        zero: kept between calls, since every call writes its whole interior and never its
        padding (the backward pass of a call is done before the next call writes it)."""
        key = (layer, shape, like.dtype, like.device)
        buffer = self._padded.get(key)
        if buffer is None:
            if len(self._padded) > 48:  # a few shapes a run: its layers x the widths of its last partial batches
                self._padded.clear()
            buffer = self._padded[key] = like.new_zeros(shape)
        return buffer

    # ------------------------------------------------------------------ forward
    def _conv_weight(self, W: torch.Tensor, conv: ConvLayer) -> torch.Tensor:
        """The rows' weights of ``conv`` as ``[R, C_out, k*C_in]`` in (k, C_in) order."""
        R = W.shape[0]
        n = conv.c_out * conv.c_in * conv.kernel
        w = W[:, conv.weight_at:conv.weight_at + n].view(R, conv.c_out, conv.c_in, conv.kernel)
        return w.transpose(2, 3).reshape(R, conv.c_out, conv.kernel * conv.c_in)

    def _head_weight(self, W: torch.Tensor, linear: LinearLayer, length: int, channels: int) -> torch.Tensor:
        """The first linear layer after convolutions, its inputs reordered from PyTorch's
        (C, T) flattening to the channels-last (T, C) order of the activations."""
        R = W.shape[0]
        n = linear.out_features * linear.in_features
        w = W[:, linear.weight_at:linear.weight_at + n]
        if not self.convs:
            return w.view(R, linear.out_features, linear.in_features)
        return (w.view(R, linear.out_features, channels, length).transpose(2, 3)
                .reshape(R, linear.out_features, length * channels))

    def _forward(self, W: torch.Tensor, x: torch.Tensor, keep: bool):
        """Logits ``[R, B, C]``; with ``keep``, what the backward pass needs."""
        R, B = x.shape[0], x.shape[1]
        saved = []
        if self.convs:
            first = self.convs[0]
            h = self._padded_input(0, (R, B, x.shape[2] + 2 * first.padding, 1), first.padding, x)
            h[:, :, first.padding:first.padding + x.shape[2], 0] = x
            for i, conv in enumerate(self.convs):
                T = h.shape[2]  # padded length
                T_out = (T - conv.kernel) // conv.stride + 1
                C = conv.c_in
                windows = h.as_strided((R, B, T_out, conv.kernel * C), (h.stride(0), h.stride(1), conv.stride * C, 1))
                patches = windows.reshape(R, B * T_out, conv.kernel * C)
                w = self._conv_weight(W, conv)
                z = torch.baddbmm(W[:, conv.bias_at:conv.bias_at + conv.c_out].unsqueeze(1), patches,
                                  w.transpose(1, 2))
                pad = self.convs[i + 1].padding if i + 1 < len(self.convs) else 0
                nxt = self._padded_input(i + 1, (R, B, T_out + 2 * pad, conv.c_out), pad, z) if pad else None
                if nxt is None:
                    a = z.clamp_(min=0).view(R, B, T_out, conv.c_out)
                else:
                    a = nxt[:, :, pad:pad + T_out]
                    torch.clamp(z.view(R, B, T_out, conv.c_out), min=0, out=a)
                if keep:
                    saved.append((patches, a, w, T, T_out))
                h = a if nxt is None else nxt
            feats = a.reshape(R, B, -1)
            length, channels = a.shape[2], a.shape[3]
        else:
            feats = x.reshape(R, B, -1)
            length = channels = 0
        for j, linear in enumerate(self.linears):
            w = self._head_weight(W, linear, length, channels) if j == 0 else \
                W[:, linear.weight_at:linear.weight_at + linear.out_features * linear.in_features].view(
                    R, linear.out_features, linear.in_features)
            out = torch.baddbmm(W[:, linear.bias_at:linear.bias_at + linear.out_features].unsqueeze(1), feats,
                                w.transpose(1, 2))
            if keep:
                saved.append((feats, w))
            feats = out.clamp_(min=0) if j + 1 < len(self.linears) else out
        return feats, saved, (length, channels)

    def logits(self, W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Logits ``[R, N, C]`` of every row of ``W [R, P]`` on its inputs ``x [R, N, L]``."""
        with torch.no_grad():
            return self._forward(W, x, keep=False)[0]

    # ------------------------------------------------------------------ backward
    def loss_and_grad(self, W: torch.Tensor, x: torch.Tensor, y: torch.Tensor, weight: torch.Tensor
                      ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per row: the weighted mean cross-entropy of its minibatch ``(x [R, B, L], y,
        weight [R, B])`` and its gradient ``[R, P]`` with respect to the row's parameters."""
        with torch.no_grad():
            return self._loss_and_grad(W, x, y, weight)

    def _loss_and_grad(self, W, x, y, weight):
        R, B = x.shape[0], x.shape[1]
        logits, saved, (length, channels) = self._forward(W, x, keep=True)
        loss, d = weighted_cross_entropy_rows(logits, y, weight)
        G = torch.empty_like(W)
        for j in range(len(self.linears) - 1, -1, -1):
            linear = self.linears[j]
            feats, w = saved.pop()
            gw = torch.bmm(d.transpose(1, 2), feats)  # [R, out, in] in the order of feats
            target = G[:, linear.weight_at:linear.weight_at + linear.out_features * linear.in_features]
            if j == 0 and self.convs:
                target.view(R, linear.out_features, channels, length).copy_(
                    gw.view(R, linear.out_features, length, channels).transpose(2, 3))
            else:
                target.view(R, linear.out_features, linear.in_features).copy_(gw)
            G[:, linear.bias_at:linear.bias_at + linear.out_features] = d.sum(1)
            if j == 0 and not self.convs:
                break
            d = torch.bmm(d, w)  # gradient of the layer's input
            if j > 0:
                d = _threshold_backward(d, feats, 0)
        if self.convs:
            d = d.view(R, B, length, channels)
        for i in range(len(self.convs) - 1, -1, -1):
            conv = self.convs[i]
            patches, a, w, T, T_out = saved.pop()
            dz = _threshold_backward(d, a, 0).reshape(R, B * T_out, conv.c_out)
            n = conv.c_out * conv.c_in * conv.kernel
            gw = torch.bmm(dz.transpose(1, 2), patches)  # [R, C_out, k*C_in] in (k, C_in) order
            G[:, conv.weight_at:conv.weight_at + n].view(R, conv.c_out, conv.c_in, conv.kernel).copy_(
                gw.view(R, conv.c_out, conv.kernel, conv.c_in).transpose(2, 3))
            G[:, conv.bias_at:conv.bias_at + conv.c_out] = dz.sum(1)
            if i == 0:
                break
            d_padded = dz.new_zeros(R, B, T, conv.c_in)
            span = conv.stride * (T_out - 1) + 1
            # the windows' gradients, a few rows at a time so that they are still in the core's
            # cache when col2im adds each window's gradient back to its inputs
            step = max(1, CACHE_FLOATS // (B * T_out * conv.kernel * conv.c_in))
            for lo in range(0, R, step):
                d_patches = torch.bmm(dz[lo:lo + step], w[lo:lo + step]).view(-1, B, T_out, conv.kernel, conv.c_in)
                target = d_padded[lo:lo + step]
                for tap in range(conv.kernel):
                    target[:, :, tap:tap + span:conv.stride] += d_patches[:, :, :, tap]
            d = d_padded[:, :, conv.padding:T - conv.padding]
        return loss, G


def _layout(module: nn.Module) -> dict[str, int]:
    """Offset of each parameter in the flat vector (``named_parameters`` order)."""
    out, at = {}, 0
    for name, param in module.named_parameters():
        out[name] = at
        at += param.numel()
    return out


def _conv(module: nn.Conv1d, name: str, at: dict[str, int]) -> ConvLayer | None:
    if (module.groups != 1 or module.dilation != (1,) or module.bias is None
            or module.padding_mode != "zeros" or not isinstance(module.padding, tuple)):
        return None
    return ConvLayer(at[f"{name}.weight"], at[f"{name}.bias"], module.out_channels, module.in_channels,
                 module.kernel_size[0], module.stride[0], module.padding[0])


def _linear(module: nn.Linear, name: str, at: dict[str, int]) -> LinearLayer | None:
    if module.bias is None:
        return None
    return LinearLayer(at[f"{name}.weight"], at[f"{name}.bias"], module.out_features, module.in_features)


def row_kernel(module: nn.Module) -> RowKernel | None:
    """The :class:`RowKernel` of ``module`` -- exactly an :class:`~flcore.models.MNIST1DCNN`
    or :class:`~flcore.models.MNIST1DMLP` (a subclass may change ``forward``) -- or None."""
    at = _layout(module)
    num_params = sum(p.numel() for p in module.parameters())
    if type(module) is MNIST1DCNN:
        convs = tuple(_conv(getattr(module, n), n, at) for n in ("conv1", "conv2", "conv3"))
        head = _linear(module.fc, "fc", at)
        if any(c is None for c in convs) or head is None or convs[0].c_in != 1:
            return None
        return RowKernel(convs, (head,), num_params)
    if type(module) is MNIST1DMLP:
        linears = tuple(_linear(getattr(module, n), n, at) for n in ("fc1", "fc2", "fc3"))
        if any(lin is None for lin in linears):
            return None
        return RowKernel((), linears, num_params)
    return None
