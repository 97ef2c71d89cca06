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
# # Figure 2: TrainBias and HeterBias over rounds
#
# **What the paper says.** FedIMA's Fig. 2 follows two factors of its loss decomposition
# (Theorem 1) over cross-silo FedAvg training on CIFAR-10 (10 clients, two class shards
# each), with and without lr decay: TrainBias, the client models' loss on their own data,
# and HeterBias, their loss on the global data they do not hold. Its finding: after early
# training HeterBias dominates and keeps growing while TrainBias falls, and the lr decay
# restrains HeterBias. The figure has no numbers; the loss and data split were not stated.
#
# **How it is made here.** The two cross-silo runs of `flcore.papers.fedima.analysis`
# save the round's client and global models every few rounds;
# `fedima_analysis.decomposition_over_rounds` (`flcore.analysis.loss_decomposition`)
# measures cross-entropy TrainBias and HeterBias on the clients' training data (the
# paper's global dataset). Below the paper scale the data are MNIST-1D.
#
# **How to rerun.** `flcore reproduce fedima-fig-2 --scale small`; `--scale paper` on a GPU.

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

from flcore.papers.fedima import analysis as analysis
from flcore.report.page import Page

page = Page.from_parameters("fedima-fig-2", globals())
grid, samples = analysis.GRID[scale], analysis.SAMPLES[scale]

# %% [markdown]
# ## The runs
#
# FedAvg runs that save the global and client models of chosen rounds (snapshots); they are
# trained once and shared by the analysis figures.

# %%
runs = page.runs()
page.table(runs[[c for c in ("fl", "lr_decay", "partition", "model", "status", "run_id") if c in runs]],
           f"{len(runs)} run(s) with snapshots make this figure at the {scale} scale.")

# %% [markdown]
# ## The factors over rounds

# %%
factors = analysis.decomposition_by_decay(runs, samples=samples)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
for ax, (decay, block) in zip(axes, factors.groupby("lr decay", sort=False)):
    ax.plot(block["round"], block["train_bias"], "-o", label="TrainBias")
    ax.plot(block["round"], block["heter_bias"], "-s", label="HeterBias")
    ax.plot(block["round"], block["test_loss"], "--", color="grey", label="global test loss")
    ax.set_title(f"lr decay: {decay}")
    ax.set_xlabel("round")
axes[0].set_ylabel("cross-entropy")
axes[0].legend(fontsize=8)
late = factors.groupby("lr decay").tail(max(1, len(factors) // 4))
dominates = bool((late["heter_bias"] > late["train_bias"]).all())
page.figure(fig, "TrainBias and HeterBias of the round's client models over rounds, without and with lr decay; "
                 f"in the last quarter of the rounds HeterBias {'exceeds' if dominates else 'does not always exceed'} "
                 "TrainBias.",
            alt="Two line plots of TrainBias, HeterBias and the global test loss against round, without and with "
                "lr decay.")
page.table(factors[["lr decay", "round", "train_bias", "heter_bias", "test_loss", "test_error"]],
           "The plotted values.")
page.findings([f"**What we found.** HeterBias {'dominates' if dominates else 'does not dominate'} TrainBias late "
               "in training (the paper: it dominates after early training)."])

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
