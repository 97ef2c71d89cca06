"""The fast-path plumbing of the engine: the prepared training set, the per-chunk batch
tensors and the out-of-memory fallback of the batched engine."""
import pytest
import torch

import flcore.sim.round_driver as round_driver
from flcore import resolve_config
from flcore.data import apply_crop_flip, draw_crop_flip, normalize
from flcore.seeding import generator
from flcore.sim import FederatedData, Simulation, build_federated_data, plan_client_round
from flcore.sim.local_training import stack_plans

MEAN, STD = (0.49, 0.48, 0.45), (0.20, 0.199, 0.201)


def _images(n=12, augment=True):
    g = torch.Generator().manual_seed(0)
    x = torch.rand(n, 3, 32, 32, generator=g)
    return FederatedData(train_x=x, train_y=torch.randint(0, 10, (n,), generator=g),
                         test_x=x[:2], test_y=torch.zeros(2, dtype=torch.long),
                         client_indices=[torch.arange(n)], num_classes=10, augment=augment,
                         mean=MEAN, std=STD)


def test_prepared_inputs_equal_crop_then_normalise_bit_for_bit():
    data = _images()
    index = torch.tensor([[3, 0, 7, 7], [11, 2, 5, 1]])
    dy, dx, flip = (t.reshape(2, 4) for t in draw_crop_flip(8, generator(0, "augment", 0, 0)))
    got = data.train_inputs(index, (dy, dx, flip))
    flat = index.reshape(-1)
    expected = normalize(apply_crop_flip(data.train_x[flat], dy.reshape(-1), dx.reshape(-1), flip.reshape(-1)),
                         MEAN, STD).reshape(2, 4, 3, 32, 32)
    assert torch.equal(got, expected)
    assert got[0].is_contiguous(memory_format=torch.channels_last)


def test_prepared_inputs_without_crop_and_for_evaluation():
    data = _images()
    assert torch.equal(data.eval_train_inputs(), normalize(data.train_x, MEAN, STD))
    assert torch.equal(data.train_inputs(torch.tensor([4, 9]), None), normalize(data.train_x[[4, 9]], MEAN, STD))
    plain = _images(augment=False)
    assert torch.equal(plain.eval_train_inputs(), normalize(plain.train_x, MEAN, STD))


def test_chunk_batches_pad_each_step_to_its_own_widest_batch():
    """Clients of 5 and 25 samples, batch 4: steps of widths 4,4,4,4,4,4,1 (hand count);
    the 5-sample client has a 1-sample second step and is idle from step 3 on."""
    data = FederatedData(train_x=torch.randn(30, 40), train_y=torch.randint(0, 10, (30,)),
                         test_x=torch.randn(2, 40), test_y=torch.zeros(2, dtype=torch.long),
                         client_indices=[torch.arange(0, 5), torch.arange(5, 30)], num_classes=10,
                         augment=False, mean=None, std=None)
    plans = [plan_client_round(0, 0, k, data.client_indices[k], 4, 1, None, False) for k in range(2)]
    batches = stack_plans(plans, "cpu", torch.float32)
    assert batches.widths == [4, 4, 4, 4, 4, 4, 1]
    assert batches.active[:, 0].tolist() == [True, True] + [False] * 5
    assert batches.active[:, 1].all()
    assert batches.weight[1, 0].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert torch.equal(batches.index[1, 0, :1], plans[0].batches[1])
    assert torch.equal(batches.index[6, 1, :1], plans[1].batches[6])
    assert batches.crops is None


def _smoke_sim(engine, chunk_size=None):
    cfg = resolve_config(scale="smoke", method="fedsam", rounds=2, per_round=4, engine=engine)
    return Simulation(cfg, build_federated_data(cfg, torch.device("cpu")), torch.device("cpu"), None,
                      chunk_size=chunk_size)


def test_out_of_memory_halves_the_chunk_and_gives_the_same_model(monkeypatch, capsys):
    real = round_driver.train_chunk
    attempts = []

    def limited(update, data, start, draws, *args, **kwargs):
        attempts.append(len(draws))
        if len(draws) > 1:
            raise torch.cuda.OutOfMemoryError("pretend: more than one client does not fit")
        return real(update, data, start, draws, *args, **kwargs)

    expected = _smoke_sim("batched", chunk_size=1)
    expected.run_rounds()
    monkeypatch.setattr(round_driver, "train_chunk", limited)
    sim = _smoke_sim("batched")
    sim.run_rounds()
    assert sim.chunk_size == 1
    assert attempts[:3] == [4, 2, 1] and set(attempts[3:]) == {1}  # later rounds keep the chunk
    assert len(attempts) == 2 + 2 * 4  # the two failed tries, then 4 clients x 2 rounds one at a time
    assert torch.equal(sim.w, expected.w)
    assert "training 2 at a time" in capsys.readouterr().err


def test_out_of_memory_in_the_sequential_engine_is_raised(monkeypatch):
    def failing(*args, **kwargs):
        raise torch.cuda.OutOfMemoryError("pretend")

    monkeypatch.setattr(round_driver, "train_chunk", failing)
    sim = _smoke_sim("sequential")
    with pytest.raises(torch.cuda.OutOfMemoryError):
        sim.train_one_round(0)


@pytest.mark.parametrize("method", ["fedavg", "fedsam"])
def test_batched_equals_sequential_on_augmented_cifar_shaped_images(method):
    """The GPU's path (all clients in one vmap computation, crops gathered from the
    prepared set) on the paper's CNN with CIFAR-shaped data and unequal client sizes,
    against one client at a time."""
    from flcore.data import make_cifar_like
    from flcore.sim.federated_data import federated_data_from_split

    dataset = make_cifar_like(90, 20, 10, seed=0)
    parts = [range(0, 20), range(20, 45), range(45, 90)]  # 20, 25 and 45 samples: 2, 2 and 3 steps
    models = {}
    for engine in ("sequential", "batched"):
        cfg = resolve_config(scale="paper", dataset="cifar10", model="cnn", method=method, partition="iid",
                             clients=3, per_round=3, samples_per_client=20, batch_size=16, engine=engine,
                             device="cpu", seed=0)
        data = federated_data_from_split(dataset, [list(p) for p in parts], torch.device("cpu"))
        sim = Simulation(cfg, data, torch.device("cpu"), None)
        sim.train_one_round(0)
        sim.train_one_round(1)
        models[engine] = sim.w
    assert not torch.equal(models["sequential"], Simulation(cfg, data, torch.device("cpu"), None).w)
    torch.testing.assert_close(models["batched"], models["sequential"], rtol=1e-4, atol=1e-6)
