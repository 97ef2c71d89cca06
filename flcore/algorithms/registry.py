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

from flcore.algorithms import methods, recipes_baselines, recipes_papers, recipes_since
from flcore.algorithms.methods import Method
from flcore.plugins import import_named

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
#: Why a module named in ``$FLCORE_METHODS`` could not be imported, one line each
#: (:func:`flcore.plugins.import_named`).
EXTERNAL_METHOD_ERRORS: list[str] = import_named(EXTRA_METHODS_VARIABLE, "module", "imported")

#: The registered methods' names, in registration order.
METHOD_NAMES = tuple(METHODS)


def get_method(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; allowed: {', '.join(METHOD_NAMES)}") from None
