"""The smoke book builds with -W, and a headless Chromium visits every page of it.

The build runs in a temporary copy of the book's sources (``notebooks/``, ``book/``,
``_config.yml``, ``_toc.yml``) so the working tree is left alone.  The browser visits
every page offline from the built files and requires: no console error, no failed
request, no broken internal link, every image loaded, MathJax rendered from the build,
code inputs collapsed; at 1280 px the claims tables' verdict column is in view and no page
prints ``nan`` or ``None`` outside code.  The checks on the built files: no path of the building machine
anywhere, every artifact page names its scale and data set first, every table has CSV
downloads, the Coverage page agrees with ``flcore reproduce --list --json``, and the
Claims page lists every claim.  The browser check is skipped when Chromium or its driver
is not installed (the test run then says so loudly at its end), except in CI (``CI``
set), which must install Debian's ``chromium`` and ``chromium-driver``.
"""
from __future__ import annotations

import base64
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

#: Over 30 s as a whole file (``make test-fast`` leaves it out).
pytestmark = pytest.mark.slow

pytest.importorskip("jupyter_book")
pytest.importorskip("papermill")

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


#: the tutorial page that starts Flower's simulation (Ray)
FLOWER_PAGE = "notebooks/tutorials/flower-fedsam-fedgloss"


def _leave_out_flower_page(root: Path) -> None:
    toc = root / "_toc.yml"
    toc.write_text("".join(line for line in toc.read_text().splitlines(keepends=True) if FLOWER_PAGE not in line))
    for suffix in (".ipynb", ".py"):
        (root / f"{FLOWER_PAGE}{suffix}").unlink()


@pytest.fixture(scope="module")
def smoke_book(tmp_path_factory):
    """The smoke book, without the Flower tutorial page: that page starts a Ray cluster and
    Flower's simulation, and runs under them in the extended tier
    (``test_flower.py::test_flower_tutorial_runs_under_flowers_engine``)."""
    base = tmp_path_factory.getbasetemp()
    root = tmp_path_factory.mktemp("book-src")
    for name in ("notebooks", "book"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("artifacts", "_artifacts.json",
                                                                                 ".ipynb_checkpoints"))
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, root / name)
    # the copy has no git remote: name a repository, as a published build does
    # (test_book_repository.py builds a page without one)
    config = root / "_config.yml"
    config.write_text(re.sub(r"(?m)^(repository:\n  url: ).*$", r"\1https://github.com/lab/fork", config.read_text()))
    env = {**os.environ, "FLCORE_CACHE": str(base / "flcore-cache")}
    command = [sys.executable, "-m", "flcore.cli.reproduce", "book", "--scale", "smoke", "--root", str(root),
               "--store", str(base / "smoke-store")]
    _leave_out_flower_page(root)  # run under Flower's engine in the extended tier (test_flower.py)
    return root, subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=2400)


@pytest.mark.slow
def test_smoke_book_builds_strictly(smoke_book):
    root, result = smoke_book
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-4000:]
    assert (root / "_build" / "html" / "index.html").is_file()
    manifest = json.loads((root / "book" / "_artifacts.json").read_text())["artifacts"]
    assert manifest and all(entry["status"] == "ok" and entry["scale"] == "smoke" for entry in manifest.values())
    from flcore.reproduction.artifacts import artifact_ids

    assert f"{len(artifact_ids())} ok, 0 failed" in result.stdout
    guide = (root / "_build" / "html" / "book" / "reference" / "adding-a-paper.html").read_text()
    assert "papers/toy/__init__.py" in guide and "<strong>init</strong>" not in guide  # a caption, not bold
    for page in ("coverage", "claims", "stand-in", "fedsam/index", "fedgloss/index", "fedgf/index", "fedlesam/index",
                 "fedima/index"):
        assert (root / "_build" / "html" / "book" / f"{page}.html").is_file(), page


@pytest.mark.slow
def test_checking_one_step_tutorial_page_shows_its_checks(smoke_book):
    root, result = smoke_book
    assert result.returncode == 0
    page = (root / "_build" / "html" / "notebooks" / "tutorials" / "checking-one-step.html").read_text()
    assert "max |hand - flcore|" in page and "resumed round equals the uninterrupted one" in page


