"""flcore's methods through Flower's supported launcher, ``flwr run`` (flcore.flower.app,
flcore.flower.launcher).

In every run: the app folder :func:`write_app` writes passes Flower's own validation of a
``pyproject.toml``; a wrong configuration is one ``ConfigError`` before anything starts; the
result file round-trips without pickle; Flower still has the deprecated in-process call
the simulation route uses (this test fails loudly when it is removed).

In the extended tier: a SuperLink and one SuperNode per client on 127.0.0.1, started and
stopped by the test, run FedSAM and SCAFFOLD (whose clients keep state across rounds, in
each SuperNode's context) through ``flwr run``; the final model equals flcore's own engine
on the same configuration, bit for bit; a run that cannot complete (more clients than
nodes) raises with Flower's reason; and no process of the deployment is left afterwards.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("flwr")

from flcore.errors import ConfigError  # noqa: E402
from flcore.flower.app import config_of, federation_of, read_result, write_app, write_result  # noqa: E402
from flcore.flower.launcher import local_deployment  # noqa: E402

SMOKE = {"method": "fedsam", "scale": "smoke", "rounds": 2, "clients": 3, "per_round": 2, "seed": 0}


def test_the_app_folder_passes_flowers_own_validation(tmp_path):
    from flwr.common.config import validate_config

    folder = write_app(tmp_path / "app", {**SMOKE, "evaluate": True, "result-file": "out.npz"})
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+; Flower's own parser of the file either way
    config = tomllib.loads((folder / "pyproject.toml").read_text())
    valid, errors, _ = validate_config(config, check_module=True, project_dir=folder)
    assert valid, errors
    assert config["tool"]["flwr"]["app"]["config"] == {**SMOKE, "evaluate": True, "result-file": "out.npz"}
    assert config_of(config["tool"]["flwr"]["app"]["config"]) == SMOKE


@pytest.mark.parametrize("config, field", [({**SMOKE, "rho": -1.0}, "rho"), ({**SMOKE, "method": "nope"}, "method")])
def test_a_wrong_configuration_is_one_error_before_anything_is_written(tmp_path, config, field):
    with pytest.raises(ConfigError, match=f"'{field}'"):
        write_app(tmp_path / "app", config)
    assert not (tmp_path / "app").exists()
    with pytest.raises(ValueError, match="'rhoo' is neither a field of flcore's configuration"):
        config_of({**SMOKE, "rhoo": 0.1})


def test_the_result_file_round_trips_without_pickle(tmp_path):
    class Done:
        global_model = torch.arange(4, dtype=torch.float32)
        eval_model = torch.ones(4)
        history = [{"round": 0, "clients": [1, 0], "train_loss": [0.5, 0.25]}]
        rounds_done = 1

    write_result(tmp_path / "r" / "out.npz", Done)
    got = read_result(tmp_path / "r" / "out.npz")
    assert np.array_equal(got["w"], [0, 1, 2, 3]) and np.array_equal(got["eval_model"], [1, 1, 1, 1])
    assert got["history"] == Done.history and got["rounds"] == 1
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["out.npz"]


def test_flower_still_has_the_deprecated_call_the_simulation_route_uses():
    from flcore.flower.simulation import deprecated_run_simulation

    assert callable(deprecated_run_simulation()), (
        "Flower removed flwr.simulation.run_simulation: flcore.flower.run_simulation must move to flwr run")


def test_a_deployment_needs_at_least_one_client():
    for clients in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="clients: a whole number of SuperNodes"):
            with local_deployment(clients):
                pass


def _engine(config: dict) -> np.ndarray:
    sim = federation_of(config).simulation()
    for _ in range(config["rounds"]):
        sim.step()
    return sim.w.detach().cpu().numpy()


@pytest.mark.slow
@pytest.mark.extended
def test_flwr_run_on_a_local_superlink_equals_flcores_engine(tmp_path):
    import psutil

    from flcore.flower.launcher import flwr_run

    runs = {"fedsam": SMOKE, "scaffold": {**SMOKE, "method": "scaffold", "rounds": 3}}
    with local_deployment(3, home=tmp_path / "home") as deployment:
        started = [psutil.Process(p.pid) for p, _ in deployment.processes]
        for name, config in runs.items():
            app = write_app(tmp_path / name, {**config, "result-file": str(tmp_path / f"{name}.npz")}, name=name)
            assert flwr_run(app, deployment, timeout=600)["status"] == "finished:completed"
        short = write_app(tmp_path / "short", {**SMOKE, "clients": 5, "timeout": 5}, name="short")
        reason = "finished:failed: .*3 Flower nodes connected within 5.0 s; federation .flwr-run. has 5 clients"
        with pytest.raises(RuntimeError, match=reason):
            flwr_run(short, deployment, timeout=600)
        family = [q for p in started for q in p.children(recursive=True)] + started
    assert not [p for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    for name, config in runs.items():
        got = read_result(tmp_path / f"{name}.npz")
        assert got["rounds"] == config["rounds"], name
        assert np.array_equal(got["w"], _engine(config)), name
    scaffold = read_result(tmp_path / "scaffold.npz")["history"]
    seen = [k for row in scaffold for k in row["clients"]]
    assert len(seen) > len(set(seen)), "SCAFFOLD's clients must come back for their state to matter"
    assert json.loads(json.dumps(scaffold)) == scaffold
