"""Hyper-parameters as the parts that read them declare them (docs/algorithms.md 7.1).

A part carries its arguments' declarations, as an optax transform carries its arguments:
``@declares(RHO)`` on :class:`~flcore.algorithms.perturbation.SAMPerturbation` says that
the config field ``rho`` is a non-negative float, 0.05 by default, that may differ between
the rows of one batch.  A generic part that methods parametrise under their own names
(FedDyn's ``DynDual`` is FedSMOO's with ``1/smoo_beta``) leaves the name to the recipe
module, which declares it with :func:`declare`.

Everything the configuration says of a method hyper-parameter is read from here
(:mod:`flcore.config.fields`: defaults, allowed choices, the fields added after runs were
stored; :mod:`flcore.config.validation`: ranges and caps; the Configuration page's table;
:mod:`flcore.sim.multi_run`: the per-row columns).  Which methods read a field is found by
building them (:mod:`flcore.config.method_reads`), not declared.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_ROUNDS", "Hyperparameter", "declare", "declared", "declares", "row_columns_of"]

#: Cap of round counts (rounds, windows, warm-ups): far above any protocol of the five
#: papers (20,000 rounds), it stops a mistyped count from being accepted and running forever.
MAX_ROUNDS = 1_000_000

_KINDS = {"float": float, "int": int, "bool": bool, "str": str}


@dataclass(frozen=True)
class Hyperparameter:
    """One config field a part reads.

    ``kind``: ``float``, ``int``, ``bool`` or ``str``; ``optional``: ``None`` is allowed (its
    meaning in ``doc``).  ``low``/``high`` bound the value (``low_open``/``high_open``: the
    bound itself is excluded); ``cap``: a sanity cap on a count; ``at_most_field``: a
    config field the value may not exceed (``rounds``).  ``choices``: the allowed strings.
    ``per_row``: runs batched together may differ in it (a ``[K, 1]`` column).  ``added``:
    it came after runs were stored, so it enters a run id only when set away from its
    default (stored runs keep their ids).
    """

    name: str
    kind: str
    default: Any
    doc: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    cap: int | None = None
    at_most_field: str | None = None
    optional: bool = False
    per_row: bool = False
    added: bool = False

    @classmethod
    def option(cls, name: str, choices: tuple[str, ...], doc: str, **kwargs) -> Hyperparameter:
        """A string option whose default is its first choice (most choose between a paper's
        rule, first, and its official code's)."""
        return cls(name, "str", choices[0], doc, choices=tuple(choices), **kwargs)

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"hyper-parameter {self.name!r}: kind {self.kind!r} is not one of {', '.join(_KINDS)}")
        if self.choices and self.default not in self.choices:
            raise ValueError(f"hyper-parameter {self.name!r}: default {self.default!r} is not a choice")

    @property
    def annotation(self) -> str:
        """The type as a dataclass field would annotate it (``int | None``)."""
        return f"{self.kind} | None" if self.optional else self.kind

    def range_text(self) -> str | None:
        """The allowed range as the checks word it (``>= 0``, ``in [0, 1)``), or ``None``."""
        if self.low is None and self.high is None:
            return None
        if self.high is None:
            return f"{'>' if self.low_open else '>='} {self.low:g}"
        if self.low is None:
            return f"{'<' if self.high_open else '<='} {self.high:g}"
        return (f"in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}"
                f"{')' if self.high_open else ']'}")

    def out_of_range(self, value: Any) -> bool:
        """Whether ``value`` (not ``None``) lies outside ``low``..``high``."""
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return True
        return self.high is not None and (value >= self.high if self.high_open else value > self.high)


#: Every declared hyper-parameter by name, in declaration order.
_DECLARED: dict[str, Hyperparameter] = {}


def declare(*hyperparameters: Hyperparameter) -> tuple[Hyperparameter, ...]:
    """Register ``hyperparameters``; a name declared twice must be the same declaration."""
    for hp in hyperparameters:
        if _DECLARED.setdefault(hp.name, hp) != hp:
            raise ValueError(f"hyper-parameter {hp.name!r} declared twice, differently")
    return hyperparameters


def declares(*hyperparameters: Hyperparameter):
    """Class decorator: the part reads ``hyperparameters`` (registered with :func:`declare`);
    the class gets ``hyperparameters`` and ``row_columns`` (the names it may take per row)."""
    declare(*hyperparameters)

    def mark(cls):
        cls.hyperparameters = (*getattr(cls, "hyperparameters", ()), *hyperparameters)
        cls.row_columns = tuple(hp.name for hp in cls.hyperparameters if hp.per_row)
        return cls
    return mark


def declared() -> dict[str, Hyperparameter]:
    """Every declared hyper-parameter by name (import :mod:`flcore.algorithms` first: the
    part and recipe modules declare theirs on import)."""
    return dict(_DECLARED)


def row_columns_of(part_type: type) -> tuple[str, ...]:
    """The fields a part of ``part_type`` may take per row of a batch (declared ``per_row``)."""
    return getattr(part_type, "row_columns", ())
