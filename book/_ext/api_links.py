"""Cross-references to flcore's objects by any of their import paths.

The API reference describes each object once, under the module that defines it
(``flcore.sim.engine.Simulation``), while docstrings name objects as users import them
(``flcore.Simulation``, ``flcore.sim.Simulation``) or by a short name inside their own
module (``run_rounds``).  When the Python domain finds no target, this handler imports the
name as written -- as given, then inside the referring module and class -- and links to
the object's defining path if the reference describes it there.  Nothing is guessed: a
name that does not import, or whose object is described nowhere, stays an unresolved
reference (a warning, an error under ``-W -n``).
"""
from __future__ import annotations

import importlib
from typing import Any

from sphinx.util.nodes import make_refnode


def _import(path: str) -> Any:
    """The object ``path`` names, importing its longest module prefix; a ``KeyError`` if none."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            break
        return obj
    raise KeyError(path)


def _defining_paths(obj: Any, written: str) -> list[str]:
    """Where the reference may describe ``obj``: its module and qualified name, or, for a
    module, its name; for plain data, every documented path ending in the same name."""
    if isinstance(getattr(obj, "__name__", None), str) and hasattr(obj, "__file__"):
        return [obj.__name__]
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        return [f"{module}.{qualname}"]
    return [written.rsplit(".", 1)[-1]]  # data: matched by its last name below


def resolve(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "").lstrip("~.")
    if not target or not (target.startswith("flcore") or node.get("py:module", "").startswith("flcore")):
        return None
    module, cls = node.get("py:module"), node.get("py:class")
    candidates = [target]
    if module:
        if cls:
            candidates.append(f"{module}.{cls}.{target}")
        candidates.append(f"{module}.{target}")
    domain = env.get_domain("py")
    objects = domain.objects
    for written in candidates:
        try:
            obj = _import(written)
        except KeyError:
            continue
        for path in _defining_paths(obj, written):
            if path in objects:
                entry = objects[path]
                return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, path)
            if "." not in path:  # data: the documented path whose object is this one
                for name, entry in objects.items():
                    if name.endswith("." + path) and name.startswith("flcore"):
                        try:
                            if _import(name) is obj:
                                return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id,
                                                    contnode, name)
                        except KeyError:
                            continue
    return None


def setup(app):
    app.connect("missing-reference", resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
