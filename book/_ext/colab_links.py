"""Point the book's "Colab" launch button at the clean notebook in ``notebooks/``.

The pages of artifacts are the *executed* notebooks under ``book/artifacts/``, which
``flcore reproduce`` writes and the repository does not keep; sphinx-book-theme would
link Colab to that path.  This extension rewrites the link to the paired clean source,
``notebooks/<paper>/<id>.ipynb``, which starts with a cell that installs flcore.
"""

EXECUTED = "/book/artifacts/"
CLEAN = "/notebooks/"


def _rewrite(buttons):
    for button in buttons or []:
        if isinstance(button, dict):
            if button.get("type") == "group":
                _rewrite(button.get("buttons"))
            elif isinstance(button.get("url"), str) and "colab" in button["url"]:
                button["url"] = button["url"].replace(EXECUTED, CLEAN)


def rewrite_colab_links(app, pagename, templatename, context, doctree):
    _rewrite(context.get("header_buttons"))


def setup(app):
    app.connect("html-page-context", rewrite_colab_links, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
