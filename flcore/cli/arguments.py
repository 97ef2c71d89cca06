"""Argument types shared by the command-line tools: one clear line on a bad value."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from flcore.config import parse_int
from flcore.cpus import available_cpus
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


def add_workers_option(p: argparse.ArgumentParser, default_help: str) -> None:
    """``--workers``: worker processes, at most the CPUs this process may run on (each starts
    its own torch; more than the cores only slows every one of them)."""
    limit = available_cpus()

    def parse(text: str) -> int:
        try:
            return count_option(1, limit)(text)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"{exc} (the CPUs this process may use: {limit})") from None
    p.add_argument("--workers", type=parse, default=None, help=f"worker processes, 1..{limit} ({default_help})")


def store_path(text: str) -> str:
    """An argparse type: ``--store`` names a directory, or nothing yet (never a file or a device)."""
    path = Path(text).expanduser()
    if os.path.lexists(path) and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{quote(str(path))} is not a directory (a run store is one)")
    return text


def add_store_option(p: argparse.ArgumentParser) -> None:
    """``--store``: the run store, ``$FLCORE_STORE`` or ``runs`` by default."""
    p.add_argument("--store", type=store_path, default=os.environ.get("FLCORE_STORE") or "runs",
                   help="run store directory (default: $FLCORE_STORE or runs)")


def seed_list(text: str) -> list[int]:
    """One ``--seeds`` value: a whole number >= 0 or a comma list of them (``0,1,2``)."""
    values = []
    for part in text.split(","):
        try:
            value = parse_int("seed", part)
        except ConfigError:
            raise argparse.ArgumentTypeError(f"expected whole numbers >= 0 (e.g. 0 1 2 or 0,1,2), got "
                                             f"{quote(text)}") from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"got {value}; seeds are whole numbers >= 0 (e.g. 0,1,2)")
        values.append(value)
    return values


class DistinctSeeds(argparse.Action):
    """``--seeds 0 1 2`` or ``--seeds 0,1,2``: one list of distinct seeds."""

    def __call__(self, parser, namespace, values, option_string=None):
        seeds = [seed for group in values for seed in group]
        twice = sorted({seed for seed in seeds if seeds.count(seed) > 1})
        if twice:
            parser.error(f"argument --seeds: seed {twice[0]} given twice; give distinct whole numbers >= 0 "
                         "(e.g. 0,1,2)")
        setattr(namespace, self.dest, seeds)


def add_seeds_option(p: argparse.ArgumentParser) -> None:
    """``--seeds``: the seeds every configuration is run with (0 by default), as ``0 1 2``
    or ``0,1,2``; a seed given twice is refused."""
    p.add_argument("--seeds", type=seed_list, nargs="+", action=DistinctSeeds, default=[0],
                   help="seeds of every configuration, e.g. 0 1 2 or 0,1,2 (default: 0)")
