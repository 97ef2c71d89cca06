"""The FedGloSS paper's configuration tables (its Tables 2, 12, 13) rendered from flcore.

- :func:`table2_ours`: the overview of SAM-based methods (Table 2) from the method
  registry -- server and client optimizer from a recipe's parts (docs/algorithms.md 7.1),
  communication from :func:`flcore.config.traffic_of`, local computation from
  ``grad_evals_per_step``, and the state each method keeps;
- :func:`table12_ours`: the training hyper-parameters (Table 12) as
  :func:`flcore.resolve_config` gives them at the ``paper`` scale;
- :func:`table13_ours`: flcore's preset for every (method, hyper-parameter, data set,
  model) cell of the search grids (Table 13), and whether it lies in the published grid.

Data sets and models flcore does not have are marked ``not in flcore``; a setting flcore
can run but has no preset for (ResNet-18-GN: the presets are keyed by data set, so a
ResNet run takes the CNN's values) is marked ``no preset``.
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from flcore.config import grad_evals_per_step, parts_of, resolve_config, traffic_of
from flcore.config.method_catalog import client_state_of, server_state_of
from flcore.reproduction.published import published
from flcore.reproduction.splits import CIFAR_LABELS, NOT_IN_FLCORE
from flcore.reproduction.stand_in import paper_dataset

NO_PRESET = "no preset"
#: The paper's heterogeneous levels (the main tables' alphas) per data set.
MAIN_ALPHAS = {"cifar10": (0.0, 0.05), "cifar100": (0.0, 0.5)}
#: The paper's model names -> flcore's.
MODEL_NAMES = {"CNN": "cnn", "ResNet18": "resnet18gn", "ResNet18-GN": "resnet18gn"}
#: Models flcore has a paper-scale preset for (the presets are keyed by data set: the CNN's).
PRESET_MODELS = ("cnn",)

# ----------------------------------------------------------------------------- Table 2

#: Table 2's rows -> the registered methods that implement them.
TABLE2_METHODS = {
    "FedSam": ("fedsam",),
    "FedDyn + Sam": ("feddyn+sam",),
    "FedSpeed": ("fedspeed",),
    "FedGamma": ("fedgamma",),
    "FedSmoo": ("fedsmoo",),
    "FedGloSS": ("fedgloss-sgd", "fedgloss-sam"),
}


def server_optimizer(parts: Sequence[str]) -> str:
    """``Sam`` for the server-side SAM step (S8), else ``Sgd`` (S0/S6: an SGD step on the
    pseudo-gradient, learning rate 1 for FedAvg)."""
    return "Sam" if "S8" in parts else "Sgd"


def client_optimizer(parts: Sequence[str]) -> str:
    """The local optimizer named the way Table 2 names it: SAM ascent (P1, or FedSMOO's
    corrected P3) is ``Sam``; with FedSpeed's gradient mixing (C6) it is ``Similar to Sam``;
    ASAM (P2) is ``Asam``; no perturbation is ``Sgd``."""
    if "C6" in parts:
        return "Similar to Sam"
    if "P1" in parts or "P3" in parts:
        return "Sam"
    if "P2" in parts:
        return "Asam"
    return "Sgd"


def _times(values: Sequence[float]) -> str:
    return " or ".join(f"{v:g}x" for v in sorted(dict.fromkeys(values)))


def table2_ours() -> pd.DataFrame:
    """Table 2 as flcore's registry describes the methods (one row per paper row; rows
    with several registered variants list each value once, ``" or "``-joined).

    Communication cost = (uploads + downloads) / 2 per participating client and round,
    in model-sized vectors, i.e. relative to FedAvg's one down and one up."""
    rows = []
    for label, names in TABLE2_METHODS.items():
        servers = list(dict.fromkeys(server_optimizer(parts_of(n)) for n in names))
        clients = list(dict.fromkeys(client_optimizer(parts_of(n)) for n in names))
        state = []
        for n in names:
            client = ", ".join(s["name"] for s in client_state_of(n)) or "none"
            server = ", ".join(s["name"] for s in server_state_of(n)) or "none"
            state.append(f"{n}: client {client}; server {server}")
        rows.append({
            "method": label,
            "flcore_methods": ", ".join(names),
            "server_opt": " or ".join(servers),
            "client_opt": " or ".join(clients),
            "communication_cost": _times([sum(traffic_of(n)) / 2 for n in names]),
            "local_computation_cost": _times([grad_evals_per_step(n) for n in names]),
            "down_up_per_round": " or ".join(dict.fromkeys("{}/{}".format(*traffic_of(n)) for n in names)),
            "state_kept": " | ".join(state),
        })
    return pd.DataFrame(rows)


