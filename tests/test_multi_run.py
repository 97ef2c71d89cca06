"""Runs as a batch dimension: a run trained in a group equals the same run alone (every
method family), keeps its own record and resumes from its own checkpoint."""
from __future__ import annotations

import json

import pytest
import torch

from flcore.config import resolve_config
from flcore.sim import Simulation, build_federated_data
from flcore.sim.multi_run import group_key, merge_per_run, run_batchable, run_group
from flcore.sim.round_driver import RoundDriver

CPU = torch.device("cpu")
BASE = dict(scale="smoke", rounds=3, clients=6, per_round=3, eval_every=2, eval_last=1, num_samples=400)

#: one method per family: plain/server optimizers, SAM/ASAM, corrections (prox, control
#: variates, dual terms, momentum), global perturbations (FedGloSS with and without the
#: probe exchange, FedGF, FedLESAM), FedSMOO/FedSpeed, FedNova/FedGMA, SWA/IMA averaging,
#: centralized training.
FAMILIES = ["fedavg", "fedadam", "fedsam", "fedasam", "fedprox", "scaffold+asam", "feddyn", "adabest", "mofedsam",
            "fedgamma", "fedsmoo", "fedspeed", "fednova", "fedgma", "fedgloss-sam", "naivefedgloss", "fedgf",
            "fedlesam-d", "fedsam+swa", "fedavg+ima", "centralized-sam"]


def _cfg(method, **values):
    extra = {"clients": 1, "per_round": 1} if method.startswith("centralized") else {}
    return resolve_config({**BASE, "method": method, **extra, **values})


def _alone(cfg):
    """The run by itself, with the batched engine (the same per-client arithmetic)."""
    cfg = cfg.replace(engine="batched")
    sim = Simulation(cfg, build_federated_data(cfg, CPU), CPU, None)
    sim.run_rounds()
    return sim


def _together(cfgs):
    sims = [Simulation(c, build_federated_data(c, CPU), CPU, None) for c in cfgs]
    RoundDriver(sims).run_rounds()
    return sims


