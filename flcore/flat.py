"""A model's parameters as one flat vector (design guide section 4).

:class:`FlatModel` keeps an ``nn.Module`` as a *template* and evaluates it on any flat
parameter vector ``w [P]`` through ``torch.func.functional_call``, with the module's
tensors given as views of ``w``.  Norms, dot products, perturbations and averages are
then single tensor operations, and the clients of a round are a ``[K, P]`` tensor that
can be differentiated client by client or all at once with ``torch.func.vmap``.

Only trainable parameters are flattened; flcore's models have no buffers (GroupNorm, no
BatchNorm), so the flat vector is the whole model state.
"""
from __future__ import annotations

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

    def loss(self, w: torch.Tensor, x: torch.Tensor, y: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """Weighted mean cross-entropy ``sum_i a_i CE_i / max(sum_i a_i, 1)``.

        ``weight`` is 1 on real samples and 0 on padding, so a padded batch gives the
        same loss as the real samples alone and an all-padding batch gives 0, not NaN.
        """
        losses = F.cross_entropy(self.forward(w, x), y, reduction="none")
        return (losses * weight).sum() / weight.sum().clamp_min(1.0)

    def grad_fn(self, batched: bool):
        """``(W [K, P], batch) -> (loss [K], grad [K, P])``.

        ``batched=False`` loops over the K clients (the lean path for CPUs); ``True``
        differentiates all clients in one ``vmap`` computation (the GPU path).  Both
        evaluate the same function, so they agree to float tolerance.
        """
        single = grad_and_value(self.loss)
        if batched:
            many = vmap(single)

            def batched_grad(W, batch):
                g, loss = many(W, batch.x, batch.y, batch.weight)
                return loss, g
            return batched_grad

        def looped_grad(W, batch):
            grads, losses = [], []
            for k in range(W.shape[0]):
                g, loss = single(W[k], batch.x[k], batch.y[k], batch.weight[k])
                grads.append(g)
                losses.append(loss)
            return torch.stack(losses), torch.stack(grads)
        return looped_grad

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
