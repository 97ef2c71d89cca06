"""Reading a paper's YAML data files, checked before they are parsed (a regular file of
bounded size, UTF-8, no anchors or aliases).  The lowest module of the paper machinery:
every module that reads a paper's files reads them through :func:`read_yaml`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

#: The largest data file of a paper read (YAML, published CSV): bounded before it is parsed.
MAX_FILE_BYTES = 2_000_000


class PaperFileError(ValueError):
    """A paper's data file that cannot be trusted: one line naming the file and the key."""


#: libyaml's safe loader where PyYAML has it: the pure-Python loader takes about 2 s over
#: the five papers' claims files, in every notebook kernel.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _no_aliases(text: str, label: str) -> None:
    """Refuse YAML anchors and aliases: a few lines of nested aliases expand into gigabytes
    (an alias bomb), and no paper file needs them."""
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            line = event.start_mark.line + 1
            raise PaperFileError(f"{label}: line {line}: YAML anchors and aliases (&name, *name) are refused in "
                                 "paper files")


def read_yaml(path: Path, where: str | None = None) -> Any:
    """A YAML data file of a paper's folder, checked before it is parsed: a regular file of at
    most :data:`MAX_FILE_BYTES`, UTF-8, valid YAML without anchors or aliases; else one
    :class:`PaperFileError` line starting with ``where`` (default: the file's name)."""
    path, label = Path(path), where or Path(path).name
    if path.is_symlink() or not path.is_file():
        raise PaperFileError(f"{label}: not a regular file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise PaperFileError(f"{label}: over {MAX_FILE_BYTES:,} bytes")
    try:
        text = path.read_text(encoding="utf-8")
        _no_aliases(text, label)
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 - the safe loader
    except UnicodeDecodeError:
        raise PaperFileError(f"{label}: not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise PaperFileError(f"{label}: not valid YAML ({problem}{at})") from None
