"""The methods published since the five papers (flcore.algorithms.recipes_since) against
their update rules, on the quadratic federation of :mod:`test_methods_papers`: a round of
the registered recipe (client, server and schedule built from a config) against the rule
written out in numpy."""
import pytest
import torch
from test_methods_papers import PLAN, W0, Driver, average, close, grad

from flcore import resolve_config
from flcore.algorithms import METHODS, get_method
from flcore.errors import ConfigError

# ----------------------------------------------------------------------------- WIMA

@pytest.mark.parametrize("window", [1, 2, 3])
def test_wima_sends_the_mean_of_the_last_w_aggregates_from_round_zero(window):
    """w^{t+1} = mean of the last min(t+1, W) FedAvg aggregates, from round 0, and that
    mean is what the clients train from next round and what is evaluated."""
    lr, steps = 0.1, 2
    d = Driver("wima", steps=steps, weight_decay=0.0, ima_window=window)
    w = W0.copy()
    aggregates = []
    for r in range(5):
        clients = PLAN[r % 3]
        models = []
        for k in clients:
            x = w.copy()
            for _ in range(steps):
                x = x - lr * grad(x, k)
            models.append(x)
        d.round(r, clients)
        aggregates = (aggregates + [average(models, clients)])[-window:]
        w = sum(aggregates) / len(aggregates)
        close(d.w.numpy(), w)
        close(d.eval_params(), w)


def test_wima_with_a_window_of_one_is_fedavg():
    wima, fedavg = Driver("wima", ima_window=1), Driver("fedavg")
    for r in range(3):
        wima.round(r, PLAN[r])
        fedavg.round(r, PLAN[r])
    torch.testing.assert_close(wima.w, fedavg.w, rtol=0, atol=0)


def test_wima_differs_from_fedavg_from_the_second_round():
    """Applied "from the initial stages": no start round to wait for."""
    wima, fedavg = Driver("wima", ima_window=2), Driver("fedavg")
    wima.round(0, PLAN[0])
    fedavg.round(0, PLAN[0])
    torch.testing.assert_close(wima.w, fedavg.w, rtol=0, atol=0)  # one aggregate: its own mean
    wima.round(1, PLAN[1])
    fedavg.round(1, PLAN[1])
    assert not torch.allclose(wima.w, fedavg.w)


def test_wima_reads_only_its_window():
    assert METHODS["wima"].hyperparameters == ("ima_window",)
    cfg = resolve_config(scale="smoke", method="wima", ima_window=4)
    assert cfg.ima_window == 4
    with pytest.raises(ConfigError, match="ima_window"):
        resolve_config(scale="smoke", method="wima", ima_window=0)
    assert get_method("wima").grad_evals_per_step == 1


# ----------------------------------------------------------------------------- every engine

SINCE = ["wima"]


@pytest.mark.parametrize("method", SINCE)
def test_a_run_in_a_group_equals_the_run_alone(method):
    """The multi-run engine: two seeds trained as one group equal each trained alone (the
    sequential, batched and Flower engines: tests/test_all_methods.py, tests/test_flower.py)."""
    from test_multi_run import _alone, _assert_same_runs, _cfg, _together

    from flcore.sim.multi_run import group_key, run_batchable

    cfgs = [_cfg(method, seed=0, alpha=0.5, ima_window=2), _cfg(method, seed=1, alpha=1000.0, ima_window=2)]
    assert run_batchable(method) and group_key(cfgs[0]) == group_key(cfgs[1])
    _assert_same_runs([_alone(c) for c in cfgs], _together(cfgs))
