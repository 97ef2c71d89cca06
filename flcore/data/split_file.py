"""The federated splits the FedSAM and FedGloSS repositories publish, read as they are.

Both repositories ship the CIFAR splits of Hsu et al. (2020) as LEAF-style JSON
(``data/cifar10/data/train/federated_train_alpha_0.05.json`` and siblings)::

    {"users": [17, 40, ...], "num_samples": [500, 500, ...],
     "user_data": {"17": {"x": ["img_1016_label_6.png", ...], "y": [6, ...]}, ...}}

Client ``k`` of a run is ``users[k]`` (the file's order).  An entry of ``x`` names one
training image:

- CIFAR-10: ``img_<index>_label_<label>.png``, ``<index>`` the image's position in the
  training set in torchvision's order (data batches 1 to 5 concatenated: the official
  ``data/cifar10/preprocessing/save_images.py`` names each PNG so);
- CIFAR-100: the image's own name in the training pickle's ``filenames`` list (for
  example ``cichlid_s_001814.png``).

:func:`read_split_file` checks the file's structure (a bounded regular file, the three
keys, one ``x`` and ``y`` per user of the announced length, no image given twice, within a
user or across users, whatever its spelling: an image is its index for a CIFAR-10 name,
so ``img_0001_label_3.png`` and ``img_1_label_3.png`` are one image, and its normalised
name for a CIFAR-100 one, :func:`image_key`; both entries are named);
:func:`split_indices` maps the entries to training-set indices and checks each against
the data (index in range, the entry's label equal to CIFAR's label at that index, no two
entries on one training image, naming the first bad entry).  Both run before any compute.
The file's SHA-256 is what a run's id holds (its path does not): :func:`split_file_digest`.

The published CIFAR-10 files hold 49,999 of the 50,000 images (one client has 499); such
a file is read as it is (clients may differ in size; unused images stay unused).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from flcore.data.errors import DatasetError
from flcore.safe_io import unique_json_keys

#: A split file larger than this is refused (the published ones are about 1.5 MB).
MAX_SPLIT_FILE_BYTES = 64 << 20
CIFAR10_NAME = re.compile(r"img_(\d+)_label_(\d+)\.png")


@dataclass(frozen=True)
class SplitFile:
    """A structurally valid split file: users in order, each user's entries and labels."""

    path: str
    sha256: str
    users: tuple[str, ...]
    entries: tuple[tuple[str, ...], ...]
    labels: tuple[tuple[int, ...], ...]

    @property
    def num_clients(self) -> int:
        return len(self.users)

    @property
    def sizes(self) -> list[int]:
        return [len(e) for e in self.entries]


def _bad(path, message: str) -> DatasetError:
    return DatasetError(f"split file {path}: {message}")


def _read_bytes(path: str | Path) -> bytes:
    path = Path(path).expanduser()
    try:
        info = os.stat(path)
    except OSError as exc:
        raise _bad(path, f"cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise _bad(path, "is not a regular file")
    if info.st_size > MAX_SPLIT_FILE_BYTES:
        raise _bad(path, f"is {info.st_size} bytes, more than the {MAX_SPLIT_FILE_BYTES} a split file may have")
    return path.read_bytes()


def split_file_digest(path: str | Path) -> str:
    """SHA-256 of the split file's bytes (what a run's id holds of it)."""
    return _cached_split(str(Path(path).expanduser()), *_stamp(path)).sha256


def read_split_file(path: str | Path) -> SplitFile:
    """The split file at ``path``, structurally checked (module docstring); ``DatasetError``
    naming the first problem otherwise.  Parsed once per file version (path, size, mtime)."""
    return _cached_split(str(Path(path).expanduser()), *_stamp(path))


def _stamp(path: str | Path) -> tuple[int, int]:
    try:
        info = os.stat(Path(path).expanduser())
    except OSError as exc:
        raise _bad(path, f"cannot be read ({exc.strerror or exc})") from None
    return info.st_size, info.st_mtime_ns


@lru_cache(maxsize=16)
def _cached_split(path: str, size: int, mtime_ns: int) -> SplitFile:
    data = _read_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    try:
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=unique_json_keys)
    except (UnicodeDecodeError, ValueError) as exc:  # a key given twice too: which would win is a guess
        raise _bad(path, f"is not JSON ({str(exc).splitlines()[0][:120]})") from None
    if not isinstance(doc, dict) or not {"users", "num_samples", "user_data"} <= set(doc):
        raise _bad(path, 'expected a JSON object with "users", "num_samples" and "user_data"')
    users, counts, user_data = doc["users"], doc["num_samples"], doc["user_data"]
    if not isinstance(users, list) or not users or not all(isinstance(u, (str, int)) and not isinstance(u, bool)
                                                         for u in users):
        raise _bad(path, '"users" must be a non-empty list of user ids')
    names = [str(u) for u in users]
    if len(set(names)) != len(names):
        first = next(n for i, n in enumerate(names) if n in names[:i])
        raise _bad(path, f'user {first!r} is listed twice in "users"')
    if not isinstance(counts, list) or len(counts) != len(names) or not all(
            isinstance(c, int) and not isinstance(c, bool) and c >= 1 for c in counts):
        raise _bad(path, f'"num_samples" must give one count >= 1 per user ({len(names)})')
    if not isinstance(user_data, dict) or set(user_data) != set(names):
        extra = sorted(set(user_data) - set(names)) if isinstance(user_data, dict) else []
        missing = sorted(set(names) - set(user_data)) if isinstance(user_data, dict) else names
        raise _bad(path, '"user_data" must hold exactly the users of "users"'
                   + (f" (missing {missing[0]!r})" if missing else f" (unlisted {extra[0]!r})"))
    entries, labels, seen = [], [], {}
    for name, count in zip(names, counts):
        record = user_data[name]
        xs, ys = (record.get("x"), record.get("y")) if isinstance(record, dict) else (None, None)
        if not isinstance(xs, list) or not all(isinstance(x, str) for x in xs):
            raise _bad(path, f'user {name!r}: "x" must be a list of image names')
        if not isinstance(ys, list) or not all(isinstance(y, int) and not isinstance(y, bool) for y in ys):
            raise _bad(path, f'user {name!r}: "y" must be a list of integer labels')
        if len(xs) != len(ys):
            raise _bad(path, f'user {name!r}: {len(xs)} images but {len(ys)} labels')
        if len(xs) != count:
            raise _bad(path, f'user {name!r}: {len(xs)} images but "num_samples" says {count}')
        for k, x in enumerate(xs):
            key = image_key(x)
            if key in seen:
                raise _bad(path, _duplicate(seen[key], (name, k, x)))
            seen[key] = (name, k, x)
        entries.append(tuple(xs))
        labels.append(tuple(ys))
    return SplitFile(path, digest, tuple(names), tuple(entries), tuple(labels))


