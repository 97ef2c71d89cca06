"""Every method by name: the recipe modules' methods, registered in one fixed order.

The order is :mod:`flcore.algorithms.methods` (FedAvg, FedOpt, FedSAM/FedASAM),
:mod:`flcore.algorithms.recipes_baselines`, :mod:`flcore.algorithms.recipes_papers`, then
the papers' ``X+swa``/``X+swalr``/``X+ima`` wrappers of methods registered before them
(:func:`flcore.algorithms.recipes_papers.wrapped_recipes`; a missing base raises), then the
methods published since the papers, :mod:`flcore.algorithms.recipes_since`.  The
recipe modules only list their methods; nothing registers on import elsewhere, so the
registry does not depend on which module happens to be imported first.

Then the modules named in ``$FLCORE_METHODS`` (comma-separated module names on the Python
path: a method kept outside flcore) are imported; each declares its parts'
hyper-parameters and calls :func:`register` (the book's page "Adding a method" walks
through one).  They are imported here, before the configuration reads the declarations,
so a method from outside is configured, validated, batched and run as the built-in ones.
"""
from __future__ import annotations

import importlib
import os

from flcore.algorithms import methods, recipes_baselines, recipes_papers, recipes_since
from flcore.algorithms.methods import Method

__all__ = ["METHODS", "METHOD_NAMES", "get_method", "register"]

#: Every registered method by name, in registration order.
METHODS: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add ``method`` to :data:`METHODS`; a name registered twice raises."""
    if METHODS.setdefault(method.name, method) is not method:
        raise ValueError(f"method {method.name!r} registered twice")
    return method


for _method in (*methods.RECIPES, *recipes_baselines.RECIPES, *recipes_papers.RECIPES):
    register(_method)
for _method in recipes_papers.wrapped_recipes(METHODS):
    register(_method)
for _method in recipes_since.RECIPES:
    register(_method)

#: The environment variable naming method modules kept outside flcore (comma-separated).
EXTRA_METHODS_VARIABLE = "FLCORE_METHODS"
#: Why a module named in ``$FLCORE_METHODS`` could not be imported, one line each: importing
#: flcore goes on without it; every command of the command line refuses to run, printing
#: the first line (flcore.cli.main).
EXTERNAL_METHOD_ERRORS: list[str] = []


def _import_external(name: str) -> None:
    try:
        importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - someone else's module: whatever it raises is reported
        text = " ".join(str(exc).split())[:300]
        EXTERNAL_METHOD_ERRORS.append(
            f"${EXTRA_METHODS_VARIABLE} names the module {name[:80]!r}, which could not be imported "
            f"({type(exc).__name__}: {text}); fix it or remove it from ${EXTRA_METHODS_VARIABLE}")


for _name in filter(None, (part.strip() for part in os.environ.get(EXTRA_METHODS_VARIABLE, "").split(","))):
    _import_external(_name)

#: The registered methods' names, in registration order.
METHOD_NAMES = tuple(METHODS)


def get_method(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; allowed: {', '.join(METHOD_NAMES)}") from None
