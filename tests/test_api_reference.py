"""The API reference (book/api) is generated from the package and stays in step with it."""
from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import flcore

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "book" / "api"


def _generator():
    spec = importlib.util.spec_from_file_location("api_generate", API / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pages_match_the_generator():
    stale = [name for name, text in _generator().pages().items() if (API / name).read_text() != text]
    assert not stale, f"run python book/api/generate.py: stale {stale}"


def test_every_subpackage_has_a_page_and_the_toc_lists_them():
    generator = _generator()
    documented = {package for _, _, _, package, _ in generator.PAGES if package}
    subpackages = {f"flcore.{p.name}" for p in (ROOT / "flcore").iterdir()
                   if (p / "__init__.py").exists() and p.name not in {"cli", "site", "papers"}}
    assert subpackages <= documented, subpackages - documented
    toc = (ROOT / "_toc.yml").read_text()
    for name, *_ in generator.PAGES:
        assert f"book/api/{name}" in toc


def test_every_public_module_and_exported_name_is_on_a_page():
    generator = _generator()
    text = "\n".join((API / n).read_text() for n in generator.pages())
    automodules = set(re.findall(r"\.\. automodule:: ([\w.]+)", text))
    for _, _, _, package, extra in generator.PAGES:
        assert set(extra) <= automodules
        if package:
            assert set(generator.public_modules(package)) <= automodules, package
            for name in generator.exported(package):
                assert f"`~{package}.{name}`" in text, (package, name)
    for name in (n for n in flcore.__all__ if not n.startswith("__")):
        assert f"`~flcore.{name}`" in (API / "index.md").read_text()


def test_a_new_public_module_makes_the_pages_stale(monkeypatch):
    generator = _generator()
    before = generator.pages()["store.md"]
    real = generator.public_modules
    extra = {"flcore.store": ["flcore.store.brand_new"]}
    monkeypatch.setattr(generator, "public_modules", lambda package: real(package) + extra.get(package, []))
    after = generator.pages()["store.md"]
    assert after != before and "automodule:: flcore.store.brand_new" in after


def test_exported_names_resolve():
    generator = _generator()
    for _, _, _, package, _ in generator.PAGES:
        if package:
            module = importlib.import_module(package)
            for name in generator.exported(package):
                assert hasattr(module, name), (package, name)
