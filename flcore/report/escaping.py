"""Text read from a file, shown on a page as text: escaped for Markdown and HTML.

A page's Markdown (a notebook's markdown cell, a ``Markdown`` output) is read by MyST,
which reads both Markdown and raw HTML.  A string that comes from a store, a results bundle
or a split file -- a device name, a date, a commit, a config value, a run id -- is someone
else's text: ``<script>`` in it would run in the reader's browser, and ``**``, ``[..](..)``,
a ``|`` or a line break would change the page around it.  :func:`page_text` makes such a
string inert wherever a page puts it (a paragraph or a table cell):

- every character Markdown gives a meaning (CommonMark's ASCII punctuation that can start
  or end a construct) is backslash-escaped, so it prints as itself;
- ``&``, ``<``, ``>`` and quotes become HTML entities, so no tag or entity survives;
- line breaks and other control characters become spaces, so the text stays on its
  line (and in its table row).
"""
from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

#: The characters CommonMark lets a backslash escape that can start or end a construct
#: (``<``, ``>`` and ``&`` become entities instead).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~:^$=])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


def page_text(value: object, limit: int = 500) -> str:
    """``value`` as text that a Markdown page shows as itself (module docstring), at most
    ``limit`` characters of it (the rest as an ellipsis)."""
    text = _CONTROL.sub(" ", str(value))
    if len(text) > limit:
        text = text[:limit] + "\u2026"
    return html.escape(_MARKDOWN_SPECIAL.sub(r"\\\1", text), quote=True)


def link_text(label: object, url: object) -> str:
    """``label`` as a Markdown link to ``url`` when ``url`` is a well-formed http(s) address
    (a host, and none of the characters that could close the link or the page around it),
    else ``label`` followed by the address as text; both escaped (:func:`page_text`)."""
    address = str(url or "")
    try:
        parts = urlsplit(address)
    except ValueError:
        parts = None
    if (parts is not None and parts.scheme in ("http", "https") and parts.netloc and len(address) <= 2000
            and not re.search(r"[\s<>()\[\]\\\"'`|{}^]", address)):
        return f"[{page_text(label)}]({address})"
    return page_text(label) + (f" ({page_text(address)})" if address else "")


__all__ = ["link_text", "page_text"]
