"""A method's hyper-parameter values for a data set: the papers' and the tuned.

:func:`method_defaults` layers, in order: the values the papers of a method's parts set
(FedSAM's Table 11 radius for a SAM or ASAM step, SWA's cycle, AdaBest's coefficients: a
part class's ``paper_values``); a tuning record's choices for those parts; the recipe's
own ``defaults`` and the values its own paper sets (``Method.paper_values``: FedGloSS's
radii); a tuning record's choices for the method by name.  For Dirichlet alphas that
Table 11 does not list, the value of the nearest listed heterogeneity level is used.
The protocol's presets per scale are :mod:`flcore.config.scales`.
"""
from __future__ import annotations

from flcore.algorithms import METHODS, get_method
from flcore.config.method_parts import part_paper_values, parts_of
from flcore.config.tuned import method_study, study_for, tuned_entries
from flcore.errors import ConfigError, quote


def base_method(method: str) -> str:
    """The method an ``X+swa`` / ``X+ima`` wrapper is built on (``X`` itself otherwise)."""
    for suffix in ("+swa", "+swalr", "+ima"):
        if method.endswith(suffix):
            return method[: -len(suffix)]
    return method


def method_defaults(method: str, dataset: str, alpha: float, scale: str) -> dict:
    """Paper hyper-parameters of ``method`` for a dataset and heterogeneity level (the
    module docstring gives the layers); ``{}`` for a method that is not registered (the
    config's validation names it).

    Where ``flcore tune`` has a record for ``scale`` and ``dataset`` (:mod:`flcore.config.tuned`),
    its choices replace the values the papers of the method's parts set (FedSAM's CIFAR
    radii) for the methods each study covers; a value the method's own paper sets
    (FedLESAM's rho, FedGloSS's) still wins.  ``X+swa`` and ``X+ima`` carry ``X``'s recipe
    values and add their own parts' (SWA's cycle)."""
    if method not in METHODS:
        return {}
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise ConfigError("alpha", f"expected a number, got {quote(alpha)}") from None
    base = base_method(method)
    recipe = get_method(method)
    parts = parts_of(method)
    out = part_paper_values(method, dataset, alpha, scale)
    tuned = [e for e in tuned_entries(scale, dataset, alpha) if study_for(e["study"], parts, base)]
    for entry in tuned:  # a study of the method's parts, tuned on this data set's validation split
        if not method_study(entry["study"]):
            out.update(entry["choice"])
    out.update(recipe.defaults)
    out.update(recipe.own_paper_values(dataset, alpha, scale))
    for entry in tuned:  # a study of the method itself wins over the values above
        if method_study(entry["study"]):
            out.update(entry["choice"])
    return out


def tuning_of(cfg) -> list[dict]:
    """What a resolved run took from a tuning record (:mod:`flcore.config.tuned`): one
    ``{"method", "field", "value", "grid", "source"}`` per field a study covers for its
    method and that its run reads (a field of the run id: a study shared by a method's
    variants may cover a field one of them never reads), ``source`` saying whether the value
    is the record's choice (``tuned: <file>, row <row> (alpha <a>), seeds <s>``), a value the
    method's own paper sets instead, or one the run set itself."""
    base = base_method(cfg.method)
    parts = parts_of(cfg.method)
    defaults = None
    reads = cfg.canonical()
    out = []
    entries = [e for e in tuned_entries(cfg.scale, cfg.dataset, cfg.alpha) if study_for(e["study"], parts, base)]
    own = {field for e in entries if method_study(e["study"]) for field in e["fields"]}
    for entry in entries:
        if not method_study(entry["study"]) and own & set(entry["fields"]):
            continue  # the method's own study sets these fields
        if defaults is None:
            defaults = method_defaults(cfg.method, cfg.dataset, cfg.alpha, cfg.scale)
        for field in (f for f in entry["fields"] if f in reads):
            value = getattr(cfg, field)
            if defaults.get(field) != entry["choice"][field]:
                source = "the method's own paper sets it (not tuned here)"
            elif value == entry["choice"][field]:
                seeds = ", ".join(str(s) for s in entry["seeds"])
                source = (f"tuned: {entry['path']}, row {entry['row']} (alpha {entry['alpha']:g}), "
                          f"validation accuracy on seeds {seeds}")
            else:
                source = "set by the run (not the tuned value)"
            out.append({"method": cfg.method, "field": field, "value": value, "grid": entry["grid"][field],
                        "source": source})
    return out
