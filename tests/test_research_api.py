"""The round-level research API: Simulation.from_config / step / state_dict, your own
data (FederatedData.from_tensors, with its input checks) and model, and the state names
each method lists."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from flcore import FederatedData, RoundResult, Simulation
from flcore.algorithms import METHODS, aggregate
from flcore.config.method_catalog import client_state_of, describe_methods, server_state_of
from flcore.data import partition


def tensors(n=40, test=12, dim=3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, dim, generator=gen, dtype=torch.float64)
    tx = torch.randn(test, dim, generator=gen, dtype=torch.float64)
    return x, (x[:, 0] > 0).long(), tx, (tx[:, 0] > 0).long()


def linear_model(dim=3, seed=1):
    torch.manual_seed(seed)
    return nn.Linear(dim, 2).double()


def simulation(method="fedavg", clients=4, model=None, **config):
    data = FederatedData.from_tensors(*tensors(), partition="iid", num_clients=clients)
    base = {"method": method, "per_round": 2, "rounds": 5, "batch_size": 5, "local_steps": 2, "lr": 0.1,
            "device": "cpu", "engine": "sequential"}
    return Simulation.from_config({**base, **config}, data=data, model=model or linear_model())


def test_step_returns_the_round_and_the_fedavg_average():
    model = linear_model()
    sim = simulation(model=model)
    first = sim.step()
    assert isinstance(first, RoundResult) and first.round == 0 and sim.rounds_done == 1
    w0 = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    assert torch.equal(first.start, w0)  # the user's module is w^0
    assert first.uploads["model"].shape == (2, w0.numel()) and first.train_loss.shape == (2,)
    sizes = torch.tensor([10.0, 10.0], dtype=torch.float64)
    torch.testing.assert_close(first.global_model, aggregate(first.client_models, sizes), rtol=0, atol=1e-15)
    assert [len(b) for b in first.batches] == [2, 2]
    second = sim.step()
    assert second.round == 1 and torch.equal(second.start, first.global_model)


def test_a_client_upload_is_two_hand_sgd_steps_on_its_batches():
    sim = simulation(lr=0.3)
    result = sim.step()
    x, y = sim.data.train_x, sim.data.train_y
    w = result.start.clone().requires_grad_(True)
    for idx in result.batches[0]:
        logits = x[idx] @ w[:6].view(2, 3).T + w[6:]
        (g,) = torch.autograd.grad(nn.functional.cross_entropy(logits, y[idx]), w)
        w = (w - 0.3 * g).detach().requires_grad_(True)
    torch.testing.assert_close(result.client_models[0], w.detach(), rtol=0, atol=1e-14)


def test_state_dict_resumes_exactly():
    straight = simulation(method="fedgloss-sam")
    for _ in range(3):
        last = straight.step()
    first = simulation(method="fedgloss-sam")
    first.step()
    resumed = simulation(method="fedgloss-sam")
    resumed.load_state_dict(first.state_dict())
    first.step()  # the saved state is a copy: the source going on changes nothing of it
    resumed.step()
    again = resumed.step()
    assert again.round == 2
    assert torch.equal(again.global_model, last.global_model)
    for name, value in last.server_state.items():
        assert torch.equal(again.server_state[name], value), name
    assert torch.equal(again.client_state["dyn_dual"], last.client_state["dyn_dual"])


def test_load_state_dict_rejects_another_model():
    sim = simulation()
    other = simulation(model=nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double())
    with pytest.raises(ValueError, match="shape"):
        sim.load_state_dict(other.state_dict())


def test_round_result_names_the_state_the_method_lists():
    for name in ("fedgf", "fedsmoo", "fedlesam-d", "scaffold"):
        result = simulation(method=name).step()
        assert {row["name"] for row in server_state_of(name)} == set(result.server_state), name
        assert {row["name"] for row in client_state_of(name)} == set(result.client_state), name
    row = {r["name"]: r for r in server_state_of("fedgf")}
    assert row["fedgf.c"]["shape"] == "[]" and "Eq. 16" in row["fedgf.c"]["meaning"]


def test_every_method_lists_its_state_in_the_catalog():
    rows = {row["name"]: row for row in describe_methods(scale="smoke")}
    assert set(rows) == set(METHODS)
    for row in rows.values():
        for item in row["client_state"] + row["server_state"]:
            assert item["shape"].startswith("[") and item["meaning"], (row["name"], item)
    assert {"name": "dyn_dual", "shape": "[N, P]", "init": "zeros"}.items() <= rows["feddyn"]["client_state"][0].items()
    assert [r["name"] for r in rows["fedsmoo"]["client_state"]] == ["smoo_mu", "dyn_dual"]


def test_from_config_takes_clients_from_the_data():
    data = FederatedData.from_tensors(*tensors(), partition="iid", num_clients=4)
    with pytest.raises(ValueError, match="clients.: got 5 but data has 4 clients"):
        Simulation.from_config({"clients": 5, "per_round": 2, "device": "cpu"}, data=data, model=linear_model())
    assert simulation(clients=3).cfg.clients == 3


def test_explicit_client_index_lists():
    x, y, tx, ty = tensors()
    data = FederatedData.from_tensors(x, y, tx, ty, partition=[[0, 1, 2], torch.arange(3, 10), [39]])
    assert data.client_sizes == [3, 7, 1] and data.num_classes == 2


def test_partitions_by_name():
    x, y, tx, ty = tensors(n=60)
    shards = FederatedData.from_tensors(x, y, tx, ty, partition="shards", num_clients=4, classes_per_client=1,
                                        seed=3)
    expected = partition("shards", y.numpy(), 4, classes_per_client=1, seed=3, cache=False)
    assert [idx.tolist() for idx in shards.client_indices] == [p.tolist() for p in expected]
    dirichlet = FederatedData.from_tensors(x, y, tx, ty, partition="dirichlet", alpha=0.0, num_clients=2,
                                           samples_per_client=10)
    assert dirichlet.client_sizes == [10, 10]
    for idx in dirichlet.client_indices:  # alpha = 0: one class per client
        assert y[idx].unique().numel() == 1


@pytest.mark.parametrize("change, message", [
    ({"x": torch.ones(40, 3, dtype=torch.long)}, "^x: expected floating"),
    ({"test_x": torch.ones(12, 4, dtype=torch.float64)}, "^test_x: per-sample shape"),
    ({"y": torch.zeros(39, dtype=torch.long)}, "^y: has 39 labels but x has 40"),
    ({"y": torch.zeros(40)}, "^y: expected integer class labels"),
    ({"test_y": torch.full((12,), -1)}, "^test_y: labels must lie in 0..1"),
    ({"num_classes": 2, "y": torch.full((40,), 2)}, "^y: labels must lie in 0..1"),
    ({"partition": "pathological"}, "^partition: got 'pathological'"),
    ({"partition": "dirichlet", "num_clients": 4}, "^alpha: partition='dirichlet' needs alpha"),
    ({"partition": "iid", "num_clients": 4, "alpha": 0.5}, "^alpha: not a parameter of partition='iid'"),
    ({"partition": "iid", "num_clients": 0}, "^num_clients: expected an integer >= 1"),
    ({"partition": "iid", "num_clients": 4, "samples_per_client": 11}, "^samples_per_client: got 11"),
    ({"partition": "shards", "num_clients": 4}, "^classes_per_client: partition='shards' needs"),
    ({"partition": [[0, 1], [1, 2]], "num_clients": None}, "^partition: client 1 shares sample indices"),
    ({"partition": [[0, 40]], "num_clients": None}, r"^partition: client 0 has indices outside 0..39"),
    ({"partition": [[0], []], "num_clients": None}, "^partition: client 1 needs a non-empty"),
    ({"partition": [[0], [1]], "num_clients": 3}, "^num_clients: got 3 but partition lists 2 clients"),
    ({"mean": (0.0, 0.0, 0.0)}, "^mean/std: give both"),
    ({"mean": (0.0,), "std": (1.0,)}, "^mean: expected 3 values"),
])
def test_from_tensors_rejects_bad_input_naming_the_argument(change, message):
    x, y, tx, ty = tensors()
    args = {"x": x, "y": y, "test_x": tx, "test_y": ty, "partition": "iid", "num_clients": 4}
    args.update(change)
    with pytest.raises((TypeError, ValueError), match=message) as info:
        FederatedData.from_tensors(**args)
    assert "\n" not in str(info.value)


def test_a_module_with_buffers_is_refused():
    with pytest.raises(ValueError, match="buffers"):
        simulation(model=nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).double())


def test_a_model_of_another_dtype_than_the_data_is_refused():
    with pytest.raises(
        ValueError, match="^model: parameters are torch.float32 but the data's inputs are torch.float64"
    ):
        simulation(model=nn.Linear(3, 2))
