"""Write small random datasets in the exact on-disk formats of Fashion-MNIST.

Fashion-MNIST (Xiao, Rasul & Vollgraf 2017) is published as four gzipped IDX files, the
format of LeCun's MNIST.  Three layouts of them are read (:mod:`flcore.data.fmnist`), and
:func:`write_fake_fmnist` writes each:

- ``"torchvision"``: the published ``.gz`` files under ``<root>/FashionMNIST/raw/``, where
  torchvision's ``FashionMNIST(root, download=True)`` puts them (checked against
  torchvision's md5s of the ``.gz`` files);
- ``"idx"``: the four uncompressed IDX files directly in ``<root>`` (``gunzip`` of the
  release; checked against the published md5s of the uncompressed files);
- ``"debian"``: the ``.gz`` files directly in ``<root>``, re-compressed, as Debian's package
  ``dataset-fashion-mnist`` installs them under ``/usr/share/datasets/fashion-mnist/``
  (the ``.gz`` md5s differ from the release's; their content is checked instead).

The IDX format:

- images (``*-images-idx3-ubyte``): big-endian int32 magic 2051 (0x00000803: unsigned
  bytes, 3 dimensions), then the dimensions ``n, 28, 28`` as big-endian int32, then
  ``n * 28 * 28`` pixel bytes, row-major;
- labels (``*-labels-idx1-ubyte``): magic 2049 (0x00000801: unsigned bytes, 1 dimension),
  then ``n``, then ``n`` label bytes in 0..9.

Tests and benchmarks use these files to run the real loader without the 30 MB download;
since their md5s differ from the published ones, pass the returned md5s as ``checksums=``
to ``load_dataset`` (or wrap the call in ``expected_checksums("fmnist", md5s)``).
"""
from __future__ import annotations

import gzip
import hashlib
import zlib
from pathlib import Path

import numpy as np

from flcore.data.cifar_format import file_md5

#: Folder under the data root, as torchvision's ``FashionMNIST`` expects it.
FMNIST_FOLDER = Path("FashionMNIST") / "raw"
#: (split, kind) -> published file name.
FMNIST_FILES = {
    ("train", "images"): "train-images-idx3-ubyte.gz",
    ("train", "labels"): "train-labels-idx1-ubyte.gz",
    ("test", "images"): "t10k-images-idx3-ubyte.gz",
    ("test", "labels"): "t10k-labels-idx1-ubyte.gz",
}
#: torchvision's md5 of every published file (``FashionMNIST.resources``; a test keeps the
#: two equal), so a load served from the decoded cache needs no torchvision import.
FMNIST_PUBLISHED_MD5S = {
    "train-images-idx3-ubyte.gz": "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
    "train-labels-idx1-ubyte.gz": "25c81989df183df01b3e8a0aad5dffbe",
    "t10k-images-idx3-ubyte.gz": "bef4ecab320f06d8554ea6380940ec79",
    "t10k-labels-idx1-ubyte.gz": "bb300cfdad3c16e7a12a480ee83cd310",
}
#: The published md5 of every uncompressed IDX file (the content of each ``.gz`` above; the
#: ``raw_data`` list beside ``resources`` in the Fashion-MNIST classes of several public
#: dataset libraries, and what ``gunzip`` of Debian's re-compressed files gives).
FMNIST_CONTENT_MD5S = {
    "train-images-idx3-ubyte": "f4a8712d7a061bf5bd6d2ca38dc4d50a",
    "train-labels-idx1-ubyte": "9018921c3c673c538a1fc5bad174d6f9",
    "t10k-images-idx3-ubyte": "8181f5470baa50b63fa0f6fddb340f0a",
    "t10k-labels-idx1-ubyte": "15d484375f8d13e6eb1aabb0c3f46965",
}
#: Where Debian's ``dataset-fashion-mnist`` installs the four re-compressed ``.gz`` files.
DEBIAN_FMNIST_ROOT = Path("/usr/share/datasets/fashion-mnist")
#: The layouts :func:`write_fake_fmnist` writes (module docstring).
FMNIST_LAYOUTS = ("torchvision", "idx", "debian")
#: The modification time Debian's re-compressed files carry in their gzip header.
_DEBIAN_GZIP_MTIME = 1591347949
IMAGES_MAGIC = 2051
LABELS_MAGIC = 2049
IMAGE_SIDE = 28
NUM_CLASSES = 10


def write_fake_fmnist(root: str | Path, num_train: int = 100, num_test: int = 20,
                      seed: int = 0, layout: str = "torchvision") -> dict[str, str]:
    """Write ``num_train`` + ``num_test`` random 28x28 images with labels in 0..9 under
    ``root`` as the four IDX files of ``layout`` (module docstring).

    Returns the md5s the loader checks them by: for ``"torchvision"``, ``{.gz file name: md5
    of the .gz file}`` (the files whose md5s torchvision lists); for ``"idx"`` and
    ``"debian"``, ``{uncompressed file name: md5 of the uncompressed IDX content}``.
    """
    if layout not in FMNIST_LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(FMNIST_LAYOUTS)}, got {layout!r}")
    folder = Path(root) / FMNIST_FOLDER if layout == "torchvision" else Path(root)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    md5s = {}
    for split, count in (("train", num_train), ("test", num_test)):
        images = rng.integers(0, 256, (count, IMAGE_SIDE, IMAGE_SIDE), dtype=np.uint8)
        labels = rng.integers(0, NUM_CLASSES, count).astype(np.uint8)
        for kind, payload in (("images", idx_bytes(IMAGES_MAGIC, images)),
                              ("labels", idx_bytes(LABELS_MAGIC, labels))):
            gz_name = FMNIST_FILES[(split, kind)]
            if layout == "idx":
                path = folder / gz_name.removesuffix(".gz")
                path.write_bytes(payload)
                md5s[path.name] = file_md5(path)
                continue
            path = folder / gz_name
            if layout == "torchvision":
                # mtime=0: the same data give the same bytes, hence the same md5
                with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as handle:
                    handle.write(payload)
                md5s[path.name] = file_md5(path)
            else:
                path.write_bytes(debian_gzip(payload))
                md5s[gz_name.removesuffix(".gz")] = hashlib.md5(payload).hexdigest()
    return md5s


def debian_gzip(payload: bytes) -> bytes:
    """``payload`` as one gzip member with the header of Debian's re-compressed files (RFC
    1952: no flags, their modification time, no extra flags, OS 3 = Unix), deflated at
    zlib's default level: bytes that differ from the release's archives."""
    header = b"\x1f\x8b\x08\x00" + _DEBIAN_GZIP_MTIME.to_bytes(4, "little") + b"\x00\x03"
    deflate = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflate.compress(payload) + deflate.flush()
    trailer = zlib.crc32(payload).to_bytes(4, "little") + (len(payload) & 0xFFFFFFFF).to_bytes(4, "little")
    return header + body + trailer


def idx_bytes(magic: int, array: np.ndarray) -> bytes:
    """``array`` (uint8) as an IDX file: the magic, each dimension (big-endian int32), the data."""
    header = np.array([magic, *array.shape], dtype=">i4").tobytes()
    return header + np.ascontiguousarray(array, dtype=np.uint8).tobytes()
