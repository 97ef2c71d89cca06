"""Corrupted test sets (CIFAR-C files, 1-D corruptions), corrupted accuracy of a stored run, and
the run grids of the FedSAM paper's Figs. 6, 8, 9 and 10."""
import numpy as np
import pytest
import torch

from flcore import resolve_config, run_experiment
from flcore.analysis.robustness import corrupted_accuracy, corrupted_test_set
from flcore.data import DatasetError
from flcore.data.cifar_c import MD5, fetch_command, load_cifar_c, write_fake_cifar_c
from flcore.data.corruptions_1d import CORRUPTIONS, SEVERITIES, SignalStats, corrupt


@pytest.fixture(scope="module")
def signals():
    gen = torch.Generator().manual_seed(0)
    return torch.cumsum(torch.randn(64, 40, generator=gen), dim=1) * 0.3


# --------------------------------------------------------------------------- 1-D corruptions

@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_every_corruption_is_deterministic_changes_the_signal_and_keeps_the_shape(signals, name):
    for severity in (1, 5):
        a = corrupt(signals, name, severity, seed=3)
        assert a.shape == signals.shape and a.dtype == torch.float32 and torch.isfinite(a).all()
        torch.testing.assert_close(a, corrupt(signals, name, severity, seed=3), rtol=0, atol=0)
        assert not torch.allclose(a, signals, atol=1e-4), (name, severity)


def test_gaussian_noise_has_the_ladder_standard_deviation_in_signal_units(signals):
    stats = SignalStats.of(signals)
    x = signals.repeat(40, 1)
    for severity, c in zip(SEVERITIES, (0.04, 0.06, 0.08, 0.09, 0.10)):
        noise = corrupt(x, "gaussian_noise", severity, seed=1, stats=stats) - x
        # unit range = 4 std wide, so the noise std is 4 c std in signal units
        assert float(noise.std()) == pytest.approx(4 * c * stats.std, rel=0.03)


def test_contrast_and_brightness_are_the_closed_forms(signals):
    stats = SignalStats.of(signals)
    low = corrupt(signals, "contrast", 5, stats=stats)
    mean = signals.mean(dim=1, keepdim=True)
    torch.testing.assert_close(low, (signals - mean) * 0.15 + mean, rtol=0, atol=1e-5)
    bright = corrupt(signals, "brightness", 5, stats=stats)
    torch.testing.assert_close(bright - signals, torch.full_like(signals, 0.3 * 4 * stats.std), rtol=0, atol=1e-5)


def test_impulse_noise_hits_the_ladder_fraction_with_the_range_ends(signals):
    stats = SignalStats.of(signals)
    x = signals.repeat(50, 1)
    out = corrupt(x, "impulse_noise", 5, stats=stats)
    hit = (out - x).abs() > 1e-6
    assert float(hit.float().mean()) == pytest.approx(0.07, abs=0.006)
    ends = torch.tensor([stats.mean - 2 * stats.std, stats.mean + 2 * stats.std], dtype=torch.float32)
    assert torch.isclose(out[hit][:, None], ends[None], atol=1e-4).any(dim=1).all()


def test_filters_keep_a_constant_signal_constant():
    flat = torch.full((3, 40), 0.7)
    stats = SignalStats(mean=0.0, std=1.0)
    for name in ("gaussian_blur", "defocus_blur", "glass_blur", "motion_blur", "zoom_blur", "elastic_transform",
                 "pixelate"):
        torch.testing.assert_close(corrupt(flat, name, 5, stats=stats), flat, rtol=0, atol=1e-5)


def test_pixelate_is_piecewise_constant_and_jpeg_is_idempotent(signals):
    stats = SignalStats.of(signals)
    blocky = corrupt(signals, "pixelate", 5, stats=stats)
    assert all(len(torch.unique(row)) <= round(40 * 0.65) for row in blocky)
    once = corrupt(signals, "jpeg_compression", 5, stats=stats)
    torch.testing.assert_close(corrupt(once, "jpeg_compression", 5, stats=stats), once, rtol=0, atol=1e-4)


