"""flwr-datasets partitioners as flcore client partitions (``partition: flwr``).

A Flower user keeps their partitions: any ``flwr_datasets.partitioner.Partitioner``
(``IidPartitioner``, ``DirichletPartitioner``, ``PathologicalPartitioner``,
``ShardPartitioner``...) is given the training set as a ``datasets.Dataset`` built in
memory -- the columns ``label`` (the class) and ``index`` (the sample's position) -- and
each of its partitions becomes a client's index list.  Nothing is downloaded.
"""
from __future__ import annotations

import numpy as np
import torch

#: The ``datasets.Dataset`` columns flcore gives a partitioner.
LABEL, INDEX = "label", "index"


def partition_indices(partitioner, labels) -> list[np.ndarray]:
    """The partitions of ``partitioner`` over a training set with class ``labels``
    (``[N]`` integers) as one index array per client, client ``k`` being partition ``k``.

    The partitioner must not hold a data set yet (flcore gives it one); partitions must be
    non-empty and disjoint, as flcore's clients are.  Pass the result to
    :meth:`flcore.FederatedData.from_tensors` (``partition=``) for your own tensors, or the
    partitioner itself to :meth:`flcore.flower.Federation.from_config`.
    """
    # datasets (with pyarrow) takes about a second to import: only a partitioner needs it
    from datasets import Dataset
    from flwr_datasets.partitioner import Partitioner

    if not isinstance(partitioner, Partitioner):
        raise TypeError(f"partitioner: expected a flwr_datasets.partitioner.Partitioner, got "
                        f"{type(partitioner).__name__}")
    if partitioner.is_dataset_assigned():
        raise ValueError("partitioner: already holds a data set; flcore gives it the training set "
                         f"(columns {LABEL!r}, {INDEX!r}): pass a fresh partitioner")
    labels = np.asarray(labels.cpu() if isinstance(labels, torch.Tensor) else labels)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels: expected a 1-d array of integer classes, got shape {labels.shape}, "
                         f"dtype {labels.dtype}")
    partitioner.dataset = Dataset.from_dict({LABEL: labels.tolist(), INDEX: list(range(len(labels)))})
    parts, seen = [], np.zeros(len(labels), dtype=bool)
    for k in range(partitioner.num_partitions):
        idx = np.asarray(partitioner.load_partition(k)[INDEX], dtype=np.int64)
        if idx.size == 0:
            raise ValueError(f"partitioner: partition {k} is empty; every flcore client needs samples")
        if idx.min() < 0 or idx.max() >= len(labels):
            raise ValueError(f"partitioner: partition {k} indexes samples outside 0..{len(labels) - 1} (got "
                             f"{int(idx.min())}..{int(idx.max())}); a partition names rows of the training set")
        if seen[idx].any() or np.unique(idx).size != idx.size:
            raise ValueError(f"partitioner: partition {k} shares samples with another partition")
        seen[idx] = True
        parts.append(idx)
    return parts
