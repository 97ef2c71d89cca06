"""The book's Colab buttons: pointed at the clean notebooks, at a repository that exists.

The pages of artifacts are the *executed* notebooks under ``book/artifacts/``, which
``flcore reproduce`` writes and the repository does not keep; sphinx-book-theme would
link Colab to that path.  This extension rewrites the link to the paired clean source,
``notebooks/<paper>/<id>.ipynb``, which starts with a cell that installs flcore.

The repository URL is taken when ``flcore book`` starts the build
(:func:`flcore.report.repository.build_config`): ``repository.url`` of ``_config.yml``,
else the checkout's GitHub remote ``origin``.  When neither gives one, a button or an
install cell could only point to a repository that does not exist: the launch,
repository and source buttons are hidden, the notebooks' install cells are left out of
the pages (a note stands in their place), so is every block a page marks as speaking of the
repository (a ``{container} flcore-needs-repository``: the introduction's Colab prose and its
link to the code), and every page opens with
:data:`~flcore.report.repository.UNSET_NOTE` (the announcement), which says how to set it.
"""
from __future__ import annotations

import html

EXECUTED = "/book/artifacts/"
CLEAN = "/notebooks/"
#: What a notebook's install cell hands to pip (``flcore.report.repository.install_requirement``).
INSTALL_MARK = "flcore @ git+"
#: How a notebook's text introduces its install cell: dropped with the cell.
INSTALL_PROSE = "The first cell installs flcore"
#: The class of a page's block that only makes sense with a repository (``{container}``).
NEEDS_REPOSITORY = "flcore-needs-repository"


def _rewrite(buttons):
    for button in buttons or []:
        if isinstance(button, dict):
            if button.get("type") == "group":
                _rewrite(button.get("buttons"))
            elif isinstance(button.get("url"), str) and "colab" in button["url"]:
                button["url"] = button["url"].replace(EXECUTED, CLEAN)


def _div_end(body: str, start: int) -> int | None:
    """The end of the ``<div`` opened at ``start`` (nested divs counted), or None."""
    depth, position = 0, start
    while True:
        opening, closing = body.find("<div", position), body.find("</div>", position)
        if closing < 0:
            return None
        if 0 <= opening < closing:
            depth, position = depth + 1, opening + 4
        else:
            depth, position = depth - 1, closing + len("</div>")
            if depth == 0:
                return position


def _cell_around(body: str, at: int) -> tuple[int, int] | None:
    """``(start, end)`` of the notebook cell ``<div class="cell ...">`` holding ``body[at]``."""
    start = max(body.rfind('<div class="cell ', 0, at), body.rfind('<div class="cell"', 0, at))
    if start < 0:
        return None
    end = _div_end(body, start)
    return (start, end) if end is not None and end > at else None


def drop_install_prose(body: str) -> str:
    """``body`` without the paragraphs that introduce the install cell (:data:`INSTALL_PROSE`)."""
    at = body.find(INSTALL_PROSE)
    while at >= 0:
        start, end = body.rfind("<p", 0, at), body.find("</p>", at)
        if start < 0 or end < 0:
            break
        body = body[:start] + body[end + len("</p>"):]
        at = body.find(INSTALL_PROSE, start)
    return body


def drop_install_cells(body: str, note: str) -> str:
    """``body`` without the cells that install flcore from the repository, each replaced by
    a paragraph saying why (``note``), nor the text that introduces them."""
    body = drop_install_prose(body)
    at = body.find(INSTALL_MARK)
    while at >= 0:
        cell = _cell_around(body, at)
        if cell is None:
            break
        replacement = f'<p class="flcore-install-hidden">{html.escape(note)}</p>'
        body = body[:cell[0]] + replacement + body[cell[1]:]
        at = body.find(INSTALL_MARK, cell[0] + len(replacement))
    return body


def drop_repository_blocks(body: str) -> str:
    """``body`` without the blocks of class :data:`NEEDS_REPOSITORY`."""
    at = body.find(NEEDS_REPOSITORY)
    while at >= 0:
        start = body.rfind("<div", 0, at)
        end = _div_end(body, start) if start >= 0 else None
        if end is None:
            break
        body = body[:start] + body[end:]
        at = body.find(NEEDS_REPOSITORY, start)
    return body


def set_repository(app, config):
    """The repository URL of this build (``flcore book`` resolved it into the configuration);
    without one, no button points to it."""
    options = config.html_theme_options
    app.flcore_repository_url = options.get("repository_url") or None
    if app.flcore_repository_url is None:
        options["launch_buttons"] = {}
        for button in ("use_repository_button", "use_source_button", "use_edit_page_button", "use_issues_button"):
            options[button] = False


def rewrite_colab_links(app, pagename, templatename, context, doctree):
    if getattr(app, "flcore_repository_url", True):
        _rewrite(context.get("header_buttons"))
        return
    from flcore.report.repository import UNSET_NOTE

    if isinstance(context.get("body"), str):
        context["body"] = drop_repository_blocks(drop_install_cells(context["body"], UNSET_NOTE))


def setup(app):
    app.connect("config-inited", set_repository)
    app.connect("html-page-context", rewrite_colab_links, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
