"""The paper-scale CIFAR path end to end on tiny data written in torchvision's on-disk
format (the real loader, checksum check, partition, augmentation and the paper CNN)."""
import json

import pytest

from flcore.cli.main import main
from flcore.data import write_fake_cifar
from flcore.data.cifar import expected_checksums


@pytest.mark.parametrize("name,classes", [("cifar10", 10), ("cifar100", 100)])
def test_flcore_run_on_cifar_format_data(tmp_path, capsys, name, classes):
    md5s = write_fake_cifar(tmp_path / "data", name, num_train=400, num_test=50)
    args = ["run", "--dataset", name, "--model", "cnn", "--scale", "paper", "--method", "fedsam",
            "--alpha", "0.05", "--clients", "4", "--per-round", "2", "--samples-per-client", "100",
            "--rounds", "2", "--eval-every", "1", "--data-root", str(tmp_path / "data"),
            "--store", str(tmp_path / "runs"), "--no-progress", "--json"]
    with expected_checksums(name, md5s):
        assert main(args) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["status"] == "finished" and summary["rounds_done"] == 2
    config = json.loads((tmp_path / "runs" / summary["run_id"] / "config.json").read_text())
    # the paper preset (FedSAM paper Tables 10 and 11) filled what the flags did not give
    assert config["batch_size"] == 64 and config["lr"] == 0.01 and config["weight_decay"] == 4e-4
    assert config["rho"] == (0.1 if name == "cifar10" else 0.05)


def test_missing_cifar_is_a_clear_error_naming_the_folder(tmp_path, capsys):
    code = main(["run", "--dataset", "cifar10", "--scale", "smoke", "--data-root", str(tmp_path / "nowhere"),
                 "--store", str(tmp_path / "runs"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert "nowhere" in err and "--download" in err
    assert not (tmp_path / "runs").exists(), "no run record for data that cannot be loaded"


def test_corrupt_cifar_is_a_clear_error(tmp_path, capsys):
    md5s = write_fake_cifar(tmp_path / "data", "cifar10", num_train=100, num_test=20)
    batch = tmp_path / "data" / "cifar-10-batches-py" / "data_batch_1"
    raw = bytearray(batch.read_bytes())
    raw[100] ^= 0xFF
    batch.write_bytes(bytes(raw))
    with expected_checksums("cifar10", md5s):
        code = main(["run", "--dataset", "cifar10", "--scale", "smoke", "--data-root", str(tmp_path / "data"),
                     "--store", str(tmp_path / "runs"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "data_batch_1" in err
