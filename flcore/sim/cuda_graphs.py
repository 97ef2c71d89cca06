"""The batched local step as a CUDA graph: captured once, replayed every step.

A batched FedSAM step on a GPU is a few hundred small kernels; launched one by one from
Python the GPU waits on the host most of the time.  With static shapes (the batched
engine pads every step to one width, :mod:`flcore.sim.round_draws`) and no value read back
inside a step, the step can be recorded once as a CUDA graph (``torch.cuda.graph``) and
replayed with one launch.

:class:`StepGraphs` does this for one :class:`~flcore.sim.engine.Simulation`:

- **Static buffers.**  The step's inputs (the iterate ``W``, the batch, the chunk's
  scratch state) and every tensor of the round context (start, global model, client
  state rows, broadcast values, steps per client) are copied into buffers the graph
  reads; its outputs are copied out after each replay, so nothing the caller keeps
  aliases memory a later replay overwrites.
- **One graph per signature**: shapes and dtypes of every input, the names of the
  scratch state and the precision settings.  The learning rate is read from a device
  scalar the graph owns (``ctx.lr`` is a 0-d tensor inside the captured step, set before
  each replay), so a rate that decays every round (FedLESAM's 0.998) replays the same
  graph; ``lr * g`` rounds the rate to the iterate's dtype either way, as PyTorch does
  with a Python number.  After :data:`MAX_GRAPHS` signatures graphs are turned off for
  the run.
- **Only what a graph can replay.**  The round number is hidden from captured code: a
  part that reads it inside a step (a rho schedule, FedFA's calibration rounds) makes the
  capture fail, and the run goes on eagerly.  So does a step that synchronises with the
  host, draws random numbers on the device, or anything else capture refuses.
- **Checked, then trusted.**  The first step of every new graph runs eagerly too; the
  graph's replay of it must equal the eager result (to float rounding of the same
  kernels), or graphs are turned off for the run.  The eager result is what the step
  returns.

Chunks of more than :data:`MAX_GRAPH_CLIENTS` clients run eagerly: the GPU bounds those
steps, and a graph's private memory pool would only cost memory.

``FLCORE_CUDA_GRAPHS=0`` turns them off (the benchmark compares both ways).  On a CPU,
under the sequential engine or with FedFA's anchors the step always runs eagerly.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any

import torch

__all__ = ["MAX_GRAPHS", "MAX_GRAPH_CLIENTS", "StepGraphs", "cuda_graphs_enabled"]

#: Signatures captured per run before graphs are turned off for it.
MAX_GRAPHS = 4
#: Eager and replayed first steps must agree to this share of the largest value of each
#: tensor (float32 rounding of the same kernels, summed over a step, is far below it).
CHECK_RTOL = 1e-5
#: Chunks of more clients run eagerly: there the GPU, not the host, bounds a step.  Measured
#: on one H100 (FedSAM, CIFAR-10 CNN; benchmarks/results/gpu_profile.jsonl): 5 clients per
#: round 0.050 s with graphs vs 0.111 s without; 100 clients 0.800 vs 0.791 s, with 47 %
#: more memory for the graph's private pool; 1,000 clients: the capture does not fit.
MAX_GRAPH_CLIENTS = 64


def cuda_graphs_enabled() -> bool:
    """``$FLCORE_CUDA_GRAPHS`` is not ``0`` (the default: on)."""
    return os.environ.get("FLCORE_CUDA_GRAPHS", "1").strip() not in ("0", "false", "no", "off")


class NotCapturable(RuntimeError):
    """The step cannot be replayed from a graph (it read the round number, ...)."""


class _HiddenRound:
    """Stands for ``ctx.round`` inside a captured step: any use of it raises."""

    def _refuse(self, *args, **kwargs):
        raise NotCapturable("the step reads the round number")

    __index__ = __int__ = __float__ = __bool__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __floordiv__ = __rfloordiv__ = __mod__ = __pow__ = __rpow__ = __neg__ = __hash__ = __format__ = _refuse


def _tensor_fields(ctx) -> dict[str, Any]:
    """The context's tensors (fields and dict entries) by a flat name."""
    found = {}
    for f in dataclasses.fields(ctx):
        value = getattr(ctx, f.name)
        if isinstance(value, torch.Tensor):
            found[f.name] = value
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, torch.Tensor):
                    found[f"{f.name}.{key}"] = item
    return found


