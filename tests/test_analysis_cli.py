"""``flcore analyze`` on a stored smoke run: JSON fields, validation before compute, io."""
import json
import shutil

import pytest
import torch

from flcore import resolve_config, run_experiment
from flcore.analysis import load_run
from flcore.cli.analyze import add_analyze_parser, main, run_analyze
from flcore.store import Run


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A finished 2-round smoke run, and a copy of it with perturbed final weights."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLCORE_CACHE", str(tmp_path_factory.getbasetemp() / "flcore-cache"))
        store = tmp_path_factory.mktemp("analysis-store")
        summary = run_experiment(resolve_config(scale="smoke", rounds=2), store=store)
    run_a = summary["run_dir"]
    run_b = store / "copy-b"
    shutil.copytree(run_a, run_b)
    state = torch.load(run_b / "final_model.pt", weights_only=True)
    gen = torch.Generator().manual_seed(0)
    state = {k: v + 0.2 * torch.randn(v.shape, generator=gen) for k, v in state.items()}
    # written through the store, so that its digest is recorded (a file put there by hand is refused)
    Run(run_b, run_b.name).save_final_model(state)
    return str(run_a), str(run_b)


def _json(capsys, argv):
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out.strip().splitlines()[-1])


def test_load_run_rebuilds_the_stored_model(runs):
    loaded = load_run(runs[0])
    state = torch.load(f"{runs[0]}/final_model.pt", weights_only=True)
    torch.testing.assert_close(loaded.w.cpu(), torch.cat([v.reshape(-1) for v in state.values()]))
    assert loaded.source == "final" and loaded.config.model == "mnist1d_cnn"
    x, y = loaded.data("test", samples=30)
    assert x.shape[0] == 30 and torch.equal(x, loaded.data("test", samples=30)[0])
    assert sum(int(i.numel()) for i in loaded.client_indices()) == loaded.dataset.train_x.shape[0]


def test_hessian_json(runs, capsys):
    out = _json(capsys, ["hessian", "--run", runs[0], "--top-k", "2", "--iters", "5", "--trace",
                         "--trace-samples", "3", "--samples", "100", "--device", "cpu", "--json"])
    assert out["tool"] == "hessian" and out["samples"] == 100 and out["split"] == "train"
    assert len(out["eigenvalues"]) == 2
    assert abs(out["eigenvalues"][0]) >= abs(out["eigenvalues"][1])
    assert isinstance(out["trace"], float) and "trace_std_error" in out
    lanczos = _json(capsys, ["analyze", "hessian", "--run", runs[0], "--top-k", "2", "--iters", "6",
                             "--method", "lanczos", "--samples", "100", "--json"])
    assert lanczos["eigenvalues"][0] >= lanczos["eigenvalues"][1]
    assert lanczos["eigenvalues"][0] == pytest.approx(out["eigenvalues"][0], rel=0.2)


def test_barrier_json(runs, capsys):
    out = _json(capsys, ["barrier", "--run", runs[0], "--run-b", runs[1], "--points", "5",
                         "--samples", "100", "--split", "test", "--json"])
    assert out["ts"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert len(out["loss"]) == 5 and len(out["error"]) == 5
    assert out["barrier"] >= 0.0 and 0.0 <= out["barrier_t"] <= 1.0
    same = _json(capsys, ["barrier", "--run", runs[0], "--run-b", runs[0], "--points", "3",
                          "--samples", "50", "--json"])
    assert same["barrier"] == pytest.approx(0.0, abs=1e-6)


def test_landscape_and_lpf_json(runs, capsys, tmp_path):
    plot = tmp_path / "surface.png"
    out = _json(capsys, ["landscape", "--run", runs[0], "--grid", "3", "--samples", "40",
                         "--plot", str(plot), "--json"])
    assert len(out["loss"]) == 3 and len(out["loss"][0]) == 3
    assert out["loss"][1][1] == pytest.approx(out["center_loss"], rel=1e-5)
    assert plot.is_file()
    line = _json(capsys, ["landscape", "--run", runs[0], "--dim", "1", "--grid", "5", "--samples", "40", "--json"])
    assert len(line["alphas"]) == 5
    lp = _json(capsys, ["lpf", "--run", runs[0], "--m", "3", "--sigma", "0", "--samples", "40", "--json"])
    assert lp["lpf"] == pytest.approx(lp["loss"], rel=1e-6) and lp["m"] == 3


@pytest.mark.parametrize("argv, field", [
    (["hessian", "--top-k", "0"], "top_k"),
    (["hessian", "--method", "arnoldi"], "method"),
    (["hessian", "--split", "valid"], "split"),
    (["landscape", "--grid", "1"], "grid"),
    (["landscape", "--span", "-1"], "span"),
    (["lpf", "--sigma", "-0.5"], "sigma"),
    (["lpf", "--m", "0"], "m"),
    (["hessian", "--samples", "0"], "samples"),
    (["hessian", "--device", "tpu"], "device"),
])
def test_bad_argument_exits_2_naming_the_field(runs, capsys, argv, field):
    assert main([argv[0], "--run", runs[0], *argv[1:]]) == 2
    err = capsys.readouterr().err
    assert f"'{field}'" in err


def test_bad_run_directories_exit_2(runs, capsys, tmp_path):
    assert main(["hessian", "--run", str(tmp_path / "nope")]) == 2
    assert "'run'" in capsys.readouterr().err
    assert main(["barrier", "--run", runs[0], "--run-b", str(tmp_path)]) == 2
    assert "'run_b'" in capsys.readouterr().err


def test_wires_into_the_main_cli_parser(runs, capsys):
    from flcore.cli.main import _Parser

    parser = _Parser(prog="flcore")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    add_analyze_parser(sub)
    args = parser.parse_args(["analyze", "lpf", "--run", runs[0], "--m", "2", "--samples", "20", "--json"])
    assert args.command == "analyze" and args.analyze_tool == "lpf"
    assert run_analyze(args) == 0
    assert json.loads(capsys.readouterr().out)["tool"] == "lpf"
    with pytest.raises(SystemExit) as exc:  # argparse's own errors: exit 2 too
        parser.parse_args(["analyze", "hessian", "--run", runs[0], "--top-k", "two"])
    assert exc.value.code == 2
