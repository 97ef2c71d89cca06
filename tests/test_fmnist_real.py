"""The real Fashion-MNIST release, where Debian's ``dataset-fashion-mnist`` installed it
(``/usr/share/datasets/fashion-mnist``: CI installs it): it loads as is, with the published
md5s, and FedAvg and FedAvg+IMA learn on it.  Skipped loudly where the package is absent;
every other Fashion-MNIST test writes its own IDX files."""
import gzip
import hashlib

import pytest

from flcore import run_experiment
from flcore.cli.main import main
from flcore.data import load_dataset
from flcore.data.fmnist_format import DEBIAN_FMNIST_ROOT, FMNIST_CONTENT_MD5S, FMNIST_PUBLISHED_MD5S

pytestmark = pytest.mark.skipif(
    not DEBIAN_FMNIST_ROOT.is_dir(),
    reason=f"the real Fashion-MNIST tests did not run: no {DEBIAN_FMNIST_ROOT} (apt-get install dataset-fashion-mnist)")


def test_debians_files_are_the_release_recompressed():
    for name, archive_md5 in FMNIST_PUBLISHED_MD5S.items():
        raw = (DEBIAN_FMNIST_ROOT / name).read_bytes()
        assert hashlib.md5(gzip.decompress(raw)).hexdigest() == FMNIST_CONTENT_MD5S[name.removesuffix(".gz")]
        assert hashlib.md5(raw).hexdigest() != archive_md5, "re-compressed: the archive's md5 is not torchvision's"


def test_the_release_loads_from_debians_folder_as_is():
    data = load_dataset("fmnist", DEBIAN_FMNIST_ROOT)
    assert data.train_x.shape == (60_000, 1, 28, 28) and data.test_x.shape == (10_000, 1, 28, 28)
    # balanced classes: 6,000 training and 1,000 test images of each of the ten
    assert data.train_y.bincount().tolist() == [6_000] * 10 and data.test_y.bincount().tolist() == [1_000] * 10
    # the first training images: ankle boot, T-shirt/top, T-shirt/top, dress, T-shirt/top ...
    assert data.train_y[:5].tolist() == [9, 0, 0, 3, 0]
    # the statistics usually quoted for the training pixels (ToTensor scale): mean 0.2860, std 0.3530
    assert data.train_x.mean().item() == pytest.approx(0.2860, abs=5e-4)
    assert data.train_x.std().item() == pytest.approx(0.3530, abs=5e-4)
    assert data.train_x.min().item() == 0.0 and data.train_x.max().item() == 1.0


@pytest.mark.slow
def test_fedavg_and_fedavg_ima_learn_on_the_real_files(tmp_path):
    base = {"scale": "smoke", "dataset": "fmnist", "model": "fmnist_cnn", "data_root": str(DEBIAN_FMNIST_ROOT),
            "num_samples": 2_000, "clients": 10, "per_round": 5, "samples_per_client": 200, "local_epochs": 3,
            "batch_size": 50, "lr": 0.05, "momentum": 0.9, "weight_decay": 1e-3, "partition": "iid",
            "rounds": 4, "eval_every": 2, "eval_last": 1, "device": "cpu"}
    fedavg = run_experiment({**base, "method": "fedavg"}, tmp_path / "runs")
    ima = run_experiment({**base, "method": "fedavg+ima", "ima_start": 2, "ima_window": 2}, tmp_path / "runs")
    for summary in (fedavg, ima):
        # ten balanced classes: chance is 0.10 on the 10,000 test images
        assert summary["status"] == "finished" and summary["final_accuracy"] > 0.2, summary
    assert ima["final_accuracy"] != fedavg["final_accuracy"], "IMA's averaged global model is another model"


def test_the_cli_runs_on_debians_folder(tmp_path, capsys):
    code = main(["run", "--scale", "smoke", "--no-progress", "--json", "--dataset", "fmnist", "--model",
                 "fmnist_cnn", "--num-samples", "200", "--clients", "4", "--per-round", "2", "--samples-per-client",
                 "50", "--rounds", "1", "--data-root", str(DEBIAN_FMNIST_ROOT), "--store", str(tmp_path / "runs")])
    assert code == 0 and '"status": "finished"' in capsys.readouterr().out
