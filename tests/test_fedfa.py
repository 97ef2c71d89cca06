"""FedFA (feature anchors; docs/algorithms.md 3.10) against hand computations."""
import numpy as np
import torch
from torch import nn

from flcore import resolve_config
from flcore.algorithms import Batch, RoundContext
from flcore.algorithms.feature_anchors import (
    FeatureAnchorClient,
    FeatureAnchorServer,
    calibration_grad,
    initial_anchors,
)
from flcore.algorithms.local import LocalUpdate
from flcore.algorithms.perturbation import NoPerturbation
from flcore.algorithms.server import ServerRound
from flcore.flat import FlatModel, anchor_term
from flcore.sim import Simulation, build_federated_data


def _softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_anchor_term_matches_hand_computation():
    feats = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0], [3.0, 3.0]], dtype=torch.float64)
    y = torch.tensor([0, 1, 0, 2])
    weight = torch.tensor([1.0, 1.0, 1.0, 0.0], dtype=torch.float64)  # the last sample is padding
    anchors = torch.tensor([[1.0, 1.0], [0.0, 0.0], [5.0, 5.0]], dtype=torch.float64)
    # class 0: (||(0,-1)||^2 + ||(0,0)||^2) / 2 = 0.5; class 1: ||(0,2)||^2 / 1 = 4; class 2 absent
    expected = (0.5 + 4.0 + 0.0) / 3
    assert float(anchor_term(feats, y, weight, anchors)) == expected


def test_calibration_gradient_is_the_mean_cross_entropy_gradient():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 4))
    Wh = rng.normal(size=(2, 3, 4))
    b = rng.normal(size=(2, 3))
    gw, gb = calibration_grad(torch.tensor(Wh), torch.tensor(b), torch.tensor(A))
    for k in range(2):
        err = (_softmax(A @ Wh[k].T + b[k]) - np.eye(3)) / 3  # d mean-CE / d logits, labels 0..C-1
        np.testing.assert_allclose(gw[k].numpy(), err.T @ A, rtol=1e-12)
        np.testing.assert_allclose(gb[k].numpy(), err.sum(0), rtol=1e-12)


def test_initial_anchors_are_distinct_basis_vectors_or_unit_vectors():
    A = initial_anchors(10, 128, seed=0)
    assert torch.equal((A == 1).sum(1), torch.ones(10, dtype=torch.long))
    assert len(set(A.argmax(1).tolist())) == 10
    B = initial_anchors(5, 3, seed=0)
    torch.testing.assert_close(B.norm(dim=1), torch.ones(5))


def test_server_averages_anchors_per_class_over_the_clients_that_updated_it():
    server = FeatureAnchorServer(seed=0)
    state = server.init(None, 3)
    local = torch.tensor([[[1.0, 0.0], [2.0, 2.0]], [[3.0, 0.0], [9.0, 9.0]]])
    updated = torch.tensor([[True, True], [True, False]])
    counts = torch.tensor([1, 3])
    rnd = ServerRound(w=None, start=None, uploads={"fa_anchors": local, "fa_updated": updated}, counts=counts, round=0,
                      num_clients=3)
    server.after(rnd, torch.zeros(1), state)
    # class 0: (1*[1,0] + 3*[3,0]) / 4; class 1: only client 0 updated it
    torch.testing.assert_close(state["anchors"], torch.tensor([[2.5, 0.0], [2.0, 2.0]]))
    sent = {}
    server.broadcast(None, None, sent, state, 1)
    assert torch.equal(sent["fa_anchors"], state["anchors"])


