# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Figure 1: FedSAM's accuracy and flatness discrepancy against alpha
#
# **What the paper says.** Figure 1 motivates FedGF: on CIFAR-100, as the split grows more
# heterogeneous (smaller Dirichlet alpha), FedSAM's test accuracy falls and the flatness
# discrepancy Delta_F of its global model rises -- flat local models no longer make a flat
# global one. The paper gives curves only, without the alphas, round or clients used.
#
# **How it is made here.** FedSAM runs of the FedSAM CNN protocol (5 clients per round) over a
# sweep of alphas: at the `paper` scale the CIFAR-100 split files of the paper's code (alpha 0,
# 0.5, 1, 2, 5, 10, 100, 1000); below it MNIST-1D stands in and the sweep is the alphas the
# FedSAM pages already train (no extra training). Accuracy is the mean of the last 100 rounds;
# Delta_F is computed from each run's final state as on Table 2's page
# (`flcore.papers.fedgf.analysis.global_flatness`).
#
# **How to rerun.** `flcore reproduce fedgf-fig-1 --scale small`; `--scale paper` on a GPU.

# %% [markdown]
# The first cell installs flcore when it is missing (on Colab); the second holds the
# parameters that `flcore reproduce` sets.

# %%
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("flcore") is None:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q",
                           "flcore @ git+https://github.com/flcore/flcore"])

# %% tags=["parameters"]
scale = "smoke"  # smoke (seconds, CI) | small (minutes, CPU) | paper (the paper's protocol, GPU)
device = "auto"  # auto | cpu | cuda
seeds = [0]  # the paper reports one run per configuration
store = None  # run store folder; None: $FLCORE_STORE, else ./runs
workers = None  # runs trained at once on a CPU; None: one per core
data_root = "data"  # CIFAR folder (paper scale)
download = True  # fetch CIFAR through torchvision when it is missing (paper scale)
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
import matplotlib.pyplot as plt
import pandas as pd

from flcore.papers.fedgf.analysis import global_flatness
from flcore.report import algorithm_color, set_style
from flcore.report.ordering import kendall_tau
from flcore.report.page import Page
from flcore.reproduction.artifacts import get_artifact

set_style()
artifact = get_artifact("fedgf-fig-1")
page = Page(artifact.id, scale=scale, seeds=seeds, store=store, device=device, workers=workers,
            data_root=data_root, download=download, max_rounds=max_rounds)

# %% [markdown]
# ## The runs and their flatness discrepancy

# %%
runs = page.runs()
rows = []
for row in runs[runs["status"] == "finished"].to_dict("records"):
    flat = global_flatness(row["run_dir"], scale)
    rows.append({"alpha": row["alpha"], "seed": row["seed"], "accuracy": 100 * float(row["mean_last_100"]),
                 "flatness_discrepancy": flat["flatness_discrepancy"], "run_id": row["run_id"]})
sweep = pd.DataFrame(rows).sort_values("alpha")
page.table(sweep, f"FedSAM at the {scale} scale: accuracy (%, mean of the last 100 rounds) and Delta_F of the final "
                  f"global model for each alpha.")

# %% [markdown]
# ## The figure

# %%
mean = sweep.groupby("alpha")[["accuracy", "flatness_discrepancy"]].mean().reset_index()
positions = list(range(len(mean)))
fig, ax = plt.subplots(figsize=(6, 3.6))
ax.plot(positions, mean["accuracy"], marker="o", color=algorithm_color("FedSAM"), label="accuracy")
ax.set_xticks(positions, [f"{a:g}" for a in mean["alpha"]])
ax.set_xlabel("Dirichlet alpha (left: more heterogeneous)")
ax.set_ylabel("test accuracy (%)")
twin = ax.twinx()
twin.plot(positions, mean["flatness_discrepancy"], marker="s", linestyle="--", color="0.3", label="Delta_F")
twin.set_ylabel("flatness discrepancy Delta_F")
ax.legend(handles=ax.get_lines() + twin.get_lines(), loc="center right")
data_name = "CIFAR-100" if scale == "paper" else f"MNIST-1D ({scale} scale)"
tau_acc = kendall_tau(list(mean["alpha"]), list(mean["accuracy"])) if len(mean) > 1 else float("nan")
tau_df = kendall_tau(list(mean["alpha"]), list(-mean["flatness_discrepancy"])) if len(mean) > 1 else float("nan")
page.figure(fig, f"FedSAM on {data_name}: accuracy against alpha (Kendall's tau with alpha {tau_acc:.2f}; the paper: "
                 f"accuracy rises with alpha) and Delta_F (tau of -Delta_F with alpha {tau_df:.2f}; the paper: "
                 f"Delta_F falls as alpha grows).",
            alt=f"Line chart over alpha values {', '.join(f'{a:g}' for a in mean['alpha'])}: FedSAM accuracy "
                + ", ".join(f"{v:.1f}%" for v in mean["accuracy"]) + " and flatness discrepancy "
                + ", ".join(f"{v:.3f}" for v in mean["flatness_discrepancy"]) + ".")

# %% [markdown]
# ## What we found

# %%
verdicts = page.check_claims()
lines = [f"At the **{scale}** scale FedSAM's accuracy follows alpha with Kendall's \u03c4 = {tau_acc:.2f} and its "
         f"flatness discrepancy falls with alpha with \u03c4 = {tau_df:.2f} (1 for both is the paper's picture). "
         "The paper gives curves only, so only these trends are compared."]
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
