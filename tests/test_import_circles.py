"""Every folder of flcore imports one way: no circle among the modules of one folder (its
``__init__`` included), counting imports inside functions too (an import moved into a
function to dodge a circle is still a circle).  A paper's folder is one such folder."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

FLCORE = Path(__file__).resolve().parents[1] / "flcore"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(FLCORE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, names: set[str]) -> set[str]:
    """The modules of ``names`` (dotted) that the module at ``path`` imports, relative imports
    resolved and ``from package import name`` read as the submodule where there is one."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor) + (f".{base}" if base else "")
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in names else base)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return (found & names) - {module}


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` (module -> modules it imports), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for other in sorted(graph[node]):
            if state.get(other) == 1:
                return path[path.index(other):] + [other]
            if other not in state and (found := visit(other)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


FOLDERS = sorted({p.parent for p in FLCORE.rglob("__init__.py")})


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: _module_name(p / "__init__.py"))
def test_a_folders_modules_import_one_way(folder):
    files = {_module_name(p): p for p in folder.glob("*.py")}
    graph = {name: _imports(path, set(files)) for name, path in files.items()}
    assert _circle(graph) is None, " -> ".join(_circle(graph))


def test_the_circle_finder_finds_a_circle():
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None


def test_imports_are_read_as_the_modules_they_name(tmp_path, monkeypatch):
    """``from flcore.data import datasets``, ``from . import x`` and a function-level import
    are each an edge; ``from flcore.data import Dataset`` is an edge to the package."""
    names = {"flcore.data", "flcore.data.datasets", "flcore.data.loading"}
    path = FLCORE / "data" / "loading.py"
    monkeypatch.setattr(Path, "read_text", lambda self: (
        "from flcore.data import datasets\nfrom . import Dataset\n"
        "def f():\n    from flcore.data.loading import x\n"))
    assert _imports(path, names) == {"flcore.data.datasets", "flcore.data"}
