"""The book: executing the artifact notebooks into it and writing its generated pages.

- :mod:`.manifest`: the book manifest and what makes a page stale;
- :mod:`.reproduce`: papermill execution of the artifact notebooks, the book build;
- :mod:`.pages`: the generated Coverage, Claims and paper pages;
- :mod:`.toc`: the papers' part of ``_toc.yml``, from the registry.
"""
