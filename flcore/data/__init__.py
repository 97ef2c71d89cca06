"""Data layer of flcore: in-memory datasets, client partitions and tensor augmentation."""
from flcore.data.augment import apply_crop_flip, draw_crop_flip, normalize
from flcore.data.cache import cache_dir
from flcore.data.cifar_format import CIFAR10_CLASSES, write_fake_cifar
from flcore.data.datasets import DATASET_NAMES, Dataset
from flcore.data.errors import DatasetError
from flcore.data.fmnist_format import write_fake_fmnist
from flcore.data.holdout import MAX_VALIDATION_SHARE, hold_out_validation, validation_count
from flcore.data.loading import load_dataset
from flcore.data.pacs_format import write_fake_pacs
from flcore.data.partition import (
    partition,
    partition_dirichlet,
    partition_dirichlet_rounded,
    partition_domains,
    partition_iid,
    partition_shards,
)
from flcore.data.split_file import SplitFile, read_split_file, split_file_digest, split_indices
from flcore.data.synthetic import make_cifar_like, make_synthetic

__all__ = [
    "CIFAR10_CLASSES",
    "DATASET_NAMES", "Dataset", "DatasetError", "MAX_VALIDATION_SHARE", "apply_crop_flip", "cache_dir",
    "draw_crop_flip", "hold_out_validation", "load_dataset", "make_cifar_like", "make_synthetic", "normalize",
    "partition", "partition_dirichlet", "partition_dirichlet_rounded", "partition_domains", "partition_iid",
    "partition_shards", "SplitFile", "read_split_file", "split_file_digest", "split_indices",
    "validation_count", "write_fake_cifar", "write_fake_fmnist", "write_fake_pacs",
]
