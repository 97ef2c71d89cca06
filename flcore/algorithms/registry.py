"""Every method by name: the recipe modules' methods, registered in one fixed order.

The order is :mod:`flcore.algorithms.methods` (FedAvg, FedOpt, FedSAM/FedASAM),
:mod:`flcore.algorithms.recipes_baselines`, :mod:`flcore.algorithms.recipes_papers`, then
the papers' ``X+swa``/``X+swalr``/``X+ima`` wrappers of methods registered before them
(:func:`flcore.algorithms.recipes_papers.wrapped_recipes`; a missing base raises), then the
methods published since the papers, :mod:`flcore.algorithms.recipes_since`.  The
recipe modules only list their methods; nothing registers on import elsewhere, so the
registry does not depend on which module happens to be imported first.
"""
from __future__ import annotations

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

#: The registered methods' names, in registration order.
METHOD_NAMES = tuple(METHODS)


def get_method(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; allowed: {', '.join(METHOD_NAMES)}") from None