@pytest.mark.slow
def test_sidebar_lists_every_paper_and_opens_the_current_branch(smoke_book):
    """``collapse_navbar``: every page's sidebar links each paper's landing page and the
    pages of its own paper, not every page of the book."""
    root, _ = smoke_book
    page = (root / "_build/html/book/artifacts/fedsam/fedsam-table-2.html").read_text()
    nav = page[page.index("bd-docs-nav"):]
    links = set(re.findall(r'href="([^"]+)"', nav[:nav.index("</nav>")]))
    assert {f"../../{paper}/index.html" for paper in ("fedsam", "fedgloss", "fedgf", "fedlesam", "fedima")} <= links
    assert {"fedsam-table-1.html", "fedsam-fig-16.html"} <= links
    assert not any("fedgloss-table" in link for link in links)


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
        pytest.skip("chromium and chromium-driver are not installed: the browser test of the book did not run")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium fetch a driver
    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--allow-file-access-from-files", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
                 # every host name fails to resolve, so a page that fetches from the network fails here
                 # whatever the machine's DNS can reach
                 "--host-resolver-rules=MAP * ~NOTFOUND"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        driver.get("about:blank")
        time.sleep(1.0)  # let the start-up tab's own requests finish before the first page
        _requests(driver)
        yield driver
    finally:
        driver.quit()


def _pages(html: Path) -> list[Path]:
    return sorted(p for p in html.rglob("*.html") if not {"_static", "_sources"} & set(p.relative_to(html).parts))


#: true once the shown page has loaded, will not redirect, and MathJax (if any) has typeset
SETTLED = (
    "if (document.readyState !== 'complete') return false;"
    "if (document.querySelector('meta[http-equiv=\"Refresh\" i]')) return false;"
    "if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) return true;"
    "if (window.flcoreTypeset === undefined) { window.flcoreTypeset = false;"
    "  const mark = () => { window.flcoreTypeset = true; };"
    "  MathJax.startup.promise.then(mark, mark); }"
    "return window.flcoreTypeset;"
)


def _visit(browser, page: Path, timeout: float = 90.0) -> dict:
    """Load ``page`` and wait, by polling, until it has settled.

    Polling rather than one asynchronous script: ``index.html`` redirects with a meta
    refresh, and a navigation that lands while an asynchronous script waits destroys the
    script's context, so it never answers (a "script timeout" on a loaded machine).
    """
    from selenium.common.exceptions import WebDriverException

    browser.get_log("browser")  # drop what earlier pages logged
    _requests(browser)  # and settle their requests
    browser.get(page.as_uri())
    deadline = time.monotonic() + timeout
    while True:
        try:
            if browser.execute_script(SETTLED):
                break
        except WebDriverException:  # the page navigated between two polls
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{page.name} did not settle within {timeout:.0f} s")
        time.sleep(0.1)
    time.sleep(0.3)  # let the typeset math lay out
    failed = _requests(browser)
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    return {"errors": errors, "failed": failed}


#: documents of the browser itself (its start-up tab, chrome://new-tab-page-third-party/ and
#: the like): their requests are not the book's
BROWSERS_OWN = ("chrome:", "chrome-untrusted:", "chrome-search:", "devtools:", "about:")


def _requests(browser) -> list[str]:
    """The requests that failed since the last call, each as ``"URL: error (from DOCUMENT)"``,
    leaving out those the browser's own pages made.

    Each request is attributed to the document that sent it (``Network.requestWillBeSent``
    names it), remembered across calls: the browser's start-up tab fetches for itself, and its
    requests can fail while the first page of the book loads.  A failure whose request was
    never logged is the start-up tab's too: every page of the book is asked for after the
    driver's session, and with it the network log, has started.
    """
    sent = browser.__dict__.setdefault("flcore_sent", {})
    failed = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent":
            sent[params["requestId"]] = (params.get("documentURL", ""), params["request"]["url"])
        elif message["method"] == "Network.loadingFailed" and not params.get("canceled"):
            document, url = sent.get(params["requestId"], ("chrome:", ""))
            if not document.startswith(BROWSERS_OWN):
                failed.append(f"{url[:100]}: {params.get('errorText')} (from {document[-60:]})")
    return failed


LINKS = ("return Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))"
         ".filter(h => !/^(https?:|mailto:|javascript:|data:|#)/.test(h));")
IMAGES = (
    "return Array.from(document.images).map(i => [i.getAttribute('src').slice(0, 60), i.complete, i.naturalWidth]);"
)
COLLAPSED = ("return Array.from(document.querySelectorAll('.cell_input')).every("
             "e => { const d = e.closest('details'); return d !== null && !d.open; });")


