"""ensure_runs: trains what is missing once, reuses the store, reports failures and
pending methods; per-client accuracy of the global model."""
from __future__ import annotations

import pytest

from flcore.planning import spec as spec_module
from flcore.reproduction.artifacts import RunSpec, get_artifact
from flcore.reproduction.runner import ensure_runs, results_frame, run_metrics


def _specs():
    return [s for s in get_artifact("fedsam-fig-3").runs("smoke", [0])]


def test_ensure_runs_trains_once_then_reuses(tmp_path):
    specs = _specs()
    logs = []
    frame = ensure_runs(specs, store=tmp_path, workers=1, log=logs.append)
    assert set(frame["status"]) == {"finished"}
    assert any("training 3 run(s)" in line for line in logs)
    logs.clear()
    again = ensure_runs(specs, store=tmp_path, workers=1, log=logs.append)
    assert logs == [] and list(again["run_id"]) == list(frame["run_id"])
    metrics = run_metrics(frame, store=tmp_path)
    assert {"round", "test_accuracy", "alpha", "length"} <= set(metrics.columns)
    assert metrics["test_accuracy"].notna().any()


def test_a_failing_run_fails_the_call_and_is_reported(tmp_path):
    bad = RunSpec({"algorithm": "broken"}, {"method": "fedavg", "dataset": "cifar10", "scale": "smoke",
                                             "data_root": str(tmp_path / "no-data"), "download": False})
    with pytest.raises(RuntimeError, match="1 run\\(s\\) failed"):
        ensure_runs([bad], store=tmp_path / "store", workers=1, log=None)
    frame = ensure_runs([bad], store=tmp_path / "store", workers=1, log=None, raise_on_failure=False)
    assert frame["status"].tolist() == ["failed"] and "Error" in frame["error"].item()


def test_pending_specs_are_listed_never_run(tmp_path, monkeypatch):
    monkeypatch.setattr(spec_module, "registered_methods", lambda: ("fedavg",))
    spec = RunSpec({"algorithm": "FedAvg+SWA"}, {"method": "fedavg+swa", "scale": "smoke"})
    frame = ensure_runs([spec], store=tmp_path, log=None)
    assert frame["status"].tolist() == ["pending"] and frame["run_id"].isna().all()
    assert not any(tmp_path.iterdir())


def test_recorded_client_accuracy_matches_the_final_model_fallback(tmp_path):
    from flcore.reproduction.per_client import client_accuracy_history, final_client_accuracy

    spec = _specs()[0]
    frame = ensure_runs([spec], store=tmp_path, workers=1, log=None)
    history = client_accuracy_history(run_metrics(frame, store=tmp_path))
    if history.empty:
        pytest.skip("this engine does not record client_accuracy")
    last = history[history["round"] == history["round"].max()].set_index("client")["accuracy"]
    final = final_client_accuracy(frame["run_dir"].item())
    assert len(final) == spec.resolve().clients
    assert final.values == pytest.approx(last.values)


def test_results_frame_reads_without_training(tmp_path):
    frame = results_frame(_specs(), store=tmp_path)
    assert set(frame["status"]) == {"new"}
