"""A round that never waits on the host inside its local steps: static shapes (padded
batches equal unpadded ones), no host reads inside the local steps nor growing with steps
or clients, a fixed number of operations per local step whatever the number of clients."""
import contextlib
from collections import Counter

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from flcore import resolve_config
from flcore.algorithms import Batch
from flcore.flat import FlatModel
from flcore.sim import Simulation, build_federated_data

#: Tensor methods that read a value back to the host (a synchronisation on an accelerator).
HOST_READS = ("item", "tolist", "cpu", "numpy", "__bool__", "__float__", "__int__", "nonzero")


def _sim(**overrides) -> Simulation:
    cfg = resolve_config(scale="smoke", **overrides)
    return Simulation(cfg, build_federated_data(cfg, torch.device("cpu")), torch.device("cpu"), None)


# ------------------------------------------------------------------ static shapes
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, 1e-6)])
def test_padded_batch_gives_the_unpadded_loss_and_gradient(dtype, tol):
    """52 real samples of 64 slots (the papers' last batch at 500 samples per client):
    zero-weight padding changes neither the loss nor the gradient, on both gradient paths.
    Tolerance: summation order over more slots (float64 1e-12, float32 1e-6)."""
    torch.manual_seed(0)
    module = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10)).to(dtype)
    flat = FlatModel(module)
    K, real, width = 3, 52, 64
    W = flat.flatten().expand(K, -1) + 0.01 * torch.randn(K, flat.num_params, dtype=dtype)
    x = torch.randn(K, width, 3, 8, 8, dtype=dtype)
    y = torch.randint(0, 10, (K, width))
    weight = torch.zeros(K, width, dtype=dtype)
    weight[:, :real] = 1
    active = torch.ones(K, dtype=torch.bool)
    padded = Batch(x=x, y=y, weight=weight, active=active)
    unpadded = Batch(x=x[:, :real], y=y[:, :real], weight=weight[:, :real], active=active)
    for batched in (False, True):
        grad_fn = flat.grad_fn(batched=batched)
        loss_p, grad_p = grad_fn(W, padded)
        loss_u, grad_u = grad_fn(W, unpadded)
        torch.testing.assert_close(loss_p, loss_u, rtol=0, atol=tol)
        torch.testing.assert_close(grad_p, grad_u, rtol=0, atol=tol)
        assert grad_u.abs().max() > 1e-3  # a real gradient, not zeros on both sides


@pytest.mark.parametrize("method,extra", [("fedavg", {"momentum": 0.9}), ("fedsam", {"rho": 0.1}),
                                          ("scaffold", {})])
