"""Argument types shared by the command-line tools: one clear line on a bad value."""
from __future__ import annotations

import argparse
import os

from flcore.config import parse_int
from flcore.errors import ConfigError, quote


def count_option(low: int, high: int | None = None):
    """An argparse type: a whole number in ``low..high`` (no upper bound when ``high`` is
    None); the error quotes the value given."""
    def parse(text: str) -> int:
        try:
            value = parse_int("value", text)
        except ConfigError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {quote(text)}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"got {value}; must be " + (f"in {low}..{high}" if high is not None
                                                                          else f">= {low}"))
        return value
    return parse


def add_store_option(p: argparse.ArgumentParser) -> None:
    """``--store``: the run store, ``$FLCORE_STORE`` or ``runs`` by default."""
    p.add_argument("--store", default=os.environ.get("FLCORE_STORE") or "runs",
                   help="run store directory (default: $FLCORE_STORE or runs)")


def add_seeds_option(p: argparse.ArgumentParser) -> None:
    """``--seeds``: the seeds every configuration is run with (0 by default)."""
    p.add_argument("--seeds", type=count_option(0), nargs="+", default=[0],
                   help="seeds of every configuration (default: 0)")
