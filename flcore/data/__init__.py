"""Data layer of flcore: in-memory datasets, client partitions and tensor augmentation."""
from .augment import apply_crop_flip, draw_crop_flip, normalize
from .cache import cache_dir
from .cifar_format import write_fake_cifar
from .datasets import DATASET_NAMES, Dataset, load_dataset
from .errors import DatasetError
from .fmnist_format import write_fake_fmnist
from .pacs_format import write_fake_pacs
from .partition import (partition, partition_dirichlet, partition_domains, partition_iid,
                        partition_shards)
from .synthetic import make_cifar_like, make_synthetic

__all__ = [
    "DATASET_NAMES", "Dataset", "DatasetError", "apply_crop_flip", "cache_dir",
    "draw_crop_flip", "load_dataset", "make_cifar_like", "make_synthetic", "normalize",
    "partition", "partition_dirichlet", "partition_domains", "partition_iid", "partition_shards",
    "write_fake_cifar", "write_fake_fmnist", "write_fake_pacs",
]
