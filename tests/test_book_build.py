"""The smoke book builds with -W, and a headless Chromium shows an artifact page's title,
table and figure.

The build runs in a temporary copy of the book's sources (``notebooks/``, ``book/``,
``_config.yml``, ``_toc.yml``) so the working tree is left alone.  The browser check is
skipped when Chromium or its driver is not installed, except in CI (``CI`` set), which
must install Debian's ``chromium`` and ``chromium-driver``.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jupyter_book")
pytest.importorskip("papermill")

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def smoke_book(tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    root = tmp_path_factory.mktemp("book-src")
    for name in ("notebooks", "book"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("artifacts", "_artifacts.json",
                                                                                 ".ipynb_checkpoints"))
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, root / name)
    env = {**os.environ, "FLCORE_CACHE": str(base / "flcore-cache")}
    result = subprocess.run(
        [sys.executable, "-m", "flcore.reproduce", "book", "--scale", "smoke", "--root", str(root),
         "--store", str(base / "smoke-store")],
        cwd=root, env=env, capture_output=True, text=True, timeout=1200)
    return root, result


@pytest.mark.slow
def test_smoke_book_builds_strictly(smoke_book):
    root, result = smoke_book
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-4000:]
    assert (root / "_build" / "html" / "index.html").is_file()
    manifest = json.loads((root / "book" / "_artifacts.json").read_text())["artifacts"]
    assert manifest and all(entry["status"] == "ok" and entry["scale"] == "smoke" for entry in manifest.values())
    assert "6 ok, 0 failed" in result.stdout


@pytest.mark.slow
def test_artifact_page_links_colab_to_the_clean_notebook(smoke_book):
    root, _ = smoke_book
    page = (root / "_build/html/book/artifacts/fedsam/fedsam-table-2.html").read_text()
    assert "https://colab.research.google.com/github/" in page
    assert "/notebooks/fedsam/fedsam-table-2.ipynb" in page
    assert "/book/artifacts/fedsam/fedsam-table-2.ipynb" not in page.split("colab.research.google.com")[1][:200]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (CHROMIUM and CHROMEDRIVER):
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's chromium and chromium-driver (see .ci/run)")
        pytest.skip("chromium and chromium-driver are not installed")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium fetch a driver
    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.mark.slow
def test_browser_opens_index_and_an_artifact_page(smoke_book, browser):
    root, result = smoke_book
    assert result.returncode == 0
    html = root / "_build" / "html"
    browser.get((html / "index.html").as_uri())
    assert "Reproducing flat-minima federated learning" in browser.title
    browser.get((html / "book/artifacts/fedsam/fedsam-fig-11.html").as_uri())
    assert browser.title.startswith("Figure 11: convergence")
    images = browser.execute_script(
        "return Array.from(document.querySelectorAll('img'))"
        ".filter(i => i.getAttribute('src').includes('_images/'))"
        ".map(i => [i.complete, i.naturalWidth, i.naturalHeight]);")
    assert images and all(done and width > 100 and height > 100 for done, width, height in images)
    browser.get((html / "book/artifacts/fedsam/fedsam-table-2.html").as_uri())
    assert browser.title.startswith("Table 2: FedSAM, FedASAM and SWA")
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('table')).map(t => t.querySelectorAll('tr').length);")
    assert len(rows) >= 3 and max(rows) >= 5
    text = browser.execute_script("return document.body.innerText;")
    assert "FedASAM" in text and "paper" in text and "\u0394" in text
