"""The experiment configuration: resolution in layers, and the run id.

A configuration is resolved in layers, later layers winning:

1. global defaults (:data:`flcore.config.fields.DEFAULTS`);
2. the scale preset for the dataset (:func:`flcore.config.scales.scale_defaults`);
3. the method's paper hyper-parameters for that dataset and heterogeneity
   (:func:`flcore.config.presets.method_defaults`);
4. the values the user gave (a YAML/JSON file, then command-line flags).

Every field is checked before any compute starts (:mod:`flcore.config.validation`); a bad
value raises :class:`flcore.ConfigError` naming the field and the allowed values.

The run id is the hash of the *canonical* config: the fields that change the numbers.
Fields that only say where or how fast to compute (device, engine, data folder, checkpoint
period) are left out, so a finished run is found again whatever machine asks for it.
Method hyper-parameters a method does not use are left out too (FedAvg ignores ``rho``).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from flcore.algorithms import METHOD_NAMES, get_method
from flcore.config.fields import (
    ADDED_OPTIONS,
    ALL_PARTITION_FIELDS,
    DEFAULTS,
    HYPERPARAMETERS,
    METHOD_FIELDS,
    NEUTRAL_DEFAULTS,
    NON_SEMANTIC_FIELDS,
    PARTITION_FIELDS,
    SCALES,
)
from flcore.config.method_reads import hyperparameters_of
from flcore.config.parsing import parsers_for, read_mapping_file
from flcore.config.presets import method_defaults
from flcore.config.scales import DEFAULT_DATASET, scale_defaults
from flcore.config.validation import choice, validate
from flcore.data import DATASET_NAMES, DatasetError, read_split_file
from flcore.errors import ConfigError, quote
from flcore.models import default_model_for


class MethodArguments(Mapping):
    """A config's method hyper-parameters by name: read-only and hashable, so that a
    config stays a value."""

    def __init__(self, values: Mapping[str, Any]):
        self._values = dict(values)

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values.items())))

    def __repr__(self) -> str:
        return f"MethodArguments({self._values!r})"


@dataclass(frozen=True)
class ExperimentConfig:
    """A fully resolved experiment.  Build it with :func:`resolve_config`."""

    method: str
    dataset: str
    model: str
    scale: str
    partition: str
    alpha: float
    classes_per_client: int
    clients: int
    per_round: int
    samples_per_client: int | None
    split_file: str | None  # partition "file": the LEAF-style split JSON (flcore.data.split_file)
    split_sha256: str | None  # its content digest, set from the file (the run id's part of it)
    num_samples: int | None
    validation: float  # share of the training set held out and evaluated instead of the test set (0: off)
    rounds: int
    local_epochs: int
    local_steps: int | None
    batch_size: int
    lr: float
    momentum: float
    weight_decay: float
    # ---- the method's hyper-parameters, as its parts declare them (flcore.algorithms.hyperparameters);
    # read as attributes (cfg.rho) and flattened into to_dict() and the canonical config under their names
    method_args: MethodArguments
    lr_decay: float  # exponential per-round client lr decay gamma (1: constant)
    clip_norm: float | None  # clip the local descent gradient to this norm (None: off)
    mixup_alpha: float  # Mixup Beta(alpha, alpha) (0: off)
    cutout_size: int  # Cutout square side (0: off)
    precision: str  # "fp32" | "tf32" | "bf16" (flcore.sim.precision; in the run id unless fp32)
    # ---- what the run records for analysis (flcore.analysis.recording)
    probes: tuple[str, ...]  # training-time probes logged into the metrics
    probe_every: int  # rounds between probes (0: at the evaluation rounds)
    snapshot_rounds: tuple[int, ...]  # rounds whose global and client models are saved
    timed: bool  # a timed run: trained alone (never batched), so its round times are its own
    client_accuracy: bool  # record each client's training accuracy at the eval_every rounds; not in the run id
    seed: int
    max_rounds: int | None  # stop at this round for now (status "capped"); not part of the run id
    eval_every: int
    eval_last: int
    eval_last_every: int  # within the last eval_last rounds, evaluate every this many (1: every round)
    eval_batch_size: int
    checkpoint_every: int
    device: str
    engine: str
    data_root: str
    download: bool

    def __getattr__(self, name: str) -> Any:
        # only reached for names that are not fields: a method hyper-parameter is read as
        # an attribute, as every part builder reads it (cfg.rho)
        if name in METHOD_FIELDS:
            return self.__dict__["method_args"][name]
        raise AttributeError(f"{type(self).__name__!r} has no field {name!r}")

    def to_dict(self) -> dict[str, Any]:
        """Every field by name, the method's hyper-parameters among them (flat)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "method_args"}
        out.update(self.method_args)
        return out

    def canonical(self) -> dict[str, Any]:
        """The fields that determine the numbers of a run (see module docstring)."""
        reads = hyperparameters_of(self.method)
        out = {}
        for name, value in self.to_dict().items():
            if name in NON_SEMANTIC_FIELDS:
                continue
            if name in ADDED_OPTIONS:
                if value == ADDED_OPTIONS[name] or name not in reads:
                    continue
            elif name in NEUTRAL_DEFAULTS:
                if value == NEUTRAL_DEFAULTS[name]:
                    continue
            elif name in METHOD_FIELDS and name not in reads:
                continue
            if name in ALL_PARTITION_FIELDS and name not in PARTITION_FIELDS[self.partition]:
                continue
            out[name] = value
        return out

    def run_id(self) -> str:
        """Hash of the canonical config; names the run's directory in the store."""
        text = json.dumps(self.canonical(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def partition_args(self) -> dict[str, Any]:
        """The keyword arguments of :func:`flcore.data.partition` for this config."""
        return {name: getattr(self, name) for name in PARTITION_FIELDS[self.partition]}

    def replace(self, **changes) -> ExperimentConfig:
        return resolve_config({**self.to_dict(), **changes})


#: The protocol fields of :class:`ExperimentConfig` (all but ``method_args``), in order.
PROTOCOL_FIELDS = tuple(f.name for f in fields(ExperimentConfig) if f.name != "method_args")
#: Every field a config is given by: the protocol fields, then the method hyper-parameters.
FIELD_NAMES = PROTOCOL_FIELDS + tuple(HYPERPARAMETERS)
#: Each field's type as written in a config (``int | None``): what the command line and
#: the parsers read.
FIELD_TYPES = {**{f.name: str(f.type) for f in fields(ExperimentConfig) if f.name != "method_args"},
               **{name: hp.annotation for name, hp in HYPERPARAMETERS.items()}}
#: One parser per field (:func:`flcore.config.parsing.parsers_for`).
PARSERS = parsers_for(FIELD_TYPES)


def normalise_keys(raw: dict[str, Any], source: str) -> dict[str, Any]:
    """``raw``'s keys as field names (``per-round`` is ``per_round``); an unknown field, or
    one field under two spellings (which one would win is not for the reader to guess),
    is a :class:`~flcore.ConfigError`."""
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in raw.items():
        name = str(key).replace("-", "_")
        if name not in FIELD_NAMES:
            allowed = ", ".join(FIELD_NAMES)
            raise ConfigError(name, f"unknown field in {source}; allowed fields: {allowed}")
        if name in out:
            raise ConfigError(name, f"given twice in {source}, as {quote(spelled[name], 60)} and "
                              f"{quote(str(key), 60)}; give it once")
        out[name] = value
        spelled[name] = str(key)
    return out


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON experiment file into a dict of raw values (keys checked)."""
    return normalise_keys(read_mapping_file(path), str(path))


#: A centralized baseline trains one client holding the whole (pooled, iid) training set;
#: a round is one epoch (docs/algorithms.md section 4).
CENTRALIZED_PROTOCOL = {"clients": 1, "per_round": 1, "partition": "iid", "samples_per_client": None,
                        "local_epochs": 1, "local_steps": None}


def _pool_for_centralized(merged: dict[str, Any], given: dict[str, Any]) -> None:
    for name, value in CENTRALIZED_PROTOCOL.items():
        if name in given and given[name] != value:
            raise ConfigError(name, f"got {quote(given[name])}; method {quote(merged['method'])} trains on pooled "
                              f"data and needs {name}={quote(value)}")
        merged[name] = value


def _apply_split_file(merged: dict[str, Any], given: dict[str, Any]) -> None:
    """Partition "file": the split file is read and checked now (before any compute), its
    digest becomes ``split_sha256`` and its users the clients."""
    path = merged.get("split_file")
    if not path:
        raise ConfigError("split_file", "partition 'file' needs split_file: the path of a LEAF-style split JSON "
                          "(e.g. the FedSAM repository's data/cifar10/data/train/federated_train_alpha_0.05.json)")
    try:
        split = read_split_file(path)
    except DatasetError as exc:
        raise ConfigError("split_file", str(exc)) from None
    if merged.get("split_sha256") not in (None, split.sha256):
        raise ConfigError("split_sha256", f"got {merged['split_sha256']!r} but {path} has sha256 {split.sha256}")
    merged["split_sha256"] = split.sha256
    if "clients" in given and int(given["clients"]) != split.num_clients:
        raise ConfigError("clients", f"got {given['clients']}; the split file {path} has {split.num_clients} users")
    merged["clients"] = split.num_clients


def resolve_config(values: dict[str, Any] | None = None, **kwargs: Any) -> ExperimentConfig:
    """Build a validated :class:`ExperimentConfig` from user values (see module docstring).

    ``values`` and ``kwargs`` hold the user's choices; ``None`` means "not given".
    """
    return _resolve({**(values or {}), **kwargs}, "the arguments", stored=False)


def resolve_stored_config(record: Any) -> ExperimentConfig:
    """The config a run's stored canonical config (its ``config.json``) was resolved from,
    validated as :func:`resolve_config` validates a user's values; a record that is not
    one flcore writes raises :class:`~flcore.ConfigError` (compare ``canonical()`` with
    the record to know that it is exactly one).  A split-file run's record names its split
    by digest (``split_sha256``) and its users by ``clients``: the file itself need not be
    here."""
    if not isinstance(record, dict):
        raise ConfigError("config", f"a stored config is a JSON object, not a {type(record).__name__}")
    return _resolve(record, "the stored config", stored=True)


def _resolve(values: dict[str, Any], source: str, stored: bool) -> ExperimentConfig:
    user = normalise_keys(values, source)
    user = {k: v for k, v in user.items() if v is not None}
    parsed = {name: PARSERS[name](name, value) for name, value in user.items()}

    scale = parsed.get("scale") or "small"
    choice("scale", scale, SCALES)
    dataset = parsed.get("dataset") or DEFAULT_DATASET[scale]
    method = parsed.get("method") or DEFAULTS["method"]
    merged: dict[str, Any] = {**DEFAULTS, "scale": scale, "dataset": dataset, "method": method}
    choice("dataset", dataset, DATASET_NAMES)
    choice("method", method, METHOD_NAMES)
    merged.update(scale_defaults(scale, dataset))
    alpha = parsed.get("alpha", merged["alpha"])
    merged.update(method_defaults(method, dataset, alpha, scale))
    merged.update(parsed)
    if get_method(method).pooled:
        _pool_for_centralized(merged, parsed)
    if merged["model"] is None:
        merged["model"] = default_model_for(dataset)
    if merged["partition"] == "file" and not (stored and not merged.get("split_file")):
        _apply_split_file(merged, parsed)
    elif merged["partition"] == "file" and (merged.get("split_sha256") is None or "clients" not in parsed):
        raise ConfigError("split_sha256", "a stored split-file config names its split by split_sha256 and clients")
    # every field must be present and parsed
    for name in FIELD_NAMES:
        if name not in merged:
            raise ConfigError(name, "missing value")
        merged[name] = PARSERS[name](name, merged[name])
    validate(merged)
    protocol = {name: merged[name] for name in PROTOCOL_FIELDS}
    return ExperimentConfig(**protocol, method_args=MethodArguments({name: merged[name] for name in HYPERPARAMETERS}))
