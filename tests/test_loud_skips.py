"""A test that skips because optional material beside the repository (../shared: the papers'
texts and reference notes) is missing says so in a reason the end-of-run summary lists
loudly (``LOUD_SKIPS`` in conftest.py), never silently."""
import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PHRASE = "not beside the repo"


def _reasons(tree: ast.AST) -> list[str]:
    """The literal ``reason=`` of every ``skipif``/``skip`` call, and the message of every
    ``pytest.skip("...")``, in a test module."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        if name not in ("skipif", "skip"):
            continue
        texts = [kw.value for kw in node.keywords if kw.arg in ("reason", "msg")]
        if name == "skip":
            texts += node.args[:1]
        found += [t.value for t in texts if isinstance(t, ast.Constant) and isinstance(t.value, str)]
    return found


def _reads_material_beside_the_repo(text: str) -> bool:
    return re.search(r"""(ROOT|parents\[\d\])\.parent\s*/\s*["']shared["']""", text) is not None


def test_the_phrase_is_one_of_the_loud_skips():
    assert f'"{PHRASE}"' in (TESTS / "conftest.py").read_text()


def test_every_skip_for_material_beside_the_repo_is_loud():
    checked = 0
    for path in sorted(TESTS.glob("test_*.py")):
        text = path.read_text()
        if path.name == Path(__file__).name or not _reads_material_beside_the_repo(text):
            continue
        reasons = _reasons(ast.parse(text))
        assert reasons, f"{path.name} reads ../shared but never skips when it is missing"
        quiet = [r for r in reasons if PHRASE not in r and "CUDA" not in r]
        assert not quiet, f"{path.name}: skips not listed loudly at the end of the run: {quiet}"
        checked += 1
    assert checked >= 10  # the papers' published-number tests and the inventory checks


def test_a_quiet_skip_is_found():
    tree = ast.parse('import pytest\nneeds = pytest.mark.skipif(True, reason="no papers here")\n')
    assert _reasons(tree) == ["no papers here"]
    assert _reads_material_beside_the_repo('PAPER = ROOT.parent / "shared" / "papers"')
