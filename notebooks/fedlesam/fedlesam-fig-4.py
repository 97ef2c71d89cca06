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
# # Figure 4: FedLESAM-S accuracy against rho
#
# **What the paper says.** Figure 4 plots the averaged test accuracy of FedLESAM-S against
# the perturbation radius rho (log scale), with FedAvg as a reference, on CIFAR-10 and
# CIFAR-100 (randomly initialised ResNet-18) and OfficeHome and DomainNet (pretrained ViT):
# accuracy first rises with rho, then drops sharply once a large rho stops convergence;
# FedLESAM-S beats FedAvg over a broad range. Its advice: rho about 0.1 x the local lr from a
# random init, about 10 x from a pretrained model. Curves only, no numbers; the rho grid is
# lost in our copy.
#
# **How it is made here.** FedLESAM-S at rho in {0.001, 0.01, 0.1, 1} (a log grid around the
# advice, 0.1 x lr = 0.01) and FedAvg, Dirichlet 0.1, 100 clients with 10% per round, on the
# CIFAR panels; the OfficeHome and DomainNet panels need data and a pretrained ViT that cannot
# be had here (Table 3's page). Below the paper scale one MNIST-1D panel, 80-round runs
# (labelled `rounds`); the accuracy is the mean of the last 10 evaluations.
#
# **How to rerun.** `flcore reproduce fedlesam-fig-4 --scale small`; `--scale paper` on a GPU.

# %% [markdown]
# The first cell installs flcore when it is missing (on Colab); the second holds the
# parameters that `flcore reproduce` sets.

# %%
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("flcore") is None:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "flcore @ git+https://github.com/flcore/flcore"])

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

from flcore.report.page import Page
from flcore.reproduction.published import source
from flcore.reproduction.runner import run_metrics

page = Page.from_parameters("fedlesam-fig-4", globals())

# %% [markdown]
# ## The runs
#
# Finished runs come from the store, missing ones are trained now.

# %%
runs = page.train()

# %% [markdown]
# ## Accuracy against rho

# %%
metrics = run_metrics(runs, store=store)
evaluated = metrics.dropna(subset=["test_accuracy"]).sort_values("round")
last = (evaluated.groupby("run_id").tail(10).groupby("run_id")["test_accuracy"].mean() * 100).rename("accuracy")
table = runs.drop_duplicates("run_id").join(last, on="run_id")
table = table[["dataset", "algorithm", "rho", "accuracy"]] if "rho" in table else table
fig, axes = plt.subplots(1, table["dataset"].nunique(), figsize=(4.5 * table["dataset"].nunique(), 3.4), squeeze=False)
lines = []
for ax, (label, block) in zip(axes[0], table.groupby("dataset", sort=False)):
    sweep = block[block["algorithm"] == "FedLESAM-S"].sort_values("rho")
    ax.plot(sweep["rho"], sweep["accuracy"], marker="o", label="FedLESAM-S")
    fedavg = block.loc[block["algorithm"] == "FedAvg", "accuracy"]
    if len(fedavg):
        ax.axhline(float(fedavg.iloc[0]), color="k", linestyle="--", label="FedAvg")
    ax.set_xscale("log")
    ax.set_xlabel("rho")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(label if page.stand_in.is_paper else f"{page.stand_in.name} ({scale}) for {label}")
    ax.legend()
    if len(sweep) and len(fedavg):
        best = sweep.loc[sweep["accuracy"].idxmax()]
        above = int((sweep["accuracy"] > float(fedavg.iloc[0])).sum())
        lines.append(f"{label}: best rho {best['rho']:g} ({best['accuracy']:.1f}%), {above} of {len(sweep)} radii "
                     f"above FedAvg ({float(fedavg.iloc[0]):.1f}%)")
fig.tight_layout()
page.figure(fig, "FedLESAM-S test accuracy against rho, FedAvg dashed. " + "; ".join(lines) + ".",
            alt="Test accuracy of FedLESAM-S for each rho on a log axis, with FedAvg's accuracy as a dashed line.")
page.table(table, "The points of the figure (accuracy: mean of the last 10 evaluations, %).", show=table)
page.note(f"Published values: {source('fedlesam-fig-4')['value']}.")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