def test_noise_grows_with_severity(signals):
    stats = SignalStats.of(signals)
    for name in ("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise", "gaussian_blur", "zoom_blur",
                 "contrast", "fog"):
        errors = [float((corrupt(signals, name, s, stats=stats) - signals).pow(2).mean()) for s in SEVERITIES]
        assert errors == sorted(errors), name


def test_bad_corruption_names_and_severities_are_refused(signals):
    with pytest.raises(ValueError, match="no 1-D counterpart"):
        corrupt(signals, "frost", 1)
    with pytest.raises(ValueError, match="allowed: gaussian_noise"):
        corrupt(signals, "blurry", 1)
    with pytest.raises(ValueError, match="severity must be one of 1, 2, 3, 4, 5"):
        corrupt(signals, "contrast", 6)


# --------------------------------------------------------------------------- CIFAR-C files

def test_cifar_c_loader_reads_the_severity_block_of_the_published_layout(tmp_path):
    md5s = write_fake_cifar_c(tmp_path, "cifar10", ["fog", "pixelate"], per_severity=4, seed=1,
                              labels=[3, 1, 4, 1])
    raw = np.load(tmp_path / "CIFAR-10-C" / "fog.npy")
    assert raw.shape == (20, 32, 32, 3) and raw.dtype == np.uint8
    x, y = load_cifar_c("cifar10", "fog", 3, tmp_path, checksums=md5s)
    assert x.shape == (4, 3, 32, 32) and x.dtype == torch.float32
    assert y.tolist() == [3, 1, 4, 1]
    expected = torch.from_numpy(raw[8:12]).permute(0, 3, 1, 2).float() / 255
    torch.testing.assert_close(x, expected, rtol=0, atol=0)


def test_cifar_c_missing_folder_names_it_and_the_fetch_command(tmp_path):
    with pytest.raises(DatasetError) as err:
        load_cifar_c("cifar100", "fog", 5, tmp_path)
    message = str(err.value)
    assert "CIFAR-100-C not found in" in message and str(tmp_path) in message
    assert "zenodo.org/records/3555552/files/CIFAR-100-C.tar" in message and "md5sum -c" in message
    assert "2535967" in fetch_command("cifar10") and "56bf5dcef84df0e2308c6dcbcbbd8499" in fetch_command("cifar10")


def test_cifar_c_checksums_and_layout_are_verified(tmp_path):
    md5s = write_fake_cifar_c(tmp_path, "cifar10", ["fog"], per_severity=2)
    with pytest.raises(DatasetError, match="checksum mismatch for fog.npy"):
        load_cifar_c("cifar10", "fog", 1, tmp_path)  # the published md5s
    with pytest.raises(DatasetError, match="missing snow.npy"):
        load_cifar_c("cifar10", "snow", 1, tmp_path, checksums=md5s)
    np.save(tmp_path / "CIFAR-10-C" / "fog.npy", np.zeros((10, 32, 32), dtype=np.uint8))
    from flcore.data.cifar_format import file_md5

    with pytest.raises(DatasetError, match=r"expected uint8 \[5 n, 32, 32, 3\]"):
        load_cifar_c("cifar10", "fog", 1, tmp_path,
                     checksums={**md5s, "fog": file_md5(tmp_path / "CIFAR-10-C" / "fog.npy")})
    assert set(MD5["cifar10"]) == set(MD5["cifar100"]) and len(MD5["cifar10"]) == 20


