"""Server parts of the baselines: steps other than the pseudo-gradient step (S4, S5, S7)
and auxiliary parts with their own state (algorithms.md section 7.1).

Auxiliary parts plug into :class:`flcore.algorithms.server.Server`:

- ``name``: their state lives in ``state[name]`` (a dict of tensors made by
  ``init(w, num_clients)``, changed in place, checkpointed as is);
- ``broadcast(w, start, sent, part_state, round) -> start``: put what the clients read as
  ``ctx.broadcast`` into ``sent``;
- ``after(w, w_new, start, uploads, counts, part_state, round, num_clients) -> w_new``:
  update the state from the round's uploads and possibly change the new global model.

Steps (``init(w, num_clients)`` / ``update(w, start, uploads, counts, state, round,
num_clients) -> w_new``) replace :class:`flcore.algorithms.server.PseudoGradientStep`.

Models are aggregated with the sample-weighted :func:`aggregate` (rule R2) everywhere,
also where a paper writes a plain mean over the participants (FedDyn, AdaBest, FedSpeed):
with the equal-size clients of the papers' protocols the two are the same.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .perturbation import unit
from .server import aggregate


@dataclass(frozen=True)
class ScaffoldServer:
    """C2's server side, SCAFFOLD (Karimireddy et al. 2020, Algorithm 1 lines 16-17).

    Keeps ``c`` (zeros at start), broadcasts it as ``scaffold_c`` and after the round sets
    ``c <- c + (1/N) sum_{k in S} dc_k`` with ``dc_k`` the clients' ``scaffold_dc``
    uploads and ``N`` the number of clients.  The model step (``w + eta_g sum_k p_k
    dy_k``) is ``PseudoGradientStep(ServerSGD(lr=eta_g))``.
    """

    name: str = "scaffold"

    def init(self, w, num_clients):
        return {"c": torch.zeros_like(w)}

    def broadcast(self, w, start, sent, part_state, round):
        sent["scaffold_c"] = part_state["c"]
        return start

    def after(self, w, w_new, start, uploads, counts, part_state, round, num_clients):
        part_state["c"] = part_state["c"] + uploads["scaffold_dc"].sum(0) / num_clients
        return w_new


@dataclass(frozen=True)
class DynServerCorrection:
    """S6, the FedDyn server correction (Acar et al. 2021, Algorithm 1 lines 11-12).

    After the step has produced ``w_new = w - (start - sum_k p_k w_k)``::

        h <- h - (alpha / N) sum_{k in S} (w_k - start)
        w^{t+1} = w_new - h / alpha

    For FedDyn ``start = w^t`` so ``w_new`` is the clients' average and this is Acar et
    al.'s ``w^{t+1} = mean_k w_k - h/alpha``.  For FedGloSS (``alpha = 1/beta``, start the
    perturbed ``w~^t``) ``h`` is the dual ``sigma`` and the result is
    ``w^t - Delta~^t - beta sigma`` (algorithms.md 2.4, Algorithm 1 steps 3-4).

    ``dual_scale="paper"`` is the written ``alpha/N``; ``"code"`` divides additionally by
    the number of participants ``|S|``, as the FedGloSS official code does.
    """

    alpha: float
    dual_scale: str = "paper"
    name: str = "dyn"

    def __post_init__(self):
        if self.dual_scale not in ("paper", "code"):
            raise ValueError(f"dual_scale must be 'paper' or 'code', got {self.dual_scale!r}")

    def init(self, w, num_clients):
        return {"h": torch.zeros_like(w)}

    def after(self, w, w_new, start, uploads, counts, part_state, round, num_clients):
        models = uploads["model"]
        scale = self.alpha / num_clients
        if self.dual_scale == "code":
            scale = scale / models.shape[0]
        part_state["h"] = part_state["h"] - scale * (models - start).sum(0)
        return w_new - part_state["h"] / self.alpha
