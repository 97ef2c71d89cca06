"""The FedIMA paper's configuration tables (Zhou et al., its Tables IV-VII) rendered from flcore.

Each ``table*_ours`` function reads flcore's own code -- the model registry
(:func:`flcore.models.build_model`) for the architectures, the layered presets
(:func:`flcore.resolve_config`) for Table V's hyper-parameters, and the run
definitions of the FedIMA result and analysis pages (:mod:`flcore.papers.fedima.runs`,
:mod:`flcore.papers.fedima.analysis`) for Tables VI and VII, so the settings shown are
those the runs use -- and lays the answer out like the paper's table, so a page can put it
beside the published values (:mod:`flcore.reproduction.published`).  The data set and model
flcore does not have (Digit-Five and its CNN) are ``not in flcore``; nothing is filled in by
hand.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd
from torch import nn

from flcore.config import DATASET_FACTS, hyperparameters_of, resolve_config
from flcore.models import build_model, count_parameters
from flcore.papers.fedima import runs as fedima
from flcore.papers.fedima.analysis import vis_run
from flcore.report import compare_settings
from flcore.reproduction.artifacts import ARTIFACTS
from flcore.reproduction.published import published as published_values
from flcore.reproduction.stand_in import paper_dataset

NOT_IN_FLCORE = "not in flcore"

#: The paper's data sets -> flcore's (absent: not in flcore).
#: The paper's models (Tables IV, VI, VII spell them so) -> flcore's model registry names,
#: per data set: the paper's "CNN" is one network on FMNIST and another on CIFAR (absent:
#: not in flcore).
MODELS = {"CNN": "cnn", "VGG11": "vgg11gn", "ResNet18": "resnet18gn"}
FMNIST_MODELS = {"CNN": "fmnist_cnn"}
#: PACS's network (Table IV writes "AlexNet", Table VII "AlexNet w/ GN").
PACS_MODELS = {"AlexNet": "alexnet_gn", "AlexNet w/ GN": "alexnet_gn"}
#: Table I's (and :mod:`flcore.papers.fedima.runs`'s) spelling of the models.
RESULT_MODEL_NAMES = {"CNN": "CNN", "VGG11": "VGG-11", "ResNet18": "ResNet-18", "AlexNet": "AlexNet",
                      "AlexNet w/ GN": "AlexNet"}
#: The paper's baselines -> flcore methods (every one is registered).
BASELINES = {"FedAvg": "fedavg", "FedProx": "fedprox", "FedASAM": "fedasam", "FedFA": "fedfa",
             "FedNova": "fednova", "FedAdam": "fedadam", "FedYogi": "fedyogi", "FedGMA": "fedgma"}
#: Table V's symbols -> flcore config fields.
HYPERPARAMETER_FIELDS = {"mu": "mu", "lambda": "fa_lambda", "rho": "rho", "eta": "eta", "server_lr": "server_lr",
                         "beta1": "server_beta1", "beta2": "server_beta2", "tau": "server_tau",
                         "threshold": "gma_tau"}

#: The paper's data sets flcore has (their flcore names: flcore.reproduction.stand_in.paper_dataset).
DATASETS = ("FMNIST", "CIFAR-10", "CIFAR-100", "PACS")


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


def flcore_model_name(model: str, dataset: str = "CIFAR-10") -> str | None:
    """flcore's registry name for the paper's ``model`` on ``dataset`` (None: not in flcore)."""
    if dataset not in DATASETS:
        return None
    return {"FMNIST": FMNIST_MODELS, "PACS": PACS_MODELS}.get(dataset, MODELS).get(model)


def flcore_model(model: str, dataset: str = "CIFAR-10") -> nn.Module | None:
    """flcore's model for the paper's ``model`` on ``dataset`` (None: not in flcore)."""
    name = flcore_model_name(model, dataset)
    if name is None:
        return None
    shape, classes, _ = DATASET_FACTS[paper_dataset(dataset)]
    return build_model(name, shape, classes)


def _fc_layers(model: nn.Module) -> list[str]:
    return [layer for layer in layer_list(model) if layer.startswith("FC(")]


def table4_ours(published: pd.DataFrame) -> pd.DataFrame:
    """For every published layer of Table IV (``model, block, layer``): whether flcore's model
    has that layer, and flcore's fully connected layers for comparison."""
    rows = []
    for row in published.itertuples():
        dataset = row.model.split(" (")[0]
        dataset = "CIFAR-10" if dataset.startswith("CIFAR-10") else dataset  # "CIFAR-10/100": 10 outputs
        name = row.model.split("(")[-1].rstrip(")")
        model = flcore_model(name, dataset)
        if model is None:
            rows.append({"model": row.model, "block": row.block, "flcore model": NOT_IN_FLCORE,
                         "flcore FC layers": NOT_IN_FLCORE, "in flcore": NOT_IN_FLCORE})
            continue
        fcs = _fc_layers(model)
        # the paper writes the classifier for CIFAR-10 (10 outputs) and the VGG/ResNet
        # projector with its backbone's name in front: compare the layer itself
        layer = str(row.layer).split(".")[-1]
        found = "" if not layer else ("yes" if layer in fcs else "no")
        rows.append({"model": row.model, "block": row.block, "flcore model": flcore_model_name(name, dataset),
                     "flcore FC layers": " \u2192 ".join(fcs), "in flcore": found or "layer lost in the text"})
    return pd.DataFrame(rows)


