"""The on-disk layout of PACS and a writer of small fake copies of it.

PACS (Li, Yang, Song & Hospedales 2017, "Deeper, broader and artier domain
generalization") holds 9,991 images of 7 classes in 4 domains.  Its common image-folder
release is laid out as ``<root>/PACS/<domain>/<class>/<image>`` with the domains
``art_painting, cartoon, photo, sketch`` and the classes ``dog, elephant, giraffe, guitar,
horse, house, person`` (227x227 jpg/png images).

``write_fake_pacs`` writes tiny random images in that exact layout, so tests run the real
loader (:func:`flcore.data.pacs.load_pacs`) without the dataset; pass the returned image
counts as ``counts=`` to ``load_dataset`` (or wrap the call in ``expected_pacs_counts``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

#: Folder under the data root.
PACS_FOLDER = "PACS"
#: Domain folders, in flcore's domain-label order (sorted, as the folders list).
DOMAINS = ("art_painting", "cartoon", "photo", "sketch")
#: Class folders, in label order (sorted).
CLASSES = ("dog", "elephant", "giraffe", "guitar", "horse", "house", "person")
#: The published dataset's image count of each domain (9,991 in all): the numbers the PACS
#: release and its paper give; the folders are checked against them.
PUBLISHED_COUNTS = {"art_painting": 2048, "cartoon": 2344, "photo": 1670, "sketch": 3929}
#: File name endings read as images.
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


def write_fake_pacs(root: str | Path, per_class: int = 3, side: int = 12, seed: int = 0) -> dict[str, int]:
    """Write ``per_class`` random ``side`` x ``side`` RGB images per class and domain under
    ``root/PACS/<domain>/<class>/`` (jpg in ``photo`` and ``art_painting``, png in the
    others, as the release mixes both).  Returns ``{domain: image count}``."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    counts = {}
    for domain in DOMAINS:
        suffix = ".jpg" if domain in ("photo", "art_painting") else ".png"
        for name in CLASSES:
            folder = Path(root) / PACS_FOLDER / domain / name
            folder.mkdir(parents=True, exist_ok=True)
            for i in range(per_class):
                pixels = rng.integers(0, 256, (side, side, 3), dtype=np.uint8)
                Image.fromarray(pixels).save(folder / f"{name}_{i:03d}{suffix}")
        counts[domain] = per_class * len(CLASSES)
    return counts
