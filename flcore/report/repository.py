"""The project's public repository URL: set once, copied everywhere else.

The URL is ``repository.url`` of the book's ``_config.yml``; when that is unset (absent or
empty), the checkout's git remote ``origin`` when it is a GitHub repository
(:func:`build_url`: Colab opens notebooks from GitHub only).  The book's build reads it
(``book/_ext/colab_links.py``): its Colab and repository buttons point there, and when
neither gives a URL the buttons are hidden, the notebooks' install cells are left out of
the pages, and every page says how to set it (:data:`UNSET_NOTE`).  The places that
cannot read a config file at run time hold a copy that this module writes and a test
checks:

- every notebook's first cell, which installs ``flcore @ git+<url>`` on Colab (``.py``
  and ``.ipynb`` of each jupytext pair);
- README.md and the book's introduction.

After changing the URL in ``_config.yml`` (or the remote): ``python -m flcore.report.repository --write``.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import yaml

#: A GitHub repository URL as the synced files write it.
URL_PATTERN = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")
#: A copy of the URL: what the notebooks hand to pip, or the text files' link named flcore.
#: Any other GitHub address (a paper's official code) is someone else's and stays as it is.
COPY_PATTERN = re.compile(r"(flcore @ git\+|\[flcore\]\()" + URL_PATTERN.pattern)
#: The files that hold a copy, relative to the repository root.
TEXT_FILES = ("README.md", "book/intro.md")
NOTEBOOK_GLOBS = ("notebooks/**/*.py", "notebooks/**/*.ipynb")


#: What every page of a book built without a repository URL says.
UNSET_NOTE = ("This build knows no public repository, so its Colab buttons and the notebooks' install cells are "
              "hidden: set repository.url in _config.yml (https://github.com/OWNER/NAME), or build from a clone "
              "whose git remote origin is on GitHub, then run python -m flcore.report.repository --write and "
              "rebuild.")
#: A GitHub remote as git prints it: https, ssh or scp-like, with or without ``.git``.
REMOTE_PATTERN = re.compile(r"(?:https://|ssh://git@|git@)github\.com[:/]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?")


def configured_url(root: Path) -> str | None:
    """``repository.url`` of ``root/_config.yml``; None when it is absent or empty."""
    config = yaml.safe_load((Path(root) / "_config.yml").read_text()) or {}
    repository = config.get("repository") if isinstance(config, dict) else None
    url = repository.get("url") if isinstance(repository, dict) else None
    if url is None or not str(url).strip():
        return None
    url = str(url).strip().rstrip("/")
    if not URL_PATTERN.fullmatch(url):
        raise ValueError(f"_config.yml repository.url must look like https://github.com/OWNER/NAME, got {url!r}")
    return url


def remote_url(root: Path) -> str | None:
    """The checkout's git remote ``origin`` as ``https://github.com/OWNER/NAME``; None when
    there is no git, no such remote, or it is not on GitHub (nothing is fetched)."""
    try:
        done = subprocess.run(["git", "-C", str(root), "remote", "get-url", "origin"], capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    match = REMOTE_PATTERN.fullmatch(done.stdout.strip()) if done.returncode == 0 else None
    return f"https://github.com/{match.group(1)}/{match.group(2)}" if match else None


def build_url(root: Path) -> str | None:
    """The URL a build of the book at ``root`` uses: ``_config.yml`` 's, else the git remote's."""
    return configured_url(root) or remote_url(root)


def repository_url(root: Path) -> str:
    """:func:`build_url`, or a ``ValueError`` saying how to set one."""
    url = build_url(root)
    if url is None:
        raise ValueError(f"{root}/_config.yml has no repository.url and the checkout no GitHub remote origin")
    return url


def build_config(root: Path) -> dict | None:
    """The book configuration a build at ``root`` uses in place of ``_config.yml``, or None
    when ``_config.yml`` names the repository itself.  Unset there: the git remote's URL
    (:func:`remote_url`); with none either, no repository, no launch, repository, edit or
    issues button, and :data:`UNSET_NOTE` as the announcement atop every page (the book's
    ``colab_links`` extension leaves the install cells out)."""
    root = Path(root)
    if configured_url(root):
        return None
    config = yaml.safe_load((root / "_config.yml").read_text()) or {}
    url = remote_url(root)
    if url:
        config["repository"] = {**(config.get("repository") or {}), "url": url}
        return config
    config["repository"] = {"url": ""}  # empty, not absent: jupyter-book's default would name its own
    config.pop("launch_buttons", None)
    html = config.setdefault("html", {})
    for button in ("use_repository_button", "use_edit_page_button", "use_issues_button"):
        html[button] = False
    sphinx = config.setdefault("sphinx", {})
    options = sphinx.setdefault("config", {}).setdefault("html_theme_options", {})
    options["announcement"] = UNSET_NOTE
    options["launch_buttons"] = {}
    return config


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
    """The files whose copy of the URL differs from :func:`build_url` (rewritten if
    ``write``); none when there is no URL to copy."""
    url = build_url(root)
    if url is None:
        return []
    stale = []
    for path in synced_files(root):
        text = path.read_text()
        fixed = COPY_PATTERN.sub(lambda match: match.group(1) + url, text)
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
    try:
        url = build_url(Path(args.root))
    except ValueError as exc:
        print(f"flcore: error: {exc}", file=sys.stderr)
        return 2
    if url is None:
        print(UNSET_NOTE, file=sys.stderr)
        return 1
    stale = out_of_sync(Path(args.root), write=args.write)
    for path in stale:
        print(f"{'rewrote' if args.write else 'out of sync'}: {path}")
    return 0 if args.write or not stale else 1


if __name__ == "__main__":
    sys.exit(main())
