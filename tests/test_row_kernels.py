"""The row kernels: the MNIST-1D networks' forward and hand-written backward for many
parameter rows at once equal the module's own forward and autograd, row by row; the
``rows`` engine picks them on a CPU and evaluates a group's runs together."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from flcore import resolve_config
from flcore.errors import ConfigError
from flcore.flat import FlatModel
from flcore.models import MNIST1DCNN, MNIST1DMLP, build_model
from flcore.models.row_kernels import row_kernel, weighted_cross_entropy_rows
from flcore.sim import Simulation, build_federated_data, resolve_engine
from flcore.sim.row_engine import evaluate_rows

CPU = torch.device("cpu")


def _rows(module, rows: int, batch: int, soft: bool, seed: int = 0):
    """Parameters near the module's own, inputs, targets and weights with padding: row 1
    half padding, the last row all padding."""
    g = torch.Generator().manual_seed(seed)
    dtype = next(module.parameters()).dtype
    flat = FlatModel(module)
    W = flat.flatten().repeat(rows, 1) + 0.05 * torch.randn(rows, flat.num_params, generator=g, dtype=dtype)
    x = torch.randn(rows, batch, 40, generator=g, dtype=dtype)
    if soft:
        y = torch.softmax(torch.randn(rows, batch, 10, generator=g, dtype=dtype), -1) * 0.9  # sums to 0.9
    else:
        y = torch.randint(0, 10, (rows, batch), generator=g)
    weight = torch.ones(rows, batch, dtype=dtype)
    weight[1, batch // 2:] = 0
    weight[-1] = 0
    return flat, W, x, y, weight


def _autograd_row(flat, w, x, y, weight):
    """The module's loss and gradient for one row, by autograd (soft targets: F.cross_entropy)."""
    w = w.clone().requires_grad_(True)
    logits = flat.forward(w, x)
    losses = F.cross_entropy(logits, y, reduction="none")
    loss = (losses * weight).sum() / weight.sum().clamp_min(1.0)
    (grad,) = torch.autograd.grad(loss, w)
    return loss.detach(), grad


