"""The FedIMA paper's configuration tables (Zhou et al., its Tables IV-VII) rendered from flcore.

Each ``table*_ours`` function reads flcore's own registries -- the model registry
(:func:`flcore.models.build_model`) for the architectures, and the layered presets
(:func:`flcore.config.resolve_config` at the ``paper`` scale) for the hyper-parameters and
protocol -- and lays the answer out like the paper's table, so a page can put it beside the
published values (:mod:`flcore.experiments.published`).  Data sets and models flcore does
not have (Fashion-MNIST, Digit-Five, PACS; VGG-11, the Digit-Five CNN, AlexNet) are
``not in flcore``; nothing is filled in by hand.

flcore's ``paper`` scale is the FedSAM paper's CIFAR protocol (its Table 10): where FedIMA's
protocol differs (participation, local epochs, batch, momentum, rounds), the tables show
flcore's values and the ``match`` column says so.
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from torch import nn

from ..algorithms import get_method
from ..config import resolve_config
from ..models import build_model, count_parameters

NOT_IN_FLCORE = "not in flcore"

#: The paper's data sets -> flcore's (absent: not in flcore).
DATASETS = {"CIFAR-10": "cifar10", "CIFAR-100": "cifar100"}
#: The paper's models -> flcore's model registry names (absent: not in flcore).
MODELS = {"CNN": "cnn", "ResNet18": "resnet18gn"}
#: The paper's baselines -> flcore methods (every one is registered).
BASELINES = {"FedAvg": "fedavg", "FedProx": "fedprox", "FedASAM": "fedasam", "FedFA": "fedfa",
             "FedNova": "fednova", "FedAdam": "fedadam", "FedYogi": "fedyogi", "FedGMA": "fedgma"}
#: Table V's symbols -> flcore config fields.
HYPERPARAMETER_FIELDS = {"mu": "mu", "lambda": "fa_lambda", "rho": "rho", "eta": "eta", "server_lr": "server_lr",
                         "beta1": "server_beta1", "beta2": "server_beta2", "tau": "server_tau",
                         "threshold": "gma_tau"}


# ----------------------------------------------------------------------------- Table IV

def layer_list(model: nn.Module) -> list[str]:
    """The convolution, normalisation and linear layers of ``model`` in order, written as
    the paper writes them: ``Conv(3,64,5)``, ``GN(2)``, ``FC(1600,384)``."""
    out = []
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            out.append(f"Conv({module.in_channels},{module.out_channels},{module.kernel_size[0]})")
        elif isinstance(module, nn.GroupNorm):
            out.append(f"GN({module.num_groups})")
        elif isinstance(module, nn.Linear):
            out.append(f"FC({module.in_features},{module.out_features})")
    return out


def flcore_model(model: str, dataset: str = "CIFAR-10") -> nn.Module | None:
    """flcore's model for the paper's ``model`` on ``dataset`` (None: not in flcore)."""
    if model not in MODELS or dataset not in DATASETS:
        return None
    classes = 100 if dataset == "CIFAR-100" else 10
    return build_model(MODELS[model], (3, 32, 32), classes)


def _fc_layers(model: nn.Module) -> list[str]:
    return [layer for layer in layer_list(model) if layer.startswith("FC(")]


def table4_ours(published: pd.DataFrame) -> pd.DataFrame:
    """For every published layer of Table IV (``model, block, layer``): whether flcore's model
    has that layer, and flcore's fully connected layers for comparison."""
    rows = []
    for row in published.itertuples():
        dataset = "CIFAR-100" if row.model.startswith("CIFAR-100") else "CIFAR-10"
        name = row.model.split("(")[-1].rstrip(")")
        model = flcore_model(name, dataset) if row.model.startswith("CIFAR") else None
        if model is None:
            rows.append({"model": row.model, "block": row.block, "flcore model": NOT_IN_FLCORE,
                         "flcore FC layers": NOT_IN_FLCORE, "in flcore": NOT_IN_FLCORE})
            continue
        fcs = _fc_layers(model)
        # the paper writes the classifier for CIFAR-10 (10 outputs) and the VGG/ResNet
        # projector with its backbone's name in front: compare the layer itself
        layer = str(row.layer).split(".")[-1]
        found = "" if not layer else ("yes" if layer in fcs else "no")
        rows.append({"model": row.model, "block": row.block, "flcore model": MODELS[name],
                     "flcore FC layers": " \u2192 ".join(fcs), "in flcore": found or "layer lost in the text"})
    return pd.DataFrame(rows)


