"""Checks of a resolved configuration, before any compute: allowed values, ranges, the
documented caps, model/data compatibility, and fields a method or partition does not read.
Every failure is a :class:`~flcore.ConfigError` naming the field and what is allowed."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flcore.algorithms import METHOD_NAMES
from flcore.algorithms.hyperparameters import Hyperparameter
from flcore.config.fields import (
    ALL_PARTITION_FIELDS,
    DATASET_DOMAINS,
    DATASET_FACTS,
    DEVICE_PATTERN,
    ENGINES,
    HYPERPARAMETERS,
    MAX_COUNT,
    MAX_GENERATED_SAMPLES,
    MAX_LOCAL_EPOCHS,
    MAX_LOCAL_STEPS,
    MAX_MIXUP_ALPHA,
    MAX_ROUNDS,
    METHOD_FIELDS,
    NEUTRAL_DEFAULTS,
    PARTITION_FIELDS,
    PARTITIONS,
    PRECISIONS,
    SCALES,
    SPLIT_FILE_DATASETS,
    training_set_size,
)
from flcore.config.method_reads import hyperparameters_of
from flcore.config.probes import probe_names
from flcore.data import DATASET_NAMES, MAX_VALIDATION_SHARE, validation_count
from flcore.errors import ConfigError, quote
from flcore.models import MODEL_NAMES, accepts_input


def _check_data_fit(cfg: dict[str, Any]) -> None:
    """Model/data compatibility and every count bounded by the data (before any I/O)."""
    dataset = cfg["dataset"]
    shape, num_classes, fixed = DATASET_FACTS[dataset]
    accepted = accepts_input(cfg["model"], shape)
    if accepted is not None:
        raise ConfigError("model", f"{quote(cfg['model'])} cannot take {dataset} inputs of shape {list(shape)} "
                          f"(it takes {accepted}); allowed models for {dataset}: "
                          + ", ".join(_models_for(shape)))
    if cfg["num_samples"] is not None:
        high = fixed if fixed is not None else MAX_GENERATED_SAMPLES
        low = 5 if dataset == "mnist1d" else 1  # MNIST-1D keeps 20% for the test set
        if not low <= cfg["num_samples"] <= high:
            raise ConfigError("num_samples", f"got {cfg['num_samples']}; must be in {low}..{high} for {dataset}")
    share = cfg["validation"]
    if not 0 <= share <= MAX_VALIDATION_SHARE:
        raise ConfigError("validation", f"got {quote(share)}; must be in [0, {MAX_VALIDATION_SHARE}] (the share of "
                          "the training set held out for tuning; 0: none)")
    n = training_set_size(dataset, cfg["num_samples"])
    if share and not 0 < validation_count(n, share) < n:
        raise ConfigError("validation", f"got {quote(share)}; of {n} training examples it holds out "
                          f"{validation_count(n, share)}: must leave some on each side")
    n -= validation_count(n, share)  # the clients are dealt what the validation split leaves
    if cfg["clients"] > n:
        raise ConfigError("clients", f"got {cfg['clients']}; must be <= {n}, the training examples of "
                          f"{dataset} with num_samples={cfg['num_samples']}")
    partition = cfg["partition"]
    if partition == "domains":
        if dataset not in DATASET_DOMAINS:
            raise ConfigError("partition", f"'domains' needs a multi-domain data set "
                              f"({', '.join(DATASET_DOMAINS)}); {dataset} has no domains")
        num_domains = DATASET_DOMAINS[dataset]
        if cfg["clients"] % num_domains:
            raise ConfigError("clients", f"got {cfg['clients']}; the 'domains' partition deals {dataset}'s "
                              f"{num_domains} domains to equal groups of clients: must be a multiple of {num_domains}")
    if partition == "file":
        if dataset not in SPLIT_FILE_DATASETS:
            raise ConfigError("partition", f"'file' reads split files over CIFAR images "
                              f"({', '.join(SPLIT_FILE_DATASETS)}); {dataset} has none")
        if cfg["num_samples"] is not None:
            raise ConfigError("num_samples", f"got {cfg['num_samples']}; a split file indexes the whole training set, "
                              "leave num_samples unset")
        if share:
            raise ConfigError("validation", f"got {quote(share)}; a split file indexes the whole training set, "
                              "leave validation at 0")
    elif cfg["split_file"] is not None or cfg["split_sha256"] is not None:
        name = "split_file" if cfg["split_file"] is not None else "split_sha256"
        raise ConfigError(name, f"partition {partition!r} does not read {name}; only partition 'file' does")
    spc = cfg["samples_per_client"]
    if spc is not None and partition in ("dirichlet", "dirichlet_rounded", "iid") and cfg["clients"] * spc > n:
        raise ConfigError("samples_per_client", f"got {spc}; {cfg['clients']} clients x {spc} exceeds the "
                          f"{n} training examples; must be <= {n // cfg['clients']}")
    if cfg["classes_per_client"] > num_classes:
        raise ConfigError("classes_per_client", f"got {cfg['classes_per_client']}; {dataset} has "
                          f"{num_classes} classes; must be in 1..{num_classes}")
    if partition == "shards":
        if cfg["clients"] * cfg["classes_per_client"] > n:
            raise ConfigError("classes_per_client", f"got {cfg['classes_per_client']}; {cfg['clients']} clients "
                              f"x {cfg['classes_per_client']} shards exceed the {n} training examples")
    if cfg["batch_size"] > n:
        raise ConfigError("batch_size", f"got {cfg['batch_size']}; must be <= {n}, the training examples")
    spatial = shape[1:] if len(shape) == 3 else shape
    if cfg["cutout_size"] > min(spatial):
        raise ConfigError("cutout_size", f"got {cfg['cutout_size']}; must be <= {min(spatial)}, the side of "
                          f"{dataset}'s inputs of shape {list(shape)} (a larger square zeroes every input)")


def _models_for(shape: tuple[int, ...]) -> list[str]:
    return [name for name in MODEL_NAMES if accepts_input(name, shape) is None]


def _at_most(name: str, value: float, high: float, why: str = "the documented sanity cap") -> None:
    if value > high:
        raise ConfigError(name, f"got {quote(value)}; must be <= {high} ({why})")


def check_method_reads(method: str, given: Iterable[str]) -> None:
    """Refuse method hyper-parameters that ``method`` does not read.

    ``given``: the field names the user set explicitly (the command line and its
    ``--config`` file).  Only these are checked: a resolved config carries every field, so
    ``resolve_config`` itself cannot tell a value the user chose from a default.
    """
    given = set(given)
    reads = hyperparameters_of(method)
    ignored = sorted(name for name in given
                     if name in METHOD_FIELDS and name not in NEUTRAL_DEFAULTS and name not in reads)
    if ignored:
        listed = ", ".join(sorted(reads)) or "none"
        raise ConfigError(ignored[0], f"method {quote(method)} does not read {', '.join(ignored)}; "
                          f"the method hyper-parameters it reads: {listed}")


def check_partition_reads(partition: str, given: Iterable[str]) -> None:
    """Refuse partition fields the chosen ``partition`` does not read (user-set names).

    ``alpha`` is exempt: besides the Dirichlet concentration it is the heterogeneity level
    that selects a method's paper hyper-parameters (``presets.method_defaults``)."""
    ignored = sorted(set(given) & (ALL_PARTITION_FIELDS - set(PARTITION_FIELDS[partition]) - {"alpha"}))
    if ignored:
        raise ConfigError(ignored[0], f"partition {quote(partition)} does not read {', '.join(ignored)}; "
                          f"it reads: {', '.join(PARTITION_FIELDS[partition])}")


