"""The batched local step replayed from CUDA graphs (``flcore.sim.cuda_graphs``): a run
with graphs trains the models a run without them trains; a step that reads the round
number, or a run with too many step signatures, goes on eagerly; on a CPU nothing is
captured.  The CUDA tests run on a machine with a GPU (README, developer notes)."""
import pytest
import torch

from flcore import resolve_config
from flcore.algorithms import Batch, RoundContext
from flcore.sim import Simulation, build_federated_data
from flcore.sim.cuda_graphs import MAX_GRAPH_CLIENTS, MAX_GRAPHS, NotCapturable, StepGraphs, _HiddenRound, _relative_gap

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def _sim(device: str, graphs: bool, monkeypatch, **overrides) -> Simulation:
    monkeypatch.setenv("FLCORE_CUDA_GRAPHS", "1" if graphs else "0")
    cfg = resolve_config(scale="smoke", engine="batched", **overrides)
    dev = torch.device(device)
    return Simulation(cfg, build_federated_data(cfg, dev), dev, None)


def test_the_hidden_round_refuses_every_use():
    hidden = _HiddenRound()
    uses = [lambda: hidden + 1, lambda: 1 - hidden, lambda: hidden * 2.0, lambda: hidden == 0, lambda: hidden <= 3,
            lambda: int(hidden), lambda: float(hidden), lambda: bool(hidden), lambda: [0, 1][hidden],
            lambda: 0.5 ** hidden, lambda: f"{hidden}"]
    for use in uses:
        with pytest.raises((NotCapturable, TypeError)):
            use()


def test_on_a_cpu_the_step_is_the_eager_step(monkeypatch):
    sim = _sim("cpu", True, monkeypatch, method="fedsam", rounds=1)
    assert sim.step_graphs is None  # only a GPU with the batched engine gets graphs
    graphs = StepGraphs()
    K, P = 2, sim.w.numel()
    W = sim.w.expand(K, -1).clone()
    x = torch.randn(K, 4, *sim.data.input_shape)
    batch = Batch(x=x, y=torch.randint(0, 10, (K, 4)), weight=torch.ones(K, 4), active=torch.ones(K, dtype=torch.bool))
    ctx = RoundContext(round=0, lr=0.1, start=W.clone(), client_ids=torch.arange(K), grad_fn=sim.flat.grad_fn(True))
    scratch_a, scratch_b = sim.client_update.begin(ctx), sim.client_update.begin(ctx)
    torch.testing.assert_close(graphs.step(sim.client_update, W, batch, ctx, scratch_a),
                               sim.client_update.step(W, batch, ctx, scratch_b), rtol=0, atol=0)
    assert graphs.graphs == {} and graphs.replays == 0 and P > 0


def test_graphs_can_be_turned_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("FLCORE_CUDA_GRAPHS", "0")
    assert StepGraphs().off_reason == "FLCORE_CUDA_GRAPHS=0"
    monkeypatch.setenv("FLCORE_CUDA_GRAPHS", "1")
    assert StepGraphs().off_reason is None


def _train(sim: Simulation, rounds: int) -> torch.Tensor:
    for _ in range(rounds):
        sim.step()
    torch.cuda.synchronize()
    return sim.w.clone()


@CUDA
@pytest.mark.parametrize("method,extra", [("fedavg", {"momentum": 0.9}), ("fedsam", {"rho": 0.1}),
                                          ("fedasam", {}), ("scaffold", {}), ("fedgloss-sam", {}), ("feddyn+sam", {}),
                                          ("fedlesam", {}), ("fedgf", {})])
def test_a_run_with_graphs_trains_the_models_of_a_run_without(method, extra, monkeypatch):
    """Same kernels replayed: the weights agree to float32 rounding after 6 rounds (a
    capture may pick other cuDNN algorithms than the eager warm-up, hence not bitwise)."""
    common = dict(method=method, rounds=6, alpha=0.5, batch_size=30, **extra)
    eager = _train(_sim("cuda", False, monkeypatch, **common), 6)
    sim = _sim("cuda", True, monkeypatch, **common)
    graphed = _train(sim, 6)
    assert sim.step_graphs.off_reason is None, sim.step_graphs.off_reason
    assert sim.step_graphs.replays > 0 and 1 <= len(sim.step_graphs.graphs) <= MAX_GRAPHS
    torch.testing.assert_close(graphed, eager, rtol=1e-4, atol=1e-5)


@CUDA
def test_a_step_that_reads_the_round_goes_on_eagerly(monkeypatch):
    """FedGloSS-SAM's client radius warms up with the round: its step cannot be replayed."""
    common = dict(method="fedgloss-sam", rounds=4, rho_warmup_rounds=3, rho_warmup_start=0.01)
    eager = _train(_sim("cuda", False, monkeypatch, **common), 4)
    sim = _sim("cuda", True, monkeypatch, **common)
    graphed = _train(sim, 4)
    assert sim.step_graphs.off_reason == "the step reads the round number" or \
        sim.step_graphs.off_reason.startswith("capture failed")
    assert sim.step_graphs.graphs == {} and sim.step_graphs.replays == 0
    torch.testing.assert_close(graphed, eager, rtol=0, atol=0)


