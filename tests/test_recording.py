"""What a run records for analysis (probes, snapshots): the values match what the stored
models give, recording leaves training unchanged, and bad names fail before compute."""
from __future__ import annotations

import pytest
import torch

from flcore.analysis.probes import Probe
from flcore.analysis.recording import PROBES, load_snapshot, probe_names, register_probe, snapshot_rounds_of
from flcore.api import run_experiment
from flcore.config import resolve_config
from flcore.errors import ConfigError
from flcore.planning.planner import plan_groups
from flcore.store import RunStore

SMOKE = {"scale": "smoke", "rounds": 4, "eval_every": 2, "eval_last": 0}


def _run(tmp_path, **values):
    cfg = resolve_config({**SMOKE, **values})
    summary = run_experiment(cfg, store=tmp_path, progress=False)
    assert summary["status"] == "finished"
    return cfg, summary, RunStore(tmp_path).run(cfg.run_id()).read_metrics()


def test_recording_enters_the_run_id_only_when_set():
    plain = resolve_config(SMOKE)
    assert not {"probes", "probe_every", "snapshot_rounds"} & set(plain.canonical())
    probed = resolve_config({**SMOKE, "probes": "param_norm"})
    assert probed.canonical()["probes"] == ("param_norm",) and probed.run_id() != plain.run_id()
    assert resolve_config({**SMOKE, "snapshot_rounds": [4, 2, 2]}).snapshot_rounds == (2, 4)


def test_snapshots_hold_the_rounds_models_and_fedavg_averages_them(tmp_path):
    cfg, summary, rows = _run(tmp_path, method="fedavg", snapshot_rounds=[2, 4],
                              probes=["param_norm"], probe_every=1)
    run_dir = summary["run_dir"]
    assert snapshot_rounds_of(run_dir) == [2, 4]
    from flcore.sim.federated_data import build_federated_data

    sizes = torch.tensor(build_federated_data(cfg, torch.device("cpu")).client_sizes, dtype=torch.float64)
    norms = {row["round"]: row["param_norm"] for row in rows}
    assert sorted(norms) == [1, 2, 3, 4]
    for r in (2, 4):
        snap = load_snapshot(run_dir, r)
        assert snap["round"] == r and snap["client_models"].shape == (cfg.per_round, snap["w"].numel())
        # FedAvg's global model is the client-size weighted mean of the round's client models
        weights = sizes[snap["client_ids"]] / sizes[snap["client_ids"]].sum()
        mean = (weights[:, None] * snap["client_models"].double()).sum(0)
        torch.testing.assert_close(mean, snap["w"].double(), rtol=1e-5, atol=1e-6)
        # the probe logged the norm of the very model the snapshot holds
        assert norms[r] == pytest.approx(float(snap["w"].double().norm()), rel=1e-6)
    with pytest.raises(FileNotFoundError, match="round 3.*2, 4"):
        load_snapshot(run_dir, 3)


def test_recording_does_not_change_training(tmp_path):
    _, _, plain = _run(tmp_path / "a", method="fedsam")
    _, _, recorded = _run(tmp_path / "b", method="fedsam", probes=["client_lambda_max", "feature_norms"],
                          snapshot_rounds=[3])
    def curve(rows):
        return [(r["round"], r["test_accuracy"], r["train_loss"]) for r in rows if "test_accuracy" in r]
    assert curve(plain) == curve(recorded)
    probed = [r for r in recorded if "feature_norms" in r]
    assert [r["round"] for r in probed] == [2, 4]  # probe_every 0: the eval_every rounds
    assert all(len(r["client_lambda_max.values"]) == len(r["client_lambda_max.clients"]) == 3 for r in probed)
    assert all(v > 0 for r in probed for v in r["client_lambda_max.values"])