#: The most characters of a value a choice error quotes: the line also lists every allowed
#: value (75 method names), and stays one readable line.
CHOICE_QUOTE_LIMIT = 80


def choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(name, f"got {quote(value, CHOICE_QUOTE_LIMIT)}; allowed values: {', '.join(allowed)}")


def _at_least(name: str, value: float, low: float) -> None:
    if value < low:
        raise ConfigError(name, f"got {quote(value)}; must be >= {low}")


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise ConfigError(name, f"got {quote(value)}; must be > 0")


def _fraction(name: str, value: float) -> None:
    if not 0 <= value < 1:
        raise ConfigError(name, f"got {quote(value)}; must be in [0, 1)")


#: Why a hyper-parameter may not exceed another field, by that field.
AT_MOST_FIELD_REASONS = {"rounds": "the number of rounds; later it would never start"}


def check_hyperparameter(hp: Hyperparameter, value: Any, cfg: dict[str, Any]) -> None:
    """``value`` of the method hyper-parameter ``hp`` against what its part declares: its
    choices, its range, its cap and the field it may not exceed."""
    if value is None and hp.optional:
        return
    if hp.choices:
        choice(hp.name, value, hp.choices)
    if hp.out_of_range(value):
        raise ConfigError(hp.name, f"got {quote(value)}; must be {hp.range_text()}")
    if hp.cap is not None:
        _at_most(hp.name, value, hp.cap)
    if hp.at_most_field is not None:
        _at_most(hp.name, value, cfg[hp.at_most_field], AT_MOST_FIELD_REASONS[hp.at_most_field])


