"""Pages without duplicate scripts.

sphinx-thebe registers its configuration script every time the environment reads
documents (``env-before-read-docs``); in one build that can happen more than once, and
the page then declares ``const THEBE_JS_URL`` twice: a console error on every page.
This extension keeps the first of identical script entries of a page.

The theme's colour mode comes from the browser's stored preference; on a first visit
there is none, and the theme logs "invalid theme mode" as an error before falling back
to "auto".  A first script sets "auto" when nothing is stored.  It runs before
the themes' handlers of ``html-page-context``: Sphinx stops calling handlers at the first
one that returns a template name.
"""


def _key(script):
    attributes = getattr(script, "attributes", {}) or {}
    # an inline script's filename is None when registered and "" once the environment
    # was pickled and read back: the same script
    return (getattr(script, "filename", str(script)) or None, attributes.get("body"),
            tuple(sorted((k, str(v)) for k, v in attributes.items() if k != "body")))


def drop_duplicate_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        key = _key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    context["script_files"] = kept


DEFAULT_MODE = ('if (!document.documentElement.dataset.mode) '
                '{ document.documentElement.dataset.mode = "auto"; }')


def setup(app):
    app.add_js_file(None, body=DEFAULT_MODE, priority=1)
    app.connect("html-page-context", drop_duplicate_scripts, priority=550)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
