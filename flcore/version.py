"""flcore's version, one place for the package, the book manifest and result records."""

__version__ = "0.1.0"
