"""``flcore``'s command line called in-process, as the tests of the store and of bundles do."""
from __future__ import annotations

from flcore.cli.main import main as cli


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``(exit status, stdout, stderr)`` of ``flcore ARGV...``."""
    capsys.readouterr()
    try:
        code = cli(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err
