"""Experiment configuration: parsing, defaults by scale and paper preset, validation, hashing.

A configuration is resolved in layers, later layers winning:

1. global defaults (``DEFAULTS``);
2. the scale preset for the dataset (``flcore.experiments.presets.scale_defaults``);
3. the method's paper hyper-parameters for that dataset and heterogeneity
   (``flcore.experiments.presets.method_defaults``);
4. the values the user gave (a YAML/JSON file, then command-line flags).

Every field is checked before any compute starts; a bad value raises
:class:`flcore.errors.ConfigError` naming the field and the allowed values.

The run id is the hash of the *canonical* config: the fields that change the numbers.
Fields that only say where or how fast to compute (device, engine, data folder, checkpoint
period) are left out, so a finished run is found again whatever machine asks for it.
Method hyper-parameters a method does not use are left out too (FedAvg ignores ``rho``).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterable

from .errors import ConfigError

SCALES = ("smoke", "small", "paper")
#: "flwr": the clients are a flwr-datasets partitioner's partitions, which only the Python
#: API can pass (``flcore.flower.Federation.from_config(..., partitioner=...)``).
PARTITIONS = ("dirichlet", "shards", "iid", "domains", "flwr")
#: Config fields each partition reads; the others do not enter the run id.
PARTITION_FIELDS = {
    "dirichlet": ("alpha", "samples_per_client"),
    "shards": ("classes_per_client",),
    "iid": ("samples_per_client",),
    "domains": ("alpha",),  # FedIMA's label + feature skew (flcore.data.partition_domains)
    "flwr": (),  # the partitioner's own arguments
}
_ALL_PARTITION_FIELDS = frozenset(f for names in PARTITION_FIELDS.values() for f in names)
ENGINES = ("auto", "sequential", "batched")
_DEVICE_RE = re.compile(r"^(auto|cpu|cuda|cuda:\d+|mps)$")


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
    num_samples: int | None
    rounds: int
    local_epochs: int
    local_steps: int | None
    batch_size: int
    lr: float
    momentum: float
    weight_decay: float
    rho: float
    eta: float
    server_lr: float
    server_momentum: float
    server_beta1: float
    server_beta2: float
    server_tau: float
    bias_correction: bool
    # ---- method hyper-parameters (algorithms.md; each method lists those it reads)
    mu: float  # FedProx proximal coefficient
    feddyn_alpha: float  # FedDyn / FedLESAM-D regulariser alpha
    adabest_beta: float
    adabest_mu: float
    fedcm_alpha: float  # FedCM / MoFedSAM mixing weight of the local gradient
    fedspeed_alpha: float  # FedSpeed gradient mixing
    fedspeed_lambda: float  # FedSpeed prox coefficient 1/lambda
    smoo_beta: float  # FedSMOO dynamic regulariser: coefficient 1/beta
    gloss_rho_server: float  # FedGloSS server radius rho_s
    gloss_beta: float  # FedGloSS ADMM parameter beta (1/beta is the prox coefficient)
    gloss_dual_scale: str  # "paper" (1/(beta N)) | "code" (1/(beta N |S|))
    gloss_server_rho_schedule: str  # "paper" (constant rho_s) | "code" (the official script's schedule)
    rho_warmup_rounds: int  # T_s of the linear client-rho warm-up (0: none)
    rho_warmup_start: float  # rho_0 of the warm-up
    fedgf_window: int  # W
    fedgf_threshold: float  # T_D
    fedgf_c_norm: str  # "paper" (divide by W) | "len" (official code: current window length)
    fedgf_static_c: float  # c of FedGF-static-c
    lesam_estimate: str  # "client" (paper) | "server_last_round" (official code)
    lesam_first_visit: str  # "none" (no perturbation) | "w0"
    lesam_perturbation: str  # "paper" (global l2 unit) | "code" (the official per-tensor indexing)
    scaffold_correction: float  # scale of the control-variate correction (FedLESAM-S code: 0.1)
    mofedsam_server_step: str  # "paper" (w - Delta) | "fedgf_code" (w - m, the FedGF code)
    fedgamma_variant: str  # "paper" | "fedgf_code" (server c += mean(dc)/N, the FedGF code)
    fa_lambda: float  # FedFA anchor-loss weight
    fa_momentum: float  # FedFA local-anchor EMA momentum m_a
    gma_tau: float  # FedGMA sign-agreement threshold
    gma_variant: str  # "paper" | "fedima_code"
    swa_start: int | None  # first SWA round (None: 75% of the rounds)
    swa_cycle: int  # c
    swa_lr_min: float  # gamma_2
    swa_include_start: bool
    swa_phase: str  # "paper" | "code"
    ima_window: int  # P
    ima_start: int | None  # t_IMA (None: 75% of the rounds)
    ima_gamma: float  # client lr decay before t_IMA
    ima_gamma_late: float  # client lr decay from t_IMA
    ima_partial_window: str  # "average" (the models that exist) | "wait" (official code: a full window first)
    ima_exploration: str  # client exploration from t_IMA: exponential | constant | cyclic | epoch | none
    ima_lr_min: float  # lr of the "constant" scheme and floor of the "cyclic" one
    ima_exploration_period: int  # rounds per cycle ("cyclic") or per epoch dropped ("epoch")
    dyn_clip: str  # "paper" (clip the whole corrected gradient) | "code" (clip g + linear dual term, alpha w after)
    fedspeed_variant: str  # "paper" | "code" (FL-Simulator: SAM gradient, no mixing; duals of all clients)
    smoo_variant: str  # "paper" | "code" (FL-Simulator: s = rho unit(mean mu_k))
    lr_decay: float  # exponential per-round client lr decay gamma (1: constant)
    clip_norm: float | None  # clip the local descent gradient to this norm (None: off)
    mixup_alpha: float  # Mixup Beta(alpha, alpha) (0: off)
    cutout_size: int  # Cutout square side (0: off)
    # ---- what the run records for analysis (flcore.analysis.recording)
    probes: tuple[str, ...]  # training-time probes logged into the metrics
    probe_every: int  # rounds between probes (0: at the evaluation rounds)
    snapshot_rounds: tuple[int, ...]  # rounds whose global and client models are saved
    seed: int
    eval_every: int
    eval_last: int
    eval_batch_size: int
    checkpoint_every: int
    device: str
    engine: str
    data_root: str
    download: bool

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def canonical(self) -> dict[str, Any]:
        """The fields that determine the numbers of a run (see module docstring)."""
        from .algorithms import get_method

        method = get_method(self.method)
        out = {}
        for name, value in self.to_dict().items():
            if name in NON_SEMANTIC_FIELDS:
                continue
            if name in ADDED_OPTIONS:
                if value == ADDED_OPTIONS[name] or name not in method.hyperparameters:
                    continue
            elif name in NEUTRAL_DEFAULTS:
                if value == NEUTRAL_DEFAULTS[name]:
                    continue
            elif name in METHOD_FIELDS and name not in method.hyperparameters:
                continue
            if name in _ALL_PARTITION_FIELDS and name not in PARTITION_FIELDS[self.partition]:
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

    def replace(self, **changes) -> "ExperimentConfig":
        return resolve_config({**self.to_dict(), **changes})


#: Fields that say where or how to compute, not what: excluded from the run id.
NON_SEMANTIC_FIELDS = frozenset(
    {"device", "engine", "data_root", "download", "checkpoint_every", "eval_batch_size"}
)
#: Hyper-parameters that only some methods use; a method lists the ones it reads.
METHOD_FIELDS = frozenset(
    {"rho", "eta", "server_lr", "server_momentum", "server_beta1", "server_beta2",
     "server_tau", "bias_correction", "mu", "feddyn_alpha", "adabest_beta", "adabest_mu",
     "fedcm_alpha", "fedspeed_alpha", "fedspeed_lambda", "smoo_beta", "gloss_rho_server",
     "gloss_beta", "gloss_dual_scale", "gloss_server_rho_schedule", "rho_warmup_rounds",
     "rho_warmup_start", "fedgf_window", "fedgf_threshold", "fedgf_c_norm", "fedgf_static_c",
     "lesam_estimate", "lesam_first_visit", "lesam_perturbation", "scaffold_correction", "mofedsam_server_step", "fedgamma_variant", "fa_lambda", "fa_momentum", "gma_tau", "gma_variant",
     "swa_start", "swa_cycle", "swa_lr_min", "swa_include_start", "swa_phase", "ima_window",
     "ima_start", "ima_gamma", "ima_gamma_late", "lr_decay", "clip_norm", "mixup_alpha",
     "cutout_size"}
)
#: Fields whose defaults leave a method unchanged; they enter the run id of every method
#: only when set away from that default (so adding an option keeps old run ids).
NEUTRAL_DEFAULTS = {"lr_decay": 1.0, "clip_norm": None, "mixup_alpha": 0.0, "cutout_size": 0,
                    "probes": (), "probe_every": 0, "snapshot_rounds": ()}

#: Allowed values of the string-valued method options.
OPTION_CHOICES = {
    "gloss_dual_scale": ("paper", "code"),
    "gloss_server_rho_schedule": ("paper", "code"),
    "fedgf_c_norm": ("paper", "len"),
    "lesam_estimate": ("client", "server_last_round"),
    "lesam_first_visit": ("none", "w0"),
    "lesam_perturbation": ("paper", "code"),
    "gma_variant": ("paper", "fedima_code"),
    "mofedsam_server_step": ("paper", "fedgf_code"),
    "fedgamma_variant": ("paper", "fedgf_code"),
    "swa_phase": ("paper", "code"),
    "ima_partial_window": ("average", "wait"),
    "ima_exploration": ("exponential", "constant", "cyclic", "epoch", "none"),
    "dyn_clip": ("paper", "code"),
    "fedspeed_variant": ("paper", "code"),
    "smoo_variant": ("paper", "code"),
}

#: Method options added after runs were stored: they enter the run id only when the
#: method reads them and they are set away from their default (so stored run ids stay).
ADDED_OPTIONS = {"ima_partial_window": "average", "dyn_clip": "paper", "fedspeed_variant": "paper",
                 "smoo_variant": "paper", "ima_exploration": "exponential", "ima_lr_min": 5e-5,
                 "ima_exploration_period": 20}

DEFAULTS: dict[str, Any] = {
    "method": "fedavg",
    "model": None,
    "partition": "dirichlet",
    "alpha": 0.0,
    "classes_per_client": 2,
    "samples_per_client": None,
    "num_samples": None,
    "local_epochs": 1,
    "local_steps": None,
    "momentum": 0.0,
    "weight_decay": 0.0,
    "rho": 0.05,
    "eta": 0.2,
    "server_lr": 1.0,
    "server_momentum": 0.0,
    "server_beta1": 0.9,
    "server_beta2": 0.99,
    "server_tau": 1e-3,
    "bias_correction": False,
    "mu": 0.1,
    "feddyn_alpha": 0.01,
    "adabest_beta": 0.9,
    "adabest_mu": 0.02,
    "fedcm_alpha": 0.1,
    "fedspeed_alpha": 0.95,
    "fedspeed_lambda": 100.0,
    "smoo_beta": 10.0,
    "gloss_rho_server": 0.15,
    "gloss_beta": 10.0,
    "gloss_dual_scale": "paper",
    "gloss_server_rho_schedule": "paper",
    "rho_warmup_rounds": 0,
    "rho_warmup_start": 0.001,
    "fedgf_window": 30,
    "fedgf_threshold": 0.2,
    "fedgf_c_norm": "paper",
    "fedgf_static_c": 0.5,
    "lesam_estimate": "client",
    "lesam_first_visit": "none",
    "lesam_perturbation": "paper",
    "scaffold_correction": 1.0,
    "mofedsam_server_step": "paper",
    "fedgamma_variant": "paper",
    "fa_lambda": 0.1,
    "fa_momentum": 0.5,
    "gma_tau": 0.8,
    "gma_variant": "paper",
    "swa_start": None,
    "swa_cycle": 10,
    "swa_lr_min": 1e-4,
    "swa_include_start": True,
    "swa_phase": "paper",
    "ima_window": 5,
    "ima_start": None,
    "ima_gamma": 0.99,
    "ima_gamma_late": 0.97,
    **ADDED_OPTIONS,
    "lr_decay": 1.0,
    "clip_norm": None,
    "mixup_alpha": 0.0,
    "cutout_size": 0,
    "probes": (),
    "probe_every": 0,
    "snapshot_rounds": (),
    "seed": 0,
    "eval_batch_size": 2000,
    "device": "auto",
    "engine": "auto",
    "data_root": "data",
    "download": False,
}


# ----------------------------------------------------------------------------- parsing

def _parse_int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ConfigError(name, f"expected an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            try:
                as_float = float(value)
            except ValueError:
                as_float = math.nan
            if as_float.is_integer():
                return int(as_float)
    raise ConfigError(name, f"expected an integer, got {value!r}")


def _parse_float(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ConfigError(name, f"expected a number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ConfigError(name, f"expected a number, got {value!r}") from None
    if not math.isfinite(out):
        raise ConfigError(name, f"expected a finite number, got {value!r}")
    return out


def _parse_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        return value.lower() in ("1", "true", "yes", "on")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ConfigError(name, f"expected true or false, got {value!r}")


def _parse_str(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(name, f"expected a string, got {value!r}")
    return value.strip()


def _parse_names(name: str, value: Any) -> tuple[str, ...]:
    """A list of names, or one comma-separated string (the command line's form)."""
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(name, f"expected a list of names, got {value!r}")
    return tuple(v.strip() for v in value)


def _parse_rounds(name: str, value: Any) -> tuple[int, ...]:
    """A list of round numbers (or a comma-separated string), sorted, without repeats."""
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise ConfigError(name, f"expected a list of round numbers, got {value!r}")
    return tuple(sorted({_parse_int(name, v) for v in value}))


def _optional(parse: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    def parse_optional(name: str, value: Any) -> Any:
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null")):
            return None
        return parse(name, value)
    return parse_optional


_PARSERS: dict[str, Callable[[str, Any], Any]] = {}
for _f in fields(ExperimentConfig):
    _t = str(_f.type)
    if _t.startswith("int"):
        _PARSERS[_f.name] = _optional(_parse_int) if "None" in _t else _parse_int
    elif _t.startswith("float"):
        _PARSERS[_f.name] = _parse_float
    elif _t.startswith("bool"):
        _PARSERS[_f.name] = _parse_bool
    else:
        _PARSERS[_f.name] = _optional(_parse_str) if "None" in _t else _parse_str
_PARSERS["model"] = _optional(_parse_str)
_PARSERS["clip_norm"] = _optional(_parse_float)
_PARSERS["scale"] = _optional(_parse_str)
_PARSERS["probes"] = _parse_names
_PARSERS["snapshot_rounds"] = _parse_rounds

FIELD_NAMES = tuple(f.name for f in fields(ExperimentConfig))


def _normalise_keys(raw: dict[str, Any], source: str) -> dict[str, Any]:
    out = {}
    for key, value in raw.items():
        name = str(key).replace("-", "_")
        if name not in FIELD_NAMES:
            allowed = ", ".join(FIELD_NAMES)
            raise ConfigError(name, f"unknown field in {source}; allowed fields: {allowed}")
        out[name] = value
    return out


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON experiment file into a dict of raw values."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError("config", f"file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError("config", f"{path} is not a text file (expected YAML or JSON)") from None
    except OSError as exc:
        raise ConfigError("config", f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001 - any parse error is the user's file
        raise ConfigError("config", f"cannot parse {path}: {_one_line(exc)}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("config", f"{path} must hold a mapping of field: value")
    return _normalise_keys(data, str(path))


# ----------------------------------------------------------------------------- bounds

#: Documented sanity caps (README, "Configuration limits").  They are far above any
#: protocol of the five papers (20,000 rounds, 5 epochs) and stop a mistyped count
#: (``--rounds 1e12``) from being accepted and then running forever.
MAX_ROUNDS = 1_000_000
MAX_LOCAL_EPOCHS = 1_000
MAX_LOCAL_STEPS = 1_000_000
#: Cap on generated data sets (MNIST-1D, synthetic): generation time and memory.
MAX_GENERATED_SAMPLES = 1_000_000
#: Cap of the other counts that have no natural bound (seeds excepted).
MAX_COUNT = 1_000_000

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
#: Number of domains of the multi-domain data sets (the "domains" partition needs one).
DATASET_DOMAINS = {"pacs": 4}
#: Default ``num_samples`` of the generated sets (``flcore.data.load_dataset``).
_GENERATED_DEFAULT = {"mnist1d": 5000, "synthetic": 2000}


def training_set_size(dataset: str, num_samples: int | None) -> int:
    """Number of training examples ``load_dataset(dataset, num_samples=...)`` yields."""
    fixed = DATASET_FACTS[dataset][2]
    if fixed is not None:
        return fixed if num_samples is None else min(num_samples, fixed)
    n = num_samples or _GENERATED_DEFAULT[dataset]
    return int(n * 0.8) if dataset == "mnist1d" else n  # MNIST-1D: the package's 80/20 split


def _check_data_fit(cfg: dict[str, Any]) -> None:
    """Model/data compatibility and every count bounded by the data (before any I/O)."""
    from .models import accepts_input

    dataset = cfg["dataset"]
    shape, num_classes, fixed = DATASET_FACTS[dataset]
    accepted = accepts_input(cfg["model"], shape)
    if accepted is not None:
        raise ConfigError("model", f"{cfg['model']!r} cannot take {dataset} inputs of shape {list(shape)} "
                          f"(it takes {accepted}); allowed models for {dataset}: "
                          + ", ".join(_models_for(shape)))
    if cfg["num_samples"] is not None:
        high = fixed if fixed is not None else MAX_GENERATED_SAMPLES
        low = 5 if dataset == "mnist1d" else 1  # MNIST-1D keeps 20% for the test set
        if not low <= cfg["num_samples"] <= high:
            raise ConfigError("num_samples", f"got {cfg['num_samples']}; must be in {low}..{high} for {dataset}")
    n = training_set_size(dataset, cfg["num_samples"])
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
    spc = cfg["samples_per_client"]
    if spc is not None and partition in ("dirichlet", "iid") and cfg["clients"] * spc > n:
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


def _models_for(shape: tuple[int, ...]) -> list[str]:
    from .models import MODEL_NAMES, accepts_input

    return [name for name in MODEL_NAMES if accepts_input(name, shape) is None]


def _at_most(name: str, value: float, high: float, why: str = "the documented sanity cap") -> None:
    if value > high:
        raise ConfigError(name, f"got {value!r}; must be <= {high} ({why})")


def _one_line(exc: Exception) -> str:
    """A parser's message on one line: YAML's "problem ... at line L, column C" or the
    first line of any other message."""
    problem, mark = getattr(exc, "problem", None), getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def check_method_reads(method: str, given: Iterable[str]) -> None:
    """Refuse method hyper-parameters that ``method`` does not read.

    ``given``: the field names the user set explicitly (the command line and its
    ``--config`` file).  Only these are checked: a resolved config carries every field, so
    ``resolve_config`` itself cannot tell a value the user chose from a default.
    """
    from .algorithms import get_method

    given = set(given)
    reads = get_method(method).hyperparameters
    ignored = sorted(name for name in given
                     if name in METHOD_FIELDS and name not in NEUTRAL_DEFAULTS and name not in reads)
    if ignored:
        listed = ", ".join(sorted(reads)) or "none"
        raise ConfigError(ignored[0], f"method {method!r} does not read {', '.join(ignored)}; "
                          f"the method hyper-parameters it reads: {listed}")


def check_partition_reads(partition: str, given: Iterable[str]) -> None:
    """Refuse partition fields the chosen ``partition`` does not read (user-set names).

    ``alpha`` is exempt: besides the Dirichlet concentration it is the heterogeneity level
    that selects a method's paper hyper-parameters (``presets.method_defaults``)."""
    ignored = sorted(set(given) & (_ALL_PARTITION_FIELDS - set(PARTITION_FIELDS[partition]) - {"alpha"}))
    if ignored:
        raise ConfigError(ignored[0], f"partition {partition!r} does not read {', '.join(ignored)}; "
                          f"it reads: {', '.join(PARTITION_FIELDS[partition])}")


# ----------------------------------------------------------------------------- checks

def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(name, f"got {value!r}; allowed values: {', '.join(allowed)}")


def _at_least(name: str, value: float, low: float) -> None:
    if value < low:
        raise ConfigError(name, f"got {value!r}; must be >= {low}")


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise ConfigError(name, f"got {value!r}; must be > 0")


def _fraction(name: str, value: float) -> None:
    if not 0 <= value < 1:
        raise ConfigError(name, f"got {value!r}; must be in [0, 1)")


def _validate(cfg: dict[str, Any]) -> None:
    from .algorithms import METHOD_NAMES
    from .data import DATASET_NAMES
    from .models import MODEL_NAMES

    _choice("method", cfg["method"], METHOD_NAMES)
    _choice("dataset", cfg["dataset"], DATASET_NAMES)
    _choice("model", cfg["model"], MODEL_NAMES)
    _choice("scale", cfg["scale"], SCALES)
    _choice("partition", cfg["partition"], PARTITIONS)
    _choice("engine", cfg["engine"], ENGINES)
    if not _DEVICE_RE.match(cfg["device"]):
        raise ConfigError("device", f"got {cfg['device']!r}; allowed values: auto, cpu, cuda, cuda:N, mps")
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
    _at_least("seed", cfg["seed"], 0)
    for name in ("lr", "server_lr", "server_tau"):
        _positive(name, cfg[name])
    for name in ("weight_decay", "rho", "eta"):
        _at_least(name, cfg[name], 0)
    for name in ("momentum", "server_momentum", "server_beta1", "server_beta2"):
        _fraction(name, cfg[name])
    for name, allowed in OPTION_CHOICES.items():
        _choice(name, cfg[name], allowed)
    for name in ("mu", "adabest_beta", "adabest_mu", "fedspeed_alpha", "gloss_rho_server",
                 "rho_warmup_start", "fedgf_threshold", "mixup_alpha", "rho_warmup_rounds", "cutout_size",
                 "swa_lr_min"):
        _at_least(name, cfg[name], 0)
    for name in ("feddyn_alpha", "fedspeed_lambda", "smoo_beta", "gloss_beta", "scaffold_correction", "lr_decay",
                 "ima_gamma", "ima_gamma_late", "ima_lr_min"):
        _positive(name, cfg[name])
    _at_least("fa_lambda", cfg["fa_lambda"], 0)
    for name in ("fedcm_alpha", "fedgf_static_c", "gma_tau", "fa_momentum"):
        if not 0 <= cfg[name] <= 1:
            raise ConfigError(name, f"got {cfg[name]!r}; must be in [0, 1]")
    for name in ("fedgf_window", "swa_cycle", "ima_window", "ima_exploration_period"):
        _at_least(name, cfg[name], 1)
    for name in ("swa_start", "ima_start"):
        if cfg[name] is not None:
            _at_least(name, cfg[name], 0)
    if cfg["clip_norm"] is not None:
        _positive("clip_norm", cfg["clip_norm"])
    _at_most("rounds", cfg["rounds"], MAX_ROUNDS)
    _at_most("local_epochs", cfg["local_epochs"], MAX_LOCAL_EPOCHS)
    if cfg["local_steps"] is not None:
        _at_most("local_steps", cfg["local_steps"], MAX_LOCAL_STEPS)
        if cfg["local_epochs"] != 1:
            raise ConfigError("local_steps", f"got {cfg['local_steps']} with local_epochs={cfg['local_epochs']}; "
                              "local_steps replaces epochs, give only one of them")
    for name in ("eval_every", "eval_last", "checkpoint_every", "swa_cycle", "ima_window", "fedgf_window",
                 "ima_exploration_period",
                 "rho_warmup_rounds", "cutout_size", "classes_per_client"):
        _at_most(name, cfg[name], MAX_ROUNDS if name != "classes_per_client" else MAX_COUNT)
    for name in ("swa_start", "ima_start"):
        if cfg[name] is not None:
            _at_most(name, cfg[name], cfg["rounds"], "the number of rounds; later it would never start")
    _at_most("eval_batch_size", cfg["eval_batch_size"], MAX_COUNT)
    _check_recording(cfg)
    _check_data_fit(cfg)


def _check_recording(cfg: dict[str, Any]) -> None:
    """``probes``: registered names, each once; ``probe_every`` only with probes;
    ``snapshot_rounds`` within 1..rounds."""
    if cfg["probes"]:
        from .analysis.recording import probe_names

        known = probe_names()
        for name in cfg["probes"]:
            _choice("probes", name, known)
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


# ----------------------------------------------------------------------------- resolve

#: A centralized baseline trains one client holding the whole (pooled, iid) training set;
#: a round is one epoch (algorithms.md section 4).
CENTRALIZED_PROTOCOL = {"clients": 1, "per_round": 1, "partition": "iid", "samples_per_client": None,
                        "local_epochs": 1, "local_steps": None}


def _pool_for_centralized(merged: dict[str, Any], given: dict[str, Any]) -> None:
    for name, value in CENTRALIZED_PROTOCOL.items():
        if name in given and given[name] != value:
            raise ConfigError(name, f"got {given[name]!r}; method {merged['method']!r} trains on pooled "
                              f"data and needs {name}={value!r}")
        merged[name] = value


def resolve_config(values: dict[str, Any] | None = None, **kwargs: Any) -> ExperimentConfig:
    """Build a validated :class:`ExperimentConfig` from user values (see module docstring).

    ``values`` and ``kwargs`` hold the user's choices; ``None`` means "not given".
    """
    from .experiments.presets import DEFAULT_DATASET, method_defaults, scale_defaults

    user = _normalise_keys({**(values or {}), **kwargs}, "the arguments")
    user = {k: v for k, v in user.items() if v is not None}
    parsed = {name: _PARSERS[name](name, value) for name, value in user.items()}

    scale = parsed.get("scale") or "small"
    _choice("scale", scale, SCALES)
    dataset = parsed.get("dataset") or DEFAULT_DATASET[scale]
    method = parsed.get("method") or DEFAULTS["method"]
    merged: dict[str, Any] = {**DEFAULTS, "scale": scale, "dataset": dataset, "method": method}
    from .data import DATASET_NAMES
    from .algorithms import METHOD_NAMES

    _choice("dataset", dataset, DATASET_NAMES)
    _choice("method", method, METHOD_NAMES)
    merged.update(scale_defaults(scale, dataset))
    alpha = parsed.get("alpha", merged["alpha"])
    merged.update(method_defaults(method, dataset, alpha, scale))
    merged.update(parsed)
    if method.startswith("centralized-"):
        _pool_for_centralized(merged, parsed)
    if merged["model"] is None:
        from .models import default_model_for

        merged["model"] = default_model_for(dataset)
    # every field must be present and parsed
    for name in FIELD_NAMES:
        if name not in merged:
            raise ConfigError(name, "missing value")
        merged[name] = _PARSERS[name](name, merged[name])
    _validate(merged)
    return ExperimentConfig(**merged)
