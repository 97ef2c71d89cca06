"""The command line: JSON contract, config files, listing, validation before compute."""
import json
import os
import subprocess
import sys

import pytest

from flcore.cli.main import main

SMOKE = ["--scale", "smoke", "--no-progress"]


def _run_json(capsys, *args):
    code = main(["run", *SMOKE, "--json", *args])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    return json.loads(out[-1])


def test_run_prints_the_json_contract(tmp_path, capsys):
    summary = _run_json(capsys, "--method", "fedsam", "--alpha", "0", "--rounds", "3", "--store", str(tmp_path))
    for key in ("status", "rounds_done", "final_accuracy", "mean_last_100", "best_accuracy", "run_dir"):
        assert key in summary
    assert summary["status"] == "finished" and summary["rounds_done"] == 3
    assert os.path.isfile(os.path.join(summary["run_dir"], "config.json"))
    assert 0.0 <= summary["final_accuracy"] <= 1.0


def test_config_file_gives_the_same_run_as_flags(tmp_path, capsys):
    path = tmp_path / "exp.yaml"
    path.write_text("method: fedasam\nalpha: 0.5\nrounds: 2\nper-round: 2\n")
    from_file = _run_json(capsys, "--config", str(path), "--store", str(tmp_path / "s"))
    from_flags = _run_json(capsys, "--method", "fedasam", "--alpha", "0.5", "--rounds", "2",
                           "--per-round", "2", "--store", str(tmp_path / "s"))
    assert from_file["run_id"] == from_flags["run_id"]
    # flags win over the file
    overridden = _run_json(capsys, "--config", str(path), "--rounds", "3", "--store", str(tmp_path / "s"))
    assert overridden["rounds_done"] == 3


