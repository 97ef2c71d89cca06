"""A model's parameters as one flat vector (docs/design.md section 4).

:class:`FlatModel` keeps an ``nn.Module`` as a *template* and evaluates it on any flat
parameter vector ``w [P]`` through ``torch.func.functional_call``, with the module's
tensors given as views of ``w``.  Norms, dot products, perturbations and averages are
then single tensor operations, and the clients of a round are a ``[K, P]`` tensor that
can be differentiated client by client or all at once with ``torch.func.vmap``.

Only trainable parameters are flattened; flcore's models have no buffers (GroupNorm, no
BatchNorm), so the flat vector is the whole model state.
"""
from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad_and_value, vmap


class FlatModel:
    """Evaluate and differentiate a module at flat parameter vectors."""

    def __init__(self, module: nn.Module):
        if list(module.buffers()):
            raise ValueError("FlatModel needs a model without buffers (use GroupNorm, not BatchNorm)")
        self.module = module
        self.names: list[str] = []
        self.shapes: list[torch.Size] = []
        self.offsets: list[int] = []
        offset = 0
        for name, param in module.named_parameters():
            self.names.append(name)
            self.shapes.append(param.shape)
            self.offsets.append(offset)
            offset += param.numel()
        self.num_params = offset
        device = next(module.parameters()).device
        mask = torch.zeros(offset, dtype=torch.bool, device=device)
        for name, shape, start in zip(self.names, self.shapes, self.offsets):
            if "weight" in name:
                mask[start:start + shape.numel()] = True
        #: True on coordinates of tensors whose name contains "weight" (ASAM's operator).
        self.weight_mask = mask
        self._feature_view = FeatureView(module) if hasattr(module, "features") else None
        self.head = self._find_head(module)

    def _find_head(self, module: nn.Module):
        """``(weight_slice, weight_shape, bias_slice)`` of the classifier, the model's last
        ``nn.Linear`` (every flcore model ends with one), or None."""
        linears = [name for name, m in module.named_modules() if isinstance(m, nn.Linear)]
        if not linears:
            return None
        prefix = f"{linears[-1]}." if linears[-1] else ""
        index = {name: i for i, name in enumerate(self.names)}
        wi, bi = index[f"{prefix}weight"], index.get(f"{prefix}bias")
        w_slice = slice(self.offsets[wi], self.offsets[wi] + self.shapes[wi].numel())
        b_slice = None if bi is None else slice(self.offsets[bi], self.offsets[bi] + self.shapes[bi].numel())
        return w_slice, self.shapes[wi], b_slice

    # ------------------------------------------------------------------ conversions
    def flatten(self, module: nn.Module | None = None) -> torch.Tensor:
        """The parameters of ``module`` (default: the template) as one vector ``[P]``."""
        module = self.module if module is None else module
        return torch.cat([p.detach().reshape(-1) for p in module.parameters()]).clone()

    def unflatten(self, w: torch.Tensor) -> dict[str, torch.Tensor]:
        """Views of ``w`` shaped as the module's parameters (works under vmap)."""
        return {
            name: w[start:start + shape.numel()].view(shape)
            for name, shape, start in zip(self.names, self.shapes, self.offsets)
        }

    def state_dict(self, w: torch.Tensor) -> dict[str, torch.Tensor]:
        """A ``state_dict`` for the template module holding the values of ``w``."""
        return {name: t.detach().clone() for name, t in self.unflatten(w).items()}

    def load_into(self, module: nn.Module, w: torch.Tensor) -> nn.Module:
        module.load_state_dict(self.state_dict(w), strict=True)
        return module

    # ------------------------------------------------------------------ evaluation
    def forward(self, w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Logits of the model with parameters ``w [P]`` on inputs ``x``."""
        return functional_call(self.module, self.unflatten(w), (x,))

    def features(self, w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Penultimate features ``model.features(x)`` at parameters ``w``."""
        return functional_call(self._feature_view, {f"inner.{k}": v for k, v in self.unflatten(w).items()}, (x,))

    def anchor_loss(self, w, x, y, weight, anchors, lam: float) -> torch.Tensor:
        """FedFA's local objective (Zhou et al. 2023; docs/algorithms.md 3.10): weighted mean
        cross-entropy plus ``lam * (1/C) sum_c sum_{i: y_i = c} ||phi(x_i) - A_c||^2 / n_c``
        over the classes ``c`` present in the batch (``n_c`` their weighted counts)."""
        feats = self.features(w, x)
        w_slice, w_shape, b_slice = self.head
        logits = F.linear(feats, w[w_slice].view(w_shape), None if b_slice is None else w[b_slice])
        ce = (F.cross_entropy(logits, y, reduction="none") * weight).sum() / weight.sum().clamp_min(1.0)
        return ce + lam * anchor_term(feats, y, weight, anchors)

    def loss(self, w: torch.Tensor, x: torch.Tensor, y: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """Weighted mean cross-entropy ``sum_i a_i CE_i / max(sum_i a_i, 1)``.

        ``weight`` is 1 on real samples and 0 on padding, so a padded batch gives the
        same loss as the real samples alone and an all-padding batch gives 0, not NaN.
        """
        losses = F.cross_entropy(self.forward(w, x), y, reduction="none")
        return (losses * weight).sum() / weight.sum().clamp_min(1.0)

    def _tensors(self, parts: tuple[torch.Tensor, ...]) -> dict[str, torch.Tensor]:
        """The module's parameters from the flat vector's pieces (one per tensor)."""
        return {name: part.view(shape) for name, part, shape in zip(self.names, parts, self.shapes)}

    def _loss_of_parts(self, parts, x, y, weight):
        return weighted_cross_entropy(functional_call(self.module, self._tensors(parts), (x,)), y, weight)

    def grad_fn(self, batched: bool):
        """``(W [K, P], batch) -> (loss [K], grad [K, P])``.

        ``batched=False`` loops over the K clients (the lean path for CPUs); ``True``
        differentiates all clients in one ``vmap`` computation (the GPU path).  Both
        evaluate the same function, so they agree to float tolerance.

        The batched path differentiates with respect to the flat vector's pieces (one
        view per parameter tensor) and joins their gradients with one concatenation:
        differentiating through the slicing of ``W`` itself would scatter each tensor's
        gradient into a zero ``[K, P]`` vector and add those up (two full-size kernels
        per parameter tensor and gradient).
        """
        if batched:
            sizes = [shape.numel() for shape in self.shapes]
            many = vmap(grad_and_value(self._loss_of_parts))
            with_anchors = vmap(grad_and_value(self.anchor_loss), in_dims=(0, 0, 0, 0, 0, None))

            def batched_grad(W, batch):
                if batch.anchors is not None:
                    g, loss = with_anchors(W, batch.x, batch.y, batch.weight, batch.anchors, batch.anchor_weight)
                    return loss, g
                grads, loss = many(W.split(sizes, dim=-1), batch.x, batch.y, batch.weight)
                return loss, torch.cat(grads, dim=-1)
            return batched_grad

        if getattr(self, "_module_grad", None) is None:
            self._module_grad = _FlatModuleGrad(self)  # built once: a model copy and two flat buffers
        module_grad = self._module_grad

        def looped_grad(W, batch):
            grads = torch.empty_like(W)
            losses = torch.empty(W.shape[0], dtype=W.dtype, device=W.device)
            for k in range(W.shape[0]):
                anchors = None if batch.anchors is None else batch.anchors[k]
                loss, g = module_grad(W[k], batch.x[k], batch.y[k], batch.weight[k], anchors, batch.anchor_weight)
                grads[k] = g  # copied out before the next call reuses the buffer
                losses[k] = loss
            return losses, grads
        return looped_grad

    @torch.no_grad()
    def correct(self, w: torch.Tensor, x: torch.Tensor, y: torch.Tensor, batch_size: int = 2000) -> torch.Tensor:
        """Per-sample correctness (bool ``[N]``) of ``w`` on ``(x, y)``, in batches."""
        out = [self.forward(w, x[i:i + batch_size]).argmax(dim=1) == y[i:i + batch_size]
               for i in range(0, x.shape[0], batch_size)]
        return torch.cat(out) if out else torch.zeros(0, dtype=torch.bool, device=x.device)

    @torch.no_grad()
    def evaluate(self, w: torch.Tensor, x: torch.Tensor, y: torch.Tensor, batch_size: int = 2000):
        """Accuracy and mean cross-entropy of ``w`` on ``(x, y)``, in batches.

        Sums stay on the device; the caller syncs once when it reads the numbers.
        """
        correct = torch.zeros((), dtype=torch.float64, device=x.device)
        loss_sum = torch.zeros((), dtype=torch.float64, device=x.device)
        for start in range(0, x.shape[0], batch_size):
            logits = self.forward(w, x[start:start + batch_size])
            target = y[start:start + batch_size]
            loss_sum += F.cross_entropy(logits, target, reduction="sum").double()
            correct += (logits.argmax(dim=1) == target).sum().double()
        n = max(x.shape[0], 1)
        return correct / n, loss_sum / n


class _FlatModuleGrad:
    """Gradient of :meth:`FlatModel.loss` by a plain ``backward()`` on a private copy of
    the module whose parameters and ``.grad`` are views of two flat buffers.

    Writing ``w`` is one copy, and autograd accumulates straight into the flat gradient,
    so the one-client-at-a-time path pays neither ``torch.func``'s per-call overhead nor
    a concatenation of per-tensor gradients (about 2x faster per step for the small
    MNIST-1D networks on a CPU).  The returned gradient is the internal buffer: the caller
    must copy it before the next call.
    """

    def __init__(self, flat: FlatModel):
        self.module = copy.deepcopy(flat.module)
        linears = [m for m in self.module.modules() if isinstance(m, nn.Linear)]
        self.head = linears[-1] if linears else None
        template = flat.flatten()
        self.params = torch.zeros_like(template)
        self.grad = torch.zeros_like(template)
        for (_, param), shape, start in zip(self.module.named_parameters(), flat.shapes, flat.offsets):
            stop = start + shape.numel()
            param.data = self.params[start:stop].view(shape)
            param.grad = self.grad[start:stop].view(shape)

    def __call__(self, w, x, y, weight, anchors=None, lam: float = 0.0):
        with torch.no_grad():
            self.params.copy_(w)
            self.grad.zero_()
        if x.dim() == 4:  # images: channels-last kernels are faster, the numbers the same
            x = x.contiguous(memory_format=torch.channels_last)
        if anchors is None:
            losses = F.cross_entropy(self.module(x), y, reduction="none")
            loss = (losses * weight).sum() / weight.sum().clamp_min(1.0)
        else:
            feats = self.module.features(x)
            losses = F.cross_entropy(self.head(feats), y, reduction="none")
            loss = (losses * weight).sum() / weight.sum().clamp_min(1.0) + lam * anchor_term(feats, y, weight, anchors)
        loss.backward()
        return loss.detach(), self.grad


def weighted_cross_entropy(logits: torch.Tensor, y: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """:meth:`FlatModel.loss`'s ``sum_i a_i CE_i / max(sum_i a_i, 1)`` from logits, with
    class-index targets written as ``-log_softmax`` picked by the label: the numbers of
    ``F.cross_entropy(reduction="none")``, without the masking of ``ignore_index`` that
    it adds (six more kernels per pass under ``vmap``).  Soft targets (Mixup) take
    ``F.cross_entropy``."""
    if y.is_floating_point():
        losses = F.cross_entropy(logits, y, reduction="none")
        return (losses * weight).sum() / weight.sum().clamp_min(1.0)
    picked = logits.log_softmax(dim=-1).gather(-1, y.unsqueeze(-1)).squeeze(-1)
    return -(picked * weight).sum() / weight.sum().clamp_min(1.0)


class FeatureView(nn.Module):
    """A module whose forward is ``inner.features``, so ``functional_call`` can reach it."""

    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner.features(x)


def anchor_term(feats: torch.Tensor, y: torch.Tensor, weight: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
    """``(1/C) sum_c [sum_{i: y_i = c} a_i ||f_i - A_c||^2] / n_c`` with sample weights ``a``
    and ``n_c = sum_{i: y_i = c} a_i``; classes absent from the batch contribute 0."""
    num_classes = anchors.shape[0]
    dist = ((feats - anchors[y]) ** 2).sum(dim=1) * weight
    # a comparison, not F.one_hot, which vmap cannot batch
    onehot = (y[:, None] == torch.arange(num_classes, device=y.device)).to(feats.dtype)
    per_class = onehot.T @ dist
    counts = onehot.T @ weight
    return (per_class / counts.clamp_min(1.0)).sum() / num_classes