def normalised_name(name: str) -> str:
    """A CIFAR-100 image name as one spelling: Unicode NFC, no surrounding white space, no
    leading ``./``, lower case (the training pickle's names are lower-case ASCII)."""
    text = unicodedata.normalize("NFC", name).strip()
    while text.startswith("./"):
        text = text[2:]
    return text.lower()


def image_key(entry: str) -> int | str:
    """What identifies the image an entry names, whatever its spelling: the training-set
    index of a CIFAR-10 name (``img_0001_label_3.png`` and ``img_1_label_3.png`` are image
    1), else the normalised name (:func:`normalised_name`)."""
    match = CIFAR10_NAME.fullmatch(entry.strip())
    return int(match.group(1)) if match is not None else normalised_name(entry)


def _duplicate(first: tuple[str, int, str], second: tuple[str, int, str]) -> str:
    """The message naming two entries of one image: (user, position, entry) each."""
    (u1, k1, x1), (u2, k2, x2) = first, second
    where = f"twice by user {u1!r}" if u1 == u2 else f"by users {u1!r} and {u2!r}"
    return (f"one image is named {where}: entry {k1} {x1[:120]!r} of user {u1!r} and entry {k2} {x2[:120]!r} "
            f"of user {u2!r} (users must be disjoint and name each image once)")


def split_indices(split: SplitFile, dataset: str, train_labels: np.ndarray,
                  train_names: list[str] | None = None) -> list[np.ndarray]:
    """One index array per client of ``split`` into the training set whose labels are
    ``train_labels`` (torchvision's order); CIFAR-100 also needs the training pickle's file
    names (``train_names``, same order).  ``DatasetError`` naming the first bad entry."""
    labels = np.asarray(train_labels)
    n = len(labels)
    if dataset == "cifar100":
        if train_names is None or len(train_names) != n:
            raise ValueError("CIFAR-100 split files name images by the training pickle's file names: "
                             "give train_names, one per training image")
        position: dict[str, int] = {}
        for i, name in enumerate(train_names):
            position.setdefault(normalised_name(name), i)
    elif dataset != "cifar10":
        raise _bad(split.path, f"names CIFAR images; the run's dataset is {dataset!r} (allowed: cifar10, cifar100)")
    out = []
    taken: dict[int, tuple[str, int, str]] = {}  # training index -> the entry that named it
    for user, xs, ys in zip(split.users, split.entries, split.labels):
        index = np.empty(len(xs), dtype=np.int64)
        for k, (x, y) in enumerate(zip(xs, ys)):
            where = f"user {user!r} entry {k} ({x!r})"
            if dataset == "cifar10":
                match = CIFAR10_NAME.fullmatch(x)
                if match is None:
                    raise _bad(split.path, f"{where}: not a CIFAR-10 name img_<index>_label_<label>.png")
                i, named = int(match.group(1)), int(match.group(2))
                if named != y:
                    raise _bad(split.path, f"{where}: the name says label {named} but \"y\" says {y}")
                if not 0 <= i < n:
                    raise _bad(split.path, f"{where}: index {i} outside 0..{n - 1} of the training set")
            else:
                if normalised_name(x) not in position:
                    raise _bad(split.path, f"{where}: no CIFAR-100 training image has this name")
                i = position[normalised_name(x)]
            if int(labels[i]) != y:
                raise _bad(split.path, f"{where}: label {y} but CIFAR's label of training image {i} is "
                                       f"{int(labels[i])}")
            if i in taken:
                raise _bad(split.path, _duplicate(taken[i], (user, k, x)))
            taken[i] = (user, k, x)
            index[k] = i
        out.append(np.sort(index))
    return out