def _sample(html: Path, pages: list[Path]) -> list[Path]:
    """The pages Chromium visits: every page that is not an artifact page, and the first
    table and figure of each paper (the artifact pages share one template; every page's
    links and images are checked from its HTML by ``test_every_pages_links_and_images_resolve``)."""
    picked, seen = [], set()
    for page in pages:
        parts = page.relative_to(html).parts
        if "artifacts" not in parts:
            picked.append(page)
            continue
        kind = (parts[-2], "fig" if "-fig-" in page.name else "table")
        if kind not in seen:
            seen.add(kind)
            picked.append(page)
    return picked


@pytest.mark.slow
def test_every_pages_links_and_images_resolve(smoke_book):
    root, result = smoke_book
    assert result.returncode == 0
    html = root / "_build" / "html"
    problems = []
    for page in _pages(html):
        text = page.read_text(errors="ignore")
        for attr, target in re.findall(r'\b(href|src)="([^"]+)"', text):
            if re.match(r"(https?:|mailto:|javascript:|data:|#)", target):
                continue
            path = unquote(target.split("#")[0].split("?")[0])
            if path and not (page.parent / path).resolve().exists():
                problems.append(f"{page.relative_to(html)}: {attr} {target} does not resolve")
    assert not problems, "\n".join(problems[:50])


@pytest.mark.slow
def test_browser_pages_clean(smoke_book, browser):
    root, result = smoke_book
    assert result.returncode == 0
    html = root / "_build" / "html"
    pages = _sample(html, _pages(html))
    assert len(pages) >= 25 and sum("artifacts" in p.parts for p in pages) == 10
    problems = []
    for page in pages:
        name = page.relative_to(html).as_posix()
        seen = _visit(browser, page)
        if seen["errors"]:
            problems.append(f"{name}: console errors {seen['errors']}")
        if seen["failed"]:
            problems.append(f"{name}: failed requests {seen['failed']}")
        shown = Path(unquote(urlparse(browser.current_url).path))  # after a redirect (index.html)
        for href in browser.execute_script(LINKS):
            target = (shown.parent / unquote(href.split("#")[0].split("?")[0])).resolve()
            if href.split("#")[0] and not target.exists():
                problems.append(f"{name}: broken link {href}")
        for src, complete, width in browser.execute_script(IMAGES):
            if not (complete and width > 0):
                problems.append(f"{name}: image not loaded {src}")
        if "/artifacts/" in name and not browser.execute_script(COLLAPSED):
            problems.append(f"{name}: a code input is not collapsed")
    assert not problems, "\n".join(problems)


#: every claims table's "verdict" header: its right edge, its table container's right edge,
#: how far the container scrolls sideways, and the window's width
VERDICT_COLUMN = """const out = [];
for (const th of document.querySelectorAll('th')) {
  if (th.innerText.trim() !== 'verdict') continue;
  const box = th.closest('table').parentElement;
  out.push([th.getBoundingClientRect().right, box.getBoundingClientRect().right, box.scrollWidth - box.clientWidth,
            document.documentElement.clientWidth]);
}
return out;"""
#: the page's text outside code (code inputs, literals, highlighted blocks)
TEXT_OUTSIDE_CODE = """const copy = (document.querySelector('main') || document.body).cloneNode(true);
copy.querySelectorAll('pre, code, kbd, .highlight, .cell_input, script, style').forEach(e => e.remove());
const walker = document.createTreeWalker(copy, NodeFilter.SHOW_TEXT), parts = [];
while (walker.nextNode()) parts.push(walker.currentNode.nodeValue);
return parts.join(' ');"""


