"""The experiment configuration's fields: their names and defaults, the fields that enter
a run id, the allowed values of the options, and the facts and caps every check uses.

Data only: :mod:`flcore.config.experiment` builds and hashes configs from it and
:mod:`flcore.config.validation` checks them.
"""
from __future__ import annotations

import re
from typing import Any

from flcore.algorithms.hyperparameters import MAX_ROUNDS as MAX_ROUNDS  # the config's cap of round counts
from flcore.algorithms.hyperparameters import declared

#: The three scales (docs/design.md section 8): CI, CPU offline, the papers' protocol.
SCALES = ("smoke", "small", "paper")
#: "flwr": the clients are a flwr-datasets partitioner's partitions, which only the Python
#: API can pass (``flcore.flower.Federation.from_config(..., partitioner=...)``).
PARTITIONS = ("dirichlet", "dirichlet_rounded", "shards", "iid", "domains", "file", "flwr")
#: Config fields each partition reads; the others do not enter the run id.
PARTITION_FIELDS = {
    "dirichlet": ("alpha", "samples_per_client"),
    # Hsu et al.'s split with each client's class counts rounded from its prior: the
    # ``paper`` scale's CIFAR split (flcore.data.partition_dirichlet_rounded)
    "dirichlet_rounded": ("alpha", "samples_per_client"),
    "shards": ("classes_per_client",),
    "iid": ("samples_per_client",),
    "domains": ("alpha",),  # FedIMA's label + feature skew (flcore.data.partition_domains)
    # a split file (the FedSAM/FedGloSS repositories' LEAF JSON): its content digest enters
    # the run id, its path does not (flcore.data.split_file)
    "file": ("split_file", "split_sha256"),
    "flwr": (),  # the partitioner's own arguments
}
#: Data sets a split file can name images of (``img_<index>_label_<label>.png`` or the
#: training pickle's file names).
SPLIT_FILE_DATASETS = ("cifar10", "cifar100")
ALL_PARTITION_FIELDS = frozenset(f for names in PARTITION_FIELDS.values() for f in names)
#: How clients train: ``sequential`` (one client at a time: the reference loop), ``batched``
#: (all clients in one ``vmap`` computation), ``rows`` (all clients as batched matmuls of a
#: model's row kernel, :mod:`flcore.models.row_kernels`); ``auto`` picks ``batched`` on
#: accelerators and, on CPUs, ``rows`` for the models that have a row kernel, else ``sequential``.
ENGINES = ("auto", "sequential", "batched", "rows")
#: Arithmetic of local training and evaluation (``flcore.sim.precision``): ``fp32`` (TF32
#: off on CUDA too), ``tf32`` (TF32 matmuls and convolutions on CUDA), ``bf16`` (autocast).
PRECISIONS = ("fp32", "tf32", "bf16")
DEVICE_PATTERN = re.compile(r"^(auto|cpu|cuda|cuda:\d+|mps)$")

#: Fields that say where or how to compute, not what: excluded from the run id.
NON_SEMANTIC_FIELDS = frozenset(
    {"device", "engine", "data_root", "download", "checkpoint_every", "eval_batch_size",
     # a cap on the rounds trained now: the run keeps its full protocol's identity, and a
     # later call with a higher cap (or none) continues it from its checkpoint
     "max_rounds",
     # where the split file is; its content enters the run id as split_sha256
     "split_file",
     # whether the run records its clients' training accuracy: an extra evaluation, not
     # a change of training (a request that asks for it is served by the same run id)
     "client_accuracy"}
)
#: Every method hyper-parameter, as the parts that read it declare it
#: (:mod:`flcore.algorithms.hyperparameters`); a method reads some of them.
HYPERPARAMETERS = declared()
#: The method hyper-parameters' names.
METHOD_FIELDS = frozenset(HYPERPARAMETERS)
#: Fields whose defaults leave a method unchanged; they enter the run id of every method
#: only when set away from that default (so adding an option keeps old run ids).
NEUTRAL_DEFAULTS = {"validation": 0.0, "lr_decay": 1.0, "clip_norm": None, "mixup_alpha": 0.0, "cutout_size": 0,
                    "probes": (), "probe_every": 0, "snapshot_rounds": (), "timed": False, "precision": "fp32",
                    "eval_last_every": 1}

#: Allowed values of the string-valued method options: most choose between a paper's
#: rule and its official code's.
OPTION_CHOICES = {name: hp.choices for name, hp in HYPERPARAMETERS.items() if hp.choices}