@CUDA
def test_a_learning_rate_that_decays_every_round_replays_one_graph(monkeypatch):
    """The rate is a device scalar inside the graph (FedLESAM decays it by 0.998 a round)."""
    common = dict(method="fedavg", rounds=5, lr_decay=0.9)
    eager = _train(_sim("cuda", False, monkeypatch, **common), 5)
    sim = _sim("cuda", True, monkeypatch, **common)
    graphed = _train(sim, 5)
    assert sim.step_graphs.off_reason is None and len(sim.step_graphs.graphs) == 1
    torch.testing.assert_close(graphed, eager, rtol=1e-4, atol=1e-5)


def _chunk(sim: Simulation, K: int):
    W = sim.w.expand(K, -1).clone()
    x = torch.randn(K, 4, *sim.data.input_shape, device=W.device)
    batch = Batch(x=x, y=torch.randint(0, 10, (K, 4), device=W.device), weight=torch.ones(K, 4, device=W.device),
                  active=torch.ones(K, dtype=torch.bool, device=W.device))
    ctx = RoundContext(round=0, lr=0.1, start=W.clone(), client_ids=torch.arange(K, device=W.device),
                       grad_fn=sim.flat.grad_fn(True))
    return W, batch, ctx, sim.client_update.begin(ctx)


@CUDA
def test_graphs_are_off_after_too_many_signatures_and_skip_large_chunks(monkeypatch):
    sim = _sim("cuda", True, monkeypatch, method="fedavg", rounds=1)
    graphs = StepGraphs()
    for K in range(1, MAX_GRAPHS + 1):
        graphs.step(sim.client_update, *_chunk(sim, K))
    assert len(graphs.graphs) == MAX_GRAPHS and graphs.off_reason is None
    graphs.step(sim.client_update, *_chunk(sim, MAX_GRAPH_CLIENTS + 1))  # eager, no signature taken
    assert graphs.off_reason is None
    graphs.step(sim.client_update, *_chunk(sim, MAX_GRAPHS + 1))
    assert graphs.off_reason == f"more than {MAX_GRAPHS} step signatures"


def test_the_relative_gap_is_the_largest_difference_over_the_largest_value():
    a = torch.tensor([1.0, -4.0, 2.0])  # float32: 2.002 is rounded, hence rel=1e-4 below
    assert _relative_gap(a, a.clone()) == 0
    assert _relative_gap(a + torch.tensor([0.0, 0.0, 0.002]), a) == pytest.approx(0.002 / 4, rel=1e-4)
    assert _relative_gap(a, a.double()) == float("inf") and _relative_gap(a[:2], a) == float("inf")
    assert _relative_gap(torch.tensor([1, 2]), torch.tensor([1, 3])) == float("inf")


def _static_sim(graphs: StepGraphs | None, **overrides) -> Simulation:
    """A CPU simulation whose steps have the accelerator's static width, its steps through
    ``graphs`` (emulated: the buffers and copies of a graph, re-run on the CPU)."""
    cfg = resolve_config(scale="smoke", engine="batched", rounds=3, alpha=0.5, **overrides)
    dev = torch.device("cpu")
    sim = Simulation(cfg, build_federated_data(cfg, dev), dev, None)
    sim.static_width = cfg.batch_size
    sim.step_graphs = graphs
    return sim


@pytest.mark.parametrize("method,extra", [("fedavg", {"momentum": 0.9}), ("fedsam", {"rho": 0.1}),
                                          ("fedasam", {"rho": 0.5}), ("scaffold", {}), ("fedlesam", {}),
                                          ("centralized-asam", {"rho": 0.5}), ("fedprox+asam", {"rho": 0.5})])
def test_a_graphs_buffers_carry_what_the_eager_step_reads(method, extra):
    """On the CPU, with replay emulated: the static inputs, the context copied in each
    round (a learning rate that decays included), the scratch state threaded from step to
    step and the outputs copied out give the eager run's weights exactly."""
    eager = _static_sim(None, method=method, **extra)
    graphs = StepGraphs(emulate=True)
    emulated = _static_sim(graphs, method=method, **extra)
    for _ in range(3):
        eager.step()
        emulated.step()
    assert graphs.off_reason is None, graphs.off_reason
    assert graphs.replays > 0
    torch.testing.assert_close(emulated.w, eager.w, rtol=0, atol=0)


def test_emulated_graphs_refuse_a_step_that_reads_the_round():
    graphs = StepGraphs(emulate=True)
    common = dict(method="fedgloss-sam", rho_warmup_rounds=3, rho_warmup_start=0.01)
    eager, emulated = _static_sim(None, **common), _static_sim(graphs, **common)
    for _ in range(3):
        eager.step()
        emulated.step()
    assert graphs.off_reason == "capture failed: NotCapturable: the step reads the round number"
    torch.testing.assert_close(emulated.w, eager.w, rtol=0, atol=0)
