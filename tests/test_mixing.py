"""Mixup and Cutout (FedSAM paper Tables 3, 4, 17) against hand computations."""
import torch
import torch.nn.functional as F

from flcore import resolve_config
from flcore.data.mixing import apply_cutout, draw_mixup, mix
from flcore.seeding import generator
from flcore.sim import Simulation, build_federated_data


def test_mix_is_the_convex_combination_and_soft_target():
    x = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    y = torch.tensor([0, 2, 1])
    lam = torch.tensor(0.25)
    perm = torch.tensor([2, 0, 1])
    xm, ym = mix(x, y, 3, lam, perm)
    torch.testing.assert_close(xm[0], 0.25 * x[0] + 0.75 * x[2])
    torch.testing.assert_close(ym[0], torch.tensor([0.25, 0.75, 0.0]))
    # CE against the soft target = lam CE(y) + (1 - lam) CE(y[perm])
    logits = torch.randn(3, 3)
    soft = F.cross_entropy(logits, ym, reduction="none")
    hard = 0.25 * F.cross_entropy(logits, y, reduction="none") + 0.75 * F.cross_entropy(
        logits, y[perm], reduction="none"
    )
    torch.testing.assert_close(soft, hard)


def test_mixup_draws_repeat_and_lie_in_unit_interval():
    a = draw_mixup(8, 1.0, generator(0, "mixup", 3, 1))
    b = draw_mixup(8, 1.0, generator(0, "mixup", 3, 1))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert 0.0 <= float(a[0]) <= 1.0 and sorted(a[1].tolist()) == list(range(8))


def test_cutout_square_clipped_at_the_border():
    x = torch.ones(2, 3, 6, 6)
    out = apply_cutout(x, torch.tensor([[0, 0], [3, 3]]), size=4)
    # centre (0, 0), size 4: rows/cols -2..1 clipped to 0..1
    assert out[0, :, :2, :2].abs().sum() == 0 and out[0].sum() == 3 * (36 - 4)
    # centre (3, 3): rows/cols 1..4
    assert out[1, :, 1:5, 1:5].abs().sum() == 0 and out[1].sum() == 3 * (36 - 16)


def test_cutout_window_on_sequences():
    out = apply_cutout(torch.ones(1, 10), torch.tensor([[5]]), size=3)
    assert out[0].tolist() == [1, 1, 1, 1, 0, 0, 0, 1, 1, 1]


def _final(**kw):
    cfg = resolve_config(scale="smoke", rounds=2, **kw)
    sim = Simulation(cfg, build_federated_data(cfg, torch.device("cpu")), torch.device("cpu"), None)
    sim.run_rounds()
    return sim.w


def test_mixup_and_cutout_change_training_and_batched_equals_sequential():
    base = _final()
    for opts in ({"mixup_alpha": 1.0}, {"cutout_size": 8}):
        seq = _final(engine="sequential", alpha=0.5, **opts)
        bat = _final(engine="batched", alpha=0.5, **opts)
        torch.testing.assert_close(bat, seq, rtol=1e-4, atol=1e-5)
        assert not torch.equal(_final(**opts), base)