#: Method options added after runs were stored: they enter the run id only when the
#: method reads them and they are set away from their default (so stored run ids stay).
ADDED_OPTIONS = {name: hp.default for name, hp in HYPERPARAMETERS.items() if hp.added}

#: The global default of every field (layer 1 of :func:`flcore.config.resolve_config`).
DEFAULTS: dict[str, Any] = {
    "method": "fedavg",
    "model": None,
    "partition": "dirichlet",
    "alpha": 0.0,
    "classes_per_client": 2,
    "samples_per_client": None,
    "split_file": None,
    "split_sha256": None,
    "num_samples": None,
    "validation": 0.0,
    "local_epochs": 1,
    "local_steps": None,
    "momentum": 0.0,
    "weight_decay": 0.0,
    **{name: hp.default for name, hp in HYPERPARAMETERS.items()},
    "lr_decay": 1.0,
    "clip_norm": None,
    "mixup_alpha": 0.0,
    "cutout_size": 0,
    "precision": "fp32",
    "probes": (),
    "probe_every": 0,
    "snapshot_rounds": (),
    "timed": False,
    "client_accuracy": True,
    "seed": 0,
    "max_rounds": None,
    "eval_batch_size": 2000,
    "eval_last_every": 1,
    "device": "auto",
    "engine": "auto",
    "data_root": "data",
    "download": False,
}


#: Documented sanity caps (the book's Reference, "Configuration").  They are far above any
#: protocol of the five papers (20,000 rounds, 5 epochs) and stop a mistyped count
#: (``--rounds 1e12``) from being accepted and then running forever; ``MAX_ROUNDS`` caps the
#: rounds and every count of rounds, the hyper-parameters' too
#: (:data:`flcore.algorithms.hyperparameters.MAX_ROUNDS`).
#: Cap of ``local_epochs``.
MAX_LOCAL_EPOCHS = 1_000
#: Cap of ``local_steps``.
MAX_LOCAL_STEPS = 1_000_000
#: Cap on generated data sets (MNIST-1D, synthetic): generation time and memory.
MAX_GENERATED_SAMPLES = 1_000_000
#: Cap of the other counts that have no natural bound (seeds excepted).
MAX_COUNT = 1_000_000
#: Cap of Mixup's ``alpha``: Beta(a, a) draws lam = 0.5 +- 0.0004 at 1e6, so a larger
#: value mixes the same; past float32's range (3.4e38) the sampler would silently give
#: lam = 0, no mixing at all.
MAX_MIXUP_ALPHA = 1e6

#: Input shape, classes and training-set size of each data set (``None``: generated,
#: sized by ``num_samples``), so that model and counts are checked before data are loaded.
DATASET_FACTS: dict[str, tuple[tuple[int, ...], int, int | None]] = {
    "cifar10": ((3, 32, 32), 10, 50_000),
    "cifar100": ((3, 32, 32), 100, 50_000),
    "fmnist": ((1, 28, 28), 10, 60_000),
    "mnist1d": ((40,), 10, None),
    "pacs": ((3, 224, 224), 7, 8_991),  # 90% of the 9,991 images (flcore.data.pacs)
    "synthetic": ((40,), 10, None),
}
#: How the pages name flcore's data sets.
DATASET_LABELS = {"mnist1d": "MNIST-1D", "cifar10": "CIFAR-10", "cifar100": "CIFAR-100", "fmnist": "Fashion-MNIST",
                  "pacs": "PACS", "synthetic": "synthetic data"}
#: Number of domains of the multi-domain data sets (the "domains" partition needs one).
DATASET_DOMAINS = {"pacs": 4}
#: Default ``num_samples`` of the generated sets (``flcore.data.load_dataset``).
GENERATED_DEFAULT = {"mnist1d": 5000, "synthetic": 2000}


def chance_accuracy(dataset: str) -> float:
    """Test accuracy (%) of guessing one class: 100 / number of classes of ``dataset``."""
    return 100.0 / DATASET_FACTS[dataset][1]


def training_set_size(dataset: str, num_samples: int | None) -> int:
    """Number of training examples ``load_dataset(dataset, num_samples=...)`` yields."""
    fixed = DATASET_FACTS[dataset][2]
    if fixed is not None:
        return fixed if num_samples is None else min(num_samples, fixed)
    n = num_samples or GENERATED_DEFAULT[dataset]
    return int(n * 0.8) if dataset == "mnist1d" else n  # MNIST-1D: the package's 80/20 split

