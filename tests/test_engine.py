"""The round loop end to end on small MNIST-1D federations."""
import numpy as np
import pytest
import torch
from torch import nn

from flcore import resolve_config, run_experiment
from flcore.algorithms import LocalUpdate, NoPerturbation, aggregate
from flcore.flat import FlatModel
from flcore.sim import FederatedData, Simulation, build_federated_data, plan_client_round
from flcore.sim.local_training import train_chunk


def _simulate(store=None, **overrides):
    cfg = resolve_config(scale="smoke", **overrides)
    data = build_federated_data(cfg, torch.device("cpu"))
    sim = Simulation(cfg, data, torch.device("cpu"), None)
    summary = sim.run_rounds()
    return sim, summary


def _final_model(**overrides):
    sim, _ = _simulate(**overrides)
    return sim.w


@pytest.mark.parametrize("method,extra", [("fedsam", {"rho": 0.0}), ("fedasam", {"rho": 0.0}),
                                          ("fedopt", {"server_lr": 1.0, "server_momentum": 0.0}),
                                          ("fedavgm", {"server_momentum": 0.0, "server_lr": 1.0})])
def test_reductions_to_fedavg_are_exact(method, extra):
    """FedSAM(rho=0) = FedASAM(rho=0) = server SGD(lr=1) = FedAvgM(beta=0) = FedAvg."""
    base = _final_model(method="fedavg", rounds=3)
    other = _final_model(method=method, rounds=3, **extra)
    torch.testing.assert_close(other, base, rtol=0, atol=0)


def test_fedsam_differs_from_fedavg_when_rho_positive():
    assert not torch.equal(_final_model(method="fedavg", rounds=2), _final_model(method="fedsam", rounds=2, rho=0.1))


@pytest.mark.parametrize("engine", ["batched", "rows"])
@pytest.mark.parametrize("method,extra", [("fedavg", {"momentum": 0.9}), ("fedsam", {"rho": 0.1}),
                                          ("fedasam", {"rho": 0.5, "eta": 0.2})])
def test_batched_equals_sequential(method, extra, engine):
    """Clients of unequal sizes (Dirichlet alpha=0.5 with unequal class counts are not
    needed: shards of unequal size come from samples_per_client=None on 10 clients of
    MNIST-1D) trained one by one and batched give the same model."""
    seq = _final_model(method=method, engine="sequential", rounds=3, alpha=0.5, **extra)
    bat = _final_model(method=method, engine=engine, rounds=3, alpha=0.5, **extra)
    torch.testing.assert_close(bat, seq, rtol=1e-4, atol=1e-5)


def _one_at_a_time(update, data, w, plans, lr, flat) -> dict:
    """Round 0's uploads of the clients of ``plans``, each trained alone (a chunk of one)."""
    outs = [train_chunk(update, data, w, [plan], 0, lr, flat.grad_fn(batched=False)) for plan in plans]
    return {key: torch.cat([o[key] for o in outs]) for key in ("model", "train_loss")}


