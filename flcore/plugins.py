"""Modules kept outside flcore, named in an environment variable and imported on start:
methods (``$FLCORE_METHODS``, :mod:`flcore.algorithms.registry`) and papers
(``$FLCORE_PAPERS``, ``flcore.papers``)."""
from __future__ import annotations

import importlib
import os


def import_named(variable: str, kind: str, done: str) -> list[str]:
    """Import every module named in ``$variable`` (comma-separated names on the Python path)
    and return one line per module that could not be imported: importing flcore goes on
    without it, so ``flcore --help`` and the Python API still work, and every command of the
    command line refuses to run, printing the first line (flcore.cli.main).  ``kind`` names
    such a module (``package``), ``done`` what importing it does (``registered``)."""
    problems = []
    for name in filter(None, (part.strip() for part in os.environ.get(variable, "").split(","))):
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - someone else's module: whatever it raises is reported
            text = " ".join(str(exc).split())[:300]
            problems.append(f"${variable} names the {kind} {name[:80]!r}, which could not be {done} "
                            f"({type(exc).__name__}: {text}); fix it or remove it from ${variable}")
    return problems
