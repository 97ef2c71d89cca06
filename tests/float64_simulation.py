"""A smoke-scale simulation in float64, for the tests that the two engines agree.

In float32 a method with a large perturbation can land a ReLU input on the last bits that
the loop and ``vmap`` round differently, and one flipped unit then moves the weights by
far more than rounding: centralized ASAM at rho = 0.5, on one thread, differs by 2e-8
after one round and by 7e-5 after two.  In float64 the engines agree to 1e-10 for every
method (measured for the 69 of the five papers), so these tests compare there, at a tolerance four orders
tighter than float32's allowed.
"""
from __future__ import annotations

import torch

from flcore import resolve_config
from flcore.models import build_model
from flcore.sim import Simulation, build_federated_data

CPU = torch.device("cpu")
#: What the engines may differ by in float64 (summation order only).
RTOL, ATOL = 1e-7, 1e-9


def simulation_in_float64(**overrides) -> tuple[Simulation, dict]:
    """``(simulation, summary)`` of the smoke-scale run ``overrides`` describe, trained in
    float64 from the model its seed initialises."""
    cfg = resolve_config(scale="smoke", **overrides)
    data = build_federated_data(cfg, CPU)
    data.train_x, data.test_x = data.train_x.double(), data.test_x.double()
    torch.manual_seed(cfg.seed)
    model = build_model(cfg.model, data.input_shape, data.num_classes).double()
    sim = Simulation(cfg, data, CPU, None, model=model)
    return sim, sim.run_rounds()
