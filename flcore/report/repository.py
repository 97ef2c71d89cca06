"""The project's public repository URL: set once, in ``_config.yml``, copied everywhere else.

``repository.url`` of the book's ``_config.yml`` is the single source.  The book's Colab
and repository buttons read it directly; the places that cannot read a config file at
run time hold a copy that this module writes and a test checks:

- every notebook's first cell, which installs ``flcore @ git+<url>`` on Colab (``.py``
  and ``.ipynb`` of each jupytext pair);
- README.md and the book's introduction.

After changing the URL in ``_config.yml``: ``python -m flcore.report.repository --write``.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

#: A GitHub repository URL as the synced files write it.
URL_PATTERN = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")
#: The files that hold a copy, relative to the repository root.
TEXT_FILES = ("README.md", "book/intro.md")
NOTEBOOK_GLOBS = ("notebooks/**/*.py", "notebooks/**/*.ipynb")


def repository_url(root: Path) -> str:
    config = yaml.safe_load((Path(root) / "_config.yml").read_text())
    try:
        url = config["repository"]["url"].rstrip("/")
    except (KeyError, TypeError, AttributeError):
        raise ValueError(f"{root}/_config.yml has no repository.url") from None
    if not URL_PATTERN.fullmatch(url):
        raise ValueError(f"_config.yml repository.url must look like https://github.com/OWNER/NAME, got {url!r}")
    return url


def install_requirement(url: str) -> str:
    """What the notebooks' first cell hands to pip."""
    return f"flcore @ git+{url}"


def synced_files(root: Path) -> list[Path]:
    root = Path(root)
    files = [root / name for name in TEXT_FILES if (root / name).is_file()]
    for pattern in NOTEBOOK_GLOBS:
        files.extend(sorted(p for p in root.glob(pattern) if ".ipynb_checkpoints" not in p.parts))
    return files


def out_of_sync(root: Path, write: bool = False) -> list[Path]:
    """The files whose copy of the URL differs from ``_config.yml`` (rewritten if ``write``)."""
    url = repository_url(root)
    stale = []
    for path in synced_files(root):
        text = path.read_text()
        fixed = URL_PATTERN.sub(url, text)
        if fixed != text:
            stale.append(path)
            if write:
                path.write_text(fixed)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flcore.report.repository", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=".", help="repository root (holds _config.yml)")
    parser.add_argument("--write", action="store_true", help="rewrite the files that are out of sync")
    args = parser.parse_args(argv)
    stale = out_of_sync(Path(args.root), write=args.write)
    for path in stale:
        print(f"{'rewrote' if args.write else 'out of sync'}: {path}")
    return 0 if args.write or not stale else 1


if __name__ == "__main__":
    sys.exit(main())
