"""The package's shape: layers that point one way, no private names across subpackages,
no import cycle between subpackages, and a clean lint.

The layers are the import-linter contracts of ``pyproject.toml``; ``lint-imports`` checks
every import of every module, function-level ones included.
"""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "flcore"


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: `pip install -e '.[dev]'` installs it")
    return found


def _unit(module: str) -> str:
    """The subpackage (or top-level module) a dotted module name belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _imports():
    """(importing module, imported module, imported name) for every ``from flcore...`` import."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        module = ".".join(parts)
        package = parts if path.name == "__init__.py" else parts[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                target = node.module or ""
                if node.level:
                    target = ".".join(package[: len(package) - node.level + 1] + ([target] if target else []))
                if target.split(".")[0] == "flcore":
                    for alias in node.names:
                        yield module, target, alias.name
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "flcore":
                        yield module, alias.name, ""


def test_the_layers_contract_holds():
    result = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "broken" in result.stdout and " 0 broken" in result.stdout


def test_the_contract_would_catch_an_upward_import(tmp_path):
    """The checker itself: a copy of the package with one store -> sim import breaks the contract."""
    copy = tmp_path / "flcore"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    lock = copy / "store" / "lock.py"
    lock.write_text(lock.read_text() + "\nfrom flcore.sim import engine  # noqa: E402,F401\n")
    result = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=tmp_path, capture_output=True, text=True,
                            env={"PYTHONPATH": str(tmp_path), "PATH": str(Path(sys.executable).parent)})
    assert result.returncode != 0 and "flcore.store.lock -> flcore.sim.engine" in result.stdout


def test_no_private_name_is_imported_across_subpackages():
    crossing = [f"{module}: {target}.{name}" for module, target, name in _imports()
                if name.startswith("_") and not name.startswith("__") and _unit(module) != _unit(target)]
    crossing += [f"{module}: {target}" for module, target, _ in _imports()
                 if any(p.startswith("_") and not p.startswith("__") for p in target.split("."))
                 and _unit(module) != _unit(target)]
    assert not crossing, crossing


def test_no_import_cycle_between_subpackages():
    edges = defaultdict(set)
    for module, target, _ in _imports():
        if _unit(module) != _unit(target) and module != "flcore" and _unit(target) != "flcore":
            edges[_unit(module)].add(_unit(target))
    seen, stack, cycles = set(), [], []

    def visit(node):
        if node in stack:
            cycles.append(stack[stack.index(node):] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        stack.append(node)
        for nxt in sorted(edges[node]):
            visit(nxt)
        stack.pop()

    for node in sorted(edges):
        visit(node)
    assert not cycles, cycles


def test_ruff_finds_nothing():
    paths = ["flcore", "tests", "benchmarks", "notebooks", "book"]
    result = subprocess.run([_tool("ruff"), "check", "--no-cache", *paths], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
