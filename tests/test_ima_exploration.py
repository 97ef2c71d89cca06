"""IMA's client-exploration schemes ([IMA] Table III): lr schedules, epoch decay, config."""
import math

import pytest
import torch

from flcore import resolve_config
from flcore.algorithms.schedules import ExponentialLR, IMAExplorationLR, ima_local_epochs, local_epochs_at
from flcore.errors import ConfigError
from flcore.sim import Simulation, build_federated_data


def test_exponential_is_the_closed_form():
    schedule = IMAExplorationLR(0.01, 0.99, 0.97, 300)
    assert schedule(299) == pytest.approx(0.01 * 0.99 ** 299)
    assert schedule(399) == pytest.approx(0.01 * 0.99 ** 300 * 0.97 ** 99)
    # the worked example of the notes: T = 400, t_IMA = 300 -> 2.40e-5 at the last round
    assert schedule(399) == pytest.approx(2.40e-5, rel=5e-3)


def test_none_is_the_base_schedule_bit_for_bit():
    schedule = IMAExplorationLR(0.1, 0.99, 0.97, 5, scheme="none")
    base = ExponentialLR(0.1, 0.99)
    assert [schedule(t) for t in range(20)] == [base(t) for t in range(20)]


def test_constant_is_lr_min_from_the_start():
    schedule = IMAExplorationLR(0.1, 0.99, 0.97, 10, scheme="constant", lr_min=5e-4)
    assert schedule(9) == pytest.approx(0.1 * 0.99 ** 9)
    assert [schedule(t) for t in (10, 11, 50)] == [5e-4] * 3


def test_cyclic_decays_linearly_within_each_cycle_and_restarts():
    schedule = IMAExplorationLR(0.1, 0.5, 0.97, 2, scheme="cyclic", lr_min=0.005, period=3)
    lr_max = 0.1 * 0.5 ** 2
    assert schedule(2) == pytest.approx(lr_max)
    assert schedule(3) == pytest.approx((lr_max + 0.005) / 2)
    assert schedule(4) == pytest.approx(0.005)
    assert schedule(5) == pytest.approx(lr_max)  # the next cycle starts again at the top
    assert IMAExplorationLR(0.1, 0.5, 0.97, 2, scheme="cyclic", period=1)(7) == pytest.approx(lr_max)


def test_epoch_decay_keeps_the_base_lr_and_drops_an_epoch_per_period():
    schedule = IMAExplorationLR(0.1, 0.99, 0.97, 4, scheme="epoch")
    assert schedule(30) == pytest.approx(0.1 * 0.99 ** 30)
    assert [ima_local_epochs(5, 4, 2, t) for t in range(3, 16)] == [5, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1]


def test_unknown_scheme_is_refused():
    with pytest.raises(ValueError, match="ima_exploration"):
        IMAExplorationLR(0.1, 0.99, 0.97, 4, scheme="linear")
    with pytest.raises(ConfigError, match="ima_exploration"):
        resolve_config(scale="smoke", method="fedavg+ima", ima_exploration="linear")


def test_the_option_enters_the_run_id_only_when_set():
    default = resolve_config(scale="smoke", method="fedavg+ima")
    same = resolve_config(scale="smoke", method="fedavg+ima", ima_exploration="exponential")
    other = resolve_config(scale="smoke", method="fedavg+ima", ima_exploration="cyclic")
    assert default.run_id() == same.run_id() != other.run_id()
    assert "ima_exploration" not in default.canonical()
    # a method without IMA ignores the field
    assert (resolve_config(scale="smoke", method="fedavg", ima_exploration="cyclic").run_id()
            == resolve_config(scale="smoke", method="fedavg").run_id())


def test_the_engine_plans_fewer_epochs_under_epoch_decay():
    cfg = resolve_config(scale="smoke", method="fedavg+ima", local_epochs=3, rounds=4, ima_start=1,
                         ima_exploration="epoch", ima_exploration_period=1)
    assert [local_epochs_at(cfg, t) for t in range(4)] == [3, 3, 2, 1]
    sim = Simulation(cfg, build_federated_data(cfg, torch.device("cpu")), torch.device("cpu"), None)
    steps = [len(sim.plan_round(t)[1][0].batches) for t in range(4)]
    per_epoch = steps[0] // 3
    assert steps == [3 * per_epoch, 3 * per_epoch, 2 * per_epoch, per_epoch]
    plain = resolve_config(scale="smoke", method="fedavg+ima", local_epochs=3, rounds=4, ima_start=1)
    assert [local_epochs_at(plain, t) for t in range(4)] == [3, 3, 3, 3]
    assert math.isclose(sim.client_lr(3), cfg.lr * cfg.ima_gamma ** 3)