def model_summary(models: Sequence[str] = ("CNN", "VGG11", "ResNet18", "AlexNet")) -> pd.DataFrame:
    """flcore's models for the paper's FMNIST, CIFAR and PACS columns: registry name, layers,
    parameters (the registry's count)."""
    rows = []
    for name in models:
        for dataset in DATASETS:
            model = flcore_model(name, dataset)
            if model is None:
                continue
            layers = layer_list(model)
            convs = sum(layer.startswith("Conv") for layer in layers)
            norms = sorted({layer for layer in layers if layer.startswith("GN")})
            rows.append({"paper model": name, "dataset": dataset, "flcore model": flcore_model_name(name, dataset),
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
            value = "none" if not hyperparameters_of(BASELINES[row.method]) else "has some"
        else:
            value = getattr(cfg, field) if field in cfg.canonical() else "\u2013"
        rows.append({"method": row.method, "hyperparameter": row.hyperparameter, "value": value})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- Tables VI, VII

def _decay(gamma: float) -> float:
    """The paper writes an exponential lr decay ``lr <- lr * gamma`` as ``1 - gamma``."""
    return round(1.0 - gamma, 10)


def _protocol(cfg) -> dict:
    return {"clients": cfg.clients, "participation": round(cfg.per_round / cfg.clients, 10),
            "local_epochs": cfg.local_epochs, "batch_size": cfg.batch_size,
            "lr_momentum": f"{cfg.lr:g}({cfg.momentum:g})", "rounds": cfg.rounds}


def result_setting(dataset: str, model: str):
    """The :class:`flcore.papers.fedima.runs.Setting` whose ``paper`` runs stand for Table
    VII's (``dataset``, ``model``) row: Table I's Dirichlet row of that pair, or, for a
    pair flcore has but Table I's runs do not cover (CIFAR-100 with ResNet-18, whose row
    label was lost), the same protocol with Table VII's rounds; None: not in flcore."""

    name = RESULT_MODEL_NAMES.get(model)
    if flcore_model_name(model, dataset) is None or name is None:
        return None
    matches = [s for s in fedima.SETTINGS if (s.dataset, s.model) == (dataset, name)]
    if matches:
        return next((s for s in matches if s.partition == "dirichlet"), matches[0])
    return fedima.Setting(dataset, name, "dirichlet", fedima.PAPER_ROUNDS)


def table7_ours(settings: pd.DataFrame) -> pd.DataFrame:
    """Table VII (test settings) for each ``setting`` row (``dataset``, ``model``): what the
    FedAvg+IMA run of that setting on the result pages uses at the ``paper`` scale
    (:func:`flcore.papers.fedima.runs.ima_run`; the IMA fields are the same for every
    baseline)."""

    rows = []
    for row in settings.itertuples():
        setting = result_setting(row.dataset, row.model)
        if setting is None:
            rows.append({"setting": row.setting, **{c: NOT_IN_FLCORE for c in _T7}})
            continue
        cfg = fedima.ima_run(setting, "FedAvg", True, "paper").resolve()
        rows.append({"setting": row.setting, **_protocol(cfg), "lr_decay": _decay(cfg.lr_decay),
                     "window": cfg.ima_window, "ima_lr_decay": _decay(cfg.ima_gamma_late),
                     "ima_start": cfg.ima_start, "flcore model": cfg.model})
    return pd.DataFrame(rows)


_T7 = ("clients", "participation", "local_epochs", "batch_size", "lr_momentum", "rounds", "lr_decay", "window",
       "ima_lr_decay", "ima_start", "flcore model")


def table6_ours(settings: pd.DataFrame) -> pd.DataFrame:
    """Table VI (visualisation and validation settings, FedAvg) for each ``figures`` row: what
    the analysis pages' FedAvg runs of that FL type use at the ``paper`` scale
    (:func:`flcore.papers.fedima.analysis.vis_run`; ``0/0.01``: runs without and with
    the lr decay).  A data set is marked "(not run)" when flcore has it but none of the row's
    figures' runs trains on it."""

    rows = []
    for row in settings.itertuples():
        dataset = str(row.dataset).split(",")[0].strip()
        if dataset not in DATASETS:
            rows.append({"figures": row.figures, **{c: NOT_IN_FLCORE for c in _T6}})
            continue
        fl = "cross-silo" if "silo" in str(row.fl).lower() else "cross-device"
        both = "/" in str(row.lr_decay)
        configs = [vis_run("paper", fl, decay).resolve() for decay in ((False, True) if both else (False,))]
        cfg = configs[0]
        decays = "/".join(f"{_decay(c.lr_decay):g}" for c in configs)
        # the data sets the analysis runs use; one flcore has but these runs do not: "(not run)"
        labels = [d.strip() for d in str(row.dataset).split(",")]
        datasets = [paper_dataset(d) if d in DATASETS else NOT_IN_FLCORE for d in labels]
        run = {spec.resolve().dataset for n in re.findall(r"\d+", str(row.figures))
               if f"fedima-fig-{n}" in ARTIFACTS for spec in ARTIFACTS[f"fedima-fig-{n}"].runs("paper", (0,))}
        datasets = [d if d in run | {NOT_IN_FLCORE} else f"{d} (not run)" for d in datasets]
        models = [flcore_model_name(m.strip(), dataset) or NOT_IN_FLCORE for m in str(row.model).split(",")]
        rows.append({"figures": row.figures, **_protocol(cfg), "lr_decay": decays if both else _decay(cfg.lr_decay),
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

    table = compare_settings(published[["method", "hyperparameter", "value", "note"]], table5_ours(published),
                             ["method", "hyperparameter"])
    lost = published["value"].astype(str) == ""
    table.loc[lost.values, "match"] = "paper value lost"
    table.insert(list(table.columns).index("match"), "reference (paper)", published["reference"].values)
    return table


def compare_table6(published: pd.DataFrame) -> pd.DataFrame:
    """Table VI beside flcore (FL type, data set and model are shown, not compared: flcore's
    data set and model names are its registry's)."""

    ours = table6_ours(published)
    table = compare_settings(published.drop(columns=["fl", "dataset", "model"]),
                             ours.drop(columns=["flcore dataset", "flcore model"]), ["figures"])
    for position, column in enumerate(("fl", "dataset", "model"), start=1):
        table.insert(position, column, published[column].values)
    return _with_flcore_columns(table, ours, "figures", ("flcore dataset", "flcore model"))


def compare_table7(published: pd.DataFrame) -> pd.DataFrame:
    """Table VII beside flcore, one row per (data set, model) setting."""

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


def table5_caption(published: pd.DataFrame, table: pd.DataFrame) -> str:
    """The caption of Table V beside flcore (:func:`compare_table5` ``table`` of the
    ``published`` rows): the values that agree of those the text kept, the methods all of
    whose values agree, each value that differs (the paper's and flcore's) and the lost ones."""
    agree = (table["match"] == "yes").sum()
    differ = table[table["match"].str.startswith("no")]
    differ_text = "; ".join(f"{r['method']} {r['hyperparameter']} ({r['value (paper)']} in the paper, "
                            f"{r['value (flcore)']} in flcore)" for _, r in differ.iterrows())
    agreeing = ", ".join(dict.fromkeys(table.loc[(table["match"] == "yes") & (table["hyperparameter"] != "none"),
                                                 "method"]))
    return (f"The baselines' hyper-parameters, the paper's beside flcore's paper preset: {agree} of "
            f"{(published['value'] != '').sum()} readable values agree ({agreeing} exactly); "
            f"{differ_text or 'none'} differ; "
            f"{(table['match'] == 'paper value lost').sum()} values were lost in the text.")


def _show_compared(page, compare, caption, ours) -> pd.DataFrame:
    """The page's published table beside flcore's (``compare(paper)``) under ``caption(paper,
    table)``, with the published values and ``ours(paper)`` as downloads; returns the comparison."""
    paper = published_values(page.artifact_id)
    table = compare(paper)
    page.table(table, caption(paper, table), downloads={"published": paper, "flcore": ours(paper)})
    return table


def show_table5(page) -> pd.DataFrame:
    """Table V on ``page``: :func:`compare_table5` under :func:`table5_caption`, with the
    published values and flcore's (:func:`table5_ours`) as downloads; returns the comparison."""
    return _show_compared(page, compare_table5, table5_caption, table5_ours)


def table7_caption(table: pd.DataFrame) -> str:
    """The caption of Table VII beside flcore (:func:`compare_table7`): the settings that agree
    in every row flcore has (:func:`columns_agreeing`), whether both start IMA at 0.75 T in
    every such row, those that differ, and the rows on data sets flcore does not have."""
    agree, differ = columns_agreeing(table)
    absent = (table["match"] == "not in flcore").sum()
    present = table[table["match"] != "not in flcore"]
    both_at_three_quarters = all(
        int(row["ima_start (paper)"]) == int(0.75 * int(row["rounds (paper)"]))
        and int(row["ima_start (flcore)"]) == int(0.75 * int(row["rounds (flcore)"])) for _, row in present.iterrows())
    start_text = " (both start IMA at 0.75 T)" if both_at_three_quarters else ""
    differ_text = f"; {', '.join(differ)} differ" if differ else ""
    return (f"The test experiments' settings beside what flcore's FedAvg+IMA result runs use: "
            f"{', '.join(agree)} agree in every setting flcore has{start_text}{differ_text}; {absent} of "
            f"{len(table)} settings use a data set flcore does not have.")


def show_table7(page) -> pd.DataFrame:
    """Table VII on ``page``: :func:`compare_table7` under :func:`table7_caption`, with the
    published settings and flcore's (:func:`table7_ours`) as downloads; returns the comparison."""
    return _show_compared(page, compare_table7, lambda paper, table: table7_caption(table), table7_ours)
