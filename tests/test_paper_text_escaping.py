"""Text from a paper's files (claim texts, later claims' citations, quotes and URLs) reaches
the pages as text: rendered through a CommonMark parser with tables, hostile strings leave
no tag, no link of their own and no extra table cell."""
import pytest

from flcore.report.escaping import link_text
from flcore.report.page import claims_markdown, later_claims_markdown

markdown_it = pytest.importorskip("markdown_it")
HOSTILE = ('A <script>alert(1)</script> <img src=x onerror=alert(2)> <iframe src="//x"></iframe> | cell '
           '[CLICK](javascript:alert(3)) **bold** ```{raw} html')


def _html(markdown: str) -> str:
    return markdown_it.MarkdownIt("commonmark").enable("table").render(markdown)


def _result(text, **extra):
    row = {"cells": {"better": {"algorithm": "A"}, "worse": {"algorithm": "B"}}, "published": {"gap": 1.0},
           "seeds": [0, 1, 2], "gap": 0.5, "sd": 0.1, "sd_from": "paired seeds", "threshold": 0.2, "mde": 0.3,
           "verdict": "holds", "reason": None, "margin": 1.0}
    return {"id": "x-hostile", "text": text, "artifacts": ["fedsam-table-2"], "verdict": "holds", "reason": None,
            "units": "points", "summary": "1 of 1 comparison run: 1 hold", "comparisons": [row], **extra}


def _inert(html: str) -> None:
    for tag in ("<script", "<img", "<iframe", 'href="javascript', "<strong>bold"):
        assert tag not in html, tag


def test_a_claim_text_with_markup_renders_as_text_and_keeps_its_table_row():
    html = _html(claims_markdown([_result(HOSTILE)], "small", explain=False))
    _inert(html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # the claims table keeps its six columns: the text's | is no cell boundary there
    table = html.split("<tbody>", 1)[1]
    assert all(row.count("<td") == 6 for row in table.split("</tr>")[:-1])


def test_a_later_claims_citation_quote_and_url_cannot_break_out():
    source = {"citation": HOSTILE, "quote": HOSTILE,
              "url": "https://example.com/x) [CLICK](javascript:alert(4)"}
    later = _result("B beats A", later_source=source, against=HOSTILE, paper="fedsam")
    html = _html(later_claims_markdown([later], "small"))
    _inert(html)
    assert 'href="https://example.com/x)' not in html  # the malformed address is shown, not linked
    good = _html(link_text("Liu et al.", "https://arxiv.org/abs/2507.20000"))
    assert '<a href="https://arxiv.org/abs/2507.20000">Liu et al.</a>' in good


@pytest.mark.parametrize("url", ["javascript:alert(1)", "ftp://x/y", "https://", "https://a.b/x y", "//a.b/c",
                                 "https://a.b/c)d", 'https://a.b/"onmouseover="x'])
def test_only_well_formed_http_addresses_become_links(url):
    assert "](" not in link_text("label", url)
