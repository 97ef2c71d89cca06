"""Every registered method: three rounds on MNIST-1D with finite metrics, and a run
stopped at a checkpoint and resumed equals the uninterrupted run exactly (CPU)."""
import math

import pytest
import torch
from float64_simulation import ATOL, RTOL, simulation_in_float64

from flcore import resolve_config
from flcore.algorithms import METHODS
from flcore.algorithms.server import Server
from flcore.config import traffic_of
from flcore.sim import Simulation, build_federated_data
from flcore.store import RunStore

#: The file takes about 80 s on one core (every registered method, several checks each).
pytestmark = pytest.mark.slow


def _sim(cfg, run=None):
    return Simulation(cfg, build_federated_data(cfg, torch.device("cpu")), torch.device("cpu"), run)


@pytest.mark.parametrize("name", list(METHODS))
def test_three_rounds_finite_and_resume_is_exact(tmp_path, name):
    cfg = resolve_config(scale="smoke", method=name, rounds=3, checkpoint_every=2, eval_every=1, alpha=0.5)
    full = _sim(cfg)
    summary = full.run_rounds()
    assert summary["status"] == "finished" and summary["rounds_done"] == 3
    assert all(math.isfinite(m["test_loss"]) and math.isfinite(m["train_loss"]) for m in full.metrics)

    # stop after the checkpoint of round 2 (as a crash would), then resume to round 3
    store = RunStore(tmp_path)
    run = store.create(cfg.run_id(), cfg.canonical())
    first = _sim(cfg.replace(rounds=3), run)
    first.train_one_round(0)
    first.train_one_round(1)
    first.rounds_done = 2
    run.save_checkpoint(first.state())
    resumed = _sim(cfg, run)
    resumed.run_rounds()
    torch.testing.assert_close(resumed.w, full.w, rtol=0, atol=0)
    for name_, table in full.client_state.items():
        torch.testing.assert_close(resumed.client_state[name_], table, rtol=0, atol=0)


@pytest.mark.parametrize("name", list(METHODS))
def test_batched_and_rows_equal_sequential(name):
    """The same algorithm code trained client by client (the reference loop), all clients
    at once under ``vmap`` and all clients as the row kernel's batched matmuls, with unequal
    client sizes (alpha = 0.5), agrees to summation order (in float64:
    :mod:`float64_simulation` says why), evaluations included."""
    sims = [simulation_in_float64(method=name, rounds=2, alpha=0.5, engine=engine,
                                  **({"rho": 0.5} if "asam" in name else {}))[0]
            for engine in ("sequential", "batched", "rows")]
    assert sims[0].w.dtype == torch.float64 and [s.engine for s in sims] == ["sequential", "batched", "rows"]
    for other in sims[1:]:
        torch.testing.assert_close(other.w, sims[0].w, rtol=RTOL, atol=ATOL)
        for ours, ref in zip(other.metrics, sims[0].metrics):
            assert ours["test_loss"] == pytest.approx(ref["test_loss"], rel=1e-9)


def _model_sized(named: dict, size: int) -> set[str]:
    return {name for name, value in named.items()
            if isinstance(value, torch.Tensor) and value.shape[-1:] == (size,) and name != "model"}


@pytest.mark.parametrize("name", list(METHODS))
def test_the_traffic_read_off_the_parts_is_what_a_round_sends(monkeypatch, name):
    """The traffic the catalog and the cost tables show (:func:`flcore.config.traffic_of`,
    counted from what the parts declare) is what two real rounds send: the model-sized
    vectors the server broadcasts beside the start point and those the clients upload
    beside their model, one more each way for a probe exchange."""
    sent, uploaded, probes = set(), set(), []
    broadcast, update, probe = Server.broadcast, Server.update, Server.probe

    def record_broadcast(self, w, state, round):
        start, vectors = broadcast(self, w, state, round)
        sent.update(_model_sized(vectors, w.shape[-1]))
        return start, vectors

    def record_update(self, w, start, uploads, counts, state, round, num_clients):
        uploaded.update(_model_sized(uploads, w.shape[-1]))
        return update(self, w, start, uploads, counts, state, round, num_clients)

    def record_probe(self, w, uploads, counts, state, round, num_clients):
        probes.append(round)
        return probe(self, w, uploads, counts, state, round, num_clients)

    monkeypatch.setattr(Server, "broadcast", record_broadcast)
    monkeypatch.setattr(Server, "update", record_update)
    monkeypatch.setattr(Server, "probe", record_probe)
    _sim(resolve_config(scale="smoke", method=name, rounds=2, eval_every=1, alpha=0.5)).run_rounds()
    probe_pass = int(bool(probes))
    assert traffic_of(name) == (1 + len(sent) + probe_pass, 1 + len(uploaded) + probe_pass)