def _describe(value) -> tuple:
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), value.dtype, str(value.device))
    if value is None or isinstance(value, (bool, int, float, str)):
        return ("value", value)
    raise NotCapturable(f"a {type(value).__name__} in the step's state")


def _precision_key() -> tuple:
    return (torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision,
            torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda"))


class _Captured:
    """One captured step with its static inputs and outputs."""

    def __init__(self, client_update, W, batch, ctx, scratch, emulate: bool = False) -> None:
        self.client_update = client_update
        self.W = W.clone()
        self.batch = dataclasses.replace(batch, x=batch.x.clone(), y=batch.y.clone(),
                                         weight=batch.weight.clone(), active=batch.active.clone())
        self.ctx_tensors = {name: t.clone() for name, t in _tensor_fields(ctx).items()}
        self.lr = torch.tensor(float(ctx.lr), dtype=W.dtype, device=W.device)
        self.ctx = self._static_ctx(ctx)
        self.scratch_in = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in scratch.items()}
        self.loaded_ctx = ctx
        self.emulate = emulate
        if emulate:
            return
        self.graph = torch.cuda.CUDAGraph()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up: lazy initialisation (cuBLAS, cuDNN) off the graph
            for _ in range(2):
                self._run()
        torch.cuda.current_stream().wait_stream(side)
        with torch.cuda.graph(self.graph):  # a pool of its own: graphs replay in any order
            self.W_out, self.scratch_out = self._run()

    def _static_ctx(self, ctx):
        changes: dict[str, Any] = {"round": _HiddenRound(), "lr": self.lr}
        for f in dataclasses.fields(ctx):
            value = getattr(ctx, f.name)
            if isinstance(value, torch.Tensor):
                changes[f.name] = self.ctx_tensors[f.name]
            elif isinstance(value, dict):
                changes[f.name] = {k: self.ctx_tensors.get(f"{f.name}.{k}", v) for k, v in value.items()}
        return dataclasses.replace(ctx, **changes)

    def _run(self):
        scratch = dict(self.scratch_in)
        W_new = self.client_update.step(self.W, self.batch, self.ctx, scratch)
        return W_new, scratch

    def load(self, W, batch, ctx, scratch) -> None:
        if ctx is not self.loaded_ctx:  # a new chunk or round: its context into the buffers
            for name, t in _tensor_fields(ctx).items():
                self.ctx_tensors[name].copy_(t)
            self.lr.fill_(float(ctx.lr))
            self.loaded_ctx = ctx
        self.W.copy_(W)
        for name in ("x", "y", "weight", "active"):
            getattr(self.batch, name).copy_(getattr(batch, name))
        for key, value in scratch.items():
            if isinstance(value, torch.Tensor):
                self.scratch_in[key].copy_(value)

    def replay(self, W, batch, ctx, scratch) -> torch.Tensor:
        self.load(W, batch, ctx, scratch)
        if self.emulate:  # the graph's data path without a GPU: the step re-run on the buffers
            self.W_out, self.scratch_out = self._run()
        else:
            self.graph.replay()
        for key, value in self.scratch_out.items():
            scratch[key] = value.clone() if isinstance(value, torch.Tensor) else value
        return self.W_out.clone()


