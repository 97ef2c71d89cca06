"""Write the API reference pages (``book/api/*.md``) from the package itself.

One page per layer's subpackage: its docstring, its public names (``__all__``) linked to
where they are defined, then every public module of the subpackage with its members, so
that each object is described once, under the module that defines it.  The base modules
(flat vectors, seeding, errors, the record format, ``run_experiment``) share a page.
Run ``python book/api/generate.py`` after adding a module; ``tests/test_api_reference.py``
fails while a page is stale.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: (page, title, summary, package or None, extra modules), in the order of the layers, bottom up.
PAGES = [
    ("base", "Base modules", "Flat parameter vectors, derived random generators, errors, bounded reads "
     "of files others prepared, what a run "
     "record means, the CPUs a process may use, the device it computes on, and `run_experiment`.", None,
     ["flcore.flat", "flcore.seeding", "flcore.errors", "flcore.safe_io", "flcore.record_format",
      "flcore.tensor_tree", "flcore.cpus", "flcore.plugins", "flcore.devices", "flcore.api"]),
    ("data", "Data", "Data sets, partitions, augmentation, the writers of the on-disk formats.", "flcore.data", []),
    ("models", "Models", "The papers' networks and their registry.", "flcore.models", []),
    ("algorithms", "Algorithms", "The parts methods are made of, and the method registry.", "flcore.algorithms", []),
    ("config", "Configuration", "Fields, scales and presets, parsing, validation, the run id.", "flcore.config", []),
    ("sim", "Simulation", "The round loop, client sampling, local training, runs batched together.", "flcore.sim", []),
    ("store", "Run store", "Run records: atomic writes, resume, locking, integrity, queries.", "flcore.store", []),
    ("analysis", "Analysis", "Hessian spectra, landscapes, interpolation, LPF, flatness, CKA, the FedIMA "
     "decomposition, training-time probes and stored runs.", "flcore.analysis", []),
    ("flower", "Flower", "Every method as a Flower strategy and client app (the extra `flower`).", "flcore.flower", []),
    ("planning", "Planning", "Run requests, the planner that batches them into groups, sweeps.", "flcore.planning", []),
    ("executors", "Executors", "Where groups of runs train: this machine or a Ray cluster.", "flcore.executors", []),
    ("reproduction", "Reproduction", "The registries of papers, artifacts and claims; the inventory, the published "
     "values, the runner and the budget.", "flcore.reproduction", []),
    ("report", "Report", "Figure style, paper-vs-ours tables, orderings and page helpers.", "flcore.report", []),
]


def public_modules(package: str) -> list[str]:
    """The modules of ``package`` whose names have no leading underscore, in name order."""
    module = importlib.import_module(package)
    return sorted(info.name for info in pkgutil.walk_packages(module.__path__, package + ".")
                  if not any(part.startswith("_") for part in info.name.split(".")))


def exported(package: str) -> list[str]:
    return [n for n in getattr(importlib.import_module(package), "__all__", []) if not n.startswith("__")]


def _eval_rst(lines: list[str]) -> list[str]:
    return ["```{eval-rst}", *lines, "```", ""]


def _names(package: str) -> list[str]:
    names = exported(package)
    if not names:
        return []
    return [f"**Public names** (`{package}.__all__`):", "",
            ", ".join(f"{{py:obj}}`~{package}.{n}`" for n in names), ""]


def page(title: str, summary: str, package: str | None, extra: list[str]) -> str:
    out = [f"# {title}", "", summary, ""]
    modules = list(extra)
    if package is not None:
        # the package's own definitions (not its re-exports, described where they are defined)
        out += _eval_rst([f".. automodule:: {package}", "   :members:", "   :undoc-members:",
                          "   :ignore-module-all:"]) + _names(package)
        modules += public_modules(package)
    for module in modules:
        out += [f"## `{module}`", ""] + _eval_rst([f".. automodule:: {module}", "   :members:",
                                                    "   :undoc-members:"])
    return "\n".join(out).rstrip() + "\n"


def index() -> str:
    out = ["# API reference", "",
           "Generated from the docstrings (`python book/api/generate.py`): one page per subpackage, from",
           "the bottom of the layers up (the layers are described in [Python API](../reference/research-api.md)).",
           "Each object is described once, under the module that defines it; each page first lists its",
           "subpackage's public names (`__all__`), linked to their descriptions.", ""]
    out += _eval_rst([".. automodule:: flcore"]) + _names("flcore")
    return "\n".join(out).rstrip() + "\n"


def pages() -> dict[str, str]:
    out = {"index.md": index()}
    for name, title, summary, package, extra in PAGES:
        out[f"{name}.md"] = page(title, summary, package, extra)
    return out


def main() -> int:
    for name, text in pages().items():
        (HERE / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