@pytest.mark.parametrize("model", [MNIST1DCNN, MNIST1DMLP])
@pytest.mark.parametrize("soft", [False, True])
def test_the_kernel_equals_autograd_of_the_module_row_by_row(model, soft):
    torch.manual_seed(0)
    module = model().double()
    flat, W, x, y, weight = _rows(module, rows=4, batch=9, soft=soft)
    loss, grad = row_kernel(module).loss_and_grad(W, x, y, weight)
    for i in range(W.shape[0]):
        ref_loss, ref_grad = _autograd_row(flat, W[i], x[i], y[i], weight[i])
        torch.testing.assert_close(loss[i], ref_loss, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(grad[i], ref_grad, rtol=1e-10, atol=1e-12)
    assert loss[-1] == 0 and torch.count_nonzero(grad[-1]) == 0  # an all-padding batch: no loss, no step
    assert not torch.allclose(grad[0], grad[2])


@pytest.mark.parametrize("model", [MNIST1DCNN, MNIST1DMLP])
def test_the_kernel_logits_equal_the_module_forward(model):
    torch.manual_seed(1)
    module = model().double()
    flat, W, x, _, _ = _rows(module, rows=3, batch=11, soft=False)
    logits = row_kernel(module).logits(W, x)
    for i in range(3):
        torch.testing.assert_close(logits[i], flat.forward(W[i], x[i]), rtol=1e-12, atol=1e-12)


def test_other_input_lengths_and_widths_follow_the_module():
    module = MNIST1DCNN(input_len=23, channels=7).double()
    flat = FlatModel(module)
    W = flat.flatten().repeat(2, 1)
    x = torch.randn(2, 5, 23, dtype=torch.float64)
    y = torch.randint(0, 10, (2, 5))
    weight = torch.ones(2, 5, dtype=torch.float64)
    loss, grad = row_kernel(module).loss_and_grad(W, x, y, weight)
    ref_loss, ref_grad = _autograd_row(flat, W[1], x[1], y[1], weight[1])
    torch.testing.assert_close(grad[1], ref_grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(loss[1], ref_loss)


def test_soft_target_gradient_is_p_times_total_minus_y_by_hand():
    """One row, one sample, two classes: logits (0, log 3) give p = (1/4, 3/4); with
    targets (0.5, 0.25) (summing to 0.75) the gradient is p * 0.75 - y = (-5/16, 5/16)."""
    logits = torch.tensor([[[0.0, torch.log(torch.tensor(3.0)).item()]]], dtype=torch.float64)
    y = torch.tensor([[[0.5, 0.25]]], dtype=torch.float64)
    loss, d = weighted_cross_entropy_rows(logits, y, torch.ones(1, 1, dtype=torch.float64))
    torch.testing.assert_close(d, torch.tensor([[[-5 / 16, 5 / 16]]], dtype=torch.float64))
    expected = -(0.5 * torch.log(torch.tensor(0.25)) + 0.25 * torch.log(torch.tensor(0.75)))
    torch.testing.assert_close(loss, expected.double().reshape(1))


def test_only_the_mnist1d_networks_have_kernels():
    class Wider(MNIST1DCNN):  # a subclass may change forward: no kernel
        pass

    assert row_kernel(MNIST1DCNN()) is not None and row_kernel(MNIST1DMLP()) is not None
    assert row_kernel(Wider()) is None
    assert row_kernel(build_model("cnn", (3, 32, 32), 10)) is None


def test_auto_picks_rows_on_a_cpu_for_the_networks_with_a_kernel():
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    for model in ("mnist1d_cnn", "mnist1d_mlp"):
        assert resolve_engine("auto", cpu, model) == "rows"
        assert resolve_engine("auto", cuda, model) == "batched"
    assert resolve_engine("auto", cpu, "cnn") == "sequential"
    assert resolve_engine("sequential", cpu, "mnist1d_cnn") == "sequential"


def test_rows_on_a_model_without_a_kernel_is_one_config_error():
    cfg = resolve_config(scale="smoke", engine="rows", rounds=1)
    data = build_federated_data(cfg, CPU)
    with pytest.raises(ConfigError, match="engine.*row kernel"):
        Simulation.from_config(cfg, data=data, model=torch.nn.Sequential(torch.nn.Linear(40, 10)))


def test_a_group_evaluates_its_runs_in_one_pass_with_each_runs_numbers():
    """Three runs of one group evaluated together (different seeds, and SWA's average as
    the evaluated model of one) equal each run's own evaluation by its module."""
    from flcore.sim.round_driver import RoundDriver

    cfgs = [resolve_config(scale="smoke", method=m, seed=s, rounds=4, eval_every=1)
            for m, s in (("fedavg", 0), ("fedavg", 1), ("fedavg+swa", 2))]
    sims = [Simulation(c, build_federated_data(c, CPU), CPU, None) for c in cfgs]
    driver = RoundDriver(sims)
    assert driver.engine == "rows"
    driver.run_rounds()
    together = driver.evaluate_together([0, 1, 2], 4)
    for m, sim in enumerate(sims):
        w_eval = sim.server.eval_params(sim.w, sim.server_state)
        acc, loss = sim.flat.evaluate(w_eval, sim.data.test_x, sim.data.test_y)
        assert together[m][0] == pytest.approx(float(acc), abs=1e-12)
        assert together[m][1] == pytest.approx(float(loss), rel=1e-5)
        assert sim.metrics[-1]["test_loss"] == pytest.approx(float(loss), rel=1e-5)


def test_evaluate_rows_in_small_passes_equals_one_pass():
    module = MNIST1DCNN().double()
    flat = FlatModel(module)
    W = flat.flatten().repeat(3, 1) + 0.1 * torch.randn(3, flat.num_params, dtype=torch.float64)
    x, y = torch.randn(250, 40, dtype=torch.float64), torch.randint(0, 10, (250,))
    kernel = row_kernel(module)
    whole = evaluate_rows(kernel, W, x, y, batch_size=250)
    pieces = evaluate_rows(kernel, W, x, y, batch_size=7)
    torch.testing.assert_close(pieces[0], whole[0])
    torch.testing.assert_close(pieces[1], whole[1], rtol=1e-12, atol=1e-12)
    for i in range(3):
        acc, loss = flat.evaluate(W[i], x, y)
        assert float(whole[0][i]) == pytest.approx(float(acc)) and float(whole[1][i]) == pytest.approx(float(loss))
