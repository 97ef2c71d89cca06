"""Notebook sources: every ``.ipynb`` has its jupytext ``.py`` twin with the same cells,
is clean (no outputs), declares its parameters and belongs to a registered artifact."""
from __future__ import annotations

from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").rglob("*.ipynb"))
#: tutorials (notebooks/tutorials/) are book pages executed at build time, not artifacts
TUTORIALS = [p for p in NOTEBOOKS if p.parent.name == "tutorials"]
ARTIFACT_NOTEBOOKS = [p for p in NOTEBOOKS if p not in TUTORIALS]
REQUIRED_PARAMETERS = ("scale", "device", "seeds", "store", "max_rounds")
TUTORIAL_PARAMETERS = ("device",)


def _cells(path: Path) -> list[tuple[str, str]]:
    nb = jupytext.read(path)
    return [(cell.cell_type, cell.source.strip()) for cell in nb.cells]


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks under notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_ipynb_and_py_pair_are_in_sync(path: Path):
    twin = path.with_suffix(".py")
    assert twin.is_file(), f"{path.name} has no paired {twin.name} (jupytext --set-formats ipynb,py:percent)"
    assert _cells(path) == _cells(twin), f"{path.name} and {twin.name} differ: run `jupytext --sync {twin}`"
    formats = jupytext.read(path).metadata.get("jupytext", {}).get("formats", "")
    assert "py:percent" in formats and "ipynb" in formats


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").rglob("*.py")), ids=lambda p: p.stem)
def test_every_py_notebook_has_its_ipynb(path: Path):
    assert path.with_suffix(".ipynb").is_file()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_clean_and_parameterised(path: Path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), "outputs are committed"
    assert nb.cells[0].cell_type == "markdown", "text comes before code"
    tagged = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"
    for name in TUTORIAL_PARAMETERS if path in TUTORIALS else REQUIRED_PARAMETERS:
        assert any(line.startswith(f"{name} =") for line in tagged[0].source.splitlines()), name
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    if path not in TUTORIALS:
        # the page applies the round cap before the notebook trains anything
        # one page object owns the parameters: the template's constructor takes them all
        pages = [c for c in code if "Page(" in c.source or "Page.from_parameters(" in c.source]
        assert len(pages) == 1 and "Page(" not in pages[0].source, "one page, made by Page.from_parameters"
        assert not any(w in c.source for c in code for w in ("ensure_runs(specs, store=store", "check_claims(scale"))
        first_page = code.index(pages[0])
        assert not any(w in c.source for c in code[:first_page] for w in ("ensure_runs(", "check_claims("))
    # a cell installs flcore when it is missing (Colab)
    assert any('find_spec("flcore") is None' in c.source for c in code[:2])


def test_notebooks_and_artifacts_match_one_to_one():
    from flcore.reproduction.artifacts import artifact_ids, get_artifact

    expected = {ROOT / get_artifact(a).notebook_path for a in artifact_ids()}
    assert expected == set(ARTIFACT_NOTEBOOKS)


def test_toc_lists_every_artifact_page():
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = set()

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.add(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(toc)
    from flcore.reproduction.artifacts import artifact_ids, get_artifact

    for aid in artifact_ids():
        assert get_artifact(aid).book_path.removesuffix(".ipynb") in files, aid


def _template_url() -> str:
    """The repository URL the install cells hold (one for all: tests/test_publishing.py)."""
    import nbformat

    first = next(c for c in nbformat.read(ARTIFACT_NOTEBOOKS[0], as_version=4).cells if c.cell_type == "code")
    return first.source.split("flcore @ git+", 1)[1].split('"', 1)[0]


@pytest.mark.parametrize("path", ARTIFACT_NOTEBOOKS, ids=lambda p: p.stem)
def test_artifact_notebook_starts_with_the_template(path: Path):
    """The install cell and the page's constructor are the template's text
    (:data:`flcore.report.page.INSTALL_CELL`, :data:`flcore.report.page.PAGE_STATEMENT`): the
    first code cell installs flcore, the second is the parameters cell, and a later cell makes the
    page of the notebook's own artifact from those parameters right after its imports."""
    import nbformat

    from flcore.report.page import INSTALL_CELL, PAGE_STATEMENT, PARAMETERS
    from flcore.report.repository import install_requirement

    code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    assert code[0].source == INSTALL_CELL.format(requirement=install_requirement(_template_url()))
    assert "parameters" in code[1].metadata.get("tags", [])
    declared = [line.split(" =", 1)[0] for line in code[1].source.splitlines() if " = " in line]
    assert set(REQUIRED_PARAMETERS) <= set(declared)
    assert set(declared) - set(PARAMETERS) <= {"split_files"}, declared  # read by name, not by the page
    made = [c for c in code[2:] if "Page.from_parameters(" in c.source]
    assert len(made) == 1
    statements = [line for line in made[0].source.splitlines() if line and not line.startswith((" ", "#"))]
    imports = [s for s in statements if s.startswith(("import ", "from "))]
    assert statements[:len(imports)] == imports and "from flcore.report.page import" in "\n".join(imports)
    assert statements[len(imports)] == PAGE_STATEMENT.format(artifact_id=path.stem)


def _shown_twice(source: str) -> list[str]:
    """The calls that end a code cell of ``source`` and return a value (a ``Page`` method, or a
    function the cell's notebook imports, annotated to return one): Jupyter would display the
    value again below what the call itself shows."""
    import ast
    import importlib
    import inspect

    from flcore.report.page import Page

    tree = ast.parse(source)
    names: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            module = importlib.import_module(node.module)
            for alias in node.names:
                target = getattr(module, alias.name, None)
                if target is None:
                    target = importlib.import_module(f"{node.module}.{alias.name}")
                names[alias.asname or alias.name] = target
    shown = []
    for cell in source.split("\n# %%")[1:]:
        head, _, body = cell.partition("\n")
        if "[markdown]" in head or not body.strip():
            continue
        last = ast.parse(body).body[-1] if ast.parse(body).body else None
        if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)):
            continue
        func = last.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner = Page if func.value.id == "page" else names.get(func.value.id)
            target = getattr(owner, func.attr, None)
        else:
            target = names.get(func.id) if isinstance(func, ast.Name) else None
        if callable(target):
            returned = inspect.signature(target).return_annotation
            if returned not in (None, "None", inspect.Signature.empty):
                shown.append(ast.unparse(func))
    return shown


def test_the_check_finds_a_value_shown_twice():
    source = ('# %%\nfrom flcore.report.page import Page\n# %%\npage.settings("x")\n'
              '# %%\nsettings = page.settings("x")\n# %%\npage.note("y")\n')
    assert _shown_twice(source) == ["page.settings"]


@pytest.mark.parametrize("path", ARTIFACT_NOTEBOOKS, ids=lambda p: p.stem)
def test_no_cell_shows_a_returned_table_twice(path: Path):
    source = path.with_suffix(".py").read_text()
    assert not _shown_twice(source), f"{path.stem}: assign the value of {_shown_twice(source)} or show it once"