def test_batched_handles_unequal_step_counts():
    data = FederatedData(
        train_x=torch.randn(30, 40), train_y=torch.randint(0, 10, (30,)),
        test_x=torch.randn(8, 40), test_y=torch.randint(0, 10, (8,)),
        client_indices=[torch.arange(0, 5), torch.arange(5, 30)], num_classes=10,
        augment=False, mean=None, std=None)
    flat = FlatModel(nn.Sequential(nn.Linear(40, 10)))
    w = flat.flatten()
    plans = [plan_client_round(0, 0, k, data.client_indices[k], 4, 1, None, False) for k in range(2)]
    assert [p.num_steps for p in plans] == [2, 7]
    update = LocalUpdate(NoPerturbation(), momentum=0.5)
    seq = _one_at_a_time(update, data, w, plans, 0.1, flat)
    bat = train_chunk(update, data, w, plans, 0, 0.1, flat.grad_fn(batched=True))
    torch.testing.assert_close(bat["model"], seq["model"], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(bat["train_loss"], seq["train_loss"], rtol=1e-5, atol=1e-6)


def test_two_client_round_matches_hand_computation():
    """One full-batch SGD step per client on a linear softmax model, then the
    sample-weighted average, all written out in numpy."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 3)).astype(np.float64)
    y = np.array([0, 1, 1, 0, 1])
    clients = [np.array([0, 1]), np.array([2, 3, 4])]
    model = nn.Linear(3, 2).double()
    flat = FlatModel(model)
    w = flat.flatten()
    data = FederatedData(
        train_x=torch.tensor(x), train_y=torch.tensor(y), test_x=torch.tensor(x), test_y=torch.tensor(y),
        client_indices=[torch.tensor(c) for c in clients], num_classes=2, augment=False, mean=None, std=None)
    lr = 0.5
    plans = [plan_client_round(0, 0, k, data.client_indices[k], 10, 1, None, False) for k in range(2)]
    uploads = _one_at_a_time(LocalUpdate(NoPerturbation()), data, w, plans, lr, flat)
    got = aggregate(uploads["model"], torch.tensor([2, 3]))

    W = model.weight.detach().numpy().copy()
    b = model.bias.detach().numpy().copy()
    new = []
    for c in clients:
        xc, yc = x[c], y[c]
        logits = xc @ W.T + b
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        err = (p - np.eye(2)[yc]) / len(c)  # d mean-CE / d logits
        new.append(np.concatenate([(W - lr * err.T @ xc).ravel(), b - lr * err.sum(0)]))
    expected = (2 * new[0] + 3 * new[1]) / 5
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10)


def test_same_seed_same_run_and_different_seed_differs():
    a = _final_model(method="fedsam", rounds=2, seed=3)
    b = _final_model(method="fedsam", rounds=2, seed=3)
    c = _final_model(method="fedsam", rounds=2, seed=4)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_evaluation_schedule_and_summary(tmp_path):
    summary = run_experiment(resolve_config(scale="smoke", rounds=10, eval_every=4, eval_last=3), store=tmp_path)
    from flcore.store import RunStore

    rows = RunStore(tmp_path).run(summary["run_id"]).read_metrics()
    assert [r["round"] for r in rows] == [4, 8, 9, 10]
    accs = [r["test_accuracy"] for r in rows]
    assert summary["status"] == "finished" and summary["rounds_done"] == 10
    assert summary["final_accuracy"] == accs[-1]
    assert summary["best_accuracy"] == max(accs)
    assert summary["mean_last_100"] == pytest.approx(sum(accs) / len(accs))  # fewer than 100 rounds: all


def test_finished_run_is_returned_from_the_store(tmp_path):
    cfg = resolve_config(scale="smoke", rounds=3)
    first = run_experiment(cfg, store=tmp_path)
    again = run_experiment(cfg.replace(device="cpu", engine="batched"), store=tmp_path)
    assert again["run_id"] == first["run_id"]
    assert again["mean_last_100"] == first["mean_last_100"]
    assert "wall_time_s" not in again or again["wall_time_s"] == first.get("wall_time_s")


def test_divergence_is_recorded_not_raised(tmp_path):
    summary = run_experiment(resolve_config(scale="smoke", rounds=20, lr=1e12), store=tmp_path)
    assert summary["status"] == "diverged"
    assert 1 <= summary["diverged_round"] <= 20
    assert summary["rounds_done"] == summary["diverged_round"]
    from flcore.store import RunStore

    status = RunStore(tmp_path).run(summary["run_id"]).status()
    assert status["status"] == "diverged"
    # asking again returns the stored record instead of recomputing
    assert run_experiment(resolve_config(scale="smoke", rounds=20, lr=1e12), store=tmp_path)["status"] == "diverged"


def test_fedsam_small_scale_learns_with_one_class_per_client():
    """FedSAM on MNIST-1D, alpha = 0 (one class per client), 100 clients, 5 per round:
    the small-scale protocol, shortened to 150 rounds.  Chance is 0.10."""
    summary = run_experiment(resolve_config(method="fedsam", alpha=0, rounds=150), store=None)
    assert summary["status"] == "finished"
    assert summary["mean_last_100"] > 0.18
    assert summary["best_accuracy"] > 0.3


def test_looped_and_vmapped_gradients_agree_for_several_clients():
    from flcore.algorithms import Batch
    from flcore.models import build_model

    torch.manual_seed(0)
    flat = FlatModel(build_model("mnist1d_cnn", (40,), 10))
    W = flat.flatten()[None].repeat(3, 1) + 0.01 * torch.randn(3, flat.num_params)
    batch = Batch(x=torch.randn(3, 7, 40), y=torch.randint(0, 10, (3, 7)),
                  weight=torch.tensor([[1.0] * 7, [1.0] * 5 + [0.0] * 2, [0.0] * 7]),
                  active=torch.tensor([True, True, False]))
    l_seq, g_seq = flat.grad_fn(batched=False)(W, batch)
    l_bat, g_bat = flat.grad_fn(batched=True)(W, batch)
    torch.testing.assert_close(g_seq, g_bat, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(l_seq, l_bat, rtol=1e-6, atol=1e-7)
    assert not torch.equal(g_seq[0], g_seq[1])
    assert torch.count_nonzero(g_seq[2]) == 0  # an all-padding batch has zero gradient


def test_client_accuracy_is_not_recorded_when_the_config_says_so_and_training_is_unchanged():
    cfg = resolve_config(scale="smoke", rounds=4, eval_every=2, eval_last=0)
    off = cfg.replace(client_accuracy=False)
    assert off.run_id() == cfg.run_id()  # a record, not a change of training
    sims = []
    for c in (cfg, off):
        sim = Simulation(c, build_federated_data(c, torch.device("cpu")), torch.device("cpu"), None)
        sim.run_rounds()
        sims.append(sim)
    assert [m["round"] for m in sims[0].metrics if "client_accuracy" in m] == [2, 4]
    assert not any("client_accuracy" in m for m in sims[1].metrics)
    assert [m["test_accuracy"] for m in sims[1].metrics] == [m["test_accuracy"] for m in sims[0].metrics]
    assert torch.equal(sims[0].w, sims[1].w)


def test_the_small_scale_records_client_accuracy_only_for_fedsam_fig_3():
    from flcore.papers.fedsam import runs as fedsam

    assert not resolve_config(scale="small", dataset="mnist1d").client_accuracy
    assert resolve_config(scale="smoke").client_accuracy and resolve_config(scale="paper").client_accuracy
    assert all(s.resolve().client_accuracy for s in fedsam.fig3_runs("small", [0, 1]))


def test_client_accuracy_is_recorded_and_matches_a_direct_evaluation(tmp_path):
    cfg = resolve_config(scale="smoke", rounds=4, eval_every=2, eval_last=0)
    data = build_federated_data(cfg, torch.device("cpu"))
    sim = Simulation(cfg, data, torch.device("cpu"), None)
    sim.run_rounds()
    rows = [m for m in sim.metrics if "client_accuracy" in m]
    assert [m["round"] for m in rows] == [2, 4]
    last = rows[-1]["client_accuracy"]
    assert len(last) == cfg.clients
    for k in (0, cfg.clients - 1):
        idx = data.client_indices[k]
        logits = sim.flat.forward(sim.w, data.train_x[idx])
        expected = (logits.argmax(1) == data.train_y[idx]).double().mean().item()
        assert last[k] == pytest.approx(expected)


def test_probe_callbacks_are_recorded_every_k_rounds():
    from flcore.analysis import ProbeCallback, parameter_norm_probe
    from flcore.analysis.probes import Probe

    seen = []
    cosine = Probe("cos_prev", lambda s: float(torch.nn.functional.cosine_similarity(
        s["pseudo_grad"], s["prev_pseudo_grad"], dim=0)), ("pseudo_grad", "prev_pseudo_grad"))
    record = Probe("rounds", lambda s: seen.append(s["round"]) or s["round"], ("round",))
    cfg = resolve_config(scale="smoke", rounds=6, eval_every=3, eval_last=0)
    sim = Simulation(cfg, build_federated_data(cfg, torch.device("cpu")), torch.device("cpu"), None,
                     callbacks=(ProbeCallback([parameter_norm_probe(), record], every=2),
                                ProbeCallback([cosine], every=3)))
    sim.run_rounds()
    assert seen == [2, 4, 6]
    by_round = {m["round"]: m for m in sim.metrics}
    assert sorted(by_round) == [2, 3, 4, 6]
    assert by_round[6]["param_norm"] == pytest.approx(float(sim.w.norm()), rel=1e-6)
    assert "test_accuracy" in by_round[3] and "cos_prev" in by_round[3] and "param_norm" not in by_round[3]
    assert -1.0 <= by_round[6]["cos_prev"] <= 1.0


def test_auto_engine_takes_the_row_kernel_on_a_cpu_and_loops_the_image_models():
    """``engine: auto`` on a CPU: the row kernel for the MNIST-1D networks, a loop for the
    others; accelerators always batch; an explicit engine is kept."""
    from flcore.sim.engine import resolve_engine
    from flcore.sim.row_engine import ROW_KERNEL_MODELS

    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert ROW_KERNEL_MODELS == {"mnist1d_cnn", "mnist1d_mlp"}
    assert resolve_engine("auto", cpu, "mnist1d_cnn") == "rows"
    for model in ("cnn", "resnet18gn", "fmnist_cnn", None):
        assert resolve_engine("auto", cpu, model) == "sequential", model
        assert resolve_engine("auto", cuda, model) == "batched", model
    assert resolve_engine("sequential", cpu, "mnist1d_cnn") == "sequential"
    sim, _ = _simulate(rounds=1)
    assert sim.engine == "rows"
    assert _simulate(rounds=1, model="mnist1d_mlp")[0].engine == "rows"
    assert _simulate(rounds=1, engine="batched")[0].engine == "batched"


def test_a_group_of_image_model_runs_on_a_cpu_loops_over_its_rows(tmp_path):
    """A multi-run group of the paper's CNN on a CPU takes its gradients in a loop over the
    runs' clients (vmap's 2-D convolutions are ten times slower there), and each run ends
    where it ends alone."""
    from flcore.data import write_fake_cifar
    from flcore.data.cifar import expected_checksums
    from flcore.sim.round_driver import RoundDriver

    md5s = write_fake_cifar(tmp_path, "cifar10", num_train=40, num_test=10)
    base = dict(scale="smoke", dataset="cifar10", data_root=str(tmp_path), rounds=2, clients=4, per_round=2,
                samples_per_client=10, batch_size=5, eval_every=1, eval_last=1)
    cfgs = [resolve_config(method="fedsam", seed=seed, **base) for seed in (0, 1)]
    with expected_checksums("cifar10", md5s):
        sims = [Simulation(cfg, build_federated_data(cfg, torch.device("cpu")), torch.device("cpu"), None)
                for cfg in cfgs]
        group = RoundDriver(sims)
        assert {s.engine for s in sims} == {"sequential"} and group.grad_fn.__name__ == "looped_grad"
        group.run_rounds()
        alone = _simulate(method="fedsam", seed=1, **{k: v for k, v in base.items() if k != "scale"})[0]
    torch.testing.assert_close(sims[1].w, alone.w, rtol=1e-5, atol=1e-6)