@pytest.mark.slow
def test_browser_claims_tables_show_the_verdict_at_1280_px_and_no_page_prints_nan(smoke_book, browser):
    """At 1280 px the verdict column of every claims table (Claims, the landing pages, the
    artifact pages' verdicts) is in view without scrolling sideways, and no page visited
    prints ``nan`` or ``None`` outside code (the API reference, whose signatures are code,
    is not visited)."""
    root, result = smoke_book
    assert result.returncode == 0
    html = root / "_build" / "html"
    size = browser.get_window_size()
    browser.set_window_size(1280, 900)
    problems = []
    try:
        landing = [html / "book" / "claims.html"] + [html / "book" / paper / "index.html"
                                                     for paper in ("fedsam", "fedgloss", "fedgf", "fedlesam", "fedima")]
        pages = list(dict.fromkeys(landing + [p for p in _sample(html, _pages(html)) if "api" not in p.parts]))
        for page in pages:
            name = page.relative_to(html).as_posix()
            _visit(browser, page)
            columns = browser.execute_script(VERDICT_COLUMN)
            if page in landing and not columns:
                problems.append(f"{name}: no claims table")
            for right, box_right, scroll, width in columns:
                if right > box_right + 1 or right > width or scroll > 1:
                    problems.append(f"{name}: verdict column at {right:.0f} px, its table's box ends at "
                                    f"{box_right:.0f} px (scrolls {scroll} px), window {width} px")
                    break
            # prose may name NaN (the value's name); a generated table or verdict never prints it
            printed = r"nan|NaN|None" if name.startswith("book/artifacts/") or "claims" in name else r"nan|None"
            found = re.findall(rf".{{0,40}}\b(?:{printed})\b.{{0,20}}", browser.execute_script(TEXT_OUTSIDE_CODE))
            if found:
                problems.append(f"{name}: prints {found[:3]}")
    finally:
        browser.set_window_size(size["width"], size["height"])
    assert not problems, "\n".join(problems)


def _widest_artifact_pages(html: Path, count: int = 5) -> list[Path]:
    """The artifact pages whose widest table row has the most cells (the widest to lay out)."""
    def widest_row(page: Path) -> int:
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", page.read_text(errors="replace"), flags=re.S)
        return max((len(re.findall(r"<t[dh][\s>]", row)) for row in rows), default=0)
    pages = [p for p in _pages(html) if p.relative_to(html).parts[:2] == ("book", "artifacts")]
    return sorted(pages, key=widest_row, reverse=True)[:count]


#: the document's width against the window's, after layout
DOCUMENT_WIDTH = "return [document.documentElement.scrollWidth, document.documentElement.clientWidth];"


@pytest.mark.slow
def test_browser_no_page_is_wider_than_a_1280_px_window(smoke_book, browser, tmp_path_factory):
    """At 1280 x 900 the document of Claims, Performance and the five widest artifact pages is
    no wider than the window (wide tables scroll in their own box: book/_css/flcore.css); each
    page's screenshot is kept in the test's output folder."""
    root, result = smoke_book
    assert result.returncode == 0
    html = root / "_build" / "html"
    shots = tmp_path_factory.mktemp("page-widths")
    size = browser.get_window_size()
    browser.set_window_size(1280, 900)
    problems = []
    try:
        pages = [html / "book" / "claims.html", html / "book" / "performance.html", *_widest_artifact_pages(html)]
        for page in pages:
            _visit(browser, page)
            document, window = browser.execute_script(DOCUMENT_WIDTH)
            browser.save_screenshot(str(shots / (page.stem + ".png")))
            if document > window + 1:
                problems.append(f"{page.relative_to(html)}: the document is {document} px wide in a {window} px window")
    finally:
        browser.set_window_size(size["width"], size["height"])
    print(f"screenshots: {shots}")
    assert len(pages) == 7 and not problems, "\n".join(problems)


@pytest.mark.slow
def test_browser_check_catches_a_page_that_fetches_from_the_network(browser, tmp_path):
    """The failed-request check of ``test_browser_pages_clean`` can fail: a page that loads its
    script and an image from the network is caught on any machine (host names never resolve)."""
    page = tmp_path / "cdn.html"
    page.write_text('<!doctype html><html><head><script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/'
                    'tex-chtml.js"></script></head><body><img src="https://example.org/figure.png"></body></html>')
    failed = _visit(browser, page)["failed"]
    assert any(f.startswith("https://cdn.jsdelivr.net/") and "ERR_NAME_NOT_RESOLVED" in f for f in failed), failed
    assert any(f.startswith("https://example.org/figure.png") and "cdn.html" in f for f in failed), failed
    offline = tmp_path / "offline.html"
    offline.write_text("<!doctype html><html><body><p>nothing to fetch</p></body></html>")
    assert _visit(browser, offline)["failed"] == []  # the page before's failures stay with it


