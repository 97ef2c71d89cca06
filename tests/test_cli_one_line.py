"""Reliability round 4, the command line: a bad --workers, --max-rounds, $FLCORE_MAX_ROUNDS or
--store is one line and exit status 2 before anything runs, and $FLCORE_MAX_ROUNDS caps a
plan as it caps the notebooks' runs."""
import pytest
from cli_runner import run_cli

from flcore.cpus import available_cpus


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("argv", [["sweep", "--method", "fedavg", "--plan"], ["tune", "--plan"],
                                  ["reproduce", "fedsam-table-2", "--plan"]])
def test_workers_are_bounded_by_the_cpus_this_process_may_use(capsys, argv, tmp_path):
    code, _, err = run_cli(capsys, *argv, "--store", str(tmp_path), "--workers", str(available_cpus() + 1))
    line = _one_line(err)
    assert code == 2 and f"must be in 1..{available_cpus()}" in line and "--workers" in line


def test_a_round_cap_above_the_configs_is_refused_before_the_plan(capsys, tmp_path):
    code, _, err = run_cli(capsys, "reproduce", "fedsam-table-2", "--plan", "--max-rounds", "99999999",
                           "--store", str(tmp_path))
    assert code == 2 and "must be in 1..1000000" in _one_line(err)


def test_the_environments_round_cap_is_read_by_the_plan_and_checked(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("FLCORE_MAX_ROUNDS", "abc")
    code, _, err = run_cli(capsys, "reproduce", "fedsam-table-2", "--plan", "--store", str(tmp_path))
    assert code == 2 and "$FLCORE_MAX_ROUNDS: expected a positive integer" in _one_line(err)
    code, _, err = run_cli(capsys, "claims", "--scale", "smoke", "--plan", "--store", str(tmp_path))
    assert code == 2 and "$FLCORE_MAX_ROUNDS" in _one_line(err)
    monkeypatch.setenv("FLCORE_MAX_ROUNDS", "3")
    code, out, _ = run_cli(capsys, "claims", "--scale", "smoke", "--plan", "--store", str(tmp_path))
    assert code == 0 and "capped at 3 rounds" in out.splitlines()[0]
    # a plain verdict listing trains nothing and ignores the cap, as before
    code, _, _ = run_cli(capsys, "claims", "--scale", "smoke", "--store", str(tmp_path))
    assert code == 0


@pytest.mark.parametrize("argv", [["claims", "--scale", "smoke", "--decide", "fedsam-sam-improves-fedavg"],
                                  ["book", "--scale", "smoke"], ["tune", "--plan"], ["bundle", "import", "x.tar"]])
def test_a_store_that_is_a_file_is_one_line(capsys, argv, tmp_path):
    store = tmp_path / "file"
    store.write_text("not a store")
    code, _, err = run_cli(capsys, *argv, "--store", str(store))
    assert code == 2 and "is not a directory" in _one_line(err) and store.read_text() == "not a store"


@pytest.mark.parametrize("config,says", [("repository: [\n", "is not readable YAML"),
                                         ("- a list\n", "must hold a mapping"),
                                         ("repository:\n  url: ftp://example.org/x\n", "must look like https://github.com")])
def test_a_broken_book_config_is_one_line_before_anything_is_written(capsys, tmp_path, config, says):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_config.yml").write_text(config)
    for command in ("book", "reproduce"):
        argv = [command, *(["--all"] if command == "reproduce" else []), "--scale", "smoke", "--root", str(tmp_path),
                "--store", str(tmp_path / "store")]
        code, _, err = run_cli(capsys, *argv)
        assert code == 2 and says in _one_line(err) and "_config.yml" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["_config.yml", "notebooks"]
