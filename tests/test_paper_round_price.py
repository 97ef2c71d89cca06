"""The CPU price of a paper-protocol round (FedIMA's Fashion-MNIST runs): the steps a round
takes from the data set's size, its evaluations charged as forward passes, and a measured
row of its own model used in place of the CIFAR CNN's scaled by floating-point operations."""
from __future__ import annotations

import pytest

from flcore.config import resolve_config
from flcore.planning.planner import run_cost
from flcore.reproduction.artifacts import runs_for
from flcore.reproduction.budget import device_rates
from flcore.reproduction.pricing import cost_rate, evaluation_cost


def _fmnist(method: str = "fedavg", **extra):
    spec = next(s for s in runs_for(["fedima-table-1"], "paper", [0])
                if s.resolve().dataset == "fmnist" and s.resolve().method == method)
    return spec.resolve(max_rounds=1, **extra)


def test_a_round_trains_the_steps_of_the_data_sets_60000_images():
    cfg = _fmnist()
    # 60,000 / 100 clients = 600 images, batch 50: 12 steps an epoch, 5 epochs, 10 clients
    assert (cfg.clients, cfg.per_round, cfg.local_epochs, cfg.batch_size) == (100, 10, 5, 50)
    assert run_cost(cfg) == 10 * 5 * 12
    assert run_cost(_fmnist("fedasam")) == 2 * 10 * 5 * 12  # two gradients a step
    # a federation given its images per client takes those
    assert run_cost(_fmnist(samples_per_client=100)) == 10 * 5 * 2


def test_fedimas_protocol_evaluates_the_test_set_every_round_and_not_the_clients():
    cfg = _fmnist()
    assert cfg.eval_every == 1 and not cfg.client_accuracy
    # 10,000 test images, a forward pass a third of a batch-50 step's work
    assert evaluation_cost(cfg) == pytest.approx(10_000 / (3 * 50))
    with_clients = _fmnist(client_accuracy=True)
    assert evaluation_cost(with_clients) == pytest.approx((10_000 + 60_000) / (3 * 50))
    # generated data sets are priced by the probe or their rows
    assert evaluation_cost(resolve_config({"scale": "small", "method": "fedavg"})) == 0.0


def test_a_paper_round_row_prices_its_model_in_place_of_the_flops_scaling():
    cnn_row = {"method": "fedavg", "device": "cpu", "machine": "CPU, 2 cores", "engine": "sequential",
               "engine_requested": "auto", "flcore_protocol_s": 400.0, "protocol_rounds": 10_000,
               "clients_per_round": 5, "samples_per_client": 500, "threads": 2, "date": "2026-11-21"}
    paper_row = {"engine": "one-at-a-time", "device": "cpu", "workers": 1, "seconds": 54.0, "cost": 3_600.0,
                 "model": "fmnist_cnn", "machine": "CPU, 2 cores", "date": "2026-12-07"}
    cfg = _fmnist()
    without = device_rates({"round_time": [cnn_row]})["CPU, 2 cores"]
    rate, guessed = cost_rate(without, cfg, 1)
    assert guessed
    rates = device_rates({"round_time": [cnn_row], "paper_round_time": [paper_row]})["CPU, 2 cores"]
    rate, guessed = cost_rate(rates, cfg, 1)
    assert not guessed and rate == pytest.approx(54.0 / 3_600.0)
    assert any(s.startswith("paper_round_time.jsonl") for s in rates.sources)