class StepGraphs:
    """Captured local steps of one run (module docstring).  ``step`` has the signature of
    :meth:`flcore.algorithms.local.LocalUpdate.step` and gives its result."""

    def __init__(self, emulate: bool = False) -> None:
        #: ``emulate``: on any device, "replay" re-runs the step on the static buffers: the
        #: buffers, context copies and outputs of a graph without its capture, so that they
        #: are tested on machines without a GPU
        self.emulate = emulate
        self.graphs: dict[tuple, _Captured] = {}
        self.off_reason: str | None = None if cuda_graphs_enabled() else "FLCORE_CUDA_GRAPHS=0"
        self.replays = 0
        self._context: tuple | None = None  # (the context, its part of the signature)

    def _context_key(self, ctx) -> tuple:
        """The part of a signature a chunk's context fixes: worked out once per context (the
        steps of a chunk share it), not at every step."""
        if self._context is not None and self._context[0] is ctx:
            return self._context[1]
        if not isinstance(ctx.lr, float):
            raise NotCapturable(f"a learning rate of type {type(ctx.lr).__name__}")
        plain = tuple((f.name, _describe(getattr(ctx, f.name))) for f in dataclasses.fields(ctx)
                      if f.name not in ("round", "grad_fn", "lr")
                      and not isinstance(getattr(ctx, f.name), (dict, torch.Tensor)))
        tensors = tuple((name, _describe(t)) for name, t in sorted(_tensor_fields(ctx).items()))
        key = plain + tensors + (_precision_key(),)
        self._context = (ctx, key)
        return key

    def _signature(self, client_update, W, batch, ctx, scratch) -> tuple:
        state = tuple((k, _describe(v)) for k, v in sorted(scratch.items()))
        inputs = tuple(_describe(t) for t in (W, batch.x, batch.y, batch.weight, batch.active))
        # the object's id: a captured graph holds its client update, so the id is not reused
        return (id(client_update),) + self._context_key(ctx) + state + inputs

    def step(self, client_update, W: torch.Tensor, batch, ctx, scratch: dict[str, Any]) -> torch.Tensor:
        """``client_update.step(W, batch, ctx, scratch)``, from a graph where one applies."""
        if (self.off_reason is not None or (W.device.type != "cuda" and not self.emulate) or batch.anchors is not None
                or W.shape[0] > MAX_GRAPH_CLIENTS):
            return client_update.step(W, batch, ctx, scratch)
        try:
            key = self._signature(client_update, W, batch, ctx, scratch)
        except NotCapturable as exc:
            self.off_reason = str(exc)
            return client_update.step(W, batch, ctx, scratch)
        captured = self.graphs.get(key)
        if captured is not None:
            self.replays += 1
            return captured.replay(W, batch, ctx, scratch)
        if len(self.graphs) >= MAX_GRAPHS:
            self.off_reason = f"more than {MAX_GRAPHS} step signatures"
            return client_update.step(W, batch, ctx, scratch)
        return self._capture(key, client_update, W, batch, ctx, scratch)

    def _capture(self, key, client_update, W, batch, ctx, scratch) -> torch.Tensor:
        before = dict(scratch)
        try:
            captured = _Captured(client_update, W, batch, ctx, before, self.emulate)
            check = dict(before)
            replayed = captured.replay(W, batch, ctx, check)
        except Exception as exc:  # noqa: BLE001 - whatever capture refuses, the step runs eagerly
            if W.device.type == "cuda":
                try:
                    torch.cuda.synchronize()
                except RuntimeError:
                    pass
            self.off_reason = f"capture failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            return client_update.step(W, batch, ctx, scratch)
        W_new = client_update.step(W, batch, ctx, scratch)
        if set(check) != set(scratch):
            self.off_reason = "a replayed step left other state than the eager step"
            return W_new
        pairs = [("W", replayed, W_new)] + [(k, check[k], scratch[k]) for k in sorted(scratch)
                                            if isinstance(scratch[k], torch.Tensor)]
        for name, got, want in pairs:
            gap = _relative_gap(got, want)
            if gap > CHECK_RTOL:
                self.off_reason = (f"a replayed step differed from the eager step ({name}: {gap:.1e} of its "
                                   f"largest value)")
                return W_new
        self.graphs[key] = captured
        return W_new


def _relative_gap(a: torch.Tensor, b: torch.Tensor) -> float:
    """Largest difference of ``a`` and ``b`` over the largest magnitude of ``b`` (inf when
    their shapes or dtypes differ; 0 or inf for equal or unequal integers)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return float("inf")
    if not a.is_floating_point():
        return 0.0 if bool(torch.equal(a, b)) else float("inf")
    if a.numel() == 0:
        return 0.0
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-30))