def model_summary(models: Sequence[str] = ("CNN", "ResNet18")) -> pd.DataFrame:
    """flcore's models for the paper's CIFAR columns: registry name, layers, parameters."""
    rows = []
    for name in models:
        for dataset in DATASETS:
            model = flcore_model(name, dataset)
            layers = layer_list(model)
            convs = sum(layer.startswith("Conv") for layer in layers)
            norms = sorted({layer for layer in layers if layer.startswith("GN")})
            rows.append({"paper model": name, "dataset": dataset, "flcore model": MODELS[name],
                         "conv layers": convs, "normalisation": ", ".join(norms) or "none",
                         "FC layers": " \u2192 ".join(_fc_layers(model)),
                         "parameters": count_parameters(model)})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- Table V

def table5_ours(published: pd.DataFrame) -> pd.DataFrame:
    """flcore's paper-scale value of every (method, hyper-parameter) row of Table V."""
    rows = []
    for row in published.itertuples():
        cfg = resolve_config(method=BASELINES[row.method], dataset="cifar10", scale="paper", alpha=0.0)
        field = HYPERPARAMETER_FIELDS.get(row.hyperparameter)
        if row.hyperparameter == "none":  # the method reads no field beyond the common ones
            value = "none" if not get_method(BASELINES[row.method]).hyperparameters else "has some"
        else:
            value = getattr(cfg, field) if field in cfg.canonical() else "\u2013"
        rows.append({"method": row.method, "hyperparameter": row.hyperparameter, "value": value})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- Tables VI, VII

def _decay(gamma: float) -> float:
    """The paper writes an exponential lr decay ``lr <- lr * gamma`` as ``1 - gamma``."""
    return round(1.0 - gamma, 10)


def _protocol(method: str, dataset: str) -> dict:
    cfg = resolve_config(method=method, dataset=DATASETS[dataset], scale="paper", alpha=0.0)
    return {"cfg": cfg, "clients": cfg.clients, "participation": round(cfg.per_round / cfg.clients, 10),
            "local_epochs": cfg.local_epochs, "batch_size": cfg.batch_size,
            "lr_momentum": f"{cfg.lr:g}({cfg.momentum:g})", "rounds": cfg.rounds}


def table7_ours(settings: pd.DataFrame) -> pd.DataFrame:
    """Table VII (test settings) for each ``setting`` row (``dataset``, ``model``): what an
    ``X+ima`` run at the ``paper`` scale uses (FedAvg+IMA shown; the IMA fields are the
    same for every baseline)."""
    rows = []
    for row in settings.itertuples():
        if row.dataset not in DATASETS:
            rows.append({"setting": row.setting, **{c: NOT_IN_FLCORE for c in _T7}})
            continue
        p = _protocol("fedavg+ima", row.dataset)
        cfg = p.pop("cfg")
        start = cfg.ima_start if cfg.ima_start is not None else int(0.75 * cfg.rounds)
        model = MODELS.get(row.model)
        rows.append({"setting": row.setting, **p, "lr_decay": _decay(cfg.ima_gamma), "window": cfg.ima_window,
                     "ima_lr_decay": _decay(cfg.ima_gamma_late), "ima_start": start,
                     "flcore model": model if model else NOT_IN_FLCORE})
    return pd.DataFrame(rows)