def test_cifar_test_set_is_normalised_with_the_cifar_statistics(tmp_path):
    from flcore.data import Dataset
    from flcore.data.cifar_stats import CIFAR10_MEAN, CIFAR10_STD

    md5s = write_fake_cifar_c(tmp_path, "cifar10", ["contrast"], per_severity=3)
    images = torch.rand(6, 3, 32, 32)
    dataset = Dataset("cifar10", images, torch.zeros(6, dtype=torch.long), images[:3],
                      torch.zeros(3, dtype=torch.long), 10, CIFAR10_MEAN, CIFAR10_STD, augment=True)
    x, _ = corrupted_test_set(dataset, "contrast", 2, tmp_path, checksums=md5s)
    raw, _ = load_cifar_c("cifar10", "contrast", 2, tmp_path, checksums=md5s)
    mean = torch.tensor(CIFAR10_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(CIFAR10_STD).view(1, 3, 1, 1)
    torch.testing.assert_close(x, (raw - mean) / std)


# --------------------------------------------------------------------------- a stored run

@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLCORE_CACHE", str(tmp_path_factory.getbasetemp() / "flcore-cache"))
        store = tmp_path_factory.mktemp("robust-store")
        summary = run_experiment(resolve_config(scale="smoke", rounds=2), store=store)
    return str(summary["run_dir"])


@pytest.mark.slow  # trains a 2-round smoke run (about 8 s)
def test_corrupted_accuracy_matches_a_hand_evaluation(smoke_run):
    from flcore.analysis import load_run

    frame = corrupted_accuracy(smoke_run, corruptions=["gaussian_noise", "contrast"], severities=[1, 5], seed=2)
    assert list(frame["corruption"]) == ["clean", "gaussian_noise", "gaussian_noise", "contrast", "contrast"]
    assert list(frame["severity"]) == [0, 1, 5, 1, 5]
    run = load_run(smoke_run)
    x = corrupt(run.dataset.test_x, "contrast", 5, seed=2, stats=SignalStats.of(run.dataset.test_x.numpy()))
    with torch.no_grad():
        hand = (run.flat.forward(run.w, x).argmax(1) == run.dataset.test_y).double().mean().item()
    got = frame[(frame["corruption"] == "contrast") & (frame["severity"] == 5)]["accuracy"].item()
    assert got == pytest.approx(hand, abs=1e-12)
    clean_x, clean_y = run.data("test")
    with torch.no_grad():
        clean = (run.flat.forward(run.w, clean_x).argmax(1) == clean_y).double().mean().item()
    assert frame.loc[0, "accuracy"] == pytest.approx(clean, abs=1e-12)
    assert (frame["n"] == run.dataset.test_y.numel()).all()


@pytest.mark.slow
def test_corrupted_accuracy_refuses_image_corruptions_on_signals(smoke_run):
    with pytest.raises(ValueError, match="not available for mnist1d: snow"):
        corrupted_accuracy(smoke_run, corruptions=["snow"])
    with pytest.raises(ValueError, match="severities must be in 1, 2, 3, 4, 5"):
        corrupted_accuracy(smoke_run, severities=[0])


# --------------------------------------------------------------------------- run grids

def test_small_figures_reuse_table2_runs_and_keep_the_sweep_small():
    from flcore.papers.fedsam import runs as fedsam
    from flcore.reproduction.artifacts import get_artifact

    table2 = {s.run_id() for s in fedsam.table2_runs("small")}
    for figure in ("fedsam-fig-6", "fedsam-fig-8"):
        assert {s.run_id() for s in get_artifact(figure).runs("small", (0,))} <= table2
    sweep = get_artifact("fedsam-fig-9").runs("small", (0,))
    ids = {s.run_id() for s in sweep}
    # a grid point at the values Table 2 runs with (the tuned presets at its alpha) is Table 2's
    # run; every other point is a run of its own
    def at_defaults(spec):
        default = fedsam.sam_main_run("CIFAR-100", spec.labels["algorithm"], spec.labels["alpha"], 5, 0,
                                      "small").resolve()
        resolved = spec.resolve()
        return all(getattr(resolved, f) == getattr(default, f) for f in ("rho", "eta"))
    assert ids - table2 == {s.run_id() for s in sweep if not at_defaults(s)}
    assert {s.run_id() for s in sweep if at_defaults(s)} <= table2
    assert len(ids - table2) == 20  # 7 distinct points x 3 alphas, less FedSAM rho 0.01 at alpha 1000 (tuned)
    for spec in sweep:
        resolved = spec.resolve()
        assert getattr(resolved, spec.labels["parameter"]) == pytest.approx(spec.labels["value"])
    fig10 = get_artifact("fedsam-fig-10").runs("small", (0,))
    assert {s.method for s in fig10} == {"fedavgm", "fedavgm+swa", "fedavgm+asam", "fedavgm+asam+swa",
                                         "fedsam+swa", "fedasam+swa"}
    assert all(s.config["per_round"] == 5 and s.config["alpha"] == 0.0 for s in fig10)


def test_paper_figures_keep_the_paper_protocol():
    from flcore.reproduction.artifacts import get_artifact

    sweep = get_artifact("fedsam-fig-9").runs("paper", (0,))
    assert len(sweep) == (6 + 7 + 4) * 3 and {s.config["dataset"] for s in sweep} == {"cifar100"}
    assert len({s.run_id() for s in sweep}) == (6 + 7 + 4 - 1) * 3  # (rho 0.5, eta 0.2) is in (b) and (c)
    for figure in ("fedsam-fig-6", "fedsam-fig-8", "fedsam-fig-10"):
        specs = get_artifact(figure).runs("paper", (0,))
        assert {s.config["per_round"] for s in specs} == {20}
        assert {s.config["dataset"] for s in specs} == {"cifar10", "cifar100"}
    fig10 = get_artifact("fedsam-fig-10").runs("paper", (0,))
    assert {(s.labels["dataset"], s.method) for s in fig10 if s.method in ("fedsam+swa", "fedasam+swa")} == {
        ("CIFAR-100", "fedsam+swa"), ("CIFAR-10", "fedasam+swa")}


@pytest.mark.slow
def test_runs_frame_evaluation_joins_labels_and_evaluates_a_shared_run_once(smoke_run, monkeypatch):
    import pandas as pd

    from flcore.analysis import robustness

    calls = []
    original = robustness._evaluate
    monkeypatch.setattr(robustness, "_evaluate", lambda run, *a: calls.append(run.path) or original(run, *a))
    frame = pd.DataFrame([{"algorithm": "A", "run_id": "x", "status": "finished", "run_dir": smoke_run},
                          {"algorithm": "B", "run_id": "x", "status": "finished", "run_dir": smoke_run},
                          {"algorithm": "C", "run_id": None, "status": "pending", "run_dir": None}])
    out = robustness.corrupted_accuracy_of_runs(frame, corruptions=["fog"], severities=[5])
    assert len(calls) == 1 and list(out["algorithm"]) == ["A", "A", "B", "B"]
    assert list(out["corruption"]) == ["clean", "fog"] * 2
    direct = corrupted_accuracy(smoke_run, corruptions=["fog"], severities=[5])
    assert list(out["accuracy"][:2]) == list(direct["accuracy"])


@pytest.mark.slow
def test_a_cifar_run_is_evaluated_on_the_cifar_c_files(tmp_path):
    from flcore.analysis import load_run
    from flcore.data import write_fake_cifar
    from flcore.data.cifar import expected_checksums
    from flcore.data.cifar_stats import CIFAR10_MEAN, CIFAR10_STD

    data = tmp_path / "data"
    md5s = write_fake_cifar(data, "cifar10", num_train=40, num_test=10)
    c_md5s = write_fake_cifar_c(data, "cifar10", ["fog", "pixelate"], per_severity=6, seed=4)
    config = resolve_config(dataset="cifar10", model="cnn", scale="smoke", method="fedavg", clients=2, per_round=1,
                            samples_per_client=20, rounds=1, eval_every=1, data_root=str(data))
    with expected_checksums("cifar10", md5s):
        summary = run_experiment(config, store=tmp_path / "runs")
        frame = corrupted_accuracy(summary["run_dir"], corruptions=["fog", "pixelate"], severities=[2, 4],
                                   data_root=data, checksums=c_md5s)
        run = load_run(summary["run_dir"], data_root=str(data))
    with pytest.raises(DatasetError, match="missing frost.npy"):
        with expected_checksums("cifar10", md5s):
            corrupted_accuracy(summary["run_dir"], corruptions=["frost"], data_root=data, checksums=c_md5s)
    assert frame["corruption"].tolist() == ["clean", "fog", "fog", "pixelate", "pixelate"]
    assert frame["n"].tolist() == [10, 6, 6, 6, 6]
    raw, labels = load_cifar_c("cifar10", "pixelate", 4, data, checksums=c_md5s)
    x = (raw - torch.tensor(CIFAR10_MEAN).view(1, 3, 1, 1)) / torch.tensor(CIFAR10_STD).view(1, 3, 1, 1)
    with torch.no_grad():
        hand = (run.flat.forward(run.w, x).argmax(1) == labels).double().mean().item()
    got = frame[(frame["corruption"] == "pixelate") & (frame["severity"] == 4)]
    assert got["accuracy"].item() == pytest.approx(hand, abs=1e-12) and got["n"].item() == 6


@pytest.mark.slow
def test_a_subset_is_the_same_for_the_clean_and_the_corrupted_sets(smoke_run):
    from flcore.analysis import load_run

    frame = corrupted_accuracy(smoke_run, corruptions=["fog"], severities=[5], samples=50)
    assert frame["n"].tolist() == [50, 50]
    run = load_run(smoke_run)
    x, y = run.data("test", samples=50)
    with torch.no_grad():
        clean = (run.flat.forward(run.w, x).argmax(1) == y).double().mean().item()
    assert frame.loc[0, "accuracy"] == pytest.approx(clean, abs=1e-12)
    keep = torch.isin(run.dataset.test_x[:, 0], x[:, 0])  # the subset's rows (first samples are distinct)
    full = corrupt(run.dataset.test_x, "fog", 5, stats=SignalStats.of(run.dataset.test_x.numpy()))
    with torch.no_grad():
        hand = (run.flat.forward(run.w, full[keep]).argmax(1) == run.dataset.test_y[keep]).double().mean().item()
    assert frame.loc[1, "accuracy"] == pytest.approx(hand, abs=1e-12)


class _RecordingPage:
    def __init__(self):
        self.shown = []

    def table(self, frame, caption, downloads=None, show=None):
        self.shown.append((frame, caption))


def test_figure_pages_count_the_evaluated_runs():
    import pandas as pd

    from flcore.papers.fedsam import results as robustness

    runs = pd.DataFrame({c: [1, 2, 3] for c in robustness.EVALUATED_COLUMNS} | {
        "status": ["finished", "failed", "finished"], "run_dir": ["a", "b", "c"]})
    page = _RecordingPage()
    robustness.show_evaluated_runs(page, runs)
    frame, caption = page.shown[0]
    assert list(frame.columns) == robustness.EVALUATED_COLUMNS
    assert caption.startswith("The final models evaluated here: 2 finished runs of 3; mean_last_100")
    robustness.show_evaluated_runs(page, runs, "{finished} of {total} (shared)")
    assert "here: 2 of 3 (shared); mean_last_100" in page.shown[1][1]


def test_corrupted_scores_add_percentages_and_are_none_without_the_data(monkeypatch):
    import pandas as pd

    from flcore.papers.fedsam import results as robustness

    monkeypatch.setattr(robustness, "corrupted_accuracy_of_runs",
                        lambda runs, **kw: pd.DataFrame({"accuracy": [0.25, 0.5], "severity": kw["severities"][:2]}))
    scores = robustness.corrupted_scores(pd.DataFrame(), device="cpu", severities=[5, 5])
    assert list(scores["accuracy (%)"]) == [25.0, 50.0]

    def missing(runs, **kw):
        raise DatasetError("CIFAR-10-C is missing")

    monkeypatch.setattr(robustness, "corrupted_accuracy_of_runs", missing)
    assert robustness.corrupted_scores(pd.DataFrame(), device="cpu") is None