@pytest.mark.slow
def test_browser_renders_math_from_the_build(smoke_book, browser):
    root, _ = smoke_book
    page = root / "_build/html/book/methods/fedsam.html"
    assert "cdn.jsdelivr" not in page.read_text()
    _visit(browser, page)
    assert browser.execute_script("return document.querySelectorAll('mjx-container').length;") > 0
    text = browser.execute_script("return document.body.innerText;")
    assert "\\rho" not in text and "\\nabla" not in text


@pytest.mark.slow
def test_browser_shows_table_and_figure_pages(smoke_book, browser):
    root, _ = smoke_book
    html = root / "_build" / "html"
    _visit(browser, html / "index.html")
    assert "Reproducing flat-minima federated learning" in browser.title
    _visit(browser, html / "book/artifacts/fedsam/fedsam-fig-11.html")
    assert browser.title.startswith("Figure 11: convergence")
    alts = browser.execute_script("return Array.from(document.images).map(i => i.alt).filter(a => a.length > 40);")
    assert alts and all("accuracy" in alt for alt in alts)
    captions = browser.execute_script(
        "return Array.from(document.querySelectorAll('figcaption')).map(c => c.innerText);"
    )
    assert captions and captions[0].startswith("Figure 1.")
    _visit(browser, html / "book/artifacts/fedsam/fedsam-table-2.html")
    assert browser.title.startswith("Table 2: FedSAM, FedASAM and SWA")
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('table')).map(t => t.querySelectorAll('tr').length);")
    assert len(rows) >= 5 and max(rows) >= 5
    text = browser.execute_script("return document.body.innerText;")
    assert "FedASAM" in text and "Kendall" in text and "\u0394" not in text.split("Published beside ours")[1]
    assert "holds" in text or "inconclusive" in text or "fails" in text


def _files(html: Path):
    for path in html.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".ipynb", ".js", ".txt", ".json", ".md", ".csv"):
            yield path


@pytest.mark.slow
def test_no_path_of_the_building_machine_in_the_site(smoke_book, tmp_path_factory):
    root, _ = smoke_book
    store = str(tmp_path_factory.getbasetemp() / "smoke-store")
    leaks = [p for p in _files(root / "_build" / "html") if str(root) in p.read_text(errors="ignore")
             or store in p.read_text(errors="ignore") or str(ROOT) in p.read_text(errors="ignore")]
    assert not leaks, leaks[:5]


@pytest.mark.slow
def test_artifact_pages_name_scale_and_data_first_and_offer_csv(smoke_book):
    root, _ = smoke_book
    for page in sorted((root / "_build/html/book/artifacts/fedsam").glob("*.html")):
        main = page.read_text().split('id="main-content"', 1)[1]
        text = re.sub(r"<[^>]+>", " ", main)
        text = re.sub(r"\s+", " ", text)
        head = text[:text.index("Built at the")+200] if "Built at the" in text else ""
        config = "This page trains nothing" in head
        assert "Built at the smoke scale" in head and ("MNIST-1D" in head or config), page.name
        assert text.index("Built at the") < 400, page.name  # right under the title
        links = re.findall(r'<a download="([^"]+)" href="data:text/csv;charset=utf-8;base64,([^"]+)"', main)
        tables = len(re.findall(r'<table[^>]*class="[^"]*dataframe', main))
        assert links and tables and main.count("Download:") == tables, page.name  # every table offers CSV
        for _, data in links:
            rows = list(csv.reader(io.StringIO(base64.b64decode(data).decode("utf-8"))))
            assert len(rows) >= 2 and len(rows[0]) >= 2