_T7 = ("clients", "participation", "local_epochs", "batch_size", "lr_momentum", "rounds", "lr_decay", "window",
       "ima_lr_decay", "ima_start", "flcore model")


def table6_ours(settings: pd.DataFrame) -> pd.DataFrame:
    """Table VI (visualisation and validation settings, FedAvg) for each ``figures`` row: what
    a FedAvg run on the row's first data set at the ``paper`` scale uses."""
    rows = []
    for row in settings.itertuples():
        dataset = str(row.dataset).split(",")[0].strip()
        if dataset not in DATASETS:
            rows.append({"figures": row.figures, **{c: NOT_IN_FLCORE for c in _T6}})
            continue
        p = _protocol("fedavg", dataset)
        cfg = p.pop("cfg")
        datasets = [DATASETS.get(d.strip(), NOT_IN_FLCORE) for d in str(row.dataset).split(",")]
        models = [MODELS.get(m.strip(), NOT_IN_FLCORE) for m in str(row.model).split(",")]
        rows.append({"figures": row.figures, **p, "lr_decay": _decay(cfg.lr_decay),
                     "flcore dataset": ", ".join(datasets), "flcore model": ", ".join(models)})
    return pd.DataFrame(rows)


_T6 = ("clients", "participation", "local_epochs", "batch_size", "lr_momentum", "lr_decay", "rounds",
       "flcore dataset", "flcore model")



# ----------------------------------------------------------------------------- comparisons

def _with_flcore_columns(table: pd.DataFrame, ours: pd.DataFrame, key: str, columns: Sequence[str]) -> pd.DataFrame:
    extra = ours.set_index(key)[list(columns)]
    position = list(table.columns).index("match")
    for offset, column in enumerate(columns):
        table.insert(position + offset, column, table[key].map(extra[column]).values)
    return table


def compare_table5(published: pd.DataFrame) -> pd.DataFrame:
    """Table V beside flcore; a value the text lost is marked so, with flcore's value shown."""
    from ..report import compare_settings

    table = compare_settings(published[["method", "hyperparameter", "value", "note"]], table5_ours(published),
                             ["method", "hyperparameter"])
    lost = published["value"].astype(str) == ""
    table.loc[lost.values, "match"] = "paper value lost"
    table.insert(list(table.columns).index("match"), "reference (paper)", published["reference"].values)
    return table


def compare_table6(published: pd.DataFrame) -> pd.DataFrame:
    """Table VI beside flcore (FL type, data set and model are shown, not compared: flcore's
    data set and model names are its registry's)."""
    from ..report import compare_settings

    ours = table6_ours(published)
    table = compare_settings(published.drop(columns=["fl", "dataset", "model"]),
                             ours.drop(columns=["flcore dataset", "flcore model"]), ["figures"])
    for position, column in enumerate(("fl", "dataset", "model"), start=1):
        table.insert(position, column, published[column].values)
    return _with_flcore_columns(table, ours, "figures", ("flcore dataset", "flcore model"))


def compare_table7(published: pd.DataFrame) -> pd.DataFrame:
    """Table VII beside flcore, one row per (data set, model) setting."""
    from ..report import compare_settings

    ours = table7_ours(published)
    table = compare_settings(published.drop(columns=["dataset", "model"]), ours.drop(columns=["flcore model"]),
                             ["setting"])
    return _with_flcore_columns(table, ours, "setting", ("flcore model",))


def columns_agreeing(table: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The compared columns of a :func:`flcore.report.compare_settings` table that agree in
    every row flcore has, and those that differ in at least one."""
    columns = [c[: -len(" (paper)")] for c in table.columns if c.endswith(" (paper)")]
    differing: set[str] = set()
    for verdict in table["match"]:
        if str(verdict).startswith("no: "):
            differing.update(part.strip() for part in verdict[len("no: "):].split(","))
    return [c for c in columns if c not in differing], [c for c in columns if c in differing]
