"""The ``precision`` config field (fp32 | tf32 | bf16): validated, recorded, in the run id
only when not fp32, and in force while a run trains and evaluates."""
import pytest
import torch

from flcore import resolve_config
from flcore.algorithms import Batch
from flcore.cli.main import main
from flcore.errors import ConfigError
from flcore.flat import FlatModel
from flcore.models import build_model
from flcore.sim import Simulation, build_federated_data
from flcore.sim.precision import precision_mode


def _final(**overrides):
    cfg = resolve_config(scale="smoke", method="fedsam", rounds=2, **overrides)
    sim = Simulation(cfg, build_federated_data(cfg, torch.device("cpu")), torch.device("cpu"), None)
    sim.run_rounds()
    return sim


def test_default_is_fp32_and_leaves_the_run_id_unchanged():
    cfg = resolve_config(scale="smoke", method="fedsam")
    assert cfg.precision == "fp32" and cfg.to_dict()["precision"] == "fp32"
    assert "precision" not in cfg.canonical()  # ids of runs stored before the field stay
    assert cfg.replace(precision="fp32").run_id() == cfg.run_id()
    ids = {p: resolve_config(scale="smoke", method="fedsam", precision=p).run_id() for p in ("fp32", "tf32", "bf16")}
    assert len(set(ids.values())) == 3


def test_unknown_precision_is_one_clear_error():
    with pytest.raises(ConfigError, match="precision.*fp32, tf32, bf16"):
        resolve_config(scale="smoke", precision="fp16")


def test_cli_rejects_an_unknown_precision_with_exit_2(tmp_path, capsys):
    code = main(["run", "--scale", "smoke", "--precision", "fp16", "--store", str(tmp_path / "runs")])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "precision" in err[0]
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


@pytest.mark.parametrize("precision,mode", [("fp32", "ieee"), ("tf32", "tf32"), ("bf16", "ieee")])
def test_precision_mode_sets_tf32_and_restores_it(precision, mode):
    matmul, conv = torch.backends.cuda.matmul, torch.backends.cudnn.conv
    before = (matmul.fp32_precision, conv.fp32_precision)
    with pytest.raises(RuntimeError, match="inside"):
        with precision_mode(precision, "cpu"):
            assert (matmul.fp32_precision, conv.fp32_precision) == (mode, mode)
            assert torch.is_autocast_enabled("cpu") == (precision == "bf16")
            raise RuntimeError("inside")
    assert (matmul.fp32_precision, conv.fp32_precision) == before
    assert not torch.is_autocast_enabled("cpu")


def test_bf16_autocasts_local_training_and_tf32_is_fp32_on_the_cpu():
    fp32 = _final(precision="fp32")
    tf32 = _final(precision="tf32")
    bf16 = _final(precision="bf16")
    torch.testing.assert_close(tf32.w, fp32.w, rtol=0, atol=0)  # TF32 exists only on CUDA
    assert bf16.w.dtype == torch.float32  # parameters keep their dtype
    assert not torch.equal(bf16.w, fp32.w)  # bf16 arithmetic did run
    acc, loss = bf16.evaluate()
    assert 0 <= acc <= 1 and torch.isfinite(torch.tensor(loss))


@pytest.mark.parametrize("batched", [False, True])
def test_bf16_gradient_is_the_float32_one_to_bf16_rounding(batched):
    """One gradient under ``precision_mode("bf16")``: float32 out, within a few percent of
    the float32 gradient (bf16 keeps 8 mantissa bits; measured 3-4% on this model), not equal."""
    torch.manual_seed(0)
    flat = FlatModel(build_model("mnist1d_cnn", (40,), 10))
    W = flat.flatten().expand(3, -1).clone()
    batch = Batch(x=torch.randn(3, 20, 40), y=torch.randint(0, 10, (3, 20)), weight=torch.ones(3, 20),
                  active=torch.ones(3, dtype=torch.bool))
    grad_fn = flat.grad_fn(batched=batched)
    _, exact = grad_fn(W, batch)
    with precision_mode("bf16", "cpu"):
        _, rounded = grad_fn(W, batch)
    assert rounded.dtype == torch.float32
    error = ((rounded - exact).norm() / exact.norm()).item()
    assert 1e-4 < error < 0.1


class _RecordingSteps:
    """``client_update`` that records cuDNN's float32 mode at every local step."""

    def __init__(self, inner):
        self.inner, self.modes = inner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def step(self, *args, **kwargs):
        self.modes.append(torch.backends.cudnn.conv.fp32_precision)
        return self.inner.step(*args, **kwargs)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_fp32_means_ieee_float32_on_cuda_while_training():
    cfg = resolve_config(scale="smoke", method="fedsam", rounds=1, device="cuda", precision="fp32")
    device = torch.device("cuda")
    sim = Simulation(cfg, build_federated_data(cfg, device), device, None)
    sim.client_update = _RecordingSteps(sim.client_update)
    sim.step()
    assert sim.client_update.modes and set(sim.client_update.modes) == {"ieee"}
