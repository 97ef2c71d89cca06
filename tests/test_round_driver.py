"""The round driver (flcore.sim.round_driver): a run alone is a group of one, whose
inputs pass through the run axis untouched; a chunk of a group's rows gathers its client
state from the runs it spans."""
from types import SimpleNamespace

import torch

from flcore import resolve_config
from flcore.sim import Simulation, build_federated_data
from flcore.sim.round_driver import RoundDriver, _state_rows
from flcore.sim.run_axis import merge_per_run

CPU = torch.device("cpu")


def test_one_runs_values_pass_the_run_axis_as_they_are():
    like = torch.zeros(5)
    start = torch.arange(5.0)
    assert merge_per_run([start], [3], like) is start
    assert merge_per_run([0.1], [3], like) == 0.1
    two = merge_per_run([start, start + 1], [2, 1], like)
    assert two.shape == (3, 5) and torch.equal(two[2], start + 1) and torch.equal(two[1], start)


def test_a_chunk_gathers_the_state_rows_of_the_runs_it_spans():
    a = SimpleNamespace(client_state={"c": torch.arange(10.0).reshape(5, 2)})
    b = SimpleNamespace(client_state={"c": 100 + torch.arange(10.0).reshape(5, 2)})
    ids = [torch.tensor([4, 0, 2]), torch.tensor([1, 3])]  # rows 0-2: run a, rows 3-4: run b
    rows = _state_rows([a, b], ids, 2, 4)["c"]  # a's client 2, then b's client 1
    torch.testing.assert_close(rows, torch.tensor([[4.0, 5.0], [102.0, 103.0]]))
    whole = _state_rows([a, b], ids, 0, 5)["c"]
    torch.testing.assert_close(whole[:3], a.client_state["c"][ids[0]])
    torch.testing.assert_close(whole[3:], b.client_state["c"][ids[1]])


def test_a_simulation_trains_through_its_driver_as_a_group_of_one():
    cfg = resolve_config(scale="smoke", method="scaffold", rounds=2, eval_every=1, eval_last=1)
    alone = Simulation(cfg, build_federated_data(cfg, CPU), CPU, None)
    assert alone.driver.sims == [alone] and alone.driver.alone
    summary = alone.run_rounds()
    again = Simulation(cfg, build_federated_data(cfg, CPU), CPU, None)
    group = RoundDriver([again]).run_rounds()[0]
    assert torch.equal(alone.w, again.w)
    assert summary["rounds_done"] == group["rounds_done"] == 2
    assert [r["test_accuracy"] for r in alone.metrics] == [r["test_accuracy"] for r in again.metrics]