def test_delta_eps_is_none_on_the_first_round_then_bounded_by_two_rho(tmp_path):
    cfg, _, rows = _run(tmp_path, method="fedgloss-sam", probes=["delta_eps"], probe_every=1)
    values = [r["delta_eps"] for r in sorted(rows, key=lambda r: r["round"]) if "delta_eps" in r]
    assert values[0] is None
    # rho |a/|a| - b/|b|| lies in [0, 2 rho]
    assert all(0 < v <= 2 * cfg.gloss_rho_server + 1e-12 for v in values[1:])


def test_a_registered_probe_reads_the_server_state(tmp_path):
    register_probe("test_rounds_seen", lambda sim: Probe("test_rounds_seen", lambda s: s["round"], ("round",)))
    try:
        assert "test_rounds_seen" in probe_names()
        _, _, rows = _run(tmp_path, probes=["test_rounds_seen"], probe_every=2)
        assert [(r["round"], r["test_rounds_seen"]) for r in rows if "test_rounds_seen" in r] == [(2, 2), (4, 4)]
    finally:
        PROBES.pop("test_rounds_seen")


@pytest.mark.parametrize("values, field", [
    ({"probes": ["no_such_probe"]}, "probes"),
    ({"probes": ["param_norm", "param_norm"]}, "probes"),
    ({"probe_every": 2}, "probe_every"),
    ({"snapshot_rounds": [0]}, "snapshot_rounds"),
    ({"snapshot_rounds": [5]}, "snapshot_rounds"),
])
def test_bad_recording_fields_fail_before_compute(values, field):
    with pytest.raises(ConfigError) as info:
        resolve_config({**SMOKE, **values})
    assert info.value.field == field


def test_recorded_runs_train_alone():
    seeds = [{**SMOKE, "method": "fedavg", "seed": s} for s in range(3)]
    recorded = {**SMOKE, "method": "fedavg", "seed": 5, "probes": ["param_norm"]}
    groups = plan_groups(seeds + [recorded], device="cpu", workers=1)
    sizes = sorted(g.size for g in groups)
    assert sizes == [1, 3]


def _two_domain_problem():
    """Two classes, inputs whose argmax is the prediction of the identity linear model:
    3 examples of domain 0 it gets right, 7 of domain 1 it gets wrong."""
    from flcore.flat import FlatModel

    module = torch.nn.Linear(2, 2, bias=False)
    flat = FlatModel(module)
    w = torch.eye(2).reshape(-1)
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]] + [[1.0, 0.0], [0.0, 1.0]] * 3 + [[3.0, 1.0]])
    predicted = x.argmax(dim=1)
    domain = torch.tensor([0] * 3 + [1] * 7)
    y = torch.where(domain == 0, predicted, 1 - predicted)
    return flat, w, x, y, domain


def test_domain_accuracy_is_the_unweighted_mean_over_domains():
    from flcore.analysis.probes import domain_accuracy_probe

    flat, w, x, y, domain = _two_domain_problem()
    probe = domain_accuracy_probe(flat, x, y, domain, ("photo", "sketch"))
    assert probe.fn({"w": w}) == {"photo": 1.0, "sketch": 0.0, "mean": 0.5}  # pooled accuracy: 0.3
    # the evaluated model (IMA's average, say) is the one scored: swapping the rows flips both
    swapped = domain_accuracy_probe(flat, x, y, domain, ("photo", "sketch"),
                                    eval_params=lambda w, state: state["average"])
    value = swapped.fn({"w": w, "server_state": {"average": torch.tensor([0.0, 1.0, 1.0, 0.0])}})
    assert value == {"photo": 0.0, "sketch": 1.0, "mean": 0.5}
    assert swapped.requires == ("w", "server_state")


def test_domain_accuracy_needs_a_multi_domain_data_set():
    with pytest.raises(ConfigError, match="'domain_accuracy' needs a multi-domain data set"):
        resolve_config(scale="smoke", probes="domain_accuracy")
    assert "domain_accuracy" in probe_names()
    cfg = resolve_config(scale="paper", dataset="pacs", probes="domain_accuracy")
    assert cfg.probes == ("domain_accuracy",)
