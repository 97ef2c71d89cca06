"""md5 overrides for the datasets read from published files (CIFAR-10/100, Fashion-MNIST).

By default each loader verifies its files against torchvision's own md5 lists (and, for
Fashion-MNIST, the published md5s of the uncompressed files too).  Fake data
written by ``write_fake_cifar`` / ``write_fake_fmnist`` have other md5s; a loader takes them
as ``checksums=``, and code that reaches ``load_dataset`` indirectly (an experiment run)
wraps the call in ``expected_checksums(name, md5s)``.
"""
from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from flcore.data.cifar_format import PUBLISHED_MD5S
from flcore.data.fmnist_format import FMNIST_FILES

_overrides: contextvars.ContextVar[Mapping[str, Mapping[str, str]]] = (
    contextvars.ContextVar("flcore_checksums", default=MappingProxyType({})))


def required_files(name: str) -> list[str]:
    """The file names whose md5s a ``checksums`` mapping for dataset ``name`` must give."""
    if name in ("cifar10", "cifar100"):
        return list(PUBLISHED_MD5S[name])
    if name == "fmnist":
        return list(FMNIST_FILES.values())
    raise ValueError(f"checksums apply to cifar10, cifar100 and fmnist only, not {name!r}")


def check_checksums(name: str, md5s: Mapping[str, str]) -> None:
    """Raise ``ValueError`` unless ``md5s`` gives an md5 for every file of ``name`` (for
    Fashion-MNIST, of the ``.gz`` file or of its uncompressed content, ``<name>`` without
    ``.gz``)."""
    missing = [f for f in required_files(name)
               if f not in md5s and not (name == "fmnist" and f.removesuffix(".gz") in md5s)]
    if missing:
        raise ValueError(f"checksums for {name} lack an md5 for: {', '.join(missing)}")


@contextlib.contextmanager
def expected_checksums(name: str, md5s: Mapping[str, str]) -> Iterator[None]:
    """Within the block, verify ``name``'s files against ``md5s`` (file name -> md5).

    For code that reaches ``load_dataset`` indirectly (e.g. an experiment run on data from
    ``write_fake_cifar`` or ``write_fake_fmnist``).  An explicit ``checksums=`` argument
    takes precedence.
    """
    check_checksums(name, md5s)  # validate now rather than at first use
    token = _overrides.set({**_overrides.get(), name: dict(md5s)})
    try:
        yield
    finally:
        _overrides.reset(token)


def checksum_override(name: str) -> Mapping[str, str] | None:
    """The md5s set by an enclosing ``expected_checksums(name, ...)`` block, or None."""
    return _overrides.get().get(name)
