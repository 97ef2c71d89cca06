"""A method's part ids, traffic per round and the values its parts' papers set, read off
its parts built on its recipe's defaults (docs/algorithms.md 7).

The build reads a plain view of every field's default, the smoke scale's presets and the
recipe's ``defaults`` over them -- no paper or tuned value, which are what this module helps find
(:func:`flcore.config.presets.method_defaults`): which parts a recipe builds does not
depend on them.
"""
from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

from flcore.algorithms import get_method
from flcore.algorithms.methods import built_parts, parts_of_built, probe_flat, traffic_of_built
from flcore.config.fields import DEFAULTS
from flcore.config.scales import DEFAULT_DATASET, scale_defaults
from flcore.models import default_model_for

#: The data set a method is built on to read its parts: the smoke scale's.
SMOKE_DATASET = DEFAULT_DATASET["smoke"]


def smoke_view(method: str, values: dict) -> Any:
    """A plain, unvalidated view of ``method``'s config at the smoke scale: every field's
    default, the scale's presets, then ``values``."""
    model = values.get("model") or default_model_for(SMOKE_DATASET)
    return SimpleNamespace(**{**DEFAULTS, **scale_defaults("smoke", SMOKE_DATASET), "scale": "smoke",
                              "dataset": SMOKE_DATASET, "method": method, **values, "model": model})


@functools.cache
def built_method(method: str) -> tuple:
    """``(client, server, schedule)`` of ``method`` built on a two-tensor probe model under
    the fields' defaults and the recipe's."""
    recipe = get_method(method)
    cfg = smoke_view(method, dict(recipe.defaults))
    return recipe.build_client(cfg, probe_flat()), recipe.build_server(cfg), recipe.build_schedule(cfg)


def parts_of(method: str) -> tuple[str, ...]:
    """The part ids ``method``'s built parts carry (docs/algorithms.md 7.1), family by family."""
    return parts_of_built(*built_method(method))


def traffic_of(method: str) -> tuple[int, int]:
    """``(downloads, uploads)`` per participating client per round of ``method``, in
    model-sized vectors (rule R7), from what its parts declare they send."""
    client, server, _ = built_method(method)
    return traffic_of_built(client, server)


def part_paper_values(method: str, dataset: str, alpha: float, scale: str) -> dict:
    """The values the papers of ``method``'s parts set for ``dataset`` at ``alpha`` and
    ``scale`` (a part class's ``paper_values``: FedSAM's Table 11 radius for a SAM step),
    in recipe order."""
    out: dict = {}
    for part in built_parts(*built_method(method)):
        values = getattr(type(part), "paper_values", None)
        if values is not None:
            out.update(values(dataset, alpha, scale))
    return out