def table2_comparison(paper: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """Published beside flcore, column by column, with a ``match`` verdict.  The paper's
    ``Any optimizer`` matches when flcore runs the method with more than one client
    optimizer (its SGD and SAM variants)."""
    columns = ["server_opt", "client_opt", "communication_cost", "local_computation_cost"]
    merged = paper.merge(ours, on="method", suffixes=(" (paper)", " (flcore)"))
    out = merged[["method", "flcore_methods"]].copy()
    verdicts = []
    for _, row in merged.iterrows():
        differing = []
        for column in columns:
            mine, theirs = str(row[f"{column} (flcore)"]), str(row[f"{column} (paper)"])
            if column == "client_opt" and theirs == "Any optimizer":
                if " or " not in mine:
                    differing.append(column)
            elif mine.replace(" ", "") != theirs.replace(" ", ""):
                differing.append(column)
        verdicts.append("yes" if not differing else "no: " + ", ".join(differing))
    for column in columns:
        out[f"{column} (paper)"] = merged[f"{column} (paper)"]
        out[f"{column} (flcore)"] = merged[f"{column} (flcore)"]
    out["match"] = verdicts
    out["down/up per round (flcore)"] = merged["down_up_per_round"]
    return out


# ----------------------------------------------------------------------------- Table 12

_T12 = ("rounds", "clients_per_round", "local_epochs", "lr", "weight_decay", "momentum", "batch_size")


def table12_ours(rows: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Table 12 for ``(dataset, model)`` rows as flcore resolves a FedAvg run at the
    ``paper`` scale (the values are common to all methods, as in the paper)."""
    out = []
    for label, model in rows:
        row = {"dataset": label, "model": model}
        if label not in CIFAR_LABELS or model not in MODEL_NAMES:
            row.update({c: NOT_IN_FLCORE for c in _T12})
            out.append(row)
            continue
        cfg = resolve_config(method="fedavg", dataset=paper_dataset(label), scale="paper",
                             model=MODEL_NAMES[model], alpha=MAIN_ALPHAS[paper_dataset(label)][0])
        row.update({"rounds": cfg.rounds, "clients_per_round": cfg.per_round, "local_epochs": cfg.local_epochs,
                    "lr": cfg.lr, "weight_decay": cfg.weight_decay, "momentum": cfg.momentum,
                    "batch_size": cfg.batch_size})
        out.append(row)
    return pd.DataFrame(out)


def mark_missing_presets(table: pd.DataFrame) -> pd.DataFrame:
    """Rewrite the ``match`` of rows whose model has no preset of its own: the values
    shown are the CNN preset's, which a run with that model would use."""
    table = table.copy()
    for i, row in table.iterrows():
        model = MODEL_NAMES.get(row["model"])
        if model is not None and model not in PRESET_MODELS and str(row["match"]).startswith("no"):
            differing = str(row["match"]).partition(": ")[2]
            table.loc[i, "match"] = f"{NO_PRESET} for {model} (CNN values used; differ in: {differing})"
    return table


# ----------------------------------------------------------------------------- Table 13

#: Table 13's (method, hyper-parameter) rows -> (registered method, config field).
TABLE13_FIELDS = {
    ("FedSam", "rho"): ("fedsam", "rho"),
    ("FedProx", "mu"): ("fedprox", "mu"),
    ("FedDyn", "alpha"): ("feddyn", "feddyn_alpha"),
    ("FedDyn", "rho (Sam-based only)"): ("feddyn+sam", "rho"),
    ("FedSpeed", "rho"): ("fedspeed", "rho"),
    ("FedSpeed", "alpha"): ("fedspeed", "fedspeed_alpha"),
    ("FedSpeed", "lambda"): ("fedspeed", "fedspeed_lambda"),
    ("FedGamma", "rho"): ("fedgamma", "rho"),
    ("FedSmoo", "rho"): ("fedsmoo", "rho"),
    ("FedSmoo", "beta"): ("fedsmoo", "smoo_beta"),
    ("FedGloSS", "rho_s"): ("fedgloss-sam", "gloss_rho_server"),
    ("FedGloSS", "rho"): ("fedgloss-sam", "rho"),
    ("FedGloSS", "beta"): ("fedgloss-sam", "gloss_beta"),
    ("FedGloSS", "T_s"): ("fedgloss-sam", "rho_warmup_rounds"),
}


def preset_values(method: str, field: str, dataset: str) -> list:
    """The distinct values of ``field`` in ``method``'s paper preset on ``dataset`` at
    the paper's heterogeneous alphas."""
    values = [getattr(resolve_config(method=method, dataset=dataset, scale="paper", alpha=a), field)
              for a in MAIN_ALPHAS[dataset]]
    return list(dict.fromkeys(values))


def _grid(text: str) -> list[float]:
    return [float(v) for v in str(text).split(",") if v.strip()]


def table13_ours(paper: pd.DataFrame) -> pd.DataFrame:
    """For every cell of the published grids: flcore's preset and whether it lies in
    the grid (``in grid`` / ``not in grid``), or why there is none."""
    rows = []
    for _, cell in paper.iterrows():
        method, field = TABLE13_FIELDS[(cell["method"], cell["hparam"])]
        row = {"method": cell["method"], "hparam": cell["hparam"], "dataset": cell["dataset"],
               "model": cell["model"], "flcore_method": method, "flcore_field": field}
        model = MODEL_NAMES.get(cell["model"])
        if cell["dataset"] not in CIFAR_LABELS or model is None:
            row.update(flcore=NOT_IN_FLCORE, match=NOT_IN_FLCORE)
        elif model not in PRESET_MODELS:
            row.update(flcore=NO_PRESET, match=f"{NO_PRESET} for {model}")
        else:
            values = preset_values(method, field, paper_dataset(cell["dataset"]))
            grid = _grid(cell["grid"])
            inside = all(any(abs(float(v) - g) <= 1e-12 * max(1.0, abs(g)) for g in grid) for v in values)
            row.update(flcore=" / ".join(f"{v:g}" for v in values), match="in grid" if inside else "not in grid")
        rows.append(row)
    return pd.DataFrame(rows)


def table13_wide(paper: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """The grids laid out like the paper (one row per method and hyper-parameter, one
    column per data set and model), each cell ``grid -> flcore (match)``."""
    merged = paper.merge(ours, on=["method", "hparam", "dataset", "model"])
    merged["setting"] = merged["dataset"] + " " + merged["model"]

    def cell(row):
        if row["flcore"] in (NOT_IN_FLCORE, NO_PRESET):
            return f"[{row['grid']}] \u2192 {row['flcore']}"
        return f"[{row['grid']}] \u2192 {row['flcore']} ({row['match']})"

    merged["cell"] = merged.apply(cell, axis=1)
    order = list(dict.fromkeys(merged["setting"]))
    wide = merged.pivot_table(index=["method", "hparam"], columns="setting", values="cell", aggfunc="first",
                              sort=False)
    return wide[order]


#: The methods of Figure 3's sketch (FedAvg, FedGloSS with SGD or SAM clients, NaiveFedGloSS).
FIG3_METHODS = ("fedavg", "fedgloss-sgd", "fedgloss-sam", "naivefedgloss")


def fig3_steps(methods: Sequence[str] = FIG3_METHODS) -> pd.DataFrame:
    """What each method of ``methods`` does per round, from the registry: ``method, parts``,
    ``exchanges per round (up / down)`` and ``gradient evaluations per local step``."""
    rows = []
    for name in methods:
        downloads, uploads = traffic_of(name)
        rows.append({"method": name, "parts": " + ".join(parts_of(name)),
                     "exchanges per round (up / down)": f"{uploads} / {downloads}",
                     "gradient evaluations per local step": grad_evals_per_step(name)})
    return pd.DataFrame(rows)


def show_table2(page) -> pd.DataFrame:
    """Table 2 on ``page``: the paper's overview beside :func:`table2_ours`
    (:func:`table2_comparison`), captioned with the rows that agree and the methods with SAM on
    the server; returns flcore's side (:func:`table2_ours`)."""
    paper = published(page.artifact_id)
    ours = table2_ours()
    table = table2_comparison(paper, ours)
    agree = (table["match"] == "yes").sum()
    only_sam_server = ", ".join(ours.loc[ours["server_opt"] == "Sam", "method"])
    page.table(table, f"The paper's overview of SAM-based methods beside what flcore's registry says of the methods "
                      f"that implement them: {agree} of {len(table)} rows agree in all four columns; the only method "
                      f"with SAM on the server is {only_sam_server}.",
               downloads={"published": paper, "flcore": ours})
    return ours


def show_table13(page) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 13 on ``page``: the paper's search grids with flcore's presets
    (:func:`table13_wide`), captioned with how many of the CNN cells flcore has a preset for
    lie in the grid and which lie outside; returns ``(published, the cells outside)``."""
    paper = published(page.artifact_id)
    ours = table13_ours(paper)
    wide = table13_wide(paper, ours)
    checked = ours[ours["match"].isin(["in grid", "not in grid"])]
    outside = checked[checked["match"] == "not in grid"]
    outside_text = ("; outside: " + ", ".join(sorted(set(outside["method"] + " " + outside["hparam"]))) if len(outside)
                    else "")
    page.table(wide.reset_index(), show=wide,
               caption=f"The paper's search grids with flcore's presets: {len(checked) - len(outside)} of the "
                       f"{len(checked)} CNN cells flcore has a preset for lie in the searched grid{outside_text}. "
                       "ResNet-18 and Landmarks cells have no flcore preset.",
               downloads={"published": paper, "flcore": ours})
    return paper, outside
