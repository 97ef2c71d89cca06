"""Local steps and server optimizers against hand computations on a quadratic.

The loss is f(w) = 1/2 (w - c)^T A (w - c) for every minibatch, so its gradient is
A (w - c) and every update can be written out with numpy in the test itself.
"""
import numpy as np
import pytest
import torch

from flcore.algorithms import (
    ASAMPerturbation,
    Batch,
    LocalUpdate,
    NoPerturbation,
    RoundContext,
    SAMPerturbation,
    ServerAdaptive,
    ServerSGD,
    aggregate,
)

A = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.0], [0.0, 0.0, 1.0]])
C = np.array([1.0, -2.0, 0.5])


def quadratic_grad_fn(W, batch):
    At = torch.tensor(A, dtype=W.dtype)
    Ct = torch.tensor(C, dtype=W.dtype)
    diff = W - Ct
    loss = 0.5 * torch.einsum("kp,pq,kq->k", diff, At, diff)
    return loss, diff @ At.T


def _ctx(W, lr):
    return RoundContext(round=0, lr=lr, start=W.clone(), client_ids=torch.arange(W.shape[0]),
                        grad_fn=quadratic_grad_fn)


def _batch(K, active=None):
    act = torch.ones(K, dtype=torch.bool) if active is None else torch.tensor(active)
    return Batch(x=torch.zeros(K, 1), y=torch.zeros(K, 1, dtype=torch.long), weight=torch.ones(K, 1), active=act)


def _run_steps(update, W0, lr, steps, active=None):
    W = torch.tensor(W0, dtype=torch.float64)
    ctx = _ctx(W, lr)
    scratch = update.begin(ctx)
    for _ in range(steps):
        W = update.step(W, _batch(W.shape[0], active), ctx, scratch)
    return W.numpy()


def test_sgd_step_with_weight_decay_and_momentum_matches_hand_computation():
    w0 = np.array([[0.3, 0.1, -0.4]])
    lr, wd, mu = 0.1, 0.01, 0.9
    # b1 = g(w0) + wd w0; w1 = w0 - lr b1; b2 = mu b1 + g(w1) + wd w1; w2 = w1 - lr b2
    b1 = A @ (w0[0] - C) + wd * w0[0]
    w1 = w0[0] - lr * b1
    b2 = mu * b1 + A @ (w1 - C) + wd * w1
    w2 = w1 - lr * b2
    got = _run_steps(LocalUpdate(NoPerturbation(), momentum=mu, weight_decay=wd), w0, lr, 2)
    np.testing.assert_allclose(got[0], w2, rtol=1e-12)


def test_sam_step_matches_hand_computation():
    w0 = np.array([[0.3, 0.1, -0.4], [2.0, 0.0, 1.0]])
    lr, rho, wd = 0.05, 0.1, 4e-4
    expected = []
    for w in w0:
        g = A @ (w - C)
        eps = rho * g / (np.linalg.norm(g) + 1e-16)
        g_sam = A @ (w + eps - C)
        expected.append(w - lr * (g_sam + wd * w))  # weight decay at the unperturbed w (R4)
    got = _run_steps(LocalUpdate(SAMPerturbation(rho), weight_decay=wd), w0, lr, 1)
    np.testing.assert_allclose(got, np.array(expected), rtol=1e-12)


def test_asam_scales_weights_only():
    w0 = np.array([[0.3, -0.1, -0.4]])
    mask = torch.tensor([True, True, False])  # the last coordinate is a bias
    lr, rho, eta = 0.05, 0.5, 0.2
    w = w0[0]
    g = A @ (w - C)
    T = np.where(mask.numpy(), np.abs(w) + eta, 1.0)
    eps = rho * T * T * g / (np.linalg.norm(T * g) + 1e-16)
    expected = w - lr * (A @ (w + eps - C))
    got = _run_steps(LocalUpdate(ASAMPerturbation(rho, eta, mask)), w0, lr, 1)
    np.testing.assert_allclose(got[0], expected, rtol=1e-12)


def test_sam_with_rho_zero_is_sgd_exactly():
    w0 = np.array([[0.3, 0.1, -0.4]])
    sgd = _run_steps(LocalUpdate(NoPerturbation(), weight_decay=1e-3), w0, 0.1, 5)
    sam = _run_steps(LocalUpdate(SAMPerturbation(0.0), weight_decay=1e-3), w0, 0.1, 5)
    np.testing.assert_array_equal(sgd, sam)


def test_inactive_client_is_left_unchanged():
    w0 = np.array([[0.3, 0.1, -0.4], [1.0, 1.0, 1.0]])
    got = _run_steps(LocalUpdate(SAMPerturbation(0.1), momentum=0.5), w0, 0.1, 3, active=[True, False])
    np.testing.assert_array_equal(got[1], w0[1])
    assert not np.allclose(got[0], w0[0])


def test_aggregate_weights_by_sample_count():
    models = torch.tensor([[1.0, 0.0], [5.0, 4.0]])
    got = aggregate(models, torch.tensor([1, 3]))
    np.testing.assert_allclose(got.numpy(), [(1 + 15) / 4, 12 / 4])


def test_server_sgd_lr_one_is_the_average():
    w = torch.tensor([1.0, 2.0])
    avg = torch.tensor([0.5, 3.0])
    new, _ = ServerSGD(lr=1.0).update(w, w - avg, ServerSGD(lr=1.0).init(w))
    torch.testing.assert_close(new, avg, rtol=0, atol=0)


def test_server_momentum_two_rounds():
    opt = ServerSGD(lr=0.5, momentum=0.9)
    w = torch.tensor([1.0, -1.0], dtype=torch.float64)
    d1 = torch.tensor([0.2, 0.4], dtype=torch.float64)
    d2 = torch.tensor([-0.1, 0.3], dtype=torch.float64)
    state = opt.init(w)
    w1, state = opt.update(w, d1, state)
    w2, state = opt.update(w1, d2, state)
    v2 = 0.9 * d1.numpy() + d2.numpy()
    np.testing.assert_allclose(w2.numpy(), w.numpy() - 0.5 * d1.numpy() - 0.5 * v2)


@pytest.mark.parametrize("kind", ["adam", "adagrad", "yogi"])
@pytest.mark.parametrize("bias_correction", [False, True])
def test_adaptive_server_two_rounds(kind, bias_correction):
    lr, b1, b2, tau = 0.1, 0.9, 0.99, 1e-3
    opt = ServerAdaptive(kind, lr, b1, b2, tau, bias_correction)
    w = torch.tensor([1.0, -1.0, 0.0], dtype=torch.float64)
    deltas = [torch.tensor([0.2, -0.4, 0.1], dtype=torch.float64),
              torch.tensor([-0.1, -0.3, 0.2], dtype=torch.float64)]
    state = opt.init(w)
    got = w
    for d in deltas:
        got, state = opt.update(got, d, state)
    m = np.zeros(3)
    v = np.zeros(3)
    x = w.numpy().copy()
    for t, d in enumerate(deltas, start=1):
        g = -d.numpy()
        m = b1 * m + (1 - b1) * g
        if kind == "adam":
            v = b2 * v + (1 - b2) * g * g
        elif kind == "adagrad":
            v = v + g * g
        else:
            v = v - (1 - b2) * g * g * np.sign(v - g * g)
        mh, vh = m, v
        if bias_correction:
            mh = m / (1 - b1 ** t)
            if kind != "adagrad":
                vh = v / (1 - b2 ** t)
        x = x + lr * mh / (np.sqrt(vh) + tau)
    np.testing.assert_allclose(got.numpy(), x, rtol=1e-12)
