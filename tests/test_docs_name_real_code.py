"""The design documents and the reference pages name code that exists: every
``flcore/...`` path and every ``flcore.<module>`` they mention is a file or an importable
module of this checkout (a renamed module leaves no stale sentence behind)."""
from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [*sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "book" / "reference").glob("*.md"))]
#: Paths the documents name as examples of what a user writes, not files of flcore.
EXAMPLES = re.compile(r"flcore/papers/<|<paper>|papers/toy")


def _exists(name: str) -> bool:
    """A path of the checkout, or a module (and the attributes after it) that imports."""
    if name.startswith("flcore/"):
        return (ROOT / name.rstrip("/.,:;)")).exists()
    parts = name.rstrip(".,:;)").split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if found:
            value = importlib.import_module(module)
            for attribute in parts[cut:]:
                if not hasattr(value, attribute):
                    return False
                value = getattr(value, attribute)
            return True
    return False


def test_documents_name_existing_code():
    missing = []
    for document in DOCUMENTS:
        text = document.read_text()
        for name in set(re.findall(r"flcore/[A-Za-z0-9_./]+\.py|flcore(?:\.[A-Za-z_][A-Za-z0-9_]*)+", text)):
            if not EXAMPLES.search(name) and not _exists(name):
                missing.append(f"{document.relative_to(ROOT)}: {name}")
    assert not missing, missing
