"""The book's reference pages (book/reference/) follow the code they document.

- Command line: every subcommand and every option its ``--help`` lists is on the page (the
  ``analyze`` tools' options on the Analysis page, ``bundle export``'s and ``bundle import``'s
  on the Command line page); the config-field flags of ``run`` and
  ``sweep`` are on the Configuration page as fields.
- Run store: the exit-status table of ``flcore run`` has exactly the statuses the command
  returns.
- Configuration: the documented sanity caps are the ones enforced (the cap passes, one
  more is refused naming the field).
"""
from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

from flcore.cli import EXIT_BUSY, EXIT_DAMAGED, EXIT_USAGE, main
from flcore.config import resolve_config
from flcore.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "book" / "reference"
COMMANDS = ("run", "sweep", "runs", "methods", "analyze", "reproduce", "claims", "book", "bundle", "tune")
ANALYZE_TOOLS = ("hessian", "landscape", "barrier", "lpf")


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def _options(text: str) -> set[str]:
    """The long options a help text lists (before its descriptions, from the usage lines)."""
    usage = text.split("\n\n", 1)[0]
    return set(re.findall(r"--[a-z][a-z0-9-]*", usage)) - {"--help"}


def test_every_subcommand_is_documented(capsys):
    listed = re.search(r"\{([a-z,]+)\}", _help(capsys)).group(1).split(",")
    assert sorted(listed) == sorted(COMMANDS)
    page = (REFERENCE / "command-line.md").read_text()
    for command in COMMANDS:
        assert f"## `flcore {command}`" in page, command


def test_every_option_of_every_command_is_documented(capsys):
    page = (REFERENCE / "command-line.md").read_text()
    fields = set(re.findall(r"`([a-z0-9_]+)`", (REFERENCE / "configuration.md").read_text()))
    for command in COMMANDS:
        options = _options(_help(capsys, command))
        if command == "analyze":
            assert not options  # its options belong to its tools
            continue
        if command == "bundle":  # its options belong to export and import
            assert not options
            for action in ("export", "import"):
                for option in sorted(_options(_help(capsys, "bundle", action))):
                    assert f"`{option}" in page, f"flcore bundle {action} {option} is not on the Command line page"
            continue
        for option in sorted(options):
            if f"`{option}" in page:
                continue
            assert command in ("run", "sweep"), f"flcore {command} {option} is not on the Command line page"
            assert option[2:].replace("-", "_") in fields, f"config field of {option} is not on the Configuration page"


def test_every_analyze_tool_and_its_options_are_documented(capsys):
    page = (REFERENCE / "analysis.md").read_text()
    for tool in ANALYZE_TOOLS:
        assert f"`{tool}`" in page
        for option in sorted(_options(_help(capsys, "analyze", tool))):
            assert f"`{option}" in page, f"flcore analyze {tool} {option} is not on the Analysis page"


def test_exit_status_table_of_flcore_run_matches_the_command():
    page = (REFERENCE / "run-store.md").read_text()
    table = page.split("## Exit statuses of `flcore run`", 1)[1]
    statuses = {int(code) for code in re.findall(r"^\| (\d+) \|", table, re.M)}
    assert statuses == {0, 1, EXIT_USAGE, EXIT_DAMAGED, EXIT_BUSY, 128 + signal.SIGINT, 128 + signal.SIGTERM,
                        128 + signal.SIGHUP}


@pytest.mark.parametrize("field, cap", [("rounds", 1_000_000), ("local_epochs", 1_000),
                                        ("local_steps", 1_000_000), ("eval_batch_size", 1_000_000)])
def test_documented_sanity_caps_are_enforced(field, cap):
    page = " ".join((REFERENCE / "configuration.md").read_text().split())
    assert re.search(rf"`{field}`[^;]*<= {cap:,}" if field != "eval_batch_size" else rf"`{field}`[^;]* in 1\.\.{cap:,}",
                     page), f"the cap of {field} is not on the Configuration page"
    resolve_config({"scale": "smoke", field: cap})
    with pytest.raises(ConfigError, match=field):
        resolve_config({"scale": "smoke", field: cap + 1})


def test_the_configuration_pages_hyperparameter_table_is_generated_from_the_declarations():
    from flcore.report.hyperparameter_reference import render_hyperparameter_table, replace_table

    page = (REFERENCE / "configuration.md").read_text()
    assert render_hyperparameter_table() in page, (
        "regenerate: python -m flcore.report.hyperparameter_reference book/reference/configuration.md")
    assert replace_table(page) == page
    assert "| `fedwmsam_alpha` | float | `0.1` | in (0, 1) | no | `fedwmsam` |" in page