class _Tiny(nn.Module):
    """phi(x) = F x (no bias), head: a linear layer; every flcore model has this shape."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(2, 2, bias=False)
        self.head = nn.Linear(2, 2)

    def features(self, x):
        return self.body(x)

    def forward(self, x):
        return self.head(self.features(x))


def _one_round(client, flat, w, anchors, round, lr, steps):
    x = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[2.0, 2.0], [1.0, 0.0]]], dtype=torch.float64)[None]  # 2 steps
    y = torch.tensor([[[0, 1], [0, 0]]])
    update = LocalUpdate(NoPerturbation(), corrections=(client,))
    ctx = RoundContext(round=round, lr=lr, start=w[None].clone(), client_ids=torch.tensor([0]),
                       grad_fn=flat.grad_fn(batched=False), broadcast={"fa_anchors": anchors},
                       global_model=w, num_steps=torch.tensor([steps]))
    scratch = update.begin(ctx)
    W = ctx.start
    for j in range(steps):
        batch = Batch(x=x[:, j], y=y[:, j], weight=torch.ones(1, 2, dtype=torch.float64),
                      active=torch.tensor([True]))
        W = update.step(W, batch, ctx, scratch)
    out = update.end(W, ctx, scratch)
    return W[0], out


def test_local_anchors_are_an_ema_of_the_epoch_mean_of_batch_class_means():
    torch.manual_seed(0)
    model = _Tiny().double()
    flat = FlatModel(model)
    w = flat.flatten()
    F_ = model.body.weight.detach().numpy()
    A = torch.tensor([[1.0, -1.0], [0.5, 0.5]], dtype=torch.float64)
    client = FeatureAnchorClient(flat, lam=0.1, momentum=0.5, epochs=1, calibrate_after=100)
    # lr = 0 keeps the features fixed, so the epoch mean can be written out
    _, out = _one_round(client, flat, w, A, round=1, lr=0.0, steps=2)
    f = lambda v: F_ @ np.array(v)  # noqa: E731
    mean0 = (f([1.0, 0.0]) + (f([2.0, 2.0]) + f([1.0, 0.0])) / 2) / 2  # class 0 in both batches
    mean1 = f([0.0, 1.0])  # class 1 in the first batch only
    expected = np.stack([0.5 * A[0].numpy() + 0.5 * mean0, 0.5 * A[1].numpy() + 0.5 * mean1])
    np.testing.assert_allclose(out["fa_anchors"][0].numpy(), expected, rtol=1e-12)
    assert out["fa_updated"].tolist() == [[True, True]]


def test_calibration_is_one_adam_step_per_local_step_on_the_head_only():
    torch.manual_seed(1)
    model = _Tiny().double()
    flat = FlatModel(model)
    w = flat.flatten()
    A = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    client = FeatureAnchorClient(flat, lam=0.0, momentum=0.5, epochs=1, calibrate_after=0)
    W, _ = _one_round(client, flat, w, A, round=1, lr=0.0, steps=1)  # SGD does nothing (lr = 0)
    Wh, b = model.head.weight.detach().numpy(), model.head.bias.detach().numpy()
    err = (_softmax(A.numpy() @ Wh.T + b) - np.eye(2)) / 2
    g = np.concatenate([(err.T @ A.numpy()).ravel(), err.sum(0)])
    step = 1e-3 * g / (np.abs(g) + 1e-8)  # Adam's first step: m_hat = g, v_hat = g^2
    w_slice, _, b_slice = flat.head
    np.testing.assert_allclose(W[w_slice].numpy(), w[w_slice].numpy() - step[:4], rtol=1e-10)
    np.testing.assert_allclose(W[b_slice].numpy(), w[b_slice].numpy() - step[4:], rtol=1e-10)
    body = slice(0, 4)
    assert torch.equal(W[body], w[body])


def _final(method, rounds):
    cfg = resolve_config(scale="smoke", method=method, rounds=rounds)
    sim = Simulation(cfg, build_federated_data(cfg, torch.device("cpu")), torch.device("cpu"), None)
    sim.run_rounds()
    return sim


def test_first_round_is_fedavg_and_anchors_then_exist():
    torch.testing.assert_close(_final("fedfa", 1).w, _final("fedavg", 1).w, rtol=0, atol=0)
    sim = _final("fedfa", 3)
    assert sim.server_state["fedfa"]["anchors"].shape == (10, 128)
    assert not torch.equal(sim.w, _final("fedavg", 3).w)