@pytest.mark.slow
def test_coverage_and_claims_pages_agree_with_the_cli(smoke_book, tmp_path_factory):
    from flcore.report.escaping import page_text
    from flcore.reproduction.claims import all_claims

    root, _ = smoke_book
    listed = subprocess.run([sys.executable, "-m", "flcore", "reproduce", "--list", "--json", "--root", str(root),
                             "--scale", "smoke"], capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in listed.splitlines()]
    counts = {s: sum(r["status"] == s for r in rows) for s in ("regenerated", "pending", "not_regenerable")}
    assert sum(counts.values()) == 110
    assert all(r["scales_built"] == ["smoke"] for r in rows if r["status"] == "regenerated")
    coverage = (root / "book" / "coverage.md").read_text()
    assert (f"| **all** | **110** | **{counts['regenerated']}** | **{counts['pending']}** "
            f"| **{counts['not_regenerable']}** |") in coverage
    for row in rows:
        assert page_text(row["caption"]) in coverage  # a paper file's text, escaped
    claims = (root / "book" / "claims.md").read_text()
    for claim in all_claims():
        assert page_text(claim.text) in claims, claim.id
    # the verdicts as files at the site's root: the command's output, and one CSV row per comparison
    store = tmp_path_factory.getbasetemp() / "smoke-store"
    printed = subprocess.run([sys.executable, "-m", "flcore", "claims", "--scale", "smoke", "--store", str(store),
                              "--json"], capture_output=True, text=True, check=True, cwd=root).stdout
    on_site = json.loads((root / "_build" / "html" / "claims.json").read_text())
    assert on_site == [json.loads(line) for line in printed.splitlines()]
    table = list(csv.DictReader(io.StringIO((root / "_build" / "html" / "claims.csv").read_text())))
    assert len(table) == sum(len(r["comparisons"]) for r in on_site)
    assert {row["claim"] for row in table} == {r["id"] for r in on_site}
    assert '<a href="../claims.json">claims.json</a>' in claims


#: the verdict map's box: its bottom in the window and its cells, after scrolling to the top
VERDICT_MAP_BOX = (
    "window.scrollTo(0, 0); const m = document.querySelector('.verdict-map');"
    "if (!m) return null; const r = m.getBoundingClientRect();"
    "return [r.top, r.bottom, r.right, m.querySelectorAll('a').length, window.innerHeight, window.innerWidth];")


@pytest.mark.slow
def test_browser_verdict_map_shows_every_claim_without_scrolling_at_1280_by_900(smoke_book, browser):
    """The map at the top of Claims lists every claim and fits the first screen at 1280 x 900; each
    landing page's map lists that paper's claims, and every cell links to a claim block on its page."""
    from flcore.reproduction.claims import all_claims

    root, result = smoke_book
    assert result.returncode == 0
    html = root / "_build" / "html"
    size = browser.get_window_size()
    browser.set_window_size(1280, 900)
    try:
        _visit(browser, html / "book" / "claims.html")
        top, bottom, right, cells, height, width = browser.execute_script(VERDICT_MAP_BOX)
        assert cells == len(all_claims())
        assert bottom <= height and right <= width, (top, bottom, right, height, width)
        for paper in ("fedsam", "fedgloss", "fedgf", "fedlesam", "fedima"):
            page = html / "book" / paper / "index.html"
            text = page.read_text()
            _visit(browser, page)
            box = browser.execute_script(VERDICT_MAP_BOX)
            assert box is not None and box[3] == sum(c.paper == paper for c in all_claims()), paper
            for target in re.findall(r'<a href="#(claim-[^"]+)"', text):
                assert f'id="{target}"' in text, (paper, target)
    finally:
        browser.set_window_size(size["width"], size["height"])


@pytest.mark.slow
def test_every_pages_verdict_box_counts_what_coverage_counts(smoke_book):
    """On every executed artifact page the verdict box's title counts the page's claims as the
    Coverage row of that artifact does ("no claim" where Coverage has none; the later claims
    counted apart in both), and no page says "tie" or "not checked" outside a capped preview."""
    from flcore.reproduction.artifacts import get_artifact

    root, result = smoke_book
    assert result.returncode == 0
    coverage = (root / "book" / "coverage.md").read_text()
    cells = {m[0]: m[1].strip() for m in re.findall(r"\(artifacts/\w+/([\w-]+)\.ipynb\).*\| ([^|]*) \|$", coverage,
                                                       re.M)}
    checked = 0
    for page in sorted((root / "book" / "artifacts").rglob("*.ipynb")):
        artifact_id = page.stem
        if get_artifact(artifact_id).questions is not None:  # the book's own questions: not registry claims
            continue
        notebook = json.loads(page.read_text())
        boxes = ["".join(c["source"]) for c in notebook["cells"] if "flcore-verdict" in c["metadata"].get("tags", [])]
        assert len(boxes) == 1, artifact_id
        title = re.match(r":::\{admonition\} Verdicts at the smoke scale: (.*)\n", boxes[0])[1]
        coverage_cell = cells[artifact_id].split("; ")[0] if cells[artifact_id] else "no claim"
        assert title == coverage_cell, (artifact_id, title, cells[artifact_id])
        assert " tie " not in boxes[0]
        checked += 1
    assert checked > 90