def validate(cfg: dict[str, Any]) -> None:
    choice("method", cfg["method"], METHOD_NAMES)
    choice("dataset", cfg["dataset"], DATASET_NAMES)
    choice("model", cfg["model"], MODEL_NAMES)
    choice("scale", cfg["scale"], SCALES)
    choice("partition", cfg["partition"], PARTITIONS)
    choice("engine", cfg["engine"], ENGINES)
    choice("precision", cfg["precision"], PRECISIONS)
    if not DEVICE_PATTERN.match(cfg["device"]):
        raise ConfigError("device", f"got {quote(cfg['device'])}; allowed values: auto, cpu, cuda, cuda:N, mps")
    _at_least("alpha", cfg["alpha"], 0)
    _at_least("classes_per_client", cfg["classes_per_client"], 1)
    _at_least("clients", cfg["clients"], 1)
    _at_least("per_round", cfg["per_round"], 1)
    if cfg["per_round"] > cfg["clients"]:
        raise ConfigError("per_round", f"got {cfg['per_round']}; must be <= clients ({cfg['clients']})")
    for name in ("samples_per_client", "num_samples", "local_steps"):
        if cfg[name] is not None:
            _at_least(name, cfg[name], 1)
    for name in ("rounds", "local_epochs", "batch_size", "eval_every", "eval_batch_size", "checkpoint_every"):
        _at_least(name, cfg[name], 1)
    _at_least("eval_last", cfg["eval_last"], 0)
    _at_least("eval_last_every", cfg["eval_last_every"], 1)
    _at_least("seed", cfg["seed"], 0)
    if cfg["max_rounds"] is not None:
        _at_least("max_rounds", cfg["max_rounds"], 1)
        _at_most("max_rounds", cfg["max_rounds"], MAX_ROUNDS)
    _positive("lr", cfg["lr"])
    _at_least("weight_decay", cfg["weight_decay"], 0)
    _fraction("momentum", cfg["momentum"])
    for name in ("mixup_alpha", "cutout_size"):
        _at_least(name, cfg[name], 0)
    _positive("lr_decay", cfg["lr_decay"])
    for hp in HYPERPARAMETERS.values():
        check_hyperparameter(hp, cfg[hp.name], cfg)
    if cfg["clip_norm"] is not None:
        _positive("clip_norm", cfg["clip_norm"])
    _at_most("rounds", cfg["rounds"], MAX_ROUNDS)
    _at_most("local_epochs", cfg["local_epochs"], MAX_LOCAL_EPOCHS)
    if cfg["local_steps"] is not None:
        _at_most("local_steps", cfg["local_steps"], MAX_LOCAL_STEPS)
        if cfg["local_epochs"] != 1:
            raise ConfigError("local_steps", f"got {cfg['local_steps']} with local_epochs={cfg['local_epochs']}; "
                              "local_steps replaces epochs, give only one of them")
    for name in ("eval_every", "eval_last", "eval_last_every", "checkpoint_every", "cutout_size", "classes_per_client"):
        _at_most(name, cfg[name], MAX_ROUNDS if name != "classes_per_client" else MAX_COUNT)
    _at_most("eval_batch_size", cfg["eval_batch_size"], MAX_COUNT)
    _at_most("mixup_alpha", cfg["mixup_alpha"], MAX_MIXUP_ALPHA,
             "Beta(a, a) is 0.5 +- 0.0004 there, so a larger value mixes the same")
    _check_recording(cfg)
    _check_data_fit(cfg)


def _check_recording(cfg: dict[str, Any]) -> None:
    """``probes``: registered names, each once; ``probe_every`` only with probes;
    ``snapshot_rounds`` within 1..rounds."""
    if cfg["probes"]:
        known = probe_names()
        for name in cfg["probes"]:
            choice("probes", name, known)
        if "domain_accuracy" in cfg["probes"] and cfg["dataset"] not in DATASET_DOMAINS:
            raise ConfigError("probes", f"'domain_accuracy' needs a multi-domain data set "
                              f"({', '.join(DATASET_DOMAINS)}); {cfg['dataset']} has no domains")
        if len(set(cfg["probes"])) != len(cfg["probes"]):
            raise ConfigError("probes", f"got {list(cfg['probes'])}; each probe may be named once")
    _at_least("probe_every", cfg["probe_every"], 0)
    if cfg["probe_every"] and not cfg["probes"]:
        raise ConfigError("probe_every", f"got {cfg['probe_every']} without probes; name the probes to record")
    _at_most("probe_every", cfg["probe_every"], MAX_ROUNDS)
    for r in cfg["snapshot_rounds"]:
        if not 1 <= r <= cfg["rounds"]:
            raise ConfigError("snapshot_rounds", f"got round {r}; must be in 1..{cfg['rounds']} (the run's rounds)")
