"""Write small random datasets in the exact on-disk format of Fashion-MNIST.

Fashion-MNIST (Xiao, Rasul & Vollgraf 2017) is published as four gzipped IDX files, the
format of LeCun's MNIST, which torchvision's ``FashionMNIST`` keeps under
``<root>/FashionMNIST/raw/``:

- images (``*-images-idx3-ubyte``): big-endian int32 magic 2051 (0x00000803: unsigned
  bytes, 3 dimensions), then the dimensions ``n, 28, 28`` as big-endian int32, then
  ``n * 28 * 28`` pixel bytes, row-major;
- labels (``*-labels-idx1-ubyte``): magic 2049 (0x00000801: unsigned bytes, 1 dimension),
  then ``n``, then ``n`` label bytes in 0..9.

Tests and benchmarks use these files to run the real loader without the 30 MB download;
since their md5s differ from torchvision's list, pass the returned md5s as ``checksums=``
to ``load_dataset`` (or wrap the call in ``expected_checksums("fmnist", md5s)``).
"""
from __future__ import annotations

import gzip
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
IMAGES_MAGIC = 2051
LABELS_MAGIC = 2049
IMAGE_SIDE = 28
NUM_CLASSES = 10


def write_fake_fmnist(root: str | Path, num_train: int = 100, num_test: int = 20,
                      seed: int = 0) -> dict[str, str]:
    """Write ``num_train`` + ``num_test`` random 28x28 images with labels in 0..9 under
    ``root/FashionMNIST/raw`` as the four gzipped IDX files.

    Returns ``{file name: md5 hex digest}`` of the ``.gz`` files written (the files whose
    md5s torchvision lists).
    """
    folder = Path(root) / FMNIST_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    md5s = {}
    for split, count in (("train", num_train), ("test", num_test)):
        images = rng.integers(0, 256, (count, IMAGE_SIDE, IMAGE_SIDE), dtype=np.uint8)
        labels = rng.integers(0, NUM_CLASSES, count).astype(np.uint8)
        for kind, payload in (("images", idx_bytes(IMAGES_MAGIC, images)),
                              ("labels", idx_bytes(LABELS_MAGIC, labels))):
            path = folder / FMNIST_FILES[(split, kind)]
            # mtime=0: the same data give the same bytes, hence the same md5
            with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as handle:
                handle.write(payload)
            md5s[path.name] = file_md5(path)
    return md5s


def idx_bytes(magic: int, array: np.ndarray) -> bytes:
    """``array`` (uint8) as an IDX file: the magic, each dimension (big-endian int32), the data."""
    header = np.array([magic, *array.shape], dtype=">i4").tobytes()
    return header + np.ascontiguousarray(array, dtype=np.uint8).tobytes()
