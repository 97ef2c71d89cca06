"""The five papers, one folder each: presets, published values, claims, run definitions
and page helpers, readable top to bottom.  Importing this package registers them, in the
book's order, with the reproduction machinery (:mod:`flcore.reproduction`), which knows
no paper by name.
"""
from flcore.papers import fedsam, fedgloss, fedgf, fedlesam, fedima  # noqa: F401,I001  (the book's order)