def test_static_width_run_equals_per_step_width_run(method, extra):
    """The batched engine with every step padded to the batch size (the accelerator's static
    shapes, forced here on the CPU) trains the same models as steps cut to their own width;
    clients of unequal sizes, so some steps are partial."""
    cut = _sim(method=method, engine="batched", rounds=3, alpha=0.5, batch_size=30, **extra)
    padded = _sim(method=method, engine="batched", rounds=3, alpha=0.5, batch_size=30, **extra)
    assert cut.static_width is None
    padded.static_width = padded.cfg.batch_size
    sizes = padded.data.client_sizes
    assert any(n % padded.cfg.batch_size for n in sizes)  # partial batches exist
    cut.run_rounds()
    padded.run_rounds()
    torch.testing.assert_close(padded.w, cut.w, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ host reads
class HostReads:
    """Counts calls of the :data:`HOST_READS` tensor methods: those made while ``inside``
    is set (the local steps), and ``total``, all others of the round except those of
    ``Simulation.draw_round``, which draws on the host from host tensors by design (on an
    accelerator its reads touch no device tensor)."""

    def __init__(self, monkeypatch):
        self.total = Counter()
        self.inside_steps = Counter()
        self.inside = False
        self.drawing = False
        for name in HOST_READS:
            original = getattr(torch.Tensor, name)
            monkeypatch.setattr(torch.Tensor, name, self._wrap(name, original))

    def _wrap(self, name, original):
        def counted(tensor, *args, **kwargs):
            if not self.drawing:
                self.total[name] += 1
            if self.inside:
                self.inside_steps[name] += 1
            return original(tensor, *args, **kwargs)
        return counted

    @contextlib.contextmanager
    def steps(self):
        self.inside = True
        try:
            yield
        finally:
            self.inside = False

    def watch_draws(self, monkeypatch, sim):
        draw_round = sim.draw_round

        def drawing(*args, **kwargs):
            self.drawing = True
            try:
                return draw_round(*args, **kwargs)
            finally:
                self.drawing = False
        monkeypatch.setattr(sim, "draw_round", drawing)


def _reads_of_one_round(monkeypatch, **overrides) -> HostReads:
    sim = _sim(rounds=2, **overrides)
    sim.step()  # warm-up: caches built on first use are not the round's
    with monkeypatch.context() as patch:
        reads = HostReads(patch)
        patch.setattr(sim, "client_update", WatchedSteps(sim.client_update, reads.steps))
        reads.watch_draws(patch, sim)
        sim.step()
    return reads


@pytest.mark.parametrize("method,engine", [("fedsam", "batched"), ("fedsam", "sequential"),
                                           ("fedavg", "batched"), ("scaffold", "batched")])
def test_no_host_read_inside_local_steps_nor_growing_with_steps_or_clients(monkeypatch, method, engine):
    base = _reads_of_one_round(monkeypatch, method=method, engine=engine, local_steps=2, per_round=2)
    more_steps = _reads_of_one_round(monkeypatch, method=method, engine=engine, local_steps=6, per_round=2)
    more_clients = _reads_of_one_round(monkeypatch, method=method, engine=engine, local_steps=2, per_round=5)
    for reads in (base, more_steps, more_clients):
        assert sum(reads.inside_steps.values()) == 0, dict(reads.inside_steps)
    if engine == "batched":
        assert more_steps.total == base.total and more_clients.total == base.total, (
            dict(base.total), dict(more_steps.total), dict(more_clients.total))
    else:  # one chunk per client: reads at chunk edges may follow clients, never steps
        assert more_steps.total == base.total


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_a_cuda_round_runs_under_sync_debug_mode_error():
    cfg = resolve_config(scale="smoke", method="fedsam", engine="batched", rounds=2)
    device = torch.device("cuda")
    sim = Simulation(cfg, build_federated_data(cfg, device), device, None)
    sim.step()
    torch.cuda.synchronize()
    @contextlib.contextmanager
    def strict():
        torch.cuda.set_sync_debug_mode("error")
        try:
            yield
        finally:
            torch.cuda.set_sync_debug_mode("default")
    sim.client_update = WatchedSteps(sim.client_update, strict)
    sim.step()
    torch.cuda.synchronize()


# ------------------------------------------------------------------ operations per step
class OpCounter(TorchDispatchMode):
    """Counts the aten operations dispatched (each is at least one kernel on a GPU)."""

    def __init__(self):
        super().__init__()
        self.ops = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[str(func.overloadpacket)] += 1
        return func(*args, **(kwargs or {}))


class WatchedSteps:
    """``client_update`` whose ``step`` runs inside ``around()`` (a context manager)."""

    def __init__(self, client_update, around):
        self.inner, self.around = client_update, around

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def step(self, *args, **kwargs):
        with self.around():
            return self.inner.step(*args, **kwargs)


def ops_per_local_step(sim: Simulation) -> Counter:
    """The operations of one local step of ``sim``'s next round (its second step)."""
    counters: list[OpCounter] = []

    def counting():
        counters.append(OpCounter())
        return counters[-1]
    sim.client_update = WatchedSteps(sim.client_update, counting)
    sim.step()
    sim.client_update = sim.client_update.inner
    return counters[1].ops


@pytest.mark.parametrize("method", ["fedavg", "fedsam", "fedasam"])
def test_batched_step_dispatches_the_same_operations_for_any_number_of_clients(method):
    """Clients are a tensor dimension, never a Python loop: the operations of one batched
    local step do not depend on how many clients train together."""
    two = ops_per_local_step(_sim(method=method, engine="batched", per_round=2, local_steps=3, rounds=1))
    five = ops_per_local_step(_sim(method=method, engine="batched", per_round=5, local_steps=3, rounds=1))
    assert two == five
    assert sum(two.values()) > 10  # the counter sees the step
    assert "_local_scalar_dense" not in two  # no value read back (.item())