def test_runs_lists_config_status_and_summary(tmp_path, capsys):
    a = _run_json(capsys, "--rounds", "2", "--store", str(tmp_path))
    b = _run_json(capsys, "--rounds", "2", "--method", "fedsam", "--store", str(tmp_path))
    assert main(["runs", "--store", str(tmp_path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    by_id = {r["run_id"]: r for r in listed}
    assert set(by_id) == {a["run_id"], b["run_id"]}
    assert by_id[b["run_id"]]["config"]["method"] == "fedsam"
    assert by_id[b["run_id"]]["status"] == "finished"
    assert by_id[b["run_id"]]["summary"]["mean_last_100"] == b["mean_last_100"]


BAD = [
    (["--method", "fedfoo"], "method", "fedavg"),
    (["--dataset", "imagenet"], "dataset", "cifar10"),
    (["--model", "vgg99"], "model", "cnn"),
    (["--alpha", "-1"], "alpha", ">= 0"),
    (["--clients", "4", "--per-round", "5"], "per_round", "<= clients"),
    (["--rho", "-0.1", "--method", "fedsam"], "rho", ">= 0"),
    (["--lr", "0"], "lr", "> 0"),
    (["--lr", "-0.1"], "lr", "> 0"),
    (["--rounds", "0"], "rounds", ">= 1"),
    (["--batch-size", "0"], "batch_size", ">= 1"),
    (["--device", "tpu"], "device", "cpu"),
    (["--rho", "abc"], "rho", "number"),
    (["--rounds", "ten"], "rounds", "integer"),
    (["--partition", "zipf"], "partition", "dirichlet"),
    (["--engine", "turbo"], "engine", "sequential"),
    (["--scale", "huge"], "scale", "smoke"),
    (["--momentum", "1.5"], "momentum", "[0, 1)"),
    (["--clients", "0"], "clients", ">= 1"),
    (["--local-epochs", "0"], "local_epochs", ">= 1"),
    (["--eta", "-1", "--method", "fedasam"], "eta", ">= 0"),
    (["--server-lr", "0", "--method", "fedavgm"], "server_lr", "> 0"),
    (["--lr", "nan"], "lr", "finite"),
    (["--scale", "paper", "--dataset", "mnist1d"], "dataset", "cifar10"),
]


@pytest.mark.parametrize("args,field,allowed", BAD, ids=[b[1] + ":" + " ".join(b[0]) for b in BAD])
def test_bad_config_is_rejected_before_compute(tmp_path, capsys, args, field, allowed):
    code = main(["run", *SMOKE, "--store", str(tmp_path), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert f"'{field}'" in err and allowed in err
    assert not any(tmp_path.iterdir()), "nothing may be written for a rejected config"


def test_bad_config_file_field_is_named(tmp_path, capsys):
    path = tmp_path / "exp.yaml"
    path.write_text("method: fedsam\nrhoo: 0.1\n")
    assert main(["run", *SMOKE, "--config", str(path), "--store", str(tmp_path / "s")]) == 2
    assert "'rhoo'" in capsys.readouterr().err


def test_cuda_request_without_cuda_is_a_clear_error(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert main(["run", *SMOKE, "--device", "cuda", "--store", str(tmp_path)]) == 2
    assert "CUDA is not available" in capsys.readouterr().err


def test_console_script_exit_code_and_no_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "flcore", "run", "--alpha", "-3", "--store", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "'alpha'" in proc.stderr


def test_methods_json_lists_every_registered_method(capsys):
    from flcore.algorithms import METHODS

    assert main(["methods", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == list(METHODS)
    for r in rows:
        assert {"name", "parts", "hyperparameters", "uploads_per_round", "downloads_per_round",
                "grad_evals_per_step"} <= set(r)
    by_name = {r["name"]: r for r in rows}
    assert by_name["fedsam"]["grad_evals_per_step"] == 2 and by_name["fedavg"]["grad_evals_per_step"] == 1
    # at the small scale, alpha 0: the tuning record's choice for the pathological row
    from flcore.config.tuned import load_record
    asam = next(s for s in load_record("fedsam", "small")["studies"] if s["name"] == "asam")
    chosen = next(r for r in asam["rows"] if r["row"] == "pathological")["choice"]
    assert by_name["fedasam"]["hyperparameters"] == {"rho": chosen["rho"], "eta": chosen["eta"]}
    assert by_name["fedavg"]["uploads_per_round"] == 1 and by_name["fedavg"]["downloads_per_round"] == 1


def test_centralized_method_pools_the_data_and_rejects_a_federation(tmp_path, capsys):
    from flcore import resolve_config

    cfg = resolve_config(scale="smoke", method="centralized-sgd")
    assert (cfg.clients, cfg.per_round, cfg.partition) == (1, 1, "iid")
    assert main(["run", *SMOKE, "--method", "centralized-sam", "--clients", "10", "--store", str(tmp_path)]) == 2
    assert "'clients'" in capsys.readouterr().err


def test_run_on_fmnist_data_in_torchvisions_format(tmp_path, capsys):
    from flcore.data import write_fake_fmnist
    from flcore.data.checksums import expected_checksums

    md5s = write_fake_fmnist(tmp_path / "data", num_train=60, num_test=12)
    with expected_checksums("fmnist", md5s):
        summary = _run_json(capsys, "--dataset", "fmnist", "--model", "fmnist_cnn", "--clients", "3",
                            "--per-round", "2", "--samples-per-client", "20", "--rounds", "1",
                            "--data-root", str(tmp_path / "data"), "--store", str(tmp_path / "runs"))
    assert summary["status"] == "finished" and summary["rounds_done"] == 1
    config = json.loads((tmp_path / "runs" / summary["run_id"] / "config.json").read_text())
    assert config["dataset"] == "fmnist" and config["model"] == "fmnist_cnn"


def test_missing_fmnist_data_exits_2_with_the_file_and_how_to_fetch(tmp_path, capsys):
    from flcore.data import write_fake_fmnist
    from flcore.data.checksums import expected_checksums

    md5s = write_fake_fmnist(tmp_path / "data", num_train=60, num_test=12)
    (tmp_path / "data" / "FashionMNIST" / "raw" / "train-labels-idx1-ubyte.gz").unlink()
    with expected_checksums("fmnist", md5s):
        code = main(["run", *SMOKE, "--dataset", "fmnist", "--data-root", str(tmp_path / "data"),
                     "--store", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "train-labels-idx1-ubyte.gz" in err and "--download" in err
    assert not (tmp_path / "runs").exists(), "no run record for data that cannot be loaded"


@pytest.mark.parametrize("layout", ["idx", "debian"])
def test_run_on_fmnist_data_in_the_uncompressed_and_debian_layouts(tmp_path, capsys, layout):
    from flcore.data import write_fake_fmnist
    from flcore.data.checksums import expected_checksums

    md5s = write_fake_fmnist(tmp_path / "data", num_train=60, num_test=12, layout=layout)
    with expected_checksums("fmnist", md5s):
        summary = _run_json(capsys, "--dataset", "fmnist", "--model", "fmnist_cnn", "--clients", "3",
                            "--per-round", "2", "--samples-per-client", "20", "--rounds", "1",
                            "--data-root", str(tmp_path / "data"), "--store", str(tmp_path / "runs"))
    assert summary["status"] == "finished" and summary["rounds_done"] == 1
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == sorted(
        name + (".gz" if layout == "debian" else "") for name in md5s), "nothing written beside the data"


@pytest.mark.parametrize("damage", ["truncated", "wrong"])
def test_a_wrong_or_partial_fmnist_file_exits_2_with_one_line_naming_it(tmp_path, capsys, damage):
    from flcore.data import write_fake_fmnist
    from flcore.data.checksums import expected_checksums

    md5s = write_fake_fmnist(tmp_path / "data", num_train=60, num_test=12, layout="debian")
    path = tmp_path / "data" / "t10k-images-idx3-ubyte.gz"
    if damage == "truncated":  # a download cut short
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    else:  # another file of the same format
        write_fake_fmnist(tmp_path / "other", num_train=60, num_test=12, seed=5, layout="debian")
        path.write_bytes((tmp_path / "other" / path.name).read_bytes())
    with expected_checksums("fmnist", md5s):
        code = main(["run", *SMOKE, "--dataset", "fmnist", "--data-root", str(tmp_path / "data"),
                     "--store", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert str(path) in err
    expected = "not a complete gzip file" if damage == "truncated" else (
        f"expected {md5s['t10k-images-idx3-ubyte']}")
    assert expected in err
    assert not (tmp_path / "runs").exists(), "no run record for data that cannot be loaded"


def test_fmnist_data_rejects_a_model_for_other_inputs(tmp_path, capsys):
    code = main(["run", *SMOKE, "--dataset", "fmnist", "--model", "vgg11gn", "--store", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "'model'" in err and "fmnist_cnn" in err and "[1, 28, 28]" in err


def test_a_closed_stdout_ends_the_command_without_a_traceback():
    """``flcore methods | head -1``: the reader is gone when flcore writes (here: the pipe's
    read end is closed before the command starts, so every write fails); flcore stops with
    the shell's status for it (141) and prints nothing on stderr."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "flcore", "methods"], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    finally:
        os.close(write_end)
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == ""
