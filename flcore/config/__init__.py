"""Experiment configuration: fields and defaults, scales and the papers' presets, parsing,
validation, and the run id.

- :mod:`.fields`: the fields, their defaults and allowed values, the caps;
- :mod:`.presets`: the three scales and the papers' hyper-parameters as data;
- :mod:`.parsing`: raw values (files, command-line strings) to typed values;
- :mod:`.validation`: every check made before any compute;
- :mod:`.experiment`: :class:`ExperimentConfig`, :func:`resolve_config`, the run id;
- :mod:`.probes`: the registry of the training-time probes a config may name;
- :mod:`.method_reads`: the hyper-parameters and gradient count of a method, found by building it;
- :mod:`.method_catalog`: every registered method with its defaults, for ``flcore methods``.
"""
from flcore.config.experiment import (
                         CENTRALIZED_PROTOCOL,
                         FIELD_NAMES,
                         FIELD_TYPES,
                         PARSERS,
                         ExperimentConfig,
                         MethodArguments,
                         load_config_file,
                         normalise_keys,
                         resolve_config,
                         resolve_stored_config,
)
from flcore.config.fields import (
                         DATASET_DOMAINS,
                         DATASET_FACTS,
                         DATASET_LABELS,
                         DEFAULTS,
                         ENGINES,
                         HYPERPARAMETERS,
                         MAX_COUNT,
                         MAX_LOCAL_EPOCHS,
                         MAX_LOCAL_STEPS,
                         MAX_ROUNDS,
                         METHOD_FIELDS,
                         PARTITION_FIELDS,
                         PARTITIONS,
                         SCALES,
                         chance_accuracy,
                         training_set_size,
)
from flcore.config.method_catalog import client_state_of, describe_methods, server_state_of
from flcore.config.method_parts import parts_of, traffic_of
from flcore.config.method_reads import grad_evals_per_step, hyperparameters_of
from flcore.config.parsing import parse_int
from flcore.config.presets import method_defaults
from flcore.config.scales import DEFAULT_DATASET, scale_defaults
from flcore.config.validation import check_method_reads, check_partition_reads

__all__ = [
    "parts_of",
    "traffic_of",
    "CENTRALIZED_PROTOCOL",
    "DATASET_DOMAINS",
    "DATASET_LABELS",
    "DATASET_FACTS",
    "DEFAULTS",
    "DEFAULT_DATASET",
    "ENGINES",
    "FIELD_NAMES",
    "FIELD_TYPES",
    "MethodArguments",
    "MAX_COUNT",
    "MAX_LOCAL_EPOCHS",
    "MAX_LOCAL_STEPS",
    "MAX_ROUNDS",
    "HYPERPARAMETERS",
    "METHOD_FIELDS",
    "PARSERS",
    "PARTITIONS",
    "PARTITION_FIELDS",
    "SCALES",
    "ExperimentConfig",
    "check_method_reads",
    "grad_evals_per_step",
    "hyperparameters_of",
    "chance_accuracy",
    "check_partition_reads",
    "client_state_of",
    "describe_methods",
    "load_config_file",
    "method_defaults",
    "normalise_keys",
    "parse_int",
    "resolve_config",
    "resolve_stored_config",
    "scale_defaults",
    "server_state_of",
    "training_set_size",
]