def _assert_same_runs(alone, together):
    for a, g in zip(alone, together):
        assert torch.allclose(a.w, g.w, rtol=1e-5, atol=1e-5), float((a.w - g.w).abs().max())
        assert [m["round"] for m in a.metrics] == [m["round"] for m in g.metrics]
        for ma, mg in zip(a.metrics, g.metrics):
            assert mg["train_loss"] == pytest.approx(ma["train_loss"], rel=1e-4, abs=1e-6)
            assert mg.get("test_loss") == pytest.approx(ma.get("test_loss"), rel=1e-4, abs=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("method", FAMILIES)
def test_a_run_in_a_group_equals_the_run_alone(method):
    cfgs = [_cfg(method, seed=0, alpha=0.5), _cfg(method, seed=1, alpha=1000.0)]
    assert run_batchable(method) and group_key(cfgs[0]) == group_key(cfgs[1])
    _assert_same_runs([_alone(c) for c in cfgs], _together(cfgs))


@pytest.mark.parametrize("method,values", [
    ("fedsam", [{"rho": 0.01, "lr": 0.05}, {"rho": 0.2, "lr": 0.1}, {"rho": 0.0, "lr": 0.1}]),
    ("fedasam", [{"rho": 0.1, "eta": 0.0}, {"rho": 0.5, "eta": 0.2}]),
    ("fedprox", [{"mu": 0.01}, {"mu": 1.0}]),
])
def test_hyper_parameters_that_differ_become_per_run_columns(method, values):
    cfgs = [_cfg(method, seed=s, alpha=0.5, **v) for s, v in enumerate(values)]
    assert len({group_key(c) for c in cfgs}) == 1
    _assert_same_runs([_alone(c) for c in cfgs], _together(cfgs))


def test_rho_zero_in_a_group_equals_fedavg_alone():
    together = _together([_cfg("fedsam", seed=0, rho=0.0), _cfg("fedsam", seed=0, rho=0.3)])
    fedavg = _alone(_cfg("fedavg", seed=0))
    assert torch.allclose(together[0].w, fedavg.w, atol=1e-5)
    assert not torch.allclose(together[1].w, fedavg.w, atol=1e-3)


def test_runs_that_cannot_share_a_batch_get_keys_of_their_own():
    assert group_key(_cfg("fedsam", seed=0)) != group_key(_cfg("fedavg", seed=0))
    assert group_key(_cfg("fedavg", seed=0, local_epochs=2)) != group_key(_cfg("fedavg", seed=0))
    assert group_key(_cfg("fedavg", seed=0, momentum=0.9)) != group_key(_cfg("fedavg", seed=0))
    # the same SAM client, but FedGloSS's server sends a perturbed start (a broadcast part)
    assert group_key(_cfg("fedgloss-sam", seed=0)) != group_key(_cfg("fedsam", seed=0))
    fedfa = [_cfg("fedfa", seed=0), _cfg("fedfa", seed=1)]
    assert not run_batchable("fedfa") and group_key(fedfa[0]) != group_key(fedfa[1])
    # a timed run trains alone (its round times are the measurement); timing enters the run id
    timed = [_cfg("fedavg", seed=0, timed=True), _cfg("fedavg", seed=1, timed=True)]
    assert group_key(timed[0]) != group_key(timed[1]) and group_key(timed[0])[0] == "alone"
    assert timed[0].run_id() != _cfg("fedavg", seed=0).run_id()
    assert group_key(_cfg("fedavg", seed=0)) == group_key(_cfg("fedavg", seed=1))
    with pytest.raises(ValueError, match="plan them into groups"):
        run_group(fedfa, CPU)


@pytest.mark.parametrize("runs", [
    # one client procedure (plain SGD), four servers, averagings and lr schedules
    [("fedavg", {}), ("fedavg+swa", {}), ("fedadam", {}), ("fedyogi+ima", {"ima_window": 2})],
    # control variates that read the learning rate, at two rates (a per-row column)
    [("scaffold", {"lr": 0.05}), ("scaffold", {})],
    [("mofedsam", {"lr": 0.05}), ("mofedsam", {})],
    # FedGF's server with an adaptive and a static c: the same broadcast
    [("fedgf", {}), ("fedgf-static-c", {})],
    # runs of different lengths and clients per round: a finished run leaves the group
    [("fedsam", {"rounds": 2}), ("fedsam", {"per_round": 2}), ("fedsam+swa", {"rounds": 4})],
])
def test_runs_of_different_methods_with_one_client_procedure_share_a_batch(runs):
    cfgs = [_cfg(method, seed=s, alpha=0.5, **values) for s, (method, values) in enumerate(runs)]
    assert len({group_key(c) for c in cfgs}) == 1
    _assert_same_runs([_alone(c) for c in cfgs], _together(cfgs))


def test_merge_per_run_rows_and_columns():
    like = torch.zeros(3, 4)
    v = [torch.arange(4.0), torch.arange(4.0) + 10]
    rows = merge_per_run(v, [2, 1], like[0])
    assert rows.shape == (3, 4) and torch.equal(rows[1], v[0]) and torch.equal(rows[2], v[1])
    assert merge_per_run([0.5, 0.5], [2, 1], like[0]) == 0.5
    col = merge_per_run([0.5, 2.0], [2, 1], like[0])
    assert col.shape == (3, 1) and col.flatten().tolist() == [0.5, 0.5, 2.0]


def _store_files(run_dir):
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return json.loads((run_dir / "config.json").read_text()), metrics


def test_a_group_writes_each_run_record_as_flcore_run_would(tmp_path):
    from flcore.api import run_experiment
    from flcore.store import RunStore

    cfgs = [_cfg("fedsam", seed=s, alpha=a, engine="batched") for s, a in ((0, 0.5), (1, 0.0))]
    store = RunStore(tmp_path / "group")
    summaries = run_group(cfgs, CPU, lambda c: store.create(c.run_id(), c.canonical()))
    for cfg, summary in zip(cfgs, summaries):
        alone = run_experiment(cfg, store=tmp_path / "alone")
        assert summary["status"] == alone["status"] == "finished"
        assert summary["mean_last_100"] == pytest.approx(alone["mean_last_100"])
        conf_g, rows_g = _store_files(tmp_path / "group" / cfg.run_id())
        conf_a, rows_a = _store_files(tmp_path / "alone" / cfg.run_id())
        assert conf_g == conf_a and [r["round"] for r in rows_g] == [r["round"] for r in rows_a]
        assert [set(r) for r in rows_g] == [set(r) for r in rows_a]
        assert store.run(cfg.run_id()).status()["status"] == "finished"
        final = store.run(cfg.run_id()).load_final_model()
        assert final is not None


def test_a_run_interrupted_inside_a_group_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    from flcore.store import RunStore

    cfgs = [_cfg("fedavg", seed=s, alpha=0.5, rounds=4, checkpoint_every=1) for s in (0, 1)]
    whole = run_group(cfgs, CPU, lambda c: RunStore(tmp_path / "whole").create(c.run_id(), c.canonical()))
    store = RunStore(tmp_path / "cut")
    original = RoundDriver.train_round

    def interrupt_at_round_two(self, members, round):
        if round == 2:
            raise KeyboardInterrupt
        return original(self, members, round)

    monkeypatch.setattr(RoundDriver, "train_round", interrupt_at_round_two)
    with pytest.raises(KeyboardInterrupt):
        run_group(cfgs, CPU, lambda c: store.create(c.run_id(), c.canonical()))
    assert {store.run(c.run_id()).status()["status"] for c in cfgs} == {"interrupted"}
    monkeypatch.setattr(RoundDriver, "train_round", original)
    # both resume from their round-2 checkpoints inside a group again and equal the uninterrupted runs
    resumed = run_group(cfgs, CPU, lambda c: store.create(c.run_id(), c.canonical()))
    for cfg, a, b in zip(cfgs, whole, resumed):
        assert b["mean_last_100"] == pytest.approx(a["mean_last_100"])
        wa = RunStore(tmp_path / "whole").run(cfg.run_id()).load_final_model()
        wb = store.run(cfg.run_id()).load_final_model()
        for name in wa:
            assert torch.allclose(wa[name], wb[name], atol=1e-6)
        _, rows = _store_files(tmp_path / "cut" / cfg.run_id())
        assert [r["round"] for r in rows] == sorted({r["round"] for r in rows})  # no round twice


def test_a_diverging_run_ends_alone_and_its_group_goes_on():
    cfgs = [_cfg("fedsam", seed=0, lr=1e6), _cfg("fedsam", seed=1, lr=0.05)]
    sims = [Simulation(c, build_federated_data(c, CPU), CPU, None) for c in cfgs]
    summaries = RoundDriver(sims).run_rounds()
    assert summaries[0]["status"] == "diverged" and summaries[0]["diverged_round"] <= cfgs[0].rounds
    assert summaries[1]["status"] == "finished" and summaries[1]["rounds_done"] == cfgs[1].rounds
    _assert_same_runs([_alone(cfgs[1])], sims[1:])


def test_batchability_is_read_from_the_parts(monkeypatch):
    """A method trains alone exactly when one of its built parts declares ``trains_alone``."""
    from flcore.algorithms.perturbation import SAMPerturbation
    from flcore.sim import multi_run

    assert multi_run.run_batchable("fedsam") and not multi_run.run_batchable("fedfa+ima")
    multi_run.run_batchable.cache_clear()
    monkeypatch.setattr(SAMPerturbation, "trains_alone", True, raising=False)
    try:
        assert not multi_run.run_batchable("fedsam") and not multi_run.run_batchable("fedsam+swa")
        assert multi_run.run_batchable("fedavg")
    finally:
        multi_run.run_batchable.cache_clear()
