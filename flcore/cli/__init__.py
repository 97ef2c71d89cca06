"""The ``flcore`` command line: one module per group of commands.

- :mod:`.main`: ``flcore run``, ``sweep``, ``runs``, ``methods`` and the entry point;
- :mod:`.analyze`: ``flcore analyze hessian|landscape|barrier|lpf``;
- :mod:`.reproduce`: ``flcore reproduce``, ``book`` and ``claims``.
"""
from flcore.cli.main import EXIT_BUSY, EXIT_DAMAGED, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, build_parser, main

__all__ = ["EXIT_BUSY", "EXIT_DAMAGED", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_USAGE", "build_parser", "main"]
