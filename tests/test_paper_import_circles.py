"""A paper's modules import one way: no circle among the modules of one paper's folder,
counting imports inside functions too (an import moved into a function to dodge a circle
is still a circle)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PAPERS = Path(__file__).resolve().parents[1] / "flcore" / "papers"


def _imports(path: Path, package: str, names: set[str]) -> set[str]:
    """The modules of ``names`` (one paper's) that the module at ``path`` imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = package + (f".{base}" if base else "")
            for alias in node.names:
                for candidate in (f"{base}.{alias.name}", base):
                    if candidate.startswith(package + ".") and candidate.rsplit(".", 1)[1] in names:
                        found.add(candidate.rsplit(".", 1)[1])
                        break
        elif isinstance(node, ast.Import):
            found |= {a.name.rsplit(".", 1)[1] for a in node.names
                      if a.name.startswith(package + ".") and a.name.rsplit(".", 1)[1] in names}
    return found


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


@pytest.mark.parametrize("paper", sorted(p.name for p in PAPERS.iterdir() if (p / "__init__.py").is_file()))
def test_a_papers_modules_import_one_way(paper):
    folder = PAPERS / paper
    names = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    package = f"flcore.papers.{paper}"
    graph = {name: _imports(folder / f"{name}.py", package, names) - {name} for name in names}
    assert _circle(graph) is None, " -> ".join(_circle(graph))


def test_the_circle_finder_finds_a_circle():
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None
