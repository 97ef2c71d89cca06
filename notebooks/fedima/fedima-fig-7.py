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
# # Figure 7: IMA start round, window size, and the FMA-IMA interpolation
#
# **What the paper says.** FedIMA's Fig. 7 shows (a) the test accuracy over rounds of FedAvg
# and FedFA with IMA started at different rounds -- a later start ends higher ("starting IMA
# at a later round leads to better accuracy"), an earlier one reaches a target sooner
# (Table II), a trade-off; (b) FedAvg with different window sizes P -- a larger window is
# more stable but ends lower when IMA starts early; (c) test loss and error along the line
# between the final FMA and IMA models: the IMA model sits near the bottom of the basin,
# the FMA model on its wall. Curves (a, b) are smoothed; the grids were lost; the paper gives
# curves only, no numbers.
#
# **How it is made here.** (a) reads Table II's runs (FedAvg; FedFA too at the `paper`
# scale), (b) FedAvg+IMA with windows 2, 5 and 10 (`ima_window`), both on Table I's
# Dirichlet setting; the curves are smoothed with a 5-round moving average. (c) evaluates
# `(1 - t) w_FMA + t w_IMA` for t in [-0.5, 1.5] on the test set with
# `flcore.papers.fedima.runs.fma_ima_interpolation` (`flcore.analysis.interpolate`).
# Below the paper scale all of it runs on MNIST-1D, with the rounds shortened.
#
# **How to rerun.** `flcore reproduce fedima-fig-7 --scale small`; `--scale paper` on a GPU.

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

from flcore.papers.fedima import runs as fedima
from flcore.report.page import Page
from flcore.reproduction.runner import run_metrics

page = Page.from_parameters("fedima-fig-7", globals())

# %% [markdown]
# ## The runs

# %%
runs = page.train()

# %% [markdown]
# ## (a) IMA start round and (b) window size

# %%
metrics = run_metrics(runs, store).dropna(subset=["test_accuracy"])
final = fedima.with_last_10(runs)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
summary = []
for ax, panel in zip(axes, ("start", "window")):
    for (algorithm, start, window), block in runs[runs["panel"] == panel].groupby(
            ["algorithm", "ima_start", "ima_window"], sort=False, dropna=False):
        curve = metrics[metrics["run_id"] == block["run_id"].iloc[0]].sort_values("round")
        if curve.empty:
            continue
        label = (algorithm if not block["ima"].iloc[0] else
                 f"{algorithm}, start {int(start)}" if panel == "start" else f"{algorithm}, P = {int(window)}")
        ax.plot(curve["round"], [100 * v for v in fedima.smoothed(list(curve["test_accuracy"]))], label=label)
        acc = final.loc[final["run_id"] == block["run_id"].iloc[0], "mean_last_100"].iloc[0]
        summary.append({"panel": panel, "run": label, "accuracy (last 10, %)": None if acc is None else 100 * acc})
    ax.set_xlabel("round")
    ax.set_ylabel("test accuracy (%), smoothed")
    ax.legend(fontsize=8)
axes[0].set_title("(a) IMA start (paper's round of 400)")
axes[1].set_title("(b) IMA window size")
import pandas as pd

summary = pd.DataFrame(summary)
best = summary.loc[summary.groupby("panel")["accuracy (last 10, %)"].idxmax()] if len(summary.dropna()) else summary
page.figure(fig, "Test accuracy over rounds (5-round moving average). Best final accuracy: "
                 + "; ".join(f"{r.panel}: {r.run}" for r in best.itertuples()) + ".",
            alt="Two line plots of smoothed test accuracy against round: left, FedAvg without IMA and with IMA "
                "started at different rounds; right, FedAvg with IMA for different window sizes.")
page.table(summary, "Final accuracy (mean of the last ten rounds) of every curve.")

# %% [markdown]
# ## (c) Between the FMA and IMA models

# %%
fma = runs[(runs["panel"] == "start") & (~runs["ima"]) & (runs["algorithm"] == "FedAvg")].iloc[0]
ima = runs[(runs["panel"] == "window") & (runs["ima_window"] == 5)].iloc[0]
samples = {"smoke": 200, "small": 1000, "paper": 2000}[scale]
line = fedima.fma_ima_interpolation(fma["run_dir"], ima["run_dir"], num={"smoke": 5, "small": 11, "paper": 21}[scale],
                                    samples=samples)
ts, loss, error = line.ts.numpy(), line.loss.numpy(), 100 * line.error.numpy()
fig, ax = plt.subplots(figsize=(5, 3.4))
ax.plot(ts, loss, "-o", color="C0", label="test loss")
ax.set_xlabel("t  ((1 - t) FMA + t IMA)")
ax.set_ylabel("test loss")
ax2 = ax.twinx()
ax2.plot(ts, error, "-s", color="C1", label="test error (%)")
ax2.set_ylabel("test error (%)")
for t in (0, 1):
    ax.axvline(t, color="grey", lw=0.8, ls=":")
lowest = float(ts[loss.argmin()])
page.figure(fig, f"Test loss and error between the final FedAvg (t = 0) and FedAvg+IMA (t = 1) models on {samples} "
                 f"test samples; the loss is lowest at t = {lowest:.2f} (the paper: near the IMA model).",
            alt="Test loss and test error along the straight line from the FMA model to the IMA model, "
                "extended half a segment on both sides.")
page.findings([f"**What we found.** Along the FMA-IMA line the test loss is lowest at t = {lowest:.2f}; the paper "
               "finds the IMA end (t = 1) near the basin's bottom and the FMA end on its wall."])

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
