"""Every import inside a function in flcore/ says why it is not at module level: either its
module is one of :data:`LAZY_MODULES` (optional, heavy, or needed only by a notebook or
one command) or the import line, or the line just above it, carries a ``#`` comment."""
import ast
from pathlib import Path

FLCORE = Path(__file__).resolve().parent.parent / "flcore"

LAZY_MODULES = {
    "IPython": "only a notebook displays; the command line never imports it",
    "matplotlib": "figures only; importing it costs about a second",
    "seaborn": "figures only; importing it (and matplotlib) costs about a second",
    "scipy": "only a few statistics need it; importing scipy.stats costs about 0.7 s",
    "ray": "optional, only the ray executor needs it",
    "flwr": "optional, only the Flower commands need it",
    "flwr_datasets": "optional, only the Flower partitioners need it",
    "psutil": "only the Flower launcher's memory check needs it",
    "papermill": "optional, only `flcore reproduce` executing notebooks needs it",
    "nbformat": "optional, only `flcore reproduce` reading notebooks needs it",
    "jupyter_core": "optional, only the notebook kernels need it",
    "jupyter_client": "optional, only the notebook kernels need it",
    "PIL": "only the PACS loader needs it",
    "torchvision": "only the Fashion-MNIST loader needs it; importing it costs about a second",
    "mnist1d": "only the MNIST-1D loader needs it",
    "datasets": "optional (Hugging Face datasets), only the Flower partitioners need it",
}


def unexplained_imports(source: str, filename: str = "<string>") -> list[str]:
    """``file:line module`` of each function-level import in ``source`` that is neither of a
    :data:`LAZY_MODULES` module nor commented on its line or the line above."""
    lines = source.splitlines()
    found = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            if inside and isinstance(child, (ast.Import, ast.ImportFrom)):
                if isinstance(child, ast.Import):
                    modules = [alias.name for alias in child.names]
                else:
                    modules = ["." * child.level + (child.module or "")]
                line = child.lineno
                commented = "#" in lines[line - 1] or (line > 1 and lines[line - 2].lstrip().startswith("#"))
                for module in modules:
                    if module.split(".")[0] not in LAZY_MODULES and not commented:
                        found.append(f"{filename}:{line} {module}")
            walk(child, inside)

    walk(ast.parse(source), False)
    return found


def test_function_level_imports_say_why():
    found = []
    for path in sorted(FLCORE.rglob("*.py")):
        found += unexplained_imports(path.read_text(), str(path.relative_to(FLCORE.parent)))
    assert not found, ("imports inside functions without a reason (hoist them to module level, or add a "
                       "`#` comment saying why, or a LAZY_MODULES entry):\n" + "\n".join(found))


def test_checker_flags_an_unexplained_import():
    source = '''
def f():
    import json

    # imported here: flcore.b imports this module at load time
    from flcore.b import g
    import matplotlib.pyplot as plt
    from flcore.c import h  # flcore.c imports this module at load time
    return json, g, h, plt
'''
    assert unexplained_imports(source) == ["<string>:3 json"]


def test_lazy_modules_give_reasons():
    assert all(reason.strip() and "\n" not in reason for reason in LAZY_MODULES.values())
