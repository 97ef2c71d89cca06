"""The experiment configuration: resolution in layers, and the run id.

A configuration is resolved in layers, later layers winning:

1. global defaults (:data:`flcore.config.fields.DEFAULTS`);
2. the scale preset for the dataset (:func:`flcore.config.presets.scale_defaults`);
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

import dataclasses
import hashlib
import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from flcore.algorithms import METHOD_NAMES
from flcore.config.fields import (
    ADDED_OPTIONS,
    ALL_PARTITION_FIELDS,
    DEFAULTS,
    METHOD_FIELDS,
    NEUTRAL_DEFAULTS,
    NON_SEMANTIC_FIELDS,
    PARTITION_FIELDS,
    SCALES,
)
from flcore.config.method_reads import hyperparameters_of
from flcore.config.parsing import parsers_for, read_mapping_file
from flcore.config.presets import DEFAULT_DATASET, method_defaults, scale_defaults
from flcore.config.validation import choice, validate
from flcore.data import DATASET_NAMES, DatasetError, read_split_file
from flcore.errors import ConfigError, quote
from flcore.models import default_model_for


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
    rho: float
    eta: float
    server_lr: float
    server_momentum: float
    server_beta1: float
    server_beta2: float
    server_tau: float
    bias_correction: bool
    # ---- method hyper-parameters (docs/algorithms.md; each method lists those it reads)
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
    fedswa_rho: float  # FedSWA: the client lr decays from eta to fedswa_rho * eta within each round
    fedswa_variant: str  # "paper" | "code" (junkangLiu0/FedSWA: the client lr doubled)
    fedmoswa_gamma: float  # FedMoSWA: weight of the clients' new control variates in the server's c
    fedmoswa_variant: str  # "paper" | "code" (junkangLiu0/FedSWA: c = the clients' mean in the first round)
    fednsam_gamma: float  # FedNSAM: the global Nesterov momentum coefficient gamma
    fednsam_variant: str  # "paper" (accumulated momentum) | "code" (junkangLiu0/FedNSAM: m = (1 + gamma) Delta)
    fedsol_temperature: float  # FedSOL: temperature T of the proximal KL loss whose gradient sets the perturbation
    fedsol_strength: str  # FedSOL: "fixed" (eps = rho unit(grad L_p)) | "adaptive" (scaled by |w - w^t|)
    fedwmsam_alpha: float  # FedWMSAM: the initial weight alpha of the gradient against the momentum
    fedwmsam_variant: str  # "paper" | "code" (Huang-Yongzhi/NeurlPS_FedWMSAM: per-tensor perturbation indexing)
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

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

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


#: One parser per field (:func:`flcore.config.parsing.parsers_for`).
PARSERS = parsers_for(fields(ExperimentConfig))
#: Every field of :class:`ExperimentConfig`, in order.
FIELD_NAMES = tuple(f.name for f in fields(ExperimentConfig))


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
    if method.startswith("centralized-"):
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
    return ExperimentConfig(**merged)
