"""The papers, one folder each, every folder with the same skeleton.  Importing this
package imports every paper package in it, in the book's order (``order`` in each
``paper.yaml``), then the packages named in ``$FLCORE_PAPERS`` (comma-separated module
names on the Python path: a paper kept outside flcore).  Each registers itself with the
reproduction machinery (:mod:`flcore.reproduction`), which knows no paper by name.

The skeleton of ``flcore/papers/<paper>/`` (``docs/paper-skeleton.md``; the book's page
"Adding a paper" walks through a new one)::

    <paper>/
      __init__.py       register_paper(...), then imports runs.py and the modules below
      paper.yaml        title, authors, venue, order, question, method, protocol;
                        builds_on: the papers whose modules it imports (optional)
      inventory.yaml    every table and figure: kind, class, caption, run groups
      claims.yaml       the headline claims as checkable comparisons
      published/        the published numbers, <artifact-id>.csv, and sources.yaml
      runs.py           the run groups: settings by scale, each artifact's runs,
                        register_artifacts(...) and the claims' metrics
      results.py        page helpers of the result tables and figures        (optional)
      analysis.py       page helpers of the analysis (geometry) artifacts     (optional)
      config_tables.py  the configuration tables, built from the registries  (optional)
      method_costs.py   the paper's per-method compute and communication     (optional)
      metrics.py        the claims' metrics, where they need the page helpers (optional)
      pages.py          the book's own pages under the paper's chapter       (optional)

An artifact is registered one way: ``register_artifacts(PAPER, {artifact id: runs})``
(:func:`flcore.reproduction.artifacts.register_artifacts`), its kind and caption read from
``inventory.yaml``; its notebook is ``notebooks/<paper>/<artifact id>.py`` (jupytext,
paired with the ``.ipynb``).  Nothing outside the folder names the paper: the package data
ship by glob, the command line's choices and the book's table of contents
(:mod:`flcore.site.toc`) come from the registry.  Methods stay in :mod:`flcore.algorithms`,
shared by every paper.
"""
import importlib
import math
import pkgutil
from pathlib import Path

from flcore.plugins import import_named
from flcore.reproduction.paper_yaml import read_yaml

#: The environment variable naming paper packages kept outside flcore (comma-separated).
EXTRA_PAPERS_VARIABLE = "FLCORE_PAPERS"


def _book_order() -> list[str]:
    """The paper packages of this folder, by their ``paper.yaml``'s ``order`` (then name)."""
    here = Path(__path__[0])
    names = [module.name for module in pkgutil.iter_modules(__path__) if module.ispkg]

    def order(name: str):
        position = read_yaml(here / name / "paper.yaml").get("order")
        return (math.inf if position is None else position, name)

    return sorted(names, key=order)


for _name in _book_order():
    importlib.import_module(f"{__name__}.{_name}")
#: Why a package named in ``$FLCORE_PAPERS`` could not be registered, one line each
#: (:func:`flcore.plugins.import_named`); a script that relies on an external paper checks it.
EXTERNAL_PAPER_ERRORS: list[str] = import_named(EXTRA_PAPERS_VARIABLE, "package", "registered")
